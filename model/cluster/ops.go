package cluster

import (
	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/sim"
)

// AddBroker adds the next broker (b4 to a cluster of b1..b3) to the running cluster. It
// registers with the controller by its first heartbeat and holds no replica until a
// reassignment gives it one, as a new Kafka broker does.
func (c *Cluster) AddBroker() (sim.NodeID, error) {
	name := controller.BrokerName(len(c.Brokers) + 1)
	cfg, ctls := c.Cfg, controller.Names(c.Cfg.Controllers)
	id, err := c.W.AddNode(name, func() sim.Node { return broker.New(cfg, ctls...) })
	if err != nil {
		return 0, err
	}
	c.Brokers = append(c.Brokers, id)
	c.Cfg.Brokers++
	return id, nil
}
