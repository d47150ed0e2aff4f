package proto

import (
	"fmt"
	"time"
)

// The consumer rebalance protocol (KIP-848, GA in Kafka 4.0): one request,
// ConsumerGroupHeartbeat (API 68), replaces JoinGroup, SyncGroup and Heartbeat for a member
// with group.protocol=consumer. The coordinator computes the assignment itself (a server-side
// assignor) and hands each member its part one heartbeat at a time: there is no join phase
// and no barrier across the group. Fields follow ConsumerGroupHeartbeatRequest/Response.json
// in apache/kafka's clients/src/main/resources/common/message.

// Consumer-protocol error codes.
const (
	// FencedMemberEpoch: the heartbeat's member epoch is not one the coordinator accepts;
	// the member drops its partitions (onPartitionsLost) and rejoins with epoch 0.
	FencedMemberEpoch Error = "FENCED_MEMBER_EPOCH"
	// StaleMemberEpoch answers an OffsetCommit whose member epoch is not the member's
	// current one (ConsumerGroup.validateOffsetCommit).
	StaleMemberEpoch Error = "STALE_MEMBER_EPOCH"
	// UnreleasedInstanceID: another live member still uses the group.instance.id.
	UnreleasedInstanceID Error = "UNRELEASED_INSTANCE_ID"
	// UnsupportedAssignor: the heartbeat named a server assignor the coordinator lacks.
	UnsupportedAssignor Error = "UNSUPPORTED_ASSIGNOR"
	// GroupIDNotFound answers a consumer-protocol heartbeat for a group that exists as a
	// classic group with members (mqsim does not convert groups online).
	GroupIDNotFound Error = "GROUP_ID_NOT_FOUND"
)

// Group protocols (group.protocol).
const (
	GroupProtocolClassic  = "classic"
	GroupProtocolConsumer = "consumer"
)

// Member epochs with a meaning of their own in a ConsumerGroupHeartbeat.
const (
	// JoinEpoch is the epoch of a member's first heartbeat.
	JoinEpoch int32 = 0
	// LeaveEpoch is the epoch of a dynamic member leaving the group.
	LeaveEpoch int32 = -1
	// StaticLeaveEpoch is a static member leaving for a while (it keeps its assignment
	// for the session timeout).
	StaticLeaveEpoch int32 = -2
)

// ConsumerGroupHeartbeat is a consumer-protocol member's one request: it joins (epoch 0),
// keeps the session alive, reports what the member owns (a revocation is acknowledged by
// leaving the partition out) and leaves (epoch -1). Subscribed and Owned are sent in full
// whenever they may have changed (Kafka sends null for "unchanged"; mqsim always sends
// OwnedSent: true with the list).
type ConsumerGroupHeartbeat struct {
	CorrelationID int64
	Group         string
	MemberID      string // "" on the first join: the coordinator names the member
	InstanceID    string
	MemberEpoch   int32
	// RebalanceTimeout is max.poll.interval.ms: how long the member may take to revoke.
	RebalanceTimeout time.Duration
	Subscribed       []string
	// ServerAssignor is group.remote.assignor ("" = the group's default, uniform).
	ServerAssignor string
	Owned          []TP
}

func (m ConsumerGroupHeartbeat) String() string {
	return fmt.Sprintf("ConsumerGroupHeartbeat %s member=%q epoch=%d owned=%s", m.Group, m.MemberID, m.MemberEpoch, TPList(m.Owned))
}

// ConsumerGroupHeartbeatResponse gives the member its epoch and, when it changed, its
// assignment (usable at once: the coordinator only assigns a partition nobody else owns).
type ConsumerGroupHeartbeatResponse struct {
	CorrelationID     int64
	Group             string
	Error             Error
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// HasAssignment says Assignment is set (Kafka: a null assignment means unchanged).
	HasAssignment bool
	Assignment    []TP
}

func (m ConsumerGroupHeartbeatResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("ConsumerGroupHeartbeatResponse %s %s member=%q", m.Group, m.Error, m.MemberID)
	}
	s := fmt.Sprintf("ConsumerGroupHeartbeatResponse %s member=%s epoch=%d", m.Group, m.MemberID, m.MemberEpoch)
	if m.HasAssignment {
		s += " assignment=" + TPList(m.Assignment)
	}
	return s
}

// ConsumerProtocol reports whether the member speaks the consumer protocol (KIP-848).
func (c ConsumerConfig) ConsumerProtocol() bool { return c.GroupProtocol == GroupProtocolConsumer }
