package group

import (
	"slices"
	"strings"

	"mqsim/model/proto"
)

// The share groups' server-side assignor, "simple" (group.share.assignors; Kafka 4.2's
// group-coordinator/.../assignor/SimpleAssignor.java with its homogeneous and heterogeneous
// builders, as /work/shared/reference/kafka4.md 1.9 describes them: the 2024 source
// snapshot still gave every member every partition). Balance first, then stickiness:
//
//   - members no more than partitions: each partition goes to exactly one member, and the
//     members' partition counts differ by at most one;
//   - more members than partitions: each member gets exactly one partition, and the
//     partitions' member counts differ by at most one (partitions are shared).
//
// Both are one rule: the larger side's elements each get one element of the smaller side,
// and the smaller side's loads differ by at most one. Stickiness: an element keeps what it
// had in the previous target when that leaves room for balance; the rest go to the least
// loaded. When every member subscribes to the same topics the whole group is one problem;
// otherwise each topic is assigned among the members that subscribe to it.

// SimpleAssignorName is the share groups' only server assignor.
const SimpleAssignorName = "simple"

// ShareMemberSpec is one share-group member as the simple assignor sees it.
type ShareMemberSpec struct {
	ID     string
	Topics []string
	// Previous is its part of the previous target assignment (what stickiness keeps).
	Previous []proto.TP
}

// SimpleAssign computes a share group's target assignment. partitions is every partition
// of every subscribed topic; the result lists every member (some maybe with nothing), its
// partitions sorted.
func SimpleAssign(members []ShareMemberSpec, partitions []proto.TP) map[string][]proto.TP {
	out := make(map[string][]proto.TP, len(members))
	ms := slices.Clone(members)
	slices.SortFunc(ms, func(a, b ShareMemberSpec) int { return strings.Compare(a.ID, b.ID) })
	for _, m := range ms {
		out[m.ID] = nil
	}
	parts := slices.Clone(partitions)
	slices.SortFunc(parts, proto.CompareTP)
	parts = slices.Compact(parts)
	if homogeneous(ms) {
		var pool []proto.TP
		for _, tp := range parts {
			if len(ms) > 0 && slices.Contains(ms[0].Topics, tp.Topic) {
				pool = append(pool, tp)
			}
		}
		simplePool(ms, pool, out)
	} else {
		var topics []string
		for _, tp := range parts {
			if !slices.Contains(topics, tp.Topic) {
				topics = append(topics, tp.Topic)
			}
		}
		for _, t := range topics {
			var sub []ShareMemberSpec
			for _, m := range ms {
				if slices.Contains(m.Topics, t) {
					sub = append(sub, m)
				}
			}
			var pool []proto.TP
			for _, tp := range parts {
				if tp.Topic == t {
					pool = append(pool, tp)
				}
			}
			simplePool(sub, pool, out)
		}
	}
	for id := range out {
		slices.SortFunc(out[id], proto.CompareTP)
	}
	return out
}

func homogeneous(ms []ShareMemberSpec) bool {
	for _, m := range ms[min(1, len(ms)):] {
		a, b := slices.Clone(m.Topics), slices.Clone(ms[0].Topics)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
			return false
		}
	}
	return true
}

// simplePool assigns one pool of partitions among members (sorted by id), adding to out.
func simplePool(ms []ShareMemberSpec, parts []proto.TP, out map[string][]proto.TP) {
	if len(ms) == 0 || len(parts) == 0 {
		return
	}
	// prev[i][j]: element i of the larger side had element j of the smaller side.
	had := func(m ShareMemberSpec, tp proto.TP) bool { return slices.Contains(m.Previous, tp) }
	if len(ms) <= len(parts) {
		pick := quotaPairs(len(parts), len(ms), func(p, m int) bool { return had(ms[m], parts[p]) })
		for p, m := range pick {
			out[ms[m].ID] = append(out[ms[m].ID], parts[p])
		}
		return
	}
	pick := quotaPairs(len(ms), len(parts), func(m, p int) bool { return had(ms[m], parts[p]) })
	for m, p := range pick {
		out[ms[m].ID] = append(out[ms[m].ID], parts[p])
	}
}

// quotaPairs gives each of the large elements one of the small ones (large >= small > 0),
// so that the small ones' loads are large/small or one more. Stickiness first: in order,
// a large element keeps the first small one it had while that one has room (only
// large%small of them may take the extra one); then the rest go, in order, to the least
// loaded small element (the first of those).
func quotaPairs(large, small int, had func(l, s int) bool) []int {
	base, extra := large/small, large%small
	load := make([]int, small)
	pick := make([]int, large)
	for l := range pick {
		pick[l] = -1
		for s := range small {
			if !had(l, s) {
				continue
			}
			if load[s] < base || (load[s] == base && extra > 0) {
				if load[s] == base {
					extra--
				}
				load[s]++
				pick[l] = s
				break
			}
		}
	}
	for l := range pick {
		if pick[l] >= 0 {
			continue
		}
		least := 0
		for s := 1; s < small; s++ {
			if load[s] < load[least] {
				least = s
			}
		}
		load[least]++
		pick[l] = least
	}
	return pick
}
