package group

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/proto"
)

// Assignors returns one of each assignor, in the order of partition.assignment.strategy's
// documentation: range, roundrobin, sticky, cooperative-sticky.
func Assignors() []Assignor {
	return []Assignor{
		RangeAssignor{}, RoundRobinAssignor{}, StickyAssignor{}, CooperativeStickyAssignor{},
	}
}

// AssignorByName returns the assignor that partition.assignment.strategy calls name.
func AssignorByName(name string) (Assignor, error) {
	var names []string
	for _, a := range Assignors() {
		if a.Name() == name {
			return a, nil
		}
		names = append(names, a.Name())
	}
	return nil, fmt.Errorf("unknown assignor %q (known: %s)", name, strings.Join(names, ", "))
}

// kafkaMemberOrder is Kafka's order of members (AbstractPartitionAssignor.MemberInfo):
// static members first, by group.instance.id, then dynamic members by member id. Without
// static members it is member-id order. Ordering static members by instance id keeps a
// range or roundrobin assignment stable across restarts, where a member id changes but the
// instance id does not (KIP-345).
func kafkaMemberOrder(a, b *Member) int {
	switch {
	case a.InstanceID != "" && b.InstanceID != "":
		if c := strings.Compare(a.InstanceID, b.InstanceID); c != 0 {
			return c
		}
	case a.InstanceID != "":
		return -1
	case b.InstanceID != "":
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// assignProblem is an assignor's input in indexed form, independent of the order in which
// members, topics and partitions were given: members, topics and partitions are numbered
// (int32) in their sorted order.
type assignProblem struct {
	members    []Member   // in kafkaMemberOrder order
	parts      []proto.TP // sorted, without duplicates
	partTopic  []int32    // topic of each partition
	topics     []string   // sorted: the topics of parts
	topicParts [][]int32  // partitions of each topic, ascending
	topicSubs  [][]int32  // members subscribed to each topic, ascending
	memberSubs [][]int32  // topics each member subscribes to (of those with partitions), ascending
}

// newAssignProblem indexes members and partitions. Duplicate partitions count once; topics a
// member subscribes to that have no partitions are ignored. Member ids must be unique: a
// coordinator that hands an assignor two members with one id has a bug, so that panics.
func newAssignProblem(members []Member, partitions []proto.TP) *assignProblem {
	p := &assignProblem{members: slices.Clone(members)}
	slices.SortFunc(p.members, func(a, b Member) int { return kafkaMemberOrder(&a, &b) })
	ids := make([]string, len(p.members))
	for m := range p.members {
		ids[m] = p.members[m].ID
	}
	slices.Sort(ids)
	for k := 1; k < len(ids); k++ {
		if ids[k] == ids[k-1] {
			panic(fmt.Sprintf("group: two members with id %q", ids[k]))
		}
	}

	p.parts = slices.Clone(partitions)
	slices.SortFunc(p.parts, assignTPOrder)
	p.parts = slices.Compact(p.parts)
	topicIndex := make(map[string]int32)
	p.partTopic = make([]int32, len(p.parts))
	for i, tp := range p.parts {
		if len(p.topics) == 0 || p.topics[len(p.topics)-1] != tp.Topic {
			topicIndex[tp.Topic] = int32(len(p.topics))
			p.topics = append(p.topics, tp.Topic)
			p.topicParts = append(p.topicParts, nil)
		}
		t := int32(len(p.topics) - 1)
		p.partTopic[i] = t
		p.topicParts[t] = append(p.topicParts[t], int32(i))
	}

	p.topicSubs = make([][]int32, len(p.topics))
	p.memberSubs = make([][]int32, len(p.members))
	for m := range p.members {
		subs := make([]int32, 0, len(p.members[m].Topics))
		for _, name := range p.members[m].Topics {
			if t, ok := topicIndex[name]; ok {
				subs = append(subs, t)
			}
		}
		slices.Sort(subs)
		subs = slices.Compact(subs)
		p.memberSubs[m] = subs
		for _, t := range subs {
			p.topicSubs[t] = append(p.topicSubs[t], int32(m))
		}
	}
	return p
}

// partition is the index of tp, if it is one of the partitions.
func (p *assignProblem) partition(tp proto.TP) (int32, bool) {
	i, ok := slices.BinarySearchFunc(p.parts, tp, assignTPOrder)
	return int32(i), ok
}

// subscribes reports whether member m subscribes to topic t.
func (p *assignProblem) subscribes(m, t int32) bool {
	_, ok := slices.BinarySearch(p.memberSubs[m], t)
	return ok
}

// result turns partition lists per member (indexes, any order) into an Assignment: every
// member has an entry, its partitions sorted, an empty list rather than nil.
func (p *assignProblem) result(owned [][]int32) Assignment {
	a := make(Assignment, len(p.members))
	for m := range p.members {
		slices.Sort(owned[m])
		tps := make([]proto.TP, len(owned[m]))
		for k, i := range owned[m] {
			tps[k] = p.parts[i]
		}
		a[p.members[m].ID] = tps
	}
	return a
}

// assignTPOrder orders partitions by topic, then number (proto.TP.Less as a cmp function).
func assignTPOrder(a, b proto.TP) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	switch {
	case a.Partition < b.Partition:
		return -1
	case a.Partition > b.Partition:
		return 1
	}
	return 0
}
