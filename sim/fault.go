package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Verb is the kind of a fault-plan action.
type Verb string

const (
	VerbCrash     Verb = "crash"      // crash NODE...: power loss of the node (unsynced bytes lost)
	VerbKill      Verb = "kill"       // kill NODE...: the process dies, the page cache survives
	VerbRestart   Verb = "restart"    // restart NODE...
	VerbPause     Verb = "pause"      // pause NODE...
	VerbResume    Verb = "resume"     // resume NODE...
	VerbPartition Verb = "partition"  // partition A B | C D ...
	VerbCut       Verb = "cut"        // cut A -> B, or A <-> B
	VerbHeal      Verb = "heal"       // heal (every link), or heal A -> B, A <-> B
	VerbClog      Verb = "clog"       // clog A -> B, or A <-> B
	VerbUnclog    Verb = "unclog"     // unclog A -> B, or A <-> B
	VerbDropNext  Verb = "drop-next"  // drop-next A -> B [kind=K] [count=N]
	VerbDelayNext Verb = "delay-next" // delay-next A -> B for=D [kind=K] [count=N]
	VerbDupNext   Verb = "dup-next"   // dup-next A -> B [kind=K] [count=N]
	VerbRelease   Verb = "release"    // release A -> B [kind=K] [count=N]: some of a clog's held messages
	VerbTorn      Verb = "torn"       // torn NODE [corrupt]: the node's next crash tears its unsynced tail
	VerbCorrupt   Verb = "corrupt"    // corrupt NODE FILE OFF LEN: flip bytes, synced or not
)

// Verbs lists every verb with its argument shape, for help texts and error messages, and
// the key=value arguments it takes.
var Verbs = []struct {
	Verb  Verb
	Usage string
	Keys  []string
}{
	{VerbCrash, "crash NODE...", nil},
	{VerbKill, "kill NODE...", nil},
	{VerbRestart, "restart NODE...", nil},
	{VerbPause, "pause NODE...", nil},
	{VerbResume, "resume NODE...", nil},
	{VerbPartition, "partition NODE... | NODE... [| NODE...]", nil},
	{VerbCut, "cut A -> B | cut A <-> B", nil},
	{VerbHeal, "heal | heal A -> B | heal A <-> B", nil},
	{VerbClog, "clog A -> B | clog A <-> B", nil},
	{VerbUnclog, "unclog A -> B | unclog A <-> B", nil},
	{VerbDropNext, "drop-next A -> B [kind=K] [count=N] (the next N messages, of kind K if given, are lost; N defaults to 1)", msgKeys},
	{VerbDelayNext, "delay-next A -> B for=D [kind=K] [count=N] (the next N messages, of kind K if given, arrive D late, overtaken by later ones)", msgKeys},
	{VerbDupNext, "dup-next A -> B [kind=K] [count=N] (the next N messages, of kind K if given, arrive twice)", msgKeys},
	{VerbRelease, "release A -> B [kind=K] [count=N] (deliver the first N held messages of a clogged link, or all of kind K; it stays clogged)", msgKeys[:2]},
	{VerbTorn, "torn NODE [corrupt]", nil},
	{VerbCorrupt, "corrupt NODE FILE OFFSET LENGTH", nil},
}

// msgKeys are the arguments of the message faults (drop-next, delay-next, dup-next,
// release): the message kind, how many, and for delay-next how long.
var msgKeys = []string{"kind", "count", "for"}

// isMessageFault reports whether v acts on individual messages of a link.
func isMessageFault(v Verb) bool {
	return v == VerbDropNext || v == VerbDelayNext || v == VerbDupNext || v == VerbRelease
}

// Action is one timed fault: plain data that prints as one line and parses back.
type Action struct {
	At   Time
	Verb Verb
	// Nodes are the nodes acted on: the targets of crash, restart, pause, resume, torn and
	// corrupt; for link verbs, [from, to].
	Nodes []string
	// Both makes a link verb act in both directions (A <-> B).
	Both bool
	// Groups are the sides of a partition.
	Groups [][]string
	// File, Off and Len locate a corruption.
	File     string
	Off, Len int64
	// Count is how many messages a message fault strikes (drop-next, delay-next and
	// dup-next: at least 1; release: 0 means every held message of the kind).
	Count int
	// MsgKind limits a message fault to one kind of message (MessageKind); "" is any.
	MsgKind string
	// Delay is how late delay-next makes each message.
	Delay time.Duration
	// Corrupt makes a torn write also flip a byte.
	Corrupt bool
}

func (a Action) linkArgs() string {
	arrow := "->"
	if a.Both {
		arrow = "<->"
	}
	return a.Nodes[0] + " " + arrow + " " + a.Nodes[1]
}

// String renders the action as a plan line: "1.5s crash b1".
func (a Action) String() string {
	return a.At.String() + " " + a.Command()
}

// Command renders the action without its time: "crash b1".
func (a Action) Command() string {
	v := string(a.Verb)
	switch a.Verb {
	case VerbCrash, VerbKill, VerbRestart, VerbPause, VerbResume:
		return v + " " + strings.Join(a.Nodes, " ")
	case VerbPartition:
		var gs []string
		for _, g := range a.Groups {
			gs = append(gs, strings.Join(g, " "))
		}
		return v + " " + strings.Join(gs, " | ")
	case VerbHeal:
		if len(a.Nodes) == 0 {
			return v
		}
		return v + " " + a.linkArgs()
	case VerbCut, VerbClog, VerbUnclog:
		return v + " " + a.linkArgs()
	case VerbDropNext, VerbDelayNext, VerbDupNext, VerbRelease:
		out := v + " " + a.linkArgs()
		if a.Verb == VerbDelayNext {
			out += " for=" + FormatDuration(a.Delay)
		}
		if a.MsgKind != "" {
			out += " kind=" + a.MsgKind
		}
		if a.Count != 1 && !(a.Verb == VerbRelease && a.Count == 0) {
			out += fmt.Sprintf(" count=%d", a.Count)
		}
		return out
	case VerbTorn:
		if a.Corrupt {
			return v + " " + a.Nodes[0] + " corrupt"
		}
		return v + " " + a.Nodes[0]
	case VerbCorrupt:
		return fmt.Sprintf("%s %s %s %d %d", v, a.Nodes[0], a.File, a.Off, a.Len)
	}
	return v
}

// Plan is a fault plan: actions in time order (ties keep their written order).
type Plan []Action

// String renders the plan, one action per line.
func (p Plan) String() string {
	var b strings.Builder
	for _, a := range p {
		b.WriteString(a.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// ParsePlan reads a plan: one action per line ("TIME VERB ARGS"), blank lines and lines
// starting with # ignored. Errors name the line (counting from 1) and what was expected.
func ParsePlan(text string) (Plan, error) {
	var plan Plan
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		at, rest, _ := strings.Cut(line, " ")
		d, err := ParseDuration(at)
		if err != nil {
			return nil, &PlanError{i + 1, fmt.Errorf("%v (each line is TIME VERB ARGS, e.g. \"1.5s crash b1\")", err)}
		}
		a, err := ParseAction(strings.Fields(rest))
		if err != nil {
			return nil, &PlanError{i + 1, err}
		}
		a.At = Time(d)
		if n := len(plan); n > 0 && a.At < plan[n-1].At {
			return nil, &PlanError{i + 1, fmt.Errorf("time %s is before the previous action's %s; write the plan in time order", a.At, plan[n-1].At)}
		}
		plan = append(plan, a)
	}
	return plan, nil
}

// PlanError is a plan parse error at a line of the plan text (counting from 1).
type PlanError struct {
	Line int
	Err  error
}

func (e *PlanError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *PlanError) Unwrap() error { return e.Err }

// ParseAction reads an action's verb and arguments (without a time).
func ParseAction(words []string) (Action, error) {
	if len(words) == 0 {
		return Action{}, fmt.Errorf("missing fault verb; want one of %s", verbNames())
	}
	a := Action{Verb: Verb(words[0])}
	args := words[1:]
	usage := ""
	for _, v := range Verbs {
		if v.Verb == a.Verb {
			usage = v.Usage
		}
	}
	if usage == "" {
		return Action{}, fmt.Errorf("unknown fault verb %q; want one of %s", words[0], verbNames())
	}
	bad := func(why string) (Action, error) {
		return Action{}, fmt.Errorf("%s: %s; usage: %s", a.Verb, why, usage)
	}
	switch a.Verb {
	case VerbCrash, VerbKill, VerbRestart, VerbPause, VerbResume:
		if len(args) == 0 {
			return bad("missing node")
		}
		for _, n := range args {
			if !validName(n) {
				return bad(fmt.Sprintf("bad node name %q", n))
			}
		}
		a.Nodes = args
	case VerbPartition:
		var g []string
		for _, w := range append(args, "|") {
			if w != "|" {
				if !validName(w) {
					return bad(fmt.Sprintf("bad node name %q", w))
				}
				g = append(g, w)
				continue
			}
			if len(g) == 0 {
				return bad("empty group")
			}
			a.Groups = append(a.Groups, g)
			g = nil
		}
		if len(a.Groups) < 2 {
			return bad("need at least two groups separated by |")
		}
	case VerbHeal, VerbCut, VerbClog, VerbUnclog, VerbDropNext, VerbDelayNext, VerbDupNext, VerbRelease:
		if a.Verb == VerbHeal && len(args) == 0 {
			return a, nil
		}
		if len(args) < 3 || (args[1] != "->" && args[1] != "<->") || !validName(args[0]) || !validName(args[2]) {
			return bad("want A -> B or A <-> B")
		}
		a.Nodes, a.Both = []string{args[0], args[2]}, args[1] == "<->"
		rest := args[3:]
		if isMessageFault(a.Verb) {
			var err error
			if rest, err = a.parseMessageFault(rest); err != nil {
				return bad(err.Error())
			}
		}
		if len(rest) > 0 {
			return bad(fmt.Sprintf("unexpected %q", strings.Join(rest, " ")))
		}
	case VerbTorn:
		if len(args) < 1 || len(args) > 2 || !validName(args[0]) || (len(args) == 2 && args[1] != "corrupt") {
			return bad("want a node, optionally followed by the word corrupt")
		}
		a.Nodes, a.Corrupt = args[:1], len(args) == 2
	case VerbCorrupt:
		if len(args) != 4 || !validName(args[0]) {
			return bad("want NODE FILE OFFSET LENGTH")
		}
		off, err1 := strconv.ParseInt(args[2], 10, 64)
		n, err2 := strconv.ParseInt(args[3], 10, 64)
		if err1 != nil || err2 != nil || off < 0 || n <= 0 {
			return bad("OFFSET must be >= 0 and LENGTH > 0, both integers")
		}
		a.Nodes, a.File, a.Off, a.Len = args[:1], args[1], off, n
	}
	return a, nil
}

// parseMessageFault reads a message fault's arguments: kind=K, count=N and (delay-next)
// for=D, in any order; drop-next also takes its count as a bare number, as it always did.
// It returns the words it did not understand.
func (a *Action) parseMessageFault(args []string) ([]string, error) {
	a.Count = 1
	if a.Verb == VerbRelease {
		a.Count = 0
	}
	counted, timed := false, false
	if a.Verb == VerbDropNext && len(args) > 0 && !strings.Contains(args[0], "=") {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("count %q is not a positive integer", args[0])
		}
		a.Count, args, counted = n, args[1:], true
	}
	var rest []string
	for _, w := range args {
		key, val, ok := strings.Cut(w, "=")
		switch {
		case !ok:
			rest = append(rest, w)
		case key == "kind":
			if a.MsgKind != "" || !validKind(val) {
				return nil, fmt.Errorf("kind=%q: want one message kind, a name such as AlterPartitionResponse", val)
			}
			a.MsgKind = val
		case key == "count":
			n, err := strconv.Atoi(val)
			if counted || err != nil || n < 1 {
				return nil, fmt.Errorf("count %q is not a positive integer (or is given twice)", val)
			}
			a.Count, counted = n, true
		case key == "for" && a.Verb == VerbDelayNext:
			d, err := ParseDuration(val)
			if timed || err != nil || d <= 0 {
				return nil, fmt.Errorf("for=%q: want one positive duration such as 500ms", val)
			}
			a.Delay, timed = d, true
		default:
			return nil, fmt.Errorf("unknown argument %s=", key)
		}
	}
	if a.Verb == VerbDelayNext && !timed {
		return nil, fmt.Errorf("missing for=D, how late each message arrives")
	}
	return rest, nil
}

// validKind reports whether s can name a message kind: letters, digits, - and _.
func validKind(s string) bool {
	return validName(s) && !strings.Contains(s, ".")
}

func verbNames() string {
	var names []string
	for _, v := range Verbs {
		names = append(names, string(v.Verb))
	}
	return strings.Join(names, ", ")
}

func validName(s string) bool {
	if s == "" || s == "|" || s == "->" || s == "<->" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// resolve maps the action's node names to ids.
func (w *World) resolve(names []string) ([]NodeID, error) {
	ids := make([]NodeID, len(names))
	for i, n := range names {
		id, ok := w.byName[n]
		if !ok {
			return nil, fmt.Errorf("%w: %q (nodes: %s)", ErrUnknownNode, n, strings.Join(w.names(), ", "))
		}
		ids[i] = id
	}
	return ids, nil
}

// ErrUnknownNode is returned when an action names a node the world does not have.
var ErrUnknownNode = fmt.Errorf("unknown node")

func (w *World) names() []string {
	names := make([]string, len(w.nodes))
	for i := range w.nodes {
		names[i] = w.nodes[i].name
	}
	return names
}

// Check reports the first name in the action that the world does not know.
func (w *World) Check(a Action) error {
	if _, err := w.resolve(a.Nodes); err != nil {
		return err
	}
	for _, g := range a.Groups {
		if _, err := w.resolve(g); err != nil {
			return err
		}
	}
	return nil
}

// Apply executes an action now, whatever its At.
func (w *World) Apply(a Action) error {
	if err := w.Check(a); err != nil {
		return fmt.Errorf("%s: %w", a.Command(), err)
	}
	w.apply(a)
	return nil
}

// apply executes a checked action.
func (w *World) apply(a Action) {
	ids, _ := w.resolve(a.Nodes)
	link := func(f func(from, to NodeID)) {
		f(ids[0], ids[1])
		if a.Both {
			f(ids[1], ids[0])
		}
	}
	switch a.Verb {
	case VerbCrash:
		for _, id := range ids {
			w.Crash(id)
		}
	case VerbKill:
		for _, id := range ids {
			w.Kill(id)
		}
	case VerbRestart:
		for _, id := range ids {
			w.Restart(id)
		}
	case VerbPause:
		for _, id := range ids {
			w.Pause(id)
		}
	case VerbResume:
		for _, id := range ids {
			w.Resume(id)
		}
	case VerbPartition:
		groups := make([][]NodeID, len(a.Groups))
		for i, g := range a.Groups {
			groups[i], _ = w.resolve(g)
		}
		w.Partition(groups...)
	case VerbCut:
		link(w.Cut)
	case VerbHeal:
		if len(ids) == 0 {
			w.Heal()
		} else {
			link(w.HealLink)
		}
	case VerbClog:
		link(w.Clog)
	case VerbUnclog:
		link(w.Unclog)
	case VerbDropNext:
		link(func(from, to NodeID) { w.DropNextKind(from, to, a.MsgKind, a.Count) })
	case VerbDelayNext:
		link(func(from, to NodeID) { w.DelayNext(from, to, a.MsgKind, a.Count, a.Delay) })
	case VerbDupNext:
		link(func(from, to NodeID) { w.DuplicateNext(from, to, a.MsgKind, a.Count) })
	case VerbRelease:
		link(func(from, to NodeID) { w.Release(from, to, a.MsgKind, a.Count) })
	case VerbTorn:
		w.nodes[ids[0]].disk.TearNextCrash(a.Corrupt)
		fault(w, ids[0], External, TornArmed{})
	case VerbCorrupt:
		if err := w.nodes[ids[0]].disk.Corrupt(a.File, a.Off, a.Len); err != nil {
			fault(w, ids[0], External, Corrupted{Err: err.Error()})
		} else {
			fault(w, ids[0], External, Corrupted{File: a.File, Off: a.Off, Len: a.Len})
		}
	}
}

// SchedulePlan checks every action of the plan against the world's nodes and schedules
// each at its time (actions in the past run now). Nothing is scheduled if any action is
// invalid.
func (w *World) SchedulePlan(p Plan) error {
	for _, a := range p {
		if err := w.Check(a); err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
	}
	for _, a := range p {
		w.plan = append(w.plan, a)
		at := max(a.At, w.now)
		w.schedule(event{at: at, kind: evAction, id: uint64(len(w.plan) - 1)})
	}
	return nil
}

// Plan returns every action scheduled so far, in the order scheduled.
func (w *World) Plan() Plan { return w.plan }

// After is a convenience for building plans in code: an action d after time zero.
func After(d time.Duration, verb Verb, words ...string) (Action, error) {
	a, err := ParseAction(append([]string{string(verb)}, words...))
	a.At = Time(d)
	return a, err
}
