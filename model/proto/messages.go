package proto

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/model/wal"
	"mqsim/sim"
)

// TP names a topic-partition.
type TP struct {
	Topic     string
	Partition int32
}

func (tp TP) String() string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }

// ParseTP reads a partition as String writes it: TOPIC/N.
func ParseTP(s string) (TP, error) {
	i := strings.LastIndexByte(s, '/')
	if i <= 0 {
		return TP{}, fmt.Errorf("bad partition %q: want TOPIC/N, e.g. t/0", s)
	}
	p, err := strconv.ParseInt(s[i+1:], 10, 32)
	if err != nil || p < 0 {
		return TP{}, fmt.Errorf("bad partition %q: want TOPIC/N, e.g. t/0", s)
	}
	return TP{Topic: s[:i], Partition: int32(p)}, nil
}

// Less orders partitions by topic, then number.
func (tp TP) Less(o TP) bool { return CompareTP(tp, o) < 0 }

// CompareTP orders partitions by topic, then number, for slices.SortFunc and friends.
func CompareTP(a, b TP) int {
	return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// Error is a Kafka error code, by name.
type Error string

const (
	None                          Error = ""
	NotLeaderOrFollower           Error = "NOT_LEADER_OR_FOLLOWER"
	NotEnoughReplicas             Error = "NOT_ENOUGH_REPLICAS"
	NotEnoughReplicasAfterAppend  Error = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
	RequestTimedOut               Error = "REQUEST_TIMED_OUT"
	OffsetOutOfRange              Error = "OFFSET_OUT_OF_RANGE"
	FencedLeaderEpoch             Error = "FENCED_LEADER_EPOCH"
	UnknownLeaderEpoch            Error = "UNKNOWN_LEADER_EPOCH"
	UnknownTopicOrPartition       Error = "UNKNOWN_TOPIC_OR_PARTITION"
	OutOfOrderSequence            Error = "OUT_OF_ORDER_SEQUENCE_NUMBER"
	InvalidProducerEpoch          Error = "INVALID_PRODUCER_EPOCH"
	LeaderNotAvailable            Error = "LEADER_NOT_AVAILABLE"
	StaleControllerEpoch          Error = "STALE_CONTROLLER_EPOCH"
	InvalidUpdateVersion          Error = "INVALID_UPDATE_VERSION"
	CoordinatorNotAvailable       Error = "COORDINATOR_NOT_AVAILABLE"
	TopicAlreadyExists            Error = "TOPIC_ALREADY_EXISTS"
	InvalidReplicationFactor      Error = "INVALID_REPLICATION_FACTOR"
	NetworkException              Error = "NETWORK_EXCEPTION" // client side: no response in time
	KafkaStorageError             Error = "KAFKA_STORAGE_ERROR"
	DuplicateSequenceNumberExists Error = "DUPLICATE_SEQUENCE_NUMBER"
	// NotController: the controller asked is not the active one (quorum mode). The answer
	// names the active controller when it knows it.
	NotController Error = "NOT_CONTROLLER"
	// AlterPartition errors that tell the leader the controller applied nothing and its
	// partition epoch is current (KIP-841, KIP-903): it may go back to its committed ISR.
	OperationNotAttempted Error = "OPERATION_NOT_ATTEMPTED"
	IneligibleReplica     Error = "INELIGIBLE_REPLICA"
	// AlterPartition errors after which the leader waits for new metadata. NewLeaderElected
	// answers a change that completed a reassignment which took the leadership away from
	// the sender (KRaft, AlterPartition v2+).
	InvalidRequest   Error = "INVALID_REQUEST"
	NewLeaderElected Error = "NEW_LEADER_ELECTED"
)

// InvalidPartitions: CreatePartitions asked for no more partitions than the topic has
// (Kafka never removes partitions: their records would have nowhere to go).
const InvalidPartitions Error = "INVALID_PARTITIONS"

// Retriable reports whether a producer may retry after this error.
func (e Error) Retriable() bool {
	switch e {
	case NotLeaderOrFollower, NotEnoughReplicas, NotEnoughReplicasAfterAppend, RequestTimedOut,
		FencedLeaderEpoch, UnknownLeaderEpoch, LeaderNotAvailable, NetworkException, UnknownTopicOrPartition,
		KafkaStorageError:
		return true
	}
	return false
}

// Ambiguous reports whether a write that ended with this error may nevertheless be in
// the log (so a retry may duplicate it, and the history records the outcome as unknown).
func (e Error) Ambiguous() bool {
	return e == RequestTimedOut || e == NetworkException || e == NotEnoughReplicasAfterAppend
}

func (e Error) String() string {
	if e == None {
		return "NONE"
	}
	return string(e)
}

// --- controller <-> broker ---

// BrokerHeartbeat tells the controller a broker is alive. The first heartbeat of an
// incarnation registers it; Incarnation grows with every restart, so the controller can
// tell a restarted broker from one that kept running (Kafka's broker epoch).
//
// MetadataVersion is the newest metadata the broker has; a controller that knows newer
// answers with LeaderAndIsr for the broker's partitions and the full Metadata, so a lost
// update heals at the next heartbeat.
type BrokerHeartbeat struct {
	Broker          sim.NodeID
	Incarnation     int64
	MetadataVersion int64
	// WantShutDown asks for a controlled shutdown (KRaft's BrokerHeartbeatRequest field).
	WantShutDown bool
}

func (m BrokerHeartbeat) String() string {
	if m.WantShutDown {
		return fmt.Sprintf("heartbeat incarnation=%d metadata=v%d want-shutdown", m.Incarnation, m.MetadataVersion)
	}
	return fmt.Sprintf("heartbeat incarnation=%d metadata=v%d", m.Incarnation, m.MetadataVersion)
}

// NoController is "no active controller known", in a NOT_CONTROLLER answer.
const NoController sim.NodeID = -1

// BrokerHeartbeatResponse answers a heartbeat, in quorum mode only (a single controller
// needs no discovery: its pushes are its answer). The active controller answers once
// what the heartbeat changed (a registration) is committed; any other controller answers
// NOT_CONTROLLER with the active one it knows of, so a broker finds the active controller
// by following the hint, or by trying the controllers in turn.
type BrokerHeartbeatResponse struct {
	Error            Error
	ActiveController sim.NodeID // on NOT_CONTROLLER: the active controller, or NoController
	// ShouldShutDown grants a controlled shutdown: the broker leads nothing and is out of
	// every ISR. The single controller answers a broker's heartbeat only to say this.
	ShouldShutDown bool
}

func (m BrokerHeartbeatResponse) String() string {
	if m.ShouldShutDown {
		return "heartbeat ok, shut down"
	}
	if m.Error == None {
		return "heartbeat ok"
	}
	return fmt.Sprintf("heartbeat %s (active %s)", m.Error, controllerName(m.ActiveController))
}

func controllerName(id sim.NodeID) string {
	if id == NoController {
		return "unknown"
	}
	return fmt.Sprintf("#%d", id)
}

// PartitionState is the controller's record of one partition.
type PartitionState struct {
	TP             TP
	Replicas       []sim.NodeID // assigned replicas, preferred leader first
	Leader         sim.NodeID   // NoLeader when offline
	LeaderEpoch    int32
	ISR            []sim.NodeID
	PartitionEpoch int32 // bumps on every change; AlterPartition must name the current one
	// ELR is the eligible leader replicas (KIP-966): replicas that left the ISR while it
	// was below min.insync.replicas. The HW does not advance then, so each holds every
	// committed record and may be elected cleanly once the ISR is empty.
	ELR []sim.NodeID `json:",omitempty"`
	// LastKnownELR is KRaft's LastKnownElr in its "balanced recovery" use: the leader
	// at the moment the ISR became empty (at most one member), cleared once the partition
	// has a leader again.
	LastKnownELR []sim.NodeID `json:",omitempty"`
	// AddingReplicas and RemovingReplicas are a reassignment in progress (ops.go): Replicas
	// is then the target followed by the replicas being removed.
	AddingReplicas   []sim.NodeID `json:",omitempty"`
	RemovingReplicas []sim.NodeID `json:",omitempty"`
}

// NoLeader marks an offline partition.
const NoLeader sim.NodeID = -2

// Clone copies the state so the copy can be kept while the original is changed.
func (s PartitionState) Clone() PartitionState {
	s.Replicas = append([]sim.NodeID(nil), s.Replicas...)
	s.ISR = append([]sim.NodeID(nil), s.ISR...)
	s.ELR = cloneIDs(s.ELR)
	s.LastKnownELR = cloneIDs(s.LastKnownELR)
	s.AddingReplicas = cloneIDs(s.AddingReplicas)
	s.RemovingReplicas = cloneIDs(s.RemovingReplicas)
	return s
}

// LeaderAndIsr is the controller's word on one partition, sent to its replicas on every
// change and again periodically (so a lost message heals).
type LeaderAndIsr struct {
	ControllerEpoch int32
	// BrokerEpoch is the incarnation of the receiving broker that the controller has
	// registered; a broker ignores what was meant for an earlier (or not yet registered)
	// incarnation of itself (KIP-380).
	BrokerEpoch int64
	State       PartitionState
	Topic       TopicConfig
}

func (m LeaderAndIsr) String() string {
	return fmt.Sprintf("LeaderAndIsr %s leader=%s epoch=%d isr=%s", m.State.TP, nodeName(m.State.Leader), m.State.LeaderEpoch, nodeList(m.State.ISR))
}

// Metadata is the cluster view the controller pushes to every broker, and brokers give
// clients: partition leaders, live brokers, coordinators.
type Metadata struct {
	ControllerEpoch int32
	Version         int64
	Partitions      []PartitionState // sorted by TP
	LiveBrokers     []sim.NodeID
	// Incarnations are the registered incarnations of LiveBrokers, in the same order.
	Incarnations []int64
	Topics       []TopicConfig
}

// Registered reports whether the metadata lists broker id as live in incarnation inc.
func (m Metadata) Registered(id sim.NodeID, inc int64) bool {
	for i, b := range m.LiveBrokers {
		if b == id && i < len(m.Incarnations) && m.Incarnations[i] == inc {
			return true
		}
	}
	return false
}

func (m Metadata) String() string {
	return fmt.Sprintf("metadata v%d: %d partitions, live=%s", m.Version, len(m.Partitions), nodeList(m.LiveBrokers))
}

// Partition returns the partition's state, if known. Clients ask for every request, so
// it searches Partitions by halves (they are sorted by TP); a metadata made by hand out
// of order is still answered right, by a walk, when the search misses.
func (m Metadata) Partition(tp TP) (PartitionState, bool) {
	i, found := slices.BinarySearchFunc(m.Partitions, tp, func(p PartitionState, tp TP) int { return CompareTP(p.TP, tp) })
	if found {
		return m.Partitions[i], true
	}
	for _, p := range m.Partitions {
		if p.TP == tp {
			return p, true
		}
	}
	return PartitionState{}, false
}

// AlterPartition is a leader's request to change its partition's ISR.
type AlterPartition struct {
	Broker         sim.NodeID
	TP             TP
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []sim.NodeID
	Reason         string
}

func (m AlterPartition) String() string {
	return fmt.Sprintf("AlterPartition %s isr=%s (%s)", m.TP, nodeList(m.NewISR), m.Reason)
}

// AlterPartitionResponse answers AlterPartition with the partition's state after it.
type AlterPartitionResponse struct {
	TP    TP
	Error Error
	State PartitionState
	// For is the request answered. Kafka matches an answer to its request by the
	// request's callback; a leader ignores an answer to a request that is no longer the
	// one pending (an answer delayed past a newer proposal).
	For AlterPartition
}

func (m AlterPartitionResponse) String() string {
	return fmt.Sprintf("AlterPartitionResponse %s %s isr=%s", m.TP, m.Error, nodeList(m.State.ISR))
}

// CreateTopic asks the controller for a topic.
type CreateTopic struct {
	CorrelationID int64
	Config        TopicConfig
}

func (m CreateTopic) String() string { return "CreateTopic " + m.Config.String() }

// CreateTopicResponse answers CreateTopic.
type CreateTopicResponse struct {
	CorrelationID int64
	Topic         string
	Error         Error
	Detail        string
}

func (m CreateTopicResponse) String() string {
	return fmt.Sprintf("CreateTopicResponse %s %s %s", m.Topic, m.Error, m.Detail)
}

// CreatePartitions asks the controller to grow a topic to Count partitions (Kafka's
// CreatePartitions, kafka-topics.sh --alter --partitions): the count only increases.
type CreatePartitions struct {
	CorrelationID int64
	Topic         string
	Count         int
}

func (m CreatePartitions) String() string {
	return fmt.Sprintf("CreatePartitions %s count=%d", m.Topic, m.Count)
}

// CreatePartitionsResponse answers CreatePartitions; Detail is the controller's message
// on an error, as Kafka's CreatePartitionsTopicResult.errorMessage.
type CreatePartitionsResponse struct {
	CorrelationID int64
	Topic         string
	Error         Error
	Detail        string
}

func (m CreatePartitionsResponse) String() string {
	return fmt.Sprintf("CreatePartitionsResponse %s %s %s", m.Topic, m.Error, m.Detail)
}

// --- client <-> broker ---

// MetadataRequest asks a broker for its metadata.
type MetadataRequest struct{ CorrelationID int64 }

func (m MetadataRequest) String() string { return "MetadataRequest" }

// MetadataResponse carries a broker's metadata cache.
type MetadataResponse struct {
	CorrelationID int64
	Metadata      Metadata
}

func (m MetadataResponse) String() string { return "MetadataResponse " + m.Metadata.String() }

// InitProducerID asks the controller for a producer id (idempotent producers) or, with a
// TransactionalID, the transaction coordinator of that id: it returns the id's producer id
// with its epoch bumped, fencing every older instance, after finishing or aborting the
// transaction an older instance left open. ProducerID and ProducerEpoch, when not
// wal.NoProducerID, are the caller's current ones (KIP-360: a producer re-initialising
// after an error keeps its id).
type InitProducerID struct {
	CorrelationID      int64
	TransactionalID    string
	TransactionTimeout time.Duration
	ProducerID         int64
	ProducerEpoch      int16
}

func (m InitProducerID) String() string {
	if m.TransactionalID != "" {
		return "InitProducerId " + m.TransactionalID
	}
	return "InitProducerId"
}

// InitProducerIDResponse grants a producer id and epoch, or (quorum mode) says
// NOT_CONTROLLER and names the active controller if known.
type InitProducerIDResponse struct {
	CorrelationID    int64
	ProducerID       int64
	ProducerEpoch    int16
	Error            Error
	ActiveController sim.NodeID // on NOT_CONTROLLER: the active controller, or NoController
}

func (m InitProducerIDResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("InitProducerIdResponse %s (active %s)", m.Error, controllerName(m.ActiveController))
	}
	return fmt.Sprintf("InitProducerIdResponse pid=%d epoch=%d", m.ProducerID, m.ProducerEpoch)
}

// Acks is the producer's acks setting: 0, 1 or -1 (all).
type Acks int8

const (
	AcksNone   Acks = 0
	AcksLeader Acks = 1
	AcksAll    Acks = -1
)

func (a Acks) String() string {
	if a == AcksAll {
		return "all"
	}
	return fmt.Sprint(int8(a))
}

// ProduceRequest writes one batch to one partition.
type ProduceRequest struct {
	CorrelationID int64
	TP            TP
	Acks          Acks
	Timeout       time.Duration // how long acks=all may wait for the ISR (request.timeout.ms)
	Batch         wal.Batch
	// Delay, when positive, asks the leader to hold the batch's records and append them
	// to the partition Delay after it appended the batch (delayed delivery, patterns.go).
	Delay time.Duration
	// TransactionalID is the producer's transactional.id, on a transactional batch
	// (Batch.Flags has wal.FlagTransactional): the leader asks that id's coordinator to
	// add the partition to the open transaction before it appends (KIP-890).
	TransactionalID string
}

func (m ProduceRequest) String() string {
	return fmt.Sprintf("Produce %s acks=%s %d records%s", m.TP, m.Acks, len(m.Batch.Records), seqText(m.Batch))
}

func seqText(b wal.Batch) string {
	if b.ProducerID == wal.NoProducerID {
		return ""
	}
	return fmt.Sprintf(" pid=%d seq=%d", b.ProducerID, b.BaseSequence)
}

// ProduceResponse answers a produce with acks 1 or all.
type ProduceResponse struct {
	CorrelationID int64
	TP            TP
	Error         Error
	BaseOffset    int64
	// ThrottleTime is how long the broker mutes the client for exceeding its produce
	// quota (quota.go); the client sends it nothing more until then (KIP-219).
	ThrottleTime time.Duration
}

func (m ProduceResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("ProduceResponse %s %s", m.TP, m.Error)
	}
	return fmt.Sprintf("ProduceResponse %s offset=%d", m.TP, m.BaseOffset)
}

// ConsumerReplica is the ReplicaID of a fetch from a consumer rather than a follower.
const ConsumerReplica sim.NodeID = -1

// FetchRequest reads a partition from an offset, for a follower or a consumer.
type FetchRequest struct {
	CorrelationID int64
	ReplicaID     sim.NodeID // the follower, or ConsumerReplica
	TP            TP
	FetchOffset   int64
	// LastFetchedEpoch is the epoch of the record before FetchOffset, or wal.UndefinedEpoch;
	// the leader answers with DivergingEpoch when its log disagrees (truncate-on-fetch).
	LastFetchedEpoch int32
	// CurrentLeaderEpoch fences requests against a stale or newer leader (KIP-320);
	// wal.UndefinedEpoch skips the check.
	CurrentLeaderEpoch int32
	MaxBytes           int
	// MaxWait is how long the leader may hold a fetch that finds nothing new before
	// answering it empty (fetch.max.wait.ms, replica.fetch.wait.max.ms).
	MaxWait time.Duration
	// Tags, for a consumer, asks the leader to return only records with one of these tags
	// (HeaderTags); empty: every record.
	Tags []string
	// Isolation, for a consumer: ReadCommitted reads up to the last stable offset and
	// gets the aborted transactions of what it reads.
	Isolation IsolationLevel
}

func (m FetchRequest) String() string {
	who := "consumer"
	if m.ReplicaID != ConsumerReplica {
		who = "follower"
	}
	return fmt.Sprintf("Fetch %s from %d (%s, epoch %d)", m.TP, m.FetchOffset, who, m.CurrentLeaderEpoch)
}

// EpochEnd is an (epoch, end offset) pair: where the leader's log stops agreeing.
type EpochEnd struct {
	Epoch     int32
	EndOffset int64
}

// FetchResponse carries batches from FetchOffset on, and the leader's high watermark.
type FetchResponse struct {
	CorrelationID  int64
	TP             TP
	Error          Error
	HighWatermark  int64
	LogStartOffset int64
	LeaderEpoch    int32
	Batches        []wal.Batch
	// DivergingEpoch, when set, tells the fetcher to truncate to EndOffset (or to the end
	// of its own copy of Epoch, if smaller) and fetch again.
	DivergingEpoch *EpochEnd
	// SkippedTo, when positive, is where a consumer may move its position once it has the
	// response's records: the leader left out records the consumer does not get (scheduled
	// entries, records its tag filter rejects) up to there. SkippedEpoch is the leader epoch
	// of the last record left out.
	SkippedTo    int64
	SkippedEpoch int32
	// LastStableOffset is the partition's LSO: the first offset of the oldest open
	// transaction, or the high watermark when none is open. A read_committed fetch reads
	// below it only.
	LastStableOffset int64
	// AbortedTransactions, for a read_committed fetch, are the aborted transactions that
	// overlap the returned batches, by first offset.
	AbortedTransactions []AbortedTxn
	// ThrottleTime is how long the broker mutes a consumer over its fetch quota
	// (quota.go): the response is then empty, and the consumer fetches nothing more from
	// this broker until then (KIP-219).
	ThrottleTime time.Duration
}

func (m FetchResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("FetchResponse %s %s", m.TP, m.Error)
	}
	n := 0
	for _, b := range m.Batches {
		n += len(b.Records)
	}
	s := fmt.Sprintf("FetchResponse %s %d records hw=%d", m.TP, n, m.HighWatermark)
	if m.DivergingEpoch != nil {
		s += fmt.Sprintf(" diverging epoch %d at %d", m.DivergingEpoch.Epoch, m.DivergingEpoch.EndOffset)
	}
	return s
}

// ListOffsets asks for the earliest or latest offset of a partition, or with ByTime the
// first offset whose timestamp is at or after Time (Kafka's ListOffsets with a target
// timestamp, KafkaConsumer.offsetsForTimes; Kafka encodes earliest and latest as the
// timestamps -2 and -1, mqsim gives each request one typed field).
type ListOffsets struct {
	CorrelationID int64
	TP            TP
	Latest        bool
	// Isolation ReadCommitted makes "latest" the last stable offset, not the HW, and bounds
	// a ByTime answer the same way.
	Isolation IsolationLevel
	ByTime    bool
	Time      sim.Time
}

func (m ListOffsets) String() string {
	which := "earliest"
	if m.Latest {
		which = "latest"
	}
	if m.ByTime {
		which = "at " + m.Time.String()
	}
	return fmt.Sprintf("ListOffsets %s %s", m.TP, which)
}

// ListOffsetsResponse answers ListOffsets. A ByTime answer carries the found record's
// Timestamp, or Offset UnknownOffset when no record that recent is readable (Kafka's
// UNKNOWN_OFFSET, -1, with no error).
type ListOffsetsResponse struct {
	CorrelationID int64
	TP            TP
	Error         Error
	Offset        int64
	LeaderEpoch   int32
	Timestamp     sim.Time
}

// UnknownOffset is a ListOffsets by time that found no record (Kafka's
// ListOffsetsResponse.UNKNOWN_OFFSET).
const UnknownOffset int64 = -1

func (m ListOffsetsResponse) String() string {
	return fmt.Sprintf("ListOffsetsResponse %s %s offset=%d", m.TP, m.Error, m.Offset)
}

func nodeName(id sim.NodeID) string {
	if id == NoLeader {
		return "none"
	}
	return fmt.Sprintf("#%d", id)
}

func nodeList(ids []sim.NodeID) string {
	var s []string
	for _, id := range ids {
		s = append(s, nodeName(id))
	}
	return "[" + strings.Join(s, ",") + "]"
}
