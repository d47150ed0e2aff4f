package tui

import (
	"fmt"
)

// explainClient says what client events mean.
func explainClient(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	d := e.Detail
	switch e.Kind {
	case "truncation":
		return Explanation{fmt.Sprintf("%s: %s. The consumer noticed that the log it was reading was cut back below its position (the leader epoch of its last record ends earlier on the new leader).", e.Node, d), NoteTruncation}, true
	case "pid":
		return Explanation{fmt.Sprintf("%s got %s: with it and a sequence number per batch, brokers can drop the duplicates that retries create.", e.Node, d), NoteIdempotence}, true
	case "retry":
		return Explanation{fmt.Sprintf("%s sends a batch again: %s. If the first attempt was written but its answer lost, the retry writes it twice — unless the producer is idempotent.", e.Node, d), NoteIdempotence}, true
	case "in-log":
		return Explanation{fmt.Sprintf("%s: %s. A broker takes an idempotent producer's sequence numbers in order only, so a batch below an acknowledged one is in the log even though its own answer was lost; sending it again under a new producer id would write it twice.", e.Node, d), NoteIdempotence}, true
	case "timeout", "disconnect", "late", "fail", "produce-error":
		return Explanation{fmt.Sprintf("%s: %s %s. A send that times out is in doubt: the broker may or may not have written it. The history records such outcomes as unknown, and the checkers allow both.", e.Node, e.Kind, d), NoteAcks}, true
	case "send", "batch", "metadata":
		return Explanation{fmt.Sprintf("%s: %s %s. Producers group records per partition into batches and send each to the partition's leader, as the metadata says.", e.Node, e.Kind, d), NoteClients}, true
	case "poll", "position", "assign", "reset":
		return Explanation{fmt.Sprintf("%s: %s %s. Consumers read only below the high watermark, from the leader, and keep their own position in each partition.", e.Node, e.Kind, d), NoteClients}, true
	}
	return Explanation{}, false
}
