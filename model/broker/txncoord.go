package broker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The transaction coordinator, hosted (coordinator.go does the same for groups): a broker
// coordinates the transactional ids of every partition of the transaction state topic it
// leads. On becoming leader of such a partition it loads them from the partition's log,
// which resumes the markers of every prepared transaction; on losing the leadership it
// drops them, and the producers find the new leader with FindCoordinator. The
// coordinator's state changes are appended like a produce with acks=all and take effect
// once the high watermark passes them.

// timerTxn is the transaction coordinators' timer kind; Arg is the coordinator's own key.
const timerTxn = 101

// hostedTxnCoordinator is one loaded transaction coordinator.
type hostedTxnCoordinator struct {
	r     *replica
	epoch int32
	coord *txn.Coordinator
}

// txnCoordState is what the broker keeps for the transaction coordinators it runs.
type txnCoordState struct {
	scanned  int        // how many of byIdx were checked for transaction state partitions
	parts    []*replica // hosted replicas of the transaction state topic, in the order found
	coords   []*hostedTxnCoordinator
	lastSeen []int64 // per replica of parts: the HW last passed to its coordinator
}

// txnHost is the txn.Host of one coordinator, valid for one handler call.
type txnHost struct {
	b   *Broker
	env *sim.Env
	r   *replica
}

func (h txnHost) Now() sim.Time                       { return h.env.Now() }
func (h txnHost) Send(to sim.NodeID, msg sim.Message) { h.env.Send(to, msg) }
func (h txnHost) Tracing() bool                       { return h.env.Tracing() }
func (h txnHost) Record(e sim.Payload)                { sim.Record(h.env, e) }
func (h txnHost) NameOf(id sim.NodeID) string         { return h.env.NameOf(id) }
func (h txnHost) NewKey() int64                       { return h.b.key() }
func (h txnHost) CancelTimer(id sim.TimerID)          { h.env.CancelTimer(id) }
func (h txnHost) SetTimer(d time.Duration, key int64) sim.TimerID {
	return h.env.SetTimer(d, sim.TimerTag{Kind: timerTxn, Arg: key})
}
func (h txnHost) Append(records []wal.Record) (int64, proto.Error) {
	return h.b.appendLocal(h.env, h.r, internalBatch(records))
}
func (h txnHost) Leader(tp proto.TP) (sim.NodeID, bool) {
	p, ok := h.b.meta.Partition(tp)
	return p.Leader, ok && p.Leader != proto.NoLeader
}

// tendTxnCoordinators runs after every message and timer: it loads a coordinator for each
// transaction state partition this broker has come to lead, unloads those it no longer
// leads, and passes each the high watermark of its partition. A cluster without the topic
// has nothing here.
func (b *Broker) tendTxnCoordinators(env *sim.Env) {
	ts := &b.txnCoords
	for ; ts.scanned < len(b.byIdx); ts.scanned++ {
		if r := b.byIdx[ts.scanned]; r.tp.Topic == proto.TransactionStateTopic {
			ts.parts = append(ts.parts, r)
			ts.lastSeen = append(ts.lastSeen, -1)
		}
	}
	for i, r := range ts.parts {
		hc := b.txnCoordinatorOf(r.tp.Partition)
		if hc != nil && (!r.isLeader || hc.epoch != r.state.LeaderEpoch) {
			why := "no longer the leader"
			if r.isLeader {
				why = fmt.Sprintf("new leader epoch %d", r.state.LeaderEpoch)
			}
			hc.coord.Unload(txnHost{b, env, r}, why)
			b.dropTxnCoordinator(hc)
			hc = nil
		}
		if hc == nil && r.isLeader {
			hc = &hostedTxnCoordinator{r: r, epoch: r.state.LeaderEpoch}
			hc.coord = txn.Load(txnHost{b, env, r}, b.cfg, r.tp.Partition, r.state.LeaderEpoch, r.log)
			ts.coords = append(ts.coords, hc)
			ts.lastSeen[i] = -1
		}
		if hc != nil && r.hw != ts.lastSeen[i] {
			ts.lastSeen[i] = r.hw
			hc.coord.Committed(txnHost{b, env, r}, r.hw)
		}
	}
}

func (b *Broker) txnCoordinatorOf(partition int32) *hostedTxnCoordinator {
	for _, hc := range b.txnCoords.coords {
		if hc.r.tp.Partition == partition {
			return hc
		}
	}
	return nil
}

func (b *Broker) dropTxnCoordinator(hc *hostedTxnCoordinator) {
	ts := &b.txnCoords
	for i, x := range ts.coords {
		if x == hc {
			ts.coords = append(ts.coords[:i], ts.coords[i+1:]...)
			return
		}
	}
}

// txnCoordinatorTimer runs a transaction coordinator's timer.
func (b *Broker) txnCoordinatorTimer(env *sim.Env, key int64) {
	for _, hc := range b.txnCoords.coords {
		if hc.coord.Owns(key) {
			hc.coord.Timer(txnHost{b, env, hc.r}, key)
			return
		}
	}
}

// txnStatePartitions is the partition count of the transaction state topic in the
// broker's metadata, 0 if the topic does not exist.
func (b *Broker) txnStatePartitions() int {
	for _, t := range b.meta.Topics {
		if t.Name == proto.TransactionStateTopic {
			return t.Partitions
		}
	}
	return 0
}

// txnCoordinatorFor answers FindCoordinator for a transactional id: the leader of its
// transaction state partition, as this broker's metadata has it.
func (b *Broker) txnCoordinatorFor(id string) (sim.NodeID, proto.Error) {
	if n := b.txnStatePartitions(); n > 0 {
		tp := proto.TP{Topic: proto.TransactionStateTopic, Partition: txn.PartitionFor(id, n)}
		if p, ok := b.meta.Partition(tp); ok && p.Leader != proto.NoLeader {
			return p.Leader, proto.None
		}
	}
	return proto.NoLeader, proto.CoordinatorNotAvailable
}

// onTxnRequest hands a transaction request to the coordinator of its transactional id's
// partition, or answers NOT_COORDINATOR; a WriteTxnMarkersResponse goes to the coordinator
// that sent the request.
func (b *Broker) onTxnRequest(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if _, ok := msg.(proto.WriteTxnMarkersResponse); ok {
		for _, hc := range b.txnCoords.coords {
			if hc.coord.Handle(txnHost{b, env, hc.r}, from, msg) {
				return
			}
		}
		return // a deposed coordinator's markers: nobody waits for them here
	}
	id := txnRequestID(msg)
	if n := b.txnStatePartitions(); n > 0 {
		if hc := b.txnCoordinatorOf(txn.PartitionFor(id, n)); hc != nil && hc.r.isLeader {
			hc.coord.Handle(txnHost{b, env, hc.r}, from, msg)
			return
		}
	}
	e := proto.NotCoordinator
	switch m := msg.(type) {
	case proto.InitProducerID:
		env.Send(from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: wal.NoProducerID,
			ProducerEpoch: wal.NoProducerEpoch, Error: e, ActiveController: proto.NoController})
	case proto.AddPartitionsToTxn:
		env.Send(from, proto.AddPartitionsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: id, Error: e})
	case proto.AddOffsetsToTxn:
		env.Send(from, proto.AddOffsetsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: id, Error: e})
	case proto.EndTxn:
		env.Send(from, proto.EndTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: id, Error: e,
			ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch})
	}
}

func txnRequestID(msg sim.Message) string {
	switch m := msg.(type) {
	case proto.InitProducerID:
		return m.TransactionalID
	case proto.AddPartitionsToTxn:
		return m.TransactionalID
	case proto.AddOffsetsToTxn:
		return m.TransactionalID
	case proto.EndTxn:
		return m.TransactionalID
	}
	return ""
}

// TxnCoordinator is a read-only view of the transaction coordinator this broker runs for a
// transaction state partition, or nil.
func (b *Broker) TxnCoordinator(partition int32) *txn.Coordinator {
	if hc := b.txnCoordinatorOf(partition); hc != nil {
		return hc.coord
	}
	return nil
}

// Transactions lists the transactional ids of every transaction coordinator this broker
// runs, sorted by id, as copies for views.
func (b *Broker) Transactions() []txn.Txn {
	var out []txn.Txn
	for _, hc := range b.txnCoords.coords {
		out = append(out, hc.coord.Transactions()...)
	}
	slices.SortFunc(out, func(a, b txn.Txn) int { return strings.Compare(a.ID, b.ID) })
	return out
}
