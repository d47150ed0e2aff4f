package proto

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"mqsim/model/wal"
)

// Share groups (KIP-932, production-ready in Kafka 4.2): queue semantics on the log. The
// members of a share group share the records of its partitions: each record is acquired by
// one member at a time, under an acquisition lock, and acknowledged one by one (accept,
// release, reject). Three roles, as in Kafka:
//
//   - the group coordinator (the leader of the group's offsets partition) keeps the
//     membership and the assignment: ShareGroupHeartbeat (API 76), a server-side assignor
//     ("simple": members may outnumber partitions and share them);
//   - the share-partition leader (the leader of the topic partition) keeps the in-flight
//     window of each (group, partition) and serves ShareFetch (78) and ShareAcknowledge (79);
//   - the share coordinator (the leader of the group's partition of __share_group_state)
//     persists each share-partition's state: ReadShareGroupState (84) and
//     WriteShareGroupState (85), sent by the share-partition leader's persister.
//
// Fields follow the JSON message definitions in apache/kafka's
// clients/src/main/resources/common/message, trimmed to what mqsim models. One request,
// one response, each with the requester's CorrelationID, as everywhere else.

// ShareGroupStateTopic is the internal topic of the share coordinators.
const ShareGroupStateTopic = "__share_group_state"

// GroupProtocolShare is a share consumer's protocol: not a group.protocol value in Kafka
// (KafkaShareConsumer is its own client), the word mqsim's views use for it.
const GroupProtocolShare = "share"

// Share-group error codes (Kafka's Errors).
const (
	// InvalidRecordState: an acknowledgement for a record that is not acquired by this
	// member (its lock expired, another member has it, it was already acknowledged).
	InvalidRecordState Error = "INVALID_RECORD_STATE"
	// ShareSessionNotFound: a ShareFetch with a session epoch other than 0 for a member
	// whose share session the leader does not have (a new leader, a restarted broker).
	ShareSessionNotFound Error = "SHARE_SESSION_NOT_FOUND"
	// InvalidShareSessionEpoch: the session epoch is not the next one.
	InvalidShareSessionEpoch Error = "INVALID_SHARE_SESSION_EPOCH"
	// FencedStateEpoch: a WriteShareGroupState whose state epoch is older than the
	// persisted one.
	FencedStateEpoch Error = "FENCED_STATE_EPOCH"
	// FencedLeaderEpoch (already a replication error) also answers a share-state read or
	// write whose leader epoch is below the last one the share coordinator recorded.
)

// AckType is how a consumer acknowledges a record (AcknowledgeType in Kafka's client).
type AckType int8

const (
	// AckGap marks offsets with no record (compacted away); the leader archives them.
	AckGap AckType = 0
	// AckAccept: processed; the record is done for the group.
	AckAccept AckType = 1
	// AckRelease: not processed; the record is available again (archived at the delivery
	// count limit).
	AckRelease AckType = 2
	// AckReject: unprocessable; the record is archived, never delivered again.
	AckReject AckType = 3
)

func (t AckType) String() string {
	switch t {
	case AckGap:
		return "gap"
	case AckAccept:
		return "accept"
	case AckRelease:
		return "release"
	case AckReject:
		return "reject"
	}
	return fmt.Sprintf("ack-type-%d", int8(t))
}

// RecordState is a record's state in a share-partition (RecordState.java), with the ids
// Kafka persists.
type RecordState int8

const (
	Available    RecordState = 0
	Acquired     RecordState = 1 // never persisted: acquisition writes nothing
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

func (s RecordState) String() string {
	switch s {
	case Available:
		return "available"
	case Acquired:
		return "acquired"
	case Acknowledged:
		return "acknowledged"
	case Archived:
		return "archived"
	}
	return fmt.Sprintf("state-%d", int8(s))
}

// Share session epochs (ShareFetchRequest.json): 0 opens a session, -1 closes it,
// anything else is the previous epoch plus one.
const (
	ShareSessionOpen  int32 = 0
	ShareSessionClose int32 = -1
)

// ShareGroupHeartbeat is a share consumer's membership request to the group coordinator:
// it joins (epoch 0), keeps the session alive and leaves (epoch -1). There is no
// revocation: a member moves straight to its new assignment.
type ShareGroupHeartbeat struct {
	CorrelationID int64
	Group         string
	MemberID      string // "" on the first join: the coordinator names the member
	MemberEpoch   int32
	Subscribed    []string
}

func (m ShareGroupHeartbeat) String() string {
	return fmt.Sprintf("ShareGroupHeartbeat %s member=%q epoch=%d", m.Group, m.MemberID, m.MemberEpoch)
}

// ShareGroupHeartbeatResponse gives the member its epoch and, when it changed, its
// assignment.
type ShareGroupHeartbeatResponse struct {
	CorrelationID     int64
	Group             string
	Error             Error
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	HasAssignment     bool // Assignment is set (Kafka: null means unchanged)
	Assignment        []TP
}

func (m ShareGroupHeartbeatResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("ShareGroupHeartbeatResponse %s %s member=%q", m.Group, m.Error, m.MemberID)
	}
	s := fmt.Sprintf("ShareGroupHeartbeatResponse %s member=%s epoch=%d", m.Group, m.MemberID, m.MemberEpoch)
	if m.HasAssignment {
		s += " assignment=" + TPList(m.Assignment)
	}
	return s
}

// AckBatch acknowledges the offsets First..Last (inclusive) of one partition with one type.
type AckBatch struct {
	First, Last int64
	Type        AckType
}

func (a AckBatch) String() string {
	if a.First == a.Last {
		return fmt.Sprintf("%d:%s", a.First, a.Type)
	}
	return fmt.Sprintf("%d-%d:%s", a.First, a.Last, a.Type)
}

// PartitionAcks are one partition's acknowledgements in a request.
type PartitionAcks struct {
	TP      TP
	Batches []AckBatch
}

// ShareFetch asks the leader of each partition for records to acquire, and carries the
// member's acknowledgements of earlier records (piggybacked: processed before the fetch).
// Sent to one broker for the partitions it leads.
type ShareFetch struct {
	CorrelationID int64
	Group         string
	MemberID      string
	SessionEpoch  int32
	Partitions    []TP
	Acks          []PartitionAcks
	MaxRecords    int // max.poll.records
}

func (m ShareFetch) String() string {
	return fmt.Sprintf("ShareFetch %s member=%s epoch=%d %s acks=%d", m.Group, m.MemberID, m.SessionEpoch, TPList(m.Partitions), len(m.Acks))
}

// AcquiredRange is a run of offsets the member now holds, all with one delivery count.
type AcquiredRange struct {
	First, Last   int64
	DeliveryCount int16
}

// SharePartitionData is one partition's answer to a ShareFetch.
type SharePartitionData struct {
	TP       TP
	Error    Error // the fetch's error for this partition (NOT_LEADER_OR_FOLLOWER ...)
	AckError Error // the piggybacked acknowledgements' error (INVALID_RECORD_STATE ...)
	Batches  []wal.Batch
	Acquired []AcquiredRange // which offsets of Batches the member acquired
}

// ShareFetchResponse answers a ShareFetch.
type ShareFetchResponse struct {
	CorrelationID int64
	Group         string
	Error         Error // session errors (SHARE_SESSION_NOT_FOUND ...)
	Partitions    []SharePartitionData
}

func (m ShareFetchResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("ShareFetchResponse %s %s", m.Group, m.Error)
	}
	n := 0
	for _, p := range m.Partitions {
		for _, a := range p.Acquired {
			n += int(a.Last - a.First + 1)
		}
	}
	return fmt.Sprintf("ShareFetchResponse %s acquired=%d", m.Group, n)
}

// ShareAcknowledge carries acknowledgements without fetching (commitSync, and close with
// session epoch -1, which also releases what the member still holds).
type ShareAcknowledge struct {
	CorrelationID int64
	Group         string
	MemberID      string
	SessionEpoch  int32
	Acks          []PartitionAcks
}

func (m ShareAcknowledge) String() string {
	return fmt.Sprintf("ShareAcknowledge %s member=%s epoch=%d acks=%d", m.Group, m.MemberID, m.SessionEpoch, len(m.Acks))
}

// PartitionAckResult is one partition's answer to acknowledgements.
type PartitionAckResult struct {
	TP    TP
	Error Error
}

// ShareAcknowledgeResponse answers a ShareAcknowledge once the acknowledgements are
// persisted (or failed).
type ShareAcknowledgeResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
	Partitions    []PartitionAckResult
}

func (m ShareAcknowledgeResponse) String() string {
	var parts []string
	for _, p := range m.Partitions {
		parts = append(parts, fmt.Sprintf("%s:%s", p.TP, p.Error))
	}
	return fmt.Sprintf("ShareAcknowledgeResponse %s %s [%s]", m.Group, m.Error, strings.Join(parts, " "))
}

// SharePartitionKey names a share-partition: a group's view of one topic partition
// (Kafka's key "groupId:topicId:partition").
type SharePartitionKey struct {
	Group string
	TP    TP
}

func (k SharePartitionKey) String() string { return k.Group + ":" + k.TP.String() }

// PersistedBatch is a run of offsets with one persisted state and delivery count
// (WriteShareGroupStateRequest.json's StateBatches). State is never Acquired.
type PersistedBatch struct {
	First, Last   int64
	State         RecordState
	DeliveryCount int16
}

// ShareState is a share-partition's persisted state: everything below StartOffset (the
// SPSO) is done; Batches describe the offsets from there on that are not plainly
// Available with delivery count 0.
type ShareState struct {
	StateEpoch  int32
	StartOffset int64
	Batches     []PersistedBatch
}

// ReadShareGroupState asks the share coordinator for a share-partition's state (the new
// share-partition leader's first step).
type ReadShareGroupState struct {
	CorrelationID int64
	Key           SharePartitionKey
	LeaderEpoch   int32 // the reader's leader epoch of Key.TP
}

func (m ReadShareGroupState) String() string {
	return fmt.Sprintf("ReadShareGroupState %s leader-epoch=%d", m.Key, m.LeaderEpoch)
}

// ReadShareGroupStateResponse answers it; Found is false for a share-partition never
// written (the leader then initializes it from share.auto.offset.reset).
type ReadShareGroupStateResponse struct {
	CorrelationID int64
	Key           SharePartitionKey
	Error         Error
	Found         bool
	State         ShareState
}

func (m ReadShareGroupStateResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("ReadShareGroupStateResponse %s %s", m.Key, m.Error)
	}
	return fmt.Sprintf("ReadShareGroupStateResponse %s found=%t start=%d batches=%d", m.Key, m.Found, m.State.StartOffset, len(m.State.Batches))
}

// WriteShareGroupState persists a share-partition's state. mqsim writes the whole state
// each time (Kafka writes deltas as ShareUpdate records and a ShareSnapshot every
// 500 updates); the share coordinator answers once the record is replicated.
type WriteShareGroupState struct {
	CorrelationID int64
	Key           SharePartitionKey
	LeaderEpoch   int32
	// Seq numbers the writer's writes within its leader epoch, from 1. Not in Kafka, whose
	// requests travel in order over one TCP connection: mqsim's network may duplicate and
	// reorder, so the share coordinator refuses a write older than the last one it took
	// from the same leader epoch (a stale copy would put an older state back), and takes
	// a repeat of the last one as done.
	Seq   int64
	State ShareState
}

func (m WriteShareGroupState) String() string {
	return fmt.Sprintf("WriteShareGroupState %s leader-epoch=%d start=%d batches=%d", m.Key, m.LeaderEpoch, m.State.StartOffset, len(m.State.Batches))
}

// WriteShareGroupStateResponse answers it.
type WriteShareGroupStateResponse struct {
	CorrelationID int64
	Key           SharePartitionKey
	Error         Error
}

func (m WriteShareGroupStateResponse) String() string {
	return fmt.Sprintf("WriteShareGroupStateResponse %s %s", m.Key, m.Error)
}

// ShareConfig is the broker side of share groups (ShareGroupConfig.java,
// ShareCoordinatorConfig.java), with Kafka 4.2's defaults except where noted.
type ShareConfig struct {
	// RecordLockDuration is group.share.record.lock.duration.ms (30s): how long a member
	// holds a record it acquired before the record is available again.
	RecordLockDuration time.Duration
	// DeliveryCountLimit is group.share.delivery.count.limit (5, 2 to 10): a record
	// delivered this many times is archived instead of made available again.
	DeliveryCountLimit int
	// PartitionMaxRecordLocks is group.share.partition.max.record.locks (2000): the
	// in-flight window of a share-partition, from the SPSO to the last acquired offset.
	PartitionMaxRecordLocks int
	// SessionTimeout is group.share.session.timeout.ms (45s): the group coordinator
	// removes a member it has not heard from for this long.
	SessionTimeout time.Duration
	// HeartbeatInterval is group.share.heartbeat.interval.ms (5s).
	HeartbeatInterval time.Duration
	// AutoOffsetReset is share.auto.offset.reset ("latest"; or "earliest"): where a new
	// share-partition starts.
	AutoOffsetReset string
	// StateTopicPartitions is share.coordinator.state.topic.num.partitions (Kafka: 50;
	// mqsim: 3, so a scenario can follow each one).
	StateTopicPartitions int
	// StateTopicReplicationFactor and StateTopicMinISR are
	// share.coordinator.state.topic.replication.factor (3) and .min.isr (2), lowered to
	// the number of brokers.
	StateTopicReplicationFactor int
	StateTopicMinISR            int
	// WriteTimeout is share.coordinator.write.timeout.ms (5s): a state write not
	// replicated by then fails, and the acknowledgements it carried with it.
	WriteTimeout time.Duration
}

// DefaultShareConfig is Kafka 4.2's.
func DefaultShareConfig() ShareConfig {
	return ShareConfig{
		RecordLockDuration: 30 * time.Second, DeliveryCountLimit: 5, PartitionMaxRecordLocks: 2000,
		SessionTimeout: 45 * time.Second, HeartbeatInterval: 5 * time.Second, AutoOffsetReset: "latest",
		StateTopicPartitions: 3, StateTopicReplicationFactor: 3, StateTopicMinISR: 2, WriteTimeout: 5 * time.Second,
	}
}

// ShareGroupStateTopicConfig is the share-group state topic for a cluster of this
// configuration: rf lowered to the number of brokers, min.insync.replicas to rf.
func (c Config) ShareGroupStateTopicConfig() TopicConfig {
	rf := min(c.Share.StateTopicReplicationFactor, c.Brokers)
	return TopicConfig{Name: ShareGroupStateTopic, Partitions: c.Share.StateTopicPartitions, ReplicationFactor: rf,
		MinInsyncReplicas: max(1, min(c.Share.StateTopicMinISR, rf))}
}

// validate checks the share-group settings, naming the bad value and why.
func (s ShareConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if s.RecordLockDuration < time.Second || s.RecordLockDuration > time.Hour {
		bad("group.share.record.lock.duration.ms=%s: want 1s to 1h", s.RecordLockDuration)
	}
	if s.DeliveryCountLimit < 2 || s.DeliveryCountLimit > 10 {
		bad("group.share.delivery.count.limit=%d: want 2 to 10", s.DeliveryCountLimit)
	}
	if s.PartitionMaxRecordLocks < 1 || s.PartitionMaxRecordLocks > 10000 {
		bad("group.share.partition.max.record.locks=%d: want 1 to 10000 (Kafka's minimum is 100; mqsim allows less so a scenario can reach it)", s.PartitionMaxRecordLocks)
	}
	if s.SessionTimeout <= 0 {
		bad("group.share.session.timeout.ms=%s: must be positive", s.SessionTimeout)
	}
	if s.HeartbeatInterval <= 0 || s.HeartbeatInterval >= s.SessionTimeout {
		bad("group.share.heartbeat.interval.ms=%s: want positive and below the session timeout %s", s.HeartbeatInterval, s.SessionTimeout)
	}
	if s.AutoOffsetReset != "latest" && s.AutoOffsetReset != "earliest" {
		bad("share.auto.offset.reset=%q: want latest or earliest", s.AutoOffsetReset)
	}
	if s.StateTopicPartitions < 1 || s.StateTopicPartitions > 1000 {
		bad("share.coordinator.state.topic.num.partitions=%d: want 1 to 1000", s.StateTopicPartitions)
	}
	if s.StateTopicReplicationFactor < 1 {
		bad("share.coordinator.state.topic.replication.factor=%d: want at least 1", s.StateTopicReplicationFactor)
	}
	if s.StateTopicMinISR < 1 {
		bad("share.coordinator.state.topic.min.isr=%d: want at least 1", s.StateTopicMinISR)
	}
	if s.WriteTimeout <= 0 {
		bad("share.coordinator.write.timeout.ms=%s: must be positive", s.WriteTimeout)
	}
	return errors.Join(errs...)
}

// Share acknowledgement modes (share.acknowledgement.mode).
const (
	// AckImplicit: every record of a poll is accepted at the next poll (Kafka's default).
	AckImplicit = "implicit"
	// AckExplicit: the application acknowledges each record: mqsim's share consumer
	// accepts what it processed, releases what failed and rejects what it gave up on.
	AckExplicit = "explicit"
)
