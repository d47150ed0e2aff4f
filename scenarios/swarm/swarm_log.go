package swarm

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/sim"
)

// The log profiles of the swarm (ProfileSafe, ProfileAny): each seed becomes a whole
// random run of the log cluster in the scenario language. A run is written in phases, in
// this order, each drawing from the seed's random streams in turn (so the order of the
// phases and of the draws inside them is the text: changing either changes every seed's
// scenario): the world line, the cluster and its settings, a consumer group when "groups"
// is on, the safety phase of produces and faults, the liveness phase, the availability
// fault (safe settings only), and the final read and check.

// logRun is one log-cluster run being written: the seed's random streams, the script so
// far, the names its commands draw on, and the faults the safety phase left in force.
type logRun struct {
	r *sim.Rand // the seed's main stream
	// cr draws the controllers: a stream of its own, so that the single-controller seeds
	// stayed as they were when the controller quorum came in.
	cr *sim.Rand
	// cp draws the control plane's faults (controlKinds): a stream of its own, so that the
	// seeds that draw none of them stayed as they were.
	cp      *sim.Rand
	b       *genScript
	on      map[string]bool // the fault kinds switched on
	enabled []string        // the same, in faultKinds' order

	ctls    []string // "ctl", or the quorum c1 c2 c3
	nodes   []string // the controllers, then the brokers
	brokers []string // b1, b2, ...
	members []string // the consumer group's members (with "groups" on)
	// tight says the runs between commands are drawn on a log scale (see runFor).
	tight bool
	// legacy is the bias towards the moments of the legacy switches --set names; nil
	// without one (swarm_legacy.go).
	legacy *legacyBias

	paused, clogged []string // in the safety phase, so far

	// kip848: the consumer group speaks the consumer protocol (KIP-848), drawn from a
	// stream of its own so that the other seeds' scripts stayed as they were.
	kip848         bool
	kip848Assignor string // its server-side assignor, uniform or range
}

// controlKinds are the kinds of the control plane's faults, switched on or off from a
// stream of their own ("swarm/control") so that the scripts of seeds that draw none of
// them stay as they were: "messages" loses, delays or duplicates single AlterPartition,
// LeaderAndIsr, metadata and heartbeat messages; "moments" waits for the controller to
// commit an ISR change or a new leader and strikes then, before the brokers know.
var controlKinds = []string{"messages", "moments"}

// clientSettings are the clients' settings on every log-based profile's cluster line:
// group timeouts short enough for a run to see a crashed member leave, and
// producer timeouts short enough for retries to happen within it.
const clientSettings = "session-timeout=3s heartbeat=1s lag-max=5s request-timeout=2s delivery-timeout=2m retry-backoff=100ms linger=1ms auto-offset-reset=earliest"

// generateLog writes the scenario of one random log-cluster run.
func generateLog(seed uint64, opts Options) string {
	r := sim.NewRand(seed, "swarm")
	cp := sim.NewRand(seed, "swarm/control")
	var control []string
	for _, k := range controlKinds {
		if cp.Chance(sim.Percent(50)) {
			control = append(control, k)
		}
	}
	b, on, enabled := startScript(r, seed, opts, faultKinds, control, 30, 30_000)
	g := &logRun{r: r, cp: cp, b: b, on: on, enabled: enabled, legacy: newLegacyBias(seed, opts.Set)}
	// The safe settings: with a planted bug too, so that only the bug can fail a run.
	safe := opts.Profile == ProfileSafe || opts.Bug != ""
	brokers := g.cluster(seed, opts, safe)
	g.group()
	g.nodes = slices.Clone(g.ctls)
	for i := 1; i <= brokers; i++ {
		g.nodes = append(g.nodes, fmt.Sprintf("b%d", i))
	}
	g.brokers = g.nodes[len(g.ctls):]
	// Half the seeds keep their faults close together (see runFor).
	g.tight = r.Chance(sim.Percent(50))
	g.safetyPhase()
	g.livenessPhase()
	check := "check"
	if len(g.members) > 0 {
		check += " promise=at-least-once"
	}
	if safe {
		g.availabilityFault(seed)
		check += " ack-within=30s"
	}
	b.line("consume consumer=reader")
	b.line("%s", check)
	return b.String()
}

// cluster writes the cluster line: its size, the settings (the safe ones, or drawn
// freely), a planted bug, the timeouts, and one controller or a quorum. It returns the
// number of brokers.
func (g *logRun) cluster(seed uint64, opts Options, safe bool) int {
	r := g.r
	brokers := 3 + r.IntN(3)
	settings := []string{fmt.Sprintf("brokers=%d", brokers), fmt.Sprintf("partitions=%d", 1+r.IntN(4))}
	if safe {
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
	if g.legacy != nil {
		settings = g.legacy.adjust(settings, opts.Set)
	}
	settings = append(settings, opts.Set...)
	settings = append(settings, clientSettings)
	// A third of the seeds with a consumer group run it under the consumer protocol, with
	// the coordinator's session and heartbeat as short as the classic members' (below
	// Kafka's 45s/5s floors, so that the run sees fencing and hand-overs).
	kr := sim.NewRand(seed, "swarm/kip848")
	// --set group-protocol=consumer puts every seed's group under it.
	g.kip848 = g.on["groups"] && (kr.Chance(sim.Percent(33)) || slices.Contains(opts.Set, "group-protocol=consumer"))
	if g.kip848 {
		g.kip848Assignor = []string{"uniform", "range"}[kr.IntN(2)]
		settings = append(settings, "consumer-session-timeout=6s consumer-heartbeat=1s")
	}
	// Half the seeds run a quorum of controllers (KRaft) rather than the single one.
	g.cr = sim.NewRand(seed, "swarm/controllers")
	g.ctls = []string{"ctl"}
	if g.cr.Chance(sim.Percent(50)) {
		g.ctls = []string{"c1", "c2", "c3"}
		settings = append(settings, "controllers=3")
	}
	g.b.line("cluster %s", strings.Join(settings, " "))
	return brokers
}

// group writes, with "groups" on, a consumer group that reads along; its members crash,
// restart and pause (rebalances), and it commits after processing, so it must lose
// nothing.
func (g *logRun) group() {
	if !g.on["groups"] {
		return
	}
	r := g.r
	proto := []string{"assignor=range protocol=eager", "assignor=sticky protocol=eager", "assignor=cooperative-sticky protocol=cooperative"}[r.IntN(3)]
	if g.kip848 {
		proto += " group-protocol=consumer remote-assignor=" + g.kip848Assignor
	}
	g.b.line("group name=g commit=after session-timeout=6s heartbeat=1s max-poll-interval=8s %s", proto)
	for i := 1; i <= 2+r.IntN(2); i++ {
		m := fmt.Sprintf("g%d", i)
		g.members = append(g.members, m)
		g.b.line("join consumer=%s group=g poll-every=500ms wait=false", m)
	}
}

// pick draws one of from.
func (g *logRun) pick(from []string) string { return from[g.r.IntN(len(from))] }

// runFor draws how long to run between two commands, in milliseconds. A tight seed draws
// on a log scale (1ms to 2s, most of them short), so that a crash can land inside the few
// milliseconds between an acknowledgement and the fsync behind it; the others draw evenly
// up to 2s and let timeouts, fencing and rebalances play out.
func (g *logRun) runFor() int { return drawRun(g.r, g.tight) }

// drawRun is runFor's draw, shared by the log profiles and the txn profile.
func drawRun(r *sim.Rand, tight bool) int {
	if tight {
		lo := 1 << r.IntN(11)
		return min(lo+r.IntN(lo), 2000)
	}
	return 1 + r.IntN(2000)
}

// safetyPhase writes 10 to 39 commands, each a produce or a fault of an enabled kind,
// each followed by a run.
func (g *logRun) safetyPhase() {
	r := g.r
	steps := 10 + r.IntN(30)
	for i := 0; i < steps; i++ {
		if r.Chance(sim.Percent(45)) || len(g.enabled) == 0 {
			g.b.line("produce producer=p%d count=%d wait=false", 1+r.IntN(2), 1+r.IntN(5))
		} else {
			g.fault(g.pick(g.enabled))
		}
		if g.on["messages"] && g.cp.Chance(sim.Percent(30)) {
			g.b.messageFault(g.cp, g.ctls, g.brokers)
		}
		if g.on["moments"] && g.cp.Chance(sim.Percent(25)) {
			g.b.momentFault(g.cp, g.ctls, g.brokers)
		}
		if g.legacy != nil {
			g.legacy.moment(g.b, g.ctls)
		}
		g.b.line("run for=%dms", g.runFor())
	}
}

// fault writes one fault of kind k.
func (g *logRun) fault(k string) {
	r, line := g.r, g.b.line
	if g.b.linkFault(r, k, g.nodes, g.brokers, &g.paused, &g.clogged) {
		return
	}
	switch k {
	case "crash":
		if r.Chance(sim.Percent(50)) {
			line("crash %s", g.pick(g.brokers))
		} else {
			line("restart %s", g.pick(g.brokers))
		}
	case "power":
		// A power loss: every broker at once, with whatever was not on disk; they come
		// back at once too (a crash alone would leave the cluster down until the
		// liveness phase).
		line("crash %s", strings.Join(g.brokers, " "))
		line("run for=%dms", g.runFor())
		line("restart %s", strings.Join(g.brokers, " "))
	case "controller":
		g.controllerFault()
	case "groups":
		m := g.pick(g.members)
		switch r.IntN(3) {
		case 0:
			line("crash %s", m)
		case 1:
			line("restart %s", m)
		default:
			line("consumer-pause %s for=%dms", m, 1+r.IntN(10_000))
		}
	case "torn":
		line("torn %s", g.pick(g.brokers))
	}
}

// controllerFault crashes or restarts the single controller; a quorum member crashes,
// restarts, is cut off from the other controllers (brokers still reach it), or from every
// server.
func (g *logRun) controllerFault() {
	line := g.b.line
	if len(g.ctls) == 1 {
		line("%s ctl", g.pick([]string{"crash", "restart"}))
		return
	}
	n := g.ctls[g.cr.IntN(len(g.ctls))]
	others := func(from []string) string {
		return strings.Join(slices.DeleteFunc(slices.Clone(from), func(x string) bool { return x == n }), " ")
	}
	switch g.cr.IntN(4) {
	case 0:
		line("crash %s", n)
	case 1:
		line("restart %s", n)
	case 2:
		line("partition %s | %s", n, others(g.ctls))
	default:
		line("partition %s | %s", n, others(g.nodes))
	}
}

// livenessPhase ends every fault, restarts every node and gives the cluster time to
// converge.
func (g *logRun) livenessPhase() {
	line := g.b.line
	g.b.WriteString("# Liveness phase: every fault ends and the cluster converges.\n")
	line("heal")
	for _, c := range g.clogged {
		line("unclog %s", c)
	}
	if g.on["pause"] {
		// Every broker, not only those paused now: a shrunk script may lose a resume of
		// the safety phase, and must not then fail for a broker left paused.
		line("resume %s", strings.Join(g.brokers, " "))
	}
	line("restart %s", strings.Join(append(slices.Clone(g.nodes), g.members...), " "))
	line("link all drop=0%% dup=0%%")
	// delivery.timeout.ms stays at Kafka's 2 minutes, longer than any safety phase: an
	// idempotent producer whose batch expires must take a new producer id, and batches it
	// then re-sends may duplicate earlier attempts (the guarantee holds within one producer
	// id). The liveness phase gives retries time to finish.
	line("run for=2m")
}

// availabilityFault tests what rf=3 with min.insync.replicas=2 promises: to keep taking
// writes with one replica gone. One fault of that size stays in force (the last fault, so
// the checker's "heal" is its start): t/0's leader crashes, or the link from it to a
// follower clogs (a gray failure only the leader can notice: the ISR must shrink). New
// writes to t/0 must then be acknowledged within 30s (the check's ack-within).
func (g *logRun) availabilityFault(seed uint64) {
	ar := sim.NewRand(seed, "swarm/availability")
	g.b.WriteString("# Availability: one fault the configuration tolerates stays in force.\n")
	if ar.Chance(sim.Percent(50)) {
		g.b.line("crash leader:t/0")
	} else {
		g.b.line("clog leader:t/0 -> follower:t/0")
	}
	g.b.line("produce producer=pa partition=0 count=3 wait=false")
	g.b.line("run for=1m")
}
