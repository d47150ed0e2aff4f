package tui

import (
	"testing"

	lab "mqsim/labs/idempotent-consumer"
	"mqsim/sim"
)

// Each event of the idempotent-consumer lab is explained in its own words, from its
// typed values.
func TestExplainLabEvents(t *testing.T) {
	r := typedRun(
		sim.Event{Node: "db", Data: lab.Recovered{Credits: 3, Keys: 2, Cut: 40}},
		sim.Event{Node: "app1", Data: lab.Sending{Payments: 2}},
		sim.Event{Node: "db", Data: lab.Committed{From: "app1", Payment: "v1", Credits: 1, Writes: 1}},
		sim.Event{Node: "db", Data: lab.Durable{Size: 120, Answered: 1}},
		sim.Event{Node: "db", Data: lab.Aborted{From: "app1", Payment: "v2", Why: "no such account"}},
		sim.Event{Node: "app1", Data: lab.Sending{Payments: 1, Retry: true}},
		sim.Event{Node: "app1", Data: lab.Applied{}},
	)
	want := []Explanation{
		{"db starts and reads its log back: 3 credit(s) and 2 key(s) of committed transactions. What a transaction wrote survives only once the log was fsynced. It cuts 40 bytes of a torn last entry.", NoteExactlyOnce},
		{"app1 polled 2 payment(s) and sends each to the database; it commits the offsets only once every one is answered.", NoteExactlyOnce},
		{"db runs your Handler for payment v1 from app1 as one transaction: 1 credit(s) and 1 key(s) written to its log together. It answers once the fsync completes; if the answer is lost, app1 sends the payment again.", NoteExactlyOnce},
		{"db's log is durable to byte 120: it answers the 1 transaction(s) below that point.", NoteWAL},
		{"Your Handler refused payment v2 from app1 (no such account): the transaction writes nothing, and app1 sends the payment again later.", NoteExactlyOnce},
		{"app1 got no answer for 1 payment(s) within a second and sends them again: the database may have applied them already. That is at-least-once.", NoteExactlyOnce},
		{"Every payment of app1's poll is committed in the database, so it commits the poll's offsets. A crash before this commit delivers the same payments again to whoever reads the partition next.", NoteExactlyOnce},
	}
	for i, w := range want {
		if got := Explain(r, i, &State{}); got != w {
			t.Errorf("event %d (%s):\ngot  %+v\nwant %+v", i, r.Events[i].Kind, got, w)
		}
	}
}
