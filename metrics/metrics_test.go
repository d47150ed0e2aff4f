package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/sim"
)

var tp = proto.TP{Topic: "t", Partition: 0}

// ev is one trace event of a hand-made run: at ms milliseconds, in kernel step step.
func ev(ms int, step uint64, node string, p sim.Payload) sim.Event {
	return sim.Event{Step: step, Time: sim.Time(ms) * sim.Time(time.Millisecond), Node: node, Kind: p.Kind(), Data: p}
}

// start is a small cluster coming up: controller ctl active, brokers b1 b2, topic t with
// two replicas and min.insync.replicas=2, b1 leading t/0 with both in the ISR.
func start() []sim.Event {
	return []sim.Event{
		ev(0, 1, "ctl", controller.SingleActive{}),
		ev(0, 2, "b1", broker.Started{Incarnation: 1}),
		ev(0, 3, "b2", broker.Started{Incarnation: 1}),
		ev(1, 4, "ctl", controller.TopicCreated{Config: proto.TopicConfig{Name: "t", Partitions: 1, ReplicationFactor: 2, MinInsyncReplicas: 2}}),
		ev(2, 5, "b1", broker.Leading{TP: tp, ISR: []string{"b1", "b2"}}),
	}
}

// lines are the figures after event i, one per line, as show metrics prints them.
func lines(tl *Timeline, i int) string {
	var out []string
	for _, f := range tl.At(i) {
		out = append(out, f.Line())
	}
	return strings.Join(out, "\n")
}

func value(t *testing.T, tl *Timeline, i int, k Key) float64 {
	t.Helper()
	for _, f := range tl.At(i) {
		if f.Key == k {
			return f.Value
		}
	}
	t.Fatalf("no figure %s after event %d", k, i)
	return 0
}

// A healthy start: one active controller, nothing under-replicated, nothing offline.
func TestHealthyStart(t *testing.T) {
	es := start()
	tl := Build(es, time.Second)
	got := lines(tl, len(es)-1)
	want := `ActiveControllerCount cluster = 1
OfflinePartitionsCount cluster = 0
ActiveControllerCount ctl = 1
UnderReplicatedPartitions b1 = 0
UnderMinIsrPartitionCount b1 = 0
UnderReplicatedPartitions b2 = 0
UnderMinIsrPartitionCount b2 = 0
UnderReplicated t/0 = 0
UnderMinIsr t/0 = 0
InSyncReplicasCount t/0 = 2 (was 0)`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The leader's AlterPartition shrinking the ISR below min.insync.replicas: the leader's
// URP and UnderMinIsr go to 1 with an alert, IsrShrinksPerSec counts one shrink in the
// window, and the expand that follows counts one expansion and clears the gauges.
func TestShrinkAndExpand(t *testing.T) {
	es := append(start(),
		ev(100, 6, "ctl", controller.ISRChanged{TP: tp, Before: []string{"b1", "b2"}, After: []string{"b1"}}),
		ev(600, 7, "ctl", controller.ISRChanged{TP: tp, Before: []string{"b1"}, After: []string{"b1", "b2"}}),
		ev(1200, 8, "b2", broker.Started{Incarnation: 2}),
	)
	tl := Build(es, time.Second)
	shrink := 5
	for _, c := range []struct {
		k    Key
		want string
	}{
		{Key{Broker, "b1", UnderReplicatedPartitions}, "UnderReplicatedPartitions b1 = 1 (was 0) ALERT"},
		{Key{Broker, "b1", UnderMinIsrPartitionCount}, "UnderMinIsrPartitionCount b1 = 1 (was 0) ALERT"},
		{Key{Broker, "b1", IsrShrinksPerSec}, "IsrShrinksPerSec b1 = 1 (was 0)"},
		{Key{Partition, "t/0", UnderMinIsr}, "UnderMinIsr t/0 = 1 (was 0) ALERT"},
	} {
		i := slices.IndexFunc(tl.At(shrink), func(f Figure) bool { return f.Key == c.k })
		if i < 0 {
			t.Fatalf("no %s at the shrink", c.k)
		}
		if got := tl.At(shrink)[i].Line(); got != c.want {
			t.Errorf("at the shrink: got %q, want %q", got, c.want)
		}
	}
	if got := value(t, tl, 6, Key{Broker, "b1", UnderMinIsrPartitionCount}); got != 0 {
		t.Errorf("after the expand UnderMinIsrPartitionCount b1 = %v, want 0", got)
	}
	if got := value(t, tl, 6, Key{Broker, "b1", IsrExpandsPerSec}); got != 1 {
		t.Errorf("IsrExpandsPerSec b1 = %v, want 1", got)
	}
	// 1.2s: the shrink at 100ms left the 1s window, the expand at 600ms did not.
	if got := value(t, tl, 7, Key{Broker, "b1", IsrShrinksPerSec}); got != 0 {
		t.Errorf("IsrShrinksPerSec b1 at 1.2s = %v, want 0", got)
	}
	if got := value(t, tl, 7, Key{Broker, "b1", IsrExpandsPerSec}); got != 1 {
		t.Errorf("IsrExpandsPerSec b1 at 1.2s = %v, want 1", got)
	}
}

// The controller finding no leader: OfflinePartitionsCount 1 with an alert; an election
// clears it and counts in LeaderElectionRate; an unclean one in its own rate, alerting.
func TestOfflineAndElections(t *testing.T) {
	es := append(start(),
		ev(10, 6, "b1", sim.NodeCrashed{}),
		ev(20, 7, "ctl", controller.PartitionOffline{TP: tp, ISR: []string{"b1"}}),
		ev(30, 8, "ctl", controller.LeaderElected{TP: tp, Leader: "b2", ISR: []string{"b2"}, Via: controller.ViaUnclean}),
		ev(31, 9, "b2", broker.Leading{TP: tp, ISR: []string{"b2"}}),
	)
	tl := Build(es, 2*time.Second)
	if got := value(t, tl, 6, Key{Cluster, "cluster", OfflinePartitionsCount}); got != 1 {
		t.Errorf("OfflinePartitionsCount = %v, want 1", got)
	}
	figs := tl.At(7)
	for _, want := range []string{
		"OfflinePartitionsCount cluster = 0 (was 1)",
		"LeaderElectionRate cluster = 0.5 (was 0)",
		"UncleanLeaderElectionsPerSec cluster = 0.5 (was 0) ALERT",
	} {
		if !slices.ContainsFunc(figs, func(f Figure) bool { return f.Line() == want }) {
			t.Errorf("after the election: no %q in\n%s", want, lines(tl, 7))
		}
	}
	// b1 crashed, so it leads nothing; b2 leads with ISR [b2] of 2 replicas.
	if got := value(t, tl, 8, Key{Broker, "b2", UnderReplicatedPartitions}); got != 1 {
		t.Errorf("UnderReplicatedPartitions b2 = %v, want 1", got)
	}
	if got := value(t, tl, 8, Key{Broker, "b1", UnderReplicatedPartitions}); got != 0 {
		t.Errorf("UnderReplicatedPartitions b1 = %v, want 0 (crashed)", got)
	}
}

// ActiveControllerCount: its sum alerts when no controller is active, and one controller
// at 0 is no alert.
func TestActiveControllerCount(t *testing.T) {
	es := append(start(), ev(50, 6, "ctl", sim.NodeCrashed{}))
	tl := Build(es, time.Second)
	if got := lines(tl, 5); !strings.Contains(got, "ActiveControllerCount cluster = 0 (was 1) ALERT\n") || !strings.Contains(got, "ActiveControllerCount ctl = 0 (was 1)\n") {
		t.Errorf("after the controller's crash:\n%s", got)
	}
}

// Produce requests: every batch a leader took or refused counts; refusals count as failed.
func TestProduceRates(t *testing.T) {
	es := append(start(),
		ev(10, 6, "b1", broker.Appended{TP: tp, From: "p1"}),
		ev(20, 7, "b1", broker.Appended{TP: tp, Coordinator: true}), // the coordinator's write: no produce request
		ev(30, 8, "b1", broker.BelowMinISR{TP: tp, ISR: []string{"b1"}, MinISR: 2}),
		ev(40, 9, "b1", broker.SequenceRejected{TP: tp}),
	)
	tl := Build(es, time.Second)
	if got := value(t, tl, 8, Key{Broker, "b1", TotalProduceRequestsPerSec}); got != 3 {
		t.Errorf("TotalProduceRequestsPerSec = %v, want 3", got)
	}
	if got := value(t, tl, 8, Key{Broker, "b1", FailedProduceRequestsPerSec}); got != 2 {
		t.Errorf("FailedProduceRequestsPerSec = %v, want 2", got)
	}
}

// Fetch requests count only from the messages a broker received (trace-messages=true).
func TestFetchRate(t *testing.T) {
	es := append(start(),
		ev(10, 6, "b1", sim.Received{Msg: proto.FetchRequest{TP: tp}}),
		ev(11, 7, "b1", sim.Received{Msg: proto.ProduceRequest{TP: tp}}),
		ev(12, 8, "b1", sim.Received{Msg: proto.FetchRequest{TP: tp}}),
	)
	tl := Build(es, time.Second)
	if got := value(t, tl, 7, Key{Broker, "b1", TotalFetchRequestsPerSec}); got != 2 {
		t.Errorf("TotalFetchRequestsPerSec = %v, want 2", got)
	}
}

// records-lag-max is the leader's HW minus the consumer's position, over its partitions;
// rebalance-rate-per-hour counts the generations it joined.
func TestConsumerLagAndRebalances(t *testing.T) {
	es := append(start(),
		ev(10, 6, "b1", broker.HWAdvanced{TP: tp, From: 0, To: 5}),
		ev(20, 7, "c1", client.PositionFound{TP: tp, Offset: 0}),
		ev(30, 8, "c1", client.Polled{Records: 3, Spans: []client.Span{{TP: tp, First: 0, Last: 2}}}),
		ev(40, 9, "b2", broker.HWAdvanced{TP: tp, From: 0, To: 9, Leader: "b1"}), // a follower's HW: not the leader's
		ev(50, 10, "c1", client.Joined{Group: "g", Member: "c1-1", Generation: 1}),
	)
	tl := Build(es, 10*time.Second)
	for i, want := range map[int]float64{6: 5, 7: 2, 8: 2} {
		if got := value(t, tl, i, Key{Consumer, "c1", RecordsLagMax}); got != want {
			t.Errorf("records-lag-max after event %d = %v, want %v", i, got, want)
		}
	}
	if got := value(t, tl, 9, Key{Consumer, "c1", RebalanceRatePerHour}); got != 360 {
		t.Errorf("rebalance-rate-per-hour = %v, want 360 (one in 10s)", got)
	}
}

// Samples is the CSV's series: a rate rises with its event and falls a window later.
func TestSamplesFollowTheWindow(t *testing.T) {
	es := append(start(),
		ev(100, 6, "ctl", controller.ISRChanged{TP: tp, Before: []string{"b1", "b2"}, After: []string{"b1"}}),
		ev(1500, 7, "b2", broker.Started{Incarnation: 2}),
	)
	tl := Build(es, time.Second)
	var got []string
	for _, s := range tl.Samples() {
		if s.Key.Metric == IsrShrinksPerSec {
			got = append(got, s.Time.String()+" step "+Format(float64(s.Step))+" "+Format(s.Value))
		}
	}
	want := []string{"100ms step 6 1", "1.1s step 6 0"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
