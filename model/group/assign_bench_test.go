package group_test

import (
	"fmt"
	"testing"

	"mqsim/model/group"
	"mqsim/model/proto"
)

// assignBenchGroup is 100 members subscribed to 10 topics of 100 partitions (1,000
// partitions), owning nothing.
func assignBenchGroup() ([]group.Member, []proto.TP) {
	var topics []string
	var parts []proto.TP
	for k := range 10 {
		topic := fmt.Sprintf("topic-%02d", k)
		topics = append(topics, topic)
		for p := range 100 {
			parts = append(parts, proto.TP{Topic: topic, Partition: int32(p)})
		}
	}
	members := make([]group.Member, 100)
	for k := range members {
		members[k] = group.Member{ID: fmt.Sprintf("consumer-%03d", k), Topics: topics}
	}
	return members, parts
}

// BenchmarkAssign runs each assignor on 100 members × 1,000 partitions: a fresh group, and
// (for the sticky ones) a rebalance after a member joined and after one left, from the
// previous sticky assignment.
func BenchmarkAssign(b *testing.B) {
	members, parts := assignBenchGroup()
	previous := group.StickyAssignor{}.Assign(members[:99], parts)
	joined := make([]group.Member, len(members))
	for k, m := range members {
		m.Owned = previous[m.ID]
		joined[k] = m
	}
	left := joined[1:99]
	for _, a := range group.Assignors() {
		cases := []struct {
			name    string
			members []group.Member
		}{{"fresh", members}}
		if a.Name() == "sticky" || a.Name() == "cooperative-sticky" {
			cases = append(cases, struct {
				name    string
				members []group.Member
			}{"join", joined}, struct {
				name    string
				members []group.Member
			}{"leave", left})
		}
		for _, c := range cases {
			b.Run(a.Name()+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					a.Assign(c.members, parts)
				}
			})
		}
	}
}
