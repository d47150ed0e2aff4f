// Package cluster assembles a Kafka-style cluster in a world: the controller "ctl",
// brokers b1..bN, and the clients a scenario or a swarm run adds, all sharing one
// history recorder. It is the one place that knows how the pieces are wired, so the
// scenario commands, the swarm and the tests build clusters the same way.
package cluster

import (
	"fmt"
	"time"

	"mqsim/model/broker"
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
	corr       int64
}

// New validates cfg and adds the controller and brokers to w. The brokers register
// during the next few milliseconds of virtual time.
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
