package broker

import (
	"time"

	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The group coordinator, hosted: a broker coordinates the groups of every partition of the
// offsets topic it leads. On becoming leader of such a partition it loads the groups and
// committed offsets from the partition's log; on losing the leadership it drops them, and
// the members find the new leader with FindCoordinator. The coordinator's writes (offset
// commits, group metadata) are appended to the partition like a produce with acks=all and
// answered once the high watermark passes them; the offsets-acks-1 bug answers them at once.

// timerGroup is the coordinators' timer kind; Arg is the coordinator's own key.
const timerGroup = 100

// coordHost is the group.Host of one coordinator, valid for one handler call.
type coordHost struct {
	b   *Broker
	env *sim.Env
	r   *replica
}

func (h coordHost) Now() sim.Time                       { return h.env.Now() }
func (h coordHost) Send(to sim.NodeID, msg sim.Message) { h.env.Send(to, msg) }
func (h coordHost) Tracing() bool                       { return h.env.Tracing() }
func (h coordHost) Record(e sim.Payload)                { sim.Record(h.env, e) }
func (h coordHost) NameOf(id sim.NodeID) string         { return h.env.NameOf(id) }
func (h coordHost) NewKey() int64                       { return h.b.key() }
func (h coordHost) CancelTimer(id sim.TimerID)          { h.env.CancelTimer(id) }
func (h coordHost) SetTimer(d time.Duration, key int64) sim.TimerID {
	return h.env.SetTimer(d, sim.TimerTag{Kind: timerGroup, Arg: key})
}
func (h coordHost) Append(records []wal.Record) (int64, proto.Error) {
	return h.b.appendLocal(h.env, h.r, internalBatch(records))
}

// internalBatch is a coordinator's batch of its own records: no producer, no sequence.
func internalBatch(records []wal.Record) wal.Batch {
	return wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence, Records: records}
}

// TopicPartitions is the partition count of a topic in the broker's metadata (0: no such
// topic): what a consumer-protocol group's server-side assignor assigns.
func (h coordHost) TopicPartitions(topic string) int {
	for _, t := range h.b.meta.Topics {
		if t.Name == topic {
			return t.Partitions
		}
	}
	return 0
}
func (h coordHost) AppendTransactional(pid int64, epoch int16, records []wal.Record) (int64, proto.Error) {
	return h.b.appendTxnOffsets(h.env, h.r, pid, epoch, records)
}

// appendLocal appends the coordinator's batch to an offsets partition it leads.
func (b *Broker) appendLocal(env *sim.Env, r *replica, batch wal.Batch) (int64, proto.Error) {
	if !r.isLeader {
		return -1, proto.NotLeaderOrFollower
	}
	if len(r.state.ISR) < r.topic.MinInsyncReplicas && !b.cfg.Bugs.OffsetsAcks1 {
		if env.Tracing() {
			sim.Record(env, BelowMinISR{TP: r.tp, ISR: b.names(env, r.state.ISR), MinISR: r.topic.MinInsyncReplicas, Coordinator: true})
		}
		return -1, proto.NotEnoughReplicas
	}
	batch.LeaderEpoch, batch.Timestamp = r.state.LeaderEpoch, env.Now()
	res, err := r.log.Append(batch)
	b.touch(r)
	if err != nil {
		sim.Record(env, StorageFailed{TP: r.tp, Op: OpAppend, Err: err})
		return -1, proto.KafkaStorageError
	}
	b.sync(env, res.Sync)
	batch.BaseOffset = res.BaseOffset
	r.producers.record(batch)
	sim.Record(env, Appended{TP: r.tp, First: res.BaseOffset, Last: res.NextOffset - 1, Epoch: batch.LeaderEpoch,
		Coordinator: true, LEO: res.NextOffset, Bytes: int(res.Stored)})
	b.wakeFetches(env, r)
	b.maybeAdvanceHW(env, r)
	return res.NextOffset, proto.None
}

// groupLife loads, unloads and advances the group coordinators (hosting.go).
var groupLife = coordinatorLife[*group.Coordinator]{
	topic: proto.OffsetsTopic,
	load: func(b *Broker, env *sim.Env, r *replica) *group.Coordinator {
		return group.Load(coordHost{b, env, r}, b.cfg.Group, b.cfg.Share, b.cfg.Bugs, r.tp.Partition, r.state.LeaderEpoch, r.log)
	},
	unload: func(b *Broker, env *sim.Env, hc *hosted[*group.Coordinator], why string) {
		hc.coord.Unload(coordHost{b, env, hc.r}, why)
	},
	committed: func(b *Broker, env *sim.Env, hc *hosted[*group.Coordinator]) {
		hc.coord.Committed(coordHost{b, env, hc.r}, hc.r.hw)
	},
}

// tendCoordinators runs after every message and timer: it loads a coordinator for each
// offsets partition this broker has come to lead, unloads those it no longer leads, and
// completes the writes the high watermark has passed.
func (b *Broker) tendCoordinators(env *sim.Env) { tendHosted(b, env, &b.groups, &groupLife) }

// coordinatorTimer runs a coordinator's timer.
func (b *Broker) coordinatorTimer(env *sim.Env, key int64) {
	for _, hc := range b.groups.coords {
		if hc.coord.Owns(key) {
			hc.coord.Timer(coordHost{b, env, hc.r}, key)
			return
		}
	}
}

// offsetsPartitions is the partition count of the offsets topic in the broker's metadata,
// 0 if the topic does not exist.
func (b *Broker) offsetsPartitions() int {
	for _, t := range b.meta.Topics {
		if t.Name == proto.OffsetsTopic {
			return t.Partitions
		}
	}
	return 0
}

// onFindCoordinator answers with the leader of the group's offsets partition, or for a
// transactional id of its transaction state partition (txncoord.go), as this broker's
// metadata has it.
func (b *Broker) onFindCoordinator(env *sim.Env, from sim.NodeID, m proto.FindCoordinator) {
	resp := proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: proto.CoordinatorNotAvailable, Coordinator: proto.NoLeader}
	if m.KeyType == proto.TransactionCoordinator {
		resp.KeyType = m.KeyType
		resp.Coordinator, resp.Error = b.txnCoordinatorFor(m.Group)
		env.Send(from, resp)
		return
	}
	if n := b.offsetsPartitions(); n > 0 {
		tp := proto.TP{Topic: proto.OffsetsTopic, Partition: group.PartitionFor(m.Group, n)}
		if p, ok := b.meta.Partition(tp); ok && p.Leader != proto.NoLeader {
			resp.Error, resp.Coordinator = proto.None, p.Leader
		}
	}
	env.Send(from, resp)
}

// onGroupRequest hands a group request to the coordinator of the group's partition, or
// answers NOT_COORDINATOR.
func (b *Broker) onGroupRequest(env *sim.Env, from sim.NodeID, msg sim.Message) {
	id, corr := groupRequestID(msg)
	if n := b.offsetsPartitions(); n > 0 {
		if hc := b.groups.of(group.PartitionFor(id, n)); hc != nil && hc.r.isLeader {
			hc.coord.Handle(coordHost{b, env, hc.r}, from, msg)
			return
		}
	}
	e := proto.NotCoordinator
	switch msg.(type) {
	case proto.JoinGroup:
		env.Send(from, proto.JoinGroupResponse{CorrelationID: corr, Group: id, Error: e, Generation: -1})
	case proto.SyncGroup:
		env.Send(from, proto.SyncGroupResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.Heartbeat:
		env.Send(from, proto.HeartbeatResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.LeaveGroup:
		env.Send(from, proto.LeaveGroupResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.OffsetCommit:
		env.Send(from, proto.OffsetCommitResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.OffsetFetch:
		env.Send(from, proto.OffsetFetchResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.TxnOffsetCommit:
		env.Send(from, proto.TxnOffsetCommitResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.ConsumerGroupHeartbeat:
		env.Send(from, proto.ConsumerGroupHeartbeatResponse{CorrelationID: corr, Group: id, Error: e})
	case proto.ShareGroupHeartbeat:
		env.Send(from, proto.ShareGroupHeartbeatResponse{CorrelationID: corr, Group: id, Error: e, MemberEpoch: -1})
	}
}

func groupRequestID(msg sim.Message) (string, int64) {
	switch m := msg.(type) {
	case proto.JoinGroup:
		return m.Group, m.CorrelationID
	case proto.SyncGroup:
		return m.Group, m.CorrelationID
	case proto.Heartbeat:
		return m.Group, m.CorrelationID
	case proto.LeaveGroup:
		return m.Group, m.CorrelationID
	case proto.OffsetCommit:
		return m.Group, m.CorrelationID
	case proto.OffsetFetch:
		return m.Group, m.CorrelationID
	case proto.TxnOffsetCommit:
		return m.Group, m.CorrelationID
	case proto.ConsumerGroupHeartbeat:
		return m.Group, m.CorrelationID
	case proto.ShareGroupHeartbeat:
		return m.Group, m.CorrelationID
	}
	return "", 0
}

// Coordinator is a read-only view of the coordinator this broker runs for an offsets
// partition, or nil.
func (b *Broker) Coordinator(partition int32) *group.Coordinator {
	if hc := b.groups.of(partition); hc != nil {
		return hc.coord
	}
	return nil
}
