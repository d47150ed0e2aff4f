// Package history records what the clients of a message queue saw: the input
// of every checker in mqsim.
//
// A history mirrors Jepsen's: every operation is recorded twice, first as an
// invocation and later as exactly one completion whose type says what the
// client learned. Checkers judge these records only, never broker internals,
// so the same checkers can judge any system that produces the same records.
//
//   - ok: the operation took effect and the client knows its result.
//   - fail: the operation certainly did not take effect.
//   - info: the outcome is unknown (timeout, NOT_LEADER, crash); the operation
//     may or may not have taken effect, now or later.
//
// An invocation that never completes (the client crashed, the run ended) is
// treated by checkers exactly like an info completion.
//
// Producers and consumers build histories with a [Recorder]; it keeps the
// index and pairing invariants so state machines only say what happened. A
// batch's sends may be recorded together ([Recorder.InvokeSends] of a
// [SendBlock], [Recorder.CompleteSends]): the recorder keeps them packed and
// builds their ops when [Recorder.History] is asked. The package is part of
// the deterministic core: no goroutines, no wall clock, no OS access, no map
// iteration that reaches output.
//
// # Processes
//
// A process is one client incarnation. After a crash or restart a client must
// record under a fresh process number (as Jepsen does): the poll-skip and
// nonmonotonic checks compare successive operations of one process and would
// otherwise blame the restart for rewinding. A process may have several
// operations in flight (a pipelining producer); "successive" then means
// invocation order.
//
// # Functions
//
//   - send: append one record (topic, partition, key, value) to a partition.
//     An ok completion carries the offset the broker assigned, or no offset
//     when the client never learned it (acks=0). Values are unique per
//     partition; the workload generator guarantees it and checkers rely on it.
//     One exception is by design: a transaction retried after an abort sends
//     its values again (a pipeline's output repeats its input), and checkers
//     judge such a value by its surest send (see package checker).
//   - poll: one consumer poll. The completion lists, per topic-partition, the
//     (offset, value) records returned, in the order the client received them.
//     Fail and info completions may carry records too: Jepsen counts what any
//     poll saw when it infers the log order. Group names the consumer group,
//     empty for a group-less consumer.
//   - commit: commit consumer offsets for a group. Offsets follow Kafka's
//     convention: the committed offset is the next offset to consume.
//   - assign: the partitions this process consumes from now on, either by a
//     manual assignment or as the outcome of a group rebalance. It replaces
//     the previous assignment; SeekToBeginning says the consumer moved to the
//     start of every partition, so earlier positions no longer apply.
//   - subscribe: subscribe to topics; the group picks the partitions. An ok
//     completion may list the partitions the group assigned.
//   - txn: one transaction of a transactional producer (transactional.id), with
//     the polls of the consumer that feeds it. The invocation names the
//     transactional.id only; the completion lists the micro-ops done inside, in
//     the client's order (each a send or a poll, shaped as those ops' values),
//     and the group offsets committed with the transaction
//     (sendOffsetsToTransaction). ok: the transaction committed; fail: it
//     aborted (its sends must be invisible to read_committed polls); info:
//     unknown. A micro-send carries the offset the broker assigned when the
//     client learned it, even in a transaction that later aborted.
//   - seek: a declared move of positions, per partition, to the next offset to
//     read. Without reset, a consumer moved its own position (KafkaConsumer.seek,
//     seekToBeginning, seekToEnd, or a seek to what offsetsForTimes answered);
//     group names its group, if any. With reset, the group tool
//     (kafka-consumer-groups --reset-offsets) committed the offsets for the group,
//     which had no member. The invocation carries -1 where the target was still
//     to be looked up (earliest, latest, a time); an ok completion knows every
//     offset. Checkers take a seek as the application's word: what is read again
//     after it moved a position back is a declared re-read, what it jumped over
//     a declared skip; a re-read without one is still an anomaly.
//   - ack: a share consumer's acknowledgement (KIP-932) of records of one
//     partition it acquired for its share group: per offset, accept
//     (processed: done for the group), release (not processed: available
//     again, archived at the delivery count limit) or reject (unprocessable:
//     archived). ok: the share-partition leader applied and persisted them;
//     fail: it refused them (the lock was lost: INVALID_RECORD_STATE); info:
//     unknown. Acknowledgements piggybacked on a fetch are an ack op too.
//
// A poll may say share: a share consumer acquired its records for the share
// group Group (required), and each record carries the share-partition leader's
// delivery count, this delivery included (1 on the first; after a leader
// failover it can be one low, since Kafka does not count an interrupted
// acquisition). Only a share poll's records carry a count, and a share poll
// takes no part in a transaction. A share consumer records its subscription as
// a subscribe op naming its share group.
//
// A poll, alone or inside a txn, may say read_committed: the consumer reads
// with isolation.level=read_committed, so it must never return a record of an
// aborted or still open transaction. Without it the poll is read_uncommitted,
// which may return aborted records: checkers report that as allowed.
//
// Assign versus subscribe decides which re-reads are allowed, as in Jepsen:
// after a subscribe the group may move partitions at any rebalance, and the
// consumer resumes from the group's committed offset, so a poll that starts
// before or past where the process's previous poll ended is reported as
// allowed (poll-skip, nonmonotonic-poll); after an assign it is a
// violation unless the assign seeks to the beginning.
//
// # JSON lines
//
// [WriteJSONLines] writes one JSON object per line per operation, in index
// order; [ReadJSONLines] reads it back, reporting the line number and what it
// expected on any error, then validates the history as [History.Validate]
// does. The reader is strict, so that nothing passes silently: unknown
// fields, a field twice in one object, invalid UTF-8 (raw, or an escaped
// lone surrogate) and values of the wrong type are errors naming the line.
// Offsets may be sparse (Kafka's are: transaction markers, compaction,
// retention); checkers use their order only. Fields:
//
//	index    int     position in the history, 0, 1, 2, ... (equal to the line's
//	                 position among non-blank lines)
//	time     int     virtual time in nanoseconds; never decreases along the history
//	process  int     the client incarnation (see Processes)
//	type     string  "invoke" | "ok" | "fail" | "info"
//	f        string  "send" | "poll" | "commit" | "assign" | "subscribe" | "txn" | "seek" | "ack"
//	invoke   int     completions only: the index of the invocation completed
//	value    object  depends on f, below; required
//	error    string  optional: why an op failed or is indeterminate
//
// The value object, by f (all fields shown; optional ones marked):
//
//	send       {"topic":"t","partition":0,"key":"k","value":"v","offset":7}
//	           key optional (empty = null key); offset only on ok completions
//	           that learned it
//	poll       {"group":"g","read_committed":true,"reads":[{"topic":"t","partition":0,"records":[[7,"v"],[8,"w"]]}]}
//	           group and read_committed optional; reads only on completions,
//	           each topic-partition at most once; a record is an [offset, value] pair
//	share poll {"group":"g","share":true,"reads":[{"topic":"t","partition":0,"records":[[7,"v",1],[9,"x",3]]}]}
//	           group required; a record is an [offset, value, delivery count] triple
//	commit     {"group":"g","offsets":[{"topic":"t","partition":0,"offset":9}]}
//	assign     {"group":"g","partitions":[{"topic":"t","partition":0}],"seek_to_beginning":true}
//	           group and seek_to_beginning optional
//	subscribe  {"group":"g","topics":["t"],"partitions":[{"topic":"t","partition":0}]}
//	           partitions optional, only on completions
//	seek       {"group":"g","offsets":[{"topic":"t","partition":0,"offset":5}],"reset":true}
//	           group and reset optional; offset -1 only where not yet known, never
//	           on an ok completion
//	txn        {"txn":"T1","ops":[{"f":"send",...},{"f":"poll",...}],"commit":{"group":"g","offsets":[...]}}
//	           txn is the transactional.id; ops and commit optional, only on
//	           completions. Each micro-op is an object with "f" ("send" or
//	           "poll", nothing else) and the fields of that function's value
//	           above, checked by the same rules; commit has a commit's fields.
//	ack        {"topic":"t","partition":0,"group":"g","acks":[[7,"accept"],[9,"release"]]}
//	           every field required; an ack is an [offset, type] pair, type
//	           "accept", "release" or "reject", each offset at most once; the
//	           completion repeats the invocation's acks
//
// The txn shape follows Jepsen's Kafka workload (jepsen.tests.kafka), where a
// :txn op's value is a vector of micro-ops, [[:send k v] [:poll]] on the
// invocation and [[:send k [offset v]] [:poll {k [[offset v] ...]}]] on the
// completion, with ok, fail and info meaning committed, aborted and unknown as
// here. mqsim departs from it in four ways: micro-ops are named objects, not
// positional vectors (the strict reader names the field at fault); a key is a
// topic and partition, not an integer mapped to one; the invocation names only
// the transactional.id, since mqsim's clients decide their micro-ops while they
// run, where Jepsen's generator fixes them in advance; and the completion
// records the offsets committed with the transaction and, per poll, the
// isolation level, where Jepsen's history leaves both out (its isolation level
// is one setting for the whole test). mqsim export --format jepsen writes
// Jepsen's shape.
//
// An optional header line, before every op, names the system the history
// comes from, since a log's history and a queue broker's are judged by
// different rules and their ops do not always tell them apart:
//
//	{"system":"log"}     a Kafka-style log (partitions, offsets, consumer groups)
//	{"system":"queue"}   a RabbitMQ/SQS-style queue broker (each poll names as its
//	                     group the queue it read; sends learn no offsets)
//
// [WriteFile] writes it and [ReadFile] returns it as [File.System] (mqsim run
// --history writes one; [WriteJSONLines] and [ReadJSONLines] leave it out).
// The header is strict too: any other system, another field beside
// "system", a second header or one after the first op is an error naming
// its line.
//
// A completion repeats its invocation's value (plus what it learned), so every
// line can be read on its own, as in Jepsen's history.edn. What only share
// groups have (share, acks, a record's third element) is left out when empty,
// so a history without share groups is written as it was before them.
//
// Example, a send acknowledged at offset 0 and a poll that read it:
//
//	{"index":0,"time":1000,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"key":"k","value":"v1"}}
//	{"index":1,"time":2500,"process":1,"type":"ok","f":"send","invoke":0,"value":{"topic":"t","partition":0,"key":"k","value":"v1","offset":0}}
//	{"index":2,"time":3000,"process":2,"type":"invoke","f":"poll","value":{"group":"g"}}
//	{"index":3,"time":3100,"process":2,"type":"ok","f":"poll","invoke":2,"value":{"group":"g","reads":[{"topic":"t","partition":0,"records":[[0,"v1"]]}]}}
//
// Example, a consume-transform-produce transaction that read v1 from topic in
// at read_committed, wrote it to topic out and committed the input offset with
// the transaction:
//
//	{"index":0,"time":1000,"process":3,"type":"invoke","f":"txn","value":{"txn":"pipe-1"}}
//	{"index":1,"time":4000,"process":3,"type":"ok","f":"txn","invoke":0,"value":{"txn":"pipe-1","ops":[{"f":"poll","group":"g","read_committed":true,"reads":[{"topic":"in","partition":0,"records":[[0,"v1"]]}]},{"f":"send","topic":"out","partition":0,"value":"v1","offset":0}],"commit":{"group":"g","offsets":[{"topic":"in","partition":0,"offset":1}]}}}
package history
