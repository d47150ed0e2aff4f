package cluster

import (
	"fmt"
	"regexp"

	"mqsim/model/client"
	"mqsim/model/proto"
	"mqsim/sim"
)

var siteName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Remote adds a second cluster to c's world, for geo-replication: its controller and
// brokers are named SITE.ctl, SITE.b1 ... and find each other by the short names (the
// kernel's Env.Lookup looks in the caller's site first). It records into c's history and
// numbers its clients' processes with c's counter, so that one history holds what the
// clients of both clusters saw, each cluster's topics being other topics.
func (c *Cluster) Remote(site string, cfg proto.Config) (*Cluster, error) {
	if !siteName.MatchString(site) {
		return nil, fmt.Errorf("remote cluster %q: expected a name of lower-case letters, digits and dashes", site)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return newAt(c.W, cfg, site+".", c.History, c.processes)
}

// AddMirror adds a MirrorMaker 2 replicator node that reads source (c's cluster being
// the target) and writes the remote topics to c.
func (c *Cluster) AddMirror(name string, source *Cluster, cfg client.MirrorConfig, cc proto.ConsumerConfig, pc proto.ProducerConfig) (Client, error) {
	id, err := c.W.AddNode(name, func() sim.Node {
		return client.NewMirror(cfg, cc, pc, c.nextProcess(), source.BrokerNames(), c.BrokerNames(), c.controllerNames(), c.History)
	})
	if err != nil {
		return Client{}, err
	}
	return Client{Name: name, ID: id}, nil
}

// Mirror is the named mirror's state machine (nil while down or unknown).
func (c *Cluster) Mirror(name string) *client.Mirror {
	id, ok := c.W.Lookup(name)
	if !ok {
		return nil
	}
	m, _ := c.W.Node(id).(*client.Mirror)
	return m
}
