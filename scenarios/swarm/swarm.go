// Package swarm makes random runs: a seed becomes a whole random scenario (cluster
// shape, settings, workload, fault plan), written in the scenario language itself, so that a failing seed is a
// scenario file that `mqsim run` and `mqsim tui` replay, and shrinking is deleting lines.
//
// Each seed also switches whole fault kinds on or off (swarm testing: rare combinations
// get their turn because common ones are sometimes absent), among them the control
// plane's: single AlterPartition, LeaderAndIsr, metadata and heartbeat messages lost,
// delayed or duplicated, and faults that strike at the moment the controller commits an
// ISR change or a new leader, where replication bugs live. A run whose --set names one of
// Kafka's legacy replication switches is biased towards the moment that switch's bug
// needs (swarm_legacy.go); the switch's modern value runs the same scripts as a control.
// A run has a safety phase with faults, then a liveness phase: every fault ends, every
// node restarts, the cluster has time to converge, a fresh consumer reads everything and
// the checkers judge the history. The txn profile (swarm_txn.go) adds transactions:
// transactional producers, read_committed and read_uncommitted consumers, a
// consume-transform-produce pipeline, and faults at the transaction coordinator, its
// messages and its clients; its liveness phase ends every transaction before the final
// read_committed read. The share profile (swarm_share.go) adds share groups: share
// consumers that acknowledge, release and reject, and faults at the share-partition
// leaders, the share coordinators, their messages and the consumers; its liveness phase
// drains every group before the checkers judge that no acknowledged record was lost.
package swarm

import (
	"context"
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
	// ProfileTxn is the safe settings with transactions (swarm_txn.go): transactional
	// producers, read_committed and read_uncommitted consumers, a transactional
	// consume-transform-produce pipeline, and faults at the transaction coordinator, its
	// messages and its clients. Every violation is a bug in mqsim.
	ProfileTxn Profile = "txn"
	// ProfileShare is the safe settings with share groups (swarm_share.go): share
	// consumers in one or two share groups, explicit and implicit acknowledgements,
	// poison records and slow consumers, and faults at the share-partition leaders, the
	// share coordinators, their messages and the consumers. Every violation is a bug in
	// mqsim.
	ProfileShare Profile = "share"
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
	if !slices.Contains([]Profile{ProfileSafe, ProfileAny, ProfileQueue, ProfileTxn, ProfileShare}, o.Profile) {
		return fmt.Errorf("profile %q: want safe, any, queue, txn or share", o.Profile)
	}
	if len(o.Set) > 0 {
		if o.Profile == ProfileQueue {
			return fmt.Errorf("--set changes the log cluster's settings: use --profile safe, any, txn or share")
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
		return fmt.Errorf("--bug %s is a log broker's bug: use --profile safe, any, txn or share", o.Bug)
	case o.Profile == ProfileQueue:
		return queueErr
	case logErr != nil && queueErr == nil:
		return fmt.Errorf("--bug %s is the queue broker's bug: use --profile queue", o.Bug)
	}
	return logErr
}

// faultKinds are the kinds a seed switches on or off.
var faultKinds = []string{"crash", "power", "pause", "partition", "one-way", "clog", "loss", "duplicate", "torn", "controller", "groups"}

// Generate writes the scenario of one random run: the log cluster's (swarm_log.go), with
// ProfileQueue the queue broker's (swarm_queue.go), with ProfileTxn the log cluster's
// with transactions (swarm_txn.go), with ProfileShare the log cluster's with share
// groups (swarm_share.go).
func Generate(seed uint64, opts Options) string {
	switch opts.Profile {
	case ProfileQueue:
		return generateQueue(seed, opts.Bug)
	case ProfileTxn:
		return generateTxn(seed, opts)
	case ProfileShare:
		return generateShare(seed, opts)
	}
	return generateLog(seed, opts)
}

// genScript is a generated scenario as it is written: commands with empty outputs.
type genScript struct{ strings.Builder }

func (s *genScript) line(format string, args ...any) { fmt.Fprintf(s, format+"\n----\n\n", args...) }

// startScript switches each of kinds on or off (swarm testing), writes the header that
// says which, and the world line: jitter, fsync time up to maxFsyncMs, and with "loss"
// or "duplicate" on, up to maxPPM of the messages lost or duplicated.
// extra are kinds switched on by another stream, named in the header and set in on.
func startScript(r *sim.Rand, seed uint64, opts Options, kinds, extra []string, maxFsyncMs, maxPPM int) (*genScript, map[string]bool, []string) {
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
	for _, k := range extra {
		on[k] = true
	}
	fmt.Fprintf(b, ".\n# Fault kinds on: %s.\n", orNone(slices.Concat(enabled, extra)))
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

// The control plane's messages, by direction: what a controller sends a broker, and what
// a broker sends a controller. Heartbeat answers exist only with a quorum.
var (
	toBroker     = []string{"AlterPartitionResponse", "LeaderAndIsr", "Metadata", "AlterPartitionResponse", "LeaderAndIsr"}
	toController = []string{"AlterPartition", "BrokerHeartbeat", "AlterPartition"}
)

// replicaOfT0 picks a broker that holds t/0, b1 (its first leader) half the time.
func replicaOfT0(r *sim.Rand, brokers []string) string {
	if r.Chance(sim.Percent(50)) {
		return brokers[0]
	}
	return brokers[r.IntN(3)]
}

// messageFault loses, delays or duplicates the next few control-plane messages of one
// kind between a controller and a broker, AlterPartition and LeaderAndIsr most often.
func (s *genScript) messageFault(r *sim.Rand, ctls, brokers []string) {
	ctl, b := ctls[r.IntN(len(ctls))], replicaOfT0(r, brokers)
	from, to, kind := ctl, b, ""
	if r.Chance(sim.Percent(65)) {
		kinds := toBroker
		if len(ctls) > 1 {
			kinds = append(slices.Clone(kinds), "BrokerHeartbeatResponse")
		}
		kind = kinds[r.IntN(len(kinds))]
	} else {
		from, to, kind = b, ctl, toController[r.IntN(len(toController))]
	}
	s.faultNextMessages(r, from, to, kind, 5)
}

// momentFault runs until the controller commits an ISR change or a new leader of t/0,
// and strikes in the moment before the brokers learn of it, at whoever holds the role
// then: the controller's messages to t/0's leader are lost for a while (its AlterPartition
// answer, its LeaderAndIsr and metadata, the pushes that should repair them), or a
// replica crashes, restarts or both (a follower restarting between fetching a record and
// learning the HW that covers it), or the leader and a follower crash at once.
func (s *genScript) momentFault(r *sim.Rand, ctls, brokers []string) {
	const leader = "leader:t/0"
	role := []string{leader, "follower:t/0"}[r.IntN(2)]
	k := r.IntN(8)
	if k > 1 {
		what := []string{"isr", "leader", "(isr, leader)"}[r.IntN(3)]
		s.line("run until-change=%s partition=t/0 limit=%dms", what, 500+r.IntN(5000))
	}
	switch k {
	case 0, 1:
		// An ISR expansion whose answer is lost: a replica x stops long enough to be
		// fenced and leave the ISR, comes back and catches up; when the controller
		// commits it back into the ISR, the answer to the leader's AlterPartition is
		// lost, and so are the pushes that would tell it the outcome, for several
		// heartbeats: it asks again meanwhile, and is told its request is stale. Then
		// x falls behind again.
		x := brokers[r.IntN(3)]
		s.line("pause %s", x)
		s.line("run until-change=isr partition=t/0 limit=%dms", 3000+r.IntN(4000))
		s.line("resume %s", x)
		s.line("run until-change=isr partition=t/0 limit=%dms", 500+r.IntN(3000))
		n := 3 + r.IntN(15)
		for _, ctl := range ctls {
			s.line("drop-next %s -> %s kind=AlterPartitionResponse", ctl, leader)
			s.line("drop-next %s -> %s kind=LeaderAndIsr count=%d", ctl, leader, n)
			s.line("drop-next %s -> %s kind=Metadata count=%d", ctl, leader, n)
		}
		s.line("run for=%dms", 2000+r.IntN(4000))
		s.line("cut %s -> %s", leader, x)
	case 2:
		// The controller's news stops reaching the leader for longer than it waits
		// before it asks again (lag-max/2).
		b := brokers[r.IntN(3)]
		for _, ctl := range ctls {
			s.line("cut %s -> %s", ctl, b)
		}
		s.line("run for=%dms", 2000+r.IntN(5000))
		for _, ctl := range ctls {
			s.line("heal %s -> %s", ctl, b)
		}
	case 3:
		for _, ctl := range ctls {
			s.line("drop-next %s -> %s count=%d", ctl, role, 2+r.IntN(11))
		}
	case 4:
		s.line("crash %s", role)
	case 5:
		s.line("restart %s", brokers[r.IntN(3)])
	case 6:
		b := brokers[r.IntN(3)]
		s.line("crash %s", b)
		s.line("run for=%dms", 1+r.IntN(200))
		s.line("restart %s", b)
	default:
		// The leader and a follower at once: the double failover that truncation bugs
		// need.
		s.line("crash %s follower:t/0", leader)
	}
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

// linkFault writes one of the log profiles' network faults of kind k, if k is one of them
// (pause, partition, one-way, clog; loss and duplicate only heal what the links do, their
// rates being drawn for the whole safety phase), and reports whether it was. Draws come
// from r in a fixed order, so a seed's script does not depend on which profile calls it.
func (s *genScript) linkFault(r *sim.Rand, k string, nodes, brokers []string, paused, clogged *[]string) bool {
	pick := func(from []string) string { return from[r.IntN(len(from))] }
	switch k {
	case "pause":
		s.pauseOrResume(pick(brokers), paused)
	case "partition":
		s.randomPartition(r, nodes)
	case "one-way":
		a, c := pick(nodes), pick(nodes)
		if a != c {
			s.line("cut %s -> %s", a, c)
		}
	case "clog":
		a, c := pick(brokers), pick(brokers)
		if a != c {
			s.line("clog %s -> %s", a, c)
			*clogged = append(*clogged, a+" -> "+c)
		}
	case "loss", "duplicate":
		s.line("heal")
	default:
		return false
	}
	return true
}

// serverFault writes one of the txn and share profiles' faults of the servers, if k is
// one of their kinds (crash, power, controller, torn), and reports whether it was: a
// broker crashed or restarted, a power loss of every broker (back after runFor), a
// controller crashed or restarted or, in a quorum, cut off from every other node, a torn
// write. Draws come from r in a fixed order, so a seed's script does not depend on which
// profile calls it.
func (s *genScript) serverFault(r *sim.Rand, k string, ctls, nodes, brokers []string, runFor func() int) bool {
	pick := func(from []string) string { return from[r.IntN(len(from))] }
	switch k {
	case "crash":
		s.line("%s %s", pick([]string{"crash", "restart"}), pick(brokers))
	case "power":
		s.line("crash %s", strings.Join(brokers, " "))
		s.line("run for=%dms", runFor())
		s.line("restart %s", strings.Join(brokers, " "))
	case "controller":
		n := pick(ctls)
		if len(ctls) > 1 && r.Chance(sim.Percent(30)) {
			others := slices.DeleteFunc(slices.Clone(nodes), func(x string) bool { return x == n })
			s.line("partition %s | %s", n, strings.Join(others, " "))
		} else {
			s.line("%s %s", pick([]string{"crash", "restart"}), n)
		}
	case "torn":
		s.line("torn %s", pick(brokers))
	default:
		return false
	}
	return true
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
	return ShrinkWatched(context.Background(), text, want, maxRuns)
}

// ShrinkWatched is Shrink that stops trying candidates once ctx is done, and returns
// the smallest failing script found by then.
func ShrinkWatched(ctx context.Context, text string, want []checker.Anomaly, maxRuns int) Shrunk {
	s, err := script.Parse("shrink", text)
	if err != nil {
		return Shrunk{Text: text}
	}
	var done []string
	head, body, tail := splitPhases(s.Steps)
	runs := 0
	failsWith := func(head, body, tail []script.Step) bool {
		if runs >= maxRuns || ctx.Err() != nil {
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

// setupCommands are the commands a run's setup is made of: the world and the cluster,
// and (the txn and share profiles) the topics and clients the later commands name. The shrinker
// keeps them: without the output topic or a transactional producer, a run fails for
// another reason than the one being shrunk. The lab-* commands build a lab's nodes
// (package labs), which a lab's run cannot do without either.
var setupCommands = []string{"world", "cluster", "topic", "producer", "consumer", "pipeline", "share-consumer", "lab-db", "lab-app", "lab-replicas", "lab-client", "lab-producer"}

// splitPhases separates the setup (setupCommands, up to the first other command), the
// safety phase and the liveness phase (from the "Liveness phase" narration on).
func splitPhases(steps []script.Step) (head, body, tail []script.Step) {
	i := 0
	for i < len(steps) && slices.Contains(setupCommands, steps[i].Cmd) {
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
		if l, ok := argVal(st, "limit"); ok {
			with("run for=" + l) // a run to the moment of a change, as a plain run
		}
	case "produce":
		if c, ok := argVal(st, "count"); ok && c != "1" {
			with(strings.Replace(st.Text, "count="+c, "count=1", 1))
		}
	case "drop-next", "delay-next", "dup-next":
		// One message instead of several.
		if _, ok := argVal(st, "count"); ok {
			with(dropArg(st.Text, "count"))
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

// faultNextMessages writes a drop-next (drops times in ten), delay-next (three in ten)
// or dup-next of the next one to three messages of kind on the link from -> to.
func (s *genScript) faultNextMessages(r *sim.Rand, from, to, kind string, drops int) {
	count := ""
	if n := 1 + r.IntN(3); n > 1 {
		count = fmt.Sprintf(" count=%d", n)
	}
	switch op := r.IntN(10); {
	case op < drops:
		s.line("drop-next %s -> %s kind=%s%s", from, to, kind, count)
	case op < drops+3:
		s.line("delay-next %s -> %s for=%dms kind=%s%s", from, to, 10+r.IntN(4000), kind, count)
	default:
		s.line("dup-next %s -> %s kind=%s%s", from, to, kind, count)
	}
}

// endFaults opens a liveness phase: every fault ends (partitions healed, clogged links
// unclogged, paused brokers and clients resumed when resume, every node and client
// restarted, no loss or duplication left on any link), then 30s to settle.
func (s *genScript) endFaults(clogged []string, resume bool, brokers, nodes, clients []string) {
	s.line("heal")
	for _, c := range clogged {
		s.line("unclog %s", c)
	}
	if resume {
		s.line("resume %s", strings.Join(append(slices.Clone(brokers), clients...), " "))
	}
	s.line("restart %s", strings.Join(append(slices.Clone(nodes), clients...), " "))
	s.line("link all drop=0%% dup=0%%")
	s.line("run for=30s")
}

// safeCluster writes the cluster line of the txn and share profiles: 3 to 5 brokers, 1 to
// 4 partitions of t, the safe settings, the planted bug and --set, the profile's own
// settings (extra, which may draw from r), and a single controller or a quorum of three.
// It returns t's partitions, the controllers, every server node and the brokers.
func (s *genScript) safeCluster(r *sim.Rand, opts Options, extra func() []string) (parts int, ctls, nodes, brokers []string) {
	n := 3 + r.IntN(3)
	parts = 1 + r.IntN(4)
	settings := []string{fmt.Sprintf("brokers=%d partitions=%d", n, parts),
		"rf=3 min-isr=2 acks=all idempotence=true unclean=false flush=every-batch"}
	if opts.Bug != "" {
		settings = append(settings, fmt.Sprintf("bugs=(%s)", opts.Bug))
	}
	settings = append(settings, opts.Set...)
	settings = append(settings, extra()...)
	ctls = []string{"ctl"}
	if r.Chance(sim.Percent(50)) {
		ctls = []string{"c1", "c2", "c3"}
		settings = append(settings, "controllers=3")
	}
	s.line("cluster %s", strings.Join(settings, " "))
	nodes = slices.Clone(ctls)
	for i := 1; i <= n; i++ {
		nodes = append(nodes, fmt.Sprintf("b%d", i))
	}
	return parts, ctls, nodes, nodes[len(ctls):]
}
