package cluster

import (
	"slices"

	"mqsim/model/proto"
)

// EnsureShareGroupStateTopic creates the share-group state topic the first time a share
// consumer needs it (Kafka's share coordinator creates __share_group_state on first use,
// as the transaction coordinator does __transaction_state), and waits until every
// partition has a leader. The share-partition leaders' persisters find their share
// coordinator in it; without it their reads and writes wait and time out.
func (c *Cluster) EnsureShareGroupStateTopic() error {
	if slices.ContainsFunc(c.topics, func(t proto.TopicConfig) bool { return t.Name == proto.ShareGroupStateTopic }) {
		return nil
	}
	return c.CreateTopic(c.Cfg.ShareGroupStateTopicConfig())
}
