package queue

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"mqsim/sim"
)

// Message is one message as a queue holds it and a consumer receives it.
type Message struct {
	// ID is the message's position in its queue: 0, 1, 2, ... in enqueue order. A
	// redelivery keeps it; a dead-lettered copy gets a new one in its new queue. The
	// history records it as the record's offset.
	ID       int64
	Value    string
	Key      string   // the routing key
	Exchange string   // where it was published (or dead-lettered) to
	Headers  []Header `json:",omitempty"`
	// PubID and Seq identify the publish: the publisher's incarnation ("p1#2") and its
	// channel's publish sequence number.
	PubID string
	Seq   int64
	// Enqueuer and QSeq order the enqueues a router makes into one queue, as
	// rabbit_fifo's enqueuer sequence numbers do: the router numbers what it forwards to
	// each queue 1, 2, 3, ...; the queue enqueues QSeq only after QSeq-1, once (a resend
	// is answered, not enqueued again), and refuses one that comes early, so the router
	// resends in order. A publisher's messages keep their order in a queue across
	// leader changes.
	Enqueuer string `json:",omitempty"`
	QSeq     int64  `json:",omitempty"`
	// TTL is the per-message expiration; Delay holds it back (SQS DelaySeconds).
	TTL   time.Duration `json:",omitempty"`
	Delay time.Duration `json:",omitempty"`
	// Group and DedupID are SQS FIFO's MessageGroupId and MessageDeduplicationId.
	Group   string `json:",omitempty"`
	DedupID string `json:",omitempty"`

	EnqueuedAt sim.Time
	ExpiresAt  sim.Time `json:",omitempty"` // 0: never
	VisibleAt  sim.Time `json:",omitempty"` // not deliverable or receivable before
	// DeliveryCount counts failed deliveries (x-delivery-count): reject, a consumer that
	// died holding it. AcquiredCount counts every delivery or receive (x-acquired-count,
	// SQS's ApproximateReceiveCount).
	DeliveryCount int `json:",omitempty"`
	AcquiredCount int `json:",omitempty"`
	// Deaths is x-death: where and why the message was dead-lettered, newest first.
	Deaths []Death `json:",omitempty"`
}

// Death is one entry of x-death.
type Death struct {
	Queue, Reason string
	Count         int
}

// Label is the message's short name in the trace: m3:"v3".
func (m *Message) Label() string { return fmt.Sprintf("m%d:%q", m.ID, m.Value) }

// Op is the kind of a queue command.
type Op string

// Queue commands. Every change of a queue's state is one of these, applied in the same
// order on every replica (through Raft for a quorum queue, through the journal for a
// classic one); time comes in the command (At), never from the replica's clock.
const (
	OpEnqueue    Op = "enqueue"    // Msg; Via is the router node to answer
	OpCheckout   Op = "checkout"   // a consumer subscribes: Consumer, Req, Prefetch, AutoAck
	OpCancel     Op = "cancel"     // the consumer cancels: Channel
	OpAck        Op = "ack"        // Channel, Tag
	OpReject     Op = "reject"     // Channel, Tag, Requeue; Nack: basic.nack rather than basic.reject
	OpDown       Op = "down"       // the broker lost the consumer's connection: Channel, Reason
	OpEpoch      Op = "epoch"      // a new leader (or a restarted classic queue) closes every older channel
	OpTick       Op = "tick"       // time passed: TTLs, visibility timeouts, consumer timeouts
	OpReceive    Op = "receive"    // SQS ReceiveMessage: Consumer, Req, Max, Visibility
	OpDelete     Op = "delete"     // SQS DeleteMessage: Consumer, Req, Handle
	OpVisibility Op = "visibility" // SQS ChangeMessageVisibility: Consumer, Req, Handle, Visibility
)

// Command is one change of a queue's state.
type Command struct {
	Op         Op
	At         sim.Time
	Msg        *Message      `json:",omitempty"`
	Via        string        `json:",omitempty"`
	Consumer   string        `json:",omitempty"`
	Req        int64         `json:",omitempty"`
	Channel    int64         `json:",omitempty"`
	Tag        uint64        `json:",omitempty"`
	Requeue    bool          `json:",omitempty"`
	Nack       bool          `json:",omitempty"`
	Prefetch   int           `json:",omitempty"`
	AutoAck    bool          `json:",omitempty"`
	Max        int           `json:",omitempty"`
	Visibility time.Duration `json:",omitempty"`
	Handle     string        `json:",omitempty"`
	Reason     string        `json:",omitempty"`
	// Term is the Raft term of the leader that proposed an epoch.
	Term int64 `json:",omitempty"`
}

// Encode renders the command for the log. encoding/json writes struct fields in order,
// so equal commands encode to equal bytes.
func (c Command) Encode() []byte {
	b, err := json.Marshal(c)
	if err != nil {
		panic("queue: encode command: " + err.Error())
	}
	return b
}

// DecodeCommand reads a command written by Encode.
func DecodeCommand(p []byte) (Command, error) {
	var c Command
	err := json.Unmarshal(p, &c)
	return c, err
}

// EffectKind says what an effect asks the acting node to do.
type EffectKind uint8

const (
	// EffTrace is a trace event: Event (see events.go).
	EffTrace EffectKind = iota
	// EffEnqueued answers the router To about the publish (PubID, Seq): OK, a
	// certain refusal with Reason, or Retry (it came out of sequence).
	EffEnqueued
	// EffSubscribed tells consumer To its channel.
	EffSubscribed
	// EffDeliver pushes Msg to consumer To on Channel with Tag.
	EffDeliver
	// EffClosed tells consumer To that Channel is closed (Reason).
	EffClosed
	// EffDeadLetter republishes Msg to Exchange with Key.
	EffDeadLetter
	// EffReceived answers an SQS receive: Msgs with their Handles.
	EffReceived
	// EffDeleted answers an SQS delete: OK, Deleted.
	EffDeleted
	// EffChanged answers an SQS visibility change: OK.
	EffChanged
)

// Effect is one thing the node acting for a queue (the leader) does after applying a
// command. Replicas that do not act apply the same commands and drop the effects.
type Effect struct {
	Kind     EffectKind
	To       string
	Channel  int64
	Tag      uint64
	Req      int64
	Msg      Message
	Msgs     []Message
	Handles  []string
	PubID    string
	Seq      int64
	OK       bool
	Retry    bool
	Deleted  bool
	Exchange string
	Key      string
	Reason   string
	// Event is the trace event of an EffTrace.
	Event sim.Payload
}

func (e Effect) String() string {
	switch e.Kind {
	case EffTrace:
		return e.Event.Kind() + ": " + e.Event.Detail()
	case EffDeliver:
		return fmt.Sprintf("deliver %s to %s ch%d tag %d", e.Msg.Label(), e.To, e.Channel, e.Tag)
	}
	return fmt.Sprintf("effect %d to %s", e.Kind, e.To)
}

func headerList(hs []Header) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, h.Key+"="+h.Value)
	}
	return strings.Join(parts, ",")
}
