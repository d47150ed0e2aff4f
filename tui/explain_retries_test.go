package tui

import (
	"testing"

	retries "mqsim/labs/ordered-retries"
	"mqsim/sim"
)

// Each event of the ordered-retries lab is explained in its own words, from its typed
// values.
func TestExplainRetriesEvents(t *testing.T) {
	r := typedRun(
		sim.Event{Node: "app", Data: retries.Handed{Key: "k1", Value: "v1", Partition: 0}},
		sim.Event{Node: "app", Data: retries.Requested{Request: 1, Partition: 0, To: "b1", Values: []string{"v1"}}},
		sim.Event{Node: "app", Data: retries.Answered{Request: 1, Partition: 0, Values: []string{"v1"}, Error: "NOT_ENOUGH_REPLICAS"}},
		sim.Event{Node: "app", Data: retries.Answered{Request: 2, Partition: 0, Values: []string{"v1", "v2"}, Offset: 4}},
		sim.Event{Node: "app", Data: retries.Late{From: "b2", Partition: 1}},
		sim.Event{Node: "app", Data: retries.Acknowledged{Key: "k1", Value: "v1", Offset: 4}},
		sim.Event{Node: "app", Data: retries.Acknowledged{Key: "k1", Value: "v2", Offset: -1}},
		sim.Event{Node: "app", Data: retries.Panicked{In: "Send", Why: "index out of range"}},
	)
	want := []Explanation{
		{"The application hands k1=v1 over to app; its key maps it to partition 0. Records of one key must reach the log in the order they were handed over.", NoteOrdering},
		{"Your Sender's request 1 leaves for b1, the leader of partition 0, with v1. Until its answer comes, later requests may overtake it in the log if it has to be sent again.", NoteOrdering},
		{"Request 1 failed: NOT_ENOUGH_REPLICAS. v1 may or may not be in the log; without idempotence the leader does not notice a retry, so a resend can duplicate them, and lands after whatever was sent meanwhile.", NoteIdempotence},
		{"Request 2 is answered: v1, v2 appended from offset 4 and replicated to the ISR (acks=all). They are in the log.", NoteOrdering},
		{"b2 answers a request to partition 1 after the producer gave up on it: the answer is dropped. Whether it was appended, your Sender never learns.", NoteIdempotence},
		{"Your Sender tells the application k1=v1 is in the log, at offset 4.", NoteOrdering},
		{"Your Sender tells the application k1=v2 is in the log, though no ok answer covered it: if it is not, that is a lost write.", NoteOrdering},
		{"Your Sender's Send panicked (index out of range). The producer goes on, but whatever it was doing is left undone.", NoteOrdering},
	}
	for i, w := range want {
		if got := Explain(r, i, &State{}); got != w {
			t.Errorf("event %d (%s):\ngot  %+v\nwant %+v", i, r.Events[i].Kind, got, w)
		}
	}
}
