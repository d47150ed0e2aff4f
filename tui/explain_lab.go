package tui

import (
	"fmt"

	lab "mqsim/labs/idempotent-consumer"
)

// explainLab says what the idempotent-consumer lab's events mean: a database that runs
// the learner's Handler for each payment, and applications that deliver payments to it
// at least once.
func explainLab(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case lab.Recovered:
		text := fmt.Sprintf("%s starts and reads its log back: %d credit(s) and %d key(s) of committed transactions. What a transaction wrote survives only once the log was fsynced.",
			e.Node, d.Credits, d.Keys)
		if d.Cut > 0 {
			text += fmt.Sprintf(" It cuts %d bytes of a torn last entry.", d.Cut)
		}
		return Explanation{text, NoteExactlyOnce}, true
	case lab.Committed:
		return Explanation{fmt.Sprintf("%s runs your Handler for payment %s from %s as one transaction: %d credit(s) and %d key(s) written to its log together. It answers once the fsync completes; if the answer is lost, %s sends the payment again.",
			e.Node, d.Payment, d.From, d.Credits, d.Writes, d.From), NoteExactlyOnce}, true
	case lab.Aborted:
		return Explanation{fmt.Sprintf("Your Handler refused payment %s from %s (%s): the transaction writes nothing, and %s sends the payment again later.",
			d.Payment, d.From, d.Why, d.From), NoteExactlyOnce}, true
	case lab.Durable:
		return Explanation{fmt.Sprintf("%s's log is durable to byte %d: it answers the %d transaction(s) below that point.", e.Node, d.Size, d.Answered), NoteWAL}, true
	case lab.Sending:
		if d.Retry {
			return Explanation{fmt.Sprintf("%s got no answer for %d payment(s) within a second and sends them again: the database may have applied them already. That is at-least-once.",
				e.Node, d.Payments), NoteExactlyOnce}, true
		}
		return Explanation{fmt.Sprintf("%s polled %d payment(s) and sends each to the database; it commits the offsets only once every one is answered.", e.Node, d.Payments), NoteExactlyOnce}, true
	case lab.Applied:
		return Explanation{fmt.Sprintf("Every payment of %s's poll is committed in the database, so it commits the poll's offsets. A crash before this commit delivers the same payments again to whoever reads the partition next.",
			e.Node), NoteExactlyOnce}, true
	}
	return Explanation{}, false
}
