package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mqsim/sim"
)

// Notes are the teaching notes the Explain pane points to, by stable file name under
// notes/. Each explanation names the one that covers it.
var Notes = []string{
	NoteAcks, NoteHW, NoteISR, NoteElection, NoteTruncation, NoteIdempotence, NoteWAL, NoteFaults, NoteClients,
	NoteQueues, NoteDelivery, NoteDLQ, NoteBackPressure, NoteRouting, NoteOrdering, NoteDelayed, NoteRaft,
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
	NoteClients     = "clients.md"
)

// Explanation is the current event in plain words.
type Explanation struct {
	Text string
	Note string // a file under notes/, or ""
}

var (
	reAppend    = regexp.MustCompile(`^(\S+): offsets (\d+)\.\.(\d+) in epoch (\d+) \(acks=(\S+) from (\S+)\), LEO (\d+)`)
	reReplicate = regexp.MustCompile(`^(\S+): offsets (\d+)\.\.(\d+) from (\S+), LEO (\d+)`)
	reFsync     = regexp.MustCompile(`^(\S+): offsets below (\d+) are on disk`)
	reAck       = regexp.MustCompile(`^(\S+): offset (\d+) to (\S+) \(acks=(\S+), HW (\d+)\)`)
	reHW        = regexp.MustCompile(`^(\S+): HW (\d+) -> (\d+)(?: \(from (\S+)\))?`)
	reElection  = regexp.MustCompile(`^(\S+): (\S+) leads in epoch (\d+), ISR (\[[^\]]*\]) \((.*)\)$`)
	reUnclean   = regexp.MustCompile(`^(\S+): UNCLEAN election of (\S+), epoch (\d+): .*\((.*)\)$`)
	reLeader    = regexp.MustCompile(`^(\S+): leader in epoch (\d+), LEO (\d+), HW (\d+), ISR (\[[^\]]*\])`)
	reFollower  = regexp.MustCompile(`^(\S+): follows (\S+) in epoch (\d+), LEO (\d+), HW (\d+)`)
	reISRChange = regexp.MustCompile(`^(\S+): ISR (\[[^\]]*\]) -> (\[[^\]]*\]) \((.*)\)$`)
	reTruncate  = regexp.MustCompile(`^(\S+): (.*): removed offsets (\d+)\.\.(\d+)$`)
	reClientAck = regexp.MustCompile(`^(\S+) offsets? (\d+)`)
)

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// An explainer says what an event of one package (its type) means; ok is false for events
// it leaves to the others.
type explainer func(run *Run, i int, st *State) (ex Explanation, ok bool)

// explainers are asked in order; the first that knows the event explains it.
var explainers = []explainer{explainQueue, explainKernel, explainController, explainRaft, explainBroker, explainGroup, explainClient}

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

// explainBrokerAck says why a leader's answer came when it did.
func explainBrokerAck(run *Run, i int, m []string) Explanation {
	e := run.Events[i]
	tp, off, to, acks, hw := m[1], atoi(m[2]), m[3], m[4], atoi(m[5])
	appended := -1
	for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
		a := run.Events[k]
		if a.Kind == "append" && a.Node == e.Node {
			if am := reAppend.FindStringSubmatch(a.Detail); am != nil && am[1] == tp && atoi(am[2]) == off {
				appended = k
				break
			}
		}
	}
	var text string
	if acks == "all" || acks == "-1" {
		text = fmt.Sprintf("%s answers %s for offset %s of %s with acks=all. It held the answer until the high watermark (%d) passed the batch: every in-sync replica has it, so losing any one of them cannot lose it.",
			e.Node, to, m[2], tp, hw)
	} else {
		text = fmt.Sprintf("%s answers %s for offset %s of %s with acks=%s, after its own append only. The high watermark is %d: ", e.Node, to, m[2], tp, acks, hw)
		if hw > off {
			text += "this time the followers already have the record."
		} else {
			text += fmt.Sprintf("offset %d is NOT committed, only %s has it. If %s fails before a follower copies it, this acknowledged write is lost.", off, e.Node, e.Node)
		}
	}
	if appended >= 0 {
		a := run.Events[appended]
		text += fmt.Sprintf(" It waited %s since the append (step %d)", sim.FormatDuration(e.Time.Sub(a.Time)), a.Step)
		if k := prevSameStep(run, i, e.Node, "fsync"); k >= 0 {
			text += ", the last part for its fsync (flush=every-batch)"
		}
		text += "."
	}
	return Explanation{text, NoteAcks}
}

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

// explainHW says why the high watermark moved.
func explainHW(run *Run, i int, st *State, e sim.Event, m []string) Explanation {
	tp, from, to, leader := m[1], m[2], m[3], m[4]
	if leader != "" {
		return Explanation{fmt.Sprintf("%s follows %s and learns from the leader's fetch response that the high watermark of %s is now %s (it was %s). "+
			"Followers learn the HW one fetch behind the leader, so for a moment they report an older one.", e.Node, leader, tp, to, from), NoteHW}
	}
	var isr []string
	for _, p := range st.Parts {
		if p.Name() == tp {
			isr = p.ISR
		}
	}
	text := fmt.Sprintf("%s leads %s and raises its high watermark from %s to %s: every member of the ISR %s now has the offsets below %s, so they are committed. "+
		"Consumers may read them, and no clean election can lose them.", e.Node, tp, from, to, "["+strings.Join(isr, " ")+"]", to)
	// Which follower's progress moved it: the last ISR member to replicate up to the HW.
	hw := atoi(to)
	last, lastName := -1, ""
	for _, name := range isr {
		if name == e.Node {
			continue
		}
		for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
			r := run.Events[k]
			if r.Node != name || (r.Kind != "replicate" && r.Kind != "follower") {
				continue
			}
			// The member's latest report for the partition says whether it had got there.
			leo := int64(-1)
			if rm := reReplicate.FindStringSubmatch(r.Detail); rm != nil && rm[1] == tp {
				leo = atoi(rm[5])
			} else if fm := reFollower.FindStringSubmatch(r.Detail); fm != nil && fm[1] == tp {
				leo = atoi(fm[4])
			} else {
				continue
			}
			if leo >= hw && k > last {
				last, lastName = k, name
			}
			break
		}
	}
	if last >= 0 && slices.Contains(isr, lastName) {
		text += fmt.Sprintf(" The last in-sync follower to get there was %s (step %d); the leader learned it from %s's next fetch.", lastName, run.Events[last].Step, lastName)
	}
	return Explanation{text, NoteHW}
}
