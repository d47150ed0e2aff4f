package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"mqsim/scenarios/script"
	"mqsim/sim"
)

// ForkVerbs are the faults the TUI offers at a step, with examples for the prompt.
var ForkVerbs = []string{
	"crash b1", "restart b1", "pause c1", "resume c1",
	"partition b1 | b2 b3", "cut b1 <-> b2", "heal", "heal b1 <-> b2",
	"clog b1 -> b2", "unclog b1 -> b2", "drop-next b1 -> b2",
}

// Fork records a new run: the parent's script with the fault act scheduled at event at's
// time + 1ns, by an "at" step inserted right after the cluster is built (or, if a node the
// fault names does not exist yet there, at the latest point before the event where it
// does). The parent is not changed.
func Fork(parent *Run, at int, act sim.Action, name string) (*Run, error) {
	plan, err := PlanFork(parent, at, act)
	if err != nil {
		return nil, err
	}
	return plan.Record(context.Background(), name, nil)
}

// ForkPlan is a fork worked out but not yet recorded: the script to replay and where it
// leaves its parent. Working it out is quick; recording it replays the whole script.
type ForkPlan struct {
	Script *script.Script
	Info   ForkInfo
}

// Record replays the fork's script; ctx cancels the replay (the run then ends with an
// error saying so) and progress, if not nil, hears how far it got.
func (p *ForkPlan) Record(ctx context.Context, name string, progress func(Progress)) (*Run, error) {
	run, err := RecordWatched(ctx, name, p.Script, p.Info.Parent.Opts, progress)
	if err != nil {
		return nil, err
	}
	info := p.Info
	run.Fork = &info
	return run, nil
}

// PlanFork checks a fork of parent at event at with the fault act and works out its script
// (see Fork), without recording it.
func PlanFork(parent *Run, at int, act sim.Action) (*ForkPlan, error) {
	if at < 0 || at >= len(parent.Events) {
		return nil, fmt.Errorf("no event %d to fork at", at+1)
	}
	if parent.Session != nil {
		// A fork replays a script; a session's clients are not in it, and would not
		// answer a changed cluster as they did.
		return nil, fmt.Errorf("a served session cannot fork: its clients' requests are not a script; give the fault to mqsim serve while they run")
	}
	act.At = parent.Events[at].Time + 1
	var names []string
	names = append(names, act.Nodes...)
	for _, g := range act.Groups {
		names = append(names, g...)
	}
	for _, n := range names {
		if !slices.Contains(parent.NodeNames(), n) {
			return nil, fmt.Errorf("%s: no node %q (nodes: %s)", act.Command(), n, strings.Join(parent.NodeNames(), " "))
		}
	}
	j := parent.StepOf(at)
	p := -1
	for k := setupEnd(parent.Script); k <= j && k < len(parent.Steps); k++ {
		if containsAll(parent.Steps[k].Nodes, names) && parent.Steps[k].Now <= act.At {
			p = k
			break
		}
	}
	if p < 0 {
		return nil, fmt.Errorf("cannot fork at step %s: the cluster (or a node the fault names) does not exist yet before the command %q; pick a later step",
			parent.stepName(at), parent.Steps[j].Step.Text)
	}
	line := "at " + act.String()
	st, err := script.Parse(parent.Script.Name, fmt.Sprintf("# Fork of %s at step %s (t=%s): %s.\n%s\n----\n",
		parent.Name, parent.stepName(at), parent.Events[at].Time, act.Command(), line))
	if err != nil || len(st.Steps) != 1 {
		return nil, fmt.Errorf("fork: cannot write %q as a scenario step: %v", line, err)
	}
	step := st.Steps[0]
	step.Line = 0
	script := *parent.Script
	script.Steps = slices.Insert(slices.Clone(parent.Script.Steps), p, step)
	return &ForkPlan{Script: &script, Info: ForkInfo{Parent: parent, At: at, Action: act, Inserted: p}}, nil
}

// setupEnd is the index of the first step after the cluster (or queue-broker) command;
// without one, after the leading world, nodes and link commands.
func setupEnd(s *script.Script) int {
	for k, st := range s.Steps {
		if st.Cmd == "cluster" || st.Cmd == "queue-broker" {
			return k + 1
		}
	}
	k := 0
	for k < len(s.Steps) && slices.Contains([]string{"world", "nodes", "link"}, s.Steps[k].Cmd) {
		k++
	}
	return k
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// Transcript renders the run as a scenario file: its script with this run's outputs, as
// `mqsim run` prints it. Saved, it replays the run exactly (with the same options).
func (r *Run) Transcript() string {
	var b strings.Builder
	if r.Opts.SeedSet || len(r.Opts.Set) > 0 {
		fmt.Fprintf(&b, "# Recorded with")
		if r.Opts.SeedSet {
			fmt.Fprintf(&b, " --seed %d", r.Opts.Seed)
		}
		for _, s := range r.Opts.Set {
			fmt.Fprintf(&b, " --set %s", s)
		}
		b.WriteString(": run it with the same options to replay it.\n\n")
	}
	for k, st := range r.Script.Steps {
		if k > 0 {
			b.WriteString("\n")
		}
		switch {
		case k < len(r.Outputs):
			b.WriteString(st.Format(r.Outputs[k]))
		default:
			b.WriteString(st.Format(st.Expected))
		}
	}
	return b.String()
}
