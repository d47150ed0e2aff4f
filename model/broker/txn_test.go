package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The partition side of transactions, driven by hand: a "tx" node sends what the test
// tells it (produces, markers, fetches) and keeps every answer, typed.

type sendCmd struct {
	to  string
	msg sim.Message
}

type txClient struct{ got []sim.Message }

func (c *txClient) Start(env *sim.Env)                   {}
func (c *txClient) Timer(env *sim.Env, tag sim.TimerTag) {}
func (c *txClient) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if m, ok := msg.(sendCmd); ok {
		to, _ := env.Lookup(m.to)
		env.Send(to, m.msg)
		return
	}
	c.got = append(c.got, msg)
}

type txnCluster struct {
	*testCluster
	tx sim.NodeID
}

var t0 = proto.TP{Topic: "t"}

// newTxnCluster is a three-broker cluster with topic t (one partition, rf 3, led by b1)
// and a one-partition __transaction_state.
func newTxnCluster(t *testing.T, cfg proto.Config) *txnCluster {
	t.Helper()
	cfg.Txn.StateTopicPartitions = 1
	wcfg := sim.DefaultConfig(1)
	wcfg.TraceMessages = true // TestProduceVerification reads the leader's AddPartitionsToTxn
	tc := &txnCluster{testCluster: newClusterIn(t, cfg, wcfg)}
	tc.tx = tc.w.MustAddNode("tx", func() sim.Node { return &txClient{} })
	tc.w.Inject(tc.ctl, proto.CreateTopic{CorrelationID: 2, Config: cfg.TransactionStateTopicConfig()}, 0)
	tc.w.RunFor(time.Second)
	if !tc.replica(t, 0).Leader {
		t.Fatalf("b1 does not lead t/0\n%s", dump(tc.w))
	}
	return tc
}

func (tc *txnCluster) send(to string, msg sim.Message) {
	tc.w.Inject(tc.tx, sendCmd{to: to, msg: msg}, 0)
	tc.w.RunFor(500 * time.Millisecond)
}

// take returns and forgets the answers of type M.
func take[M sim.Message](tc *txnCluster) []M {
	c := tc.w.Node(tc.tx).(*txClient)
	var out []M
	kept := c.got[:0]
	for _, m := range c.got {
		if x, ok := m.(M); ok {
			out = append(out, x)
			continue
		}
		kept = append(kept, m)
	}
	c.got = kept
	return out
}

func txnBatch(pid int64, epoch int16, seq int32, vals ...string) wal.Batch {
	b := wal.Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Flags: wal.FlagTransactional}
	for _, v := range vals {
		b.Records = append(b.Records, wal.Record{Value: []byte(v)})
	}
	return b
}

func plainBatch(vals ...string) wal.Batch {
	b := wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence}
	for _, v := range vals {
		b.Records = append(b.Records, wal.Record{Value: []byte(v)})
	}
	return b
}

func produceReq(b wal.Batch) proto.ProduceRequest {
	return proto.ProduceRequest{CorrelationID: 1, TP: t0, Acks: proto.AcksAll, Timeout: 5 * time.Second, Batch: b, TransactionalID: "app"}
}

func markers(pid int64, epoch int16, commit bool, coordEpoch int32, tps ...proto.TP) proto.WriteTxnMarkers {
	return proto.WriteTxnMarkers{CorrelationID: 7, ProducerID: pid, ProducerEpoch: epoch, Commit: commit, CoordinatorEpoch: coordEpoch, Partitions: tps}
}

func fetchReq(iso proto.IsolationLevel, offset int64, wait time.Duration) proto.FetchRequest {
	return proto.FetchRequest{CorrelationID: 3, ReplicaID: proto.ConsumerReplica, TP: t0, FetchOffset: offset,
		LastFetchedEpoch: wal.UndefinedEpoch, CurrentLeaderEpoch: wal.UndefinedEpoch, MaxBytes: 1 << 20, MaxWait: wait, Isolation: iso}
}

// fetchText is what a consumer's fetch got: values (control records as their marker), the
// LSO and the aborted transactions.
func fetchText(r proto.FetchResponse) string {
	var vals []string
	for _, b := range r.Batches {
		for _, rec := range b.Records {
			if b.IsControl() {
				m, _ := wal.DecodeMarker(rec)
				vals = append(vals, m.Type.String())
				continue
			}
			vals = append(vals, string(rec.Value))
		}
	}
	return fmt.Sprintf("%v hw=%d lso=%d aborted=%v", vals, r.HighWatermark, r.LastStableOffset, r.AbortedTransactions)
}

func (tc *txnCluster) fetch(t *testing.T, iso proto.IsolationLevel, offset int64) string {
	t.Helper()
	tc.send("b1", fetchReq(iso, offset, 0))
	got := take[proto.FetchResponse](tc)
	if len(got) != 1 {
		t.Fatalf("%d fetch responses, want 1\n%s", len(got), dump(tc.w))
	}
	return fetchText(got[0])
}

func legacyTxnConfig() proto.Config {
	cfg := proto.DefaultConfig()
	cfg.Legacy.NoTxnVerification = true // append transactional batches unasked: no coordinator here
	return cfg
}

// readCommitted runs one aborted transaction beside a plain record and reports what
// read_committed and read_uncommitted consumers get before and after the ABORT.
func readCommitted(t *testing.T, cfg proto.Config) []string {
	tc := newTxnCluster(t, cfg)
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
	tc.send("b1", produceReq(plainBatch("x")))
	out := []string{
		"open committed: " + tc.fetch(t, proto.ReadCommitted, 0),
		"open uncommitted: " + tc.fetch(t, proto.ReadUncommitted, 0),
	}
	tc.send("b1", markers(1, 0, false, 0, t0))
	out = append(out, "marker: "+fmt.Sprint(take[proto.WriteTxnMarkersResponse](tc)),
		"aborted committed: "+tc.fetch(t, proto.ReadCommitted, 0),
		"aborted committed from 2: "+tc.fetch(t, proto.ReadCommitted, 2))
	v, _ := tc.w.Node(tc.brokers[0]).(*broker.Broker).Txns(t0)
	out = append(out, fmt.Sprintf("state: lso %d open %v aborted %v", v.LastStableOffset, v.Open, v.Aborted))
	return out
}

func TestReadCommittedReadsBelowLSOWithAbortedList(t *testing.T) {
	want := []string{
		"open committed: [] hw=2 lso=0 aborted=[]",
		"open uncommitted: [a x] hw=2 lso=0 aborted=[]",
		"marker: [WriteTxnMarkersResponse pid=1 [{t/0 NONE}]]",
		"aborted committed: [a x ABORT] hw=3 lso=3 aborted=[{1 0}]",
		"aborted committed from 2: [ABORT] hw=3 lso=3 aborted=[{1 0}]",
		"state: lso 3 open [] aborted [{1 0 2}]",
	}
	if got := readCommitted(t, legacyTxnConfig()); !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Each planted bug changes what the read_committed consumer gets.
func TestReadCommittedPlantedBugs(t *testing.T) {
	cfg := legacyTxnConfig()
	cfg.Bugs.LSOFromHW = true
	got := readCommitted(t, cfg)
	if got[0] != "open committed: [a x] hw=2 lso=2 aborted=[]" {
		t.Errorf("lso-from-hw: %q: the open transaction's record should be readable", got[0])
	}
	cfg = legacyTxnConfig()
	cfg.Bugs.ReadCommittedKeepsAborted = true
	got = readCommitted(t, cfg)
	if got[3] != "aborted committed: [a x ABORT] hw=3 lso=3 aborted=[]" {
		t.Errorf("read-committed-keeps-aborted: %q: the aborted list should be empty", got[3])
	}
}

func TestListOffsetsLatestReadCommittedIsLSO(t *testing.T) {
	tc := newTxnCluster(t, legacyTxnConfig())
	tc.send("b1", produceReq(plainBatch("x")))
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
	tc.send("b1", proto.ListOffsets{CorrelationID: 4, TP: t0, Latest: true, Isolation: proto.ReadCommitted})
	tc.send("b1", proto.ListOffsets{CorrelationID: 5, TP: t0, Latest: true})
	got := take[proto.ListOffsetsResponse](tc)
	if len(got) != 2 || got[0].Offset != 1 || got[1].Offset != 2 {
		t.Fatalf("ListOffsets latest: %v, want offset 1 (read_committed: the LSO) then 2 (the HW)", got)
	}
}

// A read_committed fetch parked at the LSO wakes when the marker moves the LSO, which it
// does once the marker is replicated (Kafka keeps an ended transaction unstable until the
// HW passes its marker): the response has the record and the marker, LSO and HW 2.
func TestParkedReadCommittedFetchWakesOnMarker(t *testing.T) {
	tc := newTxnCluster(t, legacyTxnConfig())
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
	tc.send("b1", fetchReq(proto.ReadCommitted, 0, 10*time.Second))
	if got := take[proto.FetchResponse](tc); len(got) != 0 {
		t.Fatalf("answered while the transaction is open: %v", got)
	}
	tc.send("b1", markers(1, 0, true, 0, t0))
	got := take[proto.FetchResponse](tc)
	if len(got) != 1 || fetchText(got[0]) != "[a COMMIT] hw=2 lso=2 aborted=[]" {
		t.Fatalf("after the COMMIT marker: %v\n%s", got, dump(tc.w))
	}
}

func TestTransactionalProduceEpochFencing(t *testing.T) {
	for _, fencing := range []bool{true, false} {
		cfg := legacyTxnConfig()
		cfg.Legacy.NoProducerFencing = !fencing
		tc := newTxnCluster(t, cfg)
		tc.send("b1", produceReq(txnBatch(1, 1, 0, "new")))
		tc.send("b1", produceReq(txnBatch(1, 0, 0, "zombie")))
		got := take[proto.ProduceResponse](tc)
		want := "[ProduceResponse t/0 offset=0 ProduceResponse t/0 INVALID_PRODUCER_EPOCH]"
		if !fencing {
			want = "[ProduceResponse t/0 offset=0 ProduceResponse t/0 offset=1]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("producer-fencing=%v: %v, want %s", fencing, got, want)
		}
	}
}

func TestWriteTxnMarkersChecks(t *testing.T) {
	tc := newTxnCluster(t, legacyTxnConfig())
	tc.send("b1", produceReq(txnBatch(1, 2, 0, "a")))
	// An older producer epoch, a follower, then the right marker.
	tc.send("b1", markers(1, 1, true, 3, t0))
	tc.send("b2", markers(1, 2, true, 3, t0))
	tc.send("b1", markers(1, 2, true, 3, t0))
	// A marker from an older coordinator, then one for a producer with nothing open.
	tc.send("b1", markers(1, 2, false, 2, t0))
	tc.send("b1", markers(9, 0, false, 0, t0))
	want := "[WriteTxnMarkersResponse pid=1 [{t/0 INVALID_PRODUCER_EPOCH}] WriteTxnMarkersResponse pid=1 [{t/0 NOT_LEADER_OR_FOLLOWER}] " +
		"WriteTxnMarkersResponse pid=1 [{t/0 NONE}] WriteTxnMarkersResponse pid=1 [{t/0 TRANSACTION_COORDINATOR_FENCED}] WriteTxnMarkersResponse pid=9 [{t/0 NONE}]]"
	if got := fmt.Sprint(take[proto.WriteTxnMarkersResponse](tc)); got != want {
		t.Fatalf("got  %s\nwant %s\n%s", got, want, dump(tc.w))
	}
	v, _ := tc.w.Node(tc.brokers[0]).(*broker.Broker).Txns(t0)
	if r := tc.replica(t, 0); r.LogEndOffset != 3 || len(v.Open) != 0 || len(v.Aborted) != 0 || v.LastStableOffset != 3 {
		t.Fatalf("LEO %d, txns %+v: want the COMMIT at 1 and pid 9's ABORT at 2, nothing open or aborted", r.LogEndOffset, v)
	}
}

// Every replica keeps the transaction state: the follower that becomes leader knows the
// open transaction and its LSO, and a restarted replica rebuilds it from its log.
func TestTxnStateSurvivesLeaderChangeAndRecovery(t *testing.T) {
	cfg := legacyTxnConfig()
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc := newTxnCluster(t, cfg)
	tc.send("b1", produceReq(plainBatch("x")))
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
	tc.send("b1", produceReq(plainBatch("y")))
	tc.w.Crash(tc.brokers[0])
	tc.w.RunFor(10 * time.Second)
	leader := -1
	for b := 1; b < 3; b++ {
		if tc.replica(t, b).Leader {
			leader = b
		}
	}
	if leader < 0 {
		t.Fatalf("no new leader\n%s", dump(tc.w))
	}
	if r := tc.replica(t, leader); r.LastStableOffset != 1 || r.HighWatermark != 3 {
		t.Fatalf("new leader b%d: LSO %d HW %d, want 1 and 3", leader+1, r.LastStableOffset, r.HighWatermark)
	}
	tc.send(fmt.Sprintf("b%d", leader+1), markers(1, 0, false, 1, t0))
	tc.w.Restart(tc.brokers[0])
	tc.w.RunFor(10 * time.Second)
	for b := 0; b < 3; b++ {
		v, _ := tc.w.Node(tc.brokers[b]).(*broker.Broker).Txns(t0)
		if fmt.Sprint(v.Open, v.Aborted) != "[] [{1 1 3}]" {
			t.Errorf("b%d: open %v aborted %v, want none open and pid 1's 1..3 aborted\n%s", b+1, v.Open, v.Aborted, dump(tc.w))
		}
	}
}

// KIP-890: the first transactional batch of a producer here waits for its coordinator's
// word; what the coordinator answers decides it.
func TestProduceVerification(t *testing.T) {
	for _, c := range []struct {
		answer proto.Error
		want   string
	}{
		{proto.None, "ProduceResponse t/0 offset=0"},
		{proto.ProducerFenced, "ProduceResponse t/0 PRODUCER_FENCED"},
		{proto.InvalidTxnState, "ProduceResponse t/0 INVALID_TXN_STATE"},
		{proto.NotCoordinator, "ProduceResponse t/0 NOT_ENOUGH_REPLICAS"},
	} {
		tc := newTxnCluster(t, proto.DefaultConfig())
		// The test plays the coordinator: the real one never hears the leader's question.
		for _, to := range tc.brokers {
			tc.w.DropNextKind(tc.brokers[0], to, "AddPartitionsToTxn", 1)
		}
		tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
		var asked []proto.AddPartitionsToTxn
		for _, e := range tc.w.Trace().Events() {
			if s, ok := e.Data.(sim.Sent); ok {
				if m, ok := s.Msg.(proto.AddPartitionsToTxn); ok {
					asked = append(asked, m)
				}
			}
		}
		if len(asked) != 1 || !asked[0].FromBroker || asked[0].TransactionalID != "app" || tc.replica(t, 0).LogEndOffset != 0 {
			t.Fatalf("want one AddPartitionsToTxn from the leader and nothing appended; asked %v\n%s", asked, dump(tc.w))
		}
		tc.w.Inject(tc.brokers[0], proto.AddPartitionsToTxnResponse{CorrelationID: asked[0].CorrelationID, TransactionalID: "app", Error: c.answer}, 0)
		tc.w.RunFor(time.Second)
		if got := fmt.Sprint(take[proto.ProduceResponse](tc)); got != "["+c.want+"]" {
			t.Errorf("coordinator said %s: %s, want %s", c.answer, got, c.want)
		}
		if c.answer != proto.None {
			continue
		}
		// The transaction is open here now: the next batch is appended unasked.
		tc.send("b1", produceReq(txnBatch(1, 0, 1, "b")))
		if got := fmt.Sprint(take[proto.ProduceResponse](tc)); got != "[ProduceResponse t/0 offset=1]" {
			t.Errorf("second batch: %s\n%s", got, dump(tc.w))
		}
	}
}

// Nobody answers: the produce is answered retriably after its timeout; before KIP-890
// (txn-verification=off) the batch is appended at once, which is how a late produce after
// an abort opens a transaction nobody will end.
func TestProduceVerificationTimeoutAndLegacy(t *testing.T) {
	tc := newTxnCluster(t, proto.DefaultConfig())
	for _, to := range tc.brokers {
		tc.w.DropNextKind(tc.brokers[0], to, "AddPartitionsToTxn", 1)
	}
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
	tc.w.RunFor(5 * time.Second)
	if got := fmt.Sprint(take[proto.ProduceResponse](tc)); got != "[ProduceResponse t/0 NOT_ENOUGH_REPLICAS]" {
		t.Errorf("unanswered verification: %s", got)
	}
	tc = newTxnCluster(t, legacyTxnConfig())
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "late")))
	if got := fmt.Sprint(take[proto.ProduceResponse](tc)); got != "[ProduceResponse t/0 offset=0]" {
		t.Errorf("legacy: %s", got)
	}
	if r := tc.replica(t, 0); r.LastStableOffset != 0 || r.HighWatermark != 1 {
		t.Errorf("legacy: LSO %d HW %d, want the hanging transaction to hold the LSO at 0", r.LastStableOffset, r.HighWatermark)
	}
}

// A marker to an offsets partition completes the transaction's offsets at the group
// coordinator once it is replicated: before it, OffsetFetch does not see them.
func TestMarkerOnOffsetsPartitionCommitsTxnOffsets(t *testing.T) {
	tc, coord := withOffsetsTopic(t, legacyTxnConfig())
	offsets := proto.TP{Topic: proto.OffsetsTopic}
	tc.send(coord, proto.TxnOffsetCommit{CorrelationID: 8, TransactionalID: "app", Group: "g", ProducerID: 5, Generation: -1,
		Offsets: []proto.PartitionOffset{{TP: t0, Offset: 3}}})
	fetch := proto.OffsetFetch{CorrelationID: 9, Group: "g", Partitions: []proto.TP{t0}}
	tc.send(coord, fetch)
	tc.send(coord, markers(5, 0, true, 0, offsets))
	tc.send(coord, fetch)
	got := fmt.Sprint(take[proto.TxnOffsetCommitResponse](tc), take[proto.OffsetFetchResponse](tc), take[proto.WriteTxnMarkersResponse](tc))
	want := "[TxnOffsetCommitResponse g NONE] [OffsetFetchResponse g [t/0@-1] OffsetFetchResponse g [t/0@3]] [WriteTxnMarkersResponse pid=5 [{__consumer_offsets/0 NONE}]]"
	if got != want {
		t.Fatalf("got  %s\nwant %s\n%s", got, want, dump(tc.w))
	}
}

// withOffsetsTopic adds a one-partition offsets topic and names the broker leading it.
func withOffsetsTopic(t *testing.T, cfg proto.Config) (*txnCluster, string) {
	t.Helper()
	cfg.Group.OffsetsTopicPartitions = 1
	tc := newTxnCluster(t, cfg)
	tc.w.Inject(tc.ctl, proto.CreateTopic{CorrelationID: 3, Config: cfg.OffsetsTopicConfig()}, 0)
	tc.w.RunFor(time.Second)
	for b := range tc.brokers {
		if r, ok := tc.w.Node(tc.brokers[b]).(*broker.Broker).Replica(proto.TP{Topic: proto.OffsetsTopic}); ok && r.Leader {
			return tc, fmt.Sprintf("b%d", b+1)
		}
	}
	t.Fatalf("no leader of the offsets topic\n%s", dump(tc.w))
	return nil, ""
}

// The offsets partition checks a TxnOffsetCommit's producer epoch as it checks a
// produce's: a fenced instance's offsets are refused, unless producer-fencing=off.
func TestTxnOffsetCommitEpochFencing(t *testing.T) {
	for _, fencing := range []bool{true, false} {
		cfg := legacyTxnConfig()
		cfg.Legacy.NoProducerFencing = !fencing
		tc, coord := withOffsetsTopic(t, cfg)
		for _, epoch := range []int16{1, 0} {
			tc.send(coord, proto.TxnOffsetCommit{CorrelationID: 8, TransactionalID: "app", Group: "g", ProducerID: 5, ProducerEpoch: epoch,
				Generation: -1, Offsets: []proto.PartitionOffset{{TP: t0, Offset: int64(epoch)}}})
		}
		want := "[TxnOffsetCommitResponse g NONE TxnOffsetCommitResponse g INVALID_PRODUCER_EPOCH]"
		if !fencing {
			want = "[TxnOffsetCommitResponse g NONE TxnOffsetCommitResponse g NONE]"
		}
		if got := fmt.Sprint(take[proto.TxnOffsetCommitResponse](tc)); got != want {
			t.Errorf("producer-fencing=%v: %s, want %s", fencing, got, want)
		}
	}
}

// A consumer that filters by tags still gets the transaction markers: a read_committed
// consumer needs the ABORT marker to know where to stop dropping a producer's records.
func TestTagFilteredFetchKeepsMarkers(t *testing.T) {
	tc := newTxnCluster(t, legacyTxnConfig())
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "untagged")))
	tc.send("b1", markers(1, 0, false, 0, t0))
	f := fetchReq(proto.ReadCommitted, 0, 0)
	f.Tags = []string{"x"}
	tc.send("b1", f)
	got := take[proto.FetchResponse](tc)
	if len(got) != 1 || fetchText(got[0]) != "[ABORT] hw=2 lso=2 aborted=[{1 0}]" {
		t.Fatalf("tag-filtered read_committed fetch: %v", got)
	}
}

// One question per transaction at a time: a second produce of the same transaction waits
// for the answer to the first, and goes without a question of its own once its partition
// is verified (Kafka's AddPartitionsToTxnManager keeps one request in flight per node).
func TestProduceVerificationAsksOncePerTransaction(t *testing.T) {
	tc := newTxnCluster(t, proto.DefaultConfig())
	for _, to := range tc.brokers {
		tc.w.DropNextKind(tc.brokers[0], to, "AddPartitionsToTxn", 2)
	}
	asked := func() []proto.AddPartitionsToTxn {
		var out []proto.AddPartitionsToTxn
		for _, e := range tc.w.Trace().Events() {
			if s, ok := e.Data.(sim.Sent); ok {
				if m, ok := s.Msg.(proto.AddPartitionsToTxn); ok {
					out = append(out, m)
				}
			}
		}
		return out
	}
	first, second := produceReq(txnBatch(1, 0, 0, "a")), produceReq(txnBatch(1, 0, 1, "b"))
	second.CorrelationID = 2
	tc.w.Inject(tc.tx, sendCmd{to: "b1", msg: first}, 0)
	tc.w.Inject(tc.tx, sendCmd{to: "b1", msg: second}, 50*time.Millisecond) // after the first is held
	tc.w.RunFor(500 * time.Millisecond)
	if a := asked(); len(a) != 1 || tc.replica(t, 0).LogEndOffset != 0 {
		t.Fatalf("two produces of one transaction: %d questions (want 1), LEO %d (want 0)", len(a), tc.replica(t, 0).LogEndOffset)
	}
	tc.w.Inject(tc.brokers[0], proto.AddPartitionsToTxnResponse{CorrelationID: asked()[0].CorrelationID, TransactionalID: "app"}, 0)
	tc.w.RunFor(time.Second)
	if got := fmt.Sprint(take[proto.ProduceResponse](tc)); got != "[ProduceResponse t/0 offset=0 ProduceResponse t/0 offset=1]" {
		t.Errorf("after the one answer: %s, want both appended", got)
	}
	if a := asked(); len(a) != 1 {
		t.Errorf("%d questions, want 1: the second produce's partition was verified by the first answer", len(a))
	}
}

// ListOffsets by time answers the first offset at or after the time, below the last
// fetchable offset only: the HW, or the LSO at read_committed (Kafka's
// ReplicaManager.fetchOffsets); past it, or with nothing that recent, UnknownOffset.
func TestListOffsetsByTime(t *testing.T) {
	tc := newTxnCluster(t, legacyTxnConfig())
	tc.send("b1", produceReq(plainBatch("x")))
	tc.w.RunFor(time.Second)
	tc.send("b1", produceReq(txnBatch(1, 0, 0, "a")))
	tc.send("b1", proto.ListOffsets{CorrelationID: 4, TP: t0, ByTime: true})
	first := take[proto.ListOffsetsResponse](tc)
	if len(first) != 1 || first[0].Offset != 0 || first[0].Error != proto.None {
		t.Fatalf("ListOffsets at time 0: %v, want offset 0", first)
	}
	later := first[0].Timestamp + 1
	tc.send("b1", proto.ListOffsets{CorrelationID: 5, TP: t0, ByTime: true, Time: later})
	tc.send("b1", proto.ListOffsets{CorrelationID: 6, TP: t0, ByTime: true, Time: later, Isolation: proto.ReadCommitted})
	tc.send("b1", proto.ListOffsets{CorrelationID: 7, TP: t0, ByTime: true, Time: later + sim.Time(time.Hour)})
	got := take[proto.ListOffsetsResponse](tc)
	if len(got) != 3 || got[0].Offset != 1 || got[0].Timestamp <= first[0].Timestamp ||
		got[1].Offset != proto.UnknownOffset || got[2].Offset != proto.UnknownOffset {
		t.Fatalf("ListOffsets by time: %v, want offset 1 (below the HW), then unknown at read_committed (the open transaction's batch is at the LSO) and unknown an hour later", got)
	}
}
