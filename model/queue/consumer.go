package queue

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/sim"
)

// FailAction is what a consumer does with a message whose processing failed.
type FailAction string

const (
	// FailReject is basic.reject with requeue=false: the queue dead-letters (or drops) it.
	FailReject FailAction = "reject"
	// FailRequeue is basic.reject with requeue=true: back in the queue, and counted as a
	// failed delivery towards the delivery limit.
	FailRequeue FailAction = "requeue"
	// FailNack is basic.nack with requeue=true: back in the queue; RabbitMQ 4.3 does not
	// count it towards the delivery limit.
	FailNack FailAction = "nack"
)

// ConsumerConfig shapes a push consumer (basic.consume).
type ConsumerConfig struct {
	Queue string
	// Nodes are the broker nodes it may connect to, first one first; a node that does
	// not lead the queue names the leader if it knows it.
	Nodes []string
	// Prefetch is basic.qos's prefetch count, per consumer; 0 is unlimited.
	Prefetch int
	// AutoAck settles each message as the broker sends it: a message in the consumer's
	// buffer when its channel dies is gone.
	AutoAck bool
	// Processing is the application's time per message, one message at a time.
	Processing time.Duration
	// Fail lists the values whose processing fails (poison messages); OnFail says how
	// the consumer answers them.
	Fail   []string
	OnFail FailAction
	// Heartbeat is the AMQP heartbeat interval (see Config.Heartbeat).
	Heartbeat time.Duration
}

// DefaultConsumerConfig is unlimited prefetch, manual acks, 10ms per message.
func DefaultConsumerConfig(queue string) ConsumerConfig {
	return ConsumerConfig{Queue: queue, Processing: 10 * time.Millisecond, OnFail: FailRequeue,
		Heartbeat: 500 * time.Millisecond}
}

// Validate checks the heartbeat, which re-arms itself for as long as the consumer lives.
func (c ConsumerConfig) Validate() error {
	return sim.CheckTimerPeriod("heartbeat", c.Heartbeat)
}

// ConsumerStats counts what a consumer did.
type ConsumerStats struct {
	Delivered, Redelivered, Processed, Failed, AcksLost, Dropped, Channels int
	// Values are the values it processed successfully, in order.
	Values []string
}

// Consumer is an AMQP push consumer: it subscribes, buffers deliveries (at most the
// prefetch window is unacknowledged), processes them one at a time and acks each after
// processing. Each processing is a poll in the history: invoked when it starts, ok when
// it succeeds (the application's side effect happened), fail when the message failed;
// one that a crash interrupts never completes.
type Consumer struct {
	cfg     ConsumerConfig
	process int
	rec     *history.Recorder
	node    int
	req     int64
	channel int64
	// inFrame and outFrame number the channel's frames (see Delivery).
	inFrame, outFrame uint64
	subscribing       bool
	lastHeard         sim.Time
	buf               []Delivery
	cur               *processing
	seq               int64
	stats             ConsumerStats
}

type processing struct {
	d   Delivery
	h   history.Handle
	seq int64
}

const (
	timerBeat = 1 + iota
	timerProcessed
	timerSubscribe
	timerReconnect
)

// NewConsumer makes a consumer recording under process.
func NewConsumer(cfg ConsumerConfig, process int, rec *history.Recorder) *Consumer {
	return &Consumer{cfg: cfg, process: process, rec: rec}
}

// Stats returns the consumer's counters.
func (c *Consumer) Stats() ConsumerStats { return c.stats }

// Channel is the consumer's open channel, 0 if none.
func (c *Consumer) Channel() int64 { return c.channel }

// Busy reports whether it is processing or holds buffered deliveries.
func (c *Consumer) Busy() bool { return c.cur != nil || len(c.buf) > 0 }

// Start subscribes and starts the heartbeat.
func (c *Consumer) Start(env *sim.Env) {
	c.subscribe(env)
	env.SetTimer(c.cfg.Heartbeat, sim.TimerTag{Kind: timerBeat})
}

func (c *Consumer) nodeID(env *sim.Env) sim.NodeID {
	name := c.cfg.Nodes[c.node%len(c.cfg.Nodes)]
	id, ok := env.Lookup(name)
	if !ok {
		panic("queue: consumer " + env.Name() + ": no node " + name)
	}
	return id
}

// point moves the connection to the leader a node named, or to the next node.
func (c *Consumer) point(leader string) {
	c.node = pointAt(&c.cfg.Nodes, c.node, leader)
}

// pointAt returns the index of leader in nodes (adding it if missing), or the next index
// when leader is "".
func pointAt(nodes *[]string, cur int, leader string) int {
	if leader == "" {
		return cur + 1
	}
	if i := slices.Index(*nodes, leader); i >= 0 {
		return i
	}
	*nodes = append(slices.Clone(*nodes), leader)
	return len(*nodes) - 1
}

func (c *Consumer) subscribe(env *sim.Env) {
	c.req++
	c.subscribing = true
	env.Send(c.nodeID(env), Subscribe{Queue: c.cfg.Queue, Req: c.req, Prefetch: c.cfg.Prefetch, AutoAck: c.cfg.AutoAck})
	env.SetTimer(2*c.cfg.Heartbeat, sim.TimerTag{Kind: timerSubscribe, Arg: c.req})
}

// Recv handles the broker's messages.
func (c *Consumer) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Subscribed:
		if m.Req == c.req && c.subscribing {
			c.subscribing = false
			c.channel = m.Channel
			c.inFrame, c.outFrame = 0, 0
			c.lastHeard = env.Now()
			c.stats.Channels++
		}
	case NotLeader:
		if m.Req == c.req && c.subscribing {
			c.subscribing = false
			c.point(m.Leader)
			env.SetTimer(50*time.Millisecond, sim.TimerTag{Kind: timerReconnect})
		}
	case Delivery:
		if m.Channel != c.channel || c.channel == 0 {
			return // for a channel that is closed: the broker requeued it already
		}
		if !c.frame(env, m.Frame) {
			return
		}
		c.stats.Delivered++
		if m.Redelivered {
			c.stats.Redelivered++
		}
		c.buf = append(c.buf, m)
		c.next(env)
	case Heartbeat:
		if m.Channel == c.channel && c.channel != 0 {
			c.frame(env, m.Frame)
		}
	case ChannelClosed:
		if m.Channel == c.channel && c.channel != 0 {
			c.close(env, m.Reason)
			c.point(m.Leader)
			env.SetTimer(50*time.Millisecond, sim.TimerTag{Kind: timerReconnect})
		}
	}
}

// frame takes the next frame of the channel; a missing one means the connection broke:
// the consumer resets it (the broker requeues what it holds) and reconnects.
func (c *Consumer) frame(env *sim.Env, f uint64) bool {
	if f != c.inFrame+1 {
		ch := c.channel
		c.close(env, fmt.Sprintf("connection broken: frame %d came after frame %d", f, c.inFrame))
		env.Send(c.nodeID(env), Cancel{Queue: c.cfg.Queue, Channel: ch})
		c.subscribe(env)
		return false
	}
	c.inFrame = f
	c.lastHeard = env.Now()
	return true
}

// send sends a frame on the channel.
func (c *Consumer) send(env *sim.Env, msg sim.Message) {
	env.Send(c.nodeID(env), msg)
}

func (c *Consumer) nextFrame() uint64 {
	c.outFrame++
	return c.outFrame
}

// close forgets the channel: buffered deliveries go with it (the broker requeues them,
// unless they were auto-acked: then they are lost).
func (c *Consumer) close(env *sim.Env, reason string) {
	c.stats.Dropped += len(c.buf)
	sim.Record(env, ConsumerChannelLost{Queue: c.cfg.Queue, Channel: c.channel, Reason: reason, Dropped: len(c.buf), AutoAck: c.cfg.AutoAck})
	c.channel = 0
	c.buf = nil
}

func (c *Consumer) next(env *sim.Env) {
	if c.cur != nil || len(c.buf) == 0 {
		return
	}
	d := c.buf[0]
	c.buf = c.buf[1:]
	c.seq++
	c.cur = &processing{d: d, h: c.rec.InvokePoll(int64(env.Now()), c.process, c.cfg.Queue), seq: c.seq}
	env.SetTimer(c.cfg.Processing, sim.TimerTag{Kind: timerProcessed, Arg: c.seq})
}

func (c *Consumer) finish(env *sim.Env) {
	p := c.cur
	c.cur = nil
	d := p.d
	reads := []history.PartitionRecords{{TopicPartition: history.TopicPartition{Topic: c.cfg.Queue},
		Records: []history.Record{{Offset: d.Msg.ID, Value: d.Msg.Value}}}}
	now := int64(env.Now())
	open := d.Channel == c.channel && c.channel != 0
	done := ConsumerProcessed{Queue: c.cfg.Queue, Msg: d.Msg, AutoAck: c.cfg.AutoAck, Open: open, OnFail: c.cfg.OnFail, Channel: d.Channel, Tag: d.Tag}
	if slices.Contains(c.cfg.Fail, d.Msg.Value) {
		c.stats.Failed++
		c.rec.Fail(now, p.h, history.Result{Reads: reads, Error: "processing failed"})
		done.Failed = true
		sim.Record(env, done)
		if !c.cfg.AutoAck && open {
			c.send(env, Reject{Queue: c.cfg.Queue, Channel: d.Channel, Frame: c.nextFrame(), Tag: d.Tag,
				Requeue: c.cfg.OnFail != FailReject, Nack: c.cfg.OnFail == FailNack})
		}
	} else {
		c.stats.Processed++
		c.stats.Values = append(c.stats.Values, d.Msg.Value)
		c.rec.Ok(now, p.h, history.Result{Reads: reads})
		switch {
		case c.cfg.AutoAck || open:
			sim.Record(env, done)
			if !c.cfg.AutoAck {
				c.send(env, Ack{Queue: c.cfg.Queue, Channel: d.Channel, Frame: c.nextFrame(), Tag: d.Tag})
			}
		default:
			c.stats.AcksLost++
			sim.Record(env, AckLost{Queue: c.cfg.Queue, Msg: d.Msg, Channel: d.Channel})
		}
	}
	c.next(env)
}

// Timer runs the heartbeat, processing, and reconnection.
func (c *Consumer) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case timerBeat:
		env.SetTimer(c.cfg.Heartbeat, sim.TimerTag{Kind: timerBeat})
		if c.channel == 0 {
			return
		}
		if silent := env.Now().Sub(c.lastHeard); silent > 2*c.cfg.Heartbeat {
			c.close(env, fmt.Sprintf("no heartbeat from the broker for %s", silent))
			c.node++
			c.subscribe(env)
			return
		}
		c.send(env, Heartbeat{Queue: c.cfg.Queue, Channel: c.channel, Frame: c.nextFrame()})
	case timerProcessed:
		if c.cur != nil && c.cur.seq == tag.Arg {
			c.finish(env)
		}
	case timerSubscribe:
		if c.subscribing && tag.Arg == c.req {
			c.node++
			c.subscribe(env)
		}
	case timerReconnect:
		if c.channel == 0 && !c.subscribing {
			c.subscribe(env)
		}
	}
}
