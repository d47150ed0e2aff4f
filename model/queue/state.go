package queue

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/sim"
)

// State is one queue: its messages, consumers and deliveries, as a deterministic state
// machine. Apply takes a Command and returns the Effects the acting node must carry out;
// every replica applies the same commands in the same order and so holds the same state
// (rabbit_fifo's design: even which consumer gets which message is decided in Apply).
type State struct {
	cfg QueueConfig

	epoch       int64
	nextID      int64
	nextChannel int64
	// ready are the messages waiting for a consumer or a receive, by ID: a returned
	// message goes back to its original position.
	ready []*Message
	// out are the messages delivered and not settled, in delivery order: pushed to a
	// consumer (Channel > 0) or received by an SQS client (Handle set).
	out       []*outMsg
	consumers []*consumer
	rr        int // round-robin position among consumers
	// next is, per enqueuer, the QSeq it must send next (see Message.QSeq).
	next map[string]int64
	// dedup holds SQS FIFO deduplication ids with the time they were first accepted.
	dedup map[string]sim.Time

	stats Stats
	eff   []Effect
	// tracing: Apply describes what it does in EffTrace effects (off when the world keeps
	// no trace, so that nothing is built only to be thrown away).
	tracing bool
	// lastBlocked is the FIFO groups the last receive found blocked, to trace it once.
	lastBlocked string
}

type outMsg struct {
	msg      *Message
	channel  int64 // push delivery
	tag      uint64
	consumer string
	handle   string // SQS receipt handle
	at       sim.Time
}

type consumer struct {
	channel  int64
	name     string
	prefetch int
	autoAck  bool
	epoch    int64
	nextTag  uint64
	unacked  int
}

// Stats counts what happened to a queue's messages.
type Stats struct {
	Enqueued, Deduplicated, Rejected    int // rejected: reject-publish refusals
	Delivered, Redelivered              int
	Acked, Requeued                     int
	DeadLettered, Expired, Dropped      int
	Received, Deleted, Redriven, Stale  int // SQS; Stale: deletes with an old receipt handle
	ChannelsClosed, ConsumerTimeouts    int
	LastDeadLetterReason, LastDropCause string
}

// NewState makes an empty queue.
func NewState(cfg QueueConfig) *State {
	return &State{cfg: cfg, next: map[string]int64{}, dedup: map[string]sim.Time{}, tracing: true}
}

// Config is the queue's declaration.
func (s *State) Config() QueueConfig { return s.cfg }

// Epoch is the number of epoch commands applied.
func (s *State) Epoch() int64 { return s.epoch }

// Stats returns the counters.
func (s *State) Stats() Stats { return s.stats }

// Len is the number of messages in the queue: ready plus unsettled.
func (s *State) Len() int { return len(s.ready) + len(s.out) }

// Ready lists the ready messages in queue order (copies).
func (s *State) Ready() []Message {
	out := make([]Message, len(s.ready))
	for i, m := range s.ready {
		out[i] = *m
	}
	return out
}

// Unsettled is a delivered message that is not settled yet.
type Unsettled struct {
	Msg      Message
	Consumer string
	Channel  int64
	Tag      uint64
	Handle   string
	At       sim.Time
}

// Unsettled lists the delivered, unsettled messages in delivery order.
func (s *State) Unsettled() []Unsettled {
	out := make([]Unsettled, len(s.out))
	for i, o := range s.out {
		out[i] = Unsettled{Msg: *o.msg, Consumer: o.consumer, Channel: o.channel, Tag: o.tag, Handle: o.handle, At: o.at}
	}
	return out
}

// ConsumerView is one registered consumer.
type ConsumerView struct {
	Name     string
	Channel  int64
	Prefetch int
	AutoAck  bool
	Unacked  int
	Epoch    int64
}

// Consumers lists the registered consumers in subscription order.
func (s *State) Consumers() []ConsumerView {
	out := make([]ConsumerView, len(s.consumers))
	for i, c := range s.consumers {
		out[i] = ConsumerView{Name: c.name, Channel: c.channel, Prefetch: c.prefetch, AutoAck: c.autoAck, Unacked: c.unacked, Epoch: c.epoch}
	}
	return out
}

// HasChannel reports whether channel is a registered consumer's.
func (s *State) HasChannel(channel int64) bool { return s.consumer(channel) != nil }

// Apply applies one command and returns what the acting node must do, in order.
func (s *State) Apply(c Command) []Effect {
	s.eff = nil
	switch c.Op {
	case OpEnqueue:
		if c.Msg != nil {
			s.enqueue(c)
		}
	case OpCheckout:
		s.checkout(c)
	case OpCancel:
		if cs := s.consumer(c.Channel); cs != nil {
			s.closeChannel(OpCancel, cs, false, "cancelled by the consumer")
		}
	case OpAck:
		s.ack(c)
	case OpReject:
		s.reject(c)
	case OpDown:
		if cs := s.consumer(c.Channel); cs != nil {
			s.closeChannel(OpDown, cs, true, c.Reason)
		}
	case OpEpoch:
		s.newEpoch(c)
	case OpTick:
		s.tick(c.At)
	case OpReceive:
		s.receive(c)
	case OpDelete:
		s.delete(c)
	case OpVisibility:
		s.changeVisibility(c)
	}
	s.assign(c.At)
	return s.eff
}

// SetTracing says whether Apply describes what it does in EffTrace effects (it does by
// default).
func (s *State) SetTracing(on bool) { s.tracing = on }

// trace describes what Apply did in an EffTrace effect. It is generic so that the event
// is boxed only when the state is tracing.
func trace[P sim.Payload](s *State, p P) {
	if s.tracing {
		s.eff = append(s.eff, Effect{Kind: EffTrace, Event: p})
	}
}

func (s *State) emit(e Effect) { s.eff = append(s.eff, e) }

func (s *State) consumer(channel int64) *consumer {
	for _, c := range s.consumers {
		if c.channel == channel {
			return c
		}
	}
	return nil
}

// insertReady puts m back among the ready messages at its ID's position.
func (s *State) insertReady(m *Message) {
	i, _ := slices.BinarySearchFunc(s.ready, m.ID, func(x *Message, id int64) int {
		switch {
		case x.ID < id:
			return -1
		case x.ID > id:
			return 1
		}
		return 0
	})
	s.ready = slices.Insert(s.ready, i, m)
}

func (s *State) enqueue(c Command) {
	m := *c.Msg
	m.Deaths = slices.Clone(m.Deaths)
	m.Headers = slices.Clone(m.Headers)
	answer := Effect{Kind: EffEnqueued, To: c.Via, PubID: m.PubID, Seq: m.Seq, OK: true}
	next := s.next[m.Enqueuer]
	if next == 0 {
		next = 1
	}
	switch {
	case m.QSeq < next:
		trace(s, EnqueueResent{Queue: s.cfg.Name, Value: m.Value, PubID: m.PubID, Seq: m.Seq})
		s.emit(answer)
		return
	case m.QSeq > next:
		answer.OK, answer.Retry = false, true
		s.emit(answer)
		return
	}
	s.next[m.Enqueuer] = next + 1
	if s.cfg.FIFO {
		id := m.DedupID
		if id == "" && s.cfg.ContentDedup {
			id = "body:" + m.Value
		}
		if id != "" {
			if first, ok := s.dedup[id]; ok && c.At < first.Add(s.cfg.DedupWindow) {
				s.stats.Deduplicated++
				trace(s, Deduplicated{Queue: s.cfg.Name, Value: m.Value, DedupID: id, FirstSeen: first, Window: s.cfg.DedupWindow})
				s.emit(Effect{Kind: EffEnqueued, To: c.Via, PubID: m.PubID, Seq: m.Seq, OK: true})
				return
			}
			s.dedup[id] = c.At
		}
	}
	if s.cfg.MaxLength > 0 && s.Len() >= s.cfg.MaxLength {
		if s.cfg.Overflow == RejectPublish || len(s.ready) == 0 {
			s.stats.Rejected++
			trace(s, PublishRefused{Queue: s.cfg.Name, Value: m.Value, Len: s.Len(), MaxLength: s.cfg.MaxLength})
			s.emit(Effect{Kind: EffEnqueued, To: c.Via, PubID: m.PubID, Seq: m.Seq, Reason: "reject-publish: queue " + s.cfg.Name + " is full"})
			return
		}
		head := s.ready[0]
		s.ready = s.ready[1:]
		s.deadLetter(head, "maxlen")
	}
	m.ID = s.nextID
	s.nextID++
	m.EnqueuedAt = c.At
	m.DeliveryCount, m.AcquiredCount = 0, 0
	m.ExpiresAt = 0
	ttl := s.cfg.MessageTTL
	if m.TTL > 0 && (ttl == 0 || m.TTL < ttl) {
		ttl = m.TTL
	}
	if ttl > 0 {
		m.ExpiresAt = c.At.Add(ttl)
	}
	m.VisibleAt = 0
	if d := max(s.cfg.Delay, m.Delay); d > 0 {
		m.VisibleAt = c.At.Add(d)
	}
	s.ready = append(s.ready, &m) // IDs grow: the end is its place
	s.stats.Enqueued++
	trace(s, Enqueued{Queue: s.cfg.Name, Msg: m, TTL: ttl})
	s.emit(Effect{Kind: EffEnqueued, To: c.Via, PubID: m.PubID, Seq: m.Seq, OK: true})
}

func deathList(ds []Death) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s/%s×%d", d.Queue, d.Reason, d.Count))
	}
	return strings.Join(parts, ",")
}

func (s *State) checkout(c Command) {
	s.nextChannel++
	cs := &consumer{channel: s.nextChannel, name: c.Consumer, prefetch: c.Prefetch, autoAck: c.AutoAck, epoch: s.epoch}
	s.consumers = append(s.consumers, cs)
	trace(s, ConsumerSubscribed{Queue: s.cfg.Name, Consumer: c.Consumer, Channel: cs.channel, Prefetch: c.Prefetch, AutoAck: c.AutoAck})
	s.emit(Effect{Kind: EffSubscribed, To: c.Consumer, Req: c.Req, Channel: cs.channel})
}

// assign pushes ready messages to consumers with credit, round-robin (basic.qos: at most
// prefetch unacknowledged per consumer; 0 is unlimited).
func (s *State) assign(now sim.Time) {
	for len(s.consumers) > 0 {
		i := s.firstDeliverable(now)
		if i < 0 {
			return
		}
		var cs *consumer
		for k := 0; k < len(s.consumers); k++ {
			c := s.consumers[(s.rr+k)%len(s.consumers)]
			if c.epoch == s.epoch && (c.autoAck || c.prefetch == 0 || c.unacked < c.prefetch) {
				cs = c
				s.rr = (s.rr + k + 1) % len(s.consumers)
				break
			}
		}
		if cs == nil {
			return
		}
		m := s.ready[i]
		s.ready = slices.Delete(s.ready, i, i+1)
		if m.ExpiresAt > 0 && m.ExpiresAt <= now {
			s.expire(m)
			continue
		}
		m.AcquiredCount++
		cs.nextTag++
		s.stats.Delivered++
		if m.AcquiredCount > 1 {
			s.stats.Redelivered++
		}
		if !cs.autoAck {
			cs.unacked++
			s.out = append(s.out, &outMsg{msg: m, channel: cs.channel, tag: cs.nextTag, consumer: cs.name, at: now})
		}
		trace(s, Delivered{Queue: s.cfg.Name, Msg: *m, Consumer: cs.name, Channel: cs.channel, Tag: cs.nextTag,
			AutoAck: cs.autoAck, Unacked: cs.unacked, Prefetch: cs.prefetch})
		s.emit(Effect{Kind: EffDeliver, To: cs.name, Channel: cs.channel, Tag: cs.nextTag, Msg: *m})
	}
}

func prefetchString(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

// firstDeliverable is the index of the first ready message that is visible now.
func (s *State) firstDeliverable(now sim.Time) int {
	for i, m := range s.ready {
		if m.VisibleAt <= now {
			return i
		}
	}
	return -1
}

func (s *State) findOut(channel int64, tag uint64) int {
	return slices.IndexFunc(s.out, func(o *outMsg) bool { return o.channel == channel && o.tag == tag })
}

func (s *State) settle(i int) *outMsg {
	o := s.out[i]
	s.out = slices.Delete(s.out, i, i+1)
	if cs := s.consumer(o.channel); cs != nil && o.channel > 0 {
		cs.unacked--
	}
	return o
}

func (s *State) ack(c Command) {
	i := s.findOut(c.Channel, c.Tag)
	if i < 0 {
		trace(s, NoDelivery{Queue: s.cfg.Name, How: SettleAck, Channel: c.Channel, Tag: c.Tag})
		return
	}
	o := s.settle(i)
	s.stats.Acked++
	trace(s, Acked{Queue: s.cfg.Name, Msg: *o.msg, Consumer: o.consumer, Channel: c.Channel, Tag: c.Tag})
}

func (s *State) reject(c Command) {
	how, cause := SettleReject, RequeueRejected
	if c.Nack {
		how, cause = SettleNack, RequeueNacked
	}
	i := s.findOut(c.Channel, c.Tag)
	if i < 0 {
		trace(s, NoDelivery{Queue: s.cfg.Name, How: how, Channel: c.Channel, Tag: c.Tag})
		return
	}
	o := s.settle(i)
	m := o.msg
	trace(s, Rejected{Queue: s.cfg.Name, Msg: *m, Consumer: o.consumer, How: how, Requeue: c.Requeue})
	if !c.Requeue {
		s.deadLetter(m, "rejected")
		return
	}
	// RabbitMQ 4.3: basic.reject counts as a failed delivery, basic.nack does not.
	s.requeue(m, !c.Nack, cause)
}

// requeue returns a message to the queue, counting a failed delivery if failed, and
// dead-letters it instead once its failed deliveries pass the delivery limit.
func (s *State) requeue(m *Message, failed bool, cause RequeueCause) {
	if failed {
		m.DeliveryCount++
	}
	if s.cfg.DeliveryLimit >= 0 && m.DeliveryCount > s.cfg.DeliveryLimit {
		trace(s, DeliveryLimitReached{Queue: s.cfg.Name, Msg: *m, Limit: s.cfg.DeliveryLimit})
		s.deadLetter(m, "delivery_limit")
		return
	}
	s.stats.Requeued++
	s.insertReady(m)
	if s.tracing {
		trace(s, Requeued{Queue: s.cfg.Name, Msg: *m, Position: slices.Index(s.ready, m), Cause: cause})
	}
}

// deadLetter republishes m to the dead-letter exchange with an x-death entry, or drops it
// when the queue has none. Dead-lettering is at-most-once, as RabbitMQ's default: the
// message leaves this queue now, and if its republish fails it is gone.
func (s *State) deadLetter(m *Message, reason string) {
	s.stats.LastDeadLetterReason = reason
	if s.cfg.DLX == "" && s.cfg.DLXKey == "" {
		s.stats.Dropped++
		s.stats.LastDropCause = reason
		trace(s, MessageDropped{Queue: s.cfg.Name, Msg: *m, Reason: reason})
		return
	}
	cycle := false
	for _, d := range m.Deaths {
		if d.Queue == s.cfg.Name {
			cycle = true
		}
	}
	if cycle && reason != "rejected" && !slices.ContainsFunc(m.Deaths, func(d Death) bool { return d.Reason == "rejected" }) {
		s.stats.Dropped++
		trace(s, MessageDropped{Queue: s.cfg.Name, Msg: *m, Reason: reason, Cycle: true})
		return
	}
	d := *m
	d.Deaths = addDeath(m.Deaths, s.cfg.Name, reason)
	key := m.Key
	if s.cfg.DLXKey != "" {
		key = s.cfg.DLXKey
	}
	s.stats.DeadLettered++
	trace(s, DeadLettered{Queue: s.cfg.Name, Msg: d, Exchange: s.cfg.DLX, Key: key})
	s.emit(Effect{Kind: EffDeadLetter, Msg: d, Exchange: s.cfg.DLX, Key: key, Reason: reason})
}

func addDeath(ds []Death, queue, reason string) []Death {
	out := slices.Clone(ds)
	for i, d := range out {
		if d.Queue == queue && d.Reason == reason {
			d.Count++
			out = slices.Delete(out, i, i+1)
			return append([]Death{d}, out...)
		}
	}
	return append([]Death{{Queue: queue, Reason: reason, Count: 1}}, out...)
}

// closeChannel removes a consumer and returns its unsettled messages to the queue:
// counted as failed deliveries when failed (a consumer that died: RabbitMQ 4.3 counts a
// lost connection, not a timeout or a leader change).
func (s *State) closeChannel(by Op, cs *consumer, failed bool, reason string) {
	s.consumers = slices.DeleteFunc(s.consumers, func(c *consumer) bool { return c == cs })
	if s.rr >= len(s.consumers) {
		s.rr = 0
	}
	s.stats.ChannelsClosed++
	var back []*Message
	s.out = slices.DeleteFunc(s.out, func(o *outMsg) bool {
		if o.channel == cs.channel {
			back = append(back, o.msg)
			return true
		}
		return false
	})
	trace(s, ConsumerClosed{Queue: s.cfg.Name, Consumer: cs.name, Channel: cs.channel, Op: by, Reason: reason, Requeued: len(back)})
	s.emit(Effect{Kind: EffClosed, To: cs.name, Channel: cs.channel, Reason: reason})
	for _, m := range back {
		s.requeue(m, failed, RequeueChannelClosed)
	}
}

func (s *State) newEpoch(c Command) {
	s.epoch++
	trace(s, EpochStarted{Queue: s.cfg.Name, Epoch: s.epoch})
	for {
		i := slices.IndexFunc(s.consumers, func(cs *consumer) bool { return cs.epoch < s.epoch })
		if i < 0 {
			break
		}
		s.closeChannel(OpEpoch, s.consumers[i], false, "the queue's leader changed")
	}
}

func (s *State) expire(m *Message) {
	s.stats.Expired++
	trace(s, Expired{Queue: s.cfg.Name, Msg: *m})
	s.deadLetter(m, "expired")
}

// tick applies what time decided: expired TTLs, SQS visibility timeouts that ran out,
// and consumers that held a delivery past the consumer timeout.
func (s *State) tick(now sim.Time) {
	s.ready = slices.DeleteFunc(s.ready, func(m *Message) bool {
		if m.ExpiresAt > 0 && m.ExpiresAt <= now {
			s.expire(m)
			return true
		}
		return false
	})
	var back []*outMsg
	s.out = slices.DeleteFunc(s.out, func(o *outMsg) bool {
		if o.handle != "" && o.msg.VisibleAt <= now {
			back = append(back, o)
			return true
		}
		return false
	})
	for _, o := range back {
		s.insertReady(o.msg)
		trace(s, VisibleAgain{Queue: s.cfg.Name, Msg: *o.msg, Worker: o.consumer, Held: o.msg.VisibleAt.Sub(o.at)})
	}
	if t := s.cfg.ConsumerTimeout; t > 0 {
		for {
			i := slices.IndexFunc(s.out, func(o *outMsg) bool { return o.channel > 0 && o.at.Add(t) <= now })
			if i < 0 {
				break
			}
			o := s.out[i]
			cs := s.consumer(o.channel)
			if cs == nil {
				break // cannot happen: out entries of a closed channel are gone
			}
			s.stats.ConsumerTimeouts++
			s.closeChannel(OpTick, cs, false, fmt.Sprintf("consumer timeout: %s unacknowledged for %s (PRECONDITION_FAILED)", o.msg.Label(), t))
		}
	}
}

// NextDeadline is the earliest time at which a tick would change something, 0 if none.
func (s *State) NextDeadline() sim.Time {
	var d sim.Time
	first := func(t sim.Time) {
		if t > 0 && (d == 0 || t < d) {
			d = t
		}
	}
	for _, m := range s.ready {
		first(m.ExpiresAt)
	}
	for _, o := range s.out {
		if o.handle != "" {
			first(o.msg.VisibleAt)
		} else if s.cfg.ConsumerTimeout > 0 {
			first(o.at.Add(s.cfg.ConsumerTimeout))
		}
	}
	return d
}

// NextVisible is when the first delayed ready message becomes deliverable (0: none is
// waiting), so a push queue can wake up for it.
func (s *State) NextVisible(now sim.Time) sim.Time {
	var d sim.Time
	for _, m := range s.ready {
		if m.VisibleAt > now && (d == 0 || m.VisibleAt < d) {
			d = m.VisibleAt
		}
	}
	return d
}

// dueVisible reports whether a delayed message has become deliverable by now.
func (s *State) dueVisible(now sim.Time) bool {
	return slices.ContainsFunc(s.ready, func(m *Message) bool { return m.VisibleAt > 0 && m.VisibleAt <= now })
}

// receive is SQS ReceiveMessage: up to Max visible messages, each made invisible for
// the visibility timeout under a new receipt handle. A FIFO queue returns nothing of a
// message group while any message of the group is in flight, and keeps each group's
// order. With a redrive policy, a message already received MaxReceive times moves to
// the dead-letter queue instead of being returned.
func (s *State) receive(c Command) {
	max := c.Max
	if max <= 0 {
		max = 1
	}
	vis := c.Visibility
	if vis <= 0 {
		vis = s.cfg.Visibility
	}
	blocked := map[string]bool{}
	if s.cfg.FIFO {
		for _, o := range s.out {
			if o.handle != "" {
				blocked[o.msg.Group] = true
			}
		}
	}
	var got []Message
	var handles []string
	var skipped []string
	for i := 0; i < len(s.ready) && len(got) < max; {
		m := s.ready[i]
		if s.cfg.FIFO && blocked[m.Group] {
			if !slices.Contains(skipped, m.Group) {
				skipped = append(skipped, m.Group)
			}
			i++
			continue
		}
		if m.VisibleAt > c.At {
			if s.cfg.FIFO {
				blocked[m.Group] = true // later messages of its group wait behind it
			}
			i++
			continue
		}
		s.ready = slices.Delete(s.ready, i, i+1)
		if m.ExpiresAt > 0 && m.ExpiresAt <= c.At {
			s.expire(m)
			continue
		}
		if s.cfg.MaxReceive > 0 && m.AcquiredCount >= s.cfg.MaxReceive {
			s.redrive(m)
			continue
		}
		m.AcquiredCount++
		m.VisibleAt = c.At.Add(vis)
		h := fmt.Sprintf("h%d.%d", m.ID, m.AcquiredCount)
		s.out = append(s.out, &outMsg{msg: m, consumer: c.Consumer, handle: h, at: c.At})
		got = append(got, *m)
		handles = append(handles, h)
		s.stats.Received++
	}
	// Empty receives are not worth a line, nor is the same blocking said twice in a row.
	blockedNote := strings.Join(skipped, ",")
	if s.tracing && (len(got) > 0 || (len(skipped) > 0 && blockedNote != s.lastBlocked)) {
		// got and handles go to the worker too: the event keeps its own copies.
		trace(s, MessagesReceived{Queue: s.cfg.Name, Worker: c.Consumer, Msgs: slices.Clone(got), Handles: slices.Clone(handles),
			Visibility: vis, Blocked: skipped})
	}
	s.lastBlocked = blockedNote
	if len(got) > 0 {
		s.lastBlocked = ""
	}
	s.emit(Effect{Kind: EffReceived, To: c.Consumer, Req: c.Req, Msgs: got, Handles: handles})
}

func (s *State) redrive(m *Message) {
	s.stats.Redriven++
	d := *m
	d.Deaths = addDeath(m.Deaths, s.cfg.Name, "maxReceiveCount")
	trace(s, Redriven{Queue: s.cfg.Name, Msg: *m, MaxReceive: s.cfg.MaxReceive, DLQ: s.cfg.DLQ})
	s.emit(Effect{Kind: EffDeadLetter, Msg: d, Exchange: DefaultExchange, Key: s.cfg.DLQ, Reason: "maxReceiveCount"})
}

func (s *State) findHandle(h string) int {
	return slices.IndexFunc(s.out, func(o *outMsg) bool { return o.handle == h })
}

// messageOf reads the message id out of a receipt handle "h<id>.<n>".
func messageOf(handle string) (int64, bool) {
	var id, n int64
	if _, err := fmt.Sscanf(handle, "h%d.%d", &id, &n); err != nil {
		return 0, false
	}
	return id, true
}

// where says what became of message id: in flight under handle, delivered to consumer,
// or visible again (both empty); found is false when it is gone.
func (s *State) where(id int64) (handle, consumer string, found bool) {
	for _, o := range s.out {
		if o.msg.ID == id {
			if o.handle != "" {
				return o.handle, "", true
			}
			return "", o.consumer, true
		}
	}
	for _, m := range s.ready {
		if m.ID == id {
			return "", "", true
		}
	}
	return "", "", false
}

// delete is SQS DeleteMessage. A stale receipt handle (the message was received again
// since) "succeeds" without deleting anything, as SQS may.
func (s *State) delete(c Command) {
	if i := s.findHandle(c.Handle); i >= 0 {
		o := s.settle(i)
		s.stats.Deleted++
		trace(s, MessageDeleted{Queue: s.cfg.Name, Msg: *o.msg, Worker: c.Consumer, Handle: c.Handle})
		s.emit(Effect{Kind: EffDeleted, To: c.Consumer, Req: c.Req, OK: true, Deleted: true, Msg: *o.msg})
		return
	}
	id, _ := messageOf(c.Handle)
	handle, consumer, found := s.where(id)
	if !found {
		trace(s, DeleteGone{Queue: s.cfg.Name, Handle: c.Handle, Worker: c.Consumer, ID: id})
		s.emit(Effect{Kind: EffDeleted, To: c.Consumer, Req: c.Req, OK: true})
		return
	}
	s.stats.Stale++
	trace(s, DeleteStale{Queue: s.cfg.Name, Handle: c.Handle, Worker: c.Consumer, ID: id, NowHandle: handle, NowConsumer: consumer})
	s.emit(Effect{Kind: EffDeleted, To: c.Consumer, Req: c.Req, OK: true, Reason: "stale receipt handle"})
}

// changeVisibility is SQS ChangeMessageVisibility: the timeout restarts from now.
func (s *State) changeVisibility(c Command) {
	i := s.findHandle(c.Handle)
	if i < 0 {
		trace(s, VisibilityRefused{Queue: s.cfg.Name, Handle: c.Handle, Worker: c.Consumer})
		s.emit(Effect{Kind: EffChanged, To: c.Consumer, Req: c.Req, Reason: "receipt handle is not current"})
		return
	}
	o := s.out[i]
	o.msg.VisibleAt = c.At.Add(c.Visibility)
	trace(s, VisibilityExtended{Queue: s.cfg.Name, Msg: *o.msg, By: c.Visibility})
	s.emit(Effect{Kind: EffChanged, To: c.Consumer, Req: c.Req, OK: true})
}
