package queue

import (
	"fmt"
	"time"

	"mqsim/model/history"
	"mqsim/sim"
)

// Cluster is a queue broker inside a world: nodes q1..qN, the topology they share, and
// the clients a scenario or a test adds, all recording into one history.
type Cluster struct {
	W       *sim.World
	Cfg     Config
	Names   []string
	IDs     []sim.NodeID
	Topo    *Topology
	History *history.Recorder
	Clients []Client
	// processes numbers client incarnations (fresh after every restart, as Jepsen does).
	processes int
}

// ClientKind says what a client node is.
type ClientKind string

const (
	KindPublisher ClientKind = "publisher"
	KindConsumer  ClientKind = "consumer"
	KindWorker    ClientKind = "worker"
)

// Client is a client node the cluster added.
type Client struct {
	Name string
	ID   sim.NodeID
	Kind ClientKind
}

// New validates cfg and adds the broker nodes to w.
func New(w *sim.World, cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Cluster{W: w, Cfg: cfg, Topo: &Topology{}, History: history.NewRecorder()}
	for i := 1; i <= cfg.Nodes; i++ {
		name := NodeName(i)
		id, err := w.AddNode(name, func() sim.Node { return NewNode(cfg, c.Topo) })
		if err != nil {
			return nil, err
		}
		c.Names = append(c.Names, name)
		c.IDs = append(c.IDs, id)
	}
	w.RunFor(0)
	return c, nil
}

// Declare changes the topology (on a copy) and hands the new one to every node; nodes
// that are down get it when they restart. It then runs the world until every queue has
// a node acting for it, or limit passes.
func (c *Cluster) Declare(change func(t *Topology) error, limit time.Duration) error {
	t := c.Topo.Clone()
	if err := change(t); err != nil {
		return err
	}
	c.Topo = t
	for _, id := range c.IDs {
		if c.W.Status(id) != sim.Down {
			c.W.Inject(id, Declare{Topo: t}, 0)
		}
	}
	c.W.RunFor(0)
	c.WaitActive(limit)
	return nil
}

// WaitActive runs until every queue whose nodes can act has an acting node, or until
// limit of virtual time passes. It reports whether they all have one.
func (c *Cluster) WaitActive(limit time.Duration) bool {
	end := c.W.Now().Add(limit)
	return c.W.RunUntil(func(w *sim.World) bool {
		if w.Now() > end {
			return true
		}
		for _, q := range c.Topo.Queues {
			if _, _, ok := c.Acting(q.Name); !ok {
				return false
			}
		}
		return true
	}, 10_000_000) && c.allActive()
}

func (c *Cluster) allActive() bool {
	for _, q := range c.Topo.Queues {
		if _, _, ok := c.Acting(q.Name); !ok {
			return false
		}
	}
	return true
}

// Node is the named broker node's state machine, nil while it is down.
func (c *Cluster) Node(name string) *Node {
	id, ok := c.W.Lookup(name)
	if !ok {
		return nil
	}
	n, _ := c.W.Node(id).(*Node)
	return n
}

// Acting finds the node acting for a queue (the leader with the highest term, or the
// classic queue's home) and its view.
func (c *Cluster) Acting(queue string) (string, QueueView, bool) {
	best, bestView, found := "", QueueView{}, false
	for _, name := range c.Names {
		n := c.Node(name)
		if n == nil {
			continue
		}
		v, ok := n.Queue(queue)
		if !ok || !v.Active {
			continue
		}
		if !found || v.Term > bestView.Term {
			best, bestView, found = name, v, true
		}
	}
	return best, bestView, found
}

func (c *Cluster) nextProcess() int {
	c.processes++
	return c.processes
}

func (c *Cluster) add(name string, kind ClientKind, f func(process int) sim.Node) (Client, error) {
	id, err := c.W.AddNode(name, func() sim.Node { return f(c.nextProcess()) })
	if err != nil {
		return Client{}, err
	}
	cl := Client{Name: name, ID: id, Kind: kind}
	c.Clients = append(c.Clients, cl)
	c.W.RunFor(0)
	return cl, nil
}

// AddPublisher adds a publisher.
func (c *Cluster) AddPublisher(name string, cfg PublisherConfig) (Client, error) {
	if err := cfg.Validate(); err != nil {
		return Client{}, err
	}
	if len(cfg.Nodes) == 0 {
		cfg.Nodes = c.Names
	}
	return c.add(name, KindPublisher, func(p int) sim.Node { return NewPublisher(cfg, p, c.nextProcess, c.History) })
}

// AddConsumer adds a push consumer; it subscribes at once.
func (c *Cluster) AddConsumer(name string, cfg ConsumerConfig) (Client, error) {
	if err := cfg.Validate(); err != nil {
		return Client{}, err
	}
	if _, ok := c.Topo.Queue(cfg.Queue); !ok {
		return Client{}, fmt.Errorf("no queue %q", cfg.Queue)
	}
	if len(cfg.Nodes) == 0 {
		cfg.Nodes = c.Names
	}
	return c.add(name, KindConsumer, func(p int) sim.Node { return NewConsumer(cfg, p, c.History) })
}

// AddWorker adds an SQS worker; it starts receiving at once.
func (c *Cluster) AddWorker(name string, cfg WorkerConfig) (Client, error) {
	if err := cfg.Validate(); err != nil {
		return Client{}, err
	}
	if _, ok := c.Topo.Queue(cfg.Queue); !ok {
		return Client{}, fmt.Errorf("no queue %q", cfg.Queue)
	}
	if len(cfg.Nodes) == 0 {
		cfg.Nodes = c.Names
	}
	return c.add(name, KindWorker, func(p int) sim.Node { return NewWorker(cfg, p, c.History) })
}

// Client finds a client by name.
func (c *Cluster) Client(name string) (Client, bool) {
	for _, cl := range c.Clients {
		if cl.Name == name {
			return cl, true
		}
	}
	return Client{}, false
}

// Settled reports whether nothing is in motion: no publish waits for a confirm or a
// queue's answer, no consumer is busy, and every queue that someone reads (or whose
// messages will expire) is empty.
func (c *Cluster) Settled() bool {
	for _, cl := range c.Clients {
		switch n := c.W.Node(cl.ID).(type) {
		case *Publisher:
			if n.InFlight() > 0 {
				return false
			}
		case *Consumer:
			if n.Busy() {
				return false
			}
		case *Worker:
			if n.cur != nil || len(n.batch) > 0 {
				return false
			}
		}
	}
	for _, name := range c.Names {
		if n := c.Node(name); n != nil && n.Pending() > 0 {
			return false
		}
	}
	for _, q := range c.Topo.Queues {
		_, v, ok := c.Acting(q.Name)
		if !ok {
			return false
		}
		// A queue nobody reads is settled, unless time will still move its messages on
		// (a TTL that dead-letters them).
		if v.State.Len() > 0 && (c.hasReader(q.Name) || v.State.NextDeadline() > 0) {
			return false
		}
	}
	return true
}

// hasReader reports whether a live client reads the queue.
func (c *Cluster) hasReader(queue string) bool {
	for _, cl := range c.Clients {
		switch n := c.W.Node(cl.ID).(type) {
		case *Consumer:
			if n.cfg.Queue == queue {
				return true
			}
		case *Worker:
			if n.cfg.Queue == queue {
				return true
			}
		}
	}
	return false
}

// Drain runs until Settled, or limit passes. It reports whether it settled.
func (c *Cluster) Drain(limit time.Duration) bool {
	c.W.RunFor(0) // what was just injected counts
	end := c.W.Now().Add(limit)
	c.W.RunUntil(func(w *sim.World) bool { return w.Now() > end || c.Settled() }, 50_000_000)
	return c.Settled()
}
