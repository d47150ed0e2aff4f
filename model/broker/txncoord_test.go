package broker_test

import (
	"slices"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/model/wal"
	"mqsim/sim"
)

// txnProducer stands in for a transactional producer: it sends what it is told to the
// node it is told, and keeps every answer.
type txnProducer struct{ got []sim.Message }

type sendTo struct {
	to  string
	msg sim.Message
}

func (p *txnProducer) Start(env *sim.Env)                   {}
func (p *txnProducer) Timer(env *sim.Env, tag sim.TimerTag) {}
func (p *txnProducer) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if m, ok := msg.(sendTo); ok {
		to, _ := env.Lookup(m.to)
		env.Send(to, m.msg)
		return
	}
	p.got = append(p.got, msg)
}

// last is the producer's latest answer.
func (p *txnProducer) last(t *testing.T) sim.Message {
	t.Helper()
	if len(p.got) == 0 {
		t.Fatal("the producer got no answer")
	}
	return p.got[len(p.got)-1]
}

// A transaction through the hosted coordinator, with the partition side stood in for by the
// test: FindCoordinator (before and after the state topic exists), NOT_COORDINATOR from a
// broker that does not host the id, InitProducerId, AddPartitionsToTxn, EndTxn, the
// WriteTxnMarkers to t/0's leader with the coordinator epoch, and after the coordinator
// crashes, the new leader of its partition resuming the markers, whose answer completes
// the commit.
func TestHostedTxnCoordinatorCommitsAndResumesAfterFailover(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	wc := sim.DefaultConfig(1)
	wc.TraceMessages = true
	w := sim.NewWorld(wc)
	ctl := w.MustAddNode("ctl", func() sim.Node { return controller.New(cfg) })
	var brokers []sim.NodeID
	for i := 1; i <= cfg.Brokers; i++ {
		brokers = append(brokers, w.MustAddNode(controller.BrokerName(i), func() sim.Node { return broker.New(cfg, "ctl") }))
	}
	pn := w.MustAddNode("p1", func() sim.Node { return &txnProducer{} })
	p := w.Node(pn).(*txnProducer)
	w.RunFor(100 * time.Millisecond)
	topic := cfg.Topic
	topic.Name = "t"
	w.Inject(ctl, proto.CreateTopic{CorrelationID: 1, Config: topic}, 0)
	w.RunFor(time.Second)
	send := func(to string, msg sim.Message) {
		w.Inject(pn, sendTo{to, msg}, 0)
		w.RunFor(time.Second)
	}

	send("b1", proto.FindCoordinator{CorrelationID: 1, Group: "tx", KeyType: proto.TransactionCoordinator})
	if r := p.last(t).(proto.FindCoordinatorResponse); r.Error != proto.CoordinatorNotAvailable {
		t.Fatalf("before the state topic exists: %v, want COORDINATOR_NOT_AVAILABLE", r)
	}
	w.Inject(ctl, proto.CreateTopic{CorrelationID: 2, Config: cfg.TransactionStateTopicConfig()}, 0)
	w.RunFor(2 * time.Second)
	send("b1", proto.FindCoordinator{CorrelationID: 2, Group: "tx", KeyType: proto.TransactionCoordinator})
	found := p.last(t).(proto.FindCoordinatorResponse)
	part := txn.PartitionFor("tx", cfg.Txn.StateTopicPartitions)
	stateTP := proto.TP{Topic: proto.TransactionStateTopic, Partition: part}
	if found.Error != proto.None || found.KeyType != proto.TransactionCoordinator {
		t.Fatalf("FindCoordinator: %v", found)
	}
	coord := w.Name(found.Coordinator)
	lead := w.Node(found.Coordinator).(*broker.Broker)
	if r, _ := lead.Replica(stateTP); !r.Leader {
		t.Fatalf("%s named coordinator of tx but does not lead %s", coord, stateTP)
	}
	other := "b1"
	if coord == "b1" {
		other = "b2"
	}

	init := proto.InitProducerID{CorrelationID: 3, TransactionalID: "tx", TransactionTimeout: time.Minute,
		ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch}
	send(other, init)
	if r := p.last(t).(proto.InitProducerIDResponse); r.Error != proto.NotCoordinator {
		t.Fatalf("InitProducerId at %s, which does not host tx: %v, want NOT_COORDINATOR", other, r)
	}
	send(coord, init)
	granted := p.last(t).(proto.InitProducerIDResponse)
	wantPID := txn.ProducerIDBase + int64(part)*txn.ProducerIDsPerPartition
	if granted.Error != proto.None || granted.ProducerID != wantPID || granted.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %v, want pid=%d epoch=0", granted, wantPID)
	}
	send(coord, proto.AddPartitionsToTxn{CorrelationID: 4, TransactionalID: "tx", ProducerID: wantPID, ProducerEpoch: 0, Partitions: []proto.TP{{Topic: "t"}}})
	if r := p.last(t).(proto.AddPartitionsToTxnResponse); r.Error != proto.None {
		t.Fatalf("AddPartitionsToTxn: %v", r)
	}
	var tLeader sim.NodeID = -1
	for _, id := range brokers {
		if r, _ := w.Node(id).(*broker.Broker).Replica(proto.TP{Topic: "t"}); r.Leader {
			tLeader = id
		}
	}
	// t/0's leader appends the marker, but its answer is lost: the transaction stays in
	// PrepareCommit until a coordinator hears it.
	w.DropNextKind(tLeader, found.Coordinator, "WriteTxnMarkersResponse", 1)
	mark := w.Trace().Len()
	send(coord, proto.EndTxn{CorrelationID: 5, TransactionalID: "tx", ProducerID: wantPID, ProducerEpoch: 0, Commit: true})
	if r := p.last(t).(proto.EndTxnResponse); r.Error != proto.None || r.ProducerEpoch != 1 {
		t.Fatalf("EndTxn: %v, want NONE with epoch 1", r)
	}
	markers := markersSent(w, mark)
	if len(markers) != 1 || markers[0].to != tLeader || !markers[0].msg.Commit || markers[0].msg.ProducerEpoch != 1 ||
		!slices.Equal(markers[0].msg.Partitions, []proto.TP{{Topic: "t"}}) {
		t.Fatalf("markers sent: %+v, want one COMMIT epoch 1 for t/0 to its leader %s", markers, w.Name(tLeader))
	}
	stateReplica, _ := lead.Replica(stateTP)
	if markers[0].msg.CoordinatorEpoch != stateReplica.LeaderEpoch {
		t.Errorf("coordinator epoch %d, want the leader epoch %d of %s", markers[0].msg.CoordinatorEpoch, stateReplica.LeaderEpoch, stateTP)
	}
	if x, _ := lead.TxnCoordinator(part).Transaction("tx"); x.State != txn.PrepareCommit {
		t.Fatalf("before any marker is answered tx is %v, want PrepareCommit", x.State)
	}

	// The coordinator crashes: the new leader of its partition loads PrepareCommit and
	// sends the markers again.
	w.Crash(found.Coordinator)
	mark = w.Trace().Len()
	w.RunFor(15 * time.Second)
	resumed := markersSent(w, mark)
	if len(resumed) == 0 {
		t.Fatalf("no markers resumed after the coordinator crashed:\n%s", dump(w))
	}
	newCoord := w.Node(resumed[0].from).(*broker.Broker)
	w.Inject(resumed[0].from, proto.WriteTxnMarkersResponse{CorrelationID: resumed[0].msg.CorrelationID, ProducerID: wantPID,
		Results: []proto.MarkerResult{{TP: proto.TP{Topic: "t"}, Error: proto.None}}}, 0)
	w.RunFor(2 * time.Second)
	x, _ := newCoord.TxnCoordinator(part).Transaction("tx")
	if x.State != txn.CompleteCommit || x.Epoch != 1 {
		t.Fatalf("after the resumed marker is answered tx is %+v, want CompleteCommit at epoch 1", x)
	}
	if all := newCoord.Transactions(); len(all) != 1 || all[0].ID != "tx" || all[0].State != txn.CompleteCommit {
		t.Errorf("the broker's view of its transactions: %+v", all)
	}
}

type markerSend struct {
	from, to sim.NodeID
	msg      proto.WriteTxnMarkers
}

// markersSent lists the WriteTxnMarkers sent since trace index i.
func markersSent(w *sim.World, i int) []markerSend {
	var out []markerSend
	for _, e := range w.Trace().Since(i) {
		s, ok := e.Data.(sim.Sent)
		if !ok {
			continue
		}
		if m, ok := s.Msg.(proto.WriteTxnMarkers); ok {
			from, _ := w.Lookup(e.Node)
			to, _ := w.Lookup(e.Peer)
			out = append(out, markerSend{from, to, m})
		}
	}
	return out
}
