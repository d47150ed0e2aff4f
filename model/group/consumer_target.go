package group

import (
	"slices"

	"mqsim/model/proto"
)

// The target assignment of a consumer-protocol group (Kafka's TargetAssignmentBuilder):
// recomputed by the coordinator, with a server-side assignor, whenever the group epoch is
// ahead of the assignment epoch, and stamped with the group epoch.
//
// Server assignors (group.consumer.assignors, first = default):
//   - uniform: Kafka's UniformAssignor (OptimizedUniformAssignmentBuilder for members with
//     the same subscriptions) balances partitions and keeps every partition it can where it
//     is. mqsim runs its StickyAssignor with each member's previous target as what it owns,
//     which has both properties.
//   - range: Kafka's server RangeAssignor gives each member consecutive ranges per topic,
//     as the client-side range assignor does (its stickiness for co-partitioned topics is
//     not modelled).

// ServerAssignors are the names group.remote.assignor accepts, the default first.
var ServerAssignors = []string{"uniform", "range"}

func serverAssignor(name string) (Assignor, bool) {
	switch name {
	case "", "uniform":
		return StickyAssignor{}, true
	case "range":
		return RangeAssignor{}, true
	}
	return nil, false
}

// updateTarget recomputes the target assignment for the group epoch. topicPartitions is
// the coordinator's metadata.
func (cg *ConsumerGroup) updateTarget(topicPartitions func(string) int) {
	a, _ := serverAssignor(cg.Assignor)
	var members []Member
	var topics []string
	for _, m := range cg.members {
		members = append(members, Member{ID: m.ID, InstanceID: m.InstanceID, Topics: slices.Clone(m.Subscribed), Owned: slices.Clone(m.Target)})
		for _, t := range m.Subscribed {
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	slices.Sort(topics)
	var parts []proto.TP
	for _, t := range topics {
		for p := 0; p < topicPartitions(t); p++ {
			parts = append(parts, proto.TP{Topic: t, Partition: int32(p)})
		}
	}
	target := a.Assign(members, parts)
	for _, m := range cg.members {
		m.Target = slices.Clone(target[m.ID])
		slices.SortFunc(m.Target, proto.CompareTP)
	}
	cg.AssignmentEpoch = cg.Epoch
	cg.Rebalances++
}
