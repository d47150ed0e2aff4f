// Package txn is mqsim's transaction coordinator (KIP-98): the state machine a broker runs
// for the transactional ids of each partition of the transaction state topic
// (__transaction_state) it leads, as model/group is for consumer groups. A transactional
// id's partition is PartitionFor, Kafka's Utils.abs(transactionalId.hashCode) % partitions
// (TransactionStateManager.partitionFor).
//
// A Coordinator lives exactly as long as its broker leads the partition: Load builds it from
// the partition's log, Unload ends it, Committed tells it how far the high watermark has
// come, Timer runs its timers and Handle its requests. It reaches the broker through a Host.
//
// # States and transitions (TransactionMetadata.scala)
//
//	Empty ──AddPartitionsToTxn/AddOffsetsToTxn──▶ Ongoing
//	Ongoing ──EndTxn(commit)──▶ PrepareCommit ──every marker written──▶ CompleteCommit
//	Ongoing ──EndTxn(abort)──▶ PrepareAbort ──every marker written──▶ CompleteAbort
//	Ongoing ──InitProducerId of a new instance, or transaction.timeout.ms──▶
//	        PrepareEpochFence (epoch + 1) ──▶ PrepareAbort ──▶ CompleteAbort
//	Complete* ──AddPartitionsToTxn──▶ Ongoing (a new transaction)
//	Empty, Complete* ──InitProducerId──▶ Empty (epoch + 1: older instances are fenced)
//	any ──the broker loses the partition──▶ Dead (here; the new leader loads it)
//
// Every state change is a record of the partition, keyed by the transactional id, and
// takes effect, and is answered, once the high watermark passes it (acks=all, as Kafka's
// TransactionStateManager.appendTransactionToLog). While a change is being replicated the
// id has a pending transition and every other request for it is answered
// CONCURRENT_TRANSACTIONS (TransactionMetadata.pendingTransitionInProgress).
// PrepareEpochFence is such a pending transition only, as in Kafka: the record written is
// the PrepareAbort with the bumped epoch.
//
// What follows Kafka (TransactionCoordinator.scala):
//   - InitProducerId (handleInitProducerId, prepareInitProducerIdTransit): a new id gets a
//     producer id and epoch 0; a known one in Empty or Complete* gets its epoch bumped; one
//     in Ongoing is fenced: the open transaction is aborted with the bumped epoch and the
//     new instance is answered CONCURRENT_TRANSACTIONS until the abort completes, when its
//     retry bumps the epoch again; Prepare* answers CONCURRENT_TRANSACTIONS. A timeout above
//     transaction.max.timeout.ms is INVALID_TRANSACTION_TIMEOUT; a caller's producer id that
//     is not the id's (KIP-360) is PRODUCER_FENCED.
//   - AddPartitionsToTxn, AddOffsetsToTxn (handleAddPartitionsToTransaction): an unknown id
//     or another producer id is INVALID_PRODUCER_ID_MAPPING, an older epoch
//     PRODUCER_FENCED, Prepare* CONCURRENT_TRANSACTIONS; partitions already in the
//     transaction are answered at once. AddOffsetsToTxn adds the group's partition of the
//     offsets topic.
//   - EndTxn (endTransaction): Ongoing goes to PrepareCommit or PrepareAbort; once that
//     record is replicated (the commit point) the producer is answered and the markers go
//     out. EndTxn repeated after completion with the same outcome is answered NONE, with
//     the other outcome INVALID_TXN_STATE; repeated while Prepare* with the same outcome
//     CONCURRENT_TRANSACTIONS; EndTxn in Empty INVALID_TXN_STATE. In the modern mode
//     (KIP-890 part 2, transaction version 2) every EndTxn bumps the epoch, the markers
//     carry the new one and EndTxnResponse returns it; a retry is recognised by the stored
//     epoch being the request's plus one (endTxnEpochBumped).
//   - Markers (TransactionMarkerChannelManager.scala): one WriteTxnMarkers per partition
//     leader, with the coordinator epoch (the leader epoch of this partition); partitions
//     answered with an error, or not answered, are retried; INVALID_PRODUCER_EPOCH and
//     PRODUCER_FENCED mean a newer epoch already wrote its marker there, and the partition
//     counts as done (TransactionMarkerRequestCompletionHandler). When every partition has
//     its marker, Complete* is written.
//   - transaction.timeout.ms (abortTimedOutTransactions): every
//     transaction.abort.timed.out.transaction.cleanup.interval.ms, each Ongoing transaction
//     open longer than its timeout is aborted with a bumped epoch.
//   - Failover (loadTransactionsForTxnTopicPartition): the new coordinator resumes the
//     markers of every PrepareCommit and PrepareAbort, which is what makes the prepare
//     record the commit point.
//
// One departure, argued: Kafka's coordinator acts on its log up to the end as soon as it
// has read it (FetchIsolation.LOG_END), records no follower has yet included. If it then
// fails before they are replicated, the next coordinator never sees them, though markers
// or answers they caused are out: a COMMIT on some partitions of a transaction the next
// coordinator will abort, or a partition verified into a transaction that never ends
// there (the swarm found the second). mqsim's coordinator acts on what it loaded only once
// the high watermark reaches the loaded log end (a LoadCommitted event); until then it
// answers COORDINATOR_LOAD_IN_PROGRESS, which clients retry.
//
// Plantable bug: markers-before-prepare sends the markers as soon as the prepare record is
// appended, before it is replicated: a failover that loses the record forgets a
// transaction some partitions already committed. Historical switch: producer-fencing=off
// (Legacy.NoProducerFencing) drops every epoch check here, so a zombie's AddPartitionsToTxn
// and EndTxn land (an Unfenced event marks each).
//
// Simplifications: producer ids come from a range of this partition
// (ProducerIDBase + partition×ProducerIDsPerPartition + a counter rebuilt from the records
// at load) instead of the controller's id blocks; an exhausted epoch gets a new producer id
// only at InitProducerId; the epoch fence bumps the epoch once in both modes; the writes of
// a coordinator are answered COORDINATOR_NOT_AVAILABLE after appendTimeout; a
// transactional id never expires (no transactional.id.expiration.ms, so Dead means only
// "not hosted here"); every record is read at load (no compaction). Marker sends are retried
// at most markerAttempts times in a row; then the transaction waits for the next cleanup
// tick (a MarkersDeferred event), which starts a new series, where Kafka retries without
// end. The cleanup tick runs only while a transaction is Ongoing or deferred, so a cluster
// without transactions never sets it.
//
// testdata/machine holds the coordinator's interaction tests (machine_test.go): requests
// in, responses and trace events out, through a fake broker.
package txn
