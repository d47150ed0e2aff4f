package proto

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"mqsim/model/wal"
	"mqsim/sim"
)

// Config is a whole cluster's configuration: Kafka's settings under Kafka's names, with
// Kafka's defaults unless a comment says why not. Validate it before building anything.
type Config struct {
	Brokers int // number of brokers, b1..bN
	// Controllers is the number of controller nodes: 1 (the default) is the single
	// controller "ctl"; more run a KRaft-style Raft quorum c1..cN over the metadata log,
	// whose leader is the active controller.
	Controllers int
	// Quorum is the quorum controllers' timing (Controllers > 1).
	Quorum QuorumConfig
	Broker BrokerConfig
	Topic  TopicConfig // defaults for new topics
	// Producer and Consumer are the defaults for clients.
	Producer ProducerConfig
	Consumer ConsumerConfig
	// Group is the broker side of consumer groups: the coordinator and its offsets topic.
	Group GroupConfig
	// Txn is the broker side of transactions: the transaction coordinator and its state
	// topic.
	Txn TxnConfig
	// Share is the broker side of share groups (KIP-932): the share-partition leaders'
	// locks and limits, and the share coordinators' state topic.
	Share ShareConfig
	// Bugs turns on deliberate, realistic mistakes for the checkers to catch. All off by
	// default.
	Bugs Bugs
	// Legacy switches Kafka's replication fixes back off, one at a time (legacy.go).
	Legacy Legacy
}

// BrokerConfig is the broker and controller side.
type BrokerConfig struct {
	// ReplicaLagTimeMax is replica.lag.time.max.ms (30s): a follower that has not caught up
	// for this long leaves the ISR.
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms (500ms): how long a fetch with nothing
	// new waits at the leader before it returns empty.
	ReplicaFetchWaitMax time.Duration
	// ReplicaFetchBackoff is replica.fetch.backoff.ms (1s): a follower's pause after a
	// fetch error.
	ReplicaFetchBackoff time.Duration
	// HeartbeatInterval is broker.heartbeat.interval.ms (2s).
	HeartbeatInterval time.Duration
	// SessionTimeout is broker.session.timeout.ms (9s): the controller fences a broker it
	// has not heard from for this long.
	SessionTimeout time.Duration
	// ReplicaSocketTimeout is replica.socket.timeout.ms (30s): a follower whose fetch got
	// no answer for this long sends another.
	ReplicaSocketTimeout time.Duration
	// ReplicaFetchMaxBytes is replica.fetch.max.bytes (1 MiB).
	ReplicaFetchMaxBytes int
	// Log is the write-ahead log: segment size and age, retention, flush policy.
	Log wal.Config
	// Truncation is how a follower finds where its log diverges from the leader's.
	Truncation TruncationMode
	// EligibleLeaderReplicas is KIP-966's feature eligible.leader.replicas.version=1: on by
	// default for clusters formatted at Kafka 4.1 or later (opt-in in 4.0). Off, only ISR
	// members are electable and the last ISR member stays in the ISR of an offline
	// partition (the R4 "last replica standing" loss).
	EligibleLeaderReplicas bool
	// UncleanElectionInterval is unclean.leader.election.interval.ms (internal, 5m): how
	// often the KRaft controller looks for leaderless partitions of topics that allow
	// unclean election (QuorumController.maybeScheduleNextElectUncleanLeaders).
	UncleanElectionInterval time.Duration
	// RetentionCheckInterval is log.retention.check.interval.ms (5m): how often the broker
	// applies Log's retention, when it has any (patterns.go).
	RetentionCheckInterval time.Duration
	// CleanerBackoff is log.cleaner.backoff.ms (15s): how often the broker's log cleaner
	// looks for logs to compact, when the log's cleanup.policy compacts (cleaner.go).
	CleanerBackoff time.Duration
	// LeaderImbalanceCheck is how often the controller elects the preferred replica of
	// every partition it does not lead (auto.leader.rebalance.enable with
	// leader.imbalance.check.interval.seconds; Kafka: on, every 300s). 0, mqsim's default,
	// is off, so that no run changes unless it asks.
	LeaderImbalanceCheck time.Duration
}

// QuorumConfig is the controller quorum's side (KRaft's controller.quorum.* settings).
type QuorumConfig struct {
	// ElectionTimeout is controller.quorum.election.timeout.ms (1s): a controller that
	// hears from no leader for a random time in [ElectionTimeout, 2*ElectionTimeout)
	// starts an election, and a leader that has not heard from a majority for that long
	// steps down. Raft ticks every ElectionTimeout/20; the leader heartbeats every 4 ticks.
	ElectionTimeout time.Duration
	// SnapshotEvery is how many metadata log entries a controller applies between
	// snapshots (KRaft counts bytes: metadata.log.max.record.bytes.between.snapshots).
	SnapshotEvery int
}

// TruncationMode names the era of Kafka's follower truncation rule.
type TruncationMode string

const (
	// TruncateByEpoch is the modern rule: the leader compares the follower's last fetched
	// epoch with its epoch cache and returns the diverging epoch (KIP-101/279/320, Kafka
	// 2.7+ truncate-on-fetch).
	TruncateByEpoch TruncationMode = "epoch"
	// TruncateToHW is Kafka before 0.11: a follower that restarts or changes leader cuts its
	// log to its own high watermark. It loses acknowledged records (KIP-101).
	TruncateToHW TruncationMode = "hw"
)

// TopicConfig is one topic's settings.
type TopicConfig struct {
	Name       string
	Partitions int
	// ReplicationFactor is the number of replicas of each partition.
	ReplicationFactor int
	// MinInsyncReplicas is min.insync.replicas (1).
	MinInsyncReplicas int
	// UncleanLeaderElection is unclean.leader.election.enable (false since Kafka 0.11).
	UncleanLeaderElection bool
}

func (t TopicConfig) String() string {
	return fmt.Sprintf("%s partitions=%d rf=%d min-isr=%d unclean=%t", t.Name, t.Partitions, t.ReplicationFactor, t.MinInsyncReplicas, t.UncleanLeaderElection)
}

// ProducerConfig is a producer's settings.
type ProducerConfig struct {
	Acks Acks // acks (all since Kafka 3.0)
	// Idempotence is enable.idempotence (true since Kafka 3.0).
	Idempotence bool
	// BatchSize is batch.size in bytes (16 KiB).
	BatchSize int
	// Linger is linger.ms (5ms since Kafka 4.0; 0 before).
	Linger time.Duration
	// Compression is compression.type (none): a batch's records travel and are stored
	// compressed by this codec (compression.go); "" is none.
	Compression string
	// MaxInFlight is max.in.flight.requests.per.connection (5).
	MaxInFlight int
	// Retries is retries (effectively unbounded: Kafka's default is MaxInt32; mqsim uses
	// 1000, which delivery.timeout.ms ends first anyway).
	Retries int
	// RetryBackoff is retry.backoff.ms (100ms).
	RetryBackoff time.Duration
	// RequestTimeout is request.timeout.ms (30s).
	RequestTimeout time.Duration
	// DeliveryTimeout is delivery.timeout.ms (2m): a send not acknowledged by then fails.
	DeliveryTimeout time.Duration
	// Partitioner is "default" (murmur2 hash of the key; sticky without a key) or
	// "round-robin".
	Partitioner string
	// MetadataMaxAge is metadata.max.age.ms (5m): metadata older than this is refreshed,
	// so the producer sees partitions added to a topic. mqsim checks it when the
	// application sends (Kafka's sender thread also wakes for it when idle); 0 never
	// refreshes for age.
	MetadataMaxAge time.Duration
	// TransactionalID is transactional.id (none): a producer with one runs transactions
	// (begin, commit, abort) and fences older instances with the same id.
	TransactionalID string
	// TransactionTimeout is transaction.timeout.ms (1m): the coordinator aborts a
	// transaction left open longer.
	TransactionTimeout time.Duration
	// BufferMemory is buffer.memory in bytes (32 MiB): what the accumulator may hold.
	// Each batch takes max(batch.size, its first record) when it is made and gives it
	// back when it completes, as Kafka's BufferPool (model/client/backpressure.go).
	BufferMemory int64
	// MaxBlock is max.block.ms (60s): how long a send waits for buffer memory before it
	// fails.
	MaxBlock time.Duration
}

// Codec is the producer's compression.type.
func (p ProducerConfig) Codec() (Codec, error) {
	if p.Compression == "" {
		return Codecs[0], nil
	}
	return CodecNamed(p.Compression)
}

// ConsumerConfig is a consumer's settings.
type ConsumerConfig struct {
	// AutoOffsetReset is auto.offset.reset: "earliest", "latest" or "none" (latest).
	AutoOffsetReset string
	// FetchMaxWait is fetch.max.wait.ms (500ms).
	FetchMaxWait time.Duration
	// MaxPollRecords is max.poll.records (500).
	MaxPollRecords int
	// ProcessingTime is how long the application takes per record (0): mqsim's stand-in
	// for the work between polls.
	ProcessingTime time.Duration
	// RequestTimeout is request.timeout.ms (30s).
	RequestTimeout time.Duration
	// MetadataMaxAge is metadata.max.age.ms (5m). A classic group's leader refreshes
	// older metadata at its next heartbeat, and rejoins when a subscribed topic's
	// partition count changed since it assigned (ConsumerCoordinator's metadata
	// snapshot); 0 never refreshes for age.
	MetadataMaxAge time.Duration
	// Isolation is isolation.level (read_uncommitted).
	Isolation IsolationLevel

	// The rest applies to a consumer that subscribes as a member of a group.

	// SessionTimeout is session.timeout.ms (45s since Kafka 3.0): the coordinator removes a
	// member it has not heard from for this long.
	SessionTimeout time.Duration
	// HeartbeatInterval is heartbeat.interval.ms (3s).
	HeartbeatInterval time.Duration
	// MaxPollInterval is max.poll.interval.ms (5m): a member whose processing of one poll's
	// records takes longer leaves the group itself (KIP-62).
	MaxPollInterval time.Duration
	// RebalanceTimeout is how long the coordinator waits for members to rejoin; Kafka's
	// consumer sends max.poll.interval.ms, which is what 0 means.
	RebalanceTimeout time.Duration
	// Commit says when the consumer commits its positions: CommitAuto (enable.auto.commit,
	// Kafka's default), or manually after or before processing each poll's records, or only
	// when told to (CommitManual).
	Commit CommitMode
	// AutoCommitInterval is auto.commit.interval.ms (5s).
	AutoCommitInterval time.Duration
	// Assignor is partition.assignment.strategy, by name ("range": Kafka's first default).
	Assignor string
	// Protocol is the rebalance protocol: "eager" (revoke everything, stop the world) or
	// "cooperative" (KIP-429: revoke only what moves, in two rounds).
	Protocol string
	// GroupProtocol is group.protocol: "classic" (JoinGroup/SyncGroup, the default in
	// Kafka 4.0's client too) or "consumer" (KIP-848: ConsumerGroupHeartbeat, server-side
	// assignment; Assignor and Protocol are then unused). "" means classic.
	GroupProtocol string
	// RemoteAssignor is group.remote.assignor under the consumer protocol: "uniform" or
	// "range" ("" = the coordinator's default, uniform).
	RemoteAssignor string

	// Patterns are the delivery-pattern settings: poison records, retry topics, dead
	// letters, tag filter (patterns.go).
	Patterns ConsumerPatterns
}

// CommitMode is when a group consumer commits its offsets.
type CommitMode string

const (
	// CommitAuto commits every auto.commit.interval.ms at the start of a poll, and before a
	// rebalance takes partitions away: the records of earlier polls are processed by then
	// (at-least-once).
	CommitAuto CommitMode = "auto"
	// CommitAfter commits synchronously once a poll's records are processed
	// (at-least-once).
	CommitAfter CommitMode = "after"
	// CommitBefore commits synchronously as soon as a poll returns, before processing
	// (at-most-once).
	CommitBefore CommitMode = "before"
	// CommitManual commits only when told to (the Commit command).
	CommitManual CommitMode = "manual"
)

// Rebalance protocols.
const (
	ProtocolEager       = "eager"
	ProtocolCooperative = "cooperative"
)

// EffectiveRebalanceTimeout is the rebalance timeout a member sends: RebalanceTimeout, or
// max.poll.interval.ms when that is 0.
func (c ConsumerConfig) EffectiveRebalanceTimeout() time.Duration {
	if c.RebalanceTimeout > 0 {
		return c.RebalanceTimeout
	}
	return c.MaxPollInterval
}

// GroupConfig is the coordinator's side of consumer groups.
type GroupConfig struct {
	// OffsetsTopicPartitions is offsets.topic.num.partitions (Kafka: 50; mqsim: 3, so a
	// scenario can follow each one).
	OffsetsTopicPartitions int
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor (3), lowered to the
	// number of brokers.
	OffsetsTopicReplicationFactor int
	// InitialRebalanceDelay is group.initial.rebalance.delay.ms (3s): the first rebalance of
	// an empty group waits this long for more members.
	InitialRebalanceDelay time.Duration
	// OffsetCommitTimeout is offsets.commit.timeout.ms (5s): a commit not replicated by
	// then is answered REQUEST_TIMED_OUT.
	OffsetCommitTimeout time.Duration
	// MinSessionTimeout and MaxSessionTimeout are group.min.session.timeout.ms (6s) and
	// group.max.session.timeout.ms (30m): a member asking for a session outside is refused.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// ConsumerSessionTimeout and ConsumerHeartbeatInterval are
	// group.consumer.session.timeout.ms (45s) and group.consumer.heartbeat.interval.ms
	// (5s): under the consumer protocol (KIP-848) the coordinator, not the member, sets
	// them. 0 means Kafka's default.
	ConsumerSessionTimeout    time.Duration
	ConsumerHeartbeatInterval time.Duration
}

// ConsumerSession is group.consumer.session.timeout.ms, with Kafka's default for 0.
func (g GroupConfig) ConsumerSession() time.Duration {
	if g.ConsumerSessionTimeout > 0 {
		return g.ConsumerSessionTimeout
	}
	return 45 * time.Second
}

// ConsumerHeartbeat is group.consumer.heartbeat.interval.ms, with Kafka's default for 0.
func (g GroupConfig) ConsumerHeartbeat() time.Duration {
	if g.ConsumerHeartbeatInterval > 0 {
		return g.ConsumerHeartbeatInterval
	}
	return 5 * time.Second
}

// OffsetsTopic is the name of the internal topic that holds committed offsets and group
// metadata.
const OffsetsTopic = "__consumer_offsets"

// OffsetsTopicConfig is the offsets topic for a cluster of this configuration: rf lowered to
// the number of brokers, min.insync.replicas as the cluster's topics have it (at most rf).
func (c Config) OffsetsTopicConfig() TopicConfig {
	rf := min(c.Group.OffsetsTopicReplicationFactor, c.Brokers)
	return TopicConfig{Name: OffsetsTopic, Partitions: c.Group.OffsetsTopicPartitions, ReplicationFactor: rf,
		MinInsyncReplicas: max(1, min(c.Topic.MinInsyncReplicas, rf))}
}

// Bugs are deliberate mistakes a scenario or swarm can plant. Each is realistic: a bug a
// real broker had, or an easy one to write.
type Bugs struct {
	// AckBeforeFsync acknowledges acks=all writes once replicated to memory, even under a
	// flush-every-batch policy that promises they are on disk everywhere.
	AckBeforeFsync bool
	// HWFromLeaderOnly advances the high watermark from the leader's own log end, ignoring
	// followers.
	HWFromLeaderOnly bool
	// ReadsBeyondHW lets consumers read past the high watermark.
	ReadsBeyondHW bool
	// NoIdempotentDedup stores retried batches again instead of recognising them.
	NoIdempotentDedup bool
	// NeverShrinkISR keeps lagging followers in the ISR forever.
	NeverShrinkISR bool
	// NoEpochBump keeps the leader epoch unchanged when the controller elects a new leader.
	NoEpochBump bool
	// OffsetsAcks1 acknowledges offset commits and group metadata once the coordinator
	// appended them to its own log, before the followers of the offsets partition have them.
	OffsetsAcks1 bool
	// NoRevokeFirst hands a moving partition to its new owner in the same cooperative
	// rebalance that takes it from the old one, before the old owner revoked it. Under the
	// consumer protocol (KIP-848) the coordinator's reconciliation does the same: it
	// assigns a partition another member still owns.
	NoRevokeFirst bool
	// NoGenerationFencing accepts offset commits from any member and generation.
	NoGenerationFencing bool
	// CommitBeforeProcessing makes a consumer configured to commit after processing commit
	// as soon as a poll returns.
	CommitBeforeProcessing bool
	// AlterPartitionForgetsPending makes a leader drop its pending ISR change on any
	// AlterPartition error, though the controller may have applied it.
	AlterPartitionForgetsPending bool
	// MarkersBeforePrepare makes the transaction coordinator send its markers as soon as
	// it appended PrepareCommit or PrepareAbort, before the record is replicated: a
	// coordinator failover can then forget a transaction some partitions committed.
	MarkersBeforePrepare bool
	// LSOFromHW makes a partition's last stable offset its high watermark, ignoring open
	// transactions: read_committed consumers read records whose transaction may abort.
	LSOFromHW bool
	// ReadCommittedKeepsAborted makes a read_committed fetch list no aborted transactions,
	// so the consumer keeps the records of aborted transactions.
	ReadCommittedKeepsAborted bool
	// NoTxnOffsetFencing makes the group coordinator accept TxnOffsetCommit from any
	// member, generation and producer epoch (KIP-447's fencing off).
	NoTxnOffsetFencing bool
	// ShareAckBeforePersist makes a share-partition leader apply and answer share
	// acknowledgements at once, before its WriteShareGroupState is persisted: a leader
	// failover before the write lands delivers an accepted record again.
	ShareAckBeforePersist bool
	// ShareLockNeverExpires makes a share-partition leader never end an acquisition
	// lock: a record stays with the member that acquired it until that member
	// acknowledges or releases it, so a crashed consumer's records are never delivered
	// again. (Kafka also releases them at once when the connection closes; mqsim has no
	// connections, so the lock's expiry is how a crashed consumer's records come back.)
	ShareLockNeverExpires bool
}

// Names lists the bugs that are on, by flag name.
func (b Bugs) Names() []string {
	var on []string
	for _, d := range BugList {
		if *d.Field(&b) {
			on = append(on, d.Name)
		}
	}
	return on
}

// BugInfo describes one plantable bug.
type BugInfo struct {
	Name  string
	What  string
	Field func(*Bugs) *bool
}

// BugList is every plantable bug, in a fixed order.
var BugList = []BugInfo{
	{"ack-before-fsync", "acks=all answered before the replicas' fsync, though the flush policy promises durability", func(b *Bugs) *bool { return &b.AckBeforeFsync }},
	{"hw-from-leader-only", "the high watermark follows the leader's log end, not the ISR's", func(b *Bugs) *bool { return &b.HWFromLeaderOnly }},
	{"reads-beyond-hw", "consumers may read records above the high watermark", func(b *Bugs) *bool { return &b.ReadsBeyondHW }},
	{"no-idempotent-dedup", "a retried idempotent batch is appended again", func(b *Bugs) *bool { return &b.NoIdempotentDedup }},
	{"never-shrink-isr", "lagging followers are never removed from the ISR", func(b *Bugs) *bool { return &b.NeverShrinkISR }},
	{"no-epoch-bump", "a new leader keeps the old leader epoch", func(b *Bugs) *bool { return &b.NoEpochBump }},
	{"offsets-acks-1", "offset commits are acknowledged after the coordinator's own append, before replication", func(b *Bugs) *bool { return &b.OffsetsAcks1 }},
	{"no-revoke-first", "cooperative (and KIP-848) rebalances hand a partition to its new owner before the old owner revoked it", func(b *Bugs) *bool { return &b.NoRevokeFirst }},
	{"no-generation-fencing", "the coordinator accepts offset commits from stale generations and removed members", func(b *Bugs) *bool { return &b.NoGenerationFencing }},
	{"commit-before-processing", "a consumer configured to commit after processing commits before it", func(b *Bugs) *bool { return &b.CommitBeforeProcessing }},
	{"alter-partition-forgets-pending", "a leader drops its pending ISR change on any AlterPartition error, though the controller may have applied it", func(b *Bugs) *bool { return &b.AlterPartitionForgetsPending }},
	{"markers-before-prepare", "the transaction coordinator writes markers before its PrepareCommit/PrepareAbort record is replicated", func(b *Bugs) *bool { return &b.MarkersBeforePrepare }},
	{"lso-from-hw", "the last stable offset is the high watermark, ignoring open transactions", func(b *Bugs) *bool { return &b.LSOFromHW }},
	{"read-committed-keeps-aborted", "read_committed fetches list no aborted transactions, so consumers keep aborted records", func(b *Bugs) *bool { return &b.ReadCommittedKeepsAborted }},
	{"no-txn-offset-fencing", "the group coordinator accepts TxnOffsetCommit from stale members, generations and producer epochs", func(b *Bugs) *bool { return &b.NoTxnOffsetFencing }},
	{"share-ack-before-persist", "a share-partition leader applies and answers acknowledgements before their state write is persisted", func(b *Bugs) *bool { return &b.ShareAckBeforePersist }},
	{"share-lock-never-expires", "a share-partition leader never ends acquisition locks, so a crashed consumer's records are never released", func(b *Bugs) *bool { return &b.ShareLockNeverExpires }},
}

// Set turns a bug on by name.
func (b *Bugs) Set(name string) error {
	for _, d := range BugList {
		if d.Name == name {
			*d.Field(b) = true
			return nil
		}
	}
	var names []string
	for _, d := range BugList {
		names = append(names, d.Name)
	}
	return fmt.Errorf("unknown bug %q; want one of %s", name, strings.Join(names, ", "))
}

// DefaultConfig is a 3-broker cluster with Kafka's defaults, except where a simulator
// needs smaller numbers (segment sizes, noted in wal.SmallConfig).
func DefaultConfig() Config {
	return Config{
		Brokers:     3,
		Controllers: 1,
		Quorum:      QuorumConfig{ElectionTimeout: time.Second, SnapshotEvery: 100},
		Broker: BrokerConfig{
			ReplicaLagTimeMax:    30 * time.Second,
			ReplicaFetchWaitMax:  500 * time.Millisecond,
			ReplicaFetchBackoff:  time.Second,
			HeartbeatInterval:    2 * time.Second,
			SessionTimeout:       9 * time.Second,
			ReplicaSocketTimeout: 30 * time.Second,
			ReplicaFetchMaxBytes: 1 << 20,
			Log:                  wal.SmallConfig(),
			Truncation:           TruncateByEpoch,

			EligibleLeaderReplicas:  true,
			UncleanElectionInterval: 5 * time.Minute,

			RetentionCheckInterval: DefaultRetentionCheckInterval,
			CleanerBackoff:         15 * time.Second,
		},
		Topic: TopicConfig{Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 1},
		Producer: ProducerConfig{
			Acks: AcksAll, Idempotence: true, BatchSize: 16 << 10, Linger: 5 * time.Millisecond,
			MaxInFlight: 5, Retries: 1000, RetryBackoff: 100 * time.Millisecond,
			RequestTimeout: 30 * time.Second, DeliveryTimeout: 2 * time.Minute, Partitioner: "default",
			TransactionTimeout: time.Minute, MetadataMaxAge: 5 * time.Minute,
			BufferMemory: 32 << 20, MaxBlock: time.Minute,
		},
		Consumer: ConsumerConfig{
			AutoOffsetReset: "latest", FetchMaxWait: 500 * time.Millisecond, MaxPollRecords: 500,
			RequestTimeout: 30 * time.Second, MetadataMaxAge: 5 * time.Minute,
			SessionTimeout: 45 * time.Second, HeartbeatInterval: 3 * time.Second, MaxPollInterval: 5 * time.Minute,
			Commit: CommitAuto, AutoCommitInterval: 5 * time.Second, Assignor: "range", Protocol: ProtocolEager,
		},
		Group: GroupConfig{
			OffsetsTopicPartitions: 3, OffsetsTopicReplicationFactor: 3, InitialRebalanceDelay: 3 * time.Second,
			OffsetCommitTimeout: 5 * time.Second, MinSessionTimeout: 6 * time.Second, MaxSessionTimeout: 30 * time.Minute,
		},
		Txn: TxnConfig{
			StateTopicPartitions: 3, StateTopicReplicationFactor: 3, StateTopicMinISR: 2,
			MaxTimeout: 15 * time.Minute, AbortTimedOutInterval: 10 * time.Second, MarkerRetryBackoff: 100 * time.Millisecond,
		},
		Share: DefaultShareConfig(),
	}
}

// Validate reports every invalid value, naming it and saying why.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Brokers < 1 || c.Brokers > 64 {
		bad("brokers=%d: want 1 to 64", c.Brokers)
	}
	if c.Controllers < 1 || c.Controllers > 9 {
		bad("controllers=%d: want 1 (a single controller) to 9 (a quorum)", c.Controllers)
	}
	if c.Controllers > 1 {
		if c.Quorum.ElectionTimeout < 20*time.Millisecond {
			bad("controller.quorum.election.timeout.ms=%s: want at least 20ms", c.Quorum.ElectionTimeout)
		}
		if c.Quorum.SnapshotEvery < 1 {
			bad("metadata snapshot interval=%d entries: want at least 1", c.Quorum.SnapshotEvery)
		}
	}
	b := c.Broker
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"replica.lag.time.max.ms", b.ReplicaLagTimeMax}, {"replica.fetch.wait.max.ms", b.ReplicaFetchWaitMax},
		{"replica.fetch.backoff.ms", b.ReplicaFetchBackoff}, {"replica.socket.timeout.ms", b.ReplicaSocketTimeout}, {"broker.heartbeat.interval.ms", b.HeartbeatInterval},
		{"broker.session.timeout.ms", b.SessionTimeout}, {"linger.ms", c.Producer.Linger},
		{"retry.backoff.ms", c.Producer.RetryBackoff}, {"request.timeout.ms", c.Producer.RequestTimeout},
		{"delivery.timeout.ms", c.Producer.DeliveryTimeout}, {"metadata.max.age.ms", c.Producer.MetadataMaxAge}, {"consumer metadata.max.age.ms", c.Consumer.MetadataMaxAge}, {"fetch.max.wait.ms", c.Consumer.FetchMaxWait},
		{"processing time", c.Consumer.ProcessingTime},
		{"leader.imbalance.check.interval", b.LeaderImbalanceCheck},
	} {
		if d.v < 0 {
			bad("%s=%s: must not be negative", d.name, d.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"broker.heartbeat.interval.ms", b.HeartbeatInterval}, {"heartbeat.interval.ms", c.Consumer.HeartbeatInterval},
		{"auto.commit.interval.ms", c.Consumer.AutoCommitInterval}, {"log.retention.check.interval.ms", b.RetentionCheckInterval}, {"log.cleaner.backoff.ms", b.CleanerBackoff},
		{"request.timeout.ms (producer)", c.Producer.RequestTimeout}, {"request.timeout.ms (consumer)", c.Consumer.RequestTimeout},
	} {
		if err := sim.CheckTimerPeriod(d.name, d.v); err != nil {
			bad("%v", err)
		}
	}
	if b.ReplicaLagTimeMax < 2*sim.MinTimerPeriod {
		bad("replica.lag.time.max.ms=%s: want at least %s (the leader checks its ISR every half of it; a shorter period would spend the run's steps on the check)", b.ReplicaLagTimeMax, 2*sim.MinTimerPeriod)
	}
	if b.HeartbeatInterval <= 0 || b.SessionTimeout <= b.HeartbeatInterval {
		bad("broker.session.timeout.ms=%s must exceed broker.heartbeat.interval.ms=%s", b.SessionTimeout, b.HeartbeatInterval)
	}
	if b.UncleanElectionInterval <= 0 {
		bad("unclean.leader.election.interval.ms=%s: must be positive", b.UncleanElectionInterval)
	}
	if b.Truncation != TruncateByEpoch && b.Truncation != TruncateToHW {
		bad("truncation=%q: want epoch or hw", b.Truncation)
	}
	if err := b.Log.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Topic.Validate(c.Brokers); err != nil {
		errs = append(errs, err)
	}
	p := c.Producer
	switch p.Acks {
	case AcksNone, AcksLeader, AcksAll:
	default:
		bad("acks=%d: want 0, 1 or all", p.Acks)
	}
	// Kafka's producer refuses these (ConfigException) when enable.idempotence is set
	// explicitly, as mqsim's always is (ProducerConfig.postProcessAndValidateIdempotenceConfigs;
	// left unset, 3.x silently turned idempotence off instead).
	if p.Idempotence && p.Acks != AcksAll {
		bad("enable.idempotence=true needs acks=all (got acks=%s): otherwise idempotence cannot be guaranteed", p.Acks)
	}
	if p.Idempotence && (p.MaxInFlight < 1 || p.MaxInFlight > 5) {
		bad("max.in.flight.requests.per.connection=%d: the idempotent producer allows at most 5", p.MaxInFlight)
	}
	if p.Idempotence && p.Retries == 0 {
		bad("retries=0: the idempotent producer needs retries to be non-zero")
	}
	// KafkaProducer.configureDeliveryTimeout: a delivery timeout shorter than one linger
	// plus one request could expire every batch before its first answer.
	if p.DeliveryTimeout < p.Linger+p.RequestTimeout {
		bad("delivery.timeout.ms=%s should be equal to or larger than linger.ms + request.timeout.ms (%s + %s)", p.DeliveryTimeout, p.Linger, p.RequestTimeout)
	}
	if p.MaxInFlight < 1 {
		bad("max.in.flight.requests.per.connection=%d: want at least 1", p.MaxInFlight)
	}
	if p.BatchSize < 1 {
		bad("batch.size=%d: want at least 1", p.BatchSize)
	}
	// BufferPool.allocate refuses a batch larger than the whole pool: it would block forever.
	if p.BufferMemory < int64(p.BatchSize) {
		bad("buffer.memory=%d: want at least batch.size=%d (a batch takes batch.size bytes of it)", p.BufferMemory, p.BatchSize)
	}
	if p.MaxBlock < 0 {
		bad("max.block.ms=%s: must not be negative", p.MaxBlock)
	}
	if p.Retries < 0 {
		bad("retries=%d: must not be negative", p.Retries)
	}
	if _, err := p.Codec(); err != nil {
		errs = append(errs, err)
	}
	if p.Partitioner != "default" && p.Partitioner != "round-robin" {
		bad("partitioner=%q: want default or round-robin", p.Partitioner)
	}
	if err := c.Share.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Txn.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := p.validateTransactional(c.Txn); err != nil {
		errs = append(errs, err)
	}
	switch c.Consumer.AutoOffsetReset {
	case "earliest", "latest", "none":
	default:
		bad("auto.offset.reset=%q: want earliest, latest or none", c.Consumer.AutoOffsetReset)
	}
	if c.Consumer.MaxPollRecords < 1 {
		bad("max.poll.records=%d: want at least 1", c.Consumer.MaxPollRecords)
	} else if pt := c.Consumer.ProcessingTime; pt > 0 && int64(c.Consumer.MaxPollRecords) > int64(sim.MaxDuration/pt) {
		bad("processing time=%s per record x max.poll.records=%d: one poll's work would exceed %s, the longest duration the virtual clock allows", pt, c.Consumer.MaxPollRecords, sim.MaxDuration)
	}
	if err := c.Consumer.ValidateGroup(c.Group); err != nil {
		errs = append(errs, err)
	}
	if err := c.validatePatterns(); err != nil {
		errs = append(errs, err)
	}
	g := c.Group
	if g.OffsetsTopicPartitions < 1 || g.OffsetsTopicPartitions > 1000 {
		bad("offsets.topic.num.partitions=%d: want 1 to 1000", g.OffsetsTopicPartitions)
	}
	if g.OffsetsTopicReplicationFactor < 1 {
		bad("offsets.topic.replication.factor=%d: want at least 1", g.OffsetsTopicReplicationFactor)
	}
	if g.InitialRebalanceDelay < 0 {
		bad("group.initial.rebalance.delay.ms=%s: must not be negative", g.InitialRebalanceDelay)
	}
	if g.OffsetCommitTimeout <= 0 {
		bad("offsets.commit.timeout.ms=%s: must be positive", g.OffsetCommitTimeout)
	}
	if g.MinSessionTimeout <= 0 || g.MaxSessionTimeout < g.MinSessionTimeout {
		bad("group.min.session.timeout.ms=%s, group.max.session.timeout.ms=%s: want 0 < min <= max", g.MinSessionTimeout, g.MaxSessionTimeout)
	}
	return errors.Join(errs...)
}

// ValidateGroup checks the group member settings, against the coordinator's bounds on
// session timeouts.
func (c ConsumerConfig) ValidateGroup(g GroupConfig) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.HeartbeatInterval <= 0 || c.HeartbeatInterval >= c.SessionTimeout {
		bad("heartbeat.interval.ms=%s must be positive and below session.timeout.ms=%s", c.HeartbeatInterval, c.SessionTimeout)
	}
	if c.SessionTimeout < g.MinSessionTimeout || c.SessionTimeout > g.MaxSessionTimeout {
		bad("session.timeout.ms=%s: the coordinator allows %s to %s (group.min/max.session.timeout.ms)", c.SessionTimeout, g.MinSessionTimeout, g.MaxSessionTimeout)
	}
	if c.MaxPollInterval <= 0 {
		bad("max.poll.interval.ms=%s: must be positive", c.MaxPollInterval)
	}
	if c.RebalanceTimeout < 0 {
		bad("rebalance timeout=%s: must not be negative", c.RebalanceTimeout)
	}
	if c.AutoCommitInterval <= 0 {
		bad("auto.commit.interval.ms=%s: must be positive", c.AutoCommitInterval)
	}
	switch c.Commit {
	case CommitAuto, CommitAfter, CommitBefore, CommitManual:
	default:
		bad("commit=%q: want auto, after, before or manual", c.Commit)
	}
	switch c.Protocol {
	case ProtocolEager, ProtocolCooperative:
	default:
		bad("rebalance protocol=%q: want eager or cooperative", c.Protocol)
	}
	switch c.GroupProtocol {
	case "", GroupProtocolClassic, GroupProtocolConsumer:
	default:
		bad("group.protocol=%q: want classic or consumer", c.GroupProtocol)
	}
	switch c.RemoteAssignor {
	case "", "uniform", "range":
	default:
		bad("group.remote.assignor=%q: want uniform or range", c.RemoteAssignor)
	}
	if c.Assignor == "" {
		bad("partition.assignment.strategy is empty: want range, roundrobin, sticky or cooperative-sticky")
	}
	return errors.Join(errs...)
}

// Validate checks a topic against the number of brokers.
func (t TopicConfig) Validate(brokers int) error {
	var errs []error
	if t.Partitions < 1 || t.Partitions > 1000 {
		errs = append(errs, fmt.Errorf("partitions=%d: want 1 to 1000", t.Partitions))
	}
	if t.ReplicationFactor < 1 {
		errs = append(errs, fmt.Errorf("rf=%d: want at least 1", t.ReplicationFactor))
	} else if t.ReplicationFactor > brokers {
		errs = append(errs, fmt.Errorf("rf=%d is more than the %d brokers: each replica needs its own broker", t.ReplicationFactor, brokers))
	}
	if t.MinInsyncReplicas < 1 {
		errs = append(errs, fmt.Errorf("min-isr=%d: want at least 1", t.MinInsyncReplicas))
	} else if t.MinInsyncReplicas > t.ReplicationFactor {
		errs = append(errs, fmt.Errorf("min-isr=%d is more than rf=%d: no write with acks=all could ever succeed", t.MinInsyncReplicas, t.ReplicationFactor))
	}
	return errors.Join(errs...)
}
