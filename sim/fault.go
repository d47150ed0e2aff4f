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
	VerbCrash     Verb = "crash"     // crash NODE...: power loss of the node (unsynced bytes lost)
	VerbKill      Verb = "kill"      // kill NODE...: the process dies, the page cache survives
	VerbRestart   Verb = "restart"   // restart NODE...
	VerbPause     Verb = "pause"     // pause NODE...
	VerbResume    Verb = "resume"    // resume NODE...
	VerbPartition Verb = "partition" // partition A B | C D ...
	VerbCut       Verb = "cut"       // cut A -> B, or A <-> B
	VerbHeal      Verb = "heal"      // heal (every link), or heal A -> B, A <-> B
	VerbClog      Verb = "clog"      // clog A -> B, or A <-> B
	VerbUnclog    Verb = "unclog"    // unclog A -> B, or A <-> B
	VerbDropNext  Verb = "drop-next" // drop-next A -> B [N]
	VerbTorn      Verb = "torn"      // torn NODE [corrupt]: the node's next crash tears its unsynced tail
	VerbCorrupt   Verb = "corrupt"   // corrupt NODE FILE OFF LEN: flip bytes, synced or not
)

// Verbs lists every verb with its argument shape, for help texts and error messages.
var Verbs = []struct {
	Verb  Verb
	Usage string
}{
	{VerbCrash, "crash NODE..."},
	{VerbKill, "kill NODE..."},
	{VerbRestart, "restart NODE..."},
	{VerbPause, "pause NODE..."},
	{VerbResume, "resume NODE..."},
	{VerbPartition, "partition NODE... | NODE... [| NODE...]"},
	{VerbCut, "cut A -> B | cut A <-> B"},
	{VerbHeal, "heal | heal A -> B | heal A <-> B"},
	{VerbClog, "clog A -> B | clog A <-> B"},
	{VerbUnclog, "unclog A -> B | unclog A <-> B"},
	{VerbDropNext, "drop-next A -> B [N]"},
	{VerbTorn, "torn NODE [corrupt]"},
	{VerbCorrupt, "corrupt NODE FILE OFFSET LENGTH"},
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
	// Count is how many messages drop-next drops.
	Count int
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
	case VerbDropNext:
		return fmt.Sprintf("%s %s %d", v, a.linkArgs(), a.Count)
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
	case VerbHeal, VerbCut, VerbClog, VerbUnclog, VerbDropNext:
		if a.Verb == VerbHeal && len(args) == 0 {
			return a, nil
		}
		if len(args) < 3 || (args[1] != "->" && args[1] != "<->") || !validName(args[0]) || !validName(args[2]) {
			return bad("want A -> B or A <-> B")
		}
		a.Nodes, a.Both = []string{args[0], args[2]}, args[1] == "<->"
		rest := args[3:]
		if a.Verb == VerbDropNext {
			a.Count = 1
			if len(rest) > 0 {
				n, err := strconv.Atoi(rest[0])
				if err != nil || n < 1 {
					return bad(fmt.Sprintf("count %q is not a positive integer", rest[0]))
				}
				a.Count, rest = n, rest[1:]
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
		link(func(from, to NodeID) { w.DropNext(from, to, a.Count) })
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
