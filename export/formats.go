package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// Format names an export format.
type Format string

// The formats.
const (
	SVG       Format = "svg"       // time-space diagram
	Mermaid   Format = "mermaid"   // sequence diagram for Markdown
	JSONL     Format = "jsonl"     // the trace, one sim.Event per line
	History   Format = "history"   // the client history, JSON lines (model/history)
	Jepsen    Format = "jepsen"    // the client history as Jepsen EDN operations
	Porcupine Format = "porcupine" // porcupine's linearizability visualisation (HTML)
	Metrics   Format = "metrics"   // the operator's figures as a CSV time series
	HTML      Format = "html"      // a page that steps through the run (html.go)
)

// Formats lists every format with what it is, in the order `mqsim export` documents them.
var Formats = []struct {
	Format Format
	What   string
}{
	{SVG, "time-space (Lamport) diagram: a lane per node, an arrow per message, faults on the lanes"},
	{Mermaid, "Mermaid sequence diagram, for Markdown"},
	{JSONL, "the trace, messages included, one JSON event per line (sim.Event)"},
	{History, "the clients' history, JSON lines (what mqsim check reads)"},
	{Jepsen, "the clients' history as Jepsen EDN operations (jepsen.tests.kafka)"},
	{Porcupine, "porcupine's linearizability visualisation, one HTML page"},
	{HTML, "one self-contained page that steps through the run: timeline, cluster, explanation, verdict, diagram"},
	{Metrics, "the figures an operator watches (URP, UnderMinIsr, ISR shrinks ...) as a CSV time series, one row per change"},
}

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	var names []string
	for _, f := range Formats {
		if string(f.Format) == s {
			return f.Format, nil
		}
		names = append(names, string(f.Format))
	}
	return "", fmt.Errorf("--format %q: want one of %s", s, strings.Join(names, ", "))
}

// Diagram reports whether the format draws a window of the trace (and takes Options).
func (f Format) Diagram() bool { return f == SVG || f == Mermaid }

// Windowed reports whether the format exports a window of the trace (--from, --to).
func (f Format) Windowed() bool { return f.Diagram() || f == JSONL }

// DefaultEvents is about how many events (messages included) a format exports when no
// window is given: a whole catalogue scenario in an SVG, a screenful or two in Mermaid.
func (f Format) DefaultEvents() int {
	switch f {
	case Mermaid:
		return 150
	case SVG:
		return 600
	}
	return 1 << 30 // the whole trace
}

// ErrNoHistory is returned for a history format on a run without clients.
var ErrNoHistory = errors.New("the scenario starts no cluster or queue broker, so it has no client history")

// ErrQueueMode is returned for porcupine on a queue broker's history: porcupine checks
// each partition against a sequential log, which a queue (messages removed on ack,
// redelivered, dead-lettered) is not.
var ErrQueueMode = errors.New("porcupine checks histories against a log; a queue broker's history is not one (use --format history or jepsen)")

// WriteJSONLines writes the window's trace events, messages included, one JSON object
// per line; for the whole run it is exactly sim.Trace.WriteJSONLines.
func (r *Run) WriteJSONLines(w io.Writer, win Window) error {
	lo, hi := r.span(win)
	if lo == 0 && hi == len(r.Events) {
		return r.trace.WriteJSONLines(w)
	}
	enc := json.NewEncoder(w)
	for _, e := range r.Events[lo:hi] {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// WriteHistory writes the client history as JSON lines, under a header line
// naming the system it comes from (as mqsim run --history does).
func (r *Run) WriteHistory(w io.Writer) error {
	if r.History == nil {
		return ErrNoHistory
	}
	return history.WriteFile(w, history.File{System: r.Kind.HistorySystem(), Ops: r.History})
}

// WriteJepsen writes the client history as Jepsen EDN.
func (r *Run) WriteJepsen(w io.Writer) error {
	if r.History == nil {
		return ErrNoHistory
	}
	return WriteJepsen(w, r.History)
}

// WritePorcupine writes porcupine's visualisation of the linearizability check of the
// history, with the run's faults marked on its time axis; budget bounds the search.
func (r *Run) WritePorcupine(w io.Writer, budget time.Duration) error {
	if r.History == nil {
		return ErrNoHistory
	}
	if r.Kind == runner.QueueBroker { // porcupine's model is a log
		return ErrQueueMode
	}
	var html bytes.Buffer
	_, err := checker.CheckLinearizable(r.History, checker.LinearizabilityOptions{
		Budget: budget, HTML: &html, Annotations: r.FaultAnnotations(),
	})
	if err != nil {
		return err
	}
	_, err = w.Write(html.Bytes())
	return err
}

// FaultAnnotations are the run's faults as spans of virtual time: a node down from its
// crash to its restart, paused until it resumes, the network partitioned until it heals;
// other faults as moments.
func (r *Run) FaultAnnotations() []checker.Annotation {
	var out []checker.Annotation
	open := map[string]int{} // what is open -> index in out
	end := sim.Time(0)
	if len(r.Events) > 0 {
		end = r.Events[len(r.Events)-1].Time
	}
	closeSpan := func(key string, t sim.Time) {
		if k, ok := open[key]; ok {
			out[k].End = max(int64(t), out[k].Time+1)
			delete(open, key)
		}
	}
	for i, e := range r.Events {
		if r.isMessageEvent(i) {
			continue
		}
		openSpan := func(key, text string) {
			closeSpan(key, e.Time)
			open[key] = len(out)
			out = append(out, checker.Annotation{Time: int64(e.Time), Text: text})
		}
		switch d := e.Data.(type) {
		case sim.NodeCrashed, sim.NodeKilled:
			openSpan(e.Node+" crash", e.Node+" down")
		case sim.NodePaused:
			openSpan(e.Node+" pause", e.Node+" paused")
		case sim.NodeRestarted:
			closeSpan(e.Node+" crash", e.Time)
		case sim.NodeResumed:
			closeSpan(e.Node+" pause", e.Time)
		case sim.Partitioned:
			sides := make([]string, len(d.Groups))
			for k, g := range d.Groups {
				sides[k] = strings.Join(g, " ")
			}
			openSpan("partition", "partition "+strings.Join(sides, " | "))
		case sim.Healed:
			if d.All {
				closeSpan("partition", e.Time)
			} else {
				out = append(out, checker.Annotation{Time: int64(e.Time), Text: fmt.Sprintf("heal %s -> %s", e.Node, e.Peer)})
			}
		case sim.LinkCut, sim.LinkClogged, sim.LinkUnclogged, sim.DropNext, sim.DelayNext, sim.DuplicateNext, sim.HeldReleased, sim.TornArmed, sim.Corrupted:
			text := e.Node + " " + e.Kind
			if e.Peer != "" {
				text += " -> " + e.Peer
			}
			out = append(out, checker.Annotation{Time: int64(e.Time), Text: text})
		}
	}
	keys := make([]string, 0, len(open))
	for k := range open {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		closeSpan(k, end)
	}
	return out
}
