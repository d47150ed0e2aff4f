package client

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/sim"
)

// fakeTxn is a fake transaction coordinator and group coordinator, hosted by one fake
// broker (coord). It keeps one producer id per transactional.id, bumps the epoch at every
// InitProducerId and (modern) at every EndTxn, and answers with scripted errors first.
type fakeTxn struct {
	coord  sim.NodeID
	modern bool // EndTxn bumps the epoch (KIP-890 part 2)
	ids    map[string]*fakeTxnID
	// faults answer the next requests of a kind ("InitProducerId", "EndTxn", ...) with an
	// error; silent ones are dropped without an answer.
	faults map[string][]proto.Error
	silent map[string]int
	// log lists the requests the coordinator answered, in order, as "Kind detail".
	log []string
	// committed are the group offsets committed by transactions, "group tp@offset".
	committed []string
	pendingOf map[int64][]string // producer id -> offsets waiting for its EndTxn
	nextPID   int64
	// The fake group: one member, generation gen, and the group's committed offsets
	// (OffsetCommit, and TxnOffsetCommit once its transaction commits).
	gen         int32
	offsets     map[proto.TP]int64
	pendingOffs map[int64][]proto.PartitionOffset
}

type fakeTxnID struct {
	pid   int64
	epoch int16
}

func newFakeTxn(coord sim.NodeID, modern bool) *fakeTxn {
	return &fakeTxn{coord: coord, modern: modern, ids: map[string]*fakeTxnID{}, faults: map[string][]proto.Error{},
		silent: map[string]int{}, pendingOf: map[int64][]string{}, nextPID: 4000,
		offsets: map[proto.TP]int64{}, pendingOffs: map[int64][]proto.PartitionOffset{}}
}

// fault takes the next scripted error for a request kind; drop says to answer nothing.
func (f *fakeTxn) fault(kind string) (e proto.Error, drop bool) {
	if f.silent[kind] > 0 {
		f.silent[kind]--
		return proto.None, true
	}
	if q := f.faults[kind]; len(q) > 0 {
		f.faults[kind] = q[1:]
		return q[0], false
	}
	return proto.None, false
}

// check refuses a stale epoch as the coordinator does (PRODUCER_FENCED).
func (f *fakeTxn) check(id string, pid int64, epoch int16) proto.Error {
	st := f.ids[id]
	if st == nil || st.pid != pid {
		return proto.InvalidProducerIDMapping
	}
	if epoch != st.epoch {
		return proto.ProducerFenced
	}
	return proto.None
}

func (f *fakeTxn) recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case proto.FindCoordinator:
		env.Send(from, proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Group: m.Group, KeyType: m.KeyType, Coordinator: f.coord})
		return
	}
	if env.Self() != f.coord {
		return
	}
	switch m := msg.(type) {
	case proto.InitProducerID:
		e, drop := f.fault("InitProducerId")
		if drop {
			return
		}
		res := proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, Error: e}
		if e == proto.None {
			st := f.ids[m.TransactionalID]
			if st == nil {
				f.nextPID++
				st = &fakeTxnID{pid: f.nextPID, epoch: -1}
				f.ids[m.TransactionalID] = st
			}
			st.epoch++
			res.ProducerID, res.ProducerEpoch = st.pid, st.epoch
			f.log = append(f.log, fmt.Sprintf("InitProducerId %s timeout=%s -> %d/%d", m.TransactionalID, m.TransactionTimeout, st.pid, st.epoch))
		}
		env.Send(from, res)
	case proto.AddPartitionsToTxn:
		e, drop := f.fault("AddPartitionsToTxn")
		if drop {
			return
		}
		if e == proto.None {
			e = f.check(m.TransactionalID, m.ProducerID, m.ProducerEpoch)
		}
		f.log = append(f.log, fmt.Sprintf("AddPartitionsToTxn %v epoch=%d %s", m.Partitions, m.ProducerEpoch, e))
		env.Send(from, proto.AddPartitionsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: e})
	case proto.AddOffsetsToTxn:
		e, drop := f.fault("AddOffsetsToTxn")
		if drop {
			return
		}
		if e == proto.None {
			e = f.check(m.TransactionalID, m.ProducerID, m.ProducerEpoch)
		}
		f.log = append(f.log, fmt.Sprintf("AddOffsetsToTxn %s %s", m.Group, e))
		env.Send(from, proto.AddOffsetsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: e})
	case proto.TxnOffsetCommit:
		e, drop := f.fault("TxnOffsetCommit")
		if drop {
			return
		}
		if e == proto.None {
			e = f.check(m.TransactionalID, m.ProducerID, m.ProducerEpoch)
		}
		f.log = append(f.log, fmt.Sprintf("TxnOffsetCommit %s gen=%d member=%s %s %s", m.Group, m.Generation, m.MemberID, offsetsText(m.Offsets), e))
		if e == proto.None {
			for _, o := range m.Offsets {
				f.pendingOf[m.ProducerID] = append(f.pendingOf[m.ProducerID], fmt.Sprintf("%s %s@%d", m.Group, o.TP, o.Offset))
			}
			f.pendingOffs[m.ProducerID] = append(f.pendingOffs[m.ProducerID], m.Offsets...)
		}
		env.Send(from, proto.TxnOffsetCommitResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
	case proto.EndTxn:
		e, drop := f.fault("EndTxn")
		if drop {
			return
		}
		if e == proto.None {
			e = f.check(m.TransactionalID, m.ProducerID, m.ProducerEpoch)
		}
		res := proto.EndTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: e, ProducerID: -1, ProducerEpoch: -1}
		word := "ABORT"
		if m.Commit {
			word = "COMMIT"
		}
		if e == proto.None {
			st := f.ids[m.TransactionalID]
			if m.Commit {
				f.committed = append(f.committed, f.pendingOf[m.ProducerID]...)
				for _, o := range f.pendingOffs[m.ProducerID] {
					f.offsets[o.TP] = o.Offset
				}
			}
			delete(f.pendingOf, m.ProducerID)
			delete(f.pendingOffs, m.ProducerID)
			if f.modern {
				st.epoch++
				res.ProducerID, res.ProducerEpoch = st.pid, st.epoch
			}
		}
		f.log = append(f.log, fmt.Sprintf("EndTxn %s epoch=%d %s", word, m.ProducerEpoch, e))
		env.Send(from, res)
	default:
		f.group(env, from, msg)
	}
}

// group answers the group protocol for a group of one member, "m-1".
func (f *fakeTxn) group(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case proto.JoinGroup:
		f.gen++
		env.Send(from, proto.JoinGroupResponse{CorrelationID: m.CorrelationID, Group: m.Group, Generation: f.gen, Assignor: m.Assignor,
			Leader: "m-1", MemberID: "m-1", Members: []proto.GroupMember{{MemberID: "m-1", Subscription: m.Subscription.Clone()}}})
	case proto.SyncGroup:
		var parts []proto.TP
		for _, a := range m.Assignments {
			if a.MemberID == m.MemberID {
				parts = slices.Clone(a.Partitions)
			}
		}
		env.Send(from, proto.SyncGroupResponse{CorrelationID: m.CorrelationID, Group: m.Group, Generation: f.gen, Partitions: parts})
	case proto.Heartbeat:
		env.Send(from, proto.HeartbeatResponse{CorrelationID: m.CorrelationID, Group: m.Group})
	case proto.OffsetFetch:
		res := proto.OffsetFetchResponse{CorrelationID: m.CorrelationID, Group: m.Group}
		for _, tp := range m.Partitions {
			off, ok := f.offsets[tp]
			if !ok {
				off = -1
			}
			res.Offsets = append(res.Offsets, proto.PartitionOffset{TP: tp, Offset: off, LeaderEpoch: -1})
		}
		env.Send(from, res)
	case proto.OffsetCommit:
		for _, o := range m.Offsets {
			f.offsets[o.TP] = o.Offset
		}
		f.log = append(f.log, fmt.Sprintf("OffsetCommit %s %s", m.Group, offsetsText(m.Offsets)))
		env.Send(from, proto.OffsetCommitResponse{CorrelationID: m.CorrelationID, Group: m.Group})
	}
}

// addTopic adds a topic of n partitions led by the first broker.
func (h *harness) addTopic(name string, n int) {
	h.fc.topics = append(h.fc.topics, proto.TopicConfig{Name: name, Partitions: n, ReplicationFactor: 1, MinInsyncReplicas: 1})
	for i := 0; i < n; i++ {
		h.fc.parts[proto.TP{Topic: name, Partition: int32(i)}] = &fakePart{leader: h.brokers[0], epoch: 1}
	}
	h.fc.version++
}

// txnHarness is a harness whose broker b1 is also the transaction and group coordinator.
func newTxnHarness(t tb, modern bool, partitions int) *harness {
	h := newHarness(t, 1, 1, partitions)
	h.fc.txn = newFakeTxn(h.brokers[0], modern)
	return h
}

// addTxnProducer adds a transactional producer with transactional.id id.
func (h *harness) addTxnProducer(name, id string, legacy bool) sim.NodeID {
	cfg := producerConfig()
	cfg.TransactionalID = id
	cfg.Linger = 0
	names, rec := h.names, h.rec
	return h.w.MustAddNode(name, func() sim.Node {
		p := NewProducer(cfg, 1, names, []string{"ctl"}, rec)
		p.SetTransactionVersion(legacy)
		return p
	})
}

// txnLog is the fake coordinator's log, one line per request.
func (h *harness) txnLog() string { return strings.Join(h.fc.txn.log, "\n") }

// producedTxn lists the produce requests as "tp pid/epoch seq=N txn=ID flags".
func (h *harness) producedTxn() []string {
	var out []string
	for _, m := range h.fc.produced {
		out = append(out, fmt.Sprintf("%s %d/%d seq=%d id=%s flags=%d", m.TP, m.Batch.ProducerID, m.Batch.ProducerEpoch,
			m.Batch.BaseSequence, m.TransactionalID, m.Batch.Flags))
	}
	return out
}

func (h *harness) inject(id sim.NodeID, msgs ...sim.Message) {
	for _, m := range msgs {
		h.w.Inject(id, m, 0)
	}
}
