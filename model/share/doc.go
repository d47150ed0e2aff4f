// Package share is mqsim's share groups (KIP-932, "queues for Kafka") on the broker side,
// as pure state machines: Partition, the in-flight window a share-partition leader keeps
// for one (group, topic partition), and Store, the share coordinator's persisted state of
// each share-partition. model/broker runs them (share.go, sharecoord.go) and carries out
// what they ask: the persister's writes, the lock timers, the answers.
//
// # The window (Kafka's SharePartition, InFlightState, RecordState)
//
// Everything below the share-partition start offset (SPSO) is done for the group. The
// window holds the offsets from the SPSO to the end offset (SPEO, the last offset fetched
// into it), each with a state and a delivery count:
//
//	Available ──ShareFetch acquires for m (count+1, lock until now+lock duration)──▶ Acquired(m)
//	Acquired(m) ──accept──▶ Acknowledged
//	Acquired(m) ──reject, gap──▶ Archived
//	Acquired(m) ──release, lock expiry, m's session ends──▶ Available, or Archived if count ≥ limit
//	Available below the log start offset ──▶ Archived
//
// Acknowledged and Archived are terminal; the SPSO moves past a prefix of them. The
// in-flight limit (group.share.partition.max.record.locks) bounds the span SPEO−SPSO+1,
// not the Acquired records: one stuck record at the SPSO holds the window, and fetches
// acquire nothing new until it moves (SharePartition.numInFlightRecords).
//
// # When a change takes effect
//
// Acquisition writes nothing. An acknowledgement or a release is validated at once (all of
// one request's acknowledgements of a partition, or none: INVALID_RECORD_STATE for an
// offset not Acquired by that member, or already in transition) and then staged: the
// records stay Acquired, in transition, until a WriteShareGroupState carrying the change
// succeeds (Apply), and go back to plain Acquired with their locks running if it fails
// (Rollback): SharePartition.rollbackOrProcessStateUpdates. Lock expiries and log-start
// archiving apply at once and are written with the next write, failed or not.
//
// One write per share-partition is in flight at a time (NextWrite), holding the whole
// state with every staged change. Kafka writes only the changed batches, and may have
// several writes in flight; with whole-state writes, two in flight could persist one
// another's changes out of order (a later write that succeeds carrying an earlier failed
// one's acknowledgement), so mqsim queues them.
//
// # The share coordinator's records
//
// Kafka's share coordinator writes ShareUpdate records (the changed batches) and every
// share.coordinator.snapshot.update.records.per.snapshot (500) updates a ShareSnapshot
// (the whole state). mqsim writes the whole state with every write, one record per
// WriteShareGroupState, and a new coordinator replays the latest record of each key. The
// departure keeps one record kind and makes a record readable on its own in `show log`;
// what a failover shows is the same, because a Kafka coordinator also rebuilds the whole
// state (the snapshot plus the updates after it). Fencing (ShareCoordinatorShard): a
// write or read with a leader epoch below the recorded one is FENCED_LEADER_EPOCH, a write
// with a lower state epoch FENCED_STATE_EPOCH; a read with a higher leader epoch records
// it, so that the deposed leader's writes are fenced. One addition: writes are numbered
// within a leader epoch (WriteShareGroupState.Seq), and an older number is refused, a
// repeat of the last answered without a new record. Kafka needs no such number, its
// requests travelling in order over TCP; mqsim's network duplicates and reorders, and a
// stale copy of a whole-state write would put an older state back.
//
// # What is persisted
//
// A ShareState never holds Acquired: an Acquired record is written as it was before its
// acquisition (Available, one delivery fewer). So a new leader after a failover delivers
// it again with the same count the interrupted delivery had: the count can be one low per
// failover, as in Kafka (kafka4.md 1.8).
//
// Simplifications: no RENEW acknowledgement (KIP-1222), no throttled redelivery of
// records near the limit (SharePartition.throttleRecordsDeliveryLimit), no
// read_committed isolation; a fetch acquires exactly up to its maximum, record by record,
// rather than whole batches.
package share
