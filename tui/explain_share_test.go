package tui

import (
	"strings"
	"testing"

	"mqsim/model/broker"
	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/sim"
)

// No catalogue scenario has a share consumer yet, so every share event type the broker
// declares is checked here, through Explain as the Explain pane calls it.
func TestEveryShareEventIsExplained(t *testing.T) {
	n := 0
	for _, doc := range broker.EventDocs() {
		if _, ok := explainShare(typedRun(sim.Event{Node: "b1", Data: doc.Example}), 0, &State{}); !ok {
			continue
		}
		n++
		r := typedRun(sim.Event{Node: "b1", Data: doc.Example})
		if ex := Explain(r, 0, &State{}); ex.Text == "" || ex.Note == "" {
			t.Errorf("%T is not explained: %+v", doc.Example, ex)
		}
	}
	if n != 11 {
		t.Fatalf("%d share event types explained, want 11", n)
	}
}

func TestExplainShareEventsUseTheirFields(t *testing.T) {
	tp := proto.TP{Topic: "t"}
	r := typedRun(
		sim.Event{Node: "b2", Data: broker.ShareAcquired{Group: "g", TP: tp, Member: "m1", Ranges: []proto.AcquiredRange{{First: 3, Last: 4, DeliveryCount: 2}}}},
		sim.Event{Node: "b2", Data: broker.ShareArchived{Group: "g", TP: tp, Offsets: []int64{7}, Reason: broker.ArchiveDeliveryLimit}},
		sim.Event{Node: "b2", Data: broker.ShareAckApplied{Group: "g", TP: tp, Changes: []share.Transition{{Offset: 3, From: proto.Acquired, To: proto.Acknowledged}}, Unpersisted: true}},
		sim.Event{Node: "b2", Data: broker.ShareStateRead{Group: "g", TP: tp, Found: true, Start: 5}},
	)
	for i, want := range [][]string{
		{"member m1 acquires 2 record(s)", "came back"},
		{"poison record", "never delivered to group g again"},
		{"share-ack-before-persist"},
		{"SPSO 5"},
	} {
		ex := Explain(r, i, &State{})
		for _, w := range want {
			if !strings.Contains(ex.Text, w) {
				t.Errorf("event %d: %q lacks %q", i, ex.Text, w)
			}
		}
	}
}
