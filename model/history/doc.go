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
// index and pairing invariants so state machines only say what happened. The
// package is part of the deterministic core: no goroutines, no wall clock, no
// OS access, no map iteration that reaches output.
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
//	f        string  "send" | "poll" | "commit" | "assign" | "subscribe"
//	invoke   int     completions only: the index of the invocation completed
//	value    object  depends on f, below; required
//	error    string  optional: why an op failed or is indeterminate
//
// The value object, by f (all fields shown; optional ones marked):
//
//	send       {"topic":"t","partition":0,"key":"k","value":"v","offset":7}
//	           key optional (empty = null key); offset only on ok completions
//	           that learned it
//	poll       {"group":"g","reads":[{"topic":"t","partition":0,"records":[[7,"v"],[8,"w"]]}]}
//	           group optional; reads only on completions, each topic-partition
//	           at most once; a record is an [offset, value] pair
//	commit     {"group":"g","offsets":[{"topic":"t","partition":0,"offset":9}]}
//	assign     {"group":"g","partitions":[{"topic":"t","partition":0}],"seek_to_beginning":true}
//	           group and seek_to_beginning optional
//	subscribe  {"group":"g","topics":["t"],"partitions":[{"topic":"t","partition":0}]}
//	           partitions optional, only on completions
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
// line can be read on its own, as in Jepsen's history.edn.
//
// Example, a send acknowledged at offset 0 and a poll that read it:
//
//	{"index":0,"time":1000,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"key":"k","value":"v1"}}
//	{"index":1,"time":2500,"process":1,"type":"ok","f":"send","invoke":0,"value":{"topic":"t","partition":0,"key":"k","value":"v1","offset":0}}
//	{"index":2,"time":3000,"process":2,"type":"invoke","f":"poll","value":{"group":"g"}}
//	{"index":3,"time":3100,"process":2,"type":"ok","f":"poll","invoke":2,"value":{"group":"g","reads":[{"topic":"t","partition":0,"records":[[0,"v1"]]}]}}
package history
