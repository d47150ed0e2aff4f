package runner

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// Kernel-level commands: the world, nodes, links, faults, running and looking.

// NodeKinds maps a kind name to the factory of its nodes, for the nodes command. Model
// packages' kinds are added where their commands are registered.
var nodeKinds = map[string]sim.NodeFactory{}

func registerKind(name string, f sim.NodeFactory) { nodeKinds[name] = f }

func kindNames() string {
	var names []string
	for k := range nodeKinds {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Show subjects: "show disk b1", "show nodes"; model packages add theirs.
var showSubjects = map[string]func(r *Runner, a *Args, words []string) (string, error){}

func subjectNames() string {
	var names []string
	for k := range showSubjects {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func init() {
	register(&Command{
		Name:  "world",
		Usage: "world [seed=N] [latency=D] [jitter=D] [in-order=BOOL] [drop=P] [dup=P] [capacity=N] [fsync=D] [fsync-jitter=D] [torn=P] [corrupt=P] [trace-messages=BOOL]",
		Help:  "configure the simulated world; must come before anything that uses it",
		Keys:  []string{"seed", "latency", "jitter", "in-order", "drop", "dup", "capacity", "fsync", "fsync-jitter", "torn", "corrupt", "trace-messages"},
		Run:   cmdWorld,
	})
	register(&Command{
		Name:  "nodes",
		Usage: "nodes kind=KIND names=(A, B, ...)",
		Help:  "add nodes of one kind",
		Keys:  []string{"kind", "names"},
		Run:   cmdNodes,
	})
	register(&Command{
		Name:  "link",
		Usage: "link A -> B | A <-> B | all [latency=D] [jitter=D] [in-order=BOOL] [drop=P] [dup=P] [capacity=N] [bandwidth=RATE]",
		Help:  "change one link's (or every link's) latency, jitter, loss, duplication, capacity or bandwidth (over the world's costs)",
		Keys:  []string{"latency", "jitter", "in-order", "drop", "dup", "capacity", "bandwidth"},
		Run:   cmdLink,
	})
	for _, v := range sim.Verbs {
		register(&Command{Name: string(v.Verb), Usage: v.Usage, Keys: v.Keys,
			Help: "fault: apply now (in a cluster, leader:T/P and follower:T/P name whichever broker holds that role now)", Run: cmdFault})
	}
	register(&Command{
		Name:  "disk-fault",
		Usage: "disk-fault NODE torn [corrupt] | disk-fault NODE corrupt FILE OFFSET LENGTH",
		Help:  "fault: the node's next crash tears its unsynced writes, or bit rot flips bytes now",
		Run:   cmdDiskFault,
	})
	register(&Command{
		Name:  "at",
		Usage: "at TIME FAULT... (e.g. at 1.5s crash b1, at 2s drop-next ctl -> b1 kind=LeaderAndIsr)",
		Help:  "schedule a fault at an absolute virtual time",
		Keys:  []string{"kind", "count", "for"},
		Run:   cmdAt,
	})
	register(&Command{
		Name:  "plan",
		Usage: "plan, with one fault per input line: TIME FAULT...",
		Help:  "schedule a whole fault plan (absolute times)",
		Run:   cmdPlan,
	})
	register(&Command{
		Name:  "run",
		Usage: "run for=D | until=TIME | steps=N | until-change=(isr, leader) [partition=T/P] [limit=D]",
		Help:  "advance the simulation; until-change stops right after the controller commits an ISR change or a new leader (epoch) of the partition (of any, if none named), or after limit (default 10s)",
		Keys:  []string{"for", "until", "steps", "until-change", "partition", "limit"},
		Run:   cmdRun,
	})
	register(&Command{
		Name:  "stabilize",
		Usage: "stabilize [limit=D]",
		Help:  "run until nothing is pending, or until limit (default 10s) of virtual time passes",
		Keys:  []string{"limit"},
		Run:   cmdStabilize,
	})
	register(&Command{
		Name:  "trace",
		Usage: "trace [kinds=(K, ...)] [nodes=(N, ...)]",
		Help:  "print the trace events recorded since the previous trace command",
		Keys:  []string{"kinds", "nodes"},
		Run:   cmdTrace,
	})
	register(&Command{
		Name:  "stats",
		Usage: "stats [A -> B]",
		Help:  "network counters, over all links or one",
		Run:   cmdStats,
	})
	register(&Command{
		Name:  "show",
		Usage: "show SUBJECT [ARGS] (subjects: disk NODE [cache], nodes, and those of the loaded models)",
		Help:  "print a view of the current state",
		Run:   cmdShow,
	})
	showSubjects["disk"] = showDisk
	showSubjects["nodes"] = showNodes
}

func cmdWorld(r *Runner, a *Args) (string, error) {
	if r.Started() {
		return "", fmt.Errorf("the world already exists; put world before any command that uses it")
	}
	cfg := r.cfg
	seed, err := a.Int("seed", -1, 0, 1<<62)
	if err != nil {
		return "", err
	}
	if seed >= 0 && !r.opts.SeedSet {
		cfg.Seed = uint64(seed)
	}
	if err := readLink(a, &cfg.Link); err != nil {
		return "", err
	}
	d := &cfg.Disk
	for _, f := range []func() error{
		func() (err error) { d.FsyncLatency, err = a.Duration("fsync", d.FsyncLatency); return },
		func() (err error) { d.FsyncJitter, err = a.Duration("fsync-jitter", d.FsyncJitter); return },
		func() (err error) { d.Torn, err = a.Prob("torn", d.Torn); return },
		func() (err error) { d.Corrupt, err = a.Prob("corrupt", d.Corrupt); return },
		func() (err error) { cfg.TraceMessages, err = a.Bool("trace-messages", cfg.TraceMessages); return },
	} {
		if err := f(); err != nil {
			return "", err
		}
	}
	r.cfg = cfg
	r.World()
	return fmt.Sprintf("seed=%d\nlinks: %s\ndisks: %s\ntrace-messages=%t", cfg.Seed, cfg.Link, cfg.Disk, cfg.TraceMessages), nil
}

func cmdNodes(r *Runner, a *Args) (string, error) {
	kind, err := a.Required("kind")
	if err != nil {
		return "", err
	}
	f := nodeKinds[kind]
	if f == nil {
		return "", fmt.Errorf("unknown node kind %q; want one of %s", kind, kindNames())
	}
	names := a.List("names")
	if len(names) == 0 {
		return "", fmt.Errorf("missing argument names=; usage: %s", a.cmd.Usage)
	}
	w := r.World()
	for _, n := range names {
		if _, err := w.AddNode(n, f); err != nil {
			return "", err
		}
	}
	w.RunFor(0) // start them now, so the next command sees them up
	return fmt.Sprintf("added %s: %s", kind, strings.Join(names, ", ")), nil
}

// linkWords reads "A -> B" or "A <-> B" into the directed links it names.
func (r *Runner) linkWords(words []string) ([][2]sim.NodeID, error) {
	if len(words) != 3 || (words[1] != "->" && words[1] != "<->") {
		return nil, fmt.Errorf("want A -> B or A <-> B, got %q", strings.Join(words, " "))
	}
	from, err := r.node(words[0])
	if err != nil {
		return nil, err
	}
	to, err := r.node(words[2])
	if err != nil {
		return nil, err
	}
	links := [][2]sim.NodeID{{from, to}}
	if words[1] == "<->" {
		links = append(links, [2]sim.NodeID{to, from})
	}
	return links, nil
}

func cmdLink(r *Runner, a *Args) (string, error) {
	w := r.World()
	if words := a.Words(); len(words) == 1 && words[0] == "all" {
		if err := w.SetLinks(func(c *sim.LinkConfig) error { return readLink(a, c) }); err != nil {
			return "", err
		}
		return "every link, and links of nodes added later, changed", nil
	}
	links, err := r.linkWords(a.Words())
	if err != nil {
		return "", err
	}
	var out []string
	for _, ln := range links {
		c := w.Link(ln[0], ln[1])
		if err := readLink(a, &c); err != nil {
			return "", err
		}
		w.SetLink(ln[0], ln[1], c)
		out = append(out, fmt.Sprintf("%s -> %s: %s", w.Name(ln[0]), w.Name(ln[1]), c))
	}
	return strings.Join(out, "\n"), nil
}

// readLink overrides the fields of c that the step's arguments name.
func readLink(a *Args, c *LinkConfig) error {
	for _, f := range []func() error{
		func() (err error) { c.Latency, err = a.Duration("latency", c.Latency); return },
		func() (err error) { c.Jitter, err = a.Duration("jitter", c.Jitter); return },
		func() (err error) { c.InOrder, err = a.Bool("in-order", c.InOrder); return },
		func() (err error) { c.Drop, err = a.Prob("drop", c.Drop); return },
		func() (err error) { c.Dup, err = a.Prob("dup", c.Dup); return },
		func() (err error) { c.Capacity, err = a.Int("capacity", c.Capacity, 0, 1<<30); return },
		func() error { return byteCost(a, "bandwidth", sim.ParseRate, &c.Bandwidth) },
	} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// LinkConfig is sim's, named here for readLink's signature.
type LinkConfig = sim.LinkConfig

// cmdFault applies a fault now and prints the trace events it caused.
func cmdFault(r *Runner, a *Args) (string, error) {
	fw, err := faultWords(a)
	if err != nil {
		return "", err
	}
	words, err := r.resolveRoles(fw)
	var vacant *vacantRole
	if errors.As(err, &vacant) {
		// Nobody holds the role now (a generated script cannot know in advance): the
		// fault has no target, and the transcript says so.
		return fmt.Sprintf("nothing done: %v", vacant), nil
	}
	if err != nil {
		return "", err
	}
	act, err := sim.ParseAction(append([]string{a.step.Cmd}, words...))
	if err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), a.step.Cmd+": "))
	}
	return r.applyNow(act)
}

// resolveRoles replaces leader:T/P and follower:T/P by the broker that holds the role in
// the controller's view now (the follower: the first in-sync replica, in replica order,
// that is not the leader); a *vacantRole error if nobody does. A fault aimed at a role hits whoever holds it when it runs,
// which a script written in advance (a swarm's) cannot know; the trace shows the name.
func (r *Runner) resolveRoles(words []string) ([]string, error) {
	out := slices.Clone(words)
	for i, w := range words {
		role, tpText, ok := strings.Cut(w, ":")
		if !ok || role != "leader" && role != "follower" {
			continue
		}
		c, err := r.needCluster()
		if err != nil {
			return nil, fmt.Errorf("%s: roles name a cluster's brokers: %w", w, err)
		}
		tp, err := proto.ParseTP(tpText)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w, err)
		}
		parts := c.Partitions()
		if len(parts) == 0 {
			return nil, &vacantRole{fmt.Sprintf("%s: no controller knows the partitions now (controllers down or recovering)", w)}
		}
		k := slices.IndexFunc(parts, func(p proto.PartitionState) bool { return p.TP == tp })
		if k < 0 {
			if t, ok := c.Topic(tp.Topic); ok && tp.Partition >= 0 && int(tp.Partition) < t.Partitions {
				// Created, but the controller whose view is read now has not applied that
				// yet (a quorum member that fell behind, the others down).
				return nil, &vacantRole{fmt.Sprintf("%s: the controller's view does not know %s yet", w, tp)}
			}
			return nil, fmt.Errorf("%s: the controller knows no partition %s", w, tp)
		}
		p := parts[k]
		holder := p.Leader
		if role == "follower" {
			holder = proto.NoLeader
			for _, id := range p.Replicas {
				if id != p.Leader && slices.Contains(p.ISR, id) {
					holder = id
					break
				}
			}
		}
		if holder == proto.NoLeader {
			return nil, &vacantRole{fmt.Sprintf("%s: %s has no %s now (isr %d of %d replicas)", w, tp, role, len(p.ISR), len(p.Replicas))}
		}
		out[i] = r.World().Name(holder)
	}
	return out, nil
}

// vacantRole is a role (leader:T/P, follower:T/P) nobody holds now.
type vacantRole struct{ why string }

func (v *vacantRole) Error() string { return v.why }

// applyNow applies a fault action now and prints the trace events it caused.
func (r *Runner) applyNow(act sim.Action) (string, error) {
	w := r.World()
	if err := w.Check(act); err != nil {
		return "", err
	}
	mark := w.Trace().Len()
	w.Apply(act)
	return formatEvents(w.Trace().Since(mark)), nil
}

// cmdDiskFault is the torn and corrupt faults under one name, node first.
func cmdDiskFault(r *Runner, a *Args) (string, error) {
	words := a.Words()
	if len(words) < 2 || (words[1] != "torn" && words[1] != "corrupt") {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	act, err := sim.ParseAction(append([]string{words[1], words[0]}, words[2:]...))
	if err != nil {
		return "", err
	}
	return r.applyNow(act)
}

// faultWords are a fault command's words as the fault plan writes them: the bare words,
// then its key=value arguments (a message fault's kind=, count=, for=).
func faultWords(a *Args) ([]string, error) {
	words := a.Words()
	for _, k := range a.cmd.Keys {
		if !a.Has(k) {
			continue
		}
		v, err := a.String(k, "")
		if err != nil {
			return nil, err
		}
		words = append(words, k+"="+v)
	}
	return words, nil
}

func cmdAt(r *Runner, a *Args) (string, error) {
	words, err := faultWords(a)
	if err != nil {
		return "", err
	}
	if len(words) < 2 {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	plan, err := sim.ParsePlan(strings.Join(words, " "))
	var pe *sim.PlanError
	if errors.As(err, &pe) {
		return "", pe.Err
	}
	return r.schedule(plan)
}

func cmdPlan(r *Runner, a *Args) (string, error) {
	plan, err := sim.ParsePlan(a.Input())
	var pe *sim.PlanError
	if errors.As(err, &pe) {
		return "", fmt.Errorf("line %d of the plan (file line %d): %v", pe.Line, a.step.Line+pe.Line, pe.Err)
	}
	if len(plan) == 0 {
		return "", fmt.Errorf("empty plan: write one fault per line under the command, e.g. \"1.5s crash b1\"")
	}
	return r.schedule(plan)
}

func (r *Runner) schedule(plan sim.Plan) (string, error) {
	w := r.World()
	for _, act := range plan {
		if act.At < w.Now() {
			return "", fmt.Errorf("%s is in the past (now %s)", act, w.Now())
		}
	}
	if err := w.SchedulePlan(plan); err != nil {
		return "", err
	}
	return "scheduled:\n" + strings.TrimRight(plan.String(), "\n"), nil
}

func cmdRun(r *Runner, a *Args) (string, error) {
	w := r.World()
	forD, err := a.Duration("for", -1)
	if err != nil {
		return "", err
	}
	until, err := a.Duration("until", -1)
	if err != nil {
		return "", err
	}
	steps, err := a.Int("steps", -1, 1, int(r.commandSteps()))
	if err != nil {
		return "", err
	}
	given := 0
	for _, v := range []int64{int64(forD), int64(until), int64(steps)} {
		if v >= 0 {
			given++
		}
	}
	if a.Has("until-change") {
		given++
	}
	if given != 1 {
		return "", fmt.Errorf("give exactly one of for=, until=, steps=, until-change=; usage: %s", a.cmd.Usage)
	}
	if a.Has("until-change") {
		return runUntilChange(r, a)
	}
	start := w.Steps()
	switch {
	case forD >= 0:
		err = r.runUntilTime("run for="+sim.FormatDuration(forD), w.Now().Add(forD))
	case until >= 0:
		if sim.Time(until) < w.Now() {
			return "", fmt.Errorf("until=%s is in the past (now %s)", sim.Time(until), w.Now())
		}
		err = r.runUntilTime("run until="+sim.Time(until).String(), sim.Time(until))
	default:
		end := start + uint64(steps)
		_, err = r.wait(fmt.Sprintf("run steps=%d", steps), func(w *sim.World) bool { return w.Steps() >= end }, uint64(steps), sim.MaxTime)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("now %s, %d steps run", w.Now(), w.Steps()-start), nil
}

// runUntilChange runs until the controller's view of some partition changes in one of
// the named ways (isr: its ISR; leader: its leader or leader epoch), so that the next
// command strikes at that moment: before the brokers have heard of the change.
func runUntilChange(r *Runner, a *Args) (string, error) {
	whats := a.List("until-change")
	var isr, leader bool
	for _, w := range whats {
		switch w {
		case "isr":
			isr = true
		case "leader":
			leader = true
		default:
			return "", fmt.Errorf("until-change=%s: want isr, leader or (isr, leader)", w)
		}
	}
	if !isr && !leader {
		return "", fmt.Errorf("until-change= names no change: want isr, leader or (isr, leader)")
	}
	limit, err := a.Duration("limit", 10*time.Second)
	if err != nil {
		return "", err
	}
	var only *proto.TP
	if tpText, err := a.String("partition", ""); err != nil {
		return "", err
	} else if tpText != "" {
		tp, err := proto.ParseTP(tpText)
		if err != nil {
			return "", fmt.Errorf("partition=%s: %w", tpText, err)
		}
		only = &tp
	}
	c, err := r.needCluster()
	if err != nil {
		return "", fmt.Errorf("until-change watches a cluster's partitions: %w", err)
	}
	w := r.World()
	before := c.Partitions()
	changed := ""
	done := func(*sim.World) bool {
		now := c.Partitions()
		for _, p := range now {
			k := slices.IndexFunc(before, func(q proto.PartitionState) bool { return q.TP == p.TP })
			if k < 0 || (only != nil && p.TP != *only) {
				continue // a new partition is not a change of one
			}
			q := before[k]
			switch {
			case leader && (p.Leader != q.Leader || p.LeaderEpoch != q.LeaderEpoch):
				changed = fmt.Sprintf("%s: leader %s in epoch %d", p.TP, w.Name(p.Leader), p.LeaderEpoch)
			case isr && !slices.Equal(p.ISR, q.ISR):
				changed = fmt.Sprintf("%s: ISR %s", p.TP, idNames(w, p.ISR))
			default:
				continue
			}
			return true
		}
		return false
	}
	start := w.Steps()
	if !w.RunUntilBy(done, w.Now().Add(limit)) {
		return fmt.Sprintf("now %s, %d steps run, no change within %s", w.Now(), w.Steps()-start, limit), nil
	}
	return fmt.Sprintf("now %s, %d steps run, until %s", w.Now(), w.Steps()-start, changed), nil
}

func cmdStabilize(r *Runner, a *Args) (string, error) {
	limit, err := a.Duration("limit", 10_000_000_000)
	if err != nil {
		return "", err
	}
	w := r.World()
	start := w.Steps()
	end := w.Now().Add(limit)
	if _, err := r.wait("stabilize", func(w *sim.World) bool { next, ok := w.NextAt(); return !ok || next > end }, math.MaxUint64, sim.MaxTime); err != nil {
		return "", err
	}
	if w.Pending() == 0 {
		return fmt.Sprintf("quiet at %s after %d steps", w.Now(), w.Steps()-start), nil
	}
	w.RunUntilTime(end) // nothing is due by end: this only moves the clock there, as Stabilize does
	return fmt.Sprintf("not quiet by %s: %d events pending after %d steps", w.Now(), w.Pending(), w.Steps()-start), nil
}

func cmdTrace(r *Runner, a *Args) (string, error) {
	w := r.World()
	kinds, nodes := a.List("kinds"), a.List("nodes")
	var keep []sim.Event
	for _, e := range w.Trace().Since(r.traceMark) {
		if (len(kinds) == 0 || slices.Contains(kinds, e.Kind)) && (len(nodes) == 0 || slices.Contains(nodes, e.Node)) {
			keep = append(keep, e)
		}
	}
	r.traceMark = w.Trace().Len()
	if len(keep) == 0 {
		return "no events", nil
	}
	return formatEvents(keep), nil
}

func formatEvents(es []sim.Event) string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.String())
	}
	return b.String()
}

func cmdStats(r *Runner, a *Args) (string, error) {
	w := r.World()
	s := w.NetStats()
	label := "all links"
	if words := a.Words(); len(words) > 0 {
		links, err := r.linkWords(words)
		if err != nil {
			return "", err
		}
		s = sim.LinkStats{}
		for _, ln := range links {
			s = s.Add(w.LinkStats(ln[0], ln[1]))
		}
		label = strings.Join(words, " ")
	}
	return fmt.Sprintf("%s: sent=%d delivered=%d dropped=%d duplicated=%d cut=%d overflow=%d to-down=%d held=%d",
		label, s.Sent, s.Delivered, s.Dropped, s.Duplicated, s.Cut, s.Overflow, s.ToDown, s.Held), nil
}

func cmdShow(r *Runner, a *Args) (string, error) {
	words := a.Words()
	if len(words) == 0 {
		return "", fmt.Errorf("show what? subjects: %s", subjectNames())
	}
	f := showSubjects[words[0]]
	if f == nil {
		return "", fmt.Errorf("unknown subject %q; want one of %s", words[0], subjectNames())
	}
	return f(r, a, words[1:])
}

func showDisk(r *Runner, a *Args, words []string) (string, error) {
	if len(words) < 1 || len(words) > 2 || len(words) == 2 && words[1] != "cache" {
		return "", fmt.Errorf("usage: show disk NODE [cache]")
	}
	id, err := r.node(words[0])
	if err != nil {
		return "", err
	}
	d := r.World().Disk(id)
	c := r.World().Costs()
	if len(words) == 2 {
		if c.DiskRead == 0 {
			return words[0] + ": no page cache (reads cost nothing: costs disk-read= is off)", nil
		}
		return pageCacheLine(words[0], d, c), nil
	}
	files := d.List("")
	if len(files) == 0 {
		return words[0] + ": no files", nil
	}
	var lines []string
	for _, f := range files {
		lines = append(lines, fmt.Sprintf("%s: %s %dB (%dB synced)", words[0], f, d.Size(f), d.SyncedSize(f)))
	}
	if c.DiskRead > 0 {
		lines = append(lines, pageCacheLine(words[0], d, c))
	}
	return strings.Join(lines, "\n"), nil
}

// pageCacheLine is what a node's page cache holds and how much its reads found there.
func pageCacheLine(node string, d *sim.Disk, c sim.Costs) string {
	cached, disk := d.ReadStats()
	return fmt.Sprintf("%s: page cache %dB of %s; reads %dB from the cache, %dB from disk", node, d.CachedBytes(), sim.FormatSize(c.PageCache), cached, disk)
}

func showNodes(r *Runner, a *Args, words []string) (string, error) {
	w := r.World()
	var lines []string
	for i := 0; i < w.NumNodes(); i++ {
		lines = append(lines, fmt.Sprintf("%s: %s", w.Name(sim.NodeID(i)), w.Status(sim.NodeID(i))))
	}
	return strings.Join(lines, "\n"), nil
}
