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
//     nonmonotonic-send and G1a (aborted read). It adds what Jepsen lacks:
//     unexpected (a value nobody sent), nonmonotonic-commit (a group's
//     committed offset going backwards), the place of lost writes in the
//     write order (prefix, middle, suffix), and an unseen rule with a time
//     bound. Cost is O(n log n) in the history size.
//   - CheckDelivery counts per consumer group how often each acknowledged
//     send was read (0, 1, more), classifies the observed semantics, and
//     reports a violation only where the system's Promise is broken.
//   - CheckLinearizable checks each partition against a sequential log with
//     porcupine, stretch by stretch between quiet moments, under a time and
//     a memory budget that yield Unknown honestly (mqsim check exits 3),
//     and can write porcupine's visualisation with fault annotations.
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
// the order of offsets, never their density.
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
//   - There are no transactions yet, so precommitted-read, int-send-skip,
//     int-nonmonotonic-send and the Elle cycle anomalies (G0, G1c) cannot
//     occur and are not checked.
package checker
