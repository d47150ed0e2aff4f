package lab

import (
	"fmt"

	"mqsim/checker"
	"mqsim/model/history"
)

// What the lab's checker finds, beyond the log checker's own findings (a lost-write is
// an acknowledged record the log does not hold).
const (
	// Reordered: two records of one key in the log in another order than the
	// application handed them over (checker.CheckKeyOrder's finding).
	Reordered = checker.Reordered
	// NeverAcknowledged: a record handed over and never acknowledged, though every
	// fault ended and the producer had a minute to finish.
	NeverAcknowledged checker.Anomaly = "never-acknowledged"
)

// CheckerName names the lab's checker in reports.
const CheckerName = "ordered-retries"

// Check judges the application's history h on topic: each key's acknowledged records
// were read (first copies, by the run's final consume) in the order the application
// handed them over (checker.CheckKeyOrder), and every record handed over was
// acknowledged. Duplicates are allowed: without the broker's idempotence a retry of a
// request that was appended writes its records twice; the note counts them.
//
// A reordering is placed where the second of its two records was acknowledged: from
// then on both are in the log in the wrong order, and the TUI opens there.
func Check(h history.History, topic string) checker.Report {
	var vs []checker.Violation
	for _, v := range checker.CheckKeyOrder(h).Violations {
		// Ops are the earlier-sent record's send, the later one's, and the two reads.
		if len(v.Ops) >= 2 {
			v.Time = max(v.Ops[0].End, v.Ops[1].End)
		}
		vs = append(vs, v)
	}
	done := map[int]bool{} // invocations that completed
	for _, op := range h {
		if op.Type != history.Invoke {
			done[op.Invoke] = true
		}
	}
	handed, acked := 0, 0
	copies := map[string]map[history.TopicPartition]map[int64]bool{} // value -> where it was read
	for _, op := range h {
		switch {
		case op.F == history.Send && op.Send != nil && op.Send.Topic == topic && op.Type == history.Invoke:
			handed++
			copies[op.Send.Value] = map[history.TopicPartition]map[int64]bool{}
			if !done[op.Index] {
				vs = append(vs, checker.Violation{Checker: CheckerName, Anomaly: NeverAcknowledged, TopicPartition: op.Send.TopicPartition,
					Values: []string{op.Send.Value}, Time: op.Time,
					Text: fmt.Sprintf("%s=%s was handed over to the producer and never acknowledged, though every fault ended and the producer had a minute more",
						op.Send.Key, op.Send.Value)})
			}
		case op.F == history.Send && op.Send != nil && op.Send.Topic == topic && op.Type == history.Ok:
			acked++
		}
	}
	for _, op := range h {
		if op.F != history.Poll || op.Type != history.Ok || op.Poll == nil {
			continue
		}
		for _, pr := range op.Poll.Reads {
			for _, r := range pr.Records {
				at, ok := copies[r.Value]
				if !ok {
					continue
				}
				if at[pr.TopicPartition] == nil {
					at[pr.TopicPartition] = map[int64]bool{}
				}
				at[pr.TopicPartition][r.Offset] = true
			}
		}
	}
	inLog, dups := 0, 0
	for _, at := range copies {
		n := 0
		for _, offs := range at {
			n += len(offs)
		}
		inLog += n
		dups += max(0, n-1)
	}
	notes := []checker.Note{{Checker: CheckerName, Text: fmt.Sprintf("%d records handed over, %d acknowledged; the log holds %d copies of them, %d of them duplicates "+
		"(allowed: without the broker's idempotence a retry can write a record twice)", handed, acked, inLog, dups)}}
	return checker.Collect(vs, notes)
}
