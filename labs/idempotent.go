package labs

import (
	"fmt"
	"slices"
	"time"

	"mqsim/checker"
	lab "mqsim/labs/idempotent-consumer"
	"mqsim/labs/idempotent-consumer/solution"
	"mqsim/labs/idempotent-consumer/starter"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// The idempotent-consumer lab (labs/idempotent-consumer): payments on topic t, a
// consumer group of two or three applications that send each payment to the database,
// and the learner's Handler that the database runs for each.

var idempotentConsumer = Lab{
	Name:     "idempotent-consumer",
	Summary:  "apply each payment to a database exactly once, though the consumer delivers it at least once",
	Minutes:  30,
	Sources:  lab.Sources,
	Generate: generateIdempotent,
}

// handlers are the Handlers a lab-db command can run.
var handlers = map[Code]func() lab.Handler{Starter: starter.New, Solution: solution.New}

func init() {
	runner.Register(&runner.Command{
		Name:  "lab-db",
		Usage: "lab-db name=N code=starter|solution topic=T",
		Help:  "the idempotent-consumer lab's database, running the Handler of code for each payment of topic T; the check judges its table",
		Keys:  []string{"name", "code", "topic"},
		Run:   cmdLabDB,
	})
	runner.Register(&runner.Command{
		Name:  "lab-app",
		Usage: "lab-app name=N group=G topic=T db=DB [poll-every=D]",
		Help:  "an idempotent-consumer lab application: a member of group G that sends each payment of T to the database DB, then commits",
		Keys:  []string{"name", "group", "topic", "db", "poll-every"},
		Run:   cmdLabApp,
	})
}

func cmdLabDB(r *runner.Runner, a *runner.Args) (string, error) {
	c, err := needCluster(r)
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	topic, err := a.Required("topic")
	if err != nil {
		return "", err
	}
	code, newHandler, err := learnerCode(a, handlers)
	if err != nil {
		return "", err
	}
	w := r.World()
	id, err := w.AddNode(name, func() sim.Node { return lab.NewDB(newHandler()) })
	if err != nil {
		return "", err
	}
	// The verdict judges the table on the database's disk: what survives a crash.
	r.AddJudge(func() checker.Report {
		return lab.Check(c.History.History(), topic, lab.ReadLog(w.Disk(id).ReadAll(lab.LogFile)))
	})
	return fmt.Sprintf("database %s runs the %s Handler; the check judges the payments of %s", name, code, topic), nil
}

func cmdLabApp(r *runner.Runner, a *runner.Args) (string, error) {
	c, err := needCluster(r)
	if err != nil {
		return "", err
	}
	var cfg lab.AppConfig
	var name string
	for _, k := range []struct {
		key string
		to  *string
	}{{"name", &name}, {"group", &cfg.Group}, {"topic", &cfg.Topic}, {"db", &cfg.DB}} {
		v, err := a.Required(k.key)
		if err != nil {
			return "", err
		}
		*k.to = v
	}
	if cfg.PollEvery, err = a.Duration("poll-every", 100*time.Millisecond); err != nil {
		return "", err
	}
	if err := c.EnsureOffsetsTopic(); err != nil {
		return "", err
	}
	brokers := c.BrokerNames()
	cc := c.Cfg.Consumer
	if g, ok := c.GroupDefaults(cfg.Group); ok {
		cc = g // the group command's settings
	}
	if _, err := c.W.AddNode(name, func() sim.Node { return lab.NewApp(cfg, cc, c.NewProcess(), brokers, c.History) }); err != nil {
		return "", err
	}
	return fmt.Sprintf("application %s: group %s reads %s, sends each payment to %s, then commits", name, cfg.Group, cfg.Topic, cfg.DB), nil
}

// idempotentFaults are the fault kinds a seed switches on or off (swarm testing).
var idempotentFaults = []string{"app-crash", "db-crash", "broker", "pause", "partition", "loss", "duplicate", "lost-answers"}

// generateIdempotent writes one random run of the lab: a safe cluster (what it
// promises is not in question), the database, two or three applications, produces of
// payments among faults of the kinds the seed switched on, then a liveness phase in
// which every fault ends and the applications catch up, and the check.
func generateIdempotent(seed uint64, code Code) string {
	s := startLabScript("idempotent-consumer", seed, code, idempotentFaults, 10)
	r, line := s.r, s.line
	line("cluster brokers=3 partitions=%d rf=3 min-isr=2 acks=all idempotence=true unclean=false flush=every-batch "+
		"session-timeout=3s heartbeat=1s lag-max=5s request-timeout=2s delivery-timeout=2m retry-backoff=100ms linger=1ms auto-offset-reset=earliest", 1+r.IntN(3))
	line("lab-db name=db code=%s topic=t", code)
	// The group's timeouts are short, as the swarm's are, so that a member that lost a
	// request or stopped polling is fenced and replaced within the run.
	line("group name=pay session-timeout=6s heartbeat=1s max-poll-interval=8s commit=manual %s",
		[]string{"assignor=range protocol=eager", "assignor=sticky protocol=eager", "assignor=cooperative-sticky protocol=cooperative"}[r.IntN(3)])
	apps := []string{"app1", "app2", "app3"}[:2+r.IntN(2)]
	for _, app := range apps {
		line("lab-app name=%s group=pay topic=t db=db", app)
	}
	nodes := slices.Concat([]string{"ctl", "b1", "b2", "b3", "db"}, apps)
	var paused []string
	for range 10 + r.IntN(20) {
		if len(s.on) == 0 || r.Chance(sim.Percent(40)) {
			line("produce producer=p%d count=%d wait=false", 1+r.IntN(2), 1+r.IntN(5))
		} else {
			paused = s.idempotentFault(s.pick(s.on), apps, nodes, paused)
		}
		line("run for=%dms", 1+r.IntN(2000))
	}
	s.b.WriteString("# Liveness phase: every fault ends, every node runs, and the applications catch up.\n")
	s.endFaults(paused, nodes, "drop=0% dup=0%")
	line("run for=2m")
	line("check")
	return s.b.String()
}

// idempotentFault writes one fault of kind k and returns the nodes paused since.
func (s *labScript) idempotentFault(k string, apps, nodes, paused []string) []string {
	r, line := s.r, s.line
	switch k {
	case "app-crash":
		s.crashOrRestart(s.pick(apps))
	case "db-crash":
		s.crashOrRestart("db")
	case "broker":
		s.crashOrRestart(s.pick([]string{"b1", "b2", "b3"}))
	case "pause":
		return s.togglePause(s.pick(apps), paused)
	case "partition":
		s.partition(nodes)
	case "loss", "duplicate":
		line("heal")
	case "lost-answers":
		// The moment an in-memory record of what was applied needs: payments arrive,
		// the database commits them, its answers to one application are lost, and it
		// restarts before the application sends them again (after RetryAfter).
		line("produce producer=p%d count=%d wait=false", 1+r.IntN(2), 1+r.IntN(5))
		line("drop-next db -> %s kind=ExecResult count=%d", s.pick(apps), 1+r.IntN(5))
		line("run for=%dms", 20+r.IntN(300))
		line("crash db")
		line("run for=%dms", 1+r.IntN(500))
		line("restart db")
	}
	return paused
}
