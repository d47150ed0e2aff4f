package broker_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/model/wal"
	"mqsim/sim"
)

// shareWorld is a three-broker cluster with topic t (one partition, rf 3), the share-group
// state topic, and a fake share consumer p1 that sends raw requests (txnProducer).
type shareWorld struct {
	t       *testing.T
	cfg     proto.Config
	w       *sim.World
	brokers []sim.NodeID
	pn      sim.NodeID
	p       *txnProducer
	group   string
	corr    int64
	epochs  map[string]int32 // member -> next session epoch, per leader it last talked to
}

func newShareWorld(t *testing.T, cfg proto.Config, records int) *shareWorld {
	t.Helper()
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	if cfg.Share.RecordLockDuration == proto.DefaultShareConfig().RecordLockDuration {
		cfg.Share.RecordLockDuration = 2 * time.Second
	}
	cfg.Share.AutoOffsetReset = "earliest"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w := sim.NewWorld(sim.DefaultConfig(1))
	sw := &shareWorld{t: t, cfg: cfg, w: w, epochs: map[string]int32{}}
	ctl := w.MustAddNode("ctl", func() sim.Node { return controller.New(cfg) })
	for i := 1; i <= cfg.Brokers; i++ {
		sw.brokers = append(sw.brokers, w.MustAddNode(controller.BrokerName(i), func() sim.Node { return broker.New(cfg, "ctl") }))
	}
	sw.pn = w.MustAddNode("p1", func() sim.Node { return &txnProducer{} })
	sw.p = w.Node(sw.pn).(*txnProducer)
	w.RunFor(100 * time.Millisecond)
	topic := cfg.Topic
	topic.Name = "t"
	w.Inject(ctl, proto.CreateTopic{CorrelationID: 1, Config: topic}, 0)
	w.Inject(ctl, proto.CreateTopic{CorrelationID: 2, Config: cfg.ShareGroupStateTopicConfig()}, 0)
	w.RunFor(2 * time.Second)
	// A group whose share coordinator is not t/0's leader, so that a test can cut one
	// from the other.
	for i := 1; sw.group == ""; i++ {
		g := fmt.Sprintf("g%d", i)
		if sw.coordinatorOf(g) != sw.leader() {
			sw.group = g
		}
	}
	for i := 0; i < records; i++ {
		sw.send(sw.leader(), proto.ProduceRequest{CorrelationID: 1, TP: t0, Acks: proto.AcksAll, Timeout: 5 * time.Second,
			Batch: wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence,
				Records: []wal.Record{{Value: []byte(fmt.Sprint(i))}}}})
	}
	return sw
}

func (sw *shareWorld) broker(name string) *broker.Broker {
	id, _ := sw.w.Lookup(name)
	return sw.w.Node(id).(*broker.Broker)
}

// leader is t/0's leader.
func (sw *shareWorld) leader() string {
	for _, id := range sw.brokers {
		if b, ok := sw.w.Node(id).(*broker.Broker); ok && sw.w.Status(id) == sim.Up {
			if r, ok := b.Replica(t0); ok && r.Leader {
				return sw.w.Name(id)
			}
		}
	}
	sw.t.Fatal("t/0 has no leader")
	return ""
}

// coordinatorOf is the leader of the group's share-group state partition for t/0.
func (sw *shareWorld) coordinatorOf(group string) string {
	tp := proto.TP{Topic: proto.ShareGroupStateTopic, Partition: share.PartitionFor(proto.SharePartitionKey{Group: group, TP: t0}, sw.cfg.Share.StateTopicPartitions)}
	for _, id := range sw.brokers {
		if sw.w.Status(id) != sim.Up {
			continue
		}
		if r, ok := sw.w.Node(id).(*broker.Broker).Replica(tp); ok && r.Leader {
			return sw.w.Name(id)
		}
	}
	sw.t.Fatalf("%s has no leader", tp)
	return ""
}

func (sw *shareWorld) key() proto.SharePartitionKey {
	return proto.SharePartitionKey{Group: sw.group, TP: t0}
}

func (sw *shareWorld) send(to string, msg sim.Message) {
	sw.p.got = nil
	sw.w.Inject(sw.pn, sendTo{to, msg}, 0)
	sw.w.RunFor(500 * time.Millisecond)
}

// answer is the one answer of type T the last send got, if any.
func answer[T any](sw *shareWorld) (T, bool) {
	var zero T
	for _, m := range sw.p.got {
		if a, ok := m.(T); ok {
			return a, true
		}
	}
	return zero, false
}

// fetch sends member's ShareFetch of t/0 to the leader, acks piggybacked, and returns
// the answer.
func (sw *shareWorld) fetch(member string, max int, acks ...proto.AckBatch) proto.ShareFetchResponse {
	sw.t.Helper()
	m := proto.ShareFetch{CorrelationID: sw.next(), Group: sw.group, MemberID: member, SessionEpoch: sw.epochs[member],
		Partitions: []proto.TP{t0}, MaxRecords: max}
	if len(acks) > 0 {
		m.Acks = []proto.PartitionAcks{{TP: t0, Batches: acks}}
	}
	sw.epochs[member]++
	sw.send(sw.leader(), m)
	r, ok := answer[proto.ShareFetchResponse](sw)
	if !ok {
		sw.t.Fatalf("%v: no answer", m)
	}
	return r
}

// acknowledge sends member's ShareAcknowledge of t/0 to the leader.
func (sw *shareWorld) acknowledge(member string, acks ...proto.AckBatch) (proto.ShareAcknowledgeResponse, bool) {
	m := proto.ShareAcknowledge{CorrelationID: sw.next(), Group: sw.group, MemberID: member, SessionEpoch: sw.epochs[member],
		Acks: []proto.PartitionAcks{{TP: t0, Batches: acks}}}
	sw.epochs[member]++
	sw.send(sw.leader(), m)
	return answer[proto.ShareAcknowledgeResponse](sw)
}

func (sw *shareWorld) next() int64 { sw.corr++; return sw.corr }

func acquired(r proto.ShareFetchResponse) []proto.AcquiredRange {
	if len(r.Partitions) == 0 {
		return nil
	}
	return r.Partitions[0].Acquired
}

func rng(first, last int64, count int16) proto.AcquiredRange {
	return proto.AcquiredRange{First: first, Last: last, DeliveryCount: count}
}

// m1's record is not given to m2 until m1's lock expires; then m2 gets it with delivery
// count 2. The batches answered hold the acquired offsets.
func TestShareLockExpiryRedelivers(t *testing.T) {
	sw := newShareWorld(t, proto.DefaultConfig(), 2)
	r := sw.fetch("m1", 1)
	if got := acquired(r); !reflect.DeepEqual(got, []proto.AcquiredRange{rng(0, 0, 1)}) || len(r.Partitions[0].Batches) != 1 || r.Partitions[0].Batches[0].BaseOffset != 0 {
		t.Fatalf("m1 got %+v", r.Partitions)
	}
	if got := acquired(sw.fetch("m2", 10)); !reflect.DeepEqual(got, []proto.AcquiredRange{rng(1, 1, 1)}) {
		t.Fatalf("m2 got %v, want 1 only", got)
	}
	if got := acquired(sw.fetch("m2", 10)); got != nil {
		t.Fatalf("m2 got %v while m1 holds 0", got)
	}
	sw.w.RunFor(2 * time.Second) // m1's lock (2s) ends, and m2's on 1
	if got := acquired(sw.fetch("m2", 10)); !reflect.DeepEqual(got, []proto.AcquiredRange{rng(0, 1, 2)}) {
		t.Fatalf("after the locks expired m2 got %v, want 0 (m1's) and 1 (its own) with delivery count 2", got)
	}
	// m1's late accept is refused: it no longer holds 0.
	if a, ok := sw.acknowledge("m1", proto.AckBatch{First: 0, Last: 0, Type: proto.AckAccept}); !ok || a.Partitions[0].Error != proto.InvalidRecordState {
		t.Fatalf("m1's accept after its lock ended: %v %v", a, ok)
	}
	// Sessions: a fetch with a skipped epoch, and one from a member without a session.
	sw.epochs["m2"]++
	if r := sw.fetch("m2", 1); r.Error != proto.InvalidShareSessionEpoch {
		t.Fatalf("skipped epoch: %v", r)
	}
	sw.epochs["m3"] = 4
	if r := sw.fetch("m3", 1); r.Error != proto.ShareSessionNotFound {
		t.Fatalf("no session: %v", r)
	}
}

// An accept is answered only once the share coordinator replicated its state record: with
// a follower of the coordinator's partition held back nothing comes back; once it
// catches up the answer does, and the SPSO moved past the record.
func TestShareAckAnsweredOnceReplicated(t *testing.T) {
	sw := newShareWorld(t, proto.DefaultConfig(), 2)
	sw.fetch("m1", 1)
	// The third broker, neither t/0's leader nor the coordinator, follows the state
	// partition: with its links to the coordinator clogged it stays in the ISR (for
	// replica.lag.time.max.ms) without fetching, so the HW stays.
	cid, _ := sw.w.Lookup(sw.coordinatorOf(sw.group))
	lid, _ := sw.w.Lookup(sw.leader())
	var x sim.NodeID
	for _, id := range sw.brokers {
		if id != cid && id != lid {
			x = id
		}
	}
	sw.w.Clog(cid, x)
	sw.w.Clog(x, cid)
	m := proto.ShareAcknowledge{CorrelationID: sw.next(), Group: sw.group, MemberID: "m1", SessionEpoch: sw.epochs["m1"],
		Acks: []proto.PartitionAcks{{TP: t0, Batches: []proto.AckBatch{{First: 0, Last: 0, Type: proto.AckAccept}}}}}
	sw.epochs["m1"]++
	sw.send(sw.leader(), m)
	if a, ok := answer[proto.ShareAcknowledgeResponse](sw); ok {
		t.Fatalf("answered before the state record was replicated: %v", a)
	}
	if p := sw.broker(sw.leader()).SharePartition(sw.key()); p.Start() != 0 {
		t.Fatalf("SPSO %d before the write, want 0", p.Start())
	}
	sw.p.got = nil
	sw.w.Unclog(cid, x)
	sw.w.Unclog(x, cid)
	sw.w.RunFor(2 * time.Second)
	a, ok := answer[proto.ShareAcknowledgeResponse](sw)
	if !ok || a.Partitions[0].Error != proto.None {
		dumpShare(t, sw.w)
		t.Fatalf("after the heal: %v %v", a, ok)
	}
	if p := sw.broker(sw.leader()).SharePartition(sw.key()); p.Start() != 1 {
		t.Fatalf("SPSO %d after the accept, want 1", p.Start())
	}
}

// Reject archives at once; release makes the record available again until the delivery
// count limit (2 here) archives it. The SPSO moves past both.
func TestShareRejectAndDeliveryLimitArchive(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Share.DeliveryCountLimit = 2
	sw := newShareWorld(t, cfg, 3)
	if got := acquired(sw.fetch("m1", 2)); !reflect.DeepEqual(got, []proto.AcquiredRange{rng(0, 1, 1)}) {
		t.Fatalf("got %v", got)
	}
	r := sw.fetch("m1", 1, proto.AckBatch{First: 0, Last: 0, Type: proto.AckReject}, proto.AckBatch{First: 1, Last: 1, Type: proto.AckRelease})
	if r.Partitions[0].AckError != proto.None || !reflect.DeepEqual(acquired(r), []proto.AcquiredRange{rng(1, 1, 2)}) {
		t.Fatalf("after reject 0 and release 1: %+v, want 1 again with delivery count 2", r.Partitions)
	}
	r = sw.fetch("m1", 5, proto.AckBatch{First: 1, Last: 1, Type: proto.AckRelease})
	if !reflect.DeepEqual(acquired(r), []proto.AcquiredRange{rng(2, 2, 1)}) {
		t.Fatalf("after releasing 1 at the limit: %v, want 2 only", acquired(r))
	}
	p := sw.broker(sw.leader()).SharePartition(sw.key())
	if p.Start() != 2 {
		t.Fatalf("SPSO %d, want 2 (0 rejected, 1 archived at the limit)", p.Start())
	}
	st := sw.broker(sw.coordinatorOf(sw.group)).ShareStates(share.PartitionFor(sw.key(), sw.cfg.Share.StateTopicPartitions))
	if len(st) != 1 || st[0].State.StartOffset != 2 {
		t.Fatalf("persisted %+v, want SPSO 2", st)
	}
}

// failover acquires 0-2 for m1, accepts 0 (answered), then crashes t/0's leader: the
// new leader reads the persisted state. It returns what m2 then acquires.
func failover(t *testing.T, cfg proto.Config) (proto.Error, []proto.AcquiredRange) {
	sw := newShareWorld(t, cfg, 3)
	sw.fetch("m1", 3)
	old := sw.leader()
	oldID, _ := sw.w.Lookup(old)
	cid, _ := sw.w.Lookup(sw.coordinatorOf(sw.group))
	if cfg.Bugs.ShareAckBeforePersist {
		// The write cannot reach the coordinator: with the bug the accept is answered
		// anyway.
		sw.w.Cut(oldID, cid)
		sw.w.Cut(cid, oldID)
	}
	a, ok := sw.acknowledge("m1", proto.AckBatch{First: 0, Last: 0, Type: proto.AckAccept})
	if !ok {
		t.Fatal("the accept was not answered")
	}
	sw.w.Crash(oldID)
	sw.w.Heal()
	sw.w.RunFor(8 * time.Second)
	if sw.leader() == old {
		t.Fatal("no failover")
	}
	r := sw.fetch("m2", 10)
	if r.Error != proto.None || r.Partitions[0].Error != proto.None {
		t.Fatalf("m2 at the new leader: %+v", r)
	}
	return a.Partitions[0].Error, acquired(r)
}

// After a failover the new leader does not redeliver the accepted record; m1's
// acquired-but-unacknowledged ones come back (the interrupted delivery is not counted:
// acquisition is never persisted).
func TestShareLeaderFailoverKeepsAccepted(t *testing.T) {
	ack, got := failover(t, proto.DefaultConfig())
	if ack != proto.None {
		t.Fatalf("accept: %v", ack)
	}
	if !reflect.DeepEqual(got, []proto.AcquiredRange{rng(1, 2, 1)}) {
		t.Fatalf("m2 got %v at the new leader, want 1-2", got)
	}
}

// The planted bug share-ack-before-persist answers the accept before its write lands, and
// the new leader delivers the accepted record again.
func TestShareAckBeforePersistBugRedeliversAccepted(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Bugs.ShareAckBeforePersist = true
	ack, got := failover(t, cfg)
	if ack != proto.None {
		t.Fatalf("accept: %v", ack)
	}
	if !reflect.DeepEqual(got, []proto.AcquiredRange{rng(0, 2, 1)}) {
		t.Fatalf("m2 got %v at the new leader, want 0-2: the accepted 0 again", got)
	}
}

func dumpShare(t *testing.T, w *sim.World) {
	for _, e := range w.Trace().Events() {
		if len(e.Kind) > 5 && e.Kind[:5] == "share" || e.Kind == "hw" {
			t.Logf("%s %s %s %s", e.Time, e.Node, e.Kind, e.Detail)
		}
	}
}

// A state write that cannot reach the share coordinator fails after
// share.coordinator.write.timeout.ms (5s): the accept is answered REQUEST_TIMED_OUT and
// rolled back, the record still m1's. After the heal m1 accepts it again. A closing
// ShareAcknowledge (session epoch -1) then releases what m1 still holds.
func TestShareWriteTimeoutRollsBackAndCloseReleases(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Share.RecordLockDuration = time.Minute // outlives the write timeout and the heal
	sw := newShareWorld(t, cfg, 2)
	sw.fetch("m1", 2)
	lid, _ := sw.w.Lookup(sw.leader())
	cid, _ := sw.w.Lookup(sw.coordinatorOf(sw.group))
	sw.w.Cut(lid, cid)
	sw.w.Cut(cid, lid)
	m := proto.ShareAcknowledge{CorrelationID: sw.next(), Group: sw.group, MemberID: "m1", SessionEpoch: sw.epochs["m1"],
		Acks: []proto.PartitionAcks{{TP: t0, Batches: []proto.AckBatch{{First: 0, Last: 0, Type: proto.AckAccept}}}}}
	sw.epochs["m1"]++
	sw.send(sw.leader(), m)
	sw.w.RunFor(4 * time.Second)
	if _, ok := answer[proto.ShareAcknowledgeResponse](sw); ok {
		t.Fatal("answered before the write timed out")
	}
	sw.w.RunFor(time.Second)
	a, ok := answer[proto.ShareAcknowledgeResponse](sw)
	if !ok || a.Partitions[0].Error != proto.RequestTimedOut {
		t.Fatalf("after the write timeout: %v %v, want REQUEST_TIMED_OUT", a, ok)
	}
	p := sw.broker(sw.leader()).SharePartition(sw.key())
	if st, _, member := p.Record(0); st != proto.Acquired || member != "m1" || p.Start() != 0 {
		t.Fatalf("after the rollback 0 is %s by %q, SPSO %d", st, member, p.Start())
	}
	sw.w.Heal()
	sw.w.RunFor(31 * time.Second) // the leader's fetches of the state partition, dropped by the cut, time out and resume
	if a, ok := sw.acknowledge("m1", proto.AckBatch{First: 0, Last: 0, Type: proto.AckAccept}); !ok || a.Partitions[0].Error != proto.None {
		t.Fatalf("accept after the heal: %v %v", a, ok)
	}
	sw.epochs["m1"] = proto.ShareSessionClose
	if a, ok := sw.acknowledge("m1"); !ok || a.Error != proto.None {
		t.Fatalf("close: %v %v", a, ok)
	}
	sw.w.RunFor(time.Second)
	if st, c, _ := p.Record(1); st != proto.Available || c != 1 || p.Start() != 1 {
		t.Fatalf("after the close 1 is %s (count %d), SPSO %d: want available", st, c, p.Start())
	}
}

// The share coordinator crashes while a write is due: the persister retries until the
// state partition's new leader (found in the metadata) takes it, within the write timeout.
func TestShareWriteFollowsTheCoordinator(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Share.RecordLockDuration = time.Minute
	sw := newShareWorld(t, cfg, 1)
	sw.fetch("m1", 1)
	old := sw.coordinatorOf(sw.group)
	oid, _ := sw.w.Lookup(old)
	sw.w.Crash(oid)
	m := proto.ShareAcknowledge{CorrelationID: sw.next(), Group: sw.group, MemberID: "m1", SessionEpoch: sw.epochs["m1"],
		Acks: []proto.PartitionAcks{{TP: t0, Batches: []proto.AckBatch{{First: 0, Last: 0, Type: proto.AckAccept}}}}}
	sw.epochs["m1"]++
	sw.send(sw.leader(), m)
	sw.w.RunFor(4500 * time.Millisecond)
	a, ok := answer[proto.ShareAcknowledgeResponse](sw)
	if !ok || a.Partitions[0].Error != proto.None {
		t.Fatalf("accept while the coordinator moved: %v %v", a, ok)
	}
	if now := sw.coordinatorOf(sw.group); now == old {
		t.Fatalf("the coordinator did not move from %s", old)
	}
}

// A copy of a request the network duplicated is dropped, not answered: a duplicated
// ShareFetch carrying an accept would otherwise be answered INVALID_SHARE_SESSION_EPOCH
// under the original's correlation id before the accept was persisted, and the member
// would take its accept for refused while the leader applied it (the share swarm's seed
// 115). The same for a closing ShareAcknowledge, whose session is closed by the time its
// copy arrives.
func TestShareDuplicatedRequestsAreAnsweredOnce(t *testing.T) {
	sw := newShareWorld(t, proto.DefaultConfig(), 2)
	sw.fetch("m1", 1) // acquires 0
	twice := func(m sim.Message) []sim.Message {
		sw.p.got = nil
		sw.w.Inject(sw.pn, sendTo{sw.leader(), m}, 0)
		sw.w.Inject(sw.pn, sendTo{sw.leader(), m}, 0)
		sw.w.RunFor(time.Second)
		return sw.p.got
	}
	f := proto.ShareFetch{CorrelationID: sw.next(), Group: sw.group, MemberID: "m1", SessionEpoch: sw.epochs["m1"], Partitions: []proto.TP{t0}, MaxRecords: 1,
		Acks: []proto.PartitionAcks{{TP: t0, Batches: []proto.AckBatch{{First: 0, Last: 0, Type: proto.AckAccept}}}}}
	sw.epochs["m1"]++
	got := twice(f)
	if len(got) != 1 {
		t.Fatalf("a duplicated ShareFetch got %d answers, want 1: %v", len(got), got)
	}
	if r := got[0].(proto.ShareFetchResponse); r.Error != proto.None || r.Partitions[0].AckError != proto.None || !reflect.DeepEqual(acquired(r), []proto.AcquiredRange{rng(1, 1, 1)}) {
		t.Fatalf("the answer: %+v, want the accept applied and 1 acquired", r)
	}
	c := proto.ShareAcknowledge{CorrelationID: sw.next(), Group: sw.group, MemberID: "m1", SessionEpoch: proto.ShareSessionClose,
		Acks: []proto.PartitionAcks{{TP: t0, Batches: []proto.AckBatch{{First: 1, Last: 1, Type: proto.AckAccept}}}}}
	got = twice(c)
	if len(got) != 1 || got[0].(proto.ShareAcknowledgeResponse).Partitions[0].Error != proto.None {
		t.Fatalf("a duplicated closing ShareAcknowledge got %v, want one answer without error", got)
	}
	if p := sw.broker(sw.leader()).SharePartition(sw.key()); p.Start() != 2 {
		t.Fatalf("SPSO %d, want 2: both accepts applied", p.Start())
	}
	// A member whose session closed opens a new one with a later request.
	sw.epochs["m1"] = 0
	if r := sw.fetch("m1", 1); r.Error != proto.None {
		t.Fatalf("reopening after close: %v", r)
	}
}
