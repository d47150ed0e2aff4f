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

func tpsOf(topic string, n int) []proto.TP {
	var out []proto.TP
	for p := range n {
		out = append(out, proto.TP{Topic: topic, Partition: int32(p)})
	}
	return out
}

// Tiny cases with exact answers: fewer members than partitions (each partition once,
// counts 2/1), more members than partitions (each member once, partitions shared 2/1),
// and stickiness when a member joins.
func TestSimpleAssignExact(t *testing.T) {
	parts := tpsOf("t", 3)
	sub := []string{"t"}
	got := group.SimpleAssign([]group.ShareMemberSpec{{ID: "b", Topics: sub}, {ID: "a", Topics: sub}}, parts)
	want := map[string][]proto.TP{"a": {parts[0], parts[2]}, "b": {parts[1]}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("two members, three partitions: got %v, want %v", got, want)
	}
	// c joins: a keeps t/0 and gives t/2 up, to c; b keeps t/1.
	got = group.SimpleAssign([]group.ShareMemberSpec{{ID: "a", Topics: sub, Previous: want["a"]}, {ID: "b", Topics: sub, Previous: want["b"]}, {ID: "c", Topics: sub}}, parts)
	want = map[string][]proto.TP{"a": {parts[0]}, "b": {parts[1]}, "c": {parts[2]}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("c joins: got %v, want %v", got, want)
	}
	// Five members, two partitions: each member one, t/0 shared by three, t/1 by two.
	var five []group.ShareMemberSpec
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		five = append(five, group.ShareMemberSpec{ID: id, Topics: sub})
	}
	got = group.SimpleAssign(five, tpsOf("t", 2))
	want = map[string][]proto.TP{"a": {{Topic: "t"}}, "b": {{Topic: "t", Partition: 1}}, "c": {{Topic: "t"}}, "d": {{Topic: "t", Partition: 1}}, "e": {{Topic: "t"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("five members, two partitions: got %v, want %v", got, want)
	}
	// Different subscriptions: each topic among its subscribers (t: a and b; u: b only).
	got = group.SimpleAssign([]group.ShareMemberSpec{{ID: "a", Topics: []string{"t"}}, {ID: "b", Topics: []string{"t", "u"}}},
		append(tpsOf("t", 2), tpsOf("u", 1)...))
	want = map[string][]proto.TP{"a": {{Topic: "t"}}, "b": {{Topic: "t", Partition: 1}, {Topic: "u"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("different subscriptions: got %v, want %v", got, want)
	}
}

// checkSimpleBalance checks the simple assignor's balance rules for members that all
// subscribe to the topics of parts.
func checkSimpleBalance(t *rapid.T, members []group.ShareMemberSpec, parts []proto.TP, got map[string][]proto.TP) {
	if len(members) == 0 {
		if len(got) != 0 {
			t.Fatalf("no members, got %v", got)
		}
		return
	}
	holders := map[proto.TP]int{}
	for _, m := range members {
		for _, tp := range got[m.ID] {
			holders[tp]++
		}
		if !slices.IsSortedFunc(got[m.ID], proto.CompareTP) {
			t.Fatalf("%s's partitions are not sorted: %v", m.ID, got[m.ID])
		}
	}
	lo, hi := func(xs []int) int { return slices.Min(xs) }, func(xs []int) int { return slices.Max(xs) }
	if len(parts) == 0 {
		return
	}
	perPart := make([]int, len(parts))
	for i, tp := range parts {
		perPart[i] = holders[tp]
		if holders[tp] == 0 {
			t.Fatalf("%s has no member: %v", tp, got)
		}
	}
	perMember := make([]int, len(members))
	for i, m := range members {
		perMember[i] = len(got[m.ID])
	}
	if len(members) <= len(parts) {
		if hi(perPart) != 1 {
			t.Fatalf("%d members, %d partitions: a partition has %d members: %v", len(members), len(parts), hi(perPart), got)
		}
		if hi(perMember)-lo(perMember) > 1 {
			t.Fatalf("partition counts per member %v differ by more than one: %v", perMember, got)
		}
		return
	}
	if lo(perMember) != 1 || hi(perMember) != 1 {
		t.Fatalf("%d members, %d partitions: a member has %v partitions: %v", len(members), len(parts), perMember, got)
	}
	if hi(perPart)-lo(perPart) > 1 {
		t.Fatalf("member counts per partition %v differ by more than one: %v", perPart, got)
	}
}

// The simple assignor, over random groups that all subscribe to the same topics: balance
// (each partition covered; member counts per partition, or partition counts per member,
// differ by at most one), the same answer whatever the members' order, and stickiness: when
// a member joins a balanced group, the old members lose at most ceil(P/M) partitions in all
// while members do not outnumber partitions, and none moves once they already did.
func TestSimpleAssignProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var parts []proto.TP
		topics := []string{"t"}
		parts = append(parts, tpsOf("t", rapid.IntRange(0, 6).Draw(t, "t partitions"))...)
		if rapid.Bool().Draw(t, "two topics") {
			topics = append(topics, "u")
			parts = append(parts, tpsOf("u", rapid.IntRange(1, 4).Draw(t, "u partitions"))...)
		}
		n := rapid.IntRange(0, 9).Draw(t, "members")
		var members []group.ShareMemberSpec
		for i := range n {
			members = append(members, group.ShareMemberSpec{ID: fmt.Sprintf("m%02d", i), Topics: topics})
		}
		first := group.SimpleAssign(members, parts)
		checkSimpleBalance(t, members, parts, first)
		shuffled := rapid.Permutation(members).Draw(t, "order")
		if again := group.SimpleAssign(shuffled, parts); !reflect.DeepEqual(again, first) {
			t.Fatalf("member order changed the answer: %v, then %v", first, again)
		}
		// A member joins (its id sorts anywhere among the others).
		for i := range members {
			members[i].Previous = first[members[i].ID]
		}
		joined := append(slices.Clone(members), group.ShareMemberSpec{ID: fmt.Sprintf("m%02d-new", rapid.IntRange(-1, n).Draw(t, "new after")), Topics: topics})
		second := group.SimpleAssign(joined, parts)
		checkSimpleBalance(t, joined, parts, second)
		lost := 0
		for _, m := range members {
			for _, tp := range first[m.ID] {
				if !slices.Contains(second[m.ID], tp) {
					lost++
				}
			}
		}
		p, m := len(parts), len(joined)
		switch {
		case p == 0:
		case m <= p && lost > (p+m-1)/m:
			t.Fatalf("a join moved %d partitions from old members, more than ceil(%d/%d): %v -> %v", lost, p, m, first, second)
		case m-1 >= p && lost > 0:
			t.Fatalf("a join into a group that already shared its partitions moved %d: %v -> %v", lost, first, second)
		}
	})
}
