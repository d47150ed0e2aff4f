package broker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// replica is this broker's copy of one partition, as leader or follower.
type replica struct {
	idx int // stable index into Broker.byIdx, for timers
	// removed: a reassignment took this replica away; it neither leads nor fetches (ops.go).
	removed bool
	tp      proto.TP
	topic   proto.TopicConfig
	state   proto.PartitionState // the controller's latest word
	log     *wal.Log
	hw      int64
	// producers is the idempotence state: per producer id, its latest batches.
	producers producerStates

	// Leader side.
	isLeader   bool
	epochStart int64 // log end offset when this leader epoch began
	followers  []*follower
	// alterPending is an AlterPartition awaiting the controller; pendingISR is what it
	// asked for. While it is pending the HW counts the larger of the two ISRs (KIP-497).
	alterPending bool
	pendingISR   []sim.NodeID
	// alterReq and alterSent are the pending request and when it last went out: the
	// periodic ISR check sends it again if no answer came (Kafka's AlterPartitionManager
	// retries until the controller answers).
	alterReq  proto.AlterPartition
	alterSent sim.Time
	// alterAnswered is set once the controller answered the pending request with an
	// error that leaves it pending (isr.go, onAlterPartitionError): it is not resent, and
	// the leader waits for new metadata (or, after an unexpected error, for a backoff).
	alterAnswered bool
	alterErr      proto.Error // the unexpected error a resend after the backoff follows
	produces      []*parkedProduce
	fetches       []*parkedFetch

	// Follower side.
	synced int64 // the durable offset last reported in the trace

	// touched: listed in Broker.touched; roleChanged: in Broker.patterns.changed.
	touched, roleChanged bool

	fetchCorr  int64 // the outstanding fetch, 0 if none
	fetchTimer sim.TimerID
	// waitFsync holds the next fetch until the log is durable, so that a follower's fetch
	// offset tells the leader what it has on disk (flush-every-batch policy).
	waitFsync bool
	// epochChecked says that this term's epoch lookup is done (epoch-lookup=kip101:
	// fetches stop carrying the last fetched epoch until the next leader change).
	epochChecked bool
	// stuck says that the leader sent a batch this log cannot take (it straddles the log
	// end): replication of the partition stops until the next leader change.
	stuck bool
}

// follower is the leader's view of one follower.
type follower struct {
	id  sim.NodeID
	leo int64 // from its last fetch offset; -1 until it fetched in this epoch
	// Kafka's Replica.updateFetchState fields.
	lastCaughtUp      sim.Time
	lastFetchTime     sim.Time
	lastFetchLeaderLE int64
}

func (r *replica) follower(id sim.NodeID) *follower {
	for _, f := range r.followers {
		if f.id == id {
			return f
		}
	}
	return nil
}

// clearPending ends the pending AlterPartition: answered, or overtaken by new metadata.
func (r *replica) clearPending() {
	r.alterPending, r.pendingISR, r.alterAnswered, r.alterErr = false, nil, false, proto.None
}

// inISR reports whether id is in the ISR the HW must wait for: the committed ISR, or the
// one a pending AlterPartition asked for, whichever is larger.
func (r *replica) inMaximalISR(id sim.NodeID) bool {
	return slices.Contains(r.state.ISR, id) || (r.alterPending && slices.Contains(r.pendingISR, id))
}

// names are the nodes' names, a new slice the trace may keep.
func (b *Broker) names(env *sim.Env, ids []sim.NodeID) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = env.NameOf(id)
	}
	return s
}

// onLeaderAndIsr applies the controller's word on a partition: open its log if it is new
// here, then lead, follow, or stand by.
func (b *Broker) onLeaderAndIsr(env *sim.Env, m proto.LeaderAndIsr) {
	st := m.State
	r := b.parts[st.TP]
	if !slices.Contains(st.Replicas, env.Self()) {
		if r != nil && st.PartitionEpoch > r.state.PartitionEpoch {
			b.removeReplica(env, r, st)
		}
		return
	}
	if r == nil {
		var err error
		if r, err = b.open(env, st.TP, m.Topic); err != nil {
			sim.Record(env, StorageFailed{TP: st.TP, Op: OpOpen, Err: err})
			return
		}
	} else if st.PartitionEpoch <= r.state.PartitionEpoch {
		return // stale or repeated
	}
	old := r.state
	r.state, r.topic, r.removed = st.Clone(), m.Topic, false
	b.rolesChanged(r)
	newTerm := old.Leader != st.Leader || old.LeaderEpoch != st.LeaderEpoch || old.PartitionEpoch == 0
	switch {
	case st.Leader == env.Self() && (newTerm || !r.isLeader):
		b.becomeLeader(env, r)
	case st.Leader == env.Self():
		r.clearPending() // the controller's word settles what was pending
		b.trackReplicas(env, r)
		b.maybeAdvanceHW(env, r)
	case st.Leader == proto.NoLeader:
		if r.isLeader {
			b.stepDown(env, r, proto.NotLeaderOrFollower)
		}
		sim.Record(env, Offline{TP: r.tp, Epoch: st.LeaderEpoch})
	case newTerm || r.isLeader:
		b.becomeFollower(env, r)
	}
}

// open recovers a partition's log from the disk.
func (b *Broker) open(env *sim.Env, tp proto.TP, topic proto.TopicConfig) (*replica, error) {
	dir := fmt.Sprintf("data/%s-%d", tp.Topic, tp.Partition)
	log, rec, err := wal.Open(env.Disk(), dir, b.cfg.Broker.Log)
	if err != nil {
		return nil, err
	}
	log.SetCompression(proto.CompressedRecords) // a compressed batch is stored compressed
	r := &replica{idx: len(b.byIdx), tp: tp, topic: topic, log: log}
	r.hw = min(b.checkpointedHW(env, tp), log.LogEndOffset())
	r.producers.rebuild(log)
	b.byIdx = append(b.byIdx, r)
	b.parts[tp] = r
	b.logDirs[log.Dir()] = r
	i, _ := slices.BinarySearchFunc(b.order, tp, proto.CompareTP) // kept sorted as it grows
	b.order = slices.Insert(b.order, i, tp)
	if rec.Batches > 0 || len(rec.Cuts) > 0 {
		sim.Record(env, Recovered{TP: tp, Recovery: rec, HW: r.hw})
	}
	return r, nil
}

func (b *Broker) becomeLeader(env *sim.Env, r *replica) {
	r.isLeader = true
	b.rolesChanged(r)
	r.clearPending()
	b.stopFetching(env, r)
	files, err := r.log.AssignEpoch(r.state.LeaderEpoch)
	if err != nil {
		sim.Record(env, StorageFailed{TP: r.tp, Op: OpAssignEpoch, Err: err})
	}
	b.sync(env, files)
	r.epochStart = r.log.LogEndOffset()
	r.followers = nil
	for _, id := range r.state.Replicas {
		if id != env.Self() {
			// A new leader gives every follower a fresh lag allowance (Kafka resets
			// lastCaughtUpTime on leader change).
			r.followers = append(r.followers, &follower{id: id, leo: -1, lastCaughtUp: env.Now(), lastFetchTime: env.Now()})
		}
	}
	if env.Tracing() {
		sim.Record(env, Leading{TP: r.tp, Epoch: r.state.LeaderEpoch, LEO: r.log.LogEndOffset(), HW: r.hw,
			ISR: b.names(env, r.state.ISR)})
	}
	b.maybeAdvanceHW(env, r)
}

func (b *Broker) becomeFollower(env *sim.Env, r *replica) {
	if r.isLeader {
		b.stepDown(env, r, proto.NotLeaderOrFollower)
	}
	b.stopFetching(env, r)
	r.epochChecked, r.stuck = false, false
	sim.Record(env, Following{TP: r.tp, Leader: env.NameOf(r.state.Leader), Epoch: r.state.LeaderEpoch,
		LEO: r.log.LogEndOffset(), HW: r.hw})
	if b.cfg.Broker.Truncation == proto.TruncateToHW && r.log.LogEndOffset() > r.hw {
		// Kafka before 0.11: a new follower cuts its log to its own high watermark.
		b.truncate(env, r, r.hw, TruncateCause{Rule: ToOwnHW, HW: r.hw})
	}
	b.fetchFromLeader(env, r)
}

// stepDown ends this broker's leadership: everything waiting on it fails.
func (b *Broker) stepDown(env *sim.Env, r *replica, why proto.Error) {
	r.isLeader = false
	b.rolesChanged(r)
	for _, p := range r.produces {
		env.CancelTimer(p.timer)
		b.answerProduce(env, r, p, why, -1)
	}
	r.produces = nil
	for _, f := range r.fetches {
		env.CancelTimer(f.timer)
		delete(b.fetchWaits, f.key)
		env.Send(f.from, proto.FetchResponse{CorrelationID: f.req.CorrelationID, TP: r.tp, Error: why})
	}
	r.fetches = nil
	b.completeMarkers(env)
}

// truncate cuts the log at offset and everything derived from it.
func (b *Broker) truncate(env *sim.Env, r *replica, offset int64, why TruncateCause) {
	before := r.log.LogEndOffset()
	t, err := r.log.TruncateTo(offset)
	b.touch(r)
	if err != nil {
		sim.Record(env, StorageFailed{TP: r.tp, Op: OpTruncate, Offset: offset, Err: err})
		return
	}
	b.sync(env, t.Sync)
	r.hw = min(r.hw, r.log.LogEndOffset())
	r.synced = min(r.synced, r.log.SyncedOffset())
	r.producers.rebuild(r.log)
	if t.NewEnd < before {
		sim.Record(env, Truncated{TP: r.tp, Cause: why, From: t.NewEnd, To: before - 1})
	}
}

// maybeAdvanceHW raises the leader's high watermark to the lowest log end offset in the
// ISR, and completes what was waiting for it.
func (b *Broker) maybeAdvanceHW(env *sim.Env, r *replica) {
	if !r.isLeader {
		return
	}
	hw := b.leaderLEO(r)
	if !b.cfg.Bugs.HWFromLeaderOnly {
		for _, f := range r.followers {
			if r.inMaximalISR(f.id) {
				hw = min(hw, f.leo)
			}
		}
		if len(r.state.ISR) < r.topic.MinInsyncReplicas && !b.cfg.Legacy.HWIgnoresMinISR {
			// KAFKA-15583: below min.insync.replicas nothing new becomes committed. The
			// size is the committed ISR's (Kafka's isUnderMinIsr), not the maximal one:
			// a follower whose joining the controller has not confirmed does not count.
			// Before Kafka 3.7 (hw-min-isr=ignore) the HW advanced regardless.
			hw = r.hw
		}
	}
	if hw > r.hw {
		sim.Record(env, HWAdvanced{TP: r.tp, From: r.hw, To: hw})
		r.hw = hw
		r.producers.replicatedTo(hw)
		b.touch(r)
		b.completeProduces(env, r)
		b.completeMarkers(env)
		b.wakeFetches(env, r)
	}
}

// leaderLEO is what the leader counts for itself: its log end, or under a flush-every-
// batch policy only what is on its disk.
func (b *Broker) leaderLEO(r *replica) int64 {
	if b.durable && !b.cfg.Bugs.AckBeforeFsync {
		return r.log.SyncedOffset()
	}
	return r.log.LogEndOffset()
}

func (b *Broker) onFsyncDone(env *sim.Env, m sim.FsyncDone) {
	r, synced := b.fsyncOwner(m.File)
	if r == nil {
		return
	}
	if synced > r.synced {
		sim.Record(env, Synced{TP: r.tp, Below: synced})
	}
	r.synced = synced
	if r.isLeader {
		b.maybeAdvanceHW(env, r)
		b.completeProduces(env, r)
	} else if r.waitFsync && synced >= r.log.LogEndOffset() {
		r.waitFsync = false
		b.fetchFromLeader(env, r)
	}
}

// fsyncOwner finds the replica whose log file belongs to, and that log's durable
// offset. A log owns the files under its directory (wal.Log.OnSynced); of the logs whose
// directory is one of file's, the first in partition order, as a walk over every log in
// that order would find, but looked up by directory.
func (b *Broker) fsyncOwner(file string) (*replica, int64) {
	var owner *replica
	for i := 0; i < len(file); i++ {
		if file[i] != '/' {
			continue
		}
		if r := b.logDirs[file[:i]]; r != nil && (owner == nil || r.tp.Less(owner.tp)) {
			owner = r
		}
	}
	if owner == nil {
		return nil, 0
	}
	synced, _ := owner.log.OnSynced(file)
	return owner, synced
}

const hwFile = "broker/hw"

// checkpointHW writes every partition's HW to the disk (Kafka's
// replication-offset-checkpoint), for the pre-KIP-101 truncation rule and for restarts.
func (b *Broker) checkpointHW(env *sim.Env) {
	if len(b.order) == 0 {
		return
	}
	var sb strings.Builder
	for _, tp := range b.order {
		fmt.Fprintf(&sb, "%s %d %d\n", tp.Topic, tp.Partition, b.parts[tp].hw)
	}
	d := env.Disk()
	d.Truncate(hwFile, 0)
	d.Append(hwFile, []byte(sb.String()))
	env.Fsync(hwFile)
}

func (b *Broker) checkpointedHW(env *sim.Env, tp proto.TP) int64 {
	for _, line := range strings.Split(string(env.Disk().ReadAll(hwFile)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != tp.Topic || f[1] != strconv.Itoa(int(tp.Partition)) {
			continue
		}
		if hw, err := strconv.ParseInt(f[2], 10, 64); err == nil {
			return hw
		}
	}
	return 0
}
