package cluster

import (
	"slices"

	"mqsim/model/client"
	"mqsim/model/proto"
	"mqsim/sim"
)

// EnsureTransactionStateTopic creates the transaction state topic the first time a
// transactional client needs it (Kafka creates __transaction_state at the first
// FindCoordinator for a transactional.id), and waits until every partition has a leader.
func (c *Cluster) EnsureTransactionStateTopic() error {
	if slices.ContainsFunc(c.topics, func(t proto.TopicConfig) bool { return t.Name == proto.TransactionStateTopic }) {
		return nil
	}
	return c.CreateTopic(c.Cfg.TransactionStateTopicConfig())
}

// AddTransactionalProducer adds a producer with a transactional.id: the state topic is
// created first, and the producer knows the brokers' transaction version (before KIP-890
// with Legacy.NoTxnVerification). A restart builds a new instance with the same
// transactional.id, which fences the one before.
func (c *Cluster) AddTransactionalProducer(name string, cfg proto.ProducerConfig) (Client, error) {
	if err := c.EnsureTransactionStateTopic(); err != nil {
		return Client{}, err
	}
	legacy := c.Cfg.Legacy.NoTxnVerification
	var last *client.Producer // the instance before a restart, whose open transaction ended with it
	id, err := c.W.AddNode(name, func() sim.Node {
		if last != nil {
			last.CrashedInTxn(int64(c.W.Now()))
		}
		p := client.NewProducer(cfg, c.nextProcess(), c.BrokerNames(), c.controllerNames(), c.History)
		p.SetTransactionVersion(legacy)
		last = p
		return p
	})
	if err != nil {
		return Client{}, err
	}
	c.Producers = append(c.Producers, Client{Name: name, ID: id})
	return Client{Name: name, ID: id}, nil
}

// AddPipeline adds a consume-transform-produce application: a member of cfg.Group reading
// cfg.From and writing cfg.To, transactionally with transactional.id pc.TransactionalID.
// The offsets topic (and, transactional, the transaction state topic) is created first.
func (c *Cluster) AddPipeline(name string, cfg client.PipelineConfig, cc proto.ConsumerConfig, pc proto.ProducerConfig) (Client, error) {
	if err := c.EnsureOffsetsTopic(); err != nil {
		return Client{}, err
	}
	if cfg.Transactional {
		if err := c.EnsureTransactionStateTopic(); err != nil {
			return Client{}, err
		}
	}
	legacy := c.Cfg.Legacy.NoTxnVerification
	var last *client.Pipeline // the instance before a restart (AddTransactionalProducer)
	id, err := c.W.AddNode(name, func() sim.Node {
		if last != nil {
			last.Producer().CrashedInTxn(int64(c.W.Now()))
		}
		a := client.NewPipeline(cfg, cc, pc, c.nextProcess(), c.BrokerNames(), c.controllerNames(), c.History)
		a.SetTransactionVersion(legacy)
		last = a
		return a
	})
	if err != nil {
		return Client{}, err
	}
	c.Pipelines = append(c.Pipelines, Client{Name: name, ID: id})
	// Instances of one application (a group's members reading the same topics) are one
	// flow: the checker judges each flow once.
	if f := (PipelineFlow{From: cfg.From, To: cfg.To}); !slices.Contains(c.pipelineFlows, f) {
		c.pipelineFlows = append(c.pipelineFlows, f)
	}
	return Client{Name: name, ID: id}, nil
}

// PipelineFlow is the topic a pipeline reads and the topic it writes.
type PipelineFlow struct{ From, To string }

// PipelineFlows are the flows of every pipeline added, in the order they were added, for
// the checker's exactly-once promise: a pipeline is there to turn each input record into
// one output record, transactional or not, and one that does not is what the verdict
// shows.
func (c *Cluster) PipelineFlows() []PipelineFlow { return c.pipelineFlows }

// Pipeline is the named pipeline application (nil while down or unknown).
func (c *Cluster) Pipeline(name string) *client.Pipeline {
	id, ok := c.W.Lookup(name)
	if !ok {
		return nil
	}
	a, _ := c.W.Node(id).(*client.Pipeline)
	return a
}
