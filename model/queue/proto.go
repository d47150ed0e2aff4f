package queue

import (
	"fmt"
	"time"
)

// The wire protocol between clients and broker nodes, and between broker nodes. AMQP
// frames and SQS API calls become plain messages; connections are not modelled, their
// liveness is (heartbeats, see Node).

// Declare hands a node the current topology. Scenario commands inject it into every
// node; a restarted node starts with the latest.
type Declare struct{ Topo *Topology }

// Publish is basic.publish from a publisher to the node it is connected to.
type Publish struct {
	PubID     string
	Seq       int64
	Exchange  string
	Key       string
	Headers   []Header
	Value     string
	Mandatory bool
	// Confirm asks for a Confirm (the channel is in confirm mode).
	Confirm bool
	TTL     time.Duration
	Delay   time.Duration
	Group   string
	DedupID string
}

func (p Publish) String() string {
	return fmt.Sprintf("publish %s seq %d %q to %q key %q", p.PubID, p.Seq, p.Value, p.Exchange, p.Key)
}

// Confirm is basic.ack (OK) or basic.nack for a publish. A nack is Certain when no queue
// took the message. PubID names the publisher incarnation (its connection) the publish
// came on: a confirm travels on that connection, so a restarted publisher, numbering its
// publishes from 1 again, never takes an answer meant for its previous incarnation.
type Confirm struct {
	PubID   string
	Seq     int64
	OK      bool
	Certain bool
	Reason  string
}

func (c Confirm) String() string {
	if c.OK {
		return fmt.Sprintf("confirm seq %d", c.Seq)
	}
	return fmt.Sprintf("nack seq %d: %s", c.Seq, c.Reason)
}

// Returned is basic.return: a mandatory message no queue took (PubID as for Confirm).
type Returned struct {
	PubID  string
	Seq    int64
	Reason string
}

// EnqueueReq asks the node acting for Queue (its leader, or its home node) to enqueue a
// routed message and answer Via.
type EnqueueReq struct {
	Queue string
	Msg   Message
	Via   string
}

func (e EnqueueReq) String() string {
	return fmt.Sprintf("enqueue %q in %s (%s seq %d)", e.Msg.Value, e.Queue, e.Msg.PubID, e.Msg.Seq)
}

// EnqueueStatus is how an EnqueueReq ended.
type EnqueueStatus uint8

const (
	EnqueueOK    EnqueueStatus = iota
	EnqueueRetry               // not the leader, or no quorum yet: ask again (Leader: a hint)
	EnqueueFail                // refused for certain (Reason)
)

// EnqueueResp answers an EnqueueReq.
type EnqueueResp struct {
	Queue  string
	PubID  string
	Seq    int64
	Status EnqueueStatus
	Leader string
	Reason string
}

// Subscribe is basic.consume with basic.qos(prefetch) on a fresh channel.
type Subscribe struct {
	Queue    string
	Req      int64
	Prefetch int
	AutoAck  bool
}

// Subscribed answers Subscribe with the channel the consumer now has.
type Subscribed struct {
	Queue   string
	Req     int64
	Channel int64
}

// NotLeader answers a request sent to a node that does not act for the queue.
type NotLeader struct {
	Queue  string
	Req    int64
	Leader string // a hint, "" if unknown
}

// A channel is a TCP connection: it delivers every frame in order or breaks. Frames
// on a channel carry consecutive numbers (Frame, from 1, per direction), and a receiver
// that sees one missing (the network dropped it, a partition cut it) treats the channel
// as broken: the broker closes it and requeues its unacked messages, the consumer
// drops its buffer and reconnects.

// Delivery is basic.deliver.
type Delivery struct {
	Queue       string
	Channel     int64
	Frame       uint64
	Tag         uint64
	Msg         Message
	Redelivered bool
}

func (d Delivery) String() string {
	r := ""
	if d.Redelivered {
		r = " redelivered"
	}
	return fmt.Sprintf("deliver %s %s ch%d tag %d%s", d.Queue, d.Msg.Label(), d.Channel, d.Tag, r)
}

// Ack is basic.ack from a consumer.
type Ack struct {
	Queue   string
	Channel int64
	Frame   uint64
	Tag     uint64
}

// Reject is basic.reject, or basic.nack when Nack.
type Reject struct {
	Queue   string
	Channel int64
	Frame   uint64
	Tag     uint64
	Requeue bool
	Nack    bool
}

// Cancel is basic.cancel, or a consumer's reset of a broken channel (accepted whatever
// its frame: a TCP RST).
type Cancel struct {
	Queue   string
	Channel int64
}

// Heartbeat keeps a channel alive, in both directions.
type Heartbeat struct {
	Queue   string
	Channel int64
	Frame   uint64
}

// ChannelClosed tells a consumer its channel is gone; its unacked deliveries are back in
// the queue and acks on the channel are void.
type ChannelClosed struct {
	Queue   string
	Channel int64
	Reason  string
	Leader  string
}

// ReceiveReq is SQS ReceiveMessage.
type ReceiveReq struct {
	Queue      string
	Req        int64
	Max        int
	Visibility time.Duration
}

// ReceiveResp answers ReceiveReq: the messages with their receipt handles.
type ReceiveResp struct {
	Queue   string
	Req     int64
	Msgs    []Message
	Handles []string
}

// DeleteReq is SQS DeleteMessage.
type DeleteReq struct {
	Queue  string
	Req    int64
	Handle string
}

// DeleteResp answers DeleteReq. OK with Deleted false is SQS's success on a stale handle.
type DeleteResp struct {
	Queue   string
	Req     int64
	OK      bool
	Deleted bool
	Reason  string
}

// VisibilityReq is SQS ChangeMessageVisibility.
type VisibilityReq struct {
	Queue   string
	Req     int64
	Handle  string
	Timeout time.Duration
}

// VisibilityResp answers VisibilityReq.
type VisibilityResp struct {
	Queue  string
	Req    int64
	OK     bool
	Reason string
}
