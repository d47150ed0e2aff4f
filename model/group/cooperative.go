package group

import (
	"slices"

	"mqsim/model/proto"
)

// RevokeFirst applies the rule of the incremental cooperative protocol (KIP-429) to an
// assignment: a partition that some other member owns now is left out of this round, so
// that its owner revokes it first; the owner then rejoins, and the follow-up rebalance
// hands the partition over. Without the rule, the new owner starts on a partition the old
// owner is still processing: double ownership. It returns the adjusted assignment (a new
// map) and the partitions held back, sorted.
func RevokeFirst(a Assignment, members []Member) (Assignment, []proto.TP) {
	owners := map[proto.TP][]string{}
	for _, m := range members {
		for _, tp := range m.Owned {
			owners[tp] = append(owners[tp], m.ID)
		}
	}
	out := Assignment{}
	var held []proto.TP
	for _, m := range members {
		for _, tp := range a[m.ID] {
			if slices.ContainsFunc(owners[tp], func(id string) bool { return id != m.ID }) {
				held = append(held, tp)
				continue
			}
			out[m.ID] = append(out[m.ID], tp)
		}
	}
	slices.SortFunc(held, proto.CompareTP)
	return out, held
}
