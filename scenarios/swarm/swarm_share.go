package swarm

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/sim"
)

// The share-group profile of the swarm (ProfileShare): the safe cluster settings and one
// or two share groups (KIP-932) reading t, with two to five share consumers between
// them (more than t's partitions on some seeds), in explicit or implicit acknowledgement
// mode, some with poison records (released, or rejected, until the delivery count limit
// archives them; some fail only their first attempts), some whose processing outlasts a
// lowered record lock duration, so that their locks expire and their records go to
// another member. Besides the safe profile's fault kinds, a seed may switch on
// "share-leader" (the leader of a share-partition crashes, or bounces: the new leader
// rebuilds the window from the share coordinator's state), "share-coordinator" (the
// leader of a share-partition's __share_group_state partition crashes or bounces),
// "share-consumers" (consumers crash, restart, pause, close, and new ones join) and
// "share-messages" (the next ShareFetch, ShareAcknowledge, WriteShareGroupState or
// ReadShareGroupState, or an answer to one, lost, delayed or duplicated).
//
// The liveness phase ends every fault and restarts every node, closes the safety phase's
// consumers (what they hold goes back to the group), starts a fast consumer per group
// without poison rules that drains what is left, then a plain consumer reads t to its
// end: the share checker then judges every acknowledged record (settled for each group:
// accepted or rejected, or delivered at the limit), and no delivery above the limit or
// after an accept.
//
// Every draw comes from the stream "swarm/share", so the other profiles' seeds are
// untouched.

// shareFaultKinds are the kinds a share seed switches on or off: the safe profile's (but
// its consumer group's, whose part the share consumers play) and the share groups' own.
var shareFaultKinds = []string{"crash", "power", "pause", "partition", "one-way", "clog", "loss", "duplicate", "torn", "controller",
	"share-leader", "share-coordinator", "share-consumers", "share-messages"}

// shareStatePartitions is the number of __share_group_state partitions (the default of
// proto.ShareConfig), which decides the share coordinator of each share-partition.
const shareStatePartitions = 3

// shareRun is one share-group run being written.
type shareRun struct {
	r       *sim.Rand
	b       *genScript
	on      map[string]bool
	enabled []string
	tight   bool

	ctls, nodes, brokers []string
	parts                int
	groups               []string
	consumers            []string          // every share consumer started, in order
	groupOf              map[string]string // consumer -> its share group
	crashed, closed      []string          // consumers the safety phase left down or closed, so far
	paused, clogged      []string
	lockSeconds          int // the record lock duration, in seconds
}

// generateShare writes the scenario of one random share-group run.
func generateShare(seed uint64, opts Options) string {
	r := sim.NewRand(seed, "swarm/share")
	b, on, enabled := startScript(r, seed, opts, shareFaultKinds, nil, 30, 30_000)
	g := &shareRun{r: r, b: b, on: on, enabled: enabled, groupOf: map[string]string{}}
	g.cluster(opts)
	g.setup()
	g.tight = r.Chance(sim.Percent(50))
	g.safetyPhase()
	g.livenessPhase()
	return b.String()
}

// cluster writes the cluster line: the safe settings, share-partitions that start at the
// log's start (so every record is the groups' to settle), a record lock duration lowered
// on most seeds, a delivery count limit from 2 to 5, and membership timeouts short
// enough for a run to see a crashed member removed.
func (g *shareRun) cluster(opts Options) {
	r := g.r
	g.parts, g.ctls, g.nodes, g.brokers = g.b.safeCluster(r, opts, func() []string {
		g.lockSeconds = []int{2, 3, 5, 10, 30}[r.IntN(5)]
		return []string{clientSettings,
			fmt.Sprintf("share-auto-offset-reset=earliest share-lock-duration=%ds share-delivery-limit=%d share-session-timeout=6s share-heartbeat=1s",
				g.lockSeconds, 2+r.IntN(4))}
	})
}

// setup writes the share groups' first consumers: two to five, the first of each group
// first.
func (g *shareRun) setup() {
	g.groups = []string{"sg1"}
	if g.r.Chance(sim.Percent(40)) {
		g.groups = append(g.groups, "sg2")
	}
	n := 2 + g.r.IntN(4)
	for i := 0; i < n; i++ {
		g.addConsumer(g.groups[i%len(g.groups)])
	}
}

// addConsumer writes a new share consumer of group, with its settings drawn: the
// acknowledgement mode, poison records (in explicit mode released, or rejected; a rule
// with :N fails only the first N attempts), max.poll.records, and a processing time per
// record that is, on one consumer in five, longer than the record lock duration.
func (g *shareRun) addConsumer(group string) {
	r := g.r
	name := fmt.Sprintf("s%d", len(g.consumers)+1)
	g.consumers = append(g.consumers, name)
	g.groupOf[name] = group
	args := []string{fmt.Sprintf("share-consumer name=%s group=%s topics=(t)", name, group)}
	explicit := r.Chance(sim.Percent(60))
	if explicit {
		args = append(args, "ack=explicit")
	} else {
		args = append(args, "ack=implicit")
	}
	if r.Chance(sim.Percent(50)) {
		var poison []string
		for k := 1 + r.IntN(3); k > 0; k-- {
			p := fmt.Sprintf("v%d", 1+r.IntN(60))
			if r.Chance(sim.Percent(30)) {
				p += fmt.Sprintf(":%d", 1+r.IntN(3))
			}
			poison = append(poison, p)
		}
		args = append(args, fmt.Sprintf("poison=(%s)", strings.Join(poison, ", ")))
		if explicit && r.Chance(sim.Percent(30)) {
			args = append(args, "reject-poison=true")
		}
	}
	maxPoll := 1 + r.IntN(10)
	processing := []int{1, 10, 50, 200}[r.IntN(4)]
	if r.Chance(sim.Percent(20)) {
		// Longer than the lock: the record's lock expires while it is processed, its
		// acknowledgement is refused, and another member gets it.
		processing = g.lockSeconds*1000 + 1 + r.IntN(2000)
	}
	args = append(args, fmt.Sprintf("processing=%dms max-poll-records=%d", processing, maxPoll))
	g.b.line("%s", strings.Join(args, " "))
}

// runFor is as the log profiles' (logRun.runFor): a log scale on tight seeds.
func (g *shareRun) runFor() int { return drawRun(g.r, g.tight) }

func (g *shareRun) pick(from []string) string { return from[g.r.IntN(len(from))] }

// safetyPhase writes 10 to 39 steps, each a produce or a fault of an enabled kind, each
// followed by a run.
func (g *shareRun) safetyPhase() {
	r := g.r
	steps := 10 + r.IntN(30)
	for i := 0; i < steps; i++ {
		if r.Chance(sim.Percent(45)) || len(g.enabled) == 0 {
			g.b.line("produce producer=p%d count=%d wait=false", 1+r.IntN(2), 1+r.IntN(5))
		} else {
			g.fault(g.pick(g.enabled))
		}
		g.b.line("run for=%dms", g.runFor())
	}
}

// fault writes one fault of kind k.
func (g *shareRun) fault(k string) {
	r := g.r
	if g.b.linkFault(r, k, g.nodes, g.brokers, &g.paused, &g.clogged) || g.b.serverFault(r, k, g.ctls, g.nodes, g.brokers, g.runFor) {
		return
	}
	switch k {
	case "share-leader":
		g.bounce(fmt.Sprintf("leader:t/%d", r.IntN(g.parts)))
	case "share-coordinator":
		g.bounce(g.coordinator())
	case "share-consumers":
		g.consumerFault()
	case "share-messages":
		g.shareMessageFault()
	}
}

// bounce crashes the broker in role (a share-partition's leader, or a share
// coordinator), or crashes it and brings every broker back after a moment: its successor,
// or itself, must rebuild what it kept from the replicated state.
func (g *shareRun) bounce(role string) {
	g.b.line("crash %s", role)
	if g.r.Chance(sim.Percent(50)) {
		g.b.line("run for=%dms", 1+g.r.IntN(300))
		g.b.line("restart %s", strings.Join(g.brokers, " "))
	}
}

// coordinator is the role that names the share coordinator of one of the run's
// share-partitions now: the leader of its __share_group_state partition.
func (g *shareRun) coordinator() string {
	key := proto.SharePartitionKey{Group: g.pick(g.groups), TP: proto.TP{Topic: "t", Partition: int32(g.r.IntN(g.parts))}}
	return fmt.Sprintf("leader:%s/%d", proto.ShareGroupStateTopic, share.PartitionFor(key, shareStatePartitions))
}

// consumerFault crashes a share consumer (its records come back when their locks
// expire), restarts a crashed one (it joins as a new member), pauses or resumes one (a
// paused member's locks expire and it misses heartbeats), closes one (a ShareAcknowledge
// with epoch -1 releases what it holds), or starts a new one (the group rebalances).
func (g *shareRun) consumerFault() {
	r, line := g.r, g.b.line
	live := slices.DeleteFunc(slices.Clone(g.consumers), func(c string) bool {
		return slices.Contains(g.crashed, c) || slices.Contains(g.closed, c)
	})
	k := r.IntN(10)
	if len(live) == 0 {
		k = 9
	}
	switch {
	case k < 3:
		c := g.pick(live)
		line("crash %s", c)
		g.crashed = append(g.crashed, c)
		g.paused = slices.DeleteFunc(g.paused, func(x string) bool { return x == c })
	case k < 5 && len(g.crashed) > 0:
		c := g.pick(g.crashed)
		line("restart %s", c)
		g.crashed = slices.DeleteFunc(g.crashed, func(x string) bool { return x == c })
	case k < 7:
		g.b.pauseOrResume(g.pick(live), &g.paused)
	case k < 8 && len(live) > 1:
		c := g.pick(live)
		if slices.Contains(g.paused, c) {
			g.b.pauseOrResume(c, &g.paused) // a paused consumer closes once it runs
		}
		line("share-close %s wait=false", c)
		g.closed = append(g.closed, c)
	default:
		if len(g.consumers) < 8 {
			g.addConsumer(g.pick(g.groups))
		}
	}
}

// shareMessageFault loses, delays or duplicates the next few share-group messages of one
// kind: a consumer's ShareFetch or ShareAcknowledge to a share-partition leader and its
// answer, or the leader's ReadShareGroupState or WriteShareGroupState to a share
// coordinator and its answer.
func (g *shareRun) shareMessageFault() {
	r := g.r
	leader := fmt.Sprintf("leader:t/%d", r.IntN(g.parts))
	c := g.pick(g.consumers)
	var from, to, kind string
	switch r.IntN(6) {
	case 0:
		from, to, kind = c, leader, g.pick([]string{"ShareFetch", "ShareAcknowledge"})
	case 1:
		from, to, kind = leader, c, g.pick([]string{"ShareFetchResponse", "ShareAcknowledgeResponse"})
	case 2, 3:
		from, to, kind = leader, g.coordinator(), g.pick([]string{"WriteShareGroupState", "WriteShareGroupState", "ReadShareGroupState"})
	default:
		from, to, kind = g.coordinator(), leader, g.pick([]string{"WriteShareGroupStateResponse", "WriteShareGroupStateResponse", "ReadShareGroupStateResponse"})
	}
	g.b.faultNextMessages(r, from, to, kind, 4)
}

// livenessPhase ends every fault and restarts every node, gives the groups time to
// settle, closes every consumer of the safety phase (a ShareAcknowledge with epoch -1
// gives back what each holds), starts one fast consumer per group without poison rules
// to drain what is left, then reads t to its end with a plain consumer.
func (g *shareRun) livenessPhase() {
	line := g.b.line
	g.b.WriteString("# Liveness phase: every fault ends, the groups drain and the cluster converges.\n")
	g.b.endFaults(g.clogged, g.on["pause"] || g.on["share-consumers"], g.brokers, g.nodes, g.consumers)
	for _, c := range g.consumers {
		line("share-close %s", c)
	}
	for _, grp := range g.groups {
		line("share-consumer name=drain-%s group=%s topics=(t) ack=explicit processing=1ms", grp, grp)
	}
	line("run for=2m")
	g.b.WriteString("# The final read: a plain consumer reads t to its end.\n")
	line("consume consumer=reader")
	line("check")
}
