package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/broker"
	"mqsim/model/cluster"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Operator commands: what an administrator does to a running cluster. Each sends the
// request Kafka's tool would send (kafka-leader-election.sh: ElectLeaders;
// kafka-reassign-partitions.sh: AlterPartitionReassignments; SIGTERM to a broker: a
// controlled shutdown), runs the world until the controller has decided and the brokers
// acted, and prints what happened.

func init() {
	register(&Command{
		Name:  "elect",
		Usage: "elect T/P preferred | elect T/P leader=BROKER",
		Help:  "ask the controller for an election: the preferred (first assigned) replica, or a chosen in-sync replica; the old leader is not fenced, it learns from the metadata",
		Keys:  []string{"leader"},
		Run:   cmdElect,
	})
	register(&Command{
		Name:  "shutdown",
		Usage: "shutdown BROKER",
		Help:  "controlled shutdown: the broker asks the controller, which moves its leaderships and takes it out of the ISRs; then it flushes and stops (compare crash, kill)",
		Run:   cmdShutdown,
	})
	register(&Command{
		Name:  "reassign",
		Usage: "reassign T/P replicas=(B1, B2, ...)",
		Help:  "move a partition to other brokers: the new replicas catch up and join the ISR, then the old ones are removed",
		Keys:  []string{"replicas"},
		Run:   cmdReassign,
	})
	register(&Command{
		Name:  "alter",
		Usage: "alter topic=T partitions=N",
		Help:  "add partitions to a topic (CreatePartitions): only more, never fewer; producers see the new count at their next metadata refresh, and keys hash to it",
		Keys:  []string{"topic", "partitions"},
		Run:   cmdAlter,
	})
	register(&Command{
		Name:  "add-broker",
		Usage: "add-broker BROKER (the next name: b4 after b1..b3)",
		Help:  "start a new broker; it registers and holds nothing until a reassignment gives it replicas",
		Run:   cmdAddBroker,
	})
	register(&Command{
		Name:  "remove-broker",
		Usage: "remove-broker BROKER",
		Help:  "decommission a broker that holds no replica (reassign them away first): a controlled shutdown",
		Run:   cmdRemoveBroker,
	})
}

// opsBound is how much virtual time an operator command waits for the cluster to act.
const opsBound = 30 * time.Second

// clusterTP is the partition a command names, which the controller must know.
func (r *Runner) clusterTP(c *cluster.Cluster, word string) (proto.PartitionState, error) {
	tp, err := proto.ParseTP(word)
	if err != nil {
		return proto.PartitionState{}, err
	}
	parts := c.Partitions()
	k := slices.IndexFunc(parts, func(p proto.PartitionState) bool { return p.TP == tp })
	if k < 0 {
		return proto.PartitionState{}, fmt.Errorf("the controller knows no partition %s", tp)
	}
	return parts[k], nil
}

// brokerArg is a broker of the cluster, by name.
func (r *Runner) brokerArg(c *cluster.Cluster, name string) (sim.NodeID, error) {
	id, ok := c.W.Lookup(name)
	if !ok || !slices.Contains(c.Brokers, id) {
		return 0, fmt.Errorf("%q is not a broker (brokers: %s)", name, strings.Join(brokerNames(c), " "))
	}
	return id, nil
}

// askController sends an operator request to the controller that decides now.
func askController(c *cluster.Cluster, msg sim.Message) error {
	to, ok := c.ActiveController()
	if !ok {
		return fmt.Errorf("no active controller to ask")
	}
	c.W.Inject(to, msg, 0)
	return nil
}

// runOps runs the world until done or opsBound passes, and prints the operator-relevant
// events since mark; it reports whether done came true.
func runOps(c *cluster.Cluster, mark int, done func() bool) (string, bool) {
	until := c.W.Now().Add(opsBound)
	ok := c.W.RunUntil(func(w *sim.World) bool { return done() || w.Now() >= until }, 1_000_000) && done()
	return opsEvents(c, mark), ok
}

// opsEvents prints the operator-relevant events since mark.
func opsEvents(c *cluster.Cluster, mark int) string {
	var keep []sim.Event
	for _, e := range c.W.Trace().Since(mark) {
		if opsEvent(e) {
			keep = append(keep, e)
		}
	}
	return formatEvents(keep)
}

// opsEvent picks the events that tell an operator command's story: decisions, changes of
// role, the shutdown's steps.
func opsEvent(e sim.Event) bool {
	switch e.Data.(type) {
	case controller.LeaderElected, controller.ElectionRefused, controller.PartitionOffline, controller.ISRChanged,
		controller.BrokerFenced, controller.Registered, controller.ShutdownStarted, controller.ShutdownGranted,
		controller.ReassignmentStarted, controller.ReassignmentDone, controller.PartitionsCreated, controller.PartitionsRefused,
		broker.Leading, broker.Following, broker.ShutdownAsked, broker.ShutdownFlushing, broker.ReplicaRemoved,
		broker.Started, sim.NodeKilled:
		return true
	}
	return false
}

func cmdElect(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	words := a.Words()
	preferred := len(words) == 2 && words[1] == "preferred"
	if len(words) < 1 || (!preferred && len(words) != 1) || (preferred == a.Has("leader")) {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	p, err := r.clusterTP(c, words[0])
	if err != nil {
		return "", err
	}
	want := proto.NoLeader
	if !preferred {
		name, _ := a.String("leader", "")
		if want, err = r.brokerArg(c, name); err != nil {
			return "", err
		}
		if !slices.Contains(p.Replicas, want) {
			return "", fmt.Errorf("%s is not a replica of %s (replicas %s)", name, p.TP, idNames(c.W, p.Replicas))
		}
	}
	mark := c.W.Trace().Len()
	if err := askController(c, proto.ElectLeaders{TP: p.TP, Leader: want}); err != nil {
		return "", err
	}
	target := want
	if target == proto.NoLeader {
		target = p.Replicas[0]
	}
	// Done when the controller refused, or when the new leader leads and the old one
	// follows (or is gone).
	decided := func() bool {
		for _, e := range c.W.Trace().Since(mark) {
			if d, ok := e.Data.(controller.ElectionRefused); ok && d.TP == p.TP {
				return true
			}
		}
		l, ok := c.Leader(p.TP)
		return ok && c.Brokers[l] == target && !stillLeads(c, p.Leader, p.TP)
	}
	out, _ := runOps(c, mark, decided)
	return out, nil
}

// stillLeads reports whether broker id is up and believes it leads tp.
func stillLeads(c *cluster.Cluster, id sim.NodeID, tp proto.TP) bool {
	b, _ := c.W.Node(id).(*broker.Broker)
	if b == nil {
		return false
	}
	rep, ok := b.Replica(tp)
	return ok && rep.Leader
}

func cmdShutdown(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	words := a.Words()
	if len(words) != 1 {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	id, err := r.brokerArg(c, words[0])
	if err != nil {
		return "", err
	}
	return shutdownBroker(c, id)
}

// shutdownBroker runs a controlled shutdown of broker id: the signal, the controller's
// grant, the flush, and the process's exit (a kill: the machine stays up).
func shutdownBroker(c *cluster.Cluster, id sim.NodeID) (string, error) {
	if st := c.W.Status(id); st != sim.Up {
		return "", fmt.Errorf("%s is %s; only a running broker can shut down", c.W.Name(id), st)
	}
	mark := c.W.Trace().Len()
	c.W.Inject(id, proto.ShutdownBroker{}, 0)
	granted := func() bool {
		b, _ := c.W.Node(id).(*broker.Broker)
		return b != nil && b.ShutdownGranted()
	}
	flushed := func() bool { return granted() && c.W.Disk(id).Unsynced() == 0 }
	out, ok := runOps(c, mark, flushed)
	if !ok {
		return "", fmt.Errorf("%s asked for a controlled shutdown but was not granted one within %s (is the controller reachable?); it keeps running and keeps asking:\n%s", c.W.Name(id), opsBound, out)
	}
	c.W.Kill(id)
	return opsEvents(c, mark), nil
}

func cmdReassign(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	words := a.Words()
	if len(words) != 1 || !a.Has("replicas") {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	p, err := r.clusterTP(c, words[0])
	if err != nil {
		return "", err
	}
	var target []sim.NodeID
	for _, name := range a.List("replicas") {
		id, err := r.brokerArg(c, name)
		if err != nil {
			return "", err
		}
		if slices.Contains(target, id) {
			return "", fmt.Errorf("replicas: %s is named twice", name)
		}
		target = append(target, id)
	}
	if len(target) == 0 {
		return "", fmt.Errorf("replicas: name at least one broker, e.g. replicas=(b2, b3, b4)")
	}
	mark := c.W.Trace().Len()
	if err := askController(c, proto.AlterPartitionReassignments{TP: p.TP, Replicas: target}); err != nil {
		return "", err
	}
	// Done when the controller completed it and the brokers acted: the leader it names
	// leads, and the old leader, if it was moved off, no longer does.
	done := func() bool {
		for _, e := range c.W.Trace().Since(mark) {
			if d, ok := e.Data.(controller.ReassignmentDone); ok && d.TP == p.TP {
				now, err := r.clusterTP(c, p.TP.String())
				return err == nil && (now.Leader == proto.NoLeader || stillLeads(c, now.Leader, p.TP)) &&
					(now.Leader == p.Leader || !stillLeads(c, p.Leader, p.TP))
			}
		}
		return false
	}
	out, ok := runOps(c, mark, done)
	if !ok {
		out += fmt.Sprintf("\nreassignment of %s still in progress after %s", p.TP, opsBound)
	}
	return strings.TrimPrefix(out, "\n"), nil
}

func cmdAlter(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if len(a.Words()) != 0 || !a.Has("topic") || !a.Has("partitions") {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	topic, _ := a.String("topic", "")
	count, err := a.Int("partitions", 0, 1, 10_000)
	if err != nil {
		return "", err
	}
	mark := c.W.Trace().Len()
	if err := askController(c, proto.CreatePartitions{Topic: topic, Count: count}); err != nil {
		return "", err
	}
	// Done when the controller refused (its event says why, as elect's refusals), or when
	// every partition of the topic has a leader that knows it leads.
	decided := false
	done := func() bool {
		for _, e := range c.W.Trace().Since(mark) {
			switch d := e.Data.(type) {
			case controller.PartitionsRefused:
				if d.Topic == topic && d.Count == count {
					return true
				}
			case controller.PartitionsCreated:
				decided = decided || d.Topic == topic && d.After == count
			}
		}
		if !decided {
			return false
		}
		n := 0
		for _, p := range c.Partitions() {
			if p.TP.Topic != topic {
				continue
			}
			if p.Leader == proto.NoLeader || !stillLeads(c, p.Leader, p.TP) {
				return false
			}
			n++
		}
		return n == count
	}
	out, ok := runOps(c, mark, done)
	if !ok {
		out += fmt.Sprintf("\nnot every partition of %s has a leader after %s", topic, opsBound)
	}
	return strings.TrimPrefix(out, "\n"), nil
}

func cmdAddBroker(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	words := a.Words()
	next := controller.BrokerName(len(c.Brokers) + 1)
	if len(words) != 1 || words[0] != next {
		return "", fmt.Errorf("usage: %s; the next broker is %s", a.cmd.Usage, next)
	}
	mark := c.W.Trace().Len()
	id, err := c.AddBroker()
	if err != nil {
		return "", err
	}
	registered := func() bool {
		ctl := c.ControllerView()
		return ctl != nil && ctl.Registered(id)
	}
	out, ok := runOps(c, mark, registered)
	if !ok {
		out += fmt.Sprintf("\n%s started but has not registered within %s", next, opsBound)
	}
	return strings.TrimPrefix(out, "\n"), nil
}

func cmdRemoveBroker(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	words := a.Words()
	if len(words) != 1 {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	id, err := r.brokerArg(c, words[0])
	if err != nil {
		return "", err
	}
	var held []string
	for _, p := range c.Partitions() {
		if slices.Contains(p.Replicas, id) {
			held = append(held, p.TP.String())
		}
	}
	if len(held) > 0 {
		return "", fmt.Errorf("%s still holds replicas of %s: reassign them to other brokers first (reassign T/P replicas=(...))", words[0], strings.Join(held, " "))
	}
	return shutdownBroker(c, id)
}
