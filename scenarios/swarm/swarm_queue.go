package swarm

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/sim"
)

// The queue profile of the swarm (ProfileQueue): each seed becomes a whole random run of
// the queue broker (model/queue) in the scenario language, as Generate does for the log
// cluster. The configuration is the one RabbitMQ documents as safe: quorum queues
// (replicated by Raft), publisher confirms, manual acks after processing, no delivery
// limit, no TTL, no length limit, and every publish routed to at least one queue. Under
// it a confirmed message is processed at least once whatever the faults, so every
// violation the checks find is a failure; redeliveries and reorders are what
// at-least-once delivery allows, and the checks report them as allowed.
//
// A run has the same shape as the log profile's, so Shrink can cut it: the world line,
// the setup (broker, exchanges, queues, bindings, publishers, consumers), a safety phase
// of publishes and faults (narrated "Safety phase"), and a liveness phase (narrated
// "Liveness phase") in which every fault ends, every node restarts, the queues drain and
// the check runs.

// queueFaultKinds are the fault kinds a queue seed switches on or off (swarm testing).
var queueFaultKinds = []string{
	"crash",          // broker nodes crash and restart (sometimes all at once)
	"pause",          // broker nodes freeze and resume
	"partition",      // the nodes (brokers and clients) split in two
	"one-way",        // one direction of a link is cut
	"clog",           // a link holds its messages until unclogged
	"loss",           // the network drops messages (everywhere, and spikes on one link)
	"duplicate",      // the network duplicates messages
	"torn",           // a broker's next crash tears its unsynced writes
	"consumer-crash", // consumers crash (their channels die, the broker requeues) and restart
	"consumer-slow",  // consumers are slow to process, and freeze for a while
}

// queueNames is a fixed list, taken in order, so no map order reaches the text.
var queueNames = []string{"orders", "billing", "audit"}

// queueRun is one queue-broker run being written: the seed's random stream, the script
// so far, the names its commands draw on, and the faults the safety phase left in force.
// Its phases draw from the stream in the order generateQueue calls them.
type queueRun struct {
	r       *sim.Rand
	b       *genScript
	on      map[string]bool // the fault kinds switched on
	enabled []string        // the same, in queueFaultKinds' order

	brokers    []string // q1, q2, ...
	queues     []string // a prefix of queueNames
	routes     []string // the routing arguments of a publish, each reaching a queue
	publishers []string
	consumers  []string
	all        []string // brokers, publishers, consumers
	// timeoutMs is the broker's consumer timeout (0: none).
	timeoutMs int

	paused, clogged []string // in the safety phase, so far
}

// generateQueue writes the scenario of one random queue-mode run (ProfileQueue), with a
// queue-broker bug (model/queue.BugList) planted, or none when bug is "". The bug draws
// nothing from the seed's random stream: a seed is the same run with and without it.
func generateQueue(seed uint64, bug string) string {
	r := sim.NewRand(seed, "swarm/queue")
	b, on, enabled := startScript(r, seed, Options{Profile: ProfileQueue, Bug: bug}, queueFaultKinds, nil, 10, 20_000)
	g := &queueRun{r: r, b: b, on: on, enabled: enabled}
	g.broker(bug)
	g.declareQueues()
	g.exchanges()
	g.addPublishers()
	g.subscribeConsumers()
	g.all = slices.Concat(g.brokers, g.publishers, g.consumers)
	g.safetyPhase()
	g.livenessPhase()
	b.WriteString("# At least once: every confirmed message processed; redeliveries and reorders allowed.\n")
	b.line("check promise=at-least-once")
	return b.String()
}

// pick draws one of from.
func (g *queueRun) pick(from []string) string { return from[g.r.IntN(len(from))] }

// broker writes the broker line: quorum queues, confirms, manual acks, no delivery limit,
// and with slow consumers on, for half the seeds, a consumer timeout.
func (g *queueRun) broker(bug string) {
	r := g.r
	nodes := []int{3, 5}[r.IntN(2)]
	for i := 1; i <= nodes; i++ {
		g.brokers = append(g.brokers, fmt.Sprintf("q%d", i))
	}
	// mandatory=true: every publish here is routable, but a shrunk scenario may lose a
	// binding, and then the message comes back (failed) rather than being confirmed
	// and dropped, which would be a loss that the shrinking made.
	broker := fmt.Sprintf("queue-broker nodes=%d queue-type=quorum confirms=true mandatory=true auto-ack=false delivery-limit=-1 on-fail=requeue confirm-timeout=%dms",
		nodes, 1000+500*r.IntN(5))
	// The consumer timeout (consumer_timeout) bounds how long a delivery may stay
	// unacknowledged: a consumer that holds one longer loses its channel, and everything
	// it held is redelivered.
	if g.on["consumer-slow"] && r.Chance(sim.Percent(50)) {
		g.timeoutMs = 2000 + 500*r.IntN(9)
		broker += fmt.Sprintf(" consumer-timeout=%dms", g.timeoutMs)
	}
	if bug != "" {
		broker += fmt.Sprintf(" bugs=(%s)", bug)
	}
	g.b.WriteString("# Setup: quorum queues, publisher confirms, manual acks, no delivery limit.\n")
	g.b.line("%s", broker)
}

// declareQueues writes the queues, each a Raft group on all nodes or (five nodes) on
// three of them.
func (g *queueRun) declareQueues() {
	r := g.r
	g.queues = queueNames[:1+r.IntN(len(queueNames))]
	for _, q := range g.queues {
		members := ""
		if len(g.brokers) == 5 && r.Chance(sim.Percent(50)) {
			order := slices.Clone(g.brokers)
			shuffle(r, order)
			m := order[:3]
			slices.Sort(m)
			members = fmt.Sprintf(" members=(%s)", strings.Join(m, ", "))
		}
		g.b.line("queue name=%s%s", q, members)
	}
}

// exchanges writes exchanges and bindings, and gathers the routes a publish may take
// (its routing arguments): each reaches at least one queue, so no confirmed message is
// dropped as unroutable.
func (g *queueRun) exchanges() {
	r, line, queues := g.r, g.b.line, g.queues
	for _, q := range queues {
		g.routes = append(g.routes, "key="+q) // the default exchange
	}
	if r.Chance(sim.Percent(60)) {
		line("exchange name=direct-x type=direct")
		for _, q := range queues {
			line("bind exchange=direct-x queue=%s key=%s", q, q)
			g.routes = append(g.routes, "exchange=direct-x key="+q)
		}
	}
	if r.Chance(sim.Percent(50)) {
		line("exchange name=topic-x type=topic")
		for _, q := range queues {
			line("bind exchange=topic-x queue=%s key=ev.%s.*", q, q)
			g.routes = append(g.routes, fmt.Sprintf("exchange=topic-x key=ev.%s.created", q))
		}
		if len(queues) > 1 && r.Chance(sim.Percent(50)) {
			line("bind exchange=topic-x queue=%s key=ev.#", queues[len(queues)-1])
		}
	}
	if r.Chance(sim.Percent(50)) {
		line("exchange name=fanout-x type=fanout")
		n := 1 + r.IntN(len(queues))
		for _, q := range queues[:n] {
			line("bind exchange=fanout-x queue=%s", q)
		}
		g.routes = append(g.routes, "exchange=fanout-x")
	}
	if r.Chance(sim.Percent(30)) {
		line("exchange name=headers-x type=headers")
		for _, q := range queues {
			line("bind exchange=headers-x queue=%s match=all headers=(dest:%s)", q, q)
			g.routes = append(g.routes, fmt.Sprintf("exchange=headers-x headers=(dest:%s)", q))
		}
	}
}

// addPublishers writes one to three publishers, each connected to a node of its own; it
// fails over to the next one when a confirm does not come in time.
func (g *queueRun) addPublishers() {
	for i := 1; i <= 1+g.r.IntN(3); i++ {
		p := fmt.Sprintf("p%d", i)
		g.publishers = append(g.publishers, p)
		g.b.line("publisher name=%s node=%s", p, g.pick(g.brokers))
	}
}

// subscribeConsumers writes one or two consumers for every queue, with a prefetch window
// and a processing time each.
func (g *queueRun) subscribeConsumers() {
	r := g.r
	n := 0
	for _, q := range g.queues {
		for k := 0; k < 1+r.IntN(2); k++ {
			n++
			c := fmt.Sprintf("c%d", n)
			g.consumers = append(g.consumers, c)
			prefetch := []int{1, 1, 2, 3, 5, 10, 0}[r.IntN(7)]
			processing := 1 + r.IntN(20)
			if g.on["consumer-slow"] && r.Chance(sim.Percent(50)) {
				processing = 50 + r.IntN(300)
			}
			if g.timeoutMs > 0 {
				// A consumer must be able to finish its window within half the
				// consumer timeout, or it would lose its channel forever.
				if prefetch == 0 {
					prefetch = 1 + r.IntN(5)
				}
				prefetch = max(1, min(prefetch, g.timeoutMs/2/processing))
			}
			g.b.line("subscribe consumer=%s queue=%s prefetch=%d processing=%dms node=%s", c, q, prefetch, processing, g.pick(g.brokers))
		}
	}
}

// safetyPhase writes 10 to 34 commands, each a publish or a fault of an enabled kind,
// each followed by a run.
func (g *queueRun) safetyPhase() {
	r := g.r
	steps := 10 + r.IntN(25)
	g.b.WriteString("# Safety phase: publishes and faults.\n")
	for i := 0; i < steps; i++ {
		if r.Chance(sim.Percent(45)) || len(g.enabled) == 0 {
			route := g.pick(g.routes)
			g.b.line("publish publisher=%s %s count=%d wait=false", g.pick(g.publishers), route, 1+r.IntN(8))
		} else {
			g.fault(g.pick(g.enabled))
		}
		g.b.line("run for=%dms", 1+r.IntN(1500))
	}
}

// fault writes one fault of kind k.
func (g *queueRun) fault(k string) {
	r, line, all := g.r, g.b.line, g.all
	switch k {
	case "crash":
		switch {
		case r.Chance(sim.Percent(10)):
			// A power loss: every broker node at once.
			line("crash %s", strings.Join(g.brokers, " "))
		case r.Chance(sim.Percent(10)):
			line("crash %s", g.pick(g.publishers))
		case r.Chance(sim.Percent(50)):
			line("crash %s", g.pick(g.brokers))
		default:
			line("restart %s", strings.Join(slices.Concat(g.brokers, g.publishers), " "))
		}
	case "pause":
		g.b.pauseOrResume(g.pick(g.brokers), &g.paused)
	case "partition":
		g.b.randomPartition(r, all)
	case "one-way":
		a, c := g.pick(all), g.pick(all)
		if a != c {
			line("cut %s -> %s", a, c)
		}
	case "clog":
		a, c := g.pick(all), g.pick(all)
		if a != c && !slices.Contains(g.clogged, a+" -> "+c) {
			line("clog %s -> %s", a, c)
			g.clogged = append(g.clogged, a+" -> "+c)
		}
	case "loss":
		a, c := g.pick(all), g.pick(all)
		if a != c {
			line("link %s -> %s drop=%d%%", a, c, 5+r.IntN(40))
		}
	case "duplicate":
		a, c := g.pick(all), g.pick(all)
		if a != c {
			line("link %s -> %s dup=%d%%", a, c, 5+r.IntN(40))
		}
	case "torn":
		line("torn %s", g.pick(g.brokers))
	case "consumer-crash":
		if r.Chance(sim.Percent(60)) {
			line("crash %s", g.pick(g.consumers))
		} else {
			line("restart %s", strings.Join(g.consumers, " "))
		}
	case "consumer-slow":
		g.b.pauseOrResume(g.pick(g.consumers), &g.paused)
	}
}

// livenessPhase ends every fault whatever the safety phase still holds (a shrunk scenario
// may have lost a resume: resuming or restarting a node that runs is a no-op), lets the
// broker settle, reads every queue with a fresh consumer, publishes once more and drains.
func (g *queueRun) livenessPhase() {
	line := g.b.line
	g.b.WriteString("# Liveness phase: every fault ends, every node restarts, the queues drain.\n")
	line("heal")
	for _, c := range g.clogged {
		line("unclog %s", c)
	}
	line("resume %s", strings.Join(g.all, " "))
	line("link all drop=0%% dup=0%%")
	line("restart %s", strings.Join(g.all, " "))
	// Elections settle, publishes in flight get their confirms or time out, consumers
	// find the leaders again.
	line("run for=5s")
	// A fresh reader on every queue, as the log profile's final consumer: whatever the
	// safety phase did to the first consumers (or a shrunk scenario left out), each
	// queue is read to the end.
	for _, q := range g.queues {
		line("subscribe consumer=reader-%s queue=%s prefetch=10 processing=1ms", q, q)
	}
	// A healed broker takes new work: one more publish to every queue, waited for.
	for _, q := range g.queues {
		line("publish publisher=%s key=%s count=2", g.pick(g.publishers), q)
	}
	line("drain limit=2m")
}
