package runner

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"mqsim/checker"
	"mqsim/metrics"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/queue"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// Command is one scenario command.
type Command struct {
	Name  string
	Usage string // e.g. "run for=DURATION | until=TIME"
	Help  string // one line
	// Keys are the key=value arguments the command accepts; bare words (node names, fault
	// arguments) are always allowed and read with Args.Words.
	Keys []string
	Run  func(r *Runner, a *Args) (string, error)
}

var commands = map[string]*Command{}

// Register adds a command from outside the runner: a lab's commands (package labs),
// which build nodes the runner does not know. Like the runner's own, it is called from
// an init function; a name registered twice panics there, at start.
func Register(c *Command) { register(c) }

func register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("scenarios: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// Commands lists every command, sorted by name.
func Commands() []*Command {
	var cs []*Command
	for _, c := range commands {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *Command) int { return strings.Compare(a.Name, b.Name) })
	return cs
}

func commandNames() string {
	var names []string
	for _, c := range Commands() {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// Options shape a run.
type Options struct {
	// Seed, when SeedSet, overrides the seed a script's world command gives.
	Seed    uint64
	SeedSet bool
	// Set overrides settings of the cluster command ("acks=all", "min-isr=2") or of the
	// queue-broker command ("prefetch=10"); NAME.KEY=VALUE overrides KEY of the step
	// that makes the client or application named NAME ("p1.transactional-id=orders",
	// "c1.isolation=read_committed"), since some settings (a transactional.id) belong
	// to one client, not to the cluster's defaults. Every NAME.KEY must meet its step.
	Set []string
	// TraceMode is how much of the trace the world keeps (default: all of it).
	TraceMode sim.TraceMode
	// MaxCommandSteps bounds the events one command may run (0: CommandSteps).
	MaxCommandSteps uint64
}

// Runner executes the steps of one script against one world.
type Runner struct {
	cluster *cluster.Cluster
	// geo is the remote clusters and mirrors of a geo-replication run (cmd_mirror.go).
	geo geoRun
	// queue is the run's queue broker (cmd_queue.go), nil before queue-broker.
	queue    *queueRun
	valueSeq int // for produce count=N: v1, v2, ...
	// keys is the stream skewed keys are drawn from (keys.go), nil until the first draw.
	keys *sim.Rand
	// verdicts are the check commands' verdicts, in order.
	verdicts []Verdict
	// clock names findings by their kernel step (verdict.go).
	clock     stepClock
	sent      map[string]bool // every value produced, to keep them unique
	opts      Options
	cfg       sim.Config
	w         *sim.World
	traceMark int
	// ctx and progress are the run's watcher (Watch); nil for none.
	ctx      context.Context
	progress func(steps uint64, now sim.Time)
	cmdStart uint64 // the world's step count when the current command began
	// targetsMet are the NAME.KEY=VALUE entries of Options.Set a step took.
	targetsMet map[string]bool
	// metricsShown are the figures the previous show metrics printed.
	metricsShown map[metrics.Key]float64
	// measuredAt is when the previous measure took its figures (cmd_measure.go).
	measuredAt sim.Time
	// judges are the checks a command added to the run's verdict (AddJudge).
	judges []func() checker.Report
}

// AddJudge adds a check of the run's own to its verdict: a lab's property, judged from
// the state of the lab's nodes. Judge merges its report with the system's.
func (r *Runner) AddJudge(judge func() checker.Report) { r.judges = append(r.judges, judge) }

// NewRunner makes a runner whose world is created, with the default configuration, by the
// first command that needs it (or configured first by the world command).
func NewRunner(opts Options) *Runner {
	seed := uint64(1)
	if opts.SeedSet {
		seed = opts.Seed
	}
	return &Runner{opts: opts, cfg: sim.DefaultConfig(seed), sent: map[string]bool{}}
}

// World returns the run's world, creating it if needed.
func (r *Runner) World() *sim.World {
	if r.w == nil {
		r.w = sim.NewWorld(r.cfg)
		r.w.Trace().Mode = r.opts.TraceMode
		r.w.AddObserver(&r.clock)
	}
	return r.w
}

// Reports are the reports of the verdicts of the run's check commands so far.
func (r *Runner) Reports() []checker.Report {
	var reps []checker.Report
	for _, v := range r.verdicts {
		reps = append(reps, v.Report)
	}
	return reps
}

// Cluster is the run's cluster, or nil before the cluster command.
func (r *Runner) Cluster() *cluster.Cluster { return r.cluster }

// Started reports whether the world exists yet.
func (r *Runner) Started() bool { return r.w != nil }

// Hash is the run's fingerprint: the trace hash mixed with the kernel's step hash, so
// it changes if any event, traced or not, changes.
func (r *Runner) Hash() string {
	w := r.World()
	h := w.Trace().Hash()
	for _, v := range []uint64{w.StepHash(), w.Steps()} {
		h ^= v
		h *= 1099511628211
	}
	return fmt.Sprintf("%016x", h)
}

// Check verifies, before anything runs, that every step names a known command with
// known arguments.
func Check(s *script.Script) error {
	for _, st := range s.Steps {
		c := commands[st.Cmd]
		if c == nil {
			return fmt.Errorf("%s: unknown command %q; want one of %s", st.Pos(), st.Cmd, commandNames())
		}
		for _, a := range st.Args {
			if a.Vals != nil && !slices.Contains(c.Keys, a.Key) {
				return fmt.Errorf("%s: %s: unknown argument %s=; usage: %s", st.Pos(), c.Name, a.Key, c.Usage)
			}
		}
	}
	return nil
}

// Exec runs one step and returns its output. Errors are prefixed with the step's
// file:line and command.
func (r *Runner) Exec(st script.Step) (string, error) {
	c := commands[st.Cmd]
	if c == nil {
		return "", fmt.Errorf("%s: unknown command %q; want one of %s", st.Pos(), st.Cmd, commandNames())
	}
	var applied []string // the --set entries this step takes
	if len(r.opts.Set) > 0 {
		var err error
		if st, applied, err = r.overrideStep(st); err != nil {
			// The flag is at fault, not the scenario's line: say so without the line.
			return "", fmt.Errorf("--set: %v", err)
		}
	}
	a := &Args{step: st, cmd: c}
	if r.ctx != nil && r.ctx.Err() != nil {
		return "", fmt.Errorf("%s: %s: %w", st.Pos(), st.Cmd, ErrInterrupted)
	}
	if r.w != nil {
		r.cmdStart = r.w.Steps()
	}
	out, err := c.Run(r, a)
	if err == nil {
		err = a.unused()
	}
	if err != nil {
		if len(applied) > 0 {
			// The flag may be at fault rather than the line: name both.
			return "", fmt.Errorf("%s: %s (with --set %s): %w", st.Pos(), st.Cmd, strings.Join(applied, " "), err)
		}
		return "", fmt.Errorf("%s: %s: %w", st.Pos(), st.Cmd, err)
	}
	return out, nil
}

// overrideStep applies Options.Set to a step: the plain KEY=VALUE entries to the cluster
// and queue-broker commands, the NAME.KEY=VALUE entries to the step whose name= is NAME.
func (r *Runner) overrideStep(st script.Step) (script.Step, []string, error) {
	var plain []string
	targeted := map[string][]string{}
	for _, kv := range r.opts.Set {
		k, _, _ := strings.Cut(kv, "=")
		if name, _, ok := strings.Cut(k, "."); ok {
			targeted[name] = append(targeted[name], kv[len(name)+1:])
			continue
		}
		plain = append(plain, kv)
	}
	if st.Cmd == "cluster" || st.Cmd == "queue-broker" {
		for _, kv := range plain {
			if err := checkSetting(st.Cmd, kv); err != nil {
				return st, nil, err
			}
		}
		st, err := override(st, plain)
		return st, plain, err
	}
	name := ""
	for _, a := range st.Args {
		if a.Key == "name" && len(a.Vals) == 1 {
			name = a.Vals[0]
		}
	}
	if name == "" || len(targeted[name]) == 0 {
		return st, nil, nil
	}
	st, err := override(st, targeted[name])
	if err != nil {
		return st, nil, fmt.Errorf("%s.%v", name, err)
	}
	if r.targetsMet == nil {
		r.targetsMet = map[string]bool{}
	}
	var applied []string
	for _, kv := range targeted[name] {
		r.targetsMet[name+"."+kv] = true
		applied = append(applied, name+"."+kv)
	}
	return st, applied, nil
}

// checkSetting reports what is wrong with one KEY=VALUE of --set for the cluster or
// queue-broker command on its own, as the command would read it, so that a bad value is
// reported against the flag rather than against the scenario line it was put on.
// Settings that are wrong only together (min-isr above rf) are left to the command.
func checkSetting(cmd, kv string) error {
	st, err := override(script.Step{Cmd: cmd}, []string{kv})
	if err != nil {
		return err
	}
	a := &Args{step: st, cmd: commands[cmd]}
	if cmd == "queue-broker" {
		d, cfg := newQueueDefaults("rabbit"), queue.DefaultConfig()
		for _, s := range queueBrokerSettings {
			if err := s.apply(a, &d, &cfg); err != nil {
				return err
			}
		}
		return readCosts(a, &sim.Costs{})
	}
	cfg := proto.DefaultConfig()
	if err := applySettings(a, &cfg, clusterSettings); err != nil {
		return err
	}
	return readCosts(a, &sim.Costs{})
}

// unmetTargets are the NAME.KEY=VALUE entries of Options.Set that no step took: a
// misspelt name must not pass for a fix.
func (r *Runner) unmetTargets() []string {
	var unmet []string
	for _, kv := range r.opts.Set {
		k, _, _ := strings.Cut(kv, "=")
		if strings.Contains(k, ".") && !r.targetsMet[kv] {
			unmet = append(unmet, kv)
		}
	}
	return unmet
}

// override replaces or adds key=value arguments of a step.
func override(st script.Step, set []string) (script.Step, error) {
	args := slices.Clone(st.Args)
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return st, fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		if !slices.Contains(commands[st.Cmd].Keys, k) {
			return st, fmt.Errorf("%s is not a setting of %s (mqsim commands lists them)", k, st.Cmd)
		}
		vals := []string{v}
		if strings.HasPrefix(v, "(") && strings.HasSuffix(v, ")") {
			// An empty list, "bugs=()", is a list of no values (not of one empty value).
			vals = []string{}
			if inner := strings.TrimSpace(v[1 : len(v)-1]); inner != "" {
				vals = strings.Split(inner, ",")
			}
			for i := range vals {
				vals[i] = strings.TrimSpace(vals[i])
			}
		}
		args = slices.DeleteFunc(args, func(a datadriven.CmdArg) bool { return a.Key == k })
		args = append(args, datadriven.CmdArg{Key: k, Vals: vals})
	}
	st.Args = args
	return st, nil
}

// Result is what a whole run produced.
type Result struct {
	Transcript string
	Hash       string
	// Mismatches are the steps whose output differs from the expected output in the file.
	Mismatches []string
	// Violations counts the violations of the run's verdict (see Runner.Verdict).
	Violations int
	Runner     *Runner
}

// Run executes every step of the script and writes the transcript (the file with actual
// outputs) to out as it goes. It stops at the first error.
func Run(s *script.Script, opts Options, out io.Writer) (*Result, error) {
	return RunWatched(context.Background(), s, opts, out, nil)
}

// RunWatched is Run with a watcher (see Runner.Watch): it stops with ErrInterrupted
// (wrapped with the step's position) once ctx is done, having written the transcript of
// the steps before.
func RunWatched(ctx context.Context, s *script.Script, opts Options, out io.Writer, progress func(steps uint64, now sim.Time)) (*Result, error) {
	if err := Check(s); err != nil {
		return nil, err
	}
	r := NewRunner(opts)
	r.Watch(ctx, progress)
	res := &Result{Runner: r}
	var b strings.Builder
	for i, st := range s.Steps {
		got, err := r.Exec(st)
		if err != nil {
			return res, err
		}
		text := st.Format(got)
		if i > 0 {
			text = "\n" + text
		}
		b.WriteString(text)
		if out != nil {
			io.WriteString(out, text)
		}
		if st.HasExpected && normalize(st.Expected) != normalize(got) {
			res.Mismatches = append(res.Mismatches, st.Pos())
		}
	}
	res.Transcript = b.String()
	if unmet := r.unmetTargets(); len(unmet) > 0 {
		return res, fmt.Errorf("--set %s: no step makes a client of that name (NAME.KEY=VALUE sets KEY on the step with name=NAME)", strings.Join(unmet, " "))
	}
	res.Hash = r.Hash()
	if v, ok := r.Verdict(); ok {
		res.Violations = len(v.Report.Violations)
	}
	return res, nil
}

func normalize(s string) string { return strings.TrimRight(s, "\n") }

// Args reads a step's arguments and remembers which were used, so a misspelt one is an
// error rather than silently ignored.
type Args struct {
	step script.Step
	cmd  *Command
	used []string
}

// Step is the step being run.
func (a *Args) Step() script.Step { return a.step }

// Input is the step's input block.
func (a *Args) Input() string { return a.step.Input }

func (a *Args) find(key string) (datadriven.CmdArg, bool) {
	for _, arg := range a.step.Args {
		if arg.Key == key && arg.Vals != nil {
			a.used = append(a.used, key)
			return arg, true
		}
	}
	return datadriven.CmdArg{}, false
}

func (a *Args) unused() error {
	for _, arg := range a.step.Args {
		if arg.Vals != nil && !slices.Contains(a.used, arg.Key) {
			return fmt.Errorf("argument %s= is not used here; usage: %s", arg.Key, a.cmd.Usage)
		}
	}
	return nil
}

// Words are the bare words of the command line, in order (node names, "->", "|").
func (a *Args) Words() []string {
	var ws []string
	for _, arg := range a.step.Args {
		if arg.Vals == nil {
			ws = append(ws, arg.Key)
		}
	}
	return ws
}

// Has reports whether key=... was given.
func (a *Args) Has(key string) bool {
	_, ok := a.find(key)
	return ok
}

// String returns key's single value, or def when absent.
func (a *Args) String(key, def string) (string, error) {
	arg, ok := a.find(key)
	if !ok {
		return def, nil
	}
	if len(arg.Vals) != 1 {
		return "", fmt.Errorf("%s= takes one value, got %d; usage: %s", key, len(arg.Vals), a.cmd.Usage)
	}
	return arg.Vals[0], nil
}

// Required returns key's single value, or an error naming what is missing.
func (a *Args) Required(key string) (string, error) {
	if _, ok := a.find(key); !ok {
		return "", fmt.Errorf("missing argument %s=; usage: %s", key, a.cmd.Usage)
	}
	return a.String(key, "")
}

// List returns key's values: key=(a, b) or key=a.
func (a *Args) List(key string) []string {
	arg, _ := a.find(key)
	return arg.Vals
}

// Int returns key as an integer within [lo, hi], or def when absent.
func (a *Args) Int(key string, def, lo, hi int) (int, error) {
	s, err := a.String(key, "")
	if err != nil || s == "" {
		return def, err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s=%s: want an integer", key, s)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%s=%d: want %d to %d", key, n, lo, hi)
	}
	return n, nil
}

// Duration returns key as a duration ("250ms"), or def when absent.
func (a *Args) Duration(key string, def time.Duration) (time.Duration, error) {
	s, err := a.String(key, "")
	if err != nil || s == "" {
		return def, err
	}
	d, err := sim.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s=: %v", key, err)
	}
	return d, nil
}

// Prob returns key as a probability: "5%", "0.5%" or "1500ppm".
func (a *Args) Prob(key string, def sim.PPM) (sim.PPM, error) {
	s, err := a.String(key, "")
	if err != nil || s == "" {
		return def, err
	}
	p, err := ParseProb(s)
	if err != nil {
		return 0, fmt.Errorf("%s=: %v", key, err)
	}
	return p, nil
}

// ParseProb reads "5%", "0.25%" or "1500ppm" as parts per million.
func ParseProb(s string) (sim.PPM, error) {
	var ppm int64
	switch {
	case strings.HasSuffix(s, "ppm"):
		n, err := strconv.ParseInt(strings.TrimSuffix(s, "ppm"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad probability %q: want e.g. 5%% or 1500ppm", s)
		}
		ppm = n
	case strings.HasSuffix(s, "%"):
		// Parse as a decimal with at most 4 fractional digits, without floats.
		whole, frac, _ := strings.Cut(strings.TrimSuffix(s, "%"), ".")
		if len(frac) > 4 {
			return 0, fmt.Errorf("bad probability %q: at most 4 decimals", s)
		}
		w, err1 := strconv.ParseInt(whole, 10, 64)
		f := int64(0)
		var err2 error
		if frac != "" {
			f, err2 = strconv.ParseInt(frac+strings.Repeat("0", 4-len(frac)), 10, 64)
		}
		if err1 != nil || err2 != nil || w < 0 {
			return 0, fmt.Errorf("bad probability %q: want e.g. 5%% or 1500ppm", s)
		}
		ppm = w*10_000 + f
	default:
		return 0, fmt.Errorf("bad probability %q: want a percentage (5%%) or ppm (1500ppm)", s)
	}
	if ppm < 0 || ppm > 1_000_000 {
		return 0, fmt.Errorf("probability %q is outside 0%%..100%%", s)
	}
	return sim.PPM(ppm), nil
}

// Bool returns key as a boolean (true/false/on/off), or def when absent.
func (a *Args) Bool(key string, def bool) (bool, error) {
	s, err := a.String(key, "")
	if err != nil || s == "" {
		return def, err
	}
	switch s {
	case "true", "on", "yes":
		return true, nil
	case "false", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("%s=%s: want true or false", key, s)
}

// node resolves a node name.
func (r *Runner) node(name string) (sim.NodeID, error) {
	id, ok := r.World().Lookup(name)
	if !ok {
		return 0, fmt.Errorf("no node %q", name)
	}
	return id, nil
}
