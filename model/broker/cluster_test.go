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
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	w := sim.NewWorld(sim.DefaultConfig(seed))
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
