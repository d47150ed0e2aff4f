package group

import (
	"encoding/json"
	"slices"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Share groups (KIP-932; Kafka's modern/share/ShareGroup.java, ShareGroupMember.java and
// GroupMetadataManager.shareGroupHeartbeat): the group coordinator keeps the membership and
// the assignment of a share group; the records themselves are handed out by the
// share-partition leaders. The epochs are those of a consumer-protocol group (group epoch,
// target assignment epoch, member epoch), without the reconciliation: a share member
// holds no partition exclusively, so nothing has to be revoked before another member gets
// it, and a member jumps straight to its part of the new target and its epoch
// (ShareGroupAssignmentBuilder.build). The target comes from the simple assignor
// (assign_simple.go), in which members may outnumber partitions and share them.
//
// Simplifications: one record holds the group's whole share state (as for
// consumer-protocol groups, consumer_group.go); no InitializeShareGroupState (the
// share-partition leader initializes a share-partition it finds no state for); no group
// size limit (group.share.max.size).

// ShareGroup is the share-group state of a group (Group.Share).
type ShareGroup struct {
	// Epoch is the group epoch; AssignmentEpoch the epoch of the target assignment.
	Epoch           int32
	AssignmentEpoch int32
	// Rebalances counts the target assignments computed.
	Rebalances int
	members    []*ShareMember // in join order
	metadata   []TopicSize    // the subscribed topics' sizes the target was computed for
}

// ShareMember is one share-group member at the coordinator.
type ShareMember struct {
	ID, ClientID string
	Client       sim.NodeID
	// Epoch is the member epoch; PreviousEpoch the one before, which a heartbeat whose
	// answer was lost may still carry.
	Epoch, PreviousEpoch int32
	Subscribed           []string
	// Assigned is the member's part of the target assignment: it may fetch from these.
	Assigned []proto.TP

	session    sim.TimerID
	sessionKey int64
}

// Members lists the members in join order.
func (sg *ShareGroup) Members() []*ShareMember { return sg.members }

// Member finds a member by id.
func (sg *ShareGroup) Member(id string) *ShareMember {
	for _, m := range sg.members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// StateName is the group's state as Kafka's ShareGroup.ShareGroupState names it: Empty or
// Stable (a share group has no assigning or reconciling state: nothing waits for members).
func (sg *ShareGroup) StateName() string {
	if len(sg.members) == 0 {
		return "Empty"
	}
	return "Stable"
}

// updateTarget runs the simple assignor for the group epoch: every member's Assigned is
// its part of the new target (the member learns it at its next heartbeat).
func (sg *ShareGroup) updateTarget() {
	var specs []ShareMemberSpec
	var parts []proto.TP
	for _, md := range sg.metadata {
		for p := range md.Partitions {
			parts = append(parts, proto.TP{Topic: md.Topic, Partition: int32(p)})
		}
	}
	for _, m := range sg.members {
		specs = append(specs, ShareMemberSpec{ID: m.ID, Topics: m.Subscribed, Previous: m.Assigned})
	}
	target := SimpleAssign(specs, parts)
	for _, m := range sg.members {
		m.Assigned = target[m.ID]
	}
	sg.AssignmentEpoch = sg.Epoch
	sg.Rebalances++
}

// subscribedMetadata is the partition count of every topic a member subscribes to.
func (sg *ShareGroup) subscribedMetadata(topicPartitions func(string) int) []TopicSize {
	subs := make([][]string, len(sg.members))
	for i, m := range sg.members {
		subs[i] = m.Subscribed
	}
	return topicSizes(subs, topicPartitions)
}

func (sg *ShareGroup) targets() []MemberAssignment {
	out := make([]MemberAssignment, len(sg.members))
	for i, m := range sg.members {
		out[i] = MemberAssignment{Member: m.ID, Partitions: slices.Clone(m.Assigned)}
	}
	return out
}

// --- records ---

// shareGroupKey is ["share-group", group]: the group's whole share state in one record
// (Kafka writes ShareGroupMetadata, ShareGroupMemberMetadata and target assignment
// records one per concern).
func shareGroupKey(group string) []byte {
	b, _ := json.Marshal([]any{"share-group", group})
	return b
}

type shareGroupRecord struct {
	Epoch           int32               `json:"epoch"`
	AssignmentEpoch int32               `json:"assignment_epoch"`
	NextMember      int                 `json:"next_member"`
	Rebalances      int                 `json:"rebalances"`
	Metadata        []TopicSize         `json:"metadata,omitempty"`
	Members         []shareMemberRecord `json:"members,omitempty"`
}

type shareMemberRecord struct {
	ID            string     `json:"id"`
	ClientID      string     `json:"client"`
	Epoch         int32      `json:"epoch"`
	PreviousEpoch int32      `json:"previous_epoch"`
	Subscribed    []string   `json:"topics"`
	Assigned      []proto.TP `json:"assigned"`
}

func encodeShareGroup(g *Group) wal.Record {
	sg := g.Share
	rec := shareGroupRecord{Epoch: sg.Epoch, AssignmentEpoch: sg.AssignmentEpoch, NextMember: g.nextMember,
		Rebalances: sg.Rebalances, Metadata: slices.Clone(sg.metadata)}
	for _, m := range sg.members {
		rec.Members = append(rec.Members, shareMemberRecord{ID: m.ID, ClientID: m.ClientID, Epoch: m.Epoch,
			PreviousEpoch: m.PreviousEpoch, Subscribed: slices.Clone(m.Subscribed), Assigned: slices.Clone(m.Assigned)})
	}
	v, _ := json.Marshal(rec)
	return wal.Record{Key: shareGroupKey(g.ID), Value: v}
}

// applyShareGroup rebuilds a group's share state from its latest record.
func (g *Group) applyShareGroup(r *shareGroupRecord) {
	sg := &ShareGroup{Epoch: r.Epoch, AssignmentEpoch: r.AssignmentEpoch, Rebalances: r.Rebalances, metadata: r.Metadata}
	for _, m := range r.Members {
		sg.members = append(sg.members, &ShareMember{ID: m.ID, ClientID: m.ClientID, Client: -1, Epoch: m.Epoch,
			PreviousEpoch: m.PreviousEpoch, Subscribed: m.Subscribed, Assigned: m.Assigned})
	}
	g.Share = sg
	g.nextMember = max(g.nextMember, r.NextMember)
}
