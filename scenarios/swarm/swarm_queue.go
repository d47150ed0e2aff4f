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

// generateQueue writes the scenario of one random queue-mode run (ProfileQueue), with a
// queue-broker bug (model/queue.BugList) planted, or none when bug is "". The bug draws
// nothing from the seed's random stream: a seed is the same run with and without it.
func generateQueue(seed uint64, bug string) string {
	r := sim.NewRand(seed, "swarm/queue")
	pick := func(from []string) string { return from[r.IntN(len(from))] }
	b, on, enabled := startScript(r, seed, Options{Profile: ProfileQueue, Bug: bug}, queueFaultKinds, nil, 10, 20_000)
	line := b.line

	// The broker: quorum queues, confirms, manual acks, no delivery limit.
	nodes := []int{3, 5}[r.IntN(2)]
	var brokers []string
	for i := 1; i <= nodes; i++ {
		brokers = append(brokers, fmt.Sprintf("q%d", i))
	}
	// mandatory=true: every publish here is routable, but a shrunk scenario may lose a
	// binding, and then the message comes back (failed) rather than being confirmed
	// and dropped, which would be a loss that the shrinking made.
	broker := fmt.Sprintf("queue-broker nodes=%d queue-type=quorum confirms=true mandatory=true auto-ack=false delivery-limit=-1 on-fail=requeue confirm-timeout=%dms",
		nodes, 1000+500*r.IntN(5))
	// With slow consumers on, half the seeds also bound how long a delivery may stay
	// unacknowledged (consumer_timeout): a consumer that holds one longer loses its
	// channel, and everything it held is redelivered.
	timeoutMs := 0
	if on["consumer-slow"] && r.Chance(sim.Percent(50)) {
		timeoutMs = 2000 + 500*r.IntN(9)
		broker += fmt.Sprintf(" consumer-timeout=%dms", timeoutMs)
	}
	if bug != "" {
		broker += fmt.Sprintf(" bugs=(%s)", bug)
	}
	b.WriteString("# Setup: quorum queues, publisher confirms, manual acks, no delivery limit.\n")
	line("%s", broker)

	// Queues, each a Raft group on all nodes or (five nodes) on three of them.
	queues := queueNames[:1+r.IntN(len(queueNames))]
	for _, q := range queues {
		members := ""
		if nodes == 5 && r.Chance(sim.Percent(50)) {
			order := slices.Clone(brokers)
			shuffle(r, order)
			m := order[:3]
			slices.Sort(m)
			members = fmt.Sprintf(" members=(%s)", strings.Join(m, ", "))
		}
		line("queue name=%s%s", q, members)
	}

	// Exchanges and bindings, and the routes a publish may take (its routing arguments):
	// each reaches at least one queue, so no confirmed message is dropped as unroutable.
	var routes []string
	for _, q := range queues {
		routes = append(routes, "key="+q) // the default exchange
	}
	if r.Chance(sim.Percent(60)) {
		line("exchange name=direct-x type=direct")
		for _, q := range queues {
			line("bind exchange=direct-x queue=%s key=%s", q, q)
			routes = append(routes, "exchange=direct-x key="+q)
		}
	}
	if r.Chance(sim.Percent(50)) {
		line("exchange name=topic-x type=topic")
		for _, q := range queues {
			line("bind exchange=topic-x queue=%s key=ev.%s.*", q, q)
			routes = append(routes, fmt.Sprintf("exchange=topic-x key=ev.%s.created", q))
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
		routes = append(routes, "exchange=fanout-x")
	}
	if r.Chance(sim.Percent(30)) {
		line("exchange name=headers-x type=headers")
		for _, q := range queues {
			line("bind exchange=headers-x queue=%s match=all headers=(dest:%s)", q, q)
			routes = append(routes, fmt.Sprintf("exchange=headers-x headers=(dest:%s)", q))
		}
	}

	// Publishers, each connected to a node of its own; it fails over to the next one
	// when a confirm does not come in time.
	var publishers []string
	for i := 1; i <= 1+r.IntN(3); i++ {
		p := fmt.Sprintf("p%d", i)
		publishers = append(publishers, p)
		line("publisher name=%s node=%s", p, pick(brokers))
	}

	// Consumers: every queue has one or two, with a prefetch window each.
	var consumers []string
	n := 0
	for _, q := range queues {
		for k := 0; k < 1+r.IntN(2); k++ {
			n++
			c := fmt.Sprintf("c%d", n)
			consumers = append(consumers, c)
			prefetch := []int{1, 1, 2, 3, 5, 10, 0}[r.IntN(7)]
			processing := 1 + r.IntN(20)
			if on["consumer-slow"] && r.Chance(sim.Percent(50)) {
				processing = 50 + r.IntN(300)
			}
			if timeoutMs > 0 {
				// A consumer must be able to finish its window within half the
				// consumer timeout, or it would lose its channel forever.
				if prefetch == 0 {
					prefetch = 1 + r.IntN(5)
				}
				prefetch = max(1, min(prefetch, timeoutMs/2/processing))
			}
			line("subscribe consumer=%s queue=%s prefetch=%d processing=%dms node=%s", c, q, prefetch, processing, pick(brokers))
		}
	}

	clients := slices.Concat(publishers, consumers)
	all := slices.Concat(brokers, clients)
	var paused, clogged []string // in the safety phase, so far
	steps := 10 + r.IntN(25)
	b.WriteString("# Safety phase: publishes and faults.\n")
	for i := 0; i < steps; i++ {
		if r.Chance(sim.Percent(45)) || len(enabled) == 0 {
			route := pick(routes)
			line("publish publisher=%s %s count=%d wait=false", pick(publishers), route, 1+r.IntN(8))
		} else {
			switch k := pick(enabled); k {
			case "crash":
				switch {
				case r.Chance(sim.Percent(10)):
					// A power loss: every broker node at once.
					line("crash %s", strings.Join(brokers, " "))
				case r.Chance(sim.Percent(10)):
					line("crash %s", pick(publishers))
				case r.Chance(sim.Percent(50)):
					line("crash %s", pick(brokers))
				default:
					line("restart %s", strings.Join(slices.Concat(brokers, publishers), " "))
				}
			case "pause":
				b.pauseOrResume(pick(brokers), &paused)
			case "partition":
				b.randomPartition(r, all)
			case "one-way":
				a, c := pick(all), pick(all)
				if a != c {
					line("cut %s -> %s", a, c)
				}
			case "clog":
				a, c := pick(all), pick(all)
				if a != c && !slices.Contains(clogged, a+" -> "+c) {
					line("clog %s -> %s", a, c)
					clogged = append(clogged, a+" -> "+c)
				}
			case "loss":
				a, c := pick(all), pick(all)
				if a != c {
					line("link %s -> %s drop=%d%%", a, c, 5+r.IntN(40))
				}
			case "duplicate":
				a, c := pick(all), pick(all)
				if a != c {
					line("link %s -> %s dup=%d%%", a, c, 5+r.IntN(40))
				}
			case "torn":
				line("torn %s", pick(brokers))
			case "consumer-crash":
				if r.Chance(sim.Percent(60)) {
					line("crash %s", pick(consumers))
				} else {
					line("restart %s", strings.Join(consumers, " "))
				}
			case "consumer-slow":
				b.pauseOrResume(pick(consumers), &paused)
			}
		}
		line("run for=%dms", 1+r.IntN(1500))
	}

	// The liveness phase ends every fault whatever the safety phase still holds (a shrunk
	// scenario may have lost a resume): resuming or restarting a node that runs is a
	// no-op.
	b.WriteString("# Liveness phase: every fault ends, every node restarts, the queues drain.\n")
	line("heal")
	for _, c := range clogged {
		line("unclog %s", c)
	}
	line("resume %s", strings.Join(all, " "))
	line("link all drop=0%% dup=0%%")
	line("restart %s", strings.Join(all, " "))
	// Elections settle, publishes in flight get their confirms or time out, consumers
	// find the leaders again.
	line("run for=5s")
	// A fresh reader on every queue, as the log profile's final consumer: whatever the
	// safety phase did to the first consumers (or a shrunk scenario left out), each
	// queue is read to the end.
	for _, q := range queues {
		line("subscribe consumer=reader-%s queue=%s prefetch=10 processing=1ms", q, q)
	}
	// A healed broker takes new work: one more publish to every queue, waited for.
	for _, q := range queues {
		line("publish publisher=%s key=%s count=2", pick(publishers), q)
	}
	line("drain limit=2m")
	b.WriteString("# At least once: every confirmed message processed; redeliveries and reorders allowed.\n")
	line("check promise=at-least-once")
	return b.String()
}
