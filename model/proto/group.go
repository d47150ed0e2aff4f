package proto

import (
	"fmt"
	"strings"
	"time"

	"mqsim/sim"
)

// Consumer-group messages: the classic group protocol (FindCoordinator, JoinGroup,
// SyncGroup, Heartbeat, LeaveGroup) and the offset API (OffsetCommit, OffsetFetch).

// Group error codes.
const (
	NotCoordinator            Error = "NOT_COORDINATOR"
	CoordinatorLoadInProgress Error = "COORDINATOR_LOAD_IN_PROGRESS"
	// UnstableOffsetCommit answers an OffsetFetch that requires stable offsets while a
	// transaction's offsets for one of its partitions wait for their marker (KIP-447).
	UnstableOffsetCommit      Error = "UNSTABLE_OFFSET_COMMIT"
	IllegalGeneration         Error = "ILLEGAL_GENERATION"
	UnknownMemberID           Error = "UNKNOWN_MEMBER_ID"
	MemberIDRequired          Error = "MEMBER_ID_REQUIRED"
	RebalanceInProgress       Error = "REBALANCE_IN_PROGRESS"
	FencedInstanceID          Error = "FENCED_INSTANCE_ID"
	InconsistentGroupProtocol Error = "INCONSISTENT_GROUP_PROTOCOL"
	InvalidSessionTimeout     Error = "INVALID_SESSION_TIMEOUT"
)

// CoordinatorMoved reports whether a group error means "find the coordinator again".
func CoordinatorMoved(e Error) bool {
	return e == NotCoordinator || e == CoordinatorNotAvailable || e == CoordinatorLoadInProgress || e == NetworkException
}

// NoGeneration is the generation of a commit from outside the group protocol (an assign()
// consumer, an admin tool): Kafka's -1.
const NoGeneration int32 = -1

// FindCoordinator asks any broker which broker coordinates a group or, with KeyType
// TransactionCoordinator, a transactional.id (Group then holds the transactional.id).
type FindCoordinator struct {
	CorrelationID int64
	Group         string
	KeyType       CoordinatorType
}

func (m FindCoordinator) String() string {
	if m.KeyType == TransactionCoordinator {
		return "FindCoordinator transaction " + m.Group
	}
	return "FindCoordinator " + m.Group
}

// FindCoordinatorResponse names the coordinator: the leader of the group's partition of
// the offsets topic, as the answering broker's metadata has it.
type FindCoordinatorResponse struct {
	CorrelationID int64
	Group         string
	KeyType       CoordinatorType
	Error         Error
	Coordinator   sim.NodeID
}

func (m FindCoordinatorResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("FindCoordinatorResponse %s %s", m.Group, m.Error)
	}
	return fmt.Sprintf("FindCoordinatorResponse %s coordinator=%s", m.Group, nodeName(m.Coordinator))
}

// Subscription is what a member tells the group leader: the topics it wants and, under
// the cooperative protocol, the partitions it owns now (KIP-429).
type Subscription struct {
	Topics []string
	Owned  []TP
}

// Clone copies the subscription.
func (s Subscription) Clone() Subscription {
	return Subscription{Topics: append([]string(nil), s.Topics...), Owned: append([]TP(nil), s.Owned...)}
}

// JoinGroup is a member's request to join (or rejoin) a group. MemberID is "" on the first
// join; InstanceID is group.instance.id for static members.
type JoinGroup struct {
	CorrelationID    int64
	Group            string
	MemberID         string
	InstanceID       string
	ClientID         string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	// Assignor is the partition assignment strategy the member supports (one, in mqsim).
	Assignor     string
	Subscription Subscription
}

func (m JoinGroup) String() string {
	s := fmt.Sprintf("JoinGroup %s member=%q", m.Group, m.MemberID)
	if m.InstanceID != "" {
		s += fmt.Sprintf(" instance=%q", m.InstanceID)
	}
	return s + fmt.Sprintf(" %s owned=%s", m.Assignor, TPList(m.Subscription.Owned))
}

// GroupMember is one member as the group leader sees it in the join response.
type GroupMember struct {
	MemberID     string
	InstanceID   string
	Subscription Subscription
}

// JoinGroupResponse ends the join phase for one member: its id, the new generation, the
// leader, and (for the leader only) every member's subscription.
type JoinGroupResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
	Generation    int32
	Assignor      string
	Leader        string
	MemberID      string
	Members       []GroupMember // leader only
	// SkipAssignment tells a static leader that rejoined a stable group not to compute an
	// assignment: the group keeps the one it has (KIP-814).
	SkipAssignment bool
}

func (m JoinGroupResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("JoinGroupResponse %s %s member=%q", m.Group, m.Error, m.MemberID)
	}
	return fmt.Sprintf("JoinGroupResponse %s generation=%d member=%s leader=%s members=%d", m.Group, m.Generation, m.MemberID, m.Leader, len(m.Members))
}

// MemberAssignment is the leader's assignment for one member.
type MemberAssignment struct {
	MemberID   string
	Partitions []TP
}

// SyncGroup ends a rebalance: the leader sends every member's assignment, the others send
// nothing and receive theirs.
type SyncGroup struct {
	CorrelationID int64
	Group         string
	MemberID      string
	InstanceID    string
	Generation    int32
	Assignments   []MemberAssignment // leader only
}

func (m SyncGroup) String() string {
	return fmt.Sprintf("SyncGroup %s generation=%d member=%s assignments=%d", m.Group, m.Generation, m.MemberID, len(m.Assignments))
}

// SyncGroupResponse carries the member's assignment for the generation.
type SyncGroupResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
	Generation    int32
	Partitions    []TP
}

func (m SyncGroupResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("SyncGroupResponse %s %s", m.Group, m.Error)
	}
	return fmt.Sprintf("SyncGroupResponse %s generation=%d %s", m.Group, m.Generation, TPList(m.Partitions))
}

// Heartbeat keeps a member's session alive and tells it when a rebalance has begun.
type Heartbeat struct {
	CorrelationID int64
	Group         string
	MemberID      string
	InstanceID    string
	Generation    int32
}

func (m Heartbeat) String() string {
	return fmt.Sprintf("Heartbeat %s member=%s generation=%d", m.Group, m.MemberID, m.Generation)
}

// HeartbeatResponse answers a heartbeat: NONE, REBALANCE_IN_PROGRESS (rejoin), or an error
// that says the member is no longer in the generation.
type HeartbeatResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
}

func (m HeartbeatResponse) String() string {
	return fmt.Sprintf("HeartbeatResponse %s %s", m.Group, m.Error)
}

// LeaveGroup removes a member at once, instead of after its session timeout.
type LeaveGroup struct {
	CorrelationID int64
	Group         string
	MemberID      string
	InstanceID    string
	Reason        string
}

func (m LeaveGroup) String() string {
	return fmt.Sprintf("LeaveGroup %s member=%s (%s)", m.Group, m.MemberID, m.Reason)
}

// LeaveGroupResponse answers LeaveGroup.
type LeaveGroupResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
}

func (m LeaveGroupResponse) String() string {
	return fmt.Sprintf("LeaveGroupResponse %s %s", m.Group, m.Error)
}

// PartitionOffset is a committed offset: the next offset the group will read.
type PartitionOffset struct {
	TP     TP
	Offset int64
	// LeaderEpoch is the leader epoch of the last record consumed below Offset (Kafka's
	// committedLeaderEpoch, KIP-320), or -1 (wal.UndefinedEpoch) when unknown. A consumer
	// that starts from the offset trusts no metadata naming an older leader: a stale leader
	// may have a shorter log and answer OFFSET_OUT_OF_RANGE.
	LeaderEpoch int32
}

// OffsetCommit stores a member's positions. MemberID and Generation are what the
// coordinator fences stale commits with; Generation NoGeneration is a commit from outside
// the group protocol.
type OffsetCommit struct {
	CorrelationID int64
	Group         string
	MemberID      string
	InstanceID    string
	Generation    int32
	Offsets       []PartitionOffset
}

func (m OffsetCommit) String() string {
	return fmt.Sprintf("OffsetCommit %s member=%s generation=%d %s", m.Group, m.MemberID, m.Generation, offsetList(m.Offsets))
}

// OffsetCommitResponse answers a commit: one error for all its partitions.
type OffsetCommitResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
}

func (m OffsetCommitResponse) String() string {
	return fmt.Sprintf("OffsetCommitResponse %s %s", m.Group, m.Error)
}

// OffsetFetch asks for a group's committed offsets.
type OffsetFetch struct {
	CorrelationID int64
	Group         string
	Partitions    []TP
	// RequireStable (KIP-447, OffsetFetch v7): answer UNSTABLE_OFFSET_COMMIT rather than
	// an offset a pending transaction may still move. Kafka's consumer sets it at
	// isolation.level=read_committed.
	RequireStable bool
}

func (m OffsetFetch) String() string {
	return fmt.Sprintf("OffsetFetch %s %s", m.Group, TPList(m.Partitions))
}

// OffsetFetchResponse lists the committed offsets; -1 where the group committed none.
type OffsetFetchResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
	Offsets       []PartitionOffset
}

func (m OffsetFetchResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("OffsetFetchResponse %s %s", m.Group, m.Error)
	}
	return fmt.Sprintf("OffsetFetchResponse %s %s", m.Group, offsetList(m.Offsets))
}

// TPList renders partitions as "[t/0 t/1]".
func TPList(tps []TP) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

func offsetList(os []PartitionOffset) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
	}
	return "[" + strings.Join(s, " ") + "]"
}
