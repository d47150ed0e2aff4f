package labs

import (
	"fmt"
	"slices"
	"strings"
	"time"

	lab "mqsim/labs/replicated-log"
	"mqsim/labs/replicated-log/solution"
	"mqsim/labs/replicated-log/starter"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// The replicated-log lab (labs/replicated-log): three replicas of one partition run the
// learner's Replica, the lab's controller names each epoch's leader, writers append
// and readers read through the leader, and the run's history judge (the log checkers
// and, as the lab's check asks, linearizability) judges what they saw. The scenario
// starts a cluster only as the run's frame: its history recorder, and its safe
// settings, under which every lost write or changed offset is a failure.

var replicatedLog = Lab{
	Name:     "replicated-log",
	Summary:  "replicate one partition's log: acknowledge and serve only what every replica has, through crashes, pauses and partitions",
	Minutes:  45,
	Sources:  lab.Sources,
	Generate: generateReplicatedLog,
}

// replicas are the Replicas a lab-replicas command can run.
var replicas = map[Code]func() lab.Replica{Starter: starter.New, Solution: solution.New}

// The lab's node names: its controller, and the replicas r1, r2, ...
const replogController = "elector"

func init() {
	runner.Register(&runner.Command{
		Name:  "lab-replicas",
		Usage: "lab-replicas code=starter|solution [count=N]",
		Help:  "the replicated-log lab's replicas r1..rN, running the Replica of code, and the controller elector that names each epoch's leader",
		Keys:  []string{"code", "count"},
		Run:   cmdLabReplicas,
	})
	runner.Register(&runner.Command{
		Name:  "lab-client",
		Usage: "lab-client name=N mode=append|read [every=D]",
		Help:  "a replicated-log lab client: appends a new value, or reads the next offset, through the leader every D, recording the history",
		Keys:  []string{"name", "mode", "every"},
		Run:   cmdLabClient,
	})
}

func replicaNames(count int) []string {
	names := make([]string, count)
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i+1)
	}
	return names
}

func cmdLabReplicas(r *runner.Runner, a *runner.Args) (string, error) {
	if _, err := needCluster(r); err != nil {
		return "", err
	}
	code, newReplica, err := learnerCode(a, replicas)
	if err != nil {
		return "", err
	}
	count, err := a.Int("count", 3, 1, 9)
	if err != nil {
		return "", err
	}
	names := replicaNames(count)
	w := r.World()
	for _, name := range names {
		peers := slices.DeleteFunc(slices.Clone(names), func(p string) bool { return p == name })
		if _, err := w.AddNode(name, func() sim.Node { return lab.NewReplicaNode(newReplica(), peers) }); err != nil {
			return "", err
		}
	}
	if _, err := w.AddNode(replogController, func() sim.Node { return lab.NewController(names) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("replicas %s run the %s Replica; %s names each epoch's leader", strings.Join(names, " "), code, replogController), nil
}

func cmdLabClient(r *runner.Runner, a *runner.Args) (string, error) {
	c, err := needCluster(r)
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	mode, err := a.Required("mode")
	if err != nil {
		return "", err
	}
	if m := lab.ClientMode(mode); m != lab.Writer && m != lab.Reader {
		return "", fmt.Errorf("mode=%s: want append or read", mode)
	}
	every, err := a.Duration("every", 20*time.Millisecond)
	if err != nil {
		return "", err
	}
	if every <= 0 {
		return "", fmt.Errorf("every=%s: want a positive duration", every)
	}
	var names []string
	for _, n := range replicaNames(9) {
		if _, ok := r.World().Lookup(n); ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no replicas yet: start them with lab-replicas")
	}
	if _, err := c.W.AddNode(name, func() sim.Node {
		return lab.NewClient(lab.ClientMode(mode), every, names, c.NewProcess(), c.History)
	}); err != nil {
		return "", err
	}
	if lab.ClientMode(mode) == lab.Writer {
		return fmt.Sprintf("client %s appends a new value every %s through the leader", name, every), nil
	}
	return fmt.Sprintf("client %s reads the log from offset 0, one offset every %s, through the leader", name, every), nil
}

// replogFaults are the fault kinds a seed switches on or off (swarm testing).
var replogFaults = []string{"crash", "pause", "partition", "loss", "duplicate"}

// generateReplicatedLog writes one random run of the lab: the frame cluster, three
// replicas and their controller, two writers and two readers, faults of the kinds the
// seed switched on, then a liveness phase in which every fault ends and the readers
// catch up, and the check with linearizability.
func generateReplicatedLog(seed uint64, code Code) string {
	s := startLabScript("replicated-log", seed, code, replogFaults, 10)
	r, line := s.r, s.line
	line("cluster brokers=2 partitions=1 rf=2 min-isr=2 acks=all idempotence=true unclean=false flush=every-batch")
	line("lab-replicas code=%s", code)
	clients := []string{"w1", "w2", "rd1", "rd2"}
	for _, w := range clients[:2] {
		line("lab-client name=%s mode=append every=%dms", w, 20+r.IntN(80))
	}
	for _, rd := range clients[2:] {
		line("lab-client name=%s mode=read every=%dms", rd, 5+r.IntN(20))
	}
	reps := replicaNames(3)
	nodes := slices.Concat([]string{replogController}, reps, clients)
	var paused []string
	for range 8 + r.IntN(16) {
		if len(s.on) == 0 || r.Chance(sim.Percent(40)) {
			line("run for=%dms", 100+r.IntN(2000))
			continue
		}
		paused = s.replogFault(s.pick(s.on), reps, nodes, paused)
		line("run for=%dms", 1+r.IntN(2000))
	}
	s.b.WriteString("# Liveness phase: the writers stop, every fault ends, every replica runs, and the readers catch up.\n")
	line("crash %s", strings.Join(clients[:2], " "))
	s.endFaults(paused, reps, "drop=0% dup=0%")
	line("run for=20s")
	line("check linearizable=true")
	return s.b.String()
}

// replogFault writes one fault of kind k and returns the replicas paused since.
func (s *labScript) replogFault(k string, reps, nodes, paused []string) []string {
	switch k {
	case "crash":
		s.crashOrRestart(s.pick(reps))
	case "pause":
		// A paused leader is the zombie of a failover: it wakes up believing it leads.
		return s.togglePause(s.pick(reps), paused)
	case "partition":
		s.partition(nodes)
	case "loss", "duplicate":
		s.line("heal")
	}
	return paused
}
