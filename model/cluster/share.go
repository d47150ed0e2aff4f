package cluster

import (
	"slices"

	"mqsim/model/client"
	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Share groups (KIP-932) in a cluster: share consumers, and the share-group state their
// coordinator keeps, for views.

// AddShareConsumer adds a share consumer of opt.Group; it starts at once (joins and polls)
// and again, as a new process, after each restart. The offsets topic is created first: its
// leaders host the group coordinators.
func (c *Cluster) AddShareConsumer(name string, cfg proto.ConsumerConfig, opt client.ShareOptions) (Client, error) {
	if err := opt.Validate(); err != nil {
		return Client{}, err
	}
	if err := c.EnsureOffsetsTopic(); err != nil {
		return Client{}, err
	}
	if err := c.EnsureShareGroupStateTopic(); err != nil {
		return Client{}, err
	}
	opt.Topics = slices.Clone(opt.Topics)
	id, err := c.W.AddNode(name, func() sim.Node {
		return client.NewShareConsumer(cfg, opt, c.nextProcess(), c.BrokerNames(), c.History)
	})
	if err != nil {
		return Client{}, err
	}
	c.ShareConsumers = append(c.ShareConsumers, ShareClient{Client: Client{Name: name, ID: id}, Group: opt.Group})
	return Client{Name: name, ID: id}, nil
}

// ShareClient is a share consumer node and its share group.
type ShareClient struct {
	Client
	Group string
}

// ShareConsumer is the named share consumer's state machine (nil while down or unknown).
func (c *Cluster) ShareConsumer(name string) *client.ShareConsumer {
	id, ok := c.W.Lookup(name)
	if !ok {
		return nil
	}
	s, _ := c.W.Node(id).(*client.ShareConsumer)
	return s
}

// ShareGroup is a share group's state at its coordinator, the coordinator's name, and
// whether one is loaded and knows the group as a share group.
func (c *Cluster) ShareGroup(name string) (*group.ShareGroup, string, bool) {
	coord, b := c.coordinatorFor(name)
	if coord == nil {
		return nil, "", false
	}
	g := coord.Group(name)
	if g == nil || g.Share == nil {
		return nil, c.W.Name(c.Brokers[b]), false
	}
	return g.Share, c.W.Name(c.Brokers[b]), true
}
