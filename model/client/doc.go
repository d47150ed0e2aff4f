// Package client is mqsim's Kafka-style producer and consumer: state machines (sim.Node)
// driven by commands a scenario or test injects (Send, Assign, Poll, PollLoop), speaking
// package proto to brokers and the controller, and recording every operation in a
// history.Recorder for the checkers.
//
// Both clients learn partition leaders from MetadataResponse, asking one broker at a time
// and moving on when a broker is silent or stale. They refresh metadata on
// NOT_LEADER_OR_FOLLOWER, UNKNOWN/FENCED_LEADER_EPOCH, LEADER_NOT_AVAILABLE, unknown
// partitions and timeouts, and wait with a growing, bounded backoff while a partition has
// no leader.
//
// # Producer
//
// Records accumulate in per-partition batches, which go out when full (batch.size, counted
// as key plus value bytes), when linger.ms has passed, or when another batch waits behind
// them, with at most max.in.flight.requests.per.connection requests per broker. A request
// without an answer within request.timeout.ms closes the "connection": every request in
// flight to that broker is abandoned and its batch retried, as Kafka does; a late answer
// is ignored. Non-idempotent retries keep Kafka's behaviour on purpose: a retried batch
// whose first attempt landed is written twice (P1), and with several requests in flight a
// retried batch lands after later ones (P2). With idempotence the producer first gets a
// producer id from the controller, numbers each partition's batches (BaseSequence is the
// count of records sent to the partition before the batch), re-sends a retried batch with
// its sequence and, like Kafka's RecordAccumulator, only when no earlier batch of its
// partition is unresolved.
//
// Outcomes, per send (all records of a batch share one):
//
//   - ok(offset): a success answer; offset is the batch's base offset plus the record's
//     index. A duplicate the broker recognises is answered with the original offset, so it
//     is an ordinary ok. DUPLICATE_SEQUENCE_NUMBER (the broker knows the batch but not its
//     offset any more) is ok without an offset, and so is every acks=0 send, completed as
//     soon as it is handed to the network.
//   - fail: the batch certainly is not in the log: it was never sent, or every attempt was
//     refused before append (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS,
//     OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, ...), and then retries ran out,
//     delivery.timeout.ms passed, or the error is not retriable.
//   - info: some attempt may have been appended: it got no answer (request timeout or
//     disconnect), or an ambiguous error (REQUEST_TIMED_OUT, NETWORK_EXCEPTION,
//     NOT_ENOUGH_REPLICAS_AFTER_APPEND, KAFKA_STORAGE_ERROR), or it was in flight when
//     delivery.timeout.ms passed.
//
// OUT_OF_ORDER_SEQUENCE_NUMBER while an earlier batch of the partition is unresolved just
// means that batch has to land first: the batch is re-sent after it. On the earliest
// unresolved batch it is fatal for the batch: fail if this was its only attempt (the
// broker refused exactly this request), info if earlier attempts went unanswered. Any
// idempotent batch that had a sequence and ends without success leaves a gap the broker
// would refuse forever, so the producer stops sending, waits for its requests in flight to
// end, asks for a new producer id (Kafka's epoch bump) and restarts sequences at 0; batches
// re-sent under the new id may duplicate an earlier attempt, as in Kafka.
//
// A send with Partition -1 to a topic whose partition count is not known yet waits for
// metadata, and is recorded in the history only once the partitioner has placed it (the
// history names a partition for every send). If no metadata comes within
// delivery.timeout.ms it is counted as failed and never recorded.
//
// # Consumer
//
// A consumer in assign mode (no group yet) keeps a position per partition. A poll finds
// missing positions with ListOffsets (earliest with FromBeginning, else auto.offset.reset;
// "none" fails the poll), fetches every partition from its leader with the leader epoch it
// knows and the epoch of the last record consumed, and returns at most max.poll.records
// records, then waits ProcessingTime per record before completing. A DivergingEpoch below
// the position means the log was truncated under the consumer (an unclean election): it
// records a TruncationDetected event and resumes at the leader's end of that epoch, or fails the poll under
// auto.offset.reset=none (Kafka's LogTruncationException). OFFSET_OUT_OF_RANGE resets per
// policy at the next poll, or fails the poll under "none". Any other fetch error or timeout
// makes the poll info, with the records the other partitions returned (a group member's
// poll that returned records is ok: its application processes and commits them). Records
// fetched beyond max.poll.records are dropped and fetched again, not buffered. A group
// member commits each position with the leader epoch of the last record consumed, and one
// starting from a committed offset fetches from no leader of an older epoch than that
// offset's (KIP-320): it refreshes its metadata instead, for a stale leader's shorter log
// would answer OFFSET_OUT_OF_RANGE and send the position, and the group's offset, back.
//
// # Group consumer
//
// After Subscribe the consumer is a member of a consumer group. The group protocol lives
// in its own type (member, member.go), which reaches the consumer only through the small
// memberConsumer interface (its partitions, their positions, the application's poll), as
// model/group's coordinator reaches its broker through Host; group.go holds the consumer's
// side. The member finds the group's coordinator, joins (eager or cooperative protocol, dynamic or static
// membership), runs the assignor when it leads, heartbeats, starts each new partition at
// the group's committed offset (or per auto.offset.reset), and commits per its commit mode:
// auto (every auto.commit.interval.ms, and before giving partitions up), after or before
// processing each poll, or on the Commit command. A poll whose processing outlasts
// max.poll.interval.ms makes the member leave; its later commit is fenced. The history gets
// subscribe, assign (one per change of partitions), poll (with the group) and commit ops.
//
// # Transactions
//
// A producer with a transactional.id runs Kafka's TransactionManager (transactional.go):
// it finds its transaction coordinator, gets its producer id and a bumped epoch there at
// start (a restarted instance fences the one before), and runs the transactions that
// BeginTxn, CommitTxn and AbortTxn open and close; SendOffsets is sendOffsetsToTransaction.
// Its sends are micro-ops of one txn history op per transaction (ok: committed, fail:
// aborted, info: unknown), never send ops of their own. A consumer's isolation.level
// (readcommitted.go) decides what it sees: read_committed reads to the last stable offset
// and drops aborted transactions' records; no consumer returns control records. A Pipeline
// (pipeline.go) is a consume-transform-produce application, transactional or not.
//
// # MirrorMaker 2
//
// A Mirror (mirror.go) is a MirrorMaker 2 replicator (KIP-382) between two clusters of one
// world: the MirrorSourceConnector's task and the MirrorCheckpointConnector's in one node,
// a consumer of the source cluster and a producer to the target sharing it as a
// Pipeline's do. It reads each replicated partition from the beginning and writes every
// record to the same partition of the remote topic, named as DefaultReplicationPolicy names
// it (source alias, a dot, the topic: "east.t"). When the target acknowledges a record it
// decides on an offset sync (upstream offset -> downstream offset) as
// OffsetSyncWriter.PartitionState.update does: at once for the task's first record of the
// partition, when the translation would fall offset.lag.max behind, when upstream offsets
// skip or downstream ones go back; otherwise the pair waits as a delayed sync for the next
// offset flush (Connect's offset.flush.interval.ms). Every
// emit.checkpoints.interval.seconds it fetches each group's committed offsets from the
// source (FindCoordinator, OffsetFetch) and translates them as
// OffsetSyncStore.translateDownstream does: from the latest sync at or before the
// committed offset, to its downstream offset if equal, else one past it.
// What mqsim simplifies: no Connect framework (no workers, task rebalancing or Connect
// offset storage: a restarted mirror copies from the beginning again); syncs and
// checkpoints live in the node's memory, not in the mm2-offset-syncs.<target>.internal and
// <source>.checkpoints.internal topics; no exactly-once source support (a send that ends
// without an answer may be written twice); value and partition are copied, not keys or
// headers (the history keeps values only); one task for all partitions, which waits for a
// poll's copies to be acknowledged before its next poll; a lost checkpoint request is not
// retried before the next interval.
//
// Simplifications, each in one line: batch.size counts key and value bytes only; metadata
// requests use request.timeout.ms as a connection timeout; requests to a crashed broker are
// detected by timeout only (there is no connection reset); a transactional producer's blocking
// calls are bounded by delivery.timeout.ms (Kafka: max.block.ms); the pipeline's output
// records carry no key (the history keeps values only).
package client
