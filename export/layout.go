package export

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"mqsim/sim"
)

// Options shape a diagram (SVG or Mermaid).
type Options struct {
	// Window is the steps to draw (see Run.CheckWindow).
	Window Window
	// Nodes, when set, are the only nodes drawn (the environment is drawn whenever a
	// drawn event involves it). Events of other nodes, and messages to or from them,
	// are left out.
	Nodes []string
	// Hide lists message types not to draw, by the message's Go type without its
	// package: "BrokerHeartbeat", "Metadata", "FetchRequest", ...
	Hide []string
	// Command is the command line that made the diagram; it is written into it.
	Command string
}

// layout is what both diagrams draw: the lanes and the events kept, in order.
type layout struct {
	r      *Run
	o      Options
	lo, hi int      // the window's events: [lo, hi)
	lanes  []string // drawn lanes, left to right
	laneAt map[string]int
	rows   []int       // indices of the events drawn, in order
	rowOf  map[int]int // event index -> row
}

// checkNodes names any chosen node the run does not have.
func (r *Run) checkNodes(nodes []string) error {
	for _, n := range nodes {
		if n != EnvNode && !slices.Contains(r.Nodes, n) {
			return fmt.Errorf("--nodes: no node %q in this run (nodes: %s)", n, strings.Join(r.Nodes, ", "))
		}
	}
	return nil
}

// checkHide names any --hide type that no message of the run has: a misspelt type
// would otherwise hide nothing, silently.
func (r *Run) checkHide(types []string) error {
	if len(types) == 0 {
		return nil
	}
	have := map[string]bool{}
	for _, m := range r.msgs {
		have[m.Type()] = true
	}
	for i, e := range r.Events {
		if r.isMessageEvent(i) && e.Msg == 0 {
			have[envMessageType(e)] = true
		}
	}
	for _, t := range types {
		if !have[t] {
			return fmt.Errorf("--hide: no message of type %q in this run (types: %s)", t, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
		}
	}
	return nil
}

func (r *Run) layout(o Options) (*layout, error) {
	if err := r.checkNodes(o.Nodes); err != nil {
		return nil, err
	}
	if err := r.checkHide(o.Hide); err != nil {
		return nil, err
	}
	l := &layout{r: r, o: o, laneAt: map[string]int{}, rowOf: map[int]int{}}
	l.lo, l.hi = r.span(o.Window)
	shown := func(n string) bool {
		return n == EnvNode || len(o.Nodes) == 0 || slices.Contains(o.Nodes, n)
	}
	usesEnv := false
	for i := l.lo; i < l.hi; i++ {
		if !l.keep(i, shown) {
			continue
		}
		l.rowOf[i] = len(l.rows)
		l.rows = append(l.rows, i)
		if l.touchesEnv(i) {
			usesEnv = true
		}
	}
	if usesEnv {
		l.lanes = append(l.lanes, EnvNode)
	}
	first := r.firstEvent()
	for _, n := range r.Nodes {
		if n == EnvNode || !shown(n) {
			continue
		}
		// A node that appears only after the window gets no lane, unless asked for.
		if f, ok := first[n]; (!ok || f >= l.hi) && len(o.Nodes) == 0 {
			continue
		}
		l.lanes = append(l.lanes, n)
	}
	for i, n := range l.lanes {
		l.laneAt[n] = i
	}
	return l, nil
}

// keep decides whether event i is drawn.
func (l *layout) keep(i int, shown func(string) bool) bool {
	r := l.r
	e := r.Events[i]
	if !r.isMessageEvent(i) {
		return shown(e.Node)
	}
	if e.Msg == 0 { // to or from the environment
		return shown(e.Node) && !slices.Contains(l.o.Hide, envMessageType(e))
	}
	m := r.msgs[e.Msg]
	return m != nil && shown(m.from) && shown(m.to) && !slices.Contains(l.o.Hide, m.Type())
}

// touchesEnv reports whether event i is drawn on or from the environment's lane.
func (l *layout) touchesEnv(i int) bool {
	e := l.r.Events[i]
	return e.Node == EnvNode || (l.r.isMessageEvent(i) && e.Msg == 0)
}

// envMessageType is the type of a message to or from the environment.
func envMessageType(e sim.Event) string {
	switch d := e.Data.(type) {
	case sim.Sent:
		return messageType(d.Msg)
	case sim.Received:
		return messageType(d.Msg)
	}
	return ""
}

// messages are the messages with an event drawn in the window, by first event.
func (l *layout) messages() []*message {
	seen := map[uint64]bool{}
	var ms []*message
	for _, i := range l.rows {
		e := l.r.Events[i]
		if !l.r.isMessageEvent(i) || e.Msg == 0 || seen[e.Msg] {
			continue
		}
		seen[e.Msg] = true
		ms = append(ms, l.r.msgs[e.Msg])
	}
	return ms
}

// Kinds of events, for colouring and symbols.
type eventClass uint8

const (
	classModel   eventClass = iota
	classFault              // a fault that breaks something: crash, partition, cut, ...
	classHeal               // a fault that ends: restart, heal, resume, unclog
	classBad                // an invariant broken, a rejected or lost request
	classGood               // an acknowledgement, a high watermark moving
	classLeader             // elections, leadership, ISR changes, fencing
	classStorage            // appends, replication, fsync, recovery, truncation
)

func classify(e sim.Event) eventClass {
	switch e.Kind {
	case "crash", "partition", "cut", "clog", "pause", "drop-next", "delay-next", "dup-next", "torn-armed", "corrupt":
		return classFault
	case "restart", "heal", "resume", "unclog", "release":
		return classHeal
	case "invariant", "reject", "fail", "timeout", "truncation", "produce-error", "commit-rejected",
		"commit-failed", "commit-unfenced", "fenced", "partitions-lost", "max-poll-exceeded", "member-expired":
		return classBad
	case "ack", "hw", "stable", "committed-offsets":
		return classGood
	case "election", "leader", "follower", "fence", "isr", "isr-propose", "isr-rejected", "offline",
		"register", "controller", "coordinator", "coordinator-lost", "rebalance", "assignment", "assigned":
		return classLeader
	case "append", "replicate", "fsync", "recover", "truncate", "dedup", "commit":
		return classStorage
	}
	return classModel
}

// eventText is an event as one line of text, without its time.
func (l *layout) eventText(i int) string {
	r := l.r
	e := r.Events[i]
	if r.isMessageEvent(i) {
		switch d := e.Data.(type) {
		case sim.Sent:
			if d.ToEnv {
				return fmt.Sprintf("%s → env: %s", e.Node, sim.Describe(d.Msg))
			}
			return fmt.Sprintf("%s → %s #%d: %s", e.Node, e.Peer, e.Msg, e.Detail)
		case sim.Received:
			if e.Msg == 0 {
				return fmt.Sprintf("env → %s: %s", e.Node, e.Detail)
			}
			return fmt.Sprintf("%s ← %s #%d: %s", e.Node, e.Peer, e.Msg, e.Detail)
		case sim.Dropped:
			return fmt.Sprintf("%s ✕ %s #%d lost: %s", e.Node, e.Peer, e.Msg, e.Detail)
		}
	}
	s := e.Node + " " + e.Kind
	if e.Peer != "" {
		s += " → " + e.Peer
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// clip shortens s to at most n characters, marking the cut with an ellipsis.
func clip(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n-1]) + "…"
}

// status is a node's state at some moment, for drawing its lane.
type status uint8

const (
	statusUp status = iota
	statusDown
	statusPaused
)

// statusChange is what event e does to its node's status, if anything.
func statusChange(e sim.Event) (status, bool) {
	switch e.Data.(type) {
	case sim.NodeCrashed, sim.NodeKilled:
		return statusDown, true
	case sim.NodeRestarted, sim.NodeResumed:
		return statusUp, true
	case sim.NodePaused:
		return statusPaused, true
	}
	return 0, false
}

// statusBefore is every node's status just before event i.
func (r *Run) statusBefore(i int) map[string]status {
	st := map[string]status{}
	for k := 0; k < i; k++ {
		e := r.Events[k]
		if r.isMessageEvent(k) {
			continue
		}
		if s, ok := statusChange(e); ok {
			st[e.Node] = s
		}
	}
	return st
}

// firstEvent is, per node, the index of the first event it takes part in.
func (r *Run) firstEvent() map[string]int {
	first := map[string]int{}
	for i, e := range r.Events {
		for _, n := range []string{e.Node, e.Peer} {
			if _, ok := first[n]; !ok && n != "" {
				first[n] = i
			}
		}
	}
	return first
}

// summary is one line about the run's checks.
func (r *Run) summary() string {
	if r.Report == nil {
		return "no check in the scenario"
	}
	rep := r.Report
	if len(rep.Violations) == 0 {
		return fmt.Sprintf("check: %s", rep.Result)
	}
	var names []string
	for _, v := range rep.Violations {
		if !slices.Contains(names, string(v.Anomaly)) {
			names = append(names, string(v.Anomaly))
		}
	}
	return fmt.Sprintf("check: %s, %d violations (%s)", rep.Result, len(rep.Violations), strings.Join(names, ", "))
}
