package tui

import (
	"fmt"
)

// Notes are the teaching notes the Explain pane points to, by stable file name under
// notes/. Each explanation names the one that covers it.
var Notes = []string{
	NoteAcks, NoteHW, NoteISR, NoteElection, NoteTruncation, NoteIdempotence, NoteWAL, NoteFaults, NoteClients, NoteReplication,
	NoteQueues, NoteDelivery, NoteDLQ, NoteBackPressure, NoteRouting, NoteOrdering, NoteDelayed, NoteRaft,
	NoteGroups, NoteStatic, NoteAssignors, NoteTags, NoteTransactions, NoteExactlyOnce, NoteReadCommitted, NoteShareGroups, NoteGeo,
}

// Note file names.
const (
	NoteAcks        = "acks.md"
	NoteHW          = "high-watermark.md"
	NoteISR         = "isr.md"
	NoteElection    = "leader-election.md"
	NoteTruncation  = "truncation.md"
	NoteIdempotence = "idempotence.md"
	NoteWAL         = "wal.md"
	NoteFaults      = "faults.md"
	NoteReplication = "replication.md"
	NoteClients     = "clients.md"
	// Transactions: the coordinator, markers and fencing; what exactly-once covers (the
	// consume-transform-produce loop, transactional offsets); what read_committed reads.
	NoteTransactions  = "transactions.md"
	NoteExactlyOnce   = "exactly-once.md"
	NoteReadCommitted = "read-committed.md"
	// Geo-replication: MirrorMaker 2's offset syncs, checkpoints and a group's failover.
	NoteGeo = "geo-replication.md"
)

// Explanation is the current event in plain words.
type Explanation struct {
	Text string
	Note string // a file under notes/, or ""
}

// An explainer says what an event of one package (its type) means; ok is false for events
// it leaves to the others.
type explainer func(run *Run, i int, st *State) (ex Explanation, ok bool)

// explainers are asked in order; the first that knows the event explains it. Those that
// switch on the event's type come first: a kind word alone may be shared (a client's "ack"
// and a broker's).
var explainers = []explainer{explainGroup, explainTxn, explainClient, explainQueue, explainKernel, explainController, explainRaft, explainBroker, explainDelayed, explainPingpong, explainLab, explainReplog, explainRetries}

// Explain says what event i of the run means, given the state right after it.
func Explain(run *Run, i int, st *State) Explanation {
	if i < 0 || i >= len(run.Events) {
		return Explanation{Text: "No event here."}
	}
	for _, explain := range explainers {
		if ex, ok := explain(run, i, st); ok {
			return ex
		}
	}
	e := run.Events[i]
	d := e.Detail
	text := fmt.Sprintf("%s %s", e.Node, e.Kind)
	if d != "" {
		text += ": " + d
	}
	return Explanation{Text: text + "."}
}

// sameStepNext finds the next event of kind by node emitted in the same kernel step as
// event i, or -1.
func sameStepNext(run *Run, i int, node, kind string) int {
	for k := i + 1; k < len(run.Events) && run.Events[k].Step == run.Events[i].Step && run.Events[k].Time == run.Events[i].Time; k++ {
		if run.Events[k].Node == node && run.Events[k].Kind == kind {
			return k
		}
	}
	return -1
}

// scanBack is how far explanations look back for the event that caused another; it
// bounds the cost of explaining one event.
const scanBack = 5_000

// prevSameStep finds the previous event of kind by node emitted in the same kernel step
// as event i, or -1.
func prevSameStep(run *Run, i int, node, kind string) int {
	for k := i - 1; k >= 0 && run.Events[k].Step == run.Events[i].Step && run.Events[k].Time == run.Events[i].Time; k-- {
		if run.Events[k].Node == node && run.Events[k].Kind == kind {
			return k
		}
	}
	return -1
}
