package group

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The events a group coordinator puts in the trace. The coordinator reaches the trace
// through its Host; record keeps an event from being boxed when the trace is off.

// record puts an event in the trace if the host keeps one.
func record[P sim.Payload](h Host, p P) {
	if h.Tracing() {
		h.Record(p)
	}
}

// LoadFailed is a read of the offsets partition that failed while loading it.
type LoadFailed struct {
	Partition int32
	Offset    int64
	Err       error // nil when the read returned nothing
}

// LoadedGroup is one group as a coordinator found it in its partition's log.
type LoadedGroup struct {
	ID         string
	State      State
	Generation int32
	Members    int
	Offsets    int
}

// Loaded is a coordinator built from its partition's log: the groups and offsets it holds.
type Loaded struct {
	Partition int32
	Records   int
	Epoch     int32
	Groups    []LoadedGroup
}

// Unreadable counts records of the offsets partition that could not be decoded at load.
type Unreadable struct {
	Partition int32
	Bad       int
}

// Unloaded is a coordinator ending: its broker no longer leads the partition.
type Unloaded struct {
	Partition int32
	Groups    int
	Why       string
}

// MemberExpired is a member whose session timed out without a heartbeat.
type MemberExpired struct {
	Group, Member  string
	SessionTimeout time.Duration
}

// JoinRefused is a join asking for an assignor the group does not use.
type JoinRefused struct {
	Group, Client string
	Wants, Uses   string // assignors
}

// MemberJoined is a new member taken into a group; Instance is set for a static member.
type MemberJoined struct {
	Group, Member, Instance string
}

// MemberRejoined is a static member that came back (restarted): it gets a new member id,
// which fences its old incarnation.
type MemberRejoined struct {
	Group, Instance string
	Member, Was     string // the new and the old member id
}

// StaticRejoined is a static member taken back into a stable group with its generation
// and partitions: no rebalance (KIP-345).
type StaticRejoined struct {
	Group, Member string
	Generation    int32
	Partitions    []proto.TP
}

// RebalanceReason says what started a rebalance.
type RebalanceReason uint8

const (
	// NewMember: a member joined a group that had none to rebalance (Empty or Dead).
	NewMember RebalanceReason = iota
	// NewMetadata: a member (or the leader) joined a running group with a new subscription.
	NewMetadata
	// StaticNewMetadata: a static member came back with a different subscription.
	StaticNewMetadata
	// SessionExpired: a member sent no heartbeat within its session timeout.
	SessionExpired
	// MemberLeave: a member sent LeaveGroup.
	MemberLeave
	// StoreFailed: writing the leader's assignment to the offsets partition failed.
	StoreFailed
)

// RebalanceStarted is a group entering PreparingRebalance: every member must rejoin.
// Initial is the first rebalance of an empty group, which waits Delay for more members.
type RebalanceStarted struct {
	Group      string
	Generation int32 // the generation being left
	Reason     RebalanceReason
	Member     string // whose join, expiry or departure started it ("" for StoreFailed)
	Initial    bool
	Delay      time.Duration
}

// MembersRemoved is members dropped because they did not rejoin within the rebalance timeout.
type MembersRemoved struct {
	Group   string
	Members []string
}

// GroupEmptied is a join phase that ended with no members.
type GroupEmptied struct {
	Group      string
	Generation int32
}

// JoinCompleted is the join phase ending: a new generation, its leader and members.
type JoinCompleted struct {
	Group      string
	Generation int32
	Leader     string
	Members    []string
}

// SyncFailed is the leader's assignment that could not be stored.
type SyncFailed struct {
	Group      string
	Generation int32
	Err        proto.Error
}

// MemberAssignment is the partitions one member got.
type MemberAssignment struct {
	Member     string
	Partitions []proto.TP
}

// GroupStabilized is a generation's assignment stored: the members get their partitions.
type GroupStabilized struct {
	Group      string
	Generation int32
	Assignment []MemberAssignment
}

// MemberLeft is a member's LeaveGroup.
type MemberLeft struct {
	Group, Member, Reason string
}

// CommitRejected is an offset commit the coordinator refused (a stale or unknown member).
type CommitRejected struct {
	Group, Member string
	Generation    int32
	Offsets       []proto.PartitionOffset
	Err           proto.Error
}

// CommitUnfenced is a commit that should have been refused, accepted because of the
// no-generation-fencing bug.
type CommitUnfenced struct {
	Group, Member       string
	Generation, Current int32 // the member's and the group's
	Offsets             []proto.PartitionOffset
	Err                 proto.Error // what it would have been refused with
}

// CommitFailed is an accepted commit that could not be stored.
type CommitFailed struct {
	Group, Member string
	Offsets       []proto.PartitionOffset
	Err           proto.Error
}

// OffsetsCommitted is a commit stored in the offsets partition (replicated).
type OffsetsCommitted struct {
	Group, Member string
	Generation    int32
	Offsets       []proto.PartitionOffset
}

func (LoadFailed) Kind() string { return "error" }
func (e LoadFailed) Detail() string {
	return fmt.Sprintf("offsets partition %d: read at %d: %v", e.Partition, e.Offset, e.Err)
}
func (Loaded) Kind() string { return "coordinator" }
func (e Loaded) Detail() string {
	detail := "no groups"
	if len(e.Groups) > 0 {
		names := make([]string, len(e.Groups))
		for i, g := range e.Groups {
			names[i] = fmt.Sprintf("%s (%s, generation %d, %d members, %d offsets)", g.ID, g.State, g.Generation, g.Members, g.Offsets)
		}
		detail = strings.Join(names, "; ")
	}
	return fmt.Sprintf("%s/%d: loaded %d records in epoch %d: %s", proto.OffsetsTopic, e.Partition, e.Records, e.Epoch, detail)
}
func (Unreadable) Kind() string { return "error" }
func (e Unreadable) Detail() string {
	return fmt.Sprintf("offsets partition %d: %d records unreadable", e.Partition, e.Bad)
}
func (Unloaded) Kind() string { return "coordinator" }
func (e Unloaded) Detail() string {
	return fmt.Sprintf("%s/%d: unloaded %d groups (%s)", proto.OffsetsTopic, e.Partition, e.Groups, e.Why)
}
func (MemberExpired) Kind() string { return "member-expired" }
func (e MemberExpired) Detail() string {
	return fmt.Sprintf("group %s: %s sent no heartbeat for %s (session.timeout.ms)", e.Group, e.Member, e.SessionTimeout)
}
func (JoinRefused) Kind() string { return "join-refused" }
func (e JoinRefused) Detail() string {
	return fmt.Sprintf("group %s: %s asks for assignor %s, the group uses %s", e.Group, e.Client, e.Wants, e.Uses)
}
func (MemberJoined) Kind() string { return "member-joined" }
func (e MemberJoined) Detail() string {
	if e.Instance != "" {
		return fmt.Sprintf("group %s: static member %s (instance %s) joins", e.Group, e.Member, e.Instance)
	}
	return fmt.Sprintf("group %s: %s joins", e.Group, e.Member)
}
func (MemberRejoined) Kind() string { return "member-rejoined" }
func (e MemberRejoined) Detail() string {
	return fmt.Sprintf("group %s: static instance %s is back as %s (was %s)", e.Group, e.Instance, e.Member, e.Was)
}
func (StaticRejoined) Kind() string { return "static-rejoin" }
func (e StaticRejoined) Detail() string {
	return fmt.Sprintf("group %s: %s keeps generation %d and its partitions %s: no rebalance", e.Group, e.Member, e.Generation, proto.TPList(e.Partitions))
}
func (RebalanceStarted) Kind() string { return "rebalance" }
func (e RebalanceStarted) Detail() string {
	what := "rebalance"
	if e.Initial {
		what = fmt.Sprintf("rebalance (first of an empty group: waits %s for more members)", e.Delay)
	}
	return fmt.Sprintf("group %s: %s, generation %d: %s", e.Group, what, e.Generation, e.Why())
}

// Why says in words what started the rebalance.
func (e RebalanceStarted) Why() string {
	switch e.Reason {
	case NewMember:
		return e.Member + " joined"
	case NewMetadata:
		return e.Member + " joined with new metadata"
	case StaticNewMetadata:
		return "static member " + e.Member + " rejoined with new metadata"
	case SessionExpired:
		return e.Member + "'s session expired"
	case MemberLeave:
		return e.Member + " left"
	case StoreFailed:
		return "storing the assignment failed"
	}
	return fmt.Sprintf("reason %d", e.Reason)
}
func (MembersRemoved) Kind() string { return "member-removed" }
func (e MembersRemoved) Detail() string {
	return fmt.Sprintf("group %s: %s did not rejoin within the rebalance timeout", e.Group, strings.Join(e.Members, ", "))
}
func (GroupEmptied) Kind() string { return "group-empty" }
func (e GroupEmptied) Detail() string {
	return fmt.Sprintf("group %s: generation %d has no members", e.Group, e.Generation)
}
func (JoinCompleted) Kind() string { return "join-complete" }
func (e JoinCompleted) Detail() string {
	return fmt.Sprintf("group %s: generation %d, leader %s, members %s", e.Group, e.Generation, e.Leader, strings.Join(e.Members, " "))
}
func (SyncFailed) Kind() string { return "sync-failed" }
func (e SyncFailed) Detail() string {
	return fmt.Sprintf("group %s: generation %d metadata not stored: %s", e.Group, e.Generation, e.Err)
}
func (GroupStabilized) Kind() string { return "stable" }
func (e GroupStabilized) Detail() string {
	parts := make([]string, len(e.Assignment))
	for i, a := range e.Assignment {
		parts[i] = fmt.Sprintf("%s=%s", a.Member, proto.TPList(a.Partitions))
	}
	return fmt.Sprintf("group %s: generation %d stable: %s", e.Group, e.Generation, strings.Join(parts, " "))
}
func (MemberLeft) Kind() string { return "member-left" }
func (e MemberLeft) Detail() string {
	return fmt.Sprintf("group %s: %s leaves (%s)", e.Group, e.Member, e.Reason)
}
func (CommitRejected) Kind() string { return "commit-rejected" }
func (e CommitRejected) Detail() string {
	return fmt.Sprintf("group %s: %s (generation %d) commits %s: %s", e.Group, e.Member, e.Generation, offsetsText(e.Offsets), e.Err)
}
func (CommitUnfenced) Kind() string { return "commit-unfenced" }
func (e CommitUnfenced) Detail() string {
	return fmt.Sprintf("group %s: %s (generation %d, group at %d) commits %s: would be %s, accepted (no-generation-fencing)",
		e.Group, e.Member, e.Generation, e.Current, offsetsText(e.Offsets), e.Err)
}
func (CommitFailed) Kind() string { return "commit-failed" }
func (e CommitFailed) Detail() string {
	return fmt.Sprintf("group %s: %s commits %s: %s", e.Group, e.Member, offsetsText(e.Offsets), e.Err)
}
func (OffsetsCommitted) Kind() string { return "commit" }
func (e OffsetsCommitted) Detail() string {
	return fmt.Sprintf("group %s: %s (generation %d) committed %s", e.Group, e.Member, e.Generation, offsetsText(e.Offsets))
}

// TxnCommitRejected is a transactional offset commit (TxnOffsetCommit) refused: its
// member, instance or generation is not the group's (KIP-447).
type TxnCommitRejected struct {
	Group, Member string
	Generation    int32
	ProducerID    int64
	Offsets       []proto.PartitionOffset
	Err           proto.Error
}

// TxnCommitUnfenced is a transactional commit that should have been refused, taken
// because of the no-txn-offset-fencing bug.
type TxnCommitUnfenced struct {
	Group, Member string
	Generation    int32
	ProducerID    int64
	Offsets       []proto.PartitionOffset
	Err           proto.Error // what it would have been refused with
}

// TxnCommitFailed is a transactional commit that could not be stored (a fenced producer
// epoch, no quorum, a timeout).
type TxnCommitFailed struct {
	Group, Member string
	ProducerID    int64
	Offsets       []proto.PartitionOffset
	Err           proto.Error
}

// TxnOffsetsPending is a transactional commit stored (replicated) and pending: invisible
// until its transaction's marker.
type TxnOffsetsPending struct {
	Group, Member string
	Generation    int32
	ProducerID    int64
	Offsets       []proto.PartitionOffset
}

// TxnOffset is one pending transactional offset of a group.
type TxnOffset struct {
	Group  string
	TP     proto.TP
	Offset int64
}

// TxnOffsetsCompleted is a transaction's marker reaching the coordinator: its pending
// offsets become committed (Commit) or are dropped.
type TxnOffsetsCompleted struct {
	ProducerID int64
	Commit     bool
	Offsets    []TxnOffset
}

func txnOffsetsText(os []TxnOffset) string {
	if len(os) == 0 {
		return "no pending offsets"
	}
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("group %s %s@%d", o.Group, o.TP, o.Offset)
	}
	return strings.Join(s, ", ")
}

func (TxnCommitRejected) Kind() string { return "commit-rejected" }
func (e TxnCommitRejected) Detail() string {
	return fmt.Sprintf("group %s: %s (generation %d) commits %s in the transaction of pid %d: %s", e.Group, e.Member, e.Generation, offsetsText(e.Offsets), e.ProducerID, e.Err)
}
func (TxnCommitUnfenced) Kind() string { return "commit-unfenced" }
func (e TxnCommitUnfenced) Detail() string {
	return fmt.Sprintf("group %s: %s (generation %d) commits %s in the transaction of pid %d: would be %s, taken (no-txn-offset-fencing)",
		e.Group, e.Member, e.Generation, offsetsText(e.Offsets), e.ProducerID, e.Err)
}
func (TxnCommitFailed) Kind() string { return "commit-failed" }
func (e TxnCommitFailed) Detail() string {
	return fmt.Sprintf("group %s: %s commits %s in the transaction of pid %d: %s", e.Group, e.Member, offsetsText(e.Offsets), e.ProducerID, e.Err)
}
func (TxnOffsetsPending) Kind() string { return "commit-pending" }
func (e TxnOffsetsPending) Detail() string {
	return fmt.Sprintf("group %s: %s (generation %d) stored %s, pending until pid %d's transaction ends", e.Group, e.Member, e.Generation, offsetsText(e.Offsets), e.ProducerID)
}
func (TxnOffsetsCompleted) Kind() string { return "txn-offsets" }
func (e TxnOffsetsCompleted) Detail() string {
	if e.Commit {
		return fmt.Sprintf("pid %d COMMIT: %s now committed", e.ProducerID, txnOffsetsText(e.Offsets))
	}
	return fmt.Sprintf("pid %d ABORT: %s dropped", e.ProducerID, txnOffsetsText(e.Offsets))
}

// EpochReason says why a consumer-protocol group's epoch moved on (KIP-848).
type EpochReason uint8

const (
	noBump EpochReason = iota
	// MemberJoinedGroup: a member's first heartbeat (epoch 0).
	MemberJoinedGroup
	// MemberLeftGroup: a member's heartbeat with epoch -1.
	MemberLeftGroup
	// MemberFencedGroup: a member's session or rebalance timeout expired.
	MemberFencedGroup
	// SubscriptionChanged: a member subscribes to other topics.
	SubscriptionChanged
	// MetadataChanged: a subscribed topic appeared or has more partitions.
	MetadataChanged
)

func (r EpochReason) String() string {
	switch r {
	case MemberJoinedGroup:
		return "joined"
	case MemberLeftGroup:
		return "left"
	case MemberFencedGroup:
		return "was fenced"
	case SubscriptionChanged:
		return "changed its subscription"
	case MetadataChanged:
		return "saw new topic metadata"
	}
	return "no change"
}

// GroupEpochBumped is a consumer-protocol group's epoch moving on: the target assignment
// is recomputed at the next heartbeat.
type GroupEpochBumped struct {
	Group  string
	Epoch  int32
	Reason EpochReason
	Member string // whose join, departure, fencing or subscription it was
}

// TargetAssigned is the server-side assignor's target assignment for a group epoch.
type TargetAssigned struct {
	Group    string
	Epoch    int32
	Assignor string
	Target   []MemberAssignment
}

// MemberReconciled is a consumer-protocol member moved towards its target: its epoch, its
// state, what it may use now and what it must still revoke.
type MemberReconciled struct {
	Group, Member      string
	Epoch              int32
	State              MemberState
	Assigned, Revoking []proto.TP
}

// FenceReason says why a consumer-protocol member was fenced.
type FenceReason uint8

const (
	// SessionTimedOut: no heartbeat within group.consumer.session.timeout.ms.
	SessionTimedOut FenceReason = iota
	// RevocationTimedOut: partitions not revoked within the member's rebalance timeout
	// (max.poll.interval.ms).
	RevocationTimedOut
)

func (r FenceReason) String() string {
	if r == RevocationTimedOut {
		return "did not revoke within its rebalance timeout"
	}
	return "sent no heartbeat within the session timeout"
}

// ConsumerMemberFenced is a consumer-protocol member removed by a timeout; Partitions
// were assigned to it and go to others.
type ConsumerMemberFenced struct {
	Group, Member string
	Epoch         int32
	Reason        FenceReason
	Partitions    []proto.TP
}

// HeartbeatRefused is a ConsumerGroupHeartbeat or ShareGroupHeartbeat answered with an error.
type HeartbeatRefused struct {
	Group, Member string
	Epoch         int32
	Err           proto.Error
	Share         bool // a ShareGroupHeartbeat (not shown in the text)
}

// ConsumerMemberLeft is a consumer-protocol member's leave heartbeat: epoch -1, or -2 for
// a static member that keeps its assignment for the session timeout.
type ConsumerMemberLeft struct {
	Group, Member string
	Static        bool
}

// StaticMemberReturned is a static consumer-protocol member back within its session: it
// takes over its old assignment under a new member id, without a new group epoch.
type StaticMemberReturned struct {
	Group, Instance string
	Member, Was     string
	Partitions      []proto.TP
}

func (ConsumerMemberLeft) Kind() string { return "member-left" }
func (e ConsumerMemberLeft) Detail() string {
	if e.Static {
		return fmt.Sprintf("group %s: static %s away (epoch -2), keeps its assignment", e.Group, e.Member)
	}
	return fmt.Sprintf("group %s: %s leaves (epoch -1)", e.Group, e.Member)
}
func (StaticMemberReturned) Kind() string { return "static-rejoin" }
func (e StaticMemberReturned) Detail() string {
	return fmt.Sprintf("group %s: static instance %s is back as %s (was %s) with %s", e.Group, e.Instance, e.Member, e.Was, proto.TPList(e.Partitions))
}
func (GroupEpochBumped) Kind() string { return "group-epoch" }
func (e GroupEpochBumped) Detail() string {
	return fmt.Sprintf("group %s: epoch %d (%s %s)", e.Group, e.Epoch, e.Member, e.Reason)
}
func (TargetAssigned) Kind() string { return "target-assignment" }
func (e TargetAssigned) Detail() string {
	parts := make([]string, len(e.Target))
	for i, a := range e.Target {
		parts[i] = fmt.Sprintf("%s=%s", a.Member, proto.TPList(a.Partitions))
	}
	return fmt.Sprintf("group %s: target for epoch %d (%s): %s", e.Group, e.Epoch, e.Assignor, strings.Join(parts, " "))
}
func (MemberReconciled) Kind() string { return "reconcile" }
func (e MemberReconciled) Detail() string {
	s := fmt.Sprintf("group %s: %s epoch %d %s: %s", e.Group, e.Member, e.Epoch, e.State, proto.TPList(e.Assigned))
	if len(e.Revoking) > 0 {
		s += ", revoking " + proto.TPList(e.Revoking)
	}
	return s
}
func (ConsumerMemberFenced) Kind() string { return "member-fenced" }
func (e ConsumerMemberFenced) Detail() string {
	return fmt.Sprintf("group %s: %s (epoch %d) %s; %s go to others", e.Group, e.Member, e.Epoch, e.Reason, proto.TPList(e.Partitions))
}
func (HeartbeatRefused) Kind() string { return "heartbeat-refused" }
func (e HeartbeatRefused) Detail() string {
	return fmt.Sprintf("group %s: %s (epoch %d): %s", e.Group, e.Member, e.Epoch, e.Err)
}

// ShareMemberAssigned is a share-group member moved straight to its part of the target
// assignment and the target epoch: no revocation first, since share members hold no
// partition alone (KIP-932).
type ShareMemberAssigned struct {
	Group, Member string
	Epoch         int32
	Assigned      []proto.TP
}

// ShareMemberLeft is a share-group member's leave heartbeat (epoch -1).
type ShareMemberLeft struct {
	Group, Member string
}

// ShareMemberFenced is a share-group member removed because it sent no heartbeat within
// group.share.session.timeout.ms; Partitions were its part of the target.
type ShareMemberFenced struct {
	Group, Member string
	Epoch         int32
	Partitions    []proto.TP
}

func (ShareMemberAssigned) Kind() string { return "share-assignment" }
func (e ShareMemberAssigned) Detail() string {
	return fmt.Sprintf("share group %s: %s epoch %d: %s", e.Group, e.Member, e.Epoch, proto.TPList(e.Assigned))
}
func (ShareMemberLeft) Kind() string { return "member-left" }
func (e ShareMemberLeft) Detail() string {
	return fmt.Sprintf("share group %s: %s leaves (epoch -1)", e.Group, e.Member)
}
func (ShareMemberFenced) Kind() string { return "member-fenced" }
func (e ShareMemberFenced) Detail() string {
	return fmt.Sprintf("share group %s: %s (epoch %d) sent no heartbeat within the session timeout; its share of %s is recomputed", e.Group, e.Member, e.Epoch, proto.TPList(e.Partitions))
}

// EventDocs lists the coordinator's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: TxnCommitRejected{}, About: "a transactional offset commit was refused: its member or generation is stale (KIP-447)"},
		{Example: TxnCommitUnfenced{}, About: "a stale transactional offset commit was taken because of the no-txn-offset-fencing bug"},
		{Example: TxnCommitFailed{}, About: "a transactional offset commit could not be stored (fenced producer, no quorum)"},
		{Example: TxnOffsetsPending{}, About: "a transactional offset commit was stored; it stays invisible until the transaction ends"},
		{Example: TxnOffsetsCompleted{}, About: "a transaction's marker made its pending offsets committed, or dropped them"},
		{Example: LoadFailed{}, About: "a group coordinator could not read its offsets partition while loading it"},
		{Example: Loaded{}, About: "a broker became leader of an offsets partition and loaded its groups and committed offsets from the log"},
		{Example: Unreadable{}, About: "records of an offsets partition could not be decoded at load"},
		{Example: Unloaded{}, About: "a broker lost the leadership of an offsets partition: its groups are gone from it"},
		{Example: MemberExpired{}, About: "a group member sent no heartbeat within session.timeout.ms and is removed"},
		{Example: JoinRefused{}, About: "a join asked for an assignor the group does not use"},
		{Example: MemberJoined{}, About: "a new member (dynamic or static) was taken into a group"},
		{Example: MemberRejoined{}, About: "a static member came back under a new member id, fencing its old incarnation"},
		{Example: StaticRejoined{}, About: "a static member got its generation and partitions back without a rebalance"},
		{Example: RebalanceStarted{}, About: "a group started a rebalance (and why): every member must rejoin"},
		{Example: MembersRemoved{}, About: "members that did not rejoin within the rebalance timeout were dropped"},
		{Example: GroupEmptied{}, About: "a rebalance ended with no members left"},
		{Example: JoinCompleted{}, About: "the join phase ended: a new generation with its leader and members"},
		{Example: SyncFailed{}, About: "the leader's assignment could not be stored: the group rebalances again"},
		{Example: GroupStabilized{}, About: "a generation's assignment is stored and handed to the members"},
		{Example: MemberLeft{}, About: "a member left its group (LeaveGroup)"},
		{Example: CommitRejected{}, About: "an offset commit was refused: its member or generation is stale"},
		{Example: CommitUnfenced{}, About: "a stale commit was accepted because of the no-generation-fencing bug"},
		{Example: CommitFailed{}, About: "an accepted offset commit could not be stored"},
		{Example: OffsetsCommitted{}, About: "an offset commit was stored in the replicated offsets partition"},
		{Example: GroupEpochBumped{}, About: "a consumer-protocol group's epoch moved on (a member joined, left, was fenced or changed its subscription; KIP-848)"},
		{Example: TargetAssigned{}, About: "the coordinator's assignor computed a consumer-protocol group's target assignment for its epoch"},
		{Example: MemberReconciled{}, About: "a consumer-protocol member moved towards its target: its epoch, what it may use, what it must revoke first"},
		{Example: ConsumerMemberFenced{}, About: "a consumer-protocol member was fenced (session or rebalance timeout): its partitions go to others"},
		{Example: ConsumerMemberLeft{}, About: "a consumer-protocol member left with a heartbeat of epoch -1 (or -2: a static member away for a while)"},
		{Example: StaticMemberReturned{}, About: "a static consumer-protocol member came back within its session and took over its assignment"},
		{Example: HeartbeatRefused{}, About: "a ConsumerGroupHeartbeat or ShareGroupHeartbeat was refused (fenced or unknown member epoch, unreleased instance id, a group of another kind)"},
		{Example: ShareMemberAssigned{}, About: "a share-group member moved straight to its part of the target assignment and its epoch: no revocation (KIP-932)"},
		{Example: ShareMemberLeft{}, About: "a share-group member left with a heartbeat of epoch -1"},
		{Example: ShareMemberFenced{}, About: "a share-group member sent no heartbeat within group.share.session.timeout.ms and was removed"},
	}
}
