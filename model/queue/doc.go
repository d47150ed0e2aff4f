// Package queue is mqsim's queue-style broker: RabbitMQ (AMQP 0-9-1) and Amazon SQS as
// two flavours of one broker, on the same simulated clock, network and disk as the
// Kafka-style log, and judged by the same checkers (checker.CheckQueue, and
// checker.CheckLog where a publish goes straight to a queue).
//
// # Shape
//
// A Cluster is broker nodes q1..qN (Node), a Topology they share (exchanges, queues,
// bindings: RabbitMQ's definitions, declared by the scenario and handed to every node),
// and clients: Publisher (basic.publish, or SQS SendMessage), Consumer (basic.consume,
// push) and Worker (SQS ReceiveMessage / DeleteMessage, pull). Every client records a
// history.History: a publish is a send, each message a consumer processes is a poll
// (see checker/queuemode.go for the conventions).
//
// Each queue is a State: a deterministic state machine of messages, consumers and
// deliveries, changed only by Commands (enqueue, checkout, ack, reject, down, epoch,
// tick, receive, delete, visibility) that carry their own time. Apply returns Effects
// (deliver, confirm, dead-letter, close a channel, answer a receive); only the node
// acting for the queue carries them out. This is rabbit_fifo's design: even which
// consumer gets which message is decided in Apply, so every replica agrees.
//
//   - A classic queue lives on its home node: a command is applied at once and written
//     to a journal (length, CRC, JSON) on the node's disk; a publish is confirmed once
//     the journal's fsync covers it (group commit). Recovery replays the journal and cuts
//     a torn tail.
//   - A quorum queue is a Raft group (model/raft) with a member on each of its nodes: a
//     command takes effect when committed, on every member; the leader acts. A new leader
//     proposes an epoch first: channels opened under an older leader are closed and their
//     unacked messages requeued (without counting a failed delivery), as consumers
//     connected to a dead RabbitMQ node lose their channel.
//
// # Routing and confirms
//
// A publisher talks to one node (its connection). That node routes (direct, topic with
// "*" and "#", fanout, headers with x-match all/any, the default exchange, alternate
// exchanges) and forwards the message to the node acting for each queue, resending
// until each answers. Enqueues are numbered per (publisher incarnation, routing node
// incarnation, queue) and a queue takes number n only after n-1, once: resends are
// answered, not enqueued twice, and one publisher's messages keep their order in a
// queue across leader changes (rabbit_fifo's enqueuer sequence numbers). A node routes
// each publish (publisher incarnation, sequence number) once, though the simulated
// network may deliver it twice, and a confirm names the incarnation it answers, so a
// restarted publisher never takes an answer meant for its predecessor. The confirm
// (basic.ack) goes out when every queue has the message durably: fsynced for a classic
// queue, committed for a quorum queue. A nack is sent only when no queue can have it
// (reject-publish overflow, no such exchange); if some queue took it, the publisher
// records the publish as unknown. An unroutable message is dropped and confirmed, or,
// when mandatory, returned (basic.return) and recorded as failed. A publisher whose
// confirm does not come in time records unknown and reconnects to the next node, as a
// new process in the history (a new channel is a new ordering domain).
//
// # Delivery and channel liveness
//
// A queue pushes ready messages round-robin to consumers with credit: at most Prefetch
// unacked per consumer (basic.qos, per consumer; 0 is unlimited). Auto-ack settles on
// sending. Ack settles; reject and nack with requeue put the message back at its
// original position, marked redelivered; without requeue it is dead-lettered.
//
// A channel is modelled as a TCP connection: frames on it are numbered, and a receiver
// that sees a gap treats the connection as broken. Liveness is AMQP heartbeats in both
// directions (Config.Heartbeat): the acting node closes the channel of a consumer silent
// for two intervals and requeues everything it held; a consumer that hears nothing from
// the broker for two intervals drops its buffer and reconnects. A crashed consumer, a
// cut-off one and a frozen one look the same to the broker; there is no crash signal.
// A consumer timeout (consumer_timeout) closes the channel of a consumer that holds a
// delivery too long; its later ack is void.
//
// Failed deliveries are counted as RabbitMQ 4.3 does (basic.reject and a lost consumer
// count; basic.nack, a consumer timeout and a leader change do not). Past a quorum
// queue's delivery-limit the message is dead-lettered. Dead-lettering (rejected,
// expired, maxlen, delivery_limit; x-death records queue, reason and count; a cycle
// without a rejection is dropped) republishes through the dead-letter exchange from the
// acting node, at most once: if that node dies before the target queue has it, it is
// gone (RabbitMQ's default strategy).
//
// # SQS
//
// The same State serves SQS: ReceiveMessage returns up to Max visible messages and hides
// them for the visibility timeout under a receipt handle new on every receive;
// DeleteMessage with a stale handle succeeds without deleting; ChangeMessageVisibility
// restarts the timeout. With a redrive policy, a message already received MaxReceive
// times moves to the DLQ on its next receive. A FIFO queue returns nothing of a message
// group while one of its messages is in flight, keeps each group's order, and
// deduplicates by MessageDeduplicationId (or by body) within the window: accepted,
// answered, not enqueued.
//
// # Trace
//
// Every event is a type in events.go (EventDocs lists them), and its kind one short
// word: route, drop, return, enqueue, dedup, reject-publish, subscribe, deliver, ack,
// reject, nack, requeue, delivery-limit, dead-letter, expire, channel-closed, epoch,
// leader, confirm, nack, timeout, receive, delete, visibility, redrive, recover, fsync;
// clients add publish, confirm, process, ack-lost, channel-closed, timeout. Raft's own
// events (election, append, commit, ...) come from model/raft. State.Apply describes
// what it does in EffTrace effects that hold the event values (the acting node records
// them; a state whose world keeps no trace builds none), and a queue's own events
// satisfy QueueEvent, which names the queue, so views need not read the text.
//
// # Planted bugs
//
// Config.Bugs turns on deliberate mistakes (bugs.go; scenarios: queue-broker
// bugs=(...)) for the checkers and the queue swarm to catch: confirm-before-commit (a
// quorum queue's leader confirms on its own append) and confirm-on-route (the
// publisher's node confirms before any queue has the message). None is on by default.
//
// # Simplifications, each said once
//
//   - Metadata (exchanges, bindings, queue declarations) is handed to every node by the
//     scenario rather than replicated (RabbitMQ uses Khepri, a Raft store).
//   - Clients connect to the node acting for a queue; a node does not relay deliveries
//     from another node's queue.
//   - Queues take no snapshots: a quorum member replays its log from the start.
//   - TTL expiry, visibility timeouts and consumer timeouts are applied by a tick the
//     leader proposes at the earliest deadline; they take effect when it commits.
//   - No exchange-to-exchange bindings, single active consumer, priorities, lazy mode,
//     streams, at-least-once dead-lettering, delayed retry, SQS retention or long
//     polling; SQS standard queues never return a duplicate without a failure.
//   - Exchanges and queues share one namespace.
//
// testdata/machine holds the State's interaction tests (machine_test.go): commands in,
// effects out, one queue at a time.
package queue
