package broker

import (
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

// txnLife loads, unloads and advances the transaction coordinators (hosting.go).
var txnLife = coordinatorLife[*txn.Coordinator]{
	topic: proto.TransactionStateTopic,
	load: func(b *Broker, env *sim.Env, r *replica) *txn.Coordinator {
		return txn.Load(txnHost{b, env, r}, b.cfg, r.tp.Partition, r.state.LeaderEpoch, r.log)
	},
	unload: func(b *Broker, env *sim.Env, hc *hosted[*txn.Coordinator], why string) {
		hc.coord.Unload(txnHost{b, env, hc.r}, why)
	},
	committed: func(b *Broker, env *sim.Env, hc *hosted[*txn.Coordinator]) {
		hc.coord.Committed(txnHost{b, env, hc.r}, hc.r.hw)
	},
}

// tendTxnCoordinators runs after every message and timer: it loads a coordinator for each
// transaction state partition this broker has come to lead, unloads those it no longer
// leads, and passes each the high watermark of its partition. A cluster without the topic
// has nothing here.
func (b *Broker) tendTxnCoordinators(env *sim.Env) { tendHosted(b, env, &b.txnCoords, &txnLife) }

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
		if hc := b.txnCoords.of(txn.PartitionFor(id, n)); hc != nil && hc.r.isLeader {
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
	if hc := b.txnCoords.of(partition); hc != nil {
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
