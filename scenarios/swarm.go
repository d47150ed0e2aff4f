package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/checker"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Swarm runs: a seed becomes a whole random scenario (cluster shape, settings, workload,
// fault plan), written in the scenario language itself, so that a failing seed is a
// scenario file that `mqsim run` and `mqsim tui` replay, and shrinking is deleting lines.
//
// Each seed also switches whole fault kinds on or off (swarm testing: rare combinations
// get their turn because common ones are sometimes absent). A run has a safety phase with
// faults, then a liveness phase: every fault ends, every node restarts, the cluster has
// time to converge, a fresh consumer reads everything and the checkers judge the history.

// Profile chooses the settings a swarm draws from.
type Profile string

const (
	// ProfileSafe is acks=all, min.insync.replicas=2, rf=3, idempotence, no unclean
	// election and brokers that fsync every batch: every violation is a bug in mqsim or
	// its checkers.
	ProfileSafe Profile = "safe"
	// ProfileAny draws settings freely; violations are expected, and only those the
	// settings do not allow count as failures.
	ProfileAny Profile = "any"
)

// SwarmOptions shape the runs of a swarm.
type SwarmOptions struct {
	Profile Profile
	// Bug plants one of proto.BugList in every run (safe profile otherwise).
	Bug string
}

// Validate reports a bad profile or bug name.
func (o SwarmOptions) Validate() error {
	if o.Profile != ProfileSafe && o.Profile != ProfileAny {
		return fmt.Errorf("profile %q: want safe or any", o.Profile)
	}
	if o.Bug != "" {
		var b proto.Bugs
		if err := b.Set(o.Bug); err != nil {
			return err
		}
	}
	return nil
}

// faultKinds are the kinds a seed switches on or off.
var faultKinds = []string{"crash", "pause", "partition", "one-way", "clog", "loss", "duplicate", "torn", "controller", "groups"}

// Generate writes the scenario of one random run.
func Generate(seed uint64, opts SwarmOptions) string {
	r := sim.NewRand(seed, "swarm")
	on := map[string]bool{}
	var enabled []string
	for _, k := range faultKinds {
		if r.Chance(sim.Percent(50)) {
			on[k] = true
			enabled = append(enabled, k)
		}
	}
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format+"\n----\n\n", args...)
	}
	fmt.Fprintf(&b, "# Swarm run: seed %d, profile %s", seed, opts.Profile)
	if opts.Bug != "" {
		fmt.Fprintf(&b, ", planted bug %s", opts.Bug)
	}
	fmt.Fprintf(&b, ".\n# Fault kinds on: %s.\n", orNone(enabled))

	world := fmt.Sprintf("world seed=%d latency=1ms jitter=%dus fsync=%dms", seed, r.IntN(3000), 1+r.IntN(30))
	if on["loss"] {
		world += fmt.Sprintf(" drop=%dppm", 1000+r.IntN(30_000))
	}
	if on["duplicate"] {
		world += fmt.Sprintf(" dup=%dppm", 1000+r.IntN(30_000))
	}
	line("%s", world)

	brokers := 3 + r.IntN(3)
	settings := []string{fmt.Sprintf("brokers=%d", brokers), fmt.Sprintf("partitions=%d", 1+r.IntN(4))}
	if opts.Profile == ProfileSafe || opts.Bug != "" {
		settings = append(settings, "rf=3 min-isr=2 acks=all idempotence=true unclean=false flush=every-batch")
	} else {
		rf := 1 + r.IntN(3)
		acks := []string{"0", "1", "all"}[r.IntN(3)]
		idem := acks == "all" && r.Chance(sim.Percent(50))
		settings = append(settings, fmt.Sprintf("rf=%d min-isr=%d acks=%s idempotence=%t unclean=%t flush=%s truncation=%s max-in-flight=%d",
			rf, 1+r.IntN(rf), acks, idem, r.Chance(sim.Percent(30)), []string{"never", "every-batch", "100ms"}[r.IntN(3)],
			[]string{"epoch", "epoch", "epoch", "hw"}[r.IntN(4)], 1+r.IntN(5)))
	}
	if opts.Bug != "" {
		settings = append(settings, fmt.Sprintf("bugs=(%s)", opts.Bug))
	}
	settings = append(settings, "session-timeout=3s heartbeat=1s lag-max=5s request-timeout=2s delivery-timeout=2m retry-backoff=100ms linger=1ms auto-offset-reset=earliest")
	// Half the seeds run a quorum of controllers (KRaft) rather than the single one. The
	// draw has a stream of its own, so the single-controller seeds stay as they were.
	cr := sim.NewRand(seed, "swarm/controllers")
	ctls := []string{"ctl"}
	if cr.Chance(sim.Percent(50)) {
		ctls = []string{"c1", "c2", "c3"}
		settings = append(settings, "controllers=3")
	}
	line("cluster %s", strings.Join(settings, " "))

	// With "groups" on, a consumer group reads along, and its members crash, restart and
	// pause (rebalances); its commits come after processing, so it must lose nothing.
	var members []string
	if on["groups"] {
		proto := []string{"assignor=range protocol=eager", "assignor=sticky protocol=eager", "assignor=cooperative-sticky protocol=cooperative"}[r.IntN(3)]
		line("group name=g commit=after session-timeout=6s heartbeat=1s max-poll-interval=8s %s", proto)
		for i := 1; i <= 2+r.IntN(2); i++ {
			m := fmt.Sprintf("g%d", i)
			members = append(members, m)
			line("join consumer=%s group=g poll-every=500ms wait=false", m)
		}
	}
	nodes := slices.Clone(ctls)
	for i := 1; i <= brokers; i++ {
		nodes = append(nodes, fmt.Sprintf("b%d", i))
	}
	pick := func(from []string) string { return from[r.IntN(len(from))] }
	brokerNames := nodes[len(ctls):]
	var paused, clogged []string
	steps := 10 + r.IntN(30)
	for i := 0; i < steps; i++ {
		if r.Chance(sim.Percent(45)) || len(enabled) == 0 {
			line("produce producer=p%d count=%d wait=false", 1+r.IntN(2), 1+r.IntN(5))
		} else {
			switch k := pick(enabled); k {
			case "crash":
				switch {
				case r.Chance(sim.Percent(10)):
					// A power loss: every broker at once, with whatever was not on disk.
					line("crash %s", strings.Join(brokerNames, " "))
				case r.Chance(sim.Percent(50)):
					line("crash %s", pick(brokerNames))
				default:
					line("restart %s", pick(brokerNames))
				}
			case "controller":
				if len(ctls) == 1 {
					line("%s ctl", pick([]string{"crash", "restart"}))
					break
				}
				// A quorum member crashes, restarts, is cut off from the other controllers
				// (brokers still reach it), or from every server.
				n := ctls[cr.IntN(len(ctls))]
				others := func(from []string) string {
					return strings.Join(slices.DeleteFunc(slices.Clone(from), func(x string) bool { return x == n }), " ")
				}
				switch cr.IntN(4) {
				case 0:
					line("crash %s", n)
				case 1:
					line("restart %s", n)
				case 2:
					line("partition %s | %s", n, others(ctls))
				default:
					line("partition %s | %s", n, others(nodes))
				}
			case "pause":
				n := pick(brokerNames)
				if slices.Contains(paused, n) {
					line("resume %s", n)
					paused = slices.DeleteFunc(paused, func(s string) bool { return s == n })
				} else {
					line("pause %s", n)
					paused = append(paused, n)
				}
			case "partition":
				order := slices.Clone(nodes)
				for j := len(order) - 1; j > 0; j-- {
					k := r.IntN(j + 1)
					order[j], order[k] = order[k], order[j]
				}
				cut := 1 + r.IntN(len(order)-1)
				line("partition %s | %s", strings.Join(order[:cut], " "), strings.Join(order[cut:], " "))
			case "one-way":
				a, c := pick(nodes), pick(nodes)
				if a != c {
					line("cut %s -> %s", a, c)
				}
			case "clog":
				a, c := pick(brokerNames), pick(brokerNames)
				if a != c {
					line("clog %s -> %s", a, c)
					clogged = append(clogged, a+" -> "+c)
				}
			case "loss", "duplicate":
				line("heal")
			case "groups":
				m := pick(members)
				switch r.IntN(3) {
				case 0:
					line("crash %s", m)
				case 1:
					line("restart %s", m)
				default:
					line("consumer-pause %s for=%dms", m, 1+r.IntN(10_000))
				}
			case "torn":
				line("torn %s", pick(brokerNames))
			}
		}
		line("run for=%dms", 1+r.IntN(2000))
	}
	b.WriteString("# Liveness phase: every fault ends and the cluster converges.\n")
	line("heal")
	for _, c := range clogged {
		line("unclog %s", c)
	}
	for _, n := range paused {
		line("resume %s", n)
	}
	line("restart %s", strings.Join(append(slices.Clone(nodes), members...), " "))
	line("link all drop=0%% dup=0%%")
	// delivery.timeout.ms stays at Kafka's 2 minutes, longer than any safety phase: an
	// idempotent producer whose batch expires must take a new producer id, and batches it
	// then re-sends may duplicate earlier attempts (the guarantee holds within one producer
	// id). The liveness phase gives retries time to finish.
	line("run for=2m")
	line("consume consumer=reader")
	if len(members) > 0 {
		line("check promise=at-least-once")
	} else {
		line("check")
	}
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// SeedResult is what one swarm run found.
type SeedResult struct {
	Seed uint64
	// Failures are the anomalies that count: every violation in the safe profile, those
	// the settings do not allow in the any profile.
	Failures []checker.Anomaly
	// Allowed are violations the settings allow (any profile).
	Allowed []checker.Anomaly
	Report  checker.Report
	Events  uint64
	SimTime time.Duration
	Script  string
	Err     error
}

// Failed reports whether the run counts as a failure.
func (r SeedResult) Failed() bool { return len(r.Failures) > 0 || r.Err != nil }

// RunSeed generates and runs one seed.
func RunSeed(seed uint64, opts SwarmOptions) SeedResult {
	text := Generate(seed, opts)
	res := RunScript(fmt.Sprintf("seed-%d", seed), text)
	res.Seed = seed
	return res
}

// RunScript runs a generated (or shrunk) swarm scenario and classifies its violations.
func RunScript(name, text string) SeedResult {
	res := SeedResult{Script: text}
	s, err := Parse(name, text)
	if err != nil {
		res.Err = err
		return res
	}
	out, err := Run(s, Options{TraceMode: sim.TraceOff}, nil)
	if err != nil {
		res.Err = err
		return res
	}
	w := out.Runner.World()
	res.Events, res.SimTime = w.Steps(), time.Duration(w.Now())
	reports := out.Runner.Reports()
	if len(reports) == 0 {
		res.Err = fmt.Errorf("%s: no check command", name)
		return res
	}
	res.Report = reports[len(reports)-1]
	allowed := AllowedAnomalies(out.Runner.Cluster().Cfg)
	for _, v := range res.Report.Violations {
		if allowed[v.Anomaly] {
			res.Allowed = appendUnique(res.Allowed, v.Anomaly)
		} else {
			res.Failures = appendUnique(res.Failures, v.Anomaly)
		}
	}
	return res
}

func appendUnique(s []checker.Anomaly, a checker.Anomaly) []checker.Anomaly {
	if slices.Contains(s, a) {
		return s
	}
	return append(s, a)
}

// AllowedAnomalies is what a configuration does not promise to prevent. The safe
// configuration allows nothing; a planted bug allows nothing either (finding it is the
// point).
func AllowedAnomalies(cfg proto.Config) map[checker.Anomaly]bool {
	allowed := map[checker.Anomaly]bool{}
	if len(cfg.Bugs.Names()) > 0 {
		return allowed
	}
	// Acknowledged writes may be lost, and offsets then reused, and a reader may see the
	// log shrink under it.
	// (Without an fsync per batch, a crash of several brokers at once loses what only
	// their page caches held.)
	mayLose := cfg.Producer.Acks != proto.AcksAll || cfg.Topic.MinInsyncReplicas < 2 ||
		cfg.Topic.UncleanLeaderElection || cfg.Broker.Truncation == proto.TruncateToHW ||
		cfg.Broker.Log.Flush != wal.FlushEveryBatch
	if mayLose {
		for _, a := range []checker.Anomaly{checker.LostWrite, checker.Unseen, checker.InconsistentOffsets,
			checker.NonmonotonicSend, checker.NonmonotonicPoll, checker.PollSkip} {
			allowed[a] = true
		}
	}
	// Without idempotence retries may duplicate and reorder.
	if !cfg.Producer.Idempotence || cfg.Producer.Acks != proto.AcksAll {
		allowed[checker.Duplicate] = true
		allowed[checker.NonmonotonicSend] = true
	}
	return allowed
}

// Shrink minimises a failing swarm script while it still fails with one of the same
// anomalies: it deletes commands of the safety phase (halves, then quarters, down to
// single lines, as delta debugging does), then shortens the runs and the produce counts
// that remain, then reduces the cluster. The world and cluster lines and the liveness
// phase stay: they are what makes a run judgeable. It returns the smaller script and the
// number of candidate runs it tried; maxRuns bounds the work.
func Shrink(text string, want []checker.Anomaly, maxRuns int) (string, int) {
	s, err := Parse("shrink", text)
	if err != nil {
		return text, 0
	}
	head, body, tail := splitPhases(s.Steps)
	runs := 0
	fails := func(body []Step) bool {
		if runs >= maxRuns {
			return false
		}
		runs++
		res := RunScript("shrink", render(head, body, tail))
		for _, a := range res.Failures {
			if slices.Contains(want, a) {
				return true
			}
		}
		return false
	}
	// Delete chunks, from large to single steps.
	for chunk := len(body) / 2; chunk >= 1; chunk /= 2 {
		for i := 0; i+chunk <= len(body); {
			cand := slices.Concat(body[:i], body[i+chunk:])
			if fails(cand) {
				body = cand
				continue
			}
			i += chunk
		}
	}
	// Simplify what is left: shorter runs, single records.
	for i := range body {
		for _, simpler := range simplifications(body[i]) {
			cand := slices.Clone(body)
			cand[i] = simpler
			if fails(cand) {
				body = cand
				break
			}
		}
	}
	return render(head, body, tail), runs
}

// splitPhases separates the setup (world, cluster), the safety phase and the liveness
// phase (from the "Liveness phase" narration on).
func splitPhases(steps []Step) (head, body, tail []Step) {
	i := 0
	for i < len(steps) && (steps[i].Cmd == "world" || steps[i].Cmd == "cluster") {
		i++
	}
	j := i
	for j < len(steps) && !slices.ContainsFunc(steps[j].Narration, func(n string) bool { return strings.HasPrefix(n, "Liveness phase") }) {
		j++
	}
	return steps[:i], steps[i:j], steps[j:]
}

// simplifications are smaller versions of a step, most aggressive first.
func simplifications(st Step) []Step {
	var out []Step
	with := func(text string) {
		s, err := Parse("simplify", text+"\n----\n")
		if err == nil && len(s.Steps) == 1 {
			n := s.Steps[0]
			n.Narration = st.Narration
			out = append(out, n)
		}
	}
	switch st.Cmd {
	case "run":
		if d, ok := argVal(st, "for"); ok && d != "1ms" {
			with("run for=1ms")
			with("run for=100ms")
		}
	case "produce":
		if c, ok := argVal(st, "count"); ok && c != "1" {
			with(strings.Replace(st.Text, "count="+c, "count=1", 1))
		}
	}
	return out
}

func argVal(st Step, key string) (string, bool) {
	for _, a := range st.Args {
		if a.Key == key && len(a.Vals) == 1 {
			return a.Vals[0], true
		}
	}
	return "", false
}

// render writes steps back as a scenario (outputs left empty).
func render(parts ...[]Step) string {
	var b strings.Builder
	for _, steps := range parts {
		for _, st := range steps {
			b.WriteString(st.Format(""))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// CountSteps is the number of commands in a scenario text.
func CountSteps(text string) int {
	s, err := Parse("count", text)
	if err != nil {
		return 0
	}
	return len(s.Steps)
}
