package export

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"mqsim/checker"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// The HTML page of a run (--format html): one self-contained file that steps through the
// recording the terminal UI shows, with the cluster at each event, the explanation, the
// verdict and the time-space diagram around the current step. The terminal UI's
// recording and words come from package tui, a peer of export: the caller (cmd/mqsim)
// records the run with it and passes what its panes show as a Recording. Everything the
// page shows is computed here, in Go, and embedded as one JSON document; the page's
// script only looks things up in it.

// Recording is what the terminal UI shows of a run, event by event: its trace (the run
// as written, without the message events the diagrams add), the view at each event, and
// the events its ] and [ keys jump between.
type Recording struct {
	Events []sim.Event
	// View is what the panes show right after event i.
	View func(i int) StepView
	// Jumps are the TUI's jump groups, in the order its t key cycles through them.
	Jumps []JumpGroup
}

// JumpGroup is one group of events ] and [ jump between.
type JumpGroup struct {
	Name   string
	Events []int
}

// StepView is what the terminal UI's panes show at one event.
type StepView struct {
	// Explanation is the event in plain words; Note the file under notes/ it points to.
	Explanation, Note string
	Nodes             []NodeRow
	Parts             []PartRow
	// Lines are the other panes' lines as the TUI writes them: Clients (producers,
	// consumers, pipelines, groups), Queues (a queue broker's Cluster pane), Network.
	Clients, Queues, Network []string
}

// NodeRow is one node: its role, status ("up", "down", ...) and a quorum member's state.
type NodeRow struct {
	Name, Role, Status, Quorum string
}

// PartRow is one partition: the controller's word (leader, epoch, ISR) and each
// broker's replica.
type PartRow struct {
	Name     string
	Leader   string
	Epoch    int32
	ISR      []string
	Stale    bool
	Replicas []ReplicaRow
}

// ReplicaRow is one broker's copy of a partition: its offsets and the records it holds.
type ReplicaRow struct {
	Broker                         string
	Hosted, Down, Leader           bool
	Epoch                          int32
	HW, LSO, LEO, LogStart, Synced int64
	// Records are the labels of the records at offsets LogStart..LEO-1 (a transaction
	// marker's label is its type, COMMIT or ABORT, with Control set).
	Records []RecordCell
}

// RecordCell is one record of a replica's strip.
type RecordCell struct {
	Label   string
	Epoch   int32
	Control bool
}

// stripMax is how many records of a replica the page keeps at each event: the last
// ones, where the HW and LEO are.
const stripMax = 24

// diagramEvents is about how many events (messages included) one of the page's
// diagrams holds: the page draws the run in windows of about this many and shows the
// window of the current step.
const diagramEvents = 160

// pageData is the JSON the page reads. Field names are short: the page's size matters.
type pageData struct {
	Name    string       `json:"name"`
	Seed    uint64       `json:"seed"`
	Hash    string       `json:"hash"`
	Steps   int          `json:"steps"`   // kernel steps of the run
	Start   int          `json:"start"`   // the event the page opens on
	Notes   []string     `json:"notes"`   // interned note names
	Texts   []string     `json:"texts"`   // interned explanations
	Rows    []any        `json:"rows"`    // interned rows of views
	Views   [][]int      `json:"views"`   // interned views: nodes, parts, clients, queues, network, each its row count then its rows' ids
	Events  [][]any      `json:"ev"`      // per event: step, time, node, kind, detail, text, note, view, diagram window, where in it (‰)
	Jumps   []JumpGroup  `json:"jumps"`   // ] and [ groups
	Verdict *pageVerdict `json:"verdict"` // nil when the run has nothing to judge
	Diagram []pageSVG    `json:"svg"`
}

type pageVerdict struct {
	Result     string          `json:"result"`
	Failures   []string        `json:"failures"`
	Allowed    []string        `json:"allowed"`
	Violations []pageViolation `json:"violations"`
}

type pageViolation struct {
	Anomaly  string `json:"anomaly"`
	Subject  string `json:"subject"`
	Step     uint64 `json:"step"`  // kernel step where it began (0: unknown)
	Event    int    `json:"event"` // the page's event there, or -1
	Promised bool   `json:"promised"`
	Text     string `json:"text"`
}

// pageSVG is one diagram window, its SVG gzipped and in base64 (the page inflates it
// with the browser's DecompressionStream): SVG text shrinks about tenfold, and the
// diagrams are most of a page.
type pageSVG struct {
	From int    `json:"from"`
	To   int    `json:"to"`
	Gzip string `json:"gz"`
}

// interner gives equal values one id.
type interner struct {
	ids  map[string]int
	vals []any
}

func (in *interner) id(v any) int {
	b, _ := json.Marshal(v)
	k := string(b)
	if id, ok := in.ids[k]; ok {
		return id
	}
	if in.ids == nil {
		in.ids = map[string]int{}
	}
	in.ids[k] = len(in.vals)
	in.vals = append(in.vals, v)
	return len(in.vals) - 1
}

// buildPage computes everything the page shows.
func (r *Run) buildPage(rec Recording, command string) (*pageData, error) {
	p := &pageData{Name: r.Name, Seed: r.Seed, Hash: r.Hash, Steps: r.Steps, Jumps: rec.Jumps}
	var notes, texts, rows, views interner
	notes.id("") // id 0: no note
	for i, e := range rec.Events {
		v := rec.View(i)
		var ids []int
		section := func(n int, row func(k int) any) {
			ids = append(ids, n)
			for k := range n {
				ids = append(ids, rows.id(row(k)))
			}
		}
		section(len(v.Nodes), func(k int) any { return v.Nodes[k] })
		section(len(v.Parts), func(k int) any { return pagePart(v.Parts[k]) })
		section(len(v.Clients), func(k int) any { return v.Clients[k] })
		section(len(v.Queues), func(k int) any { return v.Queues[k] })
		section(len(v.Network), func(k int) any { return v.Network[k] })
		p.Events = append(p.Events, []any{e.Step, e.Time.String(), e.Node, e.Kind, e.Detail,
			texts.id(v.Explanation), notes.id(v.Note), views.id(ids)})
	}
	for _, t := range texts.vals {
		p.Texts = append(p.Texts, t.(string))
	}
	for _, n := range notes.vals {
		p.Notes = append(p.Notes, n.(string))
	}
	p.Rows = rows.vals
	for _, v := range views.vals {
		p.Views = append(p.Views, v.([]int))
	}
	p.Verdict = r.pageVerdict(rec.Events)
	p.Start = startEvent(p.Verdict, rec.Events)
	var err error
	if p.Diagram, err = r.pageDiagrams(command); err != nil {
		return nil, err
	}
	at, err := r.diagramRows(len(rec.Events), p.Diagram)
	if err != nil {
		return nil, err
	}
	for i := range p.Events {
		p.Events[i] = append(p.Events[i], at[i][0], at[i][1])
	}
	return p, nil
}

// diagramRows places each of the recording's n events in the page's diagrams: the window
// that draws it and how far down it is drawn, in thousandths of the window's events (the
// page scrolls there). The recording is the run without message events, so its events
// are the model events and faults of r.Events, in order.
func (r *Run) diagramRows(n int, windows []pageSVG) ([][2]int, error) {
	var at [][2]int
	w := 0
	for i := range r.Events {
		if r.isMessageEvent(i) {
			continue
		}
		k := max(int(r.Events[i].Step), 1)
		for w < len(windows)-1 && k > windows[w].To {
			w++
		}
		lo, hi := r.span(Window{windows[w].From, windows[w].To})
		at = append(at, [2]int{w, (i - lo) * 1000 / max(hi-lo, 1)})
	}
	if len(at) != n {
		return nil, fmt.Errorf("%s: the recording has %d events, the export's run %d besides its messages: not the same run", r.Name, n, len(at))
	}
	return at, nil
}

// pagePart is a partition row as the page stores it: the replicas' strips cut to their
// last stripMax records.
func pagePart(pr PartRow) map[string]any {
	reps := make([]map[string]any, len(pr.Replicas))
	for k, rv := range pr.Replicas {
		recs := rv.Records
		first := rv.LogStart
		if cut := len(recs) - stripMax; cut > 0 {
			recs, first = recs[cut:], first+int64(cut)
		}
		cells := make([][]any, len(recs))
		for j, c := range recs {
			cells[j] = []any{c.Label, c.Epoch, c.Control}
		}
		reps[k] = map[string]any{"b": rv.Broker, "hosted": rv.Hosted, "down": rv.Down, "leader": rv.Leader, "epoch": rv.Epoch,
			"hw": rv.HW, "lso": rv.LSO, "leo": rv.LEO, "start": rv.LogStart, "synced": rv.Synced, "first": first, "recs": cells}
	}
	return map[string]any{"name": pr.Name, "leader": pr.Leader, "epoch": pr.Epoch, "isr": pr.ISR, "stale": pr.Stale, "reps": reps}
}

// pageVerdict is the run's one verdict, each violation placed on the recording's first
// event of the kernel step where it began.
func (r *Run) pageVerdict(events []sim.Event) *pageVerdict {
	if r.Verdict == nil {
		return nil
	}
	v := &pageVerdict{Result: string(r.Report.Result)}
	failures, allowed := r.Verdict.Classify()
	for _, a := range failures {
		v.Failures = append(v.Failures, string(a))
	}
	for _, a := range allowed {
		v.Allowed = append(v.Allowed, string(a))
	}
	for _, x := range r.Report.Violations {
		v.Violations = append(v.Violations, pageViolation{Anomaly: string(x.Anomaly), Subject: r.subject(x), Step: x.Step,
			Event: eventOfStep(events, x.Step), Promised: r.Verdict.Promised(x.Anomaly), Text: x.Text})
	}
	return v
}

// subject is what a violation is about: a partition, or a queue broker's queue.
func (r *Run) subject(x checker.Violation) string {
	if r.Kind == runner.QueueBroker { // queues have no partitions
		return x.Topic
	}
	return fmt.Sprintf("%s/%d", x.Topic, x.Partition)
}

// eventOfStep is the first event of kernel step k or after it, or -1 (k is 0, or the
// trace ends before it).
func eventOfStep(events []sim.Event, k uint64) int {
	if k == 0 {
		return -1
	}
	for i, e := range events {
		if e.Step >= k {
			return i
		}
	}
	return -1
}

// startEvent is the event the page opens on, the run's key moment: where the first
// violation (by step) begins; in a run without one, its first fault; else the start.
func startEvent(v *pageVerdict, events []sim.Event) int {
	start := -1
	if v != nil {
		for _, x := range v.Violations {
			if x.Event >= 0 && (start < 0 || x.Event < start) {
				start = x.Event
			}
		}
	}
	if start < 0 {
		start = slices.IndexFunc(events, func(e sim.Event) bool { return classify(e) == classFault })
	}
	return max(start, 0)
}

// pageDiagrams draws the run in consecutive windows of about diagramEvents events, with
// export's SVG diagram as `mqsim export --format svg --from --to` draws each.
func (r *Run) pageDiagrams(command string) ([]pageSVG, error) {
	var out []pageSVG
	for k := 1; k <= r.Steps; {
		w := Window{From: k, To: r.extend(k, diagramEvents, +1)}
		var b bytes.Buffer
		if err := r.WriteSVG(&b, Options{Window: w, Command: command}); err != nil {
			return nil, err
		}
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		if _, err := zw.Write(b.Bytes()); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		out = append(out, pageSVG{From: w.From, To: w.To, Gzip: base64.StdEncoding.EncodeToString(z.Bytes())})
		k = w.To + 1
	}
	return out, nil
}

//go:embed html_page.html
var pageTemplate string

// pageDataMarker is where the page template takes its JSON.
const pageDataMarker = "/*PAGE-DATA*/"

// WriteHTML writes the page of the run: rec is the terminal UI's recording of the same
// run (see Recording); command is the export's command line, written into the page.
func (r *Run) WriteHTML(w io.Writer, rec Recording, command string) error {
	if len(rec.Events) == 0 {
		return fmt.Errorf("%s: the run has no events to show", r.Name)
	}
	p, err := r.buildPage(rec, command)
	if err != nil {
		return err
	}
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false) // smaller; only "</" must not close the script
	if err := enc.Encode(p); err != nil {
		return err
	}
	js := strings.ReplaceAll(strings.TrimSpace(data.String()), "</", `<\/`)
	before, after, ok := strings.Cut(pageTemplate, pageDataMarker)
	if !ok {
		return fmt.Errorf("the page template has no %s", pageDataMarker)
	}
	title := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(r.Name)
	before = strings.Replace(before, "{{TITLE}}", title, 1)
	// The window the page opens on is written into the page as it is, so the first
	// screen shows its diagram at once, before any window is inflated (and a browser's
	// screenshot at load shows it too).
	first, err := r.startDiagram(p, command)
	if err != nil {
		return err
	}
	before = strings.Replace(before, `<div id="diagram"></div>`, first, 1)
	_, err = io.WriteString(w, before+js+after)
	return err
}

// startDiagram is the diagram box of the page's start event, its window's SVG inside.
func (r *Run) startDiagram(p *pageData, command string) (string, error) {
	if len(p.Diagram) == 0 || p.Start >= len(p.Events) {
		return `<div id="diagram"></div>`, nil
	}
	ev := p.Events[p.Start]
	win := ev[len(ev)-2].(int)
	var b bytes.Buffer
	if err := r.WriteSVG(&b, Options{Window: Window{From: p.Diagram[win].From, To: p.Diagram[win].To}, Command: command}); err != nil {
		return "", err
	}
	return fmt.Sprintf(`<div id="diagram" data-window="%d">%s</div>`, win, b.String()), nil
}
