package group

import (
	"slices"

	"mqsim/model/proto"
)

// StickyAssignor is Kafka's StickyAssignor ("sticky", AbstractStickyAssignor): an
// assignment as balanced as roundrobin's that keeps as many previously owned partitions
// (Member.Owned) where they are as balance allows.
//
// Balanced means no partition could move from its member to another subscriber of its
// topic that has at least two partitions fewer (Kafka's isBalanced); members with the same
// subscriptions therefore differ by at most one. With identical subscriptions the number
// of partitions taken away from their previous owner is the least any balanced assignment
// can do: members that owned the most keep the larger share.
//
// The algorithm, in three phases over members in Kafka's order and partitions sorted:
//
//  1. Every member keeps the partitions it owned that still exist and that it still
//     subscribes to. A partition claimed by two members (possible after a missed
//     rebalance) is kept by the first of them in member order and is unowned for the
//     others. Kafka breaks that tie by generation and, within one generation, takes the
//     partition from both; mqsim's Member has no generation.
//  2. Each partition nobody kept goes to its least-loaded subscriber, partitions with
//     fewer subscribers first (they have fewer choices).
//  3. While the most-loaded member that can give has a partition whose least-loaded other
//     subscriber has at least two fewer, move one: preferably one it did not own before,
//     otherwise its highest-numbered one, to the least-loaded subscriber.
//
// With different subscriptions the result is balanced in the sense above but its
// stickiness is a heuristic, like Kafka's.
type StickyAssignor struct{}

// Name is "sticky".
func (StickyAssignor) Name() string { return "sticky" }

// Cooperative is false: with sticky, members still revoke everything before a rebalance
// (eager protocol); the assignment only makes them get most of it back.
func (StickyAssignor) Cooperative() bool { return false }

// Assign computes the sticky assignment.
func (StickyAssignor) Assign(members []Member, partitions []proto.TP) Assignment {
	return stickyAssign(members, partitions)
}

// CooperativeStickyAssignor is Kafka's CooperativeStickyAssignor ("cooperative-sticky"):
// the sticky assignment, used with the incremental cooperative protocol (KIP-429). Holding
// back a partition that changes owner until its old owner revoked it, and the second
// rebalance that then hands it out, are the coordinator's and the consumers' job, not the
// assignor's.
type CooperativeStickyAssignor struct{}

// Name is "cooperative-sticky".
func (CooperativeStickyAssignor) Name() string { return "cooperative-sticky" }

// Cooperative is true.
func (CooperativeStickyAssignor) Cooperative() bool { return true }

// Assign computes the sticky assignment.
func (CooperativeStickyAssignor) Assign(members []Member, partitions []proto.TP) Assignment {
	return stickyAssign(members, partitions)
}

// noMember is the member index of an unowned partition.
const noMember int32 = -1

// stickyState is the state of one sticky assignment: who owns each partition, and how many
// each member has.
type stickyState struct {
	*assignProblem
	owner []int32 // member owning each partition, or noMember
	kept  []int32 // member that kept each partition from its previous assignment, or noMember
	count []int   // partitions per member
}

// stickyAssign is the assignment both sticky assignors compute, in the three phases of
// StickyAssignor's doc.
func stickyAssign(members []Member, partitions []proto.TP) Assignment {
	s := &stickyState{assignProblem: newAssignProblem(members, partitions)}
	s.owner = make([]int32, len(s.parts))
	s.kept = make([]int32, len(s.parts))
	for i := range s.parts {
		s.owner[i], s.kept[i] = noMember, noMember
	}
	s.count = make([]int, len(s.members))
	s.keepOwned()
	s.assignUnowned()
	owned := s.balance()
	return s.result(owned)
}

// keepOwned is phase 1: members keep what they owned and may still have.
func (s *stickyState) keepOwned() {
	for m := range s.members {
		var prev []int32
		for _, tp := range s.members[m].Owned {
			if i, ok := s.partition(tp); ok && s.subscribes(int32(m), s.partTopic[i]) {
				prev = append(prev, i)
			}
		}
		slices.Sort(prev)
		for _, i := range slices.Compact(prev) {
			if s.owner[i] == noMember {
				s.owner[i], s.kept[i] = int32(m), int32(m)
				s.count[m]++
			}
		}
	}
}

// assignUnowned is phase 2: each unowned partition with a subscriber goes to its
// least-loaded subscriber, partitions with fewer subscribers first.
func (s *stickyState) assignUnowned() {
	var unowned []int32
	for i := range s.parts {
		if s.owner[i] == noMember && len(s.topicSubs[s.partTopic[i]]) > 0 {
			unowned = append(unowned, int32(i))
		}
	}
	slices.SortFunc(unowned, func(a, b int32) int {
		na, nb := len(s.topicSubs[s.partTopic[a]]), len(s.topicSubs[s.partTopic[b]])
		if na != nb {
			return na - nb
		}
		return int(a - b)
	})
	for _, i := range unowned {
		m := s.leastLoaded(s.partTopic[i], noMember)
		s.owner[i] = m
		s.count[m]++
	}
}

// leastLoaded is the subscriber of topic t, other than except, with the fewest partitions
// (the first in member order among equals), or noMember.
func (s *stickyState) leastLoaded(t, except int32) int32 {
	best := noMember
	for _, m := range s.topicSubs[t] {
		if m != except && (best == noMember || s.count[m] < s.count[best]) {
			best = m
		}
	}
	return best
}

// balance is phase 3: it moves partitions from the most-loaded members to less-loaded
// subscribers until no partition could go to a subscriber with at least two fewer. It
// returns each member's partitions.
func (s *stickyState) balance() [][]int32 {
	owned := make([][]int32, len(s.members))
	for i, m := range s.owner {
		if m != noMember {
			owned[m] = append(owned[m], int32(i))
		}
	}
	// Each move lowers the sum of squared counts by at least 2, and that sum starts at
	// most at P², so this bounds the loop.
	movesMax := len(s.parts)*len(s.parts)/2 + 1
	order := make([]int32, len(s.members))
	dest := make([]int32, len(s.topics)) // least-loaded other subscriber, per topic
	destStamp := make([]int, len(s.topics))
	stamp := 0
	for moves := 0; ; moves++ {
		if moves > movesMax {
			panic("group: sticky balancing did not converge")
		}
		countMin := -1 // among members that subscribe to something
		for m := range order {
			order[m] = int32(m)
			if len(s.memberSubs[m]) > 0 && (countMin < 0 || s.count[m] < countMin) {
				countMin = s.count[m]
			}
		}
		slices.SortFunc(order, func(a, b int32) int {
			if s.count[a] != s.count[b] {
				return s.count[b] - s.count[a]
			}
			return int(a - b)
		})
		moved := false
		for _, m := range order {
			if s.count[m] < countMin+2 {
				break // no member further down can give either
			}
			// The best partition to move out of m: to the least-loaded destination,
			// then one m did not own before, then the highest-numbered.
			stamp++
			from, to := noMember, noMember
			for _, i := range owned[m] {
				t := s.partTopic[i]
				if destStamp[t] != stamp {
					destStamp[t], dest[t] = stamp, s.leastLoaded(t, m)
				}
				d := dest[t]
				if d == noMember || s.count[d]+2 > s.count[m] {
					continue
				}
				if from == noMember || s.betterMove(m, i, d, from, to) {
					from, to = i, d
				}
			}
			if from == noMember {
				continue
			}
			owned[m] = slices.DeleteFunc(owned[m], func(i int32) bool { return i == from })
			owned[to] = append(owned[to], from)
			s.owner[from] = to
			s.count[m]--
			s.count[to]++
			moved = true
			break
		}
		if !moved {
			return owned
		}
	}
}

// betterMove reports whether moving partition i of m to d beats moving j to e.
func (s *stickyState) betterMove(m, i, d, j, e int32) bool {
	if s.count[d] != s.count[e] {
		return s.count[d] < s.count[e]
	}
	iKept, jKept := s.kept[i] == m, s.kept[j] == m
	if iKept != jKept {
		return !iKept
	}
	return i > j
}
