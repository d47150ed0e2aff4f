package proto

import (
	"errors"
	"fmt"
	"time"
)

// Transactions (KIP-98, KIP-447, KIP-890): the messages between a transactional producer,
// its transaction coordinator (the leader of the __transaction_state partition of its
// transactional.id), the group coordinator that holds its offsets, and the leaders of the
// partitions it writes. The coordinator's state machine is in model/txn; the partitions'
// side (control batches, the last stable offset, the aborted transaction index) in
// model/broker/txn.go.
//
// One request, one response, each with the requester's CorrelationID, as everywhere else.

// Transaction error codes (Kafka's Errors).
const (
	// ProducerFenced: a newer instance with the same transactional.id bumped the epoch;
	// the producer must close (Kafka 2.7+ names it PRODUCER_FENCED; older brokers said
	// INVALID_PRODUCER_EPOCH).
	ProducerFenced Error = "PRODUCER_FENCED"
	// InvalidTxnState: the request does not fit the transaction's state (EndTxn with no
	// transaction, a commit while an abort is in progress).
	InvalidTxnState Error = "INVALID_TXN_STATE"
	// ConcurrentTransactions: the previous transaction's markers are still being written;
	// the producer retries after a backoff.
	ConcurrentTransactions Error = "CONCURRENT_TRANSACTIONS"
	// InvalidProducerIDMapping: the producer id does not belong to the transactional.id.
	InvalidProducerIDMapping Error = "INVALID_PRODUCER_ID_MAPPING"
	// InvalidTransactionTimeout: transaction.timeout.ms above transaction.max.timeout.ms.
	InvalidTransactionTimeout Error = "INVALID_TRANSACTION_TIMEOUT"
	// TransactionAbortable: the transaction cannot commit (a failed send, a failed
	// verification); the producer must abort it and may then go on (KIP-890's new error,
	// 3.8+).
	TransactionAbortable Error = "TRANSACTION_ABORTABLE"
	// TransactionCoordinatorFenced: a partition leader refuses a marker whose coordinator
	// epoch is below that of the last marker it took for the producer: the marker comes
	// from a deposed coordinator (ProducerAppendInfo.checkCoordinatorEpoch). Added with
	// the partitions' side: the contract lacked it; a coordinator drops such a marker.
	TransactionCoordinatorFenced Error = "TRANSACTION_COORDINATOR_FENCED"
)

// CoordinatorType is FindCoordinator's key type.
type CoordinatorType int8

const (
	GroupCoordinator       CoordinatorType = 0 // the key is a group id
	TransactionCoordinator CoordinatorType = 1 // the key is a transactional.id
)

// TransactionStateTopic is the internal topic that holds the transaction coordinators'
// state, one record per state change of a transactional.id.
const TransactionStateTopic = "__transaction_state"

// AddPartitionsToTxn adds partitions to the producer's open transaction (starting it if
// the transactional.id is Empty or Complete*). Before KIP-890 part 2 the producer sends it
// before its first produce to each new partition; in the modern mode the partition leader
// sends it on the producer's behalf when the first transactional batch of a transaction
// arrives (FromBroker), and holds the batch until the answer.
type AddPartitionsToTxn struct {
	CorrelationID   int64
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []TP
	// FromBroker marks the leader's implicit add (KIP-890 part 2).
	FromBroker bool
}

func (m AddPartitionsToTxn) String() string {
	return fmt.Sprintf("AddPartitionsToTxn %s pid=%d epoch=%d %v", m.TransactionalID, m.ProducerID, m.ProducerEpoch, m.Partitions)
}

// AddPartitionsToTxnResponse answers AddPartitionsToTxn; one error for all partitions.
type AddPartitionsToTxnResponse struct {
	CorrelationID   int64
	TransactionalID string
	Error           Error
}

func (m AddPartitionsToTxnResponse) String() string {
	return fmt.Sprintf("AddPartitionsToTxnResponse %s %s", m.TransactionalID, m.Error)
}

// AddOffsetsToTxn adds the group's offsets partition to the transaction, before the
// producer sends TxnOffsetCommit to the group coordinator (sendOffsetsToTransaction).
type AddOffsetsToTxn struct {
	CorrelationID   int64
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Group           string
}

func (m AddOffsetsToTxn) String() string {
	return fmt.Sprintf("AddOffsetsToTxn %s pid=%d epoch=%d group=%s", m.TransactionalID, m.ProducerID, m.ProducerEpoch, m.Group)
}

// AddOffsetsToTxnResponse answers AddOffsetsToTxn.
type AddOffsetsToTxnResponse struct {
	CorrelationID   int64
	TransactionalID string
	Error           Error
}

func (m AddOffsetsToTxnResponse) String() string {
	return fmt.Sprintf("AddOffsetsToTxnResponse %s %s", m.TransactionalID, m.Error)
}

// TxnOffsetCommit commits a group's offsets inside a transaction: the group coordinator
// keeps them pending until the transaction's marker reaches its offsets partition, then
// makes them visible (commit) or drops them (abort). Generation, MemberID and InstanceID
// fence a member the group has moved on from (KIP-447).
type TxnOffsetCommit struct {
	CorrelationID   int64
	TransactionalID string
	Group           string
	ProducerID      int64
	ProducerEpoch   int16
	Generation      int32
	MemberID        string
	InstanceID      string
	Offsets         []PartitionOffset
}

func (m TxnOffsetCommit) String() string {
	return fmt.Sprintf("TxnOffsetCommit %s group=%s gen=%d %s", m.TransactionalID, m.Group, m.Generation, offsetList(m.Offsets))
}

// TxnOffsetCommitResponse answers TxnOffsetCommit.
type TxnOffsetCommitResponse struct {
	CorrelationID int64
	Group         string
	Error         Error
}

func (m TxnOffsetCommitResponse) String() string {
	return fmt.Sprintf("TxnOffsetCommitResponse %s %s", m.Group, m.Error)
}

// EndTxn commits or aborts the producer's open transaction. The coordinator answers once
// the PrepareCommit or PrepareAbort record is replicated; the markers follow.
type EndTxn struct {
	CorrelationID   int64
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
}

func (m EndTxn) String() string {
	return fmt.Sprintf("EndTxn %s pid=%d epoch=%d %s", m.TransactionalID, m.ProducerID, m.ProducerEpoch, commitWord(m.Commit))
}

// EndTxnResponse answers EndTxn. In the modern mode (KIP-890 part 2) the coordinator bumps
// the producer epoch at the end of every transaction and returns the new one here.
type EndTxnResponse struct {
	CorrelationID   int64
	TransactionalID string
	Error           Error
	ProducerID      int64
	ProducerEpoch   int16
}

func (m EndTxnResponse) String() string {
	if m.Error != None {
		return fmt.Sprintf("EndTxnResponse %s %s", m.TransactionalID, m.Error)
	}
	return fmt.Sprintf("EndTxnResponse %s epoch=%d", m.TransactionalID, m.ProducerEpoch)
}

// WriteTxnMarkers asks the leader of each listed partition to append the transaction's
// control batch (a COMMIT or ABORT marker). CoordinatorEpoch is the leader epoch of the
// coordinator's __transaction_state partition, so a deposed coordinator's late markers
// can be told apart.
type WriteTxnMarkers struct {
	CorrelationID    int64
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       []TP
}

func (m WriteTxnMarkers) String() string {
	return fmt.Sprintf("WriteTxnMarkers pid=%d epoch=%d %s %v", m.ProducerID, m.ProducerEpoch, commitWord(m.Commit), m.Partitions)
}

// MarkerResult is one partition's answer to WriteTxnMarkers.
type MarkerResult struct {
	TP    TP
	Error Error
}

// WriteTxnMarkersResponse answers WriteTxnMarkers, partition by partition. A partition is
// answered once its marker is replicated to the ISR (acks=all).
type WriteTxnMarkersResponse struct {
	CorrelationID int64
	ProducerID    int64
	Results       []MarkerResult
}

func (m WriteTxnMarkersResponse) String() string {
	return fmt.Sprintf("WriteTxnMarkersResponse pid=%d %v", m.ProducerID, m.Results)
}

func commitWord(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

// IsolationLevel is a consumer's isolation.level.
type IsolationLevel int8

const (
	// ReadUncommitted (Kafka's default) reads up to the high watermark, aborted records
	// included.
	ReadUncommitted IsolationLevel = 0
	// ReadCommitted reads up to the last stable offset and drops the records of aborted
	// transactions, using the aborted transactions the fetch response lists.
	ReadCommitted IsolationLevel = 1
)

func (l IsolationLevel) String() string {
	if l == ReadCommitted {
		return "read_committed"
	}
	return "read_uncommitted"
}

// AbortedTxn is one entry of a fetch response's aborted transactions: the producer, and
// the first offset of its aborted transaction in the partition (Kafka's
// FetchResponse.AbortedTransaction). A read_committed consumer drops that producer's
// transactional records from FirstOffset on, until the producer's ABORT marker.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// TxnConfig is the broker side of transactions.
type TxnConfig struct {
	// StateTopicPartitions is transaction.state.log.num.partitions (Kafka: 50; mqsim: 3,
	// as for the offsets topic).
	StateTopicPartitions int
	// StateTopicReplicationFactor is transaction.state.log.replication.factor (3), lowered
	// to the number of brokers.
	StateTopicReplicationFactor int
	// StateTopicMinISR is transaction.state.log.min.isr (2), at most the replication factor.
	StateTopicMinISR int
	// MaxTimeout is transaction.max.timeout.ms (15m): a producer asking for a longer
	// transaction.timeout.ms is refused.
	MaxTimeout time.Duration
	// AbortTimedOutInterval is transaction.abort.timed.out.transaction.cleanup.interval.ms
	// (10s): how often the coordinator aborts transactions open longer than their timeout.
	AbortTimedOutInterval time.Duration
	// MarkerRetryBackoff is how long the coordinator waits before re-sending markers a
	// leader did not take (Kafka's marker channel retries on its next poll).
	MarkerRetryBackoff time.Duration
}

// TransactionStateTopicConfig is the transaction state topic for a cluster of this
// configuration: rf lowered to the number of brokers, min.insync.replicas to rf.
func (c Config) TransactionStateTopicConfig() TopicConfig {
	rf := min(c.Txn.StateTopicReplicationFactor, c.Brokers)
	return TopicConfig{Name: TransactionStateTopic, Partitions: c.Txn.StateTopicPartitions, ReplicationFactor: rf,
		MinInsyncReplicas: max(1, min(c.Txn.StateTopicMinISR, rf))}
}

// validate checks the transaction settings.
func (t TxnConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if t.StateTopicPartitions < 1 || t.StateTopicPartitions > 1000 {
		bad("transaction.state.log.num.partitions=%d: want 1 to 1000", t.StateTopicPartitions)
	}
	if t.StateTopicReplicationFactor < 1 {
		bad("transaction.state.log.replication.factor=%d: want at least 1", t.StateTopicReplicationFactor)
	}
	if t.StateTopicMinISR < 1 {
		bad("transaction.state.log.min.isr=%d: want at least 1", t.StateTopicMinISR)
	}
	if t.MaxTimeout <= 0 {
		bad("transaction.max.timeout.ms=%s: must be positive", t.MaxTimeout)
	}
	if t.AbortTimedOutInterval <= 0 {
		bad("transaction.abort.timed.out.transaction.cleanup.interval.ms=%s: must be positive", t.AbortTimedOutInterval)
	}
	if t.MarkerRetryBackoff <= 0 {
		bad("transaction marker retry backoff=%s: must be positive", t.MarkerRetryBackoff)
	}
	return errors.Join(errs...)
}

// validateTransactional checks a producer's transaction settings against the brokers'.
func (p ProducerConfig) validateTransactional(t TxnConfig) error {
	if p.TransactionalID == "" {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// KafkaProducer: a transactional.id requires idempotence.
	if !p.Idempotence {
		bad("transactional.id=%s needs enable.idempotence=true", p.TransactionalID)
	}
	if p.TransactionTimeout <= 0 || p.TransactionTimeout > t.MaxTimeout {
		bad("transaction.timeout.ms=%s: want above 0 and at most transaction.max.timeout.ms=%s", p.TransactionTimeout, t.MaxTimeout)
	}
	return errors.Join(errs...)
}
