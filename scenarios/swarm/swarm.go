// Package swarm makes random runs: a seed becomes a whole random scenario (cluster
// shape, settings, workload, fault plan), written in the scenario language itself, so that a failing seed is a
// scenario file that `mqsim run` and `mqsim tui` replay, and shrinking is deleting lines.
//
// Each seed also switches whole fault kinds on or off (swarm testing: rare combinations
// get their turn because common ones are sometimes absent). A run has a safety phase with
// faults, then a liveness phase: every fault ends, every node restarts, the cluster has
// time to converge, a fresh consumer reads everything and the checkers judge the history.
package swarm

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/checker"
	"mqsim/model/proto"
	"mqsim/model/queue"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

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
	// ProfileQueue runs the queue mode (model/queue): quorum queues, publisher confirms
	// and manual acks; a confirmed message that is never processed is a bug.
	ProfileQueue Profile = "queue"
)

// Options shape the runs of a swarm.
type Options struct {
	Profile Profile
	// Bug plants one of proto.BugList in every run (safe settings otherwise), or with
	// ProfileQueue one of queue.BugList.
	Bug string
	// Set adds cluster settings to every run, after the profile's (KEY=VALUE): a legacy
	// switch such as isr-expand=hw, or kafka-version=2.0.
	Set []string
}

// Validate reports a bad profile or bug name.
func (o Options) Validate() error {
	if o.Profile != ProfileSafe && o.Profile != ProfileAny && o.Profile != ProfileQueue {
		return fmt.Errorf("profile %q: want safe, any or queue", o.Profile)
	}
	if len(o.Set) > 0 {
		if o.Profile == ProfileQueue {
			return fmt.Errorf("--set changes the log cluster's settings: use --profile safe or any")
		}
		if err := runner.CheckClusterSettings(o.Set); err != nil {
			return err
		}
	}
	if o.Bug == "" {
		return nil
	}
	// The queue profile plants the queue broker's bugs, the others the log brokers'
	// (mqsim bugs lists both kinds).
	_, queueErr := queue.ParseBug(o.Bug)
	var b proto.Bugs
	logErr := b.Set(o.Bug)
	switch {
	case o.Profile == ProfileQueue && queueErr != nil && logErr == nil:
		return fmt.Errorf("--bug %s is a log broker's bug: use --profile safe or any", o.Bug)
	case o.Profile == ProfileQueue:
		return queueErr
	case logErr != nil && queueErr == nil:
		return fmt.Errorf("--bug %s is the queue broker's bug: use --profile queue", o.Bug)
	}
	return logErr
}

// faultKinds are the kinds a seed switches on or off.
var faultKinds = []string{"crash", "power", "pause", "partition", "one-way", "clog", "loss", "duplicate", "torn", "controller", "groups"}

// Generate writes the scenario of one random run.
func Generate(seed uint64, opts Options) string {
	if opts.Profile == ProfileQueue {
		return generateQueue(seed, opts.Bug)
	}
	r := sim.NewRand(seed, "swarm")
	b, on, enabled := startScript(r, seed, opts, faultKinds, 30, 30_000)
	line := b.line

	brokers := 3 + r.IntN(3)
	settings := []string{fmt.Sprintf("brokers=%d", brokers), fmt.Sprintf("partitions=%d", 1+r.IntN(4))}
	if opts.Profile == ProfileSafe || opts.Bug != "" {
		settings = append(settings, "rf=3 min-isr=2 acks=all idempotence=true unclean=false flush=every-batch")
	} else {
		rf := 1 + r.IntN(3)
		acks := []string{"0", "1", "all"}[r.IntN(3)]
		idem := acks == "all" && r.Chance(sim.Percent(50))
		// The truncation rule is drawn and not used: legacy switches are bugs to find
		// (--set), not settings that allow anomalies; the draw keeps every seed's
		// scenario as it was otherwise.
		minISR, unclean := 1+r.IntN(rf), r.Chance(sim.Percent(30))
		flush := []string{"never", "every-batch", "100ms"}[r.IntN(3)]
		r.IntN(4) // the truncation rule, once drawn here
		settings = append(settings, fmt.Sprintf("rf=%d min-isr=%d acks=%s idempotence=%t unclean=%t flush=%s max-in-flight=%d",
			rf, minISR, acks, idem, unclean, flush, 1+r.IntN(5)))
	}
	if opts.Bug != "" {
		settings = append(settings, fmt.Sprintf("bugs=(%s)", opts.Bug))
	}
	settings = append(settings, opts.Set...)
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
	// Half the seeds keep their faults close together: runs between commands drawn on a
	// log scale (1ms to 2s, most of them short), so that a crash can land inside the few
	// milliseconds between an acknowledgement and the fsync behind it; the other half
	// draw runs evenly up to 2s and let timeouts, fencing and rebalances play out.
	tight := r.Chance(sim.Percent(50))
	runFor := func() int {
		if tight {
			lo := 1 << r.IntN(11)
			return min(lo+r.IntN(lo), 2000)
		}
		return 1 + r.IntN(2000)
	}
	var paused, clogged []string
	steps := 10 + r.IntN(30)
	for i := 0; i < steps; i++ {
		if r.Chance(sim.Percent(45)) || len(enabled) == 0 {
			line("produce producer=p%d count=%d wait=false", 1+r.IntN(2), 1+r.IntN(5))
		} else {
			switch k := pick(enabled); k {
			case "crash":
				if r.Chance(sim.Percent(50)) {
					line("crash %s", pick(brokerNames))
				} else {
					line("restart %s", pick(brokerNames))
				}
			case "power":
				// A power loss: every broker at once, with whatever was not on disk; they
				// come back at once too (a crash alone would leave the cluster down until
				// the liveness phase).
				line("crash %s", strings.Join(brokerNames, " "))
				line("run for=%dms", runFor())
				line("restart %s", strings.Join(brokerNames, " "))
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
				b.pauseOrResume(pick(brokerNames), &paused)
			case "partition":
				b.randomPartition(r, nodes)
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
		line("run for=%dms", runFor())
	}
	b.WriteString("# Liveness phase: every fault ends and the cluster converges.\n")
	line("heal")
	for _, c := range clogged {
		line("unclog %s", c)
	}
	if on["pause"] {
		// Every broker, not only those paused now: a shrunk script may lose a resume of
		// the safety phase, and must not then fail for a broker left paused.
		line("resume %s", strings.Join(brokerNames, " "))
	}
	line("restart %s", strings.Join(append(slices.Clone(nodes), members...), " "))
	line("link all drop=0%% dup=0%%")
	// delivery.timeout.ms stays at Kafka's 2 minutes, longer than any safety phase: an
	// idempotent producer whose batch expires must take a new producer id, and batches it
	// then re-sends may duplicate earlier attempts (the guarantee holds within one producer
	// id). The liveness phase gives retries time to finish.
	line("run for=2m")
	check := "check"
	if len(members) > 0 {
		check += " promise=at-least-once"
	}
	if opts.Profile == ProfileSafe || opts.Bug != "" {
		// Availability: rf=3 with min.insync.replicas=2 promises to keep taking writes with
		// one replica gone. One fault of that size stays in force (the last fault, so the
		// checker's "heal" is its start): t/0's leader crashes, or the link from it to a
		// follower clogs (a gray failure only the leader can notice: the ISR must shrink).
		// New writes to t/0 must be acknowledged within 30s.
		ar := sim.NewRand(seed, "swarm/availability")
		b.WriteString("# Availability: one fault the configuration tolerates stays in force.\n")
		if ar.Chance(sim.Percent(50)) {
			line("crash leader:t/0")
		} else {
			line("clog leader:t/0 -> follower:t/0")
		}
		line("produce producer=pa partition=0 count=3 wait=false")
		line("run for=1m")
		check += " ack-within=30s"
	}
	line("consume consumer=reader")
	line("%s", check)
	return b.String()
}

// genScript is a generated scenario as it is written: commands with empty outputs.
type genScript struct{ strings.Builder }

func (s *genScript) line(format string, args ...any) { fmt.Fprintf(s, format+"\n----\n\n", args...) }

// startScript switches each of kinds on or off (swarm testing), writes the header that
// says which, and the world line: jitter, fsync time up to maxFsyncMs, and with "loss"
// or "duplicate" on, up to maxPPM of the messages lost or duplicated.
func startScript(r *sim.Rand, seed uint64, opts Options, kinds []string, maxFsyncMs, maxPPM int) (*genScript, map[string]bool, []string) {
	on := map[string]bool{}
	var enabled []string
	for _, k := range kinds {
		if r.Chance(sim.Percent(50)) {
			on[k] = true
			enabled = append(enabled, k)
		}
	}
	b := &genScript{}
	fmt.Fprintf(b, "# Swarm run: seed %d, profile %s", seed, opts.Profile)
	if opts.Bug != "" {
		fmt.Fprintf(b, ", planted bug %s", opts.Bug)
	}
	if len(opts.Set) > 0 {
		fmt.Fprintf(b, ", settings %s", strings.Join(opts.Set, " "))
	}
	fmt.Fprintf(b, ".\n# Fault kinds on: %s.\n", orNone(enabled))
	world := fmt.Sprintf("world seed=%d latency=1ms jitter=%dus fsync=%dms", seed, r.IntN(3000), 1+r.IntN(maxFsyncMs))
	if on["loss"] {
		world += fmt.Sprintf(" drop=%dppm", 1000+r.IntN(maxPPM))
	}
	if on["duplicate"] {
		world += fmt.Sprintf(" dup=%dppm", 1000+r.IntN(maxPPM))
	}
	b.line("%s", world)
	return b, on, enabled
}

// pauseOrResume pauses node n, or resumes it if the run has it paused; paused tracks which.
func (s *genScript) pauseOrResume(n string, paused *[]string) {
	if slices.Contains(*paused, n) {
		s.line("resume %s", n)
		*paused = slices.DeleteFunc(*paused, func(p string) bool { return p == n })
		return
	}
	s.line("pause %s", n)
	*paused = append(*paused, n)
}

// randomPartition splits nodes in two random non-empty sides.
func (s *genScript) randomPartition(r *sim.Rand, nodes []string) {
	order := slices.Clone(nodes)
	shuffle(r, order)
	cut := 1 + r.IntN(len(order)-1)
	s.line("partition %s | %s", strings.Join(order[:cut], " "), strings.Join(order[cut:], " "))
}

// shuffle permutes s with r (Fisher-Yates).
func shuffle(r *sim.Rand, s []string) {
	for j := len(s) - 1; j > 0; j-- {
		k := r.IntN(j + 1)
		s[j], s[k] = s[k], s[j]
	}
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
func RunSeed(seed uint64, opts Options) SeedResult {
	text := Generate(seed, opts)
	res := RunScript(fmt.Sprintf("seed-%d", seed), text)
	res.Seed = seed
	return res
}

// RunScript runs a generated (or shrunk) swarm scenario and classifies its violations.
func RunScript(name, text string) SeedResult {
	res := SeedResult{Script: text}
	s, err := script.Parse(name, text)
	if err != nil {
		res.Err = err
		return res
	}
	out, err := runner.Run(s, runner.Options{TraceMode: sim.TraceOff}, nil)
	if err != nil {
		res.Err = err
		return res
	}
	w := out.Runner.World()
	res.Events, res.SimTime = w.Steps(), time.Duration(w.Now())
	v, ok := out.Runner.Verdict()
	if !ok || len(out.Runner.Reports()) == 0 {
		res.Err = fmt.Errorf("%s: no check command", name)
		return res
	}
	res.Report = v.Report
	res.Failures, res.Allowed = v.Classify()
	return res
}

// Shrink minimises a failing swarm script while it still fails with one of the same
// anomalies: it deletes commands of the safety phase (halves, then quarters, down to
// single lines, as delta debugging does), merges the runs that end up side by side,
// shortens the runs and the produce counts that remain, then reduces the setup (fewer
// brokers and partitions, one controller, no message loss or duplication) and drops the
// availability phase if the failure does not need it. The liveness phase stays: it is
// what makes a run judgeable. maxRuns bounds the work.
func Shrink(text string, want []checker.Anomaly, maxRuns int) Shrunk {
	s, err := script.Parse("shrink", text)
	if err != nil {
		return Shrunk{Text: text}
	}
	var done []string
	head, body, tail := splitPhases(s.Steps)
	runs := 0
	failsWith := func(head, body, tail []script.Step) bool {
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
	fails := func(body []script.Step) bool { return failsWith(head, body, tail) }
	// Delete chunks, from large to single steps.
	before := len(body)
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
	if n := before - len(body); n > 0 {
		done = append(done, fmt.Sprintf("deleted %d of the %d commands of the safety phase", n, before))
	}
	// Deleting commands leaves runs next to each other: one run of their total time is
	// the same schedule in fewer steps.
	merges := 0
	for i := 0; i+1 < len(body); {
		merged, ok := mergeRuns(body[i], body[i+1])
		if ok {
			cand := slices.Concat(body[:i], []script.Step{merged}, body[i+2:])
			if fails(cand) {
				body = cand
				merges++
				continue
			}
		}
		i++
	}
	switch {
	case merges == 1:
		done = append(done, "merged two adjacent runs into one")
	case merges > 1:
		done = append(done, fmt.Sprintf("merged adjacent runs, %d times", merges))
	}
	// Simplify what is left: shorter runs, single records.
	for i := range body {
		for _, simpler := range simplifications(body[i]) {
			cand := slices.Clone(body)
			cand[i] = simpler
			if fails(cand) {
				done = append(done, fmt.Sprintf("%q became %q", body[i].Text, simpler.Text))
				body = cand
				break
			}
		}
	}
	tail = withoutIdleUndos(body, tail)
	// A smaller setup, and no availability phase, if the failure stays.
	for _, reduce := range setupReductions {
		if h, what, ok := reduce(head); ok {
			if t := fitRestart(h, tail); failsWith(h, body, t) {
				head, tail = h, t
				done = append(done, what)
			}
		}
	}
	if cand, ok := withoutAvailability(tail); ok && failsWith(head, body, cand) {
		tail = cand
		done = append(done, "dropped the availability phase")
	}
	return Shrunk{Text: render(head, body, tail), Runs: runs, Steps: done}
}

// Shrunk is what Shrink made of a failing script.
type Shrunk struct {
	Text  string   // the smaller scenario, outputs left empty
	Runs  int      // candidate runs tried
	Steps []string // what was cut or simplified, in order, for the file's narration
}

// setupReductions are the ways to make a setup smaller, each tried on the setup as it is
// by then: at most three brokers (enough for rf=3), one partition, a single controller, a
// network that neither loses nor duplicates. Each returns the smaller setup and what
// changed, or false if there is nothing to reduce. A safety-phase command that names a
// node the smaller setup lacks makes the run fail to start, and the candidate is rejected
// like any other that stops failing.
var setupReductions = []func(head []script.Step) ([]script.Step, string, bool){
	func(head []script.Step) ([]script.Step, string, bool) {
		return reduceSetup(head, "world", func(st script.Step) (string, string) {
			return dropArg(dropArg(st.Text, "drop"), "dup"), "no message loss or duplication"
		})
	},
	func(head []script.Step) ([]script.Step, string, bool) {
		return reduceSetup(head, "cluster", func(st script.Step) (string, string) {
			n, _ := argVal(st, "brokers")
			return strings.Replace(st.Text, "brokers="+n, "brokers=3", 1), "3 brokers instead of " + n
		})
	},
	func(head []script.Step) ([]script.Step, string, bool) {
		return reduceSetup(head, "cluster", func(st script.Step) (string, string) {
			n, _ := argVal(st, "partitions")
			return strings.Replace(st.Text, "partitions="+n, "partitions=1", 1), "1 partition instead of " + n
		})
	},
	func(head []script.Step) ([]script.Step, string, bool) {
		return reduceSetup(head, "cluster", func(st script.Step) (string, string) {
			return dropArg(st.Text, "controllers"), "one controller instead of a quorum"
		})
	},
}

// reduceSetup rewrites the setup's cmd line with smaller; false if that changes nothing.
func reduceSetup(head []script.Step, cmd string, smaller func(script.Step) (text, what string)) ([]script.Step, string, bool) {
	i := slices.IndexFunc(head, func(st script.Step) bool { return st.Cmd == cmd })
	if i < 0 {
		return nil, "", false
	}
	text, what := smaller(head[i])
	st, ok := reparse(head[i], text)
	if !ok || st.Text == head[i].Text {
		return nil, "", false
	}
	out := slices.Clone(head)
	out[i] = st
	return out, what, true
}

// fitRestart rewrites the liveness phase's "restart" of every node for the log cluster in
// head: brokers b1..bN, and ctl or c1..c3. Without a cluster (a queue run) it changes
// nothing.
func fitRestart(head, tail []script.Step) []script.Step {
	brokers, quorum, cluster := 3, false, false
	for _, st := range head {
		if st.Cmd == "cluster" {
			cluster = true
			if n, ok := argVal(st, "brokers"); ok {
				fmt.Sscan(n, &brokers)
			}
			_, quorum = argVal(st, "controllers")
		}
	}
	if !cluster {
		return tail
	}
	out := slices.Clone(tail)
	for i, st := range out {
		if st.Cmd != "restart" {
			continue
		}
		names := []string{"ctl"}
		if quorum {
			names = []string{"c1", "c2", "c3"}
		}
		for b := 1; b <= brokers; b++ {
			names = append(names, fmt.Sprintf("b%d", b))
		}
		for _, w := range strings.Fields(strings.TrimPrefix(st.Text, "restart")) {
			if !isServerName(w) {
				names = append(names, w) // a client
			}
		}
		if fitted, ok := reparse(st, "restart "+strings.Join(names, " ")); ok {
			out[i] = fitted
		}
	}
	return out
}

// isServerName reports whether a node name is a broker's or a controller's.
func isServerName(name string) bool {
	if name == "ctl" {
		return true
	}
	var n int
	_, errB := fmt.Sscanf(name, "b%d", &n)
	_, errC := fmt.Sscanf(name, "c%d", &n)
	return (errB == nil || errC == nil) && fmt.Sprint(name[:1], n) == name
}

// withoutAvailability is the tail without the availability phase (its fault, produce and
// run) and without the check's ack-within bound.
func withoutAvailability(tail []script.Step) ([]script.Step, bool) {
	i := slices.IndexFunc(tail, func(st script.Step) bool {
		return slices.ContainsFunc(st.Narration, func(n string) bool { return strings.HasPrefix(n, "Availability") })
	})
	if i < 0 || i+3 > len(tail) {
		return nil, false
	}
	out := slices.Concat(tail[:i], tail[i+3:])
	for k, st := range out {
		if st.Cmd == "check" {
			if c, ok := reparse(st, dropArg(st.Text, "ack-within")); ok {
				out[k] = c
			}
		}
	}
	return out, true
}

// dropArg removes "key=value" from a command line.
func dropArg(text, key string) string {
	var kept []string
	for _, w := range strings.Fields(text) {
		if !strings.HasPrefix(w, key+"=") {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, " ")
}

// reparse is st with its command line replaced by text, narration kept.
func reparse(st script.Step, text string) (script.Step, bool) {
	s, err := script.Parse("simplify", text+"\n----\n")
	if err != nil || len(s.Steps) != 1 {
		return script.Step{}, false
	}
	n := s.Steps[0]
	n.Narration = st.Narration
	return n, true
}

// mergeRuns is one "run for=" as long as two consecutive ones.
func mergeRuns(a, b script.Step) (script.Step, bool) {
	da, okA := argVal(a, "for")
	db, okB := argVal(b, "for")
	if a.Cmd != "run" || b.Cmd != "run" || !okA || !okB || len(a.Args) != 1 || len(b.Args) != 1 {
		return script.Step{}, false
	}
	x, errA := time.ParseDuration(da)
	y, errB := time.ParseDuration(db)
	if errA != nil || errB != nil {
		return script.Step{}, false
	}
	return reparse(script.Step{Narration: slices.Concat(a.Narration, b.Narration)}, fmt.Sprintf("run for=%s", x+y))
}

// withoutIdleUndos drops the liveness phase's unclog lines whose clog the shrinker deleted,
// and its resume if no pause is left: they undo nothing, and a reader would look for
// their fault.
func withoutIdleUndos(body, tail []script.Step) []script.Step {
	did := func(cmd, text string) bool {
		return slices.ContainsFunc(body, func(st script.Step) bool { return st.Cmd == cmd && strings.TrimPrefix(st.Text, cmd) == text })
	}
	return slices.DeleteFunc(slices.Clone(tail), func(st script.Step) bool {
		rest := strings.TrimPrefix(st.Text, st.Cmd)
		switch st.Cmd {
		case "unclog":
			return len(st.Narration) == 0 && !did("clog", rest)
		case "resume":
			return len(st.Narration) == 0 && !slices.ContainsFunc(body, func(b script.Step) bool { return b.Cmd == "pause" })
		}
		return false
	})
}

// splitPhases separates the setup (world, cluster), the safety phase and the liveness
// phase (from the "Liveness phase" narration on).
func splitPhases(steps []script.Step) (head, body, tail []script.Step) {
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
func simplifications(st script.Step) []script.Step {
	var out []script.Step
	with := func(text string) {
		if n, ok := reparse(st, text); ok {
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

func argVal(st script.Step, key string) (string, bool) {
	for _, a := range st.Args {
		if a.Key == key && len(a.Vals) == 1 {
			return a.Vals[0], true
		}
	}
	return "", false
}

// render writes steps back as a scenario (outputs left empty).
func render(parts ...[]script.Step) string {
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
	s, err := script.Parse("count", text)
	if err != nil {
		return 0
	}
	return len(s.Steps)
}
