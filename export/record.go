package export

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/datadriven"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// EnvNode is the name the trace gives the world itself: scenario commands come from it,
// network-wide faults happen at it.
const EnvNode = "env"

// Role says what a node is, for colouring.
type Role uint8

// Node roles.
const (
	RoleOther Role = iota
	RoleEnv
	RoleController
	RoleBroker
	RoleClient
)

// Mark is where a diagram flags one of the verdict's violations: the first event of the
// kernel step where it began, or after it (-1 when the trace ends before that step).
type Mark struct {
	V     checker.Violation
	Event int
}

// Marks are the violation marks of the run's verdict, one per violation, in its order.
func (r *Run) Marks() []Mark {
	if r.Report == nil {
		return nil
	}
	var out []Mark
	for _, v := range r.Report.Violations {
		i := -1
		if v.Step > 0 {
			if i = r.firstEventOfStep(int(v.Step)); i == len(r.Events) {
				i = -1
			}
		}
		out = append(out, Mark{V: v, Event: i})
	}
	return out
}

// roleOf colours a node by what the run's system says it is.
func roleOf(r runner.Role) Role {
	switch r {
	case runner.RoleController:
		return RoleController
	case runner.RoleBroker, runner.RoleQueueNode:
		return RoleBroker
	case runner.RoleProducer, runner.RoleConsumer:
		return RoleClient
	}
	return RoleOther
}

// Run is one run of a scenario, recorded for export.
type Run struct {
	// Name is the scenario's name; Seed the run's seed; Hash the trace hash `mqsim run`
	// prints for it (of the run as the scenario traces it).
	Name string
	Seed uint64
	Hash string
	// Events is the trace with every message send, receipt and drop. Each event carries
	// its kernel step (sim.Event.Step), the step number mqsim run, the verdict and the TUI
	// print; events before the first kernel step carry 0.
	Events []sim.Event
	// Steps is the number of kernel steps the run took.
	Steps int
	// Nodes are the world's nodes in the order they were added.
	Nodes []string
	Roles map[string]Role
	// History is the clients' history (nil when the scenario starts neither a cluster nor
	// a queue broker); Kind is the system it comes from and the run judges (0 when it
	// started none).
	History history.History
	Kind    runner.Kind
	// Verdict is the run's one verdict (runner.Runner.Verdict, the one mqsim run prints),
	// nil when the run has nothing to judge; Report is its report.
	Verdict *runner.Verdict
	Report  *checker.Report

	trace *sim.Trace
	// script and opts are what the run was made from, to run it again (ReplicaLogsAt).
	script *script.Script
	opts   runner.Options
	isMsg  []bool // per event: a message send, receipt or drop
	msgs   map[uint64]*message
}

// message pairs the events of one message: its send, its receipts (two when the network
// duplicated it) and its drop.
type message struct {
	id       uint64
	msg      sim.Message
	from, to string
	desc     string // the message as the trace describes it
	send     int    // index in Events, or -1
	recvs    []int
	drop     int // index in Events, or -1
	dropWhy  string
}

// Type is the message's type (see messageType).
func (m *message) Type() string { return messageType(m.msg) }

// messageType names a message's type for --hide and the drawings: sim.MessageKind, the
// name the message faults (drop-next kind=...) match too.
func messageType(msg sim.Message) string { return sim.MessageKind(msg) }

// Record runs the script as written and again with every message traced, and pairs the
// two traces. opts is what `mqsim run` would get (seed, --set, --fix).
func Record(s *script.Script, opts runner.Options) (*Run, error) {
	opts.TraceMode = sim.TraceKeep
	plain, err := runner.Run(s, opts, nil)
	if err != nil {
		return nil, err
	}
	traced, err := runner.Run(WithMessages(s), opts, nil)
	if err != nil {
		return nil, fmt.Errorf("%s with messages traced: %w", s.Name, err)
	}
	pw, tw := plain.Runner.World(), traced.Runner.World()
	if pw.StepHash() != tw.StepHash() || pw.Steps() != tw.Steps() {
		return nil, fmt.Errorf("%s: tracing messages changed the run (%d kernel steps, %d with messages traced)", s.Name, pw.Steps(), tw.Steps())
	}
	r := &Run{
		Name:   displayName(s.Name),
		Seed:   tw.Seed(),
		Hash:   plain.Hash,
		Events: tw.Trace().Events(),
		Steps:  int(tw.Steps()),
		trace:  tw.Trace(),
		script: s,
		opts:   opts,
		Roles:  map[string]Role{EnvNode: RoleEnv},
	}
	if err := r.markMessages(pw.Trace().Events()); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	for i := 0; i < tw.NumNodes(); i++ {
		name := tw.Name(sim.NodeID(i))
		r.Nodes = append(r.Nodes, name)
		r.Roles[name] = RoleOther
	}
	if sys := plain.Runner.System(); sys != nil {
		r.History = sys.History()
		r.Kind = sys.Kind()
		for i, name := range r.Nodes {
			r.Roles[name] = roleOf(sys.Role(sim.NodeID(i)))
		}
	}
	if v, ok := plain.Runner.Verdict(); ok {
		r.Verdict = &v
		r.Report = &r.Verdict.Report
	}
	r.pairMessages()
	return r, nil
}

// displayName is a script's name as a user would type it: a catalogue entry's name, or
// the file's path.
func displayName(name string) string {
	if n, ok := strings.CutPrefix(name, "catalog/"); ok && !strings.Contains(n, "/") {
		return strings.TrimSuffix(n, ".txt")
	}
	return name
}

func sameEvent(a, b sim.Event) bool {
	return a.Step == b.Step && a.Time == b.Time && a.Node == b.Node && a.Kind == b.Kind &&
		a.Peer == b.Peer && a.Msg == b.Msg && a.Detail == b.Detail
}

// WithMessages returns a copy of the script whose world traces every message: its world
// step gets trace-messages=true, or, without one, such a step comes first.
func WithMessages(s *script.Script) *script.Script {
	c := *s
	c.Steps = slices.Clone(s.Steps)
	on := datadriven.CmdArg{Key: "trace-messages", Vals: []string{"true"}}
	for i, st := range c.Steps {
		if st.Cmd == "world" {
			st.Args = append(slices.DeleteFunc(slices.Clone(st.Args), func(a datadriven.CmdArg) bool { return a.Key == on.Key }), on)
			c.Steps[i] = st
			return &c
		}
	}
	world := script.Step{File: s.Name, Cmd: "world", Args: []datadriven.CmdArg{on}, Text: "world trace-messages=true"}
	c.Steps = append([]script.Step{world}, c.Steps...)
	return &c
}

// markMessages finds the world's message events (sends, receipts, drops) among model
// events and faults: the events the plain run does not have, which must be the traced
// run's events with the message events left out. When the script traces messages itself,
// both runs are the same, and the kernel's message events are the ones (a model may name
// an event "send" too).
func (r *Run) markMessages(plain []sim.Event) error {
	r.isMsg = make([]bool, len(r.Events))
	itself := len(plain) == len(r.Events)
	j := 0
	for i, e := range r.Events {
		if j < len(plain) && sameEvent(e, plain[j]) {
			j++
			if !itself {
				continue
			}
		}
		switch e.Data.(type) {
		case sim.Sent, sim.Received, sim.Dropped, sim.Delayed, sim.Duplicated:
			// A delay-next or dup-next fault's strike is recorded only with messages
			// traced, beside the message's send.
			r.isMsg[i] = true
		default:
			if !itself {
				return fmt.Errorf("tracing messages changed the run: %s has no match in the plain run", e)
			}
		}
	}
	if j != len(plain) {
		return fmt.Errorf("tracing messages changed the run: %s has no match in the traced run", plain[j])
	}
	return nil
}

// isMessageEvent reports whether event i is one of the world's message events (a send,
// receipt or drop) rather than a model event or a fault.
func (r *Run) isMessageEvent(i int) bool { return r.isMsg[i] }

func (r *Run) pairMessages() {
	r.msgs = map[uint64]*message{}
	get := func(e sim.Event) *message {
		m := r.msgs[e.Msg]
		if m == nil {
			m = &message{id: e.Msg, send: -1, drop: -1}
			r.msgs[e.Msg] = m
		}
		return m
	}
	for i, e := range r.Events {
		if e.Msg == 0 || !r.isMessageEvent(i) {
			continue
		}
		switch e.Data.(type) {
		case sim.Delayed, sim.Duplicated:
			continue // the message's send, receipts and drop say where it went
		}
		m := get(e)
		switch d := e.Data.(type) {
		case sim.Sent:
			m.send, m.from, m.to, m.msg = i, e.Node, e.Peer, d.Msg
		case sim.Received:
			m.recvs = append(m.recvs, i)
			m.from, m.to, m.msg = e.Peer, e.Node, d.Msg
		case sim.Dropped:
			m.drop = i
			m.from, m.to, m.msg = e.Peer, e.Node, d.Msg
			m.dropWhy = d.Why
		}
		m.desc = sim.Describe(m.msg)
	}
}

// Window is a range of kernel steps, both ends included: the step numbers mqsim run, the
// verdict and mqsim tui print. The window that starts at step 1 also holds the events
// before the first kernel step (the scenario's setup).
type Window struct{ From, To int }

func (w Window) String() string { return fmt.Sprintf("steps %d..%d", w.From, w.To) }

// ErrNoSteps is returned for a window on a run without steps.
var ErrNoSteps = errors.New("the run has no steps")

// CheckWindow validates a window the user asked for; 0 means "not given" for either end.
// A missing end is filled in so that the window holds about budget events (messages
// included), and a window with neither end is DefaultWindow(budget).
func (r *Run) CheckWindow(from, to, budget int) (Window, error) {
	if r.Steps == 0 {
		if from == 0 && to == 0 {
			return Window{}, nil
		}
		return Window{}, ErrNoSteps
	}
	switch {
	case from < 0 || to < 0:
		return Window{}, fmt.Errorf("steps count from 1")
	case from == 0 && to == 0:
		return r.DefaultWindow(budget), nil
	case from > r.Steps:
		return Window{}, fmt.Errorf("--from %d: the run has %d kernel steps", from, r.Steps)
	case to > r.Steps:
		return Window{}, fmt.Errorf("--to %d: the run has %d kernel steps", to, r.Steps)
	case from == 0:
		from = r.extend(to, budget, -1)
	case to == 0:
		to = r.extend(from, budget, +1)
	}
	if to < from {
		return Window{}, fmt.Errorf("--to %d is before --from %d", to, from)
	}
	return Window{from, to}, nil
}

// DefaultWindow is the whole run when it has at most budget events (messages included);
// otherwise a window of about budget events that starts a little before the step of the
// verdict's first violation, or at the start.
func (r *Run) DefaultWindow(budget int) Window {
	if len(r.Events) <= budget {
		return Window{1, r.Steps}
	}
	start := 1
	if k := r.firstViolationStep(); k > 0 {
		// A quarter of the budget before the violation, for what led to it.
		start = r.extend(k, budget/4, -1)
	}
	end := r.extend(start, budget, +1)
	if end == r.Steps { // the end of the run: use the whole budget
		start = r.extend(end, budget, -1)
	}
	return Window{start, end}
}

// extend goes from step k in direction dir (+1 or -1) as far as the window stays within
// budget events, and returns the far end (at least k itself).
func (r *Run) extend(k, budget, dir int) int {
	fits := func(end int) bool {
		lo, hi := r.span(Window{min(k, end), max(k, end)})
		return hi-lo <= budget
	}
	if dir > 0 {
		// The window only grows with its far end: the first end past k that does not fit.
		n := sort.Search(r.Steps-k, func(d int) bool { return !fits(k + d + 1) })
		return k + n
	}
	n := sort.Search(k-1, func(d int) bool { return !fits(k - d - 1) })
	return k - n
}

// firstViolationStep is the earliest kernel step of the verdict's violations, or 0.
func (r *Run) firstViolationStep() int {
	first := 0
	if r.Report == nil {
		return 0
	}
	for _, v := range r.Report.Violations {
		if k := int(v.Step); k > 0 && (first == 0 || k < first) {
			first = k
		}
	}
	return first
}

// span is the range of event indices [lo, hi) a window covers: the events of its kernel
// steps, messages included. The window from step 1 also takes the events before it.
func (r *Run) span(w Window) (lo, hi int) {
	if r.Steps == 0 || w.From == 0 {
		return 0, len(r.Events)
	}
	lo = r.firstEventOfStep(max(w.From, 1))
	if w.From <= 1 {
		lo = 0
	}
	hi = r.firstEventOfStep(w.To + 1)
	if lo == hi && hi < len(r.Events) {
		// Steps with no event (a timer that changed nothing anyone traces): the window
		// shows the next step that has some, where a violation dated in the quiet steps
		// (a liveness deadline passing) is marked.
		hi = r.firstEventOfStep(int(r.Events[lo].Step) + 1)
	}
	return lo, hi
}

// firstEventOfStep is the index of the first event of kernel step k or after it
// (len(Events) when there is none): the trace is in step order.
func (r *Run) firstEventOfStep(k int) int {
	return sort.Search(len(r.Events), func(i int) bool { return r.Events[i].Step >= uint64(k) })
}

// SpanEvents are the events of a window, messages included.
func (r *Run) SpanEvents(w Window) []sim.Event {
	lo, hi := r.span(w)
	return r.Events[lo:hi]
}
