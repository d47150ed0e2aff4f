package group

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The consumer-protocol group (KIP-848; Kafka's modern/consumer/ConsumerGroup.java and
// ConsumerGroupMember.java): what the coordinator keeps for a group whose members speak
// ConsumerGroupHeartbeat. Three epochs drive it:
//   - the group epoch moves on whenever the membership or a subscription changes;
//   - the target assignment epoch is the group epoch the assignor last ran for: when the
//     group epoch is ahead, the next heartbeat recomputes the target (consumer_target.go);
//   - each member's epoch moves towards the target epoch one member at a time, as its
//     heartbeats show it revoked what it must give up (consumer_reconcile.go).
// Nothing waits for the whole group: a member that has nothing to give up reaches the new
// epoch at its next heartbeat, whatever the others are doing.

// ConsumerGroup is the consumer-protocol state of a group (Group.Consumer).
type ConsumerGroup struct {
	// Epoch is the group epoch; AssignmentEpoch the epoch of the target assignment.
	Epoch           int32
	AssignmentEpoch int32
	// Assignor is the server-side assignor the group uses: uniform or range.
	Assignor string
	// Rebalances counts the target assignments computed.
	Rebalances int
	members    []*ConsumerMember // in join order
	// metadata is the partition count of every subscribed topic the target was computed
	// for: a change (a topic created or grown) bumps the group epoch.
	metadata []TopicSize
}

// TopicSize is a subscribed topic's partition count.
type TopicSize struct {
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
}

// MemberState is a consumer-protocol member's reconciliation state (Kafka's MemberState).
type MemberState uint8

const (
	// MemberStable: the member has reached the target epoch and holds its assignment.
	MemberStable MemberState = iota
	// MemberUnrevoked: the member must give partitions up first; it stays in its epoch
	// until a heartbeat no longer lists them.
	MemberUnrevoked
	// MemberUnreleased: the member is in the target epoch, but some of its target
	// partitions are still owned by others; it gets them as they are released.
	MemberUnreleased
)

func (s MemberState) String() string {
	switch s {
	case MemberStable:
		return "stable"
	case MemberUnrevoked:
		return "unrevoked-partitions"
	case MemberUnreleased:
		return "unreleased-partitions"
	}
	return fmt.Sprintf("MemberState(%d)", uint8(s))
}

// ConsumerMember is one consumer-protocol member at the coordinator.
type ConsumerMember struct {
	ID, InstanceID, ClientID string
	Client                   sim.NodeID
	// Epoch is the member epoch; PreviousEpoch the one before, which a heartbeat whose
	// answer was lost may still carry.
	Epoch, PreviousEpoch int32
	State                MemberState
	Subscribed           []string
	RebalanceTimeout     time.Duration
	// Assigned are the partitions the member may use now; Revoking those it must give
	// up; Target its part of the target assignment.
	Assigned, Revoking, Target []proto.TP

	session    sim.TimerID
	sessionKey int64
	revoke     sim.TimerID // the rebalance timeout of a pending revocation
	revokeKey  int64
}

// Members lists the members in join order.
func (cg *ConsumerGroup) Members() []*ConsumerMember { return cg.members }

// Member finds a member by id.
func (cg *ConsumerGroup) Member(id string) *ConsumerMember {
	for _, m := range cg.members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (cg *ConsumerGroup) byInstance(inst string) *ConsumerMember {
	if inst == "" {
		return nil
	}
	for _, m := range cg.members {
		if m.InstanceID == inst {
			return m
		}
	}
	return nil
}

// StateName is the group's state as Kafka's ConsumerGroupState names it: Empty,
// Assigning (the target is behind the group epoch), Reconciling (a member has not reached
// the target epoch yet) or Stable.
func (cg *ConsumerGroup) StateName() string {
	switch {
	case len(cg.members) == 0:
		return "Empty"
	case cg.AssignmentEpoch < cg.Epoch:
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.Epoch != cg.AssignmentEpoch || m.State != MemberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// ownedByOthers reports whether a member other than self has tp assigned or still
// revoking it: Kafka's currentPartitionEpoch(tp) != -1.
func (cg *ConsumerGroup) ownedByOthers(self *ConsumerMember, tp proto.TP) bool {
	for _, m := range cg.members {
		if m != self && (slices.Contains(m.Assigned, tp) || slices.Contains(m.Revoking, tp)) {
			return true
		}
	}
	return false
}

// --- records ---

// consumerGroupKey is ["consumer-group", group]. Kafka writes one record per concern
// (group epoch, member subscription, target assignment member, current assignment member);
// mqsim writes the whole consumer-protocol state of the group as one record each time it
// changes, so that a new coordinator loads it as the classic group's metadata is.
func consumerGroupKey(group string) []byte {
	b, _ := json.Marshal([]any{"consumer-group", group})
	return b
}

type consumerGroupRecord struct {
	Epoch           int32                  `json:"epoch"`
	AssignmentEpoch int32                  `json:"assignment_epoch"`
	Assignor        string                 `json:"assignor"`
	NextMember      int                    `json:"next_member"`
	Rebalances      int                    `json:"rebalances"`
	Metadata        []TopicSize            `json:"metadata,omitempty"`
	Members         []consumerMemberRecord `json:"members,omitempty"`
}

type consumerMemberRecord struct {
	ID               string        `json:"id"`
	InstanceID       string        `json:"instance,omitempty"`
	ClientID         string        `json:"client"`
	Epoch            int32         `json:"epoch"`
	PreviousEpoch    int32         `json:"previous_epoch"`
	State            MemberState   `json:"state"`
	Subscribed       []string      `json:"topics"`
	RebalanceTimeout time.Duration `json:"rebalance"`
	Assigned         []proto.TP    `json:"assigned"`
	Revoking         []proto.TP    `json:"revoking,omitempty"`
	Target           []proto.TP    `json:"target"`
}

func encodeConsumerGroup(g *Group) wal.Record {
	cg := g.Consumer
	rec := consumerGroupRecord{Epoch: cg.Epoch, AssignmentEpoch: cg.AssignmentEpoch, Assignor: cg.Assignor,
		NextMember: g.nextMember, Rebalances: cg.Rebalances, Metadata: slices.Clone(cg.metadata)}
	for _, m := range cg.members {
		rec.Members = append(rec.Members, consumerMemberRecord{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			Epoch: m.Epoch, PreviousEpoch: m.PreviousEpoch, State: m.State, Subscribed: slices.Clone(m.Subscribed),
			RebalanceTimeout: m.RebalanceTimeout, Assigned: slices.Clone(m.Assigned), Revoking: slices.Clone(m.Revoking),
			Target: slices.Clone(m.Target)})
	}
	v, _ := json.Marshal(rec)
	return wal.Record{Key: consumerGroupKey(g.ID), Value: v}
}

// applyConsumerGroup rebuilds a group's consumer-protocol state from its latest record.
func (g *Group) applyConsumerGroup(r *consumerGroupRecord) {
	cg := &ConsumerGroup{Epoch: r.Epoch, AssignmentEpoch: r.AssignmentEpoch, Assignor: r.Assignor, Rebalances: r.Rebalances, metadata: r.Metadata}
	for _, m := range r.Members {
		cg.members = append(cg.members, &ConsumerMember{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, Client: -1,
			Epoch: m.Epoch, PreviousEpoch: m.PreviousEpoch, State: m.State, Subscribed: m.Subscribed,
			RebalanceTimeout: m.RebalanceTimeout, Assigned: m.Assigned, Revoking: m.Revoking, Target: m.Target})
	}
	g.Consumer = cg
	g.nextMember = max(g.nextMember, r.NextMember)
}
