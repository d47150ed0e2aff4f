package labs

import (
	"fmt"
	"slices"

	"mqsim/checker"
	lab "mqsim/labs/ordered-retries"
	retrySolution "mqsim/labs/ordered-retries/solution"
	retryStarter "mqsim/labs/ordered-retries/starter"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// The ordered-retries lab (labs/ordered-retries): an application hands keyed records
// to a producer whose sending logic is the learner's Sender, over a cluster whose
// producers are not idempotent; the final consume reads the log back, and the check
// judges each key's order and that every record was acknowledged.

var orderedRetries = Lab{
	Name:     "ordered-retries",
	Summary:  "keep each key's records in order with retries and several requests in flight, without the broker's idempotence",
	Minutes:  40,
	Sources:  lab.Sources,
	Generate: generateRetries,
}

// senders are the Senders a lab-producer command can run.
var senders = map[Code]func() lab.Sender{Starter: retryStarter.New, Solution: retrySolution.New}

func init() {
	runner.Register(&runner.Command{
		Name:  "lab-producer",
		Usage: "lab-producer name=N code=starter|solution",
		Help:  "the ordered-retries lab's producer, sending the application's records to the cluster's topic with the Sender of code; the check judges each key's order",
		Keys:  []string{"name", "code"},
		Run:   cmdLabProducer,
	})
	runner.Register(&runner.Command{
		Name:  "lab-send",
		Usage: "lab-send producer=N count=C keys=K",
		Help:  "the ordered-retries lab's application hands C records to producer N, with keys k1..kK in turn",
		Keys:  []string{"producer", "count", "keys"},
		Run:   cmdLabSend,
	})
}

func cmdLabProducer(r *runner.Runner, a *runner.Args) (string, error) {
	c, err := needCluster(r)
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	code, newSender, err := learnerCode(a, senders)
	if err != nil {
		return "", err
	}
	cfg := lab.Config{Topic: c.Cfg.Topic.Name, Partitions: c.Cfg.Topic.Partitions, Brokers: c.BrokerNames()}
	if _, err := c.W.AddNode(name, func() sim.Node { return lab.NewProducer(cfg, newSender(), c.NewProcess(), c.History) }); err != nil {
		return "", err
	}
	r.AddJudge(func() checker.Report { return lab.Check(c.History.History(), cfg.Topic) })
	return fmt.Sprintf("producer %s runs the %s Sender on %s (%d partitions); the check judges each key's order", name, code, cfg.Topic, cfg.Partitions), nil
}

func cmdLabSend(r *runner.Runner, a *runner.Args) (string, error) {
	c, err := needCluster(r)
	if err != nil {
		return "", err
	}
	name, err := a.Required("producer")
	if err != nil {
		return "", err
	}
	id, ok := c.W.Lookup(name)
	if !ok {
		return "", fmt.Errorf("no node %s: add it with lab-producer name=%s", name, name)
	}
	if _, ok := c.W.Node(id).(*lab.Producer); !ok {
		return "", fmt.Errorf("%s is not a lab producer (or is down)", name)
	}
	count, err := a.Int("count", 1, 1, 10_000)
	if err != nil {
		return "", err
	}
	keys, err := a.Int("keys", 1, 1, 1000)
	if err != nil {
		return "", err
	}
	for i := range count {
		c.W.Inject(id, lab.Hand{Key: fmt.Sprintf("k%d", 1+i%keys)}, 0)
	}
	return fmt.Sprintf("%s: %d records handed over", name, count), nil
}

// retriesFaults are the fault kinds a seed switches on or off (swarm testing).
var retriesFaults = []string{"loss", "duplicate", "delay", "lost-answers", "leader", "isr", "partition"}

// generateRetries writes one random run of the lab: a cluster that keeps what it
// acknowledged (acks=all, min.insync.replicas=2) but whose producers are not
// idempotent, the lab's producer, records handed over among faults of the kinds the
// seed switched on, then a liveness phase in which every fault ends and the producer
// finishes, a consume that reads the log back, and the check.
func generateRetries(seed uint64, code Code) string {
	s := startLabScript("ordered-retries", seed, code, retriesFaults, 5)
	r, line := s.r, s.line
	line("cluster brokers=3 partitions=%d rf=3 min-isr=2 acks=all idempotence=false unclean=false flush=every-batch "+
		"session-timeout=3s heartbeat=1s lag-max=5s request-timeout=2s retry-backoff=100ms", 1+r.IntN(3))
	line("lab-producer name=app code=%s", code)
	keys := 1 + r.IntN(4)
	brokers := []string{"b1", "b2", "b3"}
	var down []string
	for range 10 + r.IntN(20) {
		if len(s.on) == 0 || r.Chance(sim.Percent(50)) {
			line("lab-send producer=app count=%d keys=%d", 1+r.IntN(8), keys)
		} else {
			down = s.retriesFault(s.pick(s.on), brokers, down)
		}
		line("run for=%dms", 1+r.IntN(1500))
	}
	s.b.WriteString("# Liveness phase: every fault ends, every broker runs, and the producer finishes.\n")
	s.endFaults(nil, append([]string{"ctl"}, brokers...), "latency=1ms drop=0% dup=0%")
	line("run for=1m")
	line("consume")
	line("check")
	return s.b.String()
}

// retriesFault writes one fault of kind k and returns the brokers down since.
func (s *labScript) retriesFault(k string, brokers, down []string) []string {
	r, line, pick := s.r, s.line, s.pick
	switch k {
	case "loss", "duplicate":
		line("heal")
	case "delay":
		// A slow link to a broker (as a congested network): requests and answers still
		// arrive in order, as on a TCP connection, but may come after their timeout.
		line("link app <-> %s latency=%dms", pick(brokers), 50+r.IntN(1500))
	case "lost-answers":
		// Answers lost on their way back: the requests time out, and were appended.
		line("drop-next %s -> app kind=ProduceResponse count=%d", pick(brokers), 1+r.IntN(4))
	case "leader", "isr":
		// A broker down moves the leadership of its partitions ("leader"); two down
		// leave the ISR below min.insync.replicas and writes are refused ("isr").
		if len(down) > 0 && r.Chance(sim.Percent(50)) {
			b := pick(down)
			line("restart %s", b)
			return slices.DeleteFunc(down, func(x string) bool { return x == b })
		}
		up := slices.DeleteFunc(slices.Clone(brokers), func(x string) bool { return slices.Contains(down, x) })
		if len(up) == 1 || (k == "leader" && len(down) > 0) {
			return down
		}
		b := pick(up)
		line("crash %s", b)
		return append(down, b)
	case "partition":
		line("partition app | %s", pick(brokers))
	}
	return down
}
