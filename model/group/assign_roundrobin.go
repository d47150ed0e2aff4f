package group

import "mqsim/model/proto"

// RoundRobinAssignor is Kafka's RoundRobinAssignor ("roundrobin"): all partitions of all
// subscribed topics, sorted by topic and number, are dealt one at a time to the members in
// Kafka's member order (member id, static members first by instance id), going round in a
// circle and skipping a member that does not subscribe to the partition's topic. With
// identical subscriptions the counts differ by at most one; with different subscriptions
// it can be unbalanced (Kafka's javadoc example: 1, 1 and 4).
type RoundRobinAssignor struct{}

// Name is "roundrobin".
func (RoundRobinAssignor) Name() string { return "roundrobin" }

// Cooperative is false: roundrobin is an eager assignor.
func (RoundRobinAssignor) Cooperative() bool { return false }

// Assign deals the partitions round robin.
func (RoundRobinAssignor) Assign(members []Member, partitions []proto.TP) Assignment {
	p := newAssignProblem(members, partitions)
	owned := make([][]int32, len(p.members))
	next := int32(0) // the circular iterator over members
	for i := range p.parts {
		t := p.partTopic[i]
		if len(p.topicSubs[t]) == 0 {
			continue
		}
		// Bounded: some member subscribes to t, so at most len(members)-1 skips.
		for !p.subscribes(next, t) {
			next = (next + 1) % int32(len(p.members))
		}
		owned[next] = append(owned[next], int32(i))
		next = (next + 1) % int32(len(p.members))
	}
	return p.result(owned)
}
