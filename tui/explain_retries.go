package tui

import (
	"fmt"
	"strings"

	retries "mqsim/labs/ordered-retries"
	"mqsim/model/history"
)

// explainRetries says what the ordered-retries lab's events mean: a producer without
// the broker's idempotence whose sending logic is the learner's Sender.
func explainRetries(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case retries.Handed:
		return Explanation{fmt.Sprintf("The application hands %s=%s over to %s; its key maps it to partition %d. Records of one key must reach the log in the order they were handed over.",
			d.Key, d.Value, e.Node, d.Partition), NoteOrdering}, true
	case retries.Requested:
		return Explanation{fmt.Sprintf("Your Sender's request %d leaves for %s, the leader of partition %d, with %s. Until its answer comes, later requests may overtake it in the log if it has to be sent again.",
			d.Request, d.To, d.Partition, strings.Join(d.Values, ", ")), NoteOrdering}, true
	case retries.Answered:
		if d.Error == "" {
			return Explanation{fmt.Sprintf("Request %d is answered: %s appended from offset %d and replicated to the ISR (acks=all). They are in the log.",
				d.Request, strings.Join(d.Values, ", "), d.Offset), NoteOrdering}, true
		}
		return Explanation{fmt.Sprintf("Request %d failed: %s. %s may or may not be in the log; without idempotence the leader does not notice a retry, so a resend can duplicate them, and lands after whatever was sent meanwhile.",
			d.Request, d.Error, strings.Join(d.Values, ", ")), NoteIdempotence}, true
	case retries.Late:
		return Explanation{fmt.Sprintf("%s answers a request to partition %d after the producer gave up on it: the answer is dropped. Whether it was appended, your Sender never learns.",
			d.From, d.Partition), NoteIdempotence}, true
	case retries.Acknowledged:
		if d.Offset == history.NoOffset {
			return Explanation{fmt.Sprintf("Your Sender tells the application %s=%s is in the log, though no ok answer covered it: if it is not, that is a lost write.",
				d.Key, d.Value), NoteOrdering}, true
		}
		return Explanation{fmt.Sprintf("Your Sender tells the application %s=%s is in the log, at offset %d.", d.Key, d.Value, d.Offset), NoteOrdering}, true
	case retries.Panicked:
		return Explanation{fmt.Sprintf("Your Sender's %s panicked (%s). The producer goes on, but whatever it was doing is left undone.", d.In, d.Why), NoteOrdering}, true
	}
	return Explanation{}, false
}
