package tui

import (
	"strings"
	"testing"

	"mqsim/model/broker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/sim"
)

// typedRun is a run of hand-made events: each explanation reads the typed values.
func typedRun(events ...sim.Event) *Run {
	for i := range events {
		events[i].Index = i
		events[i].Step = uint64(i + 1)
		events[i].Kind = events[i].Data.Kind()
		events[i].Detail = events[i].Data.Detail()
	}
	return &Run{Events: events}
}

func TestExplainTypedBrokerEvents(t *testing.T) {
	tp := proto.TP{Topic: "t", Partition: 0}
	ms := sim.Time(1_000_000)
	r := typedRun(
		sim.Event{Time: 0, Node: "b2", Data: broker.Following{TP: tp, Leader: "b1", Epoch: 1, LEO: 0}},
		sim.Event{Time: 1 * ms, Node: "b1", Data: broker.Appended{TP: tp, First: 0, Last: 0, Epoch: 1, Acks: proto.AcksLeader, From: "p1", LEO: 1}},
		sim.Event{Time: 3 * ms, Node: "b1", Data: broker.Acked{TP: tp, Offset: 0, To: "p1", Acks: proto.AcksLeader, HW: 0}},
		sim.Event{Time: 4 * ms, Node: "b2", Data: broker.Replicated{TP: tp, First: 0, Last: 0, Leader: "b1", LEO: 1}},
		sim.Event{Time: 5 * ms, Node: "b1", Data: broker.HWAdvanced{TP: tp, From: 0, To: 1}},
		sim.Event{Time: 6 * ms, Node: "b2", Data: broker.Truncated{TP: tp, Cause: broker.TruncateCause{Rule: broker.LeaderEpochEnds, Epoch: 1, Offset: 0}, From: 0, To: 0}},
		sim.Event{Time: 7 * ms, Node: "env", Data: sim.Partitioned{Groups: [][]string{{"b1"}, {"b2", "b3"}}}},
		sim.Event{Time: 8 * ms, Node: "env", Data: cluster.InvariantBroken{Anomaly: "hw-regressed", TP: tp, Epoch: 1, Text: "HW 1 -> 0"}},
	)
	st := &State{Parts: []PartView{{Topic: "t", Partition: 0, ISR: []string{"b1", "b2"}}}}
	for _, tc := range []struct {
		i    int
		note string
		want []string
	}{
		{1, NoteAcks, []string{"b1 leads t/0 and appended p1's batch at offsets 0..0", "With acks=1, b1 answers p1"}},
		{2, NoteAcks, []string{"offset 0 is NOT committed", "It waited 2ms since the append (step 2)"}},
		{3, NoteHW, []string{"b2 follows b1 for t/0: its fetch brought offsets 0..0", "its LEO is now 1"}},
		{4, NoteHW, []string{"raises its high watermark from 0 to 1", "ISR [b1 b2]", "The last in-sync follower to get there was b2 (step 4)"}},
		{5, NoteTruncation, []string{"b2 removes offsets 0..0 of t/0 from its log (leader's epoch 1 ends at 0)"}},
		{6, NoteFaults, []string{"The network splits into b1 | b2 b3"}},
		{7, "", []string{"hw-regressed on t/0 in leader epoch 1: HW 1 -> 0"}},
	} {
		ex := Explain(r, tc.i, st)
		if ex.Note != tc.note {
			t.Errorf("event %d (%s): note %q, want %q", tc.i, r.Events[tc.i].Kind, ex.Note, tc.note)
		}
		for _, w := range tc.want {
			if !strings.Contains(ex.Text, w) {
				t.Errorf("event %d (%s): %q does not say %q", tc.i, r.Events[tc.i].Kind, ex.Text, w)
			}
		}
	}
}
