// Package broker is mqsim's Kafka-style broker: a sim.Node that hosts partition replicas
// on a write-ahead log, leads some and follows others, and serves producers and
// consumers.
//
// What it does, in Kafka's terms: the leader stamps each produced batch with its leader
// epoch and appends it; followers pull with Fetch and append the leader's batches as they
// are; the leader tracks each follower's log end offset (LEO) from its fetch offset,
// raises the high watermark (HW) to the lowest LEO in the in-sync replica set (ISR) and
// answers acks=all producers from a purgatory once the HW passes their batch. Followers
// that fall behind for replica.lag.time.max.ms leave the ISR, and come back once caught
// up past the start of the leader's epoch; the leader asks the controller for both with
// AlterPartition. Consumers read below the HW. A follower whose log diverged from the
// leader's (after an unclean election, or a crash that lost unsynced records) learns
// where from the leader's epoch cache and truncates (KIP-101/279/320); the older rule,
// truncate to the own HW, is a named mode that reproduces the KIP-101 loss, and so is each
// later fix (proto.Legacy: KIP-279's lookup, KAFKA-7128's ISR rule, KIP-320's fencing,
// KAFKA-15583's HW rule, broker epochs).
//
// The files are named after what they serve: produce.go, fetch.go (the leader side),
// follower.go, isr.go, idempotence.go, txn.go (the partitions' side of transactions:
// control batches, the last stable offset, the aborted transaction index, produce
// verification, WriteTxnMarkers), share.go (the share-partition leader of share groups:
// ShareFetch, ShareAcknowledge, share sessions, acquisition lock timers), persister.go (its
// client of the share coordinators), sharecoord.go (the hosted share coordinator);
// events.go declares what the broker puts in the trace, as types.
package broker

import (
	"slices"
	"time"

	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Timer kinds.
const (
	timerHeartbeat = iota + 1
	timerISRCheck
	timerProduceTimeout // Arg: correlation key of the parked produce
	timerFetchWait      // Arg: parked fetch key
	timerFollowerFetch  // Arg: partition index; fetch again (after a backoff)
	timerFetchTimeout   // Arg: fetch correlation id
	timerFlush          // flush.ms
	timerHWCheckpoint
)

// hwCheckpointInterval is replica.high.watermark.checkpoint.interval.ms (5s).
const hwCheckpointInterval = 5 * time.Second

// Broker is one broker node.
type Broker struct {
	cfg proto.Config
	// controllers are the controller nodes' names; ctl is the one the broker reports to
	// (controller.go: with a quorum, the active controller as far as it knows).
	controllers []string
	ctls        []sim.NodeID
	ctl         sim.NodeID
	find        controllerSearch
	shutdown    shutdownState // a controlled shutdown asked for (ops.go)
	quota       quotaState    // client quotas, rates and muted channels (quota.go)
	// incarnation tells this process start from every earlier one, so the controller can
	// tell a restart (Kafka's incarnation id, fenced by the broker epoch). It comes from
	// env.Starts, not a counter on the disk: a bump whose fsync a power loss beat would be
	// lost, and the controller would take the next start for the broker it had registered.
	incarnation int64
	meta        proto.Metadata
	parts       map[proto.TP]*replica
	// touched lists, by replica index and each once, the replicas whose role changed since
	// an observer last took the list (TakeTouched). Nothing the broker does depends on it.
	touched []int
	// logDirs finds a replica by its log's directory, for a completed fsync (fsyncOwner).
	logDirs map[string]*replica
	// fetchWaits finds a parked fetch's replica by the fetch's key when its MaxWait ends,
	// without walking every partition; an entry lives as long as the parked fetch.
	fetchWaits map[int64]*replica
	order      []proto.TP // parts' keys, sorted: every walk over partitions uses it
	byIdx      []*replica // by replica.idx, which timers carry
	nextKey    int64      // correlation ids and parked-request keys
	// durable tells whether the flush policy promises that acknowledged data is on disk.
	durable bool
	// groups are the group coordinators this broker runs (coordinator.go).
	groups hostedCoordinators[*group.Coordinator]
	// txnCoords are the transaction coordinators this broker runs (txncoord.go).
	txnCoords hostedCoordinators[*txn.Coordinator]
	// patterns are the delayed messages and the retention check (delayed.go, retention.go).
	patterns patternState
	// txns are the produces held for their coordinator and the marker writes (txn.go).
	txns txnState
	// shares are the share-partition windows this broker keeps as leader, its share
	// sessions and its persister's requests (share.go, persister.go); shareCoords the
	// share coordinators it hosts (sharecoord.go).
	shares      shareLeader
	shareCoords hostedCoordinators[*shareCoord]
}

// New returns a broker that reports to the controller node of that name, or, given the
// names of a controller quorum, to the active one among them.
func New(cfg proto.Config, controllers ...string) *Broker {
	return &Broker{cfg: cfg, controllers: controllers, parts: map[proto.TP]*replica{},
		fetchWaits: map[int64]*replica{}, logDirs: map[string]*replica{},
		durable: cfg.Broker.Log.Flush == wal.FlushEveryBatch}
}

// Start takes this start's incarnation, then registers with the controller. Partitions
// are opened when the controller names them (LeaderAndIsr), which is also when their logs
// are recovered.
func (b *Broker) Start(env *sim.Env) {
	b.incarnation = env.Starts()
	b.recordIncarnation(env)
	if !b.resolveControllers(env) {
		return
	}
	sim.Record(env, Started{Incarnation: b.incarnation})
	b.heartbeat(env)
	env.SetTimer(b.cfg.Broker.ReplicaLagTimeMax/2, sim.TimerTag{Kind: timerISRCheck})
	env.SetTimer(hwCheckpointInterval, sim.TimerTag{Kind: timerHWCheckpoint})
	if d, ok := b.cfg.Broker.Log.Flush.Interval(); ok {
		env.SetTimer(d, sim.TimerTag{Kind: timerFlush})
	}
}

// incarnationFile holds the last incarnation, written at each start. Nothing reads it: it
// was the counter the incarnation came from, and its write and fsync stay so that every
// run keeps its kernel steps (the catalogue's trace hashes and goldens count them) until a
// change that regenerates those drops it.
const incarnationFile = "broker/incarnation"

func (b *Broker) recordIncarnation(env *sim.Env) {
	var buf [8]byte
	putBeUint64(buf[:], uint64(b.incarnation))
	if err := env.Disk().WriteAt(incarnationFile, 0, buf[:]); err != nil {
		panic(err) // offset 0 is always writable
	}
	env.Fsync(incarnationFile)
}

func (b *Broker) heartbeat(env *sim.Env) {
	b.beforeHeartbeat(env)
	b.sendHeartbeat(env)
}

func (b *Broker) sendHeartbeat(env *sim.Env) {
	env.Send(b.ctl, proto.BrokerHeartbeat{Broker: env.Self(), Incarnation: b.incarnation, MetadataVersion: b.meta.Version, WantShutDown: b.shutdown.wanted})
	b.find.timer = env.SetTimer(b.cfg.Broker.HeartbeatInterval, sim.TimerTag{Kind: timerHeartbeat})
}

// Recv dispatches a message to its handler.
func (b *Broker) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if b.holdMuted(env, from, msg) {
		return // a client over its quota: its channel is muted (quota.go)
	}
	switch m := msg.(type) {
	case proto.LeaderAndIsr:
		// Without broker epochs (before KIP-380, broker-epoch=off) a restarted broker acts
		// on requests the controller meant for its previous incarnation.
		if m.BrokerEpoch == b.incarnation || b.cfg.Legacy.NoBrokerEpoch {
			b.onLeaderAndIsr(env, m)
		}
	case proto.Metadata:
		if m.Version > b.meta.Version {
			b.meta = m
			// The metadata carries every partition's state too: applying it heals a lost
			// LeaderAndIsr, which the version-based resend at heartbeats would not notice.
			// Only once the controller has registered this incarnation: until then the
			// states may name it leader of what its previous life led.
			for _, p := range m.Partitions {
				if !m.Registered(env.Self(), b.incarnation) {
					break
				}
				b.onLeaderAndIsr(env, proto.LeaderAndIsr{ControllerEpoch: m.ControllerEpoch, BrokerEpoch: b.incarnation, State: p, Topic: topicOf(m, p.TP.Topic)})
			}
		}
	case proto.BrokerHeartbeatResponse:
		if m.ShouldShutDown {
			b.onShutdownGranted(env)
			break
		}
		b.onHeartbeatResponse(env, from, m)
	case proto.ShutdownBroker:
		b.onShutdownAsked(env)
	case proto.AlterPartitionResponse:
		b.onAlterPartitionResponse(env, m)
	case proto.MetadataRequest:
		env.Send(from, proto.MetadataResponse{CorrelationID: m.CorrelationID, Metadata: b.meta})
	case proto.ProduceRequest:
		b.onProduce(env, from, m)
	case proto.AlterClientQuotas:
		b.onAlterClientQuotas(env, m)
	case proto.FetchRequest:
		b.onFetch(env, from, m)
	case proto.FetchResponse:
		b.onFetchResponse(env, m)
	case proto.ListOffsets:
		b.onListOffsets(env, from, m)
	case sim.FsyncDone:
		b.onFsyncDone(env, m)
	case proto.FindCoordinator:
		b.onFindCoordinator(env, from, m)
	case proto.JoinGroup, proto.SyncGroup, proto.Heartbeat, proto.LeaveGroup, proto.OffsetCommit, proto.OffsetFetch, proto.TxnOffsetCommit, proto.ConsumerGroupHeartbeat, proto.ShareGroupHeartbeat:
		b.onGroupRequest(env, from, m)
	case proto.WriteTxnMarkers:
		b.onWriteTxnMarkers(env, from, m)
	case proto.AddPartitionsToTxnResponse:
		b.onVerified(env, m)
	case proto.InitProducerID:
		if m.TransactionalID != "" { // an idempotent producer's goes to the controller
			b.onTxnRequest(env, from, m)
		}
	case proto.AddPartitionsToTxn, proto.AddOffsetsToTxn, proto.EndTxn, proto.WriteTxnMarkersResponse:
		b.onTxnRequest(env, from, m)
	case proto.ShareFetch:
		b.onShareFetch(env, from, m)
	case proto.ShareAcknowledge:
		b.onShareAcknowledge(env, from, m)
	case proto.ReadShareGroupState, proto.WriteShareGroupState:
		b.onShareStateRequest(env, from, m)
	case proto.ReadShareGroupStateResponse, proto.WriteShareGroupStateResponse:
		b.onShareStateResponse(env, m)
	}
	b.tend(env)
}

// tend runs after every message and timer: the hosted coordinators' lives, the delayed
// messages, and the share-partition windows.
func (b *Broker) tend(env *sim.Env) {
	b.tendCoordinators(env)
	b.tendTxnCoordinators(env)
	b.tendPatterns(env)
	b.tendShareCoordinators(env)
	b.tendShares(env)
}

// Timer dispatches a timer to its handler.
func (b *Broker) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case timerHeartbeat:
		b.heartbeat(env)
	case timerAlterRetry:
		b.resendAlter(env, tag.Arg)
	case timerISRCheck:
		b.checkISR(env)
		env.SetTimer(b.cfg.Broker.ReplicaLagTimeMax/2, sim.TimerTag{Kind: timerISRCheck})
	case timerProduceTimeout:
		b.expireProduce(env, tag.Arg)
	case timerFetchWait:
		b.expireFetch(env, tag.Arg)
	case timerFollowerFetch:
		if int(tag.Arg) < len(b.byIdx) {
			b.fetchFromLeader(env, b.byIdx[tag.Arg])
		}
	case timerFetchTimeout:
		b.fetchTimedOut(env, tag.Arg)
	case timerFlush:
		for _, tp := range b.order {
			b.sync(env, b.parts[tp].log.Flush())
		}
		d, _ := b.cfg.Broker.Log.Flush.Interval()
		env.SetTimer(d, sim.TimerTag{Kind: timerFlush})
	case timerHWCheckpoint:
		b.checkpointHW(env)
		env.SetTimer(hwCheckpointInterval, sim.TimerTag{Kind: timerHWCheckpoint})
	case timerGroup:
		b.coordinatorTimer(env, tag.Arg)
	case timerTxn:
		b.txnCoordinatorTimer(env, tag.Arg)
	case timerDelayed:
		b.onDelayTimer(env)
	case timerRetention:
		b.onRetentionTimer(env)
	case timerCleaner:
		b.onCleanerTimer(env)
	case timerTxnVerify:
		b.verifyTimedOut(env, tag.Arg)
	case timerQuotaUnmute:
		b.unmute(env, sim.NodeID(tag.Arg))
	case timerTxnVerifyRetry:
		b.retryVerification(env, tag.Arg)
	case timerMarkersWrite:
		b.markersTimedOut(env, tag.Arg)
	case timerShareLock:
		b.onShareLockTimer(env, tag.Arg)
	case timerSharePersist:
		b.onPersistTimer(env, tag.Arg)
	}
	b.tend(env)
}

func topicOf(m proto.Metadata, name string) proto.TopicConfig {
	for _, t := range m.Topics {
		if t.Name == name {
			return t
		}
	}
	return proto.TopicConfig{Name: name}
}

func (b *Broker) sync(env *sim.Env, files []string) {
	for _, f := range files {
		env.Fsync(f)
	}
}

func (b *Broker) key() int64 {
	b.nextKey++
	return b.nextKey
}

// Partitions lists the replicas this broker hosts, for views and checkers.
func (b *Broker) Partitions() []proto.TP { return slices.Clone(b.order) }

// Replica is a read-only view of one hosted partition, for views and checkers.
type Replica struct {
	TP            proto.TP
	Leader        bool
	LeaderEpoch   int32
	HighWatermark int64
	LogEndOffset  int64
	LogStart      int64
	SyncedOffset  int64
	ISR           []sim.NodeID
	Log           *wal.Log // read it, never write it
	// LastStableOffset is the LSO: the HW, or the first offset of the oldest open
	// transaction if that is lower (txn.go; Broker.Txns has the transactions).
	LastStableOffset int64
}

// Replica returns the view of a hosted partition.
func (b *Broker) Replica(tp proto.TP) (Replica, bool) {
	r := b.parts[tp]
	if r == nil {
		return Replica{}, false
	}
	return Replica{TP: tp, Leader: r.isLeader, LeaderEpoch: r.state.LeaderEpoch, HighWatermark: r.hw,
		LogEndOffset: r.log.LogEndOffset(), LogStart: r.log.LogStartOffset(), SyncedOffset: r.log.SyncedOffset(),
		ISR: slices.Clone(r.state.ISR), Log: r.log, LastStableOffset: b.lastStableOffset(r)}, true
}

// Role is the part of a replica's state that leadership and replication change: what the
// cluster's invariant checks read after every event. Unlike Replica it allocates nothing
// and does not walk the log's segments for the durable offset. ISR is the broker's own
// slice: read it at once, and copy it to keep it.
type Role struct {
	Leader        bool
	LeaderEpoch   int32
	HighWatermark int64
	LogEndOffset  int64
	ISR           []sim.NodeID
}

// Role returns the role of a hosted partition.
func (b *Broker) Role(tp proto.TP) (Role, bool) {
	r := b.parts[tp]
	if r == nil {
		return Role{}, false
	}
	return r.role(), true
}

// ReplicaRef is a hosted partition's reference for RoleAt: its index in this broker
// value, which keeps every replica it opened (a removed one included) until it crashes.
func (b *Broker) ReplicaRef(tp proto.TP) (int, bool) {
	r := b.parts[tp]
	if r == nil {
		return 0, false
	}
	return r.idx, true
}

// TPAt is the partition of a reference from ReplicaRef or TakeTouched.
func (b *Broker) TPAt(ref int) proto.TP { return b.byIdx[ref].tp }

// RoleAt is Role by a reference from ReplicaRef on the same broker value: an observer
// that reads the same partitions after every event skips the lookup by name.
func (b *Broker) RoleAt(ref int) Role { return b.byIdx[ref].role() }

// TakeTouched hands an observer the references (for RoleAt) of the replicas whose Role
// may have changed since the list was last taken, and starts a new list; buf is reused.
// Listed are the replicas whose leadership or controller state (leader epoch, ISR)
// changed, and those whose high watermark or log end changed as a leader appended,
// advanced its HW or truncated: a follower's own appends and HW are not (its Role matters
// to the invariants only once it leads, when it is listed). The list holds each replica
// at most once, so it stays as short as the replicas when nobody takes it.
func (b *Broker) TakeTouched(buf []int) []int {
	buf = append(buf[:0], b.touched...)
	for _, i := range b.touched {
		b.byIdx[i].touched = false
	}
	b.touched = b.touched[:0]
	return buf
}

// touch lists r in touched.
func (b *Broker) touch(r *replica) {
	if !r.touched {
		r.touched = true
		b.touched = append(b.touched, r.idx)
	}
}

func (r *replica) role() Role {
	return Role{Leader: r.isLeader, LeaderEpoch: r.state.LeaderEpoch, HighWatermark: r.hw,
		LogEndOffset: r.log.LogEndOffset(), ISR: r.state.ISR}
}

func putBeUint64(p []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		p[i] = byte(v)
		v >>= 8
	}
}
