package gateway

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"os"
	"strings"
	"time"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// DefaultScenario is the cluster mqsim serve runs when no scenario is named: three
// brokers, topic t with three partitions replicated three times, acks=all's
// min.insync.replicas=2.
const DefaultScenario = `# mqsim serve's default cluster.
cluster brokers=3 partitions=3 rf=3 min-isr=2
----
`

// Scenario is the world a session runs on: a scenario file's text (its steps run before
// any client connects) and the seed.
type Scenario struct {
	Name string
	Text string
	Seed uint64
}

// LoadScenario reads a scenario by catalogue name or file path; "" is DefaultScenario.
func LoadScenario(nameOrPath string, seed uint64) (Scenario, error) {
	if nameOrPath == "" {
		return Scenario{Name: "default", Text: DefaultScenario, Seed: seed}, nil
	}
	if b, err := os.ReadFile(nameOrPath); err == nil {
		return Scenario{Name: nameOrPath, Text: string(b), Seed: seed}, nil
	}
	for _, e := range scenarios.Catalog() {
		if e.Name == nameOrPath {
			return Scenario{Name: e.Name, Text: e.Text, Seed: seed}, nil
		}
	}
	_, err := scenarios.Load(nameOrPath) // says what was expected, with near names
	return Scenario{}, err
}

// World is a scenario's world with the gateway node in it.
type World struct {
	Runner  *runner.Runner
	W       *sim.World
	Node    *Node
	Brokers int
}

// Build runs the scenario's steps, makes sure the offsets topic exists (clients' groups
// need it, as Kafka creates __consumer_offsets at its first use), and adds the gateway
// node, which advertises the brokers at the addresses listen gives for their number (one
// per broker, b1 first: serve opens its listeners there, Replay returns the recorded
// ones). The same scenario and addresses give the same world: Replay relies on it.
func Build(sc Scenario, listen func(brokers int) ([]Addr, error)) (*World, error) {
	s, err := script.Parse(sc.Name, sc.Text)
	if err != nil {
		return nil, err
	}
	res, err := runner.Run(s, RunnerOptions(sc), nil)
	if err != nil {
		return nil, err
	}
	if res.Runner.Cluster() == nil {
		return nil, fmt.Errorf("scenario %s makes no Kafka cluster: the gateway needs a cluster command", sc.Name)
	}
	return Attach(res.Runner, listen)
}

// RunnerOptions are the options a session's scenario runs with: its seed, always set.
func RunnerOptions(sc Scenario) runner.Options {
	return runner.Options{Seed: sc.Seed, SeedSet: true}
}

// Attach adds the gateway to a runner that ran a scenario's steps (Build does both; the
// TUI runs the steps itself, watching them): it makes sure the offsets topic exists and
// adds the gateway node, advertising the brokers at the addresses listen gives.
func Attach(rn *runner.Runner, listen func(brokers int) ([]Addr, error)) (*World, error) {
	cl := rn.Cluster()
	if cl == nil {
		return nil, fmt.Errorf("the scenario makes no Kafka cluster: the gateway needs a cluster command")
	}
	addrs, err := listen(len(cl.Brokers))
	if err != nil {
		return nil, err
	}
	if len(addrs) != len(cl.Brokers) {
		return nil, fmt.Errorf("%d listen addresses for %d brokers", len(addrs), len(cl.Brokers))
	}
	if err := cl.EnsureOffsetsTopic(); err != nil {
		return nil, err
	}
	node := NewNode(cl.Brokers, addrs, cl.Controllers, cl.Cfg.Topic)
	node.txnV2, node.txnStateTopic = !cl.Cfg.Legacy.NoTxnVerification, cl.Cfg.TransactionStateTopicConfig()
	node.hist = newWireHistory(cl.History, cl.NewProcess)
	if _, err := cl.W.AddNode(NodeName, func() sim.Node { return node }); err != nil {
		return nil, err
	}
	return &World{Runner: rn, W: cl.W, Node: node, Brokers: len(cl.Brokers)}, nil
}

// Hash is the run's fingerprint (trace and step hashes), as mqsim run prints it.
func (w *World) Hash() string { return w.Runner.Hash() }

// exec applies one scenario command (crash b1, partition b1 | b2 b3, restart b1 ...) to
// the world now, as a scenario file's step would, and returns its output.
func (w *World) exec(command string) (string, error) {
	s, err := script.Parse("serve", strings.TrimSpace(command)+"\n----\n")
	if err != nil {
		return "", err
	}
	if len(s.Steps) != 1 {
		return "", fmt.Errorf("want one scenario command, got %d", len(s.Steps))
	}
	if err := runner.Check(s); err != nil {
		return "", err
	}
	return w.Runner.Exec(s.Steps[0])
}

// runDue runs the world up to vnow, the virtual time that follows wall time, and the
// events due within lead after it (PacingLead times the speed) as well. Those run one
// instant at a time (RunUntilTime runs all of an instant), and the clock never moves past
// the last event run, so every event at or before the clock has run, as a replay's
// RunUntilTime of a recorded arrival leaves it: the replay meets the same step. A request
// injected next arrives at vnow or at the last event's time, whichever is later.
//
// It runs at most maxAdvanceSteps events and reports whether it stopped there, behind
// vnow: at a speed the world cannot keep up with (more events a wall second than it can
// run), chasing the wall would never end, and the server would never come back to the
// requests it serves.
func (w *World) runDue(vnow func() sim.Time, lead time.Duration) (behind bool) {
	start := w.W.Steps()
	for next, ok := w.W.NextAt(); ok && next <= vnow().Add(lead); next, ok = w.W.NextAt() {
		if w.W.Steps()-start >= maxAdvanceSteps {
			return true
		}
		w.W.RunUntilTime(next)
	}
	if t := vnow(); t > w.W.Now() {
		w.W.RunUntilTime(t)
	}
	return false
}

// maxAdvanceSteps bounds the events one runDue runs: at the default speed a busy
// session runs a few hundred between two requests.
const maxAdvanceSteps = 20_000

// inject hands a request to the gateway node now.
func (w *World) inject(conn int, broker int32, frame []byte) error {
	r, err := parseFrame(frame)
	if err != nil {
		return err
	}
	w.injectParsed(conn, broker, r)
	return nil
}

// injectParsed hands a request parsed by parseFrame to the gateway node now.
func (w *World) injectParsed(conn int, broker int32, r Request) {
	r.Conn, r.Broker = conn, broker
	id, _ := w.W.Lookup(NodeName)
	w.W.Inject(id, r, 0)
}

// parseFrame parses a request frame (ParseRequest) and decodes a produce request's
// batches, which is all the work on a request that needs nothing but its bytes.
func parseFrame(frame []byte) (Request, error) {
	h, req, err := ParseRequest(frame)
	if err != nil {
		return Request{}, err
	}
	r := Request{Header: h, Req: req}
	if p, ok := req.(*kmsg.ProduceRequest); ok {
		r.Produced = decodeProduce(p)
	}
	return r, nil
}
