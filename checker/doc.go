// Package checker judges client histories (package model/history): what
// producers and consumers saw, never broker internals. That is how Jepsen
// judges real systems, and it keeps the checkers honest: a checker that
// peeked inside the broker would share its bugs.
//
// Judges of two kinds of history, one Report type. "Log" is the Kafka-style
// log's history (offsets in partitions); "queue" means only the RabbitMQ/SQS
// side (package model/queue), judged by CheckQueue.
//
//   - CheckLog is Jepsen's Kafka queue analysis (jepsen.tests.kafka) with
//     Jepsen's anomaly names and rules: version orders inferred from every
//     poll (ok, info and fail) and from the sends that surely committed;
//     inconsistent-offsets, duplicate, lost-write, unseen, poll-skip,
//     nonmonotonic-poll, int-poll-skip, int-nonmonotonic-poll,
//     nonmonotonic-send and G1a (aborted read), and over transactions
//     (txn ops) int-send-skip, int-nonmonotonic-send, G1b (intermediate read)
//     and the cycles G0 (write cycle) and G1c (cyclic information flow) of
//     ww and wr dependencies. It adds what Jepsen lacks:
//     unexpected (a value nobody sent), nonmonotonic-commit (a group's
//     committed offset going backwards), the place of lost writes in the
//     write order (prefix, middle, suffix), and an unseen rule with a time
//     bound. Cost is O(n log n) in the history size.
//   - CheckDelivery counts per consumer group how often each acknowledged
//     send was read (0, 1, more), classifies the observed semantics, and
//     reports a violation only where the system's Promise is broken. It also
//     holds each consume-transform-produce Pipeline of Options to
//     exactly-once (missing-output, duplicate-output; see Transactions).
//   - CheckLinearizable checks each partition against a sequential log with
//     porcupine, stretch by stretch between quiet moments, under a time and
//     a memory budget that yield Unknown honestly (mqsim check exits 3),
//     and can write porcupine's visualisation with fault annotations.
//   - CheckShare judges share groups (KIP-932; see Share groups below):
//     share-lost, share-beyond-limit, share-redelivered-after-accept.
//   - Failover relates a consumer group's reads across a geo-replication
//     failover (MirrorMaker 2): the source topic and its remote topic on the
//     other cluster are other topics, so it relates their records by value and
//     says what the group lost (acknowledged, never replicated, never read) and
//     read twice. CheckLog takes the remote topic's records below the group's
//     declared start (the failover's seek) as passed over, not lost.
//   - CheckLiveness asks for recovery: once the faults have healed (HealedAt),
//     every reader must read every acknowledged value it is expected to read
//     within a bound (unconsumed otherwise). Partitions the caller judged
//     unrecoverable (every copy gone) are noted, not blamed.
//
// Findings made outside the history, such as the simulator's invariant checks
// on broker state after every event (model/cluster: two-leaders,
// hw-regression, read-above-hw, isr-outside-replicas, leader-outside-isr,
// leader-incomplete), enter a Report through Collect with the checker name
// "invariant" and the trace step where they began, so they merge with the
// rest.
//
// Check runs them together. Histories from the deterministic simulator make
// every verdict reproducible; only CheckLinearizable's budget uses the wall
// clock, which can turn a verdict into Unknown but never change it.
//
// Offsets are sparse, as in Kafka (transaction markers, compaction and
// retention leave gaps): every check, linearizability included, works on
// the order of offsets, never their density. Compaction removes values too:
// with LogOptions.Compacted, a lost-write or poll-skip whose values each have
// a later acknowledged write of their key in the same partition is what the
// log cleaner may do, and is reported as allowed.
//
// Departures from Jepsen, each for a reason (notes/checkers.md sets every
// anomaly's definition beside Jepsen's):
//
//   - Jepsen allows poll-skip and nonmonotonic-poll in a test that
//     subscribes (a rebalance may move a consumer back or past values).
//     mqsim decides per process: they are allowed, reported but not
//     violations, for a process whose latest assignment was a subscribe,
//     and violations after an assign.
//   - Poll and send deltas compare the dense indexes of the offsets actually
//     read or assigned, not of values: the same when every value sits at one
//     offset, and a duplicate's second copy is not blamed twice.
//   - Unseen excludes values already reported as lost-write, so every
//     acknowledged value that was never read is reported once, as lost-write
//     (prefix or middle) or unseen (suffix, or no known offset).
//   - A seek op (a consumer's seek, the group tool's offset reset) is a
//     declared move, which Jepsen's workload does not have. After an ok seek
//     the process's next poll of the partition is compared with the seek's
//     offset instead of its previous poll: it must start at the first record
//     at or after it (earlier: nonmonotonic-poll; later, over records:
//     poll-skip); a seek of unknown outcome leaves the next poll unjudged. For
//     the group, the delivery count starts a new pass at the offset: a value
//     read once per pass is read once (GroupDelivery.Replayed counts the
//     declared re-reads), one a forward move jumped over unread is skipped,
//     not missed (Skipped), and the group's commits restart from the offset
//     (no nonmonotonic-commit for moving back). A re-read without a seek is
//     still an anomaly.
//
// # Transactions
//
// A txn op (model/history) is a transaction's sends and polls, all or
// nothing: ok committed, fail aborted, info unknown. The analysis places each
// micro-op after its transaction as a send or poll of its own, carrying the
// transaction's outcome and times and named in findings by the transaction's
// op, so every check of sends and polls judges them:
//
//   - A committed transaction's sends are acknowledged writes (lost-write,
//     unseen, delivery counts), each counted once like a send alone; an
//     aborted one's are failed writes; an unknown one's may or may not
//     appear, and count as committed once a read_committed poll read one of
//     them (Jepsen's must-have-committed?; a read_uncommitted read proves
//     nothing, since that level returns open and aborted writes).
//   - A value sent by several ops is judged by its surest send (ok, else
//     info, else fail): a transaction retried after an abort sends its
//     values again, and the committed attempt is the one that counts. An
//     offset an uncommitted transaction's send learned holds that attempt's
//     copy: no read_committed poll may return it, so it is no duplicate.
//   - G1a (aborted read): an ok poll returned a write whose every send failed.
//     For a read_committed poll, or a failed send outside a transaction, it is
//     a violation. A read_uncommitted poll returning an aborted transaction's
//     write is what that isolation level allows: the finding goes to
//     Report.Allowed, the place the Report already has for anomalies found
//     but permitted (as poll-skip under subscribe), so it is counted and
//     shown, never failing. Jepsen's Kafka workload runs read_committed only
//     and always calls G1a a violation.
//   - A read_committed poll is judged on the offsets it may return: writes of
//     transactions not known to have committed are no gap for it to skip
//     (int-poll-skip, poll-skip) or to go back over. A consumer's isolation
//     level is fixed when it is made, so a process whose polls change level
//     starts its poll order afresh (a new consumer should be a new process).
//   - int-poll-skip, int-nonmonotonic-poll: inside one transaction, records
//     of a partition in one poll and from one poll to the next must follow
//     each other in the version order (Jepsen compares all reads of a :txn op
//     as one sequence). int-send-skip, int-nonmonotonic-send: a transaction's
//     sends to a partition, compared pairwise in order; int-send-skip is
//     always allowed, as in Jepsen: other producers' writes interleave with
//     a transaction's. A committed transaction leaves its process where its
//     polls ended; an aborted or unknown one does not (the application
//     rewinds to the committed offsets).
//   - G1b (intermediate read): a read_committed poll returned some of a
//     committed transaction's writes to a partition and read past where a
//     later write of that transaction to the same partition sits, without
//     it. Jepsen's Kafka workload names intermediate reads but does not
//     check them; the name and meaning are Elle's (a read of a state a
//     transaction passed through). A poll that stops before the later write
//     is no G1b (a consumer may stop anywhere: max.poll.records), nor is a
//     later write to another partition (each partition's marker lands on its
//     own).
//   - G0, G1c: Jepsen's dependency graph between ops (a send or poll alone is
//     a transaction of one; failed ops take no part): ww from the writer of
//     each value to the writer of the next value in the partition's version
//     order, wr from a value's writer to each poll that read it. Jepsen's rw
//     edges stay out, as in Jepsen (commented out of its graph), and so do
//     the process and real-time orders Elle adds for strict serializability.
//     One cycle (the shortest through its lowest op, or through its lowest wr
//     edge) is reported per strongly connected component, with its edges in
//     Violation.Cycle. G1c over wr edges of read_committed polls alone is a
//     violation: each transaction's read waits for the other's commit. G0 is
//     always allowed, and so is a G1c that needs a ww or a read_uncommitted
//     wr edge: Kafka does not isolate writes (Jepsen allows G0 always and
//     G1c whenever it draws ww edges).
//   - Exactly-once is a promise given per pipeline (Options.Pipelines, as
//     Promise is given per system): a consume-transform-produce application
//     reading topic Input writes one record of the same value to topic
//     Output per input record. Every input value that surely took effect
//     (sent ok, or info and read) must appear in Output exactly once,
//     counted as the distinct output offsets where ok read_committed polls
//     read it: missing-output (never) and duplicate-output (twice or more)
//     are violations of the delivery checker. Copies only a read_uncommitted
//     poll saw do not count. The history must read Output to its end at
//     read_committed, as Jepsen's final polls do.
//   - The linearizability check has no transactions in its sequential log:
//     it leaves the partitions transactions touched to these checks, and
//     notes which. The liveness check's unavailable asks about sends alone,
//     and offsets committed with a transaction are not judged by
//     nonmonotonic-commit.
//   - Jepsen's precommitted-read (a transaction polling its own writes,
//     which Kafka's consumers must never see before the commit) is not
//     checked yet: no other rule here catches it.
//
// # Share groups
//
// A share group's members share its partitions' records (model/history: share polls
// carry each record's delivery count, ack ops accept, release or reject). Jepsen has no
// share groups; the names are mqsim's, in Jepsen's style. CheckShare, run by Check
// whenever a history has a share group (a group of a share poll or an ack op), with the
// run's delivery count limit and share.auto.offset.reset (ShareOptions; Kafka's defaults,
// noted, when not given):
//
//   - share-lost: an acknowledged record of a topic the group subscribed to (a
//     subscribe of the group, or a delivery to it) was never settled for the group:
//     settled is an ok ack that accepts or rejects it, or a delivery at or above the
//     delivery count limit (the broker archives a record released or expired at the
//     limit). The deadline is unseen's (UnseenRule): by the end of the history, or
//     within the bound after max(ack, the last fault), a record settled later being
//     lost too and one whose deadline lies past the end undecided; a run that declares
//     it drained by its check's unseen-within is judged at that deadline. Under
//     share.auto.offset.reset=latest a share-partition starts at the log end at a moment
//     the history does not show, so only records at or after the lowest offset the
//     group was delivered from the partition are judged. Spared and noted, since the
//     history cannot rule them out: a record accepted or rejected by an ack of unknown
//     outcome (it may have taken effect), and one that enough of the group's polls of
//     unknown outcome (info, or never completed) since its last seen delivery may have
//     acquired unseen to reach the limit (Kafka counts an acquisition whose response
//     was lost, and archives the record at the limit). This rests on the share
//     consumer recording one poll per fetch round, info when a response did not come.
//   - share-beyond-limit: a delivery with a count above the limit. The counts judged
//     are those the broker reported: after a share-partition leader failover Kafka
//     does not count the interrupted delivery, so a count can be one low per failover
//     (never high), and a record may be delivered more times than the limit while every
//     count stays within it; that is Kafka's behaviour, not an anomaly.
//   - share-redelivered-after-accept: a delivery by a poll invoked after an ok accept of
//     the record (in the group) completed. Ok means applied and persisted through the
//     share coordinator, so no failover brings the record back. A delivery that
//     overlaps the accept proves nothing (the accept may land after it), nor does one
//     after a failed accept (the lock was lost first).
//
// Share polls are no consumer's positions: the log checker takes their records as reads
// (version order, lost-write, unseen) but does not judge their order (poll-skip,
// nonmonotonic-poll, int-*); the delivery and liveness checkers leave share groups
// to CheckShare, which counts their deliveries per acknowledged record it judged
// (Report.Delivery: once, more than once, never) and holds them to the deadline of
// unseen-within rather than live-within.
//
// Not checked, and why: two members holding one record at once (concurrent
// acquisition). From the history alone it cannot be judged soundly. A record acquired
// by member A is legitimately acquired by member B while A still believes it holds it
// when the acquisition lock expires (its start lies anywhere inside A's poll), when A's
// connection closes (the broker releases A's records at once, and a crash is not an op),
// when A's consumer closes (close releases what it holds without an ack op), and when
// the share-partition leader fails over (the new leader restores A's records to their
// last persisted state, available, without a count, so B's delivery even carries A's
// count). None of these shows in the history, so every delivery to B inside A's lock
// has an innocent reading; the lock duration would bound only the first. The
// simulator's own invariants on broker state are the place for it.
package checker
