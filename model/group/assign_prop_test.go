package group_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"mqsim/model/group"
	"mqsim/model/proto"
)

// assignCase is a random assignor input.
type assignCase struct {
	members   []group.Member
	parts     []proto.TP
	identical bool // every member has the same subscriptions
	disjoint  bool // Owned is a previous assignment: no partition owned twice
}

var assignTopics = []string{"t0", "t1", "t2", "t3"}

// drawAssignCase draws members (some static), topics with 0 to 7 partitions (some listed
// twice), subscriptions (identical or not, sometimes to topics that do not exist) and
// previous ownership: none, a previous assignment (including members that left and
// partitions that are gone), or random claims with overlaps.
func drawAssignCase(t *rapid.T) assignCase {
	var c assignCase
	for _, topic := range assignTopics {
		n := rapid.IntRange(0, 7).Draw(t, "partitions")
		for p := range n {
			c.parts = append(c.parts, proto.TP{Topic: topic, Partition: int32(p)})
		}
	}
	if len(c.parts) > 0 && rapid.Bool().Draw(t, "duplicates") {
		c.parts = append(c.parts, c.parts[rapid.IntRange(0, len(c.parts)-1).Draw(t, "dup")])
	}
	pool := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	ids := rapid.Permutation(pool).Draw(t, "ids")[:rapid.IntRange(0, 8).Draw(t, "members")]
	subscription := func() []string {
		var s []string
		for _, topic := range append(assignTopics, "missing") {
			if rapid.Bool().Draw(t, "subscribes") {
				s = append(s, topic)
			}
		}
		return s
	}
	c.identical = rapid.Bool().Draw(t, "identical")
	shared := subscription()
	for _, id := range ids {
		m := group.Member{ID: id, Topics: shared}
		if !c.identical {
			m.Topics = subscription()
		}
		if rapid.IntRange(0, 3).Draw(t, "static") == 0 {
			m.InstanceID = "i-" + rapid.SampledFrom(pool).Draw(t, "instance")
		}
		c.members = append(c.members, m)
	}
	// Previous owners: the members, two that left, and nobody.
	owners := append(slices.Clone(ids), "gone1", "gone2", "")
	universe := append(slices.Clone(c.parts), proto.TP{Topic: "t0", Partition: 9}, proto.TP{Topic: "old", Partition: 0})
	switch rapid.IntRange(0, 2).Draw(t, "ownership") {
	case 1:
		c.disjoint = true
		claimed := map[proto.TP]bool{}
		for _, tp := range universe {
			if claimed[tp] {
				continue
			}
			claimed[tp] = true
			owner := rapid.SampledFrom(owners).Draw(t, "owner")
			for k := range c.members {
				if c.members[k].ID == owner {
					c.members[k].Owned = append(c.members[k].Owned, tp)
				}
			}
		}
	case 2:
		for k := range c.members {
			for range rapid.IntRange(0, 6).Draw(t, "claims") {
				c.members[k].Owned = append(c.members[k].Owned, rapid.SampledFrom(universe).Draw(t, "claim"))
			}
		}
	}
	return c
}

// shuffled is c with members, their topics and owned partitions, and the partitions in
// another order.
func (c assignCase) shuffled(t *rapid.T) ([]group.Member, []proto.TP) {
	members := rapid.Permutation(c.members).Draw(t, "member order")
	for k := range members {
		members[k].Topics = rapid.Permutation(members[k].Topics).Draw(t, "topic order")
		members[k].Owned = rapid.Permutation(members[k].Owned).Draw(t, "owned order")
	}
	return members, rapid.Permutation(c.parts).Draw(t, "partition order")
}

// eligible reports whether m may own tp: tp exists and m subscribes to its topic.
func (c assignCase) eligible(m group.Member, tp proto.TP) bool {
	return slices.Contains(c.parts, tp) && slices.Contains(m.Topics, tp.Topic)
}

// checkValid: every member has an entry with sorted partitions it subscribes to; every
// partition of a topic someone subscribes to is assigned exactly once; nothing else is.
func checkValid(t *rapid.T, name string, c assignCase, a group.Assignment) {
	if len(a) != len(c.members) {
		t.Fatalf("%s: %d entries for %d members", name, len(a), len(c.members))
	}
	owner := map[proto.TP]string{}
	for _, m := range c.members {
		tps, ok := a[m.ID]
		if !ok || tps == nil {
			t.Fatalf("%s: no entry for %s", name, m.ID)
		}
		if !slices.IsSortedFunc(tps, func(x, y proto.TP) int { return assignCmp(x, y) }) {
			t.Fatalf("%s: %s's partitions not sorted: %v", name, m.ID, tps)
		}
		for _, tp := range tps {
			if !c.eligible(m, tp) {
				t.Fatalf("%s: %s got %s (exists %v, topics %v)", name, m.ID, tp, slices.Contains(c.parts, tp), m.Topics)
			}
			if prev, dup := owner[tp]; dup {
				t.Fatalf("%s: %s assigned to %s and %s", name, tp, prev, m.ID)
			}
			owner[tp] = m.ID
		}
	}
	for _, tp := range c.parts {
		subscribed := slices.ContainsFunc(c.members, func(m group.Member) bool { return slices.Contains(m.Topics, tp.Topic) })
		if _, ok := owner[tp]; ok != subscribed {
			t.Fatalf("%s: %s assigned=%v, subscribed=%v", name, tp, ok, subscribed)
		}
	}
}

func assignCmp(x, y proto.TP) int {
	switch {
	case x.Less(y):
		return -1
	case y.Less(x):
		return 1
	}
	return 0
}

// checkLocallyBalanced: no partition could move to another subscriber of its topic with at
// least two partitions fewer; in particular members with the same subscriptions differ by
// at most one.
func checkLocallyBalanced(t *rapid.T, name string, c assignCase, a group.Assignment) {
	for _, m := range c.members {
		for _, tp := range a[m.ID] {
			for _, o := range c.members {
				if o.ID != m.ID && c.eligible(o, tp) && len(a[m.ID]) >= len(a[o.ID])+2 {
					t.Fatalf("%s: %s (%d partitions) could give %s to %s (%d)", name, m.ID, len(a[m.ID]), tp, o.ID, len(a[o.ID]))
				}
			}
		}
	}
	for _, m := range c.members {
		for _, o := range c.members {
			if sameTopics(c, m, o) && len(a[m.ID]) > len(a[o.ID])+1 {
				t.Fatalf("%s: %s and %s subscribe alike but have %d and %d", name, m.ID, o.ID, len(a[m.ID]), len(a[o.ID]))
			}
		}
	}
}

// sameTopics reports whether m and o subscribe to the same existing topics.
func sameTopics(c assignCase, m, o group.Member) bool {
	for _, topic := range assignTopics {
		has := slices.ContainsFunc(c.parts, func(tp proto.TP) bool { return tp.Topic == topic })
		if has && slices.Contains(m.Topics, topic) != slices.Contains(o.Topics, topic) {
			return false
		}
	}
	return true
}

func countSpread(a group.Assignment) int {
	lo, hi := -1, 0
	for _, tps := range a {
		if lo < 0 || len(tps) < lo {
			lo = len(tps)
		}
		hi = max(hi, len(tps))
	}
	return hi - max(lo, 0)
}

// lost counts the partitions each member validly owned before and does not have now.
func lost(c assignCase, a group.Assignment) int {
	n := 0
	for _, m := range c.members {
		for _, tp := range uniqueTPs(m.Owned) {
			if c.eligible(m, tp) && !slices.Contains(a[m.ID], tp) {
				n++
			}
		}
	}
	return n
}

func uniqueTPs(tps []proto.TP) []proto.TP {
	out := slices.Clone(tps)
	slices.SortFunc(out, assignCmp)
	return slices.Compact(out)
}

// lostMin is the fewest previously owned partitions any balanced assignment must take away
// when subscriptions are identical and ownership disjoint: of N assignable partitions over
// C members, N mod C members hold ⌈N/C⌉ and the rest ⌊N/C⌋; best, the members that owned
// the most get the larger share, and each member loses what it owned above its share.
func lostMin(c assignCase) int {
	assignable := map[proto.TP]bool{}
	var owned []int
	for _, m := range c.members {
		k := 0
		for _, tp := range uniqueTPs(m.Owned) {
			if c.eligible(m, tp) {
				k++
			}
		}
		owned = append(owned, k)
		for _, tp := range c.parts {
			if slices.Contains(m.Topics, tp.Topic) {
				assignable[tp] = true
			}
		}
	}
	if len(owned) == 0 {
		return 0
	}
	slices.Sort(owned)
	slices.Reverse(owned)
	q, r := len(assignable)/len(owned), len(assignable)%len(owned)
	n := 0
	for k, o := range owned {
		share := q
		if k < r {
			share++
		}
		n += max(0, o-share)
	}
	return n
}

func TestAssignorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawAssignCase(t)
		var stickyResult group.Assignment
		for _, asg := range group.Assignors() {
			name := asg.Name()
			a := asg.Assign(c.members, c.parts)
			checkValid(t, name, c, a)

			members, parts := c.shuffled(t)
			if again := asg.Assign(members, parts); !reflect.DeepEqual(a, again) {
				t.Fatalf("%s: another input order gives another result:\n%s\n%s", name, renderAssignment(a), renderAssignment(again))
			}

			if c.identical && name != "range" && countSpread(a) > 1 {
				t.Fatalf("%s: identical subscriptions but unbalanced: %s", name, renderAssignment(a))
			}
			switch name {
			case "sticky":
				stickyResult = a
				checkLocallyBalanced(t, name, c, a)
				if c.identical && c.disjoint {
					if got, want := lost(c, a), lostMin(c); got != want {
						t.Fatalf("sticky took %d owned partitions away, the least possible is %d:\n%s", got, want, renderAssignment(a))
					}
				}
			case "cooperative-sticky":
				if !reflect.DeepEqual(a, stickyResult) {
					t.Fatalf("cooperative-sticky differs from sticky:\n%s\n%s", renderAssignment(a), renderAssignment(stickyResult))
				}
			}
		}

		// Sticky is a fixed point: handing it its own result as ownership changes nothing.
		again := slices.Clone(c.members)
		for k := range again {
			again[k].Owned = stickyResult[again[k].ID]
		}
		if next := (group.StickyAssignor{}).Assign(again, c.parts); !reflect.DeepEqual(next, stickyResult) {
			t.Fatalf("sticky moved partitions with nothing changed:\n%s\n%s", renderAssignment(stickyResult), renderAssignment(next))
		}
	})
}

// TestStickyMemberJoinsOrLeaves: from a sticky assignment with identical subscriptions,
// when a member leaves no partition moves between the others; when one joins, only the
// partitions it needs move, all to it.
func TestStickyMemberJoinsOrLeaves(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 9).Draw(t, "members")
		topics := []string{"t0", "t1", "t2"}
		var parts []proto.TP
		for _, topic := range topics {
			for p := range rapid.IntRange(0, 12).Draw(t, "partitions") {
				parts = append(parts, proto.TP{Topic: topic, Partition: int32(p)})
			}
		}
		var members []group.Member
		for k := range n {
			members = append(members, group.Member{ID: fmt.Sprintf("m%d", k), Topics: topics})
		}
		before := group.StickyAssignor{}.Assign(members, parts)
		for k := range members {
			members[k].Owned = before[members[k].ID]
		}

		// One leaves.
		gone := rapid.IntRange(0, n-1).Draw(t, "leaves")
		rest := slices.Delete(slices.Clone(members), gone, gone+1)
		after := group.StickyAssignor{}.Assign(rest, parts)
		for _, m := range rest {
			for _, tp := range m.Owned {
				if !slices.Contains(after[m.ID], tp) {
					t.Fatalf("%s left; %s moved away from %s:\n%s\n%s", members[gone].ID, tp, m.ID, renderAssignment(before), renderAssignment(after))
				}
			}
		}
		if countSpread(after) > 1 {
			t.Fatalf("unbalanced after a leave: %s", renderAssignment(after))
		}

		// One joins.
		joined := append(slices.Clone(members), group.Member{ID: "new", Topics: topics})
		after = group.StickyAssignor{}.Assign(joined, parts)
		c := assignCase{members: joined, parts: parts, identical: true, disjoint: true}
		moved := lost(c, after)
		if moved != lostMin(c) || moved != len(after["new"]) || countSpread(after) > 1 {
			t.Fatalf("join: %d moved, least possible %d, new member has %d:\n%s\n%s",
				moved, lostMin(c), len(after["new"]), renderAssignment(before), renderAssignment(after))
		}
	})
}
