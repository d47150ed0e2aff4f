// Package export turns one run of a scenario into files other tools read: a time-space
// (Lamport) diagram as SVG, a Mermaid sequence diagram for Markdown, the trace as JSON
// lines, the client history as JSON lines or as Jepsen EDN, porcupine's
// linearizability visualisation, the operator's figures (package metrics) as a CSV
// time series, and one self-contained HTML page that steps through the run as the
// terminal UI does (html.go; package export/page hands it the TUI's recording). `mqsim
// export` is its command line.
//
// It sits outside the deterministic core, next to the terminal UI: it runs scenarios
// through the scenarios package and only reads what they produce.
//
// # Messages
//
// The diagrams need every message, which a scenario does not normally trace. Record runs
// the scenario twice: as written (the run `mqsim run` and `mqsim tui` show, whose trace
// numbers the steps) and with the world's message tracing switched on (WithMessages
// prepends or amends a `world trace-messages=true` step). Tracing messages adds trace
// events and changes nothing else, so the model events of both runs must agree one for
// one; Record checks that and fails loudly if they do not.
//
// # Steps and windows
//
// A step is a kernel step (sim.Event.Step): the number `mqsim run` prints for a violation
// ("(step 48)"), the verdict stores, and `mqsim tui` shows in its timeline and its "step
// k / n". Every event carries the kernel step that produced it, message events included,
// and both runs of a Record number their steps alike. A Window selects kernel steps
// From..To (both included) with all their events; the window from step 1 also holds the
// events before the first kernel step. Runs of thousands of events are drawn a window at
// a time; DefaultWindow picks one around the verdict's first violation, and nothing caps
// how wide a window may be.
//
// # Slides
//
// `mqsim export --format svg` without --from/--to draws a slide (WriteSlide), not the
// whole run (--full, WriteSVG): a 16:9 picture at projector-readable font sizes of the
// steps around the run's key moment (KeyMoment), the event where the verdict's first
// violation happens (the acknowledgement or read that breaks the guarantee) rather than
// the step where the checker dates its beginning. The slide calls that moment out, marks
// the violation on its row, draws a message on one row when its receipt follows its send,
// and shows each replica's log and HW right after the moment's step (ReplicaLogsAt, which
// runs the scenario once more and reads the brokers' own views).
//
// # The Jepsen mapping
//
// Jepsen's Kafka workload (jepsen.tests.kafka) names each topic-partition by an abstract
// key. WriteJepsen uses the partition's name as the key, the string "t-0" for topic t
// partition 0, and writes each history op as one EDN map per line:
//
//	{:index 0, :time 56801000, :process 1, :type :invoke, :f :send, :value [[:send "t-0" "before"]]}
//	{:index 1, :time 66958000, :process 1, :type :ok, :f :send, :value [[:send "t-0" [0 "before"]]]}
//	{:index 2, :time 67000000, :process 3, :type :invoke, :f :poll, :value [[:poll]]}
//	{:index 3, :time 69000000, :process 3, :type :ok, :f :poll, :value [[:poll {"t-0" [[0 "before"]]}]]}
//
// Values are mqsim's strings (Jepsen's generator uses integers; its checker only needs
// them unique per key). A send whose offset the client did not learn (fail, info, acks=0)
// has offset nil. Assignments become {:f :assign, :value [keys]}; subscriptions become
// {:f :subscribe, :value [keys]}, each topic expanded to the partitions of it that the
// history mentions. Offset commits are left out: Jepsen's workload has no commit
// operation (its polls commit). A transaction becomes Jepsen's {:f :txn}, its value
// the micro-ops done inside, [[:send k [offset v]] [:poll {k [[offset v]]}]], with
// :transactional-id beside; its invocation's value is [], since mqsim's clients
// choose their micro-ops as they run. The offsets committed with a transaction are
// left out like commits. A read_committed poll carries :read-committed? true (Jepsen
// sets the isolation level once per test). :index is renumbered densely after that, and
// :mqsim-index keeps the op's index in mqsim's history. :time is virtual nanoseconds.
//
// A queue broker's history (RabbitMQ, SQS) maps the same way, keyed by exchange or queue,
// but it is not a log: Jepsen's Kafka checker, like porcupine's log model, assumes one, so
// WritePorcupine refuses it (ErrQueueMode).
package export
