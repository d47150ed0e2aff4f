package group

import "mqsim/model/proto"

// RangeAssignor is Kafka's RangeAssignor ("range", the first default of
// partition.assignment.strategy). It works topic by topic: the topic's partitions, in
// numeric order, are cut into consecutive ranges, one per subscribed member in Kafka's
// member order (member id, static members first by instance id); the first P mod C members
// get one partition more. Because every topic starts again at the first member, many
// topics with few partitions pile onto the first members (scenario C9: two members, three
// one-partition topics → 3 and 0). Rack awareness (KIP-881) is not modelled.
type RangeAssignor struct{}

// Name is "range".
func (RangeAssignor) Name() string { return "range" }

// Cooperative is false: range is an eager assignor.
func (RangeAssignor) Cooperative() bool { return false }

// Assign gives each subscriber of a topic a consecutive range of its partitions.
func (RangeAssignor) Assign(members []Member, partitions []proto.TP) Assignment {
	p := newAssignProblem(members, partitions)
	owned := make([][]int32, len(p.members))
	for t := range p.topics {
		subs, parts := p.topicSubs[t], p.topicParts[t]
		if len(subs) == 0 {
			continue
		}
		per, extra := len(parts)/len(subs), len(parts)%len(subs)
		start := 0
		for k, m := range subs {
			n := per
			if k < extra {
				n++
			}
			owned[m] = append(owned[m], parts[start:start+n]...)
			start += n
		}
	}
	return p.result(owned)
}
