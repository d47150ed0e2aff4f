// Package cluster assembles a Kafka-style cluster in a world: the controller "ctl" (or a
// quorum of controllers c1..cN), brokers b1..bN, and the clients a scenario or a swarm run adds, all sharing one
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

// ControllerName is the single controller node's name.
const ControllerName = "ctl"

// Cluster is a running cluster inside a world.
type Cluster struct {
	W   *sim.World
	Cfg proto.Config
	// Controller is the single controller, or the first of a quorum's.
	Controller sim.NodeID
	// Controllers are the controller nodes: ctl, or c1..cN (cfg.Controllers > 1).
	Controllers []sim.NodeID
	Brokers     []sim.NodeID
	History     *history.Recorder
	Producers   []Client
	Consumers   []Client
	// ShareConsumers are the share-group members (share.go).
	ShareConsumers []ShareClient
	// Pipelines are the consume-transform-produce applications (txn.go).
	Pipelines     []Client
	pipelineFlows []PipelineFlow // per pipeline, what it reads and writes
	corr          int64
	processes     *int                // shared with a remote cluster of the same world (remote.go)
	topics        []proto.TopicConfig // every topic asked for, in order
	inv           *Invariants
	groups        *groups // consumer groups (groups.go); nil until one is used
}

// New validates cfg and adds the controller and brokers to w. The brokers register
// during the next few milliseconds of virtual time. The invariant checks
// (CheckInvariants) are on from the start: they are the world's observer.
func New(w *sim.World, cfg proto.Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newAt(w, cfg, "", history.NewRecorder(), new(int))
}

// newAt adds a cluster whose node names start with site ("" for the first cluster of a
// world), recording into rec and numbering its clients' processes with processes.
func newAt(w *sim.World, cfg proto.Config, site string, rec *history.Recorder, processes *int) (*Cluster, error) {
	c := &Cluster{W: w, Cfg: cfg, History: rec, processes: processes}
	ctls := controller.Names(cfg.Controllers)
	for _, name := range ctls {
		id, err := w.AddNode(site+name, func() sim.Node { return controller.New(cfg) })
		if err != nil {
			return nil, err
		}
		c.Controllers = append(c.Controllers, id)
	}
	c.Controller = c.Controllers[0]
	for i := 1; i <= cfg.Brokers; i++ {
		id, err := w.AddNode(site+controller.BrokerName(i), func() sim.Node { return broker.New(cfg, ctls...) })
		if err != nil {
			return nil, err
		}
		c.Brokers = append(c.Brokers, id)
	}
	c.CheckInvariants(true)
	return c, nil
}

// Topic is the configuration of the topic of that name, if it was asked for
// (CreateTopic), whether or not a controller is up to say so now.
func (c *Cluster) Topic(name string) (proto.TopicConfig, bool) {
	i := slices.IndexFunc(c.topics, func(t proto.TopicConfig) bool { return t.Name == name })
	if i < 0 {
		return proto.TopicConfig{}, false
	}
	return c.topics[i], true
}

// CreateTopic asks the (active) controller for a topic and runs the world until every
// partition has a leader (or a bound of steps passes). With a quorum it first waits for
// an active controller that has registered every running broker, and asks again if the
// active controller changes before the topic is ready.
func (c *Cluster) CreateTopic(t proto.TopicConfig) error {
	if err := t.Validate(c.Cfg.Brokers); err != nil {
		return fmt.Errorf("topic %s: %w", t.Name, err)
	}
	if len(c.Controllers) == 1 && c.W.Status(c.Controller) != sim.Up {
		return fmt.Errorf("topic %s: the controller is %s", t.Name, c.W.Status(c.Controller))
	}
	if !slices.ContainsFunc(c.topics, func(k proto.TopicConfig) bool { return k.Name == t.Name }) {
		c.topics = append(c.topics, t)
	}
	const bound = 100_000
	if len(c.Controllers) == 1 {
		c.corr++
		c.W.Inject(c.Controller, proto.CreateTopic{CorrelationID: c.corr, Config: t}, 0)
		ready := c.topicReadiness(t)
		if !c.W.RunUntil(func(w *sim.World) bool { return ready() }, bound) {
			return fmt.Errorf("topic %s: not every partition has a leader yet", t.Name)
		}
		return nil
	}
	for try := 0; try < 5; try++ {
		if !c.W.RunUntil(func(w *sim.World) bool { _, ok := c.ActiveController(); return ok }, bound) {
			return fmt.Errorf("topic %s: no active controller", t.Name)
		}
		// Give the running brokers a session's time to register, so that the new
		// partitions get leaders at once.
		until := c.W.Now().Add(c.Cfg.Broker.SessionTimeout)
		c.W.RunUntil(func(w *sim.World) bool { return c.brokersRegistered() || w.Now() >= until }, bound)
		to, ok := c.ActiveController()
		if !ok {
			continue
		}
		c.corr++
		c.W.Inject(to, proto.CreateTopic{CorrelationID: c.corr, Config: t}, 0)
		ready := c.topicReadiness(t)
		c.W.RunUntil(func(w *sim.World) bool {
			now, ok := c.ActiveController()
			return ready() || !ok || now != to
		}, bound)
		if c.topicReady(t) {
			return nil
		}
	}
	return fmt.Errorf("topic %s: not every partition has a leader yet", t.Name)
}

// brokersRegistered reports whether a controller is active and has registered every
// broker that is up.
func (c *Cluster) brokersRegistered() bool {
	id, ok := c.ActiveController()
	if !ok {
		return false
	}
	ctl := c.controllerAt(id)
	for _, b := range c.Brokers {
		if c.W.Status(b) == sim.Up && !ctl.Registered(b) {
			return false
		}
	}
	return true
}

// ActiveController is the controller that decides now: the single controller while it is
// up, or the quorum member that is active (the Raft leader, caught up). With a quorum
// there may be none (an election is on) or, for a moment, two: a deposed leader that has
// not noticed yet, which can no longer commit anything. The one in the higher term wins.
func (c *Cluster) ActiveController() (sim.NodeID, bool) {
	best, bestEpoch := sim.NodeID(-1), int32(-1)
	for _, id := range c.Controllers {
		ctl := c.controllerAt(id)
		if ctl == nil {
			continue
		}
		if st := ctl.Status(); st.Active && st.ControllerEpoch > bestEpoch {
			best, bestEpoch = id, st.ControllerEpoch
		}
	}
	return best, best >= 0
}

// controllerAt is controller node id's state machine, or nil while it is down.
func (c *Cluster) controllerAt(id sim.NodeID) *controller.Controller {
	ctl, _ := c.W.Node(id).(*controller.Controller)
	return ctl
}

// topicReady reports whether every partition of t has a leader and every live replica
// has opened its copy. The controller must know exactly t.Partitions partitions of t.
func (c *Cluster) topicReady(t proto.TopicConfig) bool {
	ctl := c.ControllerView()
	if ctl == nil {
		return false
	}
	for i := 0; i < t.Partitions; i++ {
		if !c.partitionReady(ctl, proto.TP{Topic: t.Name, Partition: int32(i)}) {
			return false
		}
	}
	return c.noPartitionBeyond(ctl, t)
}

// topicReadiness is topicReady for a wait that asks after every event: it gives the same
// answer at each call, but asks first about the partition that was not ready last time,
// and goes over every partition again only once that one and all after it are ready.
// So a wait costs about the partitions once, not once per event.
func (c *Cluster) topicReadiness(t proto.TopicConfig) func() bool {
	next := 0 // every partition before it was ready when last looked at
	return func() bool {
		ctl := c.ControllerView()
		if ctl == nil {
			return false
		}
		for ; next < t.Partitions; next++ {
			if !c.partitionReady(ctl, proto.TP{Topic: t.Name, Partition: int32(next)}) {
				return false
			}
		}
		// All were ready when looked at; one looked at earlier may have lost it since.
		for i := 0; i < t.Partitions; i++ {
			if !c.partitionReady(ctl, proto.TP{Topic: t.Name, Partition: int32(i)}) {
				next = i
				return false
			}
		}
		return c.noPartitionBeyond(ctl, t)
	}
}

// partitionReady reports whether the controller knows tp, some broker leads it, and
// every live replica has opened its copy.
func (c *Cluster) partitionReady(ctl *controller.Controller, tp proto.TP) bool {
	p, ok := ctl.Partition(tp)
	if !ok {
		return false
	}
	if _, ok := c.Leader(tp); !ok {
		return false
	}
	for _, id := range p.Replicas {
		if b, ok := c.W.Node(id).(*broker.Broker); ok {
			if _, has := b.Replica(tp); !has {
				return false
			}
		}
	}
	return true
}

// noPartitionBeyond reports whether the controller knows no partition of t numbered
// t.Partitions or above (partitions are numbered from 0 without gaps).
func (c *Cluster) noPartitionBeyond(ctl *controller.Controller, t proto.TopicConfig) bool {
	_, ok := ctl.Partition(proto.TP{Topic: t.Name, Partition: int32(t.Partitions)})
	return !ok
}

// Settle runs the world for d, for the cluster to register and elect.
func (c *Cluster) Settle(d time.Duration) { c.W.RunFor(d) }

// ControllerView is the controller whose metadata the views show: the single controller
// (nil while it is down); with a quorum, the active controller, or else the running
// member with the most committed metadata (nil while every member is down). Its
// Partitions are committed metadata.
func (c *Cluster) ControllerView() *controller.Controller {
	if len(c.Controllers) == 1 {
		return c.controllerAt(c.Controller)
	}
	if id, ok := c.ActiveController(); ok {
		return c.controllerAt(id)
	}
	var best *controller.Controller
	for _, id := range c.Controllers {
		if ctl := c.controllerAt(id); ctl != nil && (best == nil || ctl.Status().MetadataOffset > best.Status().MetadataOffset) {
			best = ctl
		}
	}
	return best
}

// ControllerNode is controller node id's state machine (nil while it is down or id is not
// a controller).
func (c *Cluster) ControllerNode(id sim.NodeID) *controller.Controller {
	if !slices.Contains(c.Controllers, id) {
		return nil
	}
	return c.controllerAt(id)
}

// IsController reports whether id is a controller node.
func (c *Cluster) IsController(id sim.NodeID) bool { return slices.Contains(c.Controllers, id) }

func (c *Cluster) controllerNames() []string {
	var names []string
	for _, id := range c.Controllers {
		names = append(names, c.W.Name(id))
	}
	return names
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

// BrokerNames are the brokers' node names, b1..bN (with the cluster's prefix).
func (c *Cluster) BrokerNames() []string {
	var names []string
	for _, id := range c.Brokers {
		names = append(names, c.W.Name(id))
	}
	return names
}

// nextProcess numbers client incarnations: every start of a client, first or after a
// crash, records its history under a fresh process, as Jepsen does.
func (c *Cluster) nextProcess() int {
	*c.processes++
	return *c.processes
}

// NewProcess is a fresh history process for a client that is no node of the world (the
// scenario runner's group tool).
func (c *Cluster) NewProcess() int { return c.nextProcess() }

// AddProducer adds a producer node.
func (c *Cluster) AddProducer(name string, cfg proto.ProducerConfig) (Client, error) {
	id, err := c.W.AddNode(name, func() sim.Node {
		p := client.NewProducer(cfg, c.nextProcess(), c.BrokerNames(), c.controllerNames(), c.History)
		p.SetProcessSource(c.nextProcess) // delayed sends record under processes of their own
		return p
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
		cs := client.NewConsumer(cfg, c.nextProcess(), c.BrokerNames(), c.History)
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
