// Package group is mqsim's consumer-group machinery: the group coordinator a broker hosts
// (join, sync, heartbeat, leave; members, generations, rebalances; committed offsets kept
// in a replicated internal topic) and the partition assignors a group leader runs.
//
// # Coordinator
//
// A Coordinator serves the groups of one partition of the offsets topic
// (__consumer_offsets; a group's partition is PartitionFor, Kafka's
// Utils.abs(groupId.hashCode()) % partitions) and lives exactly as long as its broker leads
// that partition: Load builds it from the partition's log, Unload ends it. It speaks the
// classic protocol (ClassicGroup in Kafka's group-coordinator module):
//
//   - States Empty, PreparingRebalance, CompletingRebalance, Stable, Dead. A join (a new
//     member, a member with new metadata, the leader) or a departure (LeaveGroup, session
//     expiry) starts a rebalance; the join phase ends when every member has rejoined or the
//     rebalance timeout passes (members that did not rejoin are removed), the generation
//     moves on and the first member (or the previous leader) leads. The first rebalance of
//     an empty group waits group.initial.rebalance.delay.ms. Heartbeats during a rebalance
//     answer REBALANCE_IN_PROGRESS.
//   - New dynamic members get MEMBER_ID_REQUIRED and rejoin with the id (KIP-394). A static
//     member (group.instance.id) that rejoins a stable group with unchanged metadata gets a
//     new member id, the old one is fenced (FENCED_INSTANCE_ID), and the generation and its
//     assignment stay (KIP-345; the leader is told to skip the assignment, KIP-814).
//   - The leader's SyncGroup carries the assignment; it is written to the partition and the
//     members get their partitions once the high watermark passes it (Stable).
//   - OffsetCommit is validated as validateOffsetCommit does: unknown member
//     UNKNOWN_MEMBER_ID, wrong instance FENCED_INSTANCE_ID, wrong generation
//     ILLEGAL_GENERATION, CompletingRebalance REBALANCE_IN_PROGRESS; generation -1 only
//     while the group is Empty. Accepted commits are appended and answered once
//     replicated (acks=all semantics), REQUEST_TIMED_OUT after offsets.commit.timeout.ms.
//   - TxnOffsetCommit (txn.go, KIP-447) is fenced the same way (not by the rebalance
//     state), appended as a transactional batch of its producer (the partition refuses a
//     fenced producer epoch), and kept pending per producer id until the transaction's
//     marker reaches the partition (CompleteTxn; Load resolves the markers in the log):
//     COMMIT makes the offsets committed, ABORT drops them.
//
// The consumer rebalance protocol (KIP-848, group.protocol=consumer) runs beside it in
// the same coordinator: Group.Consumer holds a consumer-protocol group (consumer_group.go),
// ConsumerGroupHeartbeat is served in consumer_heartbeat.go (member epochs validated,
// group epoch bumped on membership, subscription or metadata changes), the target
// assignment is computed by a server-side assignor, uniform or range (consumer_target.go),
// and each member is reconciled towards it on its own heartbeats, revoke first
// (consumer_reconcile.go, Kafka's CurrentAssignmentBuilder). Session and rebalance
// timeouts fence a member; commits of a consumer-protocol member are fenced by member
// epoch (STALE_MEMBER_EPOCH). The group's state is one record in the offsets partition,
// so it survives a coordinator failover. no-revoke-first, planted, makes the
// reconciliation hand a partition over before its owner released it.
//
// Share groups (KIP-932) run there too: Group.Share (share_group.go) is served by
// ShareGroupHeartbeat (share_heartbeat.go) with the same three epochs but no revocation (a
// member jumps to its part of the target), the simple assignor (assign_simple.go: members
// may outnumber partitions and share them) and group.share.session.timeout.ms. A group id
// is one kind of group: a share heartbeat for a classic or consumer group gets
// GROUP_ID_NOT_FOUND, a JoinGroup for a share group INCONSISTENT_GROUP_PROTOCOL.
//
// Plantable bugs: no-generation-fencing (every commit accepted; Stale lists those that
// should not have been), no-txn-offset-fencing (the same for transactional commits) and
// offsets-acks-1 (writes answered after the local append).
//
// Simplifications: commits and metadata are kept as separate JSON records and every record
// is read at load (no compaction, no tombstones, no offset expiry); one assignor per member;
// the initial rebalance delay is not extended by later joins.
//
// # Assignors
//
// AssignorByName finds range, roundrobin, sticky and cooperative-sticky (assign_*.go).
// RevokeFirst is the incremental cooperative rule (KIP-429) a cooperative group leader
// applies to the assignor's result: a partition another member still owns is held back
// for a follow-up rebalance.
//
// testdata/machine holds the coordinator's interaction tests (machine_test.go): requests
// in, responses and trace events out, through a fake broker.
package group
