package queue

import (
	"fmt"
	"strings"
	"time"

	"mqsim/sim"
)

// The events the queue broker and its clients put in the trace. A queue's own events
// (State.Apply's, and the journal and leadership events of the node acting for it) name
// the queue in their Queue field, and their text starts with it ("orders: ...").
// Messages are carried whole (Msg) as the queue holds them at the event: their label,
// their counters and their x-death are all there.

// ---- a queue's state machine (State.Apply) ----

// EnqueueResent is a routing node's resend of an enqueue the queue took already: it is
// answered, not stored twice.
type EnqueueResent struct {
	Queue, Value, PubID string
	Seq                 int64
}

// Deduplicated is an SQS FIFO message whose deduplication id the queue saw within the
// window: accepted, not enqueued.
type Deduplicated struct {
	Queue, Value, DedupID string
	FirstSeen             sim.Time
	Window                time.Duration
}

// PublishRefused is a full queue with overflow reject-publish refusing a message.
type PublishRefused struct {
	Queue, Value   string
	Len, MaxLength int
}

// Enqueued is a message appended to the queue's tail. TTL is the one that applies
// (the queue's or the message's, the shorter); Msg.VisibleAt is set when it is delayed.
type Enqueued struct {
	Queue string
	Msg   Message
	TTL   time.Duration
}

// ConsumerSubscribed is a consumer's basic.consume taking effect: it has a channel now.
type ConsumerSubscribed struct {
	Queue, Consumer string
	Channel         int64
	Prefetch        int // 0: unlimited
	AutoAck         bool
}

// Delivered is a message pushed to a consumer. Unacked is what the consumer holds
// after it (manual acks only).
type Delivered struct {
	Queue    string
	Msg      Message
	Consumer string
	Channel  int64
	Tag      uint64
	AutoAck  bool
	Unacked  int
	Prefetch int // 0: unlimited
}

// Redelivered reports whether the message went out before.
func (e Delivered) Redelivered() bool { return e.Msg.AcquiredCount > 1 }

// Acked is a consumer's ack settling a delivery.
type Acked struct {
	Queue    string
	Msg      Message
	Consumer string
	Channel  int64
	Tag      uint64
}

// Settlement is how a consumer answers a delivery.
type Settlement uint8

const (
	SettleAck    Settlement = iota // basic.ack
	SettleReject                   // basic.reject
	SettleNack                     // basic.nack
)

func (s Settlement) String() string {
	switch s {
	case SettleReject:
		return "reject"
	case SettleNack:
		return "nack"
	}
	return "ack"
}

// NoDelivery is an ack, reject or nack for a delivery the queue does not hold (any
// more): it is void.
type NoDelivery struct {
	Queue   string
	How     Settlement
	Channel int64
	Tag     uint64
}

// Rejected is a consumer's reject or nack of a delivery, with or without requeue.
type Rejected struct {
	Queue    string
	Msg      Message
	Consumer string
	How      Settlement // SettleReject or SettleNack
	Requeue  bool
}

// RequeueCause says why a message went back to the queue.
type RequeueCause uint8

const (
	RequeueRejected      RequeueCause = iota // basic.reject with requeue
	RequeueNacked                            // basic.nack with requeue
	RequeueChannelClosed                     // unacked on a channel that closed
)

func (c RequeueCause) String() string {
	switch c {
	case RequeueNacked:
		return "nack"
	case RequeueChannelClosed:
		return "channel closed"
	}
	return "reject"
}

// Requeued is a message back in the queue at its old position (Position, from 0, among
// the ready messages).
type Requeued struct {
	Queue    string
	Msg      Message
	Position int
	Cause    RequeueCause
}

// DeliveryLimitReached is a message whose failed deliveries (Msg.DeliveryCount) passed
// the delivery limit: it is dead-lettered rather than requeued.
type DeliveryLimitReached struct {
	Queue string
	Msg   Message
	Limit int
}

// MessageDropped is a message leaving the queue (for Reason, an x-death reason) with
// nowhere to go: the queue has no dead-letter exchange, or it would go round a
// dead-letter cycle with no rejection in it.
type MessageDropped struct {
	Queue  string
	Msg    Message
	Reason string
	Cycle  bool
}

// DeadLettered is a message republished to the queue's dead-letter exchange. Msg is the
// dead letter: its x-death (Msg.Deaths) has the new entry first.
type DeadLettered struct {
	Queue         string
	Msg           Message
	Exchange, Key string
}

// Expired is a message whose TTL ran out (at Msg.ExpiresAt).
type Expired struct {
	Queue string
	Msg   Message
}

// ConsumerClosed is the queue closing a consumer's channel: its unacked messages go back
// (Requeued of them). Op is the command that closed it: OpCancel (the consumer
// cancelled), OpDown (the broker lost the connection), OpEpoch (the leader changed) or
// OpTick (the consumer timeout).
type ConsumerClosed struct {
	Queue, Consumer string
	Channel         int64
	Op              Op
	Reason          string
	Requeued        int
}

// EpochStarted is the first command a node acting for the queue applies: channels
// opened before it are closed.
type EpochStarted struct {
	Queue string
	Epoch int64
}

// VisibleAgain is an SQS message whose visibility timeout ran out before its worker
// deleted it. Held is how long the worker had it.
type VisibleAgain struct {
	Queue  string
	Msg    Message
	Worker string
	Held   time.Duration
}

// VisibilityRefused is a ChangeMessageVisibility with a receipt handle that is not
// current.
type VisibilityRefused struct{ Queue, Handle, Worker string }

// VisibilityExtended is a ChangeMessageVisibility: hidden By longer, until
// Msg.VisibleAt.
type VisibilityExtended struct {
	Queue string
	Msg   Message
	By    time.Duration
}

// MessagesReceived is an SQS ReceiveMessage that returned messages, or found message
// groups of a FIFO queue blocked. Msgs[i] is hidden under Handles[i] for Visibility.
type MessagesReceived struct {
	Queue, Worker string
	Msgs          []Message
	Handles       []string
	Visibility    time.Duration
	Blocked       []string // FIFO groups skipped: a message of each is in flight
}

// MessageDeleted is an SQS DeleteMessage with the current receipt handle.
type MessageDeleted struct {
	Queue  string
	Msg    Message
	Worker string
	Handle string
}

// DeleteGone is a DeleteMessage for message ID, which is no longer in the queue: it
// succeeds (DeleteMessage is idempotent).
type DeleteGone struct {
	Queue, Handle, Worker string
	ID                    int64
}

// DeleteStale is a DeleteMessage whose receipt handle names message ID in a past
// receive: it succeeds and deletes nothing. The message is now in flight under
// NowHandle, delivered to NowConsumer, or visible again (both empty).
type DeleteStale struct {
	Queue, Handle, Worker  string
	ID                     int64
	NowHandle, NowConsumer string
}

// Redriven is an SQS message received MaxReceive times already, moved to the
// dead-letter queue DLQ instead of being returned.
type Redriven struct {
	Queue      string
	Msg        Message
	MaxReceive int
	DLQ        string
}

// ---- a node: routing, confirms, journals, leadership ----

// PublishDuplicate is a second copy of a publish (the network duplicated it) that the
// node routed already: ignored.
type PublishDuplicate struct {
	Value, PubID string
	Seq          int64
}

// NoExchange is a publish to an exchange that does not exist (NOT_FOUND).
type NoExchange struct {
	Value, PubID, Exchange string
	Seq                    int64
}

// Unroutable is a publish the exchange routes to no queue: returned when mandatory,
// dropped when not.
type Unroutable struct {
	Value, PubID, Exchange string
	Seq                    int64
	Mandatory              bool
}

// Routed is a publish from publisher From routed to Queues (sorted), to be forwarded
// to the node acting for each.
type Routed struct {
	From          string
	Value, PubID  string
	Seq           int64
	Exchange, Key string
	Headers       []Header
	Queues        []string
}

// ConfirmedOnRoute is the bug confirm-on-route: a publish confirmed before any queue
// has it.
type ConfirmedOnRoute struct {
	Value, PubID string
	Seq          int64
}

// DeadLetterUnrouted is a dead letter from queue Source that its dead-letter exchange
// routes to no queue: it is gone.
type DeadLetterUnrouted struct {
	Msg           Message
	Source        string
	Exchange, Key string
}

// ForwardAbandoned is a routed publish that Waiting (queues) did not answer within
// After: the node gives up, and its publisher hears nothing.
type ForwardAbandoned struct {
	Value, PubID string
	Seq          int64
	Waiting      []string
	After        time.Duration
}

// EnqueueAnsweredEarly is the bug confirm-before-commit: a quorum queue's leader
// answers an enqueue it has only appended to its own log.
type EnqueueAnsweredEarly struct {
	Queue, Value, PubID string
	Seq                 int64
}

// PublishConfirmed is the routing node's confirm (basic.ack): every queue has the
// message durably.
type PublishConfirmed struct {
	Value, PubID string
	Seq          int64
	Queues       []string
}

// PublishNacked is the routing node's nack (basic.nack) of a publish a queue refused:
// Certain when no queue took it.
type PublishNacked struct {
	Value, PubID string
	Seq          int64
	Reason       string
	Certain      bool
}

// JournalRecovered is a classic queue replaying its journal after a restart: Commands
// applied, TornBytes cut off the tail, and what it holds now.
type JournalRecovered struct {
	Queue             string
	Commands          int
	TornBytes         int
	Ready, WasUnacked int
}

// JournalSynced is an fsync of a classic queue's journal releasing the confirms that
// waited for it.
type JournalSynced struct {
	Queue    string
	Size     int64
	Released int
}

// ActingStarted is a quorum queue's Raft leader applying its own epoch: it acts for the
// queue from now on.
type ActingStarted struct {
	Queue, Node      string
	Epoch, Term      int64
	Ready, Unsettled int
}

// ActingStopped is a node that acted for a quorum queue losing its Raft leadership.
type ActingStopped struct {
	Queue, Node string
	Term        int64
}

// ---- clients ----

// Published is a publisher's basic.publish to Node. Without confirms it is counted as
// sent at once.
type Published struct {
	Seq         int64
	Value, Node string
	Confirms    bool
}

// PublishReturned is a publisher receiving its message back (basic.return).
type PublishReturned struct {
	Seq           int64
	Value, Reason string
}

// PublisherConfirmed is a publisher receiving its confirm; Returned is the reason of a
// basic.return that came before it ("": none, the message is in its queues).
type PublisherConfirmed struct {
	Seq             int64
	Value, Returned string
}

// PublisherNacked is a publisher receiving a nack: Certain when no queue has the
// message, else some queue may have it.
type PublisherNacked struct {
	Seq           int64
	Value, Reason string
	Certain       bool
}

// ConfirmTimedOut is a publisher giving up on a confirm: the outcome is unknown. When
// Reconnect, it moves on to Node as PubID (a new connection).
type ConfirmTimedOut struct {
	Seq         int64
	Value       string
	After       time.Duration
	Reconnect   bool
	Node, PubID string
}

// ConsumerChannelLost is a consumer finding its channel closed (Reason): the Dropped
// deliveries in its buffer go with it, lost if they were auto-acked.
type ConsumerChannelLost struct {
	Queue   string
	Channel int64
	Reason  string
	Dropped int
	AutoAck bool
}

// ConsumerProcessed is a push consumer finishing a message: done or Failed. With manual
// acks it acks (or answers OnFail) on Channel with Tag while the channel is Open; a
// failed message on a closed channel is not answered (a done one is AckLost).
type ConsumerProcessed struct {
	Queue   string
	Msg     Message
	Failed  bool
	AutoAck bool
	Open    bool
	OnFail  FailAction
	Channel int64
	Tag     uint64
}

// AckLost is a consumer that finished a message whose channel has closed: the ack
// cannot be sent, and the broker requeued the message.
type AckLost struct {
	Queue   string
	Msg     Message
	Channel int64
}

// WorkerProcessed is an SQS worker finishing a message: done (it deletes it with
// Handle) or Failed (it leaves it to come back after its visibility timeout).
type WorkerProcessed struct {
	Queue  string
	Msg    Message
	Failed bool
	Handle string
}

func (EnqueueResent) Kind() string { return "dedup" }
func (e EnqueueResent) Detail() string {
	return fmt.Sprintf("%s: %q from %s seq %d was enqueued already (a resend)", e.Queue, e.Value, e.PubID, e.Seq)
}
func (Deduplicated) Kind() string { return "dedup" }
func (e Deduplicated) Detail() string {
	return fmt.Sprintf("%s: %q: deduplication id %q first seen at %s, within the %s window: accepted, not enqueued",
		e.Queue, e.Value, e.DedupID, e.FirstSeen, e.Window)
}
func (PublishRefused) Kind() string { return "reject-publish" }
func (e PublishRefused) Detail() string {
	return fmt.Sprintf("%s: %q refused: %d messages, max-length %d", e.Queue, e.Value, e.Len, e.MaxLength)
}
func (Enqueued) Kind() string { return "enqueue" }
func (e Enqueued) Detail() string {
	note := ""
	if n := e.Notes(); len(n) > 0 {
		note = " " + strings.Join(n, " ")
	}
	return fmt.Sprintf("%s: %s%s (%s seq %d)", e.Queue, e.Msg.Label(), note, e.Msg.PubID, e.Msg.Seq)
}

// Notes are what is special about the message, as the trace says it: its routing key
// (when it is not the queue's name), group, TTL, delay and x-death.
func (e Enqueued) Notes() []string {
	m := &e.Msg
	var notes []string
	if m.Key != "" && m.Key != e.Queue {
		notes = append(notes, "key="+m.Key)
	}
	if m.Group != "" {
		notes = append(notes, "group="+m.Group)
	}
	if e.TTL > 0 {
		notes = append(notes, "ttl="+e.TTL.String())
	}
	if m.VisibleAt > 0 {
		notes = append(notes, "delayed until "+m.VisibleAt.String())
	}
	if len(m.Deaths) > 0 {
		notes = append(notes, "x-death="+deathList(m.Deaths))
	}
	return notes
}

func (ConsumerSubscribed) Kind() string { return "subscribe" }
func (e ConsumerSubscribed) Detail() string {
	mode := "manual acks"
	if e.AutoAck {
		mode = "auto-ack"
	}
	return fmt.Sprintf("%s: %s on channel %d (prefetch %s, %s)", e.Queue, e.Consumer, e.Channel, prefetchString(e.Prefetch), mode)
}
func (Delivered) Kind() string { return "deliver" }
func (e Delivered) Detail() string {
	note := ""
	if e.Redelivered() {
		note = fmt.Sprintf(" redelivered (delivery %d, failed %d)", e.Msg.AcquiredCount, e.Msg.DeliveryCount)
	}
	if e.AutoAck {
		return fmt.Sprintf("%s: %s to %s ch%d tag %d%s, auto-ack: settled on sending", e.Queue, e.Msg.Label(), e.Consumer, e.Channel, e.Tag, note)
	}
	return fmt.Sprintf("%s: %s to %s ch%d tag %d%s (unacked %d/%s)", e.Queue, e.Msg.Label(), e.Consumer, e.Channel, e.Tag, note, e.Unacked, prefetchString(e.Prefetch))
}
func (Acked) Kind() string { return "ack" }
func (e Acked) Detail() string {
	return fmt.Sprintf("%s: %s by %s ch%d tag %d: settled", e.Queue, e.Msg.Label(), e.Consumer, e.Channel, e.Tag)
}
func (e NoDelivery) Kind() string { return e.How.String() }
func (e NoDelivery) Detail() string {
	if e.How == SettleAck {
		return fmt.Sprintf("%s: ch%d tag %d ignored: no such delivery (its channel was closed and the message requeued, or it is settled)", e.Queue, e.Channel, e.Tag)
	}
	return fmt.Sprintf("%s: ch%d tag %d ignored: no such delivery", e.Queue, e.Channel, e.Tag)
}
func (e Rejected) Kind() string { return e.How.String() }
func (e Rejected) Detail() string {
	return fmt.Sprintf("%s: %s by %s, requeue=%t", e.Queue, e.Msg.Label(), e.Consumer, e.Requeue)
}
func (Requeued) Kind() string { return "requeue" }
func (e Requeued) Detail() string {
	return fmt.Sprintf("%s: %s back at position %d (%s; failed deliveries %d)", e.Queue, e.Msg.Label(), e.Position, e.Cause, e.Msg.DeliveryCount)
}
func (DeliveryLimitReached) Kind() string { return "delivery-limit" }
func (e DeliveryLimitReached) Detail() string {
	return fmt.Sprintf("%s: %s failed %d times, above delivery-limit %d", e.Queue, e.Msg.Label(), e.Msg.DeliveryCount, e.Limit)
}
func (MessageDropped) Kind() string { return "drop" }
func (e MessageDropped) Detail() string {
	if e.Cycle {
		return fmt.Sprintf("%s: %s (%s): a dead-letter cycle without a rejection", e.Queue, e.Msg.Label(), e.Reason)
	}
	return fmt.Sprintf("%s: %s (%s) and the queue has no dead-letter exchange", e.Queue, e.Msg.Label(), e.Reason)
}
func (DeadLettered) Kind() string { return "dead-letter" }
func (e DeadLettered) Detail() string {
	return fmt.Sprintf("%s: %s to exchange %q key %q, x-death %s", e.Queue, e.Msg.Label(), e.Exchange, e.Key, deathList(e.Msg.Deaths))
}
func (Expired) Kind() string { return "expire" }
func (e Expired) Detail() string {
	return fmt.Sprintf("%s: %s: ttl ran out at %s", e.Queue, e.Msg.Label(), e.Msg.ExpiresAt)
}
func (ConsumerClosed) Kind() string { return "channel-closed" }
func (e ConsumerClosed) Detail() string {
	return fmt.Sprintf("%s: %s ch%d: %s; %d unacked requeued", e.Queue, e.Consumer, e.Channel, e.Reason, e.Requeued)
}
func (EpochStarted) Kind() string { return "epoch" }
func (e EpochStarted) Detail() string {
	return fmt.Sprintf("%s: %d: channels opened before it are closed", e.Queue, e.Epoch)
}
func (VisibleAgain) Kind() string { return "visibility" }
func (e VisibleAgain) Detail() string {
	return fmt.Sprintf("%s: %s visible again: %s held it %s without deleting it (receive count %d)",
		e.Queue, e.Msg.Label(), e.Worker, e.Held, e.Msg.AcquiredCount)
}
func (VisibilityRefused) Kind() string { return "visibility" }
func (e VisibilityRefused) Detail() string {
	return fmt.Sprintf("%s: %s by %s refused: the receipt handle is not current", e.Queue, e.Handle, e.Worker)
}
func (VisibilityExtended) Kind() string { return "visibility" }
func (e VisibilityExtended) Detail() string {
	return fmt.Sprintf("%s: %s extended by %s: invisible until %s", e.Queue, e.Msg.Label(), e.By, e.Msg.VisibleAt)
}
func (MessagesReceived) Kind() string { return "receive" }
func (e MessagesReceived) Detail() string {
	return fmt.Sprintf("%s: %s: %s", e.Queue, e.Worker, e.What())
}

// What says what the receive got, as the trace does: each message with its handle and
// receive count, or nothing, and the groups blocked.
func (e MessagesReceived) What() string {
	var parts []string
	for i := range e.Msgs {
		parts = append(parts, fmt.Sprintf("%s as %s (receive %d)", e.Msgs[i].Label(), e.Handles[i], e.Msgs[i].AcquiredCount))
	}
	what := "nothing"
	if len(parts) > 0 {
		what = strings.Join(parts, ", ") + fmt.Sprintf(", invisible for %s", e.Visibility)
	}
	if len(e.Blocked) > 0 {
		what += fmt.Sprintf("; group %s blocked: a message of it is in flight", strings.Join(e.Blocked, ", "))
	}
	return what
}
func (MessageDeleted) Kind() string { return "delete" }
func (e MessageDeleted) Detail() string {
	return fmt.Sprintf("%s: %s by %s with %s", e.Queue, e.Msg.Label(), e.Worker, e.Handle)
}
func (DeleteGone) Kind() string { return "delete" }
func (e DeleteGone) Detail() string {
	return fmt.Sprintf("%s: %s by %s: m%d is gone already", e.Queue, e.Handle, e.Worker, e.ID)
}
func (DeleteStale) Kind() string { return "delete" }
func (e DeleteStale) Detail() string {
	return fmt.Sprintf("%s: %s by %s is a stale receipt handle (m%d is %s): success, nothing deleted", e.Queue, e.Handle, e.Worker, e.ID, e.Where())
}

// Where says what became of the message: "in flight as h3.2", "delivered to c1",
// "visible again".
func (e DeleteStale) Where() string {
	switch {
	case e.NowHandle != "":
		return "in flight as " + e.NowHandle
	case e.NowConsumer != "":
		return "delivered to " + e.NowConsumer
	}
	return "visible again"
}
func (Redriven) Kind() string { return "redrive" }
func (e Redriven) Detail() string {
	return fmt.Sprintf("%s: %s received %d times (maxReceiveCount %d): moved to %s", e.Queue, e.Msg.Label(), e.Msg.AcquiredCount, e.MaxReceive, e.DLQ)
}

func (PublishDuplicate) Kind() string { return "dedup" }
func (e PublishDuplicate) Detail() string {
	return fmt.Sprintf("%q from %s seq %d: a second copy of a publish this node routed already; ignored", e.Value, e.PubID, e.Seq)
}
func (NoExchange) Kind() string { return "route" }
func (e NoExchange) Detail() string {
	return fmt.Sprintf("%q from %s seq %d: no %s (NOT_FOUND)", e.Value, e.PubID, e.Seq, ExchangeText(e.Exchange))
}
func (e Unroutable) Kind() string {
	if e.Mandatory {
		return "return"
	}
	return "drop"
}
func (e Unroutable) Detail() string {
	if e.Mandatory {
		return fmt.Sprintf("%q from %s seq %d: %s routes it to no queue (mandatory: basic.return)", e.Value, e.PubID, e.Seq, ExchangeText(e.Exchange))
	}
	return fmt.Sprintf("%q from %s seq %d: %s routes it to no queue; dropped (not mandatory)", e.Value, e.PubID, e.Seq, ExchangeText(e.Exchange))
}
func (Routed) Kind() string { return "route" }
func (e Routed) Detail() string {
	key := ""
	if e.Exchange != DefaultExchange {
		key = fmt.Sprintf(" key %q", e.Key)
		if len(e.Headers) > 0 {
			key += " headers " + headerList(e.Headers)
		}
	}
	return fmt.Sprintf("%q from %s seq %d via %s%s to %s", e.Value, e.PubID, e.Seq, ExchangeText(e.Exchange), key, strings.Join(e.Queues, ", "))
}
func (ConfirmedOnRoute) Kind() string { return "confirm" }
func (e ConfirmedOnRoute) Detail() string {
	return fmt.Sprintf("%q to %s seq %d: routed, not yet in any queue (bug confirm-on-route)", e.Value, e.PubID, e.Seq)
}
func (DeadLetterUnrouted) Kind() string { return "dead-letter" }
func (e DeadLetterUnrouted) Detail() string {
	return fmt.Sprintf("%s from %s: exchange %q routes key %q to no queue: gone", e.Msg.Label(), e.Source, e.Exchange, e.Key)
}
func (ForwardAbandoned) Kind() string { return "route" }
func (e ForwardAbandoned) Detail() string {
	return fmt.Sprintf("%q (%s seq %d): no answer from %s within %s; giving up, its publisher hears nothing",
		e.Value, e.PubID, e.Seq, strings.Join(e.Waiting, ", "), e.After)
}
func (EnqueueAnsweredEarly) Kind() string { return "enqueue" }
func (e EnqueueAnsweredEarly) Detail() string {
	return fmt.Sprintf("%s: %q from %s seq %d answered on the leader's own append, not committed (bug confirm-before-commit)",
		e.Queue, e.Value, e.PubID, e.Seq)
}
func (PublishConfirmed) Kind() string { return "confirm" }
func (e PublishConfirmed) Detail() string {
	return fmt.Sprintf("%q to %s seq %d: in %s", e.Value, e.PubID, e.Seq, strings.Join(e.Queues, ", "))
}
func (PublishNacked) Kind() string { return "nack" }
func (e PublishNacked) Detail() string {
	return fmt.Sprintf("%q to %s seq %d: %s", e.Value, e.PubID, e.Seq, e.Reason)
}
func (JournalRecovered) Kind() string { return "recover" }
func (e JournalRecovered) Detail() string {
	note := ""
	if e.TornBytes > 0 {
		note = fmt.Sprintf(", cut %dB torn tail", e.TornBytes)
	}
	return fmt.Sprintf("%s: journal %d commands%s: %d ready, %d were unacked", e.Queue, e.Commands, note, e.Ready, e.WasUnacked)
}
func (JournalSynced) Kind() string { return "fsync" }
func (e JournalSynced) Detail() string {
	return fmt.Sprintf("%s: journal durable to %dB, %d confirms released", e.Queue, e.Size, e.Released)
}
func (ActingStarted) Kind() string { return "leader" }
func (e ActingStarted) Detail() string {
	return fmt.Sprintf("%s: %s acts for the queue from epoch %d (term %d): %d ready, %d unsettled",
		e.Queue, e.Node, e.Epoch, e.Term, e.Ready, e.Unsettled)
}
func (ActingStopped) Kind() string { return "leader" }
func (e ActingStopped) Detail() string {
	return fmt.Sprintf("%s: %s stops acting for the queue (term %d)", e.Queue, e.Node, e.Term)
}

func (Published) Kind() string { return "publish" }
func (e Published) Detail() string {
	if !e.Confirms {
		return fmt.Sprintf("seq %d %q to %s (no confirms: counted as sent)", e.Seq, e.Value, e.Node)
	}
	return fmt.Sprintf("seq %d %q to %s", e.Seq, e.Value, e.Node)
}
func (PublishReturned) Kind() string { return "return" }
func (e PublishReturned) Detail() string {
	return fmt.Sprintf("seq %d %q: %s", e.Seq, e.Value, e.Reason)
}
func (PublisherConfirmed) Kind() string { return "confirm" }
func (e PublisherConfirmed) Detail() string {
	if e.Returned != "" {
		return fmt.Sprintf("seq %d %q: returned (%s), so in no queue", e.Seq, e.Value, e.Returned)
	}
	return fmt.Sprintf("seq %d %q", e.Seq, e.Value)
}
func (PublisherNacked) Kind() string { return "nack" }
func (e PublisherNacked) Detail() string {
	if e.Certain {
		return fmt.Sprintf("seq %d %q: %s", e.Seq, e.Value, e.Reason)
	}
	return fmt.Sprintf("seq %d %q: %s (some queue may have it)", e.Seq, e.Value, e.Reason)
}
func (ConfirmTimedOut) Kind() string { return "timeout" }
func (e ConfirmTimedOut) Detail() string {
	if !e.Reconnect {
		return fmt.Sprintf("seq %d %q: no confirm within %s; unknown", e.Seq, e.Value, e.After)
	}
	return fmt.Sprintf("seq %d %q: no confirm within %s; unknown; reconnecting to %s as %s", e.Seq, e.Value, e.After, e.Node, e.PubID)
}
func (ConsumerChannelLost) Kind() string { return "channel-closed" }
func (e ConsumerChannelLost) Detail() string {
	return fmt.Sprintf("%s ch%d: %s%s", e.Queue, e.Channel, e.Reason, e.DroppedNote())
}

// DroppedNote says what became of the buffered deliveries ("" when there were none),
// as the trace does.
func (e ConsumerChannelLost) DroppedNote() string {
	switch {
	case e.Dropped == 0:
		return ""
	case e.AutoAck:
		return fmt.Sprintf("; %d buffered auto-acked deliveries dropped: lost", e.Dropped)
	}
	return fmt.Sprintf("; %d buffered deliveries dropped (the broker requeues them)", e.Dropped)
}
func (ConsumerProcessed) Kind() string { return "process" }
func (e ConsumerProcessed) Detail() string {
	label := e.Msg.Label()
	switch {
	case e.Failed && e.AutoAck:
		return fmt.Sprintf("%s %s failed (auto-ack: nothing to reject)", e.Queue, label)
	case e.Failed && e.Open:
		return fmt.Sprintf("%s %s failed: %s", e.Queue, label, e.OnFail)
	case e.Failed:
		return fmt.Sprintf("%s %s failed; its channel ch%d is closed, nothing to reject", e.Queue, label, e.Channel)
	case e.AutoAck:
		return fmt.Sprintf("%s %s done", e.Queue, label)
	}
	return fmt.Sprintf("%s %s done, ack tag %d", e.Queue, label, e.Tag)
}
func (AckLost) Kind() string { return "ack-lost" }
func (e AckLost) Detail() string {
	return fmt.Sprintf("%s %s done, but channel ch%d is closed: the ack cannot be sent, the broker requeued it", e.Queue, e.Msg.Label(), e.Channel)
}
func (WorkerProcessed) Kind() string { return "process" }
func (e WorkerProcessed) Detail() string {
	if e.Failed {
		return fmt.Sprintf("%s %s failed: not deleted, it comes back after its visibility timeout", e.Queue, e.Msg.Label())
	}
	return fmt.Sprintf("%s %s done, delete %s", e.Queue, e.Msg.Label(), e.Handle)
}

// QueueEvent is an event of one queue, whose text starts with the queue's name: its state
// machine's, and the journal, leadership and enqueue-answer events of the node acting for
// it. (Clients' events name their queue too, but are the clients'.)
type QueueEvent interface {
	sim.Payload
	QueueName() string
}

func (e EnqueueResent) QueueName() string        { return e.Queue }
func (e Deduplicated) QueueName() string         { return e.Queue }
func (e PublishRefused) QueueName() string       { return e.Queue }
func (e Enqueued) QueueName() string             { return e.Queue }
func (e ConsumerSubscribed) QueueName() string   { return e.Queue }
func (e Delivered) QueueName() string            { return e.Queue }
func (e Acked) QueueName() string                { return e.Queue }
func (e NoDelivery) QueueName() string           { return e.Queue }
func (e Rejected) QueueName() string             { return e.Queue }
func (e Requeued) QueueName() string             { return e.Queue }
func (e DeliveryLimitReached) QueueName() string { return e.Queue }
func (e MessageDropped) QueueName() string       { return e.Queue }
func (e DeadLettered) QueueName() string         { return e.Queue }
func (e Expired) QueueName() string              { return e.Queue }
func (e ConsumerClosed) QueueName() string       { return e.Queue }
func (e EpochStarted) QueueName() string         { return e.Queue }
func (e VisibleAgain) QueueName() string         { return e.Queue }
func (e VisibilityRefused) QueueName() string    { return e.Queue }
func (e VisibilityExtended) QueueName() string   { return e.Queue }
func (e MessagesReceived) QueueName() string     { return e.Queue }
func (e MessageDeleted) QueueName() string       { return e.Queue }
func (e DeleteGone) QueueName() string           { return e.Queue }
func (e DeleteStale) QueueName() string          { return e.Queue }
func (e Redriven) QueueName() string             { return e.Queue }
func (e EnqueueAnsweredEarly) QueueName() string { return e.Queue }
func (e JournalRecovered) QueueName() string     { return e.Queue }
func (e JournalSynced) QueueName() string        { return e.Queue }
func (e ActingStarted) QueueName() string        { return e.Queue }
func (e ActingStopped) QueueName() string        { return e.Queue }

// ExchangeText names an exchange as the trace does: `exchange "orders"`, or "the
// default exchange".
func ExchangeText(name string) string {
	if name == DefaultExchange {
		return "the default exchange"
	}
	return fmt.Sprintf("exchange %q", name)
}

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: EnqueueResent{}, About: "a queue answered a resent enqueue it had taken already, without storing it twice"},
		{Example: Deduplicated{}, About: "an SQS FIFO queue accepted a message whose deduplication id it saw within the window, without enqueueing it"},
		{Example: PublishRefused{}, About: "a full queue with overflow reject-publish refused a message"},
		{Example: Enqueued{}, About: "a queue appended a message to its tail"},
		{Example: ConsumerSubscribed{}, About: "a consumer subscribed to a queue (basic.consume) and got a channel"},
		{Example: Delivered{}, About: "a queue pushed a message to a consumer"},
		{Example: Acked{}, About: "a consumer's ack settled a delivery"},
		{Example: NoDelivery{}, About: "an ack, reject or nack named a delivery the queue does not hold: it is void"},
		{Example: Rejected{}, About: "a consumer rejected or nacked a delivery, with or without requeue"},
		{Example: Requeued{}, About: "a message went back to the queue at its old position"},
		{Example: DeliveryLimitReached{}, About: "a message failed more often than the delivery limit: it is dead-lettered"},
		{Example: MessageDropped{}, About: "a message left its queue with nowhere to go: gone"},
		{Example: DeadLettered{}, About: "a queue republished a message to its dead-letter exchange"},
		{Example: Expired{}, About: "a message's TTL ran out in its queue"},
		{Example: ConsumerClosed{}, About: "a queue closed a consumer's channel and requeued what it held unacked"},
		{Example: EpochStarted{}, About: "a node began acting for a queue: channels opened before are closed"},
		{Example: VisibleAgain{}, About: "an SQS message's visibility timeout ran out before its worker deleted it"},
		{Example: VisibilityRefused{}, About: "a ChangeMessageVisibility came with a receipt handle that is not current"},
		{Example: VisibilityExtended{}, About: "a worker extended a message's visibility timeout"},
		{Example: MessagesReceived{}, About: "an SQS receive returned messages, or found FIFO groups blocked"},
		{Example: MessageDeleted{}, About: "an SQS worker deleted a message with its current receipt handle"},
		{Example: DeleteGone{}, About: "an SQS delete named a message that is gone already: success"},
		{Example: DeleteStale{}, About: "an SQS delete came with a stale receipt handle: success, nothing deleted"},
		{Example: Redriven{}, About: "SQS moved a message received too often to the dead-letter queue"},
		{Example: PublishDuplicate{}, About: "a node ignored a second copy of a publish it had routed"},
		{Example: NoExchange{}, About: "a publish named an exchange that does not exist (NOT_FOUND)"},
		{Example: Unroutable{}, About: "an exchange routed a publish to no queue: returned if mandatory, else dropped"},
		{Example: Routed{}, About: "a node routed a publish to its queues"},
		{Example: ConfirmedOnRoute{}, About: "bug confirm-on-route: a publish confirmed before any queue had it"},
		{Example: DeadLetterUnrouted{}, About: "a dead letter's exchange routed it to no queue: gone"},
		{Example: ForwardAbandoned{}, About: "a node gave up forwarding a publish to queues that did not answer"},
		{Example: EnqueueAnsweredEarly{}, About: "bug confirm-before-commit: a quorum queue's leader answered an enqueue before it was committed"},
		{Example: PublishConfirmed{}, About: "a node confirmed a publish every queue has durably (basic.ack)"},
		{Example: PublishNacked{}, About: "a node nacked a publish a queue refused (basic.nack)"},
		{Example: JournalRecovered{}, About: "a classic queue replayed its journal after a restart"},
		{Example: JournalSynced{}, About: "an fsync of a classic queue's journal released the confirms that waited for it"},
		{Example: ActingStarted{}, About: "a quorum queue's Raft leader began acting for the queue"},
		{Example: ActingStopped{}, About: "a node stopped acting for a quorum queue: it lost its Raft leadership"},
		{Example: Published{}, About: "a publisher published a message"},
		{Example: PublishReturned{}, About: "a publisher got its message back (basic.return)"},
		{Example: PublisherConfirmed{}, About: "a publisher got its confirm"},
		{Example: PublisherNacked{}, About: "a publisher got a nack"},
		{Example: ConfirmTimedOut{}, About: "a publisher gave up waiting for a confirm: the publish is unknown"},
		{Example: ConsumerChannelLost{}, About: "a consumer found its channel closed, and dropped its buffered deliveries"},
		{Example: ConsumerProcessed{}, About: "a push consumer finished processing a message, done or failed"},
		{Example: AckLost{}, About: "a consumer finished a message on a closed channel: the ack cannot be sent"},
		{Example: WorkerProcessed{}, About: "an SQS worker finished processing a message, done or failed"},
	}
}
