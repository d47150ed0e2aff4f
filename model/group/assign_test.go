package group_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mqsim/model/group"
	"mqsim/model/proto"
)

// assignParts lists every partition of the topics in spec, "t0:3 t1:2".
func assignParts(spec string) []proto.TP {
	var out []proto.TP
	for _, f := range strings.Fields(spec) {
		topic, n, _ := strings.Cut(f, ":")
		count, err := strconv.Atoi(n)
		if err != nil {
			panic(err)
		}
		for p := range count {
			out = append(out, proto.TP{Topic: topic, Partition: int32(p)})
		}
	}
	return out
}

// assignTPs reads partitions written "t0/1 t2/0".
func assignTPs(spec string) []proto.TP {
	var out []proto.TP
	for _, f := range strings.Fields(spec) {
		topic, n, _ := strings.Cut(f, "/")
		p, err := strconv.Atoi(n)
		if err != nil {
			panic(err)
		}
		out = append(out, proto.TP{Topic: topic, Partition: int32(p)})
	}
	return out
}

// assignMember builds a member: id, subscribed topics "t0 t1", owned partitions "t0/1".
func assignMember(id, topics, owned string) group.Member {
	return group.Member{ID: id, Topics: strings.Fields(topics), Owned: assignTPs(owned)}
}

// renderAssignment prints an assignment in member-id order: "C0: t0/0 t0/1 | C1: t0/2".
func renderAssignment(a group.Assignment) string {
	ids := make([]string, 0, len(a))
	for id := range a {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for k, id := range ids {
		if k > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(id + ":")
		for _, tp := range a[id] {
			fmt.Fprintf(&b, " %s", tp)
		}
	}
	return b.String()
}

// The examples of the assignors' javadoc and of the reference's C6 and C9.
func TestAssignorExamples(t *testing.T) {
	two := []group.Member{assignMember("C0", "t0 t1", ""), assignMember("C1", "t0 t1", "")}
	// StickyAssignor javadoc, example 1: three members, four topics of two partitions.
	ex1 := []group.Member{assignMember("C0", "t0 t1 t2 t3", ""), assignMember("C1", "t0 t1 t2 t3", ""),
		assignMember("C2", "t0 t1 t2 t3", "")}
	ex1Parts := assignParts("t0:2 t1:2 t2:2 t3:2")
	ex1After := []group.Member{ // C1 left
		assignMember("C0", "t0 t1 t2 t3", "t0/0 t1/1 t3/0"),
		assignMember("C2", "t0 t1 t2 t3", "t1/0 t2/1")}
	// Example 2: unequal subscriptions, topics of 1, 2 and 3 partitions.
	ex2 := []group.Member{assignMember("C0", "t0", ""), assignMember("C1", "t0 t1", ""),
		assignMember("C2", "t0 t1 t2", "")}
	ex2Parts := assignParts("t0:1 t1:2 t2:3")
	ex2After := []group.Member{ // C0 left
		assignMember("C1", "t0 t1", "t1/0 t1/1"), assignMember("C2", "t0 t1 t2", "t2/0 t2/1 t2/2")}
	// C6: three members own two partitions each; C4 joins.
	c6 := []group.Member{assignMember("C1", "t", "t/0 t/1"), assignMember("C2", "t", "t/2 t/3"),
		assignMember("C3", "t", "t/4 t/5"), assignMember("C4", "t", "")}
	// Unequal subscriptions: balancing gives C0 a third partition (t/0, from C1); of its
	// three, C0 passes on u/2, which it got only in this round, not u/0, which it owned.
	moves := []group.Member{assignMember("C0", "t u", "u/0 v/1 v/2"), assignMember("C1", "t v", "t/0 u/1 v/2"),
		assignMember("C2", "u", "u/1 v/0")}
	// C9: two members, three topics of one partition.
	c9 := []group.Member{assignMember("C0", "t0 t1 t2", ""), assignMember("C1", "t0 t1 t2", "")}
	c9Parts := assignParts("t0:1 t1:1 t2:1")

	for _, c := range []struct {
		name     string
		assignor string
		members  []group.Member
		parts    []proto.TP
		want     string
	}{
		{"range 2x3", "range", two, assignParts("t0:3 t1:3"), "C0: t0/0 t0/1 t1/0 t1/1 | C1: t0/2 t1/2"},
		{"roundrobin 2x3", "roundrobin", two, assignParts("t0:3 t1:3"), "C0: t0/0 t0/2 t1/1 | C1: t0/1 t1/0 t1/2"},
		{"range uneven", "range", two, assignParts("t0:5"), "C0: t0/0 t0/1 t0/2 | C1: t0/3 t0/4"},
		{"C9 range", "range", c9, c9Parts, "C0: t0/0 t1/0 t2/0 | C1:"},
		{"C9 roundrobin", "roundrobin", c9, c9Parts, "C0: t0/0 t2/0 | C1: t1/0"},
		{"C9 sticky", "sticky", c9, c9Parts, "C0: t0/0 t2/0 | C1: t1/0"},
		{"roundrobin unequal", "roundrobin", ex2, ex2Parts, "C0: t0/0 | C1: t1/0 | C2: t1/1 t2/0 t2/1 t2/2"},
		{"range unequal", "range", ex2, ex2Parts, "C0: t0/0 | C1: t1/0 | C2: t1/1 t2/0 t2/1 t2/2"},
		{"sticky ex1", "sticky", ex1, ex1Parts, "C0: t0/0 t1/1 t3/0 | C1: t0/1 t2/0 t3/1 | C2: t1/0 t2/1"},
		{"sticky ex1, C1 left", "sticky", ex1After, ex1Parts, "C0: t0/0 t1/1 t2/0 t3/0 | C2: t0/1 t1/0 t2/1 t3/1"},
		{"roundrobin ex1, C1 left", "roundrobin", ex1After, ex1Parts, "C0: t0/0 t1/0 t2/0 t3/0 | C2: t0/1 t1/1 t2/1 t3/1"},
		{"sticky ex2", "sticky", ex2, ex2Parts, "C0: t0/0 | C1: t1/0 t1/1 | C2: t2/0 t2/1 t2/2"},
		{"sticky ex2, C0 left", "sticky", ex2After, ex2Parts, "C1: t0/0 t1/0 t1/1 | C2: t2/0 t2/1 t2/2"},
		// One partition moves (6 over 4 members: 2, 2, 1, 1), the highest of the first member.
		{"C6 sticky", "sticky", c6, assignParts("t:6"), "C1: t/0 | C2: t/2 t/3 | C3: t/4 t/5 | C4: t/1"},
		{"C6 cooperative-sticky", "cooperative-sticky", c6, assignParts("t:6"), "C1: t/0 | C2: t/2 t/3 | C3: t/4 t/5 | C4: t/1"},
		{"sticky prefers moving unowned", "sticky", moves, assignParts("t:1 u:3 v:3"), "C0: t/0 u/0 | C1: v/0 v/1 v/2 | C2: u/1 u/2"},
		{"C6 range", "range", c6, assignParts("t:6"), "C1: t/0 t/1 | C2: t/2 t/3 | C3: t/4 | C4: t/5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := group.AssignorByName(c.assignor)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderAssignment(a.Assign(c.members, c.parts)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// Kafka orders static members first, by instance id, then dynamic ones by member id
// (AbstractPartitionAssignorTest's cases); range and roundrobin follow that order.
func TestStaticMembersOrderedByInstanceID(t *testing.T) {
	static := func(id, inst string) group.Member {
		m := assignMember(id, "t", "")
		m.InstanceID = inst
		return m
	}
	for _, c := range []struct {
		members []group.Member
		want    string
	}{
		{[]group.Member{static("a", ""), static("b", ""), static("c", "")}, "a: t/0 | b: t/1 | c: t/2"},
		{[]group.Member{static("a", "y"), static("b", "z"), static("c", "x")}, "a: t/1 | b: t/2 | c: t/0"},
		{[]group.Member{static("a", ""), static("b", "y"), static("c", "x")}, "a: t/2 | b: t/1 | c: t/0"},
	} {
		for _, a := range []group.Assignor{group.RangeAssignor{}, group.RoundRobinAssignor{}} {
			if got := renderAssignment(a.Assign(c.members, assignParts("t:3"))); got != c.want {
				t.Errorf("%s: got %s, want %s", a.Name(), got, c.want)
			}
		}
	}
}

// Two members claiming one partition (a missed rebalance): one keeps it, the partition is
// assigned once, and the group stays balanced.
func TestStickyDoubleClaim(t *testing.T) {
	members := []group.Member{
		assignMember("C0", "t", "t/0 t/1"),
		assignMember("C1", "t", "t/1 t/2"),
		assignMember("C2", "t", ""),
	}
	got := renderAssignment(group.StickyAssignor{}.Assign(members, assignParts("t:3")))
	if want := "C0: t/0 | C1: t/2 | C2: t/1"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Owned partitions that no longer exist, or of topics no longer subscribed, are dropped;
// duplicates in the input count once; every member gets an entry.
func TestStickyIgnoresStaleOwnership(t *testing.T) {
	members := []group.Member{
		assignMember("C0", "t", "t/0 t/0 t/7 gone/0 u/0"),
		assignMember("C1", "t u", "u/0"),
		assignMember("C2", "nothing", "t/1"),
	}
	parts := append(assignParts("t:2 u:1"), assignTPs("t/1 u/0")...)
	got := renderAssignment(group.StickyAssignor{}.Assign(members, parts))
	if want := "C0: t/0 t/1 | C1: u/0 | C2:"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestAssignEdgeCases(t *testing.T) {
	for _, a := range group.Assignors() {
		if got := a.Assign(nil, assignParts("t:3")); len(got) != 0 {
			t.Errorf("%s with no members: %v", a.Name(), got)
		}
		got := a.Assign([]group.Member{assignMember("m", "t", "t/0")}, nil)
		if tps, ok := got["m"]; !ok || tps == nil || len(tps) != 0 {
			t.Errorf("%s with no partitions: %#v, want an empty list for m", a.Name(), got)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: two members with one id did not panic", a.Name())
				}
			}()
			a.Assign([]group.Member{assignMember("m", "t", ""), assignMember("m", "t", "")}, assignParts("t:1"))
		}()
	}
}

func TestAssignorByName(t *testing.T) {
	want := []struct {
		name        string
		cooperative bool
	}{{"range", false}, {"roundrobin", false}, {"sticky", false}, {"cooperative-sticky", true}}
	all := group.Assignors()
	if len(all) != len(want) {
		t.Fatalf("Assignors() has %d, want %d", len(all), len(want))
	}
	for k, w := range want {
		a, err := group.AssignorByName(w.name)
		if err != nil {
			t.Fatal(err)
		}
		if a.Name() != w.name || a.Cooperative() != w.cooperative || all[k].Name() != w.name {
			t.Errorf("%s: got %s cooperative=%v (Assignors()[%d] = %s)", w.name, a.Name(), a.Cooperative(), k, all[k].Name())
		}
	}
	if _, err := group.AssignorByName("RangeAssignor"); err == nil || !strings.Contains(err.Error(), "cooperative-sticky") {
		t.Errorf("unknown name: err = %v, want one listing the known names", err)
	}
}

func ExampleRangeAssignor() {
	members := []group.Member{
		{ID: "C0", Topics: []string{"t0", "t1", "t2"}},
		{ID: "C1", Topics: []string{"t0", "t1", "t2"}},
	}
	parts := []proto.TP{{Topic: "t0"}, {Topic: "t1"}, {Topic: "t2"}}
	for _, a := range []group.Assignor{group.RangeAssignor{}, group.RoundRobinAssignor{}} {
		got := a.Assign(members, parts)
		fmt.Printf("%-10s C0 %v, C1 %v\n", a.Name(), got["C0"], got["C1"])
	}
	// Output:
	// range      C0 [t0/0 t1/0 t2/0], C1 []
	// roundrobin C0 [t0/0 t2/0], C1 [t1/0]
}
