// Package cluster assembles a Kafka-style cluster in a world: the controller "ctl",
// brokers b1..bN, and the clients a scenario or a swarm run adds, all sharing one
// history recorder. It is the one place that knows how the pieces are wired, so the
// scenario commands, the swarm and the tests build clusters the same way.
package cluster

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/controller"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// ControllerName is the controller node's name.
const ControllerName = "ctl"

// Cluster is a running cluster inside a world.
type Cluster struct {
	W          *sim.World
	Cfg        proto.Config
	Controller sim.NodeID
	Brokers    []sim.NodeID
	History    *history.Recorder
	Producers  []Client
	Consumers  []Client
	corr       int64
	processes  int
	topics     []proto.TopicConfig // every topic asked for, in order
	inv        *Invariants
	groups     *groups // consumer groups (groups.go); nil until one is used
}

// New validates cfg and adds the controller and brokers to w. The brokers register
// during the next few milliseconds of virtual time. The invariant checks
// (CheckInvariants) are on from the start: they are the world's observer.
func New(w *sim.World, cfg proto.Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{W: w, Cfg: cfg, History: history.NewRecorder()}
	id, err := w.AddNode(ControllerName, func() sim.Node { return controller.New(cfg) })
	if err != nil {
		return nil, err
	}
	c.Controller = id
	for i := 1; i <= cfg.Brokers; i++ {
		id, err := w.AddNode(controller.BrokerName(i), func() sim.Node { return broker.New(cfg, ControllerName) })
		if err != nil {
			return nil, err
		}
		c.Brokers = append(c.Brokers, id)
	}
	c.CheckInvariants(true)
	return c, nil
}

// CreateTopic asks the controller for a topic and runs the world until every partition
// has a leader (or a bound of virtual time passes).
func (c *Cluster) CreateTopic(t proto.TopicConfig) error {
	if err := t.Validate(c.Cfg.Brokers); err != nil {
		return fmt.Errorf("topic %s: %w", t.Name, err)
	}
	if c.W.Status(c.Controller) != sim.Up {
		return fmt.Errorf("topic %s: the controller is %s", t.Name, c.W.Status(c.Controller))
	}
	if !slices.ContainsFunc(c.topics, func(k proto.TopicConfig) bool { return k.Name == t.Name }) {
		c.topics = append(c.topics, t)
	}
	c.corr++
	c.W.Inject(c.Controller, proto.CreateTopic{CorrelationID: c.corr, Config: t}, 0)
	ok := c.W.RunUntil(func(w *sim.World) bool { return c.topicReady(t) }, 100_000)
	if !ok {
		return fmt.Errorf("topic %s: not every partition has a leader yet", t.Name)
	}
	return nil
}

// topicReady reports whether every partition of t has a leader and every live replica
// has opened its copy.
func (c *Cluster) topicReady(t proto.TopicConfig) bool {
	ready := 0
	for _, p := range c.Partitions() {
		if p.TP.Topic != t.Name {
			continue
		}
		if _, ok := c.Leader(p.TP); !ok {
			return false
		}
		for _, id := range p.Replicas {
			if b, ok := c.W.Node(id).(*broker.Broker); ok {
				if _, has := b.Replica(p.TP); !has {
					return false
				}
			}
		}
		ready++
	}
	return ready == t.Partitions
}

// Settle runs the world for d, for the cluster to register and elect.
func (c *Cluster) Settle(d time.Duration) { c.W.RunFor(d) }

// ControllerView is the controller's state machine, or nil while it is down.
func (c *Cluster) ControllerView() *controller.Controller {
	ctl, _ := c.W.Node(c.Controller).(*controller.Controller)
	return ctl
}

// Broker is broker i's state machine (from 0), or nil while it is down.
func (c *Cluster) Broker(i int) *broker.Broker {
	b, _ := c.W.Node(c.Brokers[i]).(*broker.Broker)
	return b
}

// Leader is the broker that believes it leads tp in the highest leader epoch.
func (c *Cluster) Leader(tp proto.TP) (int, bool) {
	best, epoch := -1, int32(-1)
	for i := range c.Brokers {
		b := c.Broker(i)
		if b == nil {
			continue
		}
		if r, ok := b.Replica(tp); ok && r.Leader && r.LeaderEpoch > epoch {
			best, epoch = i, r.LeaderEpoch
		}
	}
	return best, best >= 0
}

// Partitions lists every partition the controller knows, in order.
func (c *Cluster) Partitions() []proto.PartitionState {
	if ctl := c.ControllerView(); ctl != nil {
		return ctl.Partitions()
	}
	return nil
}

// Client is a producer or consumer node the cluster added.
type Client struct {
	Name string
	ID   sim.NodeID
}

func (c *Cluster) brokerNames() []string {
	var names []string
	for _, id := range c.Brokers {
		names = append(names, c.W.Name(id))
	}
	return names
}

// nextProcess numbers client incarnations: every start of a client, first or after a
// crash, records its history under a fresh process, as Jepsen does.
func (c *Cluster) nextProcess() int {
	c.processes++
	return c.processes
}

// AddProducer adds a producer node.
func (c *Cluster) AddProducer(name string, cfg proto.ProducerConfig) (Client, error) {
	id, err := c.W.AddNode(name, func() sim.Node {
		return client.NewProducer(cfg, c.nextProcess(), c.brokerNames(), ControllerName, c.History)
	})
	if err != nil {
		return Client{}, err
	}
	c.Producers = append(c.Producers, Client{Name: name, ID: id})
	return Client{Name: name, ID: id}, nil
}

// AddConsumer adds a consumer node.
func (c *Cluster) AddConsumer(name string, cfg proto.ConsumerConfig) (Client, error) {
	id, err := c.W.AddNode(name, func() sim.Node {
		cs := client.NewConsumer(cfg, c.nextProcess(), c.brokerNames(), c.History)
		c.resubscribe(name, cs)
		return cs
	})
	if err != nil {
		return Client{}, err
	}
	c.Consumers = append(c.Consumers, Client{Name: name, ID: id})
	return Client{Name: name, ID: id}, nil
}

// Producer is the named producer's state machine (nil while down or unknown).
func (c *Cluster) Producer(name string) *client.Producer {
	id, ok := c.W.Lookup(name)
	if !ok {
		return nil
	}
	p, _ := c.W.Node(id).(*client.Producer)
	return p
}

// Consumer is the named consumer's state machine (nil while down or unknown).
func (c *Cluster) Consumer(name string) *client.Consumer {
	id, ok := c.W.Lookup(name)
	if !ok {
		return nil
	}
	cs, _ := c.W.Node(id).(*client.Consumer)
	return cs
}
