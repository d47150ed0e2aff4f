package broker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// client is a minimal producer/reader for these tests: it sends what it is told to the
// partition leader it is told, and keeps the answers.
type client struct {
	answers []string
}

type produceCmd struct {
	to   string
	tp   proto.TP
	acks proto.Acks
	val  string
}

func (c *client) Start(env *sim.Env)                   {}
func (c *client) Timer(env *sim.Env, tag sim.TimerTag) {}
func (c *client) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case produceCmd:
		to, _ := env.Lookup(m.to)
		env.Send(to, proto.ProduceRequest{CorrelationID: 1, TP: m.tp, Acks: m.acks, Timeout: 5 * time.Second,
			Batch: wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence,
				Records: []wal.Record{{Value: []byte(m.val)}}}})
	case proto.ProduceResponse:
		c.answers = append(c.answers, m.String())
	case proto.CreateTopicResponse:
		c.answers = append(c.answers, m.String())
	}
}

type testCluster struct {
	w       *sim.World
	brokers []sim.NodeID
	cl      sim.NodeID
	ctl     sim.NodeID
}

func newCluster(t *testing.T, cfg proto.Config, seed uint64) *testCluster {
	t.Helper()
	return newClusterIn(t, cfg, sim.DefaultConfig(seed))
}

// newClusterIn is newCluster in a world of that configuration.
func newClusterIn(t *testing.T, cfg proto.Config, wcfg sim.Config) *testCluster {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w := sim.NewWorld(wcfg)
	tc := &testCluster{w: w}
	tc.ctl = w.MustAddNode("ctl", func() sim.Node { return controller.New(cfg) })
	for i := 1; i <= cfg.Brokers; i++ {
		tc.brokers = append(tc.brokers, w.MustAddNode(controller.BrokerName(i), func() sim.Node { return broker.New(cfg, "ctl") }))
	}
	tc.cl = w.MustAddNode("p1", func() sim.Node { return &client{} })
	w.RunFor(100 * time.Millisecond)
	topic := cfg.Topic
	topic.Name = "t"
	w.Inject(tc.ctl, proto.CreateTopic{CorrelationID: 1, Config: topic}, 0)
	w.RunFor(time.Second)
	return tc
}

func (tc *testCluster) replica(t *testing.T, b int) broker.Replica {
	t.Helper()
	r, ok := tc.w.Node(tc.brokers[b]).(*broker.Broker).Replica(proto.TP{Topic: "t"})
	if !ok {
		t.Fatalf("b%d has no replica of t/0", b+1)
	}
	return r
}

func (tc *testCluster) produce(to string, acks proto.Acks, val string) {
	tc.w.Inject(tc.cl, produceCmd{to: to, tp: proto.TP{Topic: "t"}, acks: acks, val: val}, 0)
}

func (tc *testCluster) answers() string {
	return strings.Join(tc.w.Node(tc.cl).(*client).answers, "\n")
}

func TestReplicationRaisesHWAndAcks(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	tc := newCluster(t, cfg, 1)
	tc.produce("b1", proto.AcksAll, "v1")
	tc.w.RunFor(2 * time.Second)
	if got := tc.answers(); !strings.Contains(got, "ProduceResponse t/0 offset=0") {
		t.Fatalf("answers:\n%s\ntrace:\n%s", got, dump(tc.w))
	}
	for b := 0; b < 3; b++ {
		r := tc.replica(t, b)
		if r.LogEndOffset != 1 || r.HighWatermark != 1 {
			t.Errorf("b%d: LEO %d HW %d, want 1 and 1", b+1, r.LogEndOffset, r.HighWatermark)
		}
	}
}

func TestAcks1LeaderCrashLosesAckedWrite(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc := newCluster(t, cfg, 1)
	// Cut the followers off the leader so they cannot copy the write, then crash it.
	tc.w.Partition([]sim.NodeID{tc.brokers[0]}, []sim.NodeID{tc.brokers[1], tc.brokers[2]})
	tc.produce("b1", proto.AcksLeader, "lost")
	tc.w.RunFor(100 * time.Millisecond)
	if !strings.Contains(tc.answers(), "offset=0") {
		t.Fatalf("acks=1 write not acknowledged:\n%s", tc.answers())
	}
	tc.w.Crash(tc.brokers[0])
	tc.w.Heal()
	tc.w.RunFor(10 * time.Second)
	tc.produce("b2", proto.AcksAll, "next")
	tc.w.RunFor(2 * time.Second)
	tc.w.Restart(tc.brokers[0])
	tc.w.RunFor(10 * time.Second)
	for b := 0; b < 3; b++ {
		r := tc.replica(t, b)
		batches, _ := r.Log.Read(0, 1<<20)
		if len(batches) != 1 || string(batches[0].Records[0].Value) != "next" {
			t.Errorf("b%d log: %v\n%s", b+1, batches, dump(tc.w))
		}
	}
}

func dump(w *sim.World) string {
	var b strings.Builder
	for _, e := range w.Trace().Events() {
		fmt.Fprintln(&b, e)
	}
	return b.String()
}

// KAFKA-15583 counts the committed ISR: while the controller has not confirmed a
// follower's return, the ISR is still below min.insync.replicas and the HW must not move,
// although the follower already has the records.
func TestHWWaitsForCommittedISRUnderMinISR(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc := newCluster(t, cfg, 1)
	tc.produce("b1", proto.AcksAll, "v1")
	tc.w.RunFor(time.Second)
	tc.w.Crash(tc.brokers[1])
	tc.w.Crash(tc.brokers[2])
	tc.w.RunFor(5 * time.Second) // fenced: ISR [b1]
	tc.produce("b1", proto.AcksLeader, "v2")
	tc.w.RunFor(100 * time.Millisecond)
	if r := tc.replica(t, 0); r.LogEndOffset != 2 || r.HighWatermark != 1 || len(r.ISR) != 1 {
		t.Fatalf("b1 before the return: LEO %d HW %d ISR %v, want 2, 1, [b1]\n%s", r.LogEndOffset, r.HighWatermark, r.ISR, dump(tc.w))
	}
	// b2 returns and catches up, but b1's AlterPartition is held on its way to the
	// controller.
	ctl := tc.ctl
	tc.w.Clog(tc.brokers[0], ctl)
	tc.w.Restart(tc.brokers[1])
	tc.w.RunFor(time.Second)
	if r := tc.replica(t, 1); r.LogEndOffset != 2 {
		t.Fatalf("b2 did not catch up: LEO %d\n%s", r.LogEndOffset, dump(tc.w))
	}
	if r := tc.replica(t, 0); r.HighWatermark != 1 {
		t.Fatalf("b1 raised its HW to %d with an unconfirmed ISR %v below min.insync.replicas\n%s", r.HighWatermark, r.ISR, dump(tc.w))
	}
	tc.w.Unclog(tc.brokers[0], ctl)
	tc.w.RunFor(time.Second)
	if r := tc.replica(t, 0); r.HighWatermark != 2 || len(r.ISR) != 2 {
		t.Fatalf("after the controller confirmed: HW %d ISR %v, want 2 and [b1 b2]\n%s", r.HighWatermark, r.ISR, dump(tc.w))
	}
}

// Before KIP-101 a follower truncated to its own high watermark, which may lie beyond the
// end of a leader elected uncleanly. Its fetch is then out of range, and Kafka's follower
// (ReplicaFetcherThread.handleOffsetOutOfRange) truncates to the leader's end and goes
// on; it must not retry the same fetch forever.
func TestHWModeFollowerAheadOfUncleanLeaderTruncates(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Brokers = 2
	cfg.Topic.ReplicationFactor = 2
	cfg.Topic.UncleanLeaderElection = true
	cfg.Broker.Truncation = proto.TruncateToHW
	cfg.Broker.Log.Flush = wal.FlushEveryBatch
	cfg.Broker.ReplicaLagTimeMax = 2 * time.Second
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc := newCluster(t, cfg, 1)
	tc.produce("b1", proto.AcksAll, "v0")
	tc.w.RunFor(time.Second)
	// b2 is cut off from b1; b1 drops it from the ISR and commits two more records alone,
	// and checkpoints HW 3.
	tc.w.Partition([]sim.NodeID{tc.brokers[0]}, []sim.NodeID{tc.brokers[1]})
	tc.w.RunFor(3 * time.Second)
	tc.produce("b1", proto.AcksAll, "v1")
	tc.produce("b1", proto.AcksAll, "v2")
	tc.w.RunFor(8 * time.Second)
	if r := tc.replica(t, 0); r.HighWatermark != 3 {
		t.Fatalf("b1: HW %d, want 3\n%s", r.HighWatermark, dump(tc.w))
	}
	// b1 dies; b2 (LEO 1) is elected uncleanly; b1 comes back with HW 3 on disk.
	tc.w.Crash(tc.brokers[0])
	tc.w.Heal()
	tc.w.RunFor(5 * time.Second)
	tc.w.Restart(tc.brokers[0])
	tc.w.RunFor(5 * time.Second)
	b1, b2 := tc.replica(t, 0), tc.replica(t, 1)
	if !b2.Leader || b1.Leader {
		t.Fatalf("want b2 leading, b1 following\n%s", dump(tc.w))
	}
	if b1.LogEndOffset != b2.LogEndOffset || len(b2.ISR) != 2 {
		t.Fatalf("b1 LEO %d, leader b2 LEO %d, ISR %v: the follower is stuck\n%s", b1.LogEndOffset, b2.LogEndOffset, b2.ISR, dump(tc.w))
	}
	if !strings.Contains(dump(tc.w), "b1 truncate: t/0: fetch offset 3 is past the leader's end (its HW 1): removed offsets 1..2") {
		t.Errorf("b1 did not truncate to the leader's end:\n%s", dump(tc.w))
	}
}

// A controller that fenced every broker (it was cut off from them) leaves the partition
// offline, its ISR keeping the last member. If the controller then restarts, the brokers
// it presumes alive report in with the incarnations it already knows; the partition must
// still get a leader.
func TestRestartedControllerElectsOfflinePartitions(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc := newCluster(t, cfg, 1)
	tc.w.Partition([]sim.NodeID{tc.ctl}, tc.brokers)
	tc.w.RunFor(5 * time.Second)
	if !strings.Contains(dump(tc.w), "partition offline") {
		t.Fatalf("the partition did not go offline:\n%s", dump(tc.w))
	}
	tc.w.Crash(tc.ctl)
	tc.w.Heal()
	tc.w.Restart(tc.ctl)
	tc.w.RunFor(5 * time.Second)
	leaders := 0
	for b := range tc.brokers {
		if tc.replica(t, b).Leader {
			leaders++
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders after the controller's restart, want 1\n%s", leaders, dump(tc.w))
	}
}

// An AlterPartition sent while the controller is down is lost. The leader must ask again,
// or it keeps waiting for the lagging follower forever: the ISR can change only through
// the pending request, and the HW counts the follower meanwhile.
func TestLostAlterPartitionIsSentAgain(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	cfg.Broker.ReplicaLagTimeMax = 2 * time.Second
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc := newCluster(t, cfg, 1)
	tc.w.Crash(tc.ctl)
	tc.w.Cut(tc.brokers[2], tc.brokers[0]) // b3 can no longer fetch, but it stays alive
	tc.produce("b1", proto.AcksAll, "v1")
	tc.w.RunFor(4 * time.Second)
	if !strings.Contains(dump(tc.w), "b1 isr-propose: t/0: ISR [b1 b2 b3] -> [b1 b2]") {
		t.Fatalf("b1 did not propose to drop b3:\n%s", dump(tc.w))
	}
	tc.w.Restart(tc.ctl)
	tc.w.RunFor(5 * time.Second)
	if got := tc.answers(); !strings.Contains(got, "ProduceResponse t/0 offset=0") {
		t.Fatalf("acks=all write never acknowledged (answers %q):\n%s", got, dump(tc.w))
	}
	if r := tc.replica(t, 0); len(r.ISR) != 2 {
		t.Fatalf("ISR %v, want [b1 b2]\n%s", r.ISR, dump(tc.w))
	}
}
