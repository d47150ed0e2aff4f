package queue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/sim"
)

// harness drives a State directly: the state machine is pure, so no world is needed.
type harness struct {
	t    *testing.T
	s    *State
	now  sim.Time
	qseq int64
}

func newHarness(t *testing.T, cfg QueueConfig) *harness {
	return &harness{t: t, s: NewState(cfg)}
}

func (h *harness) at(d time.Duration) *harness { h.now = sim.Time(d); return h }

func (h *harness) apply(c Command) []Effect {
	c.At = h.now
	return h.s.Apply(c)
}

func (h *harness) enqueue(values ...string) []Effect {
	var all []Effect
	for _, v := range values {
		h.qseq++
		all = append(all, h.apply(Command{Op: OpEnqueue, Via: "q1",
			Msg: &Message{Value: v, Key: "k", PubID: "p#1", Seq: h.qseq, Enqueuer: "p#1@q1", QSeq: h.qseq}})...)
	}
	return all
}

func (h *harness) enqueueIn(group, dedup string, values ...string) []Effect {
	var all []Effect
	for _, v := range values {
		h.qseq++
		all = append(all, h.apply(Command{Op: OpEnqueue, Via: "q1",
			Msg: &Message{Value: v, Group: group, DedupID: dedup, PubID: "p#1", Seq: h.qseq, Enqueuer: "p#1@q1", QSeq: h.qseq}})...)
	}
	return all
}

func (h *harness) subscribe(name string, prefetch int, autoAck bool) (int64, []Effect) {
	effs := h.apply(Command{Op: OpCheckout, Consumer: name, Prefetch: prefetch, AutoAck: autoAck})
	for _, e := range effs {
		if e.Kind == EffSubscribed {
			return e.Channel, effs
		}
	}
	h.t.Fatalf("no subscription in %v", effs)
	return 0, nil
}

func of(effs []Effect, kind EffectKind) []Effect {
	var out []Effect
	for _, e := range effs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// delivered renders deliveries as "c1:v1 c2:v2".
func delivered(effs []Effect) string {
	var parts []string
	for _, e := range of(effs, EffDeliver) {
		parts = append(parts, e.To+":"+e.Msg.Value)
	}
	return strings.Join(parts, " ")
}

func traced(effs []Effect, kind string) bool {
	return slices.ContainsFunc(effs, func(e Effect) bool { return e.Kind == EffTrace && e.Event.Kind() == kind })
}

func readyValues(s *State) string {
	var vs []string
	for _, m := range s.Ready() {
		vs = append(vs, m.Value)
	}
	return strings.Join(vs, " ")
}

func TestPrefetchBoundsUnackedPerConsumer(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	a, _ := h.subscribe("a", 2, false)
	if got := delivered(h.enqueue("v1", "v2", "v3", "v4", "v5")); got != "a:v1 a:v2" {
		t.Fatalf("with prefetch 2, a got %q", got)
	}
	b, effs := h.subscribe("b", 1, false)
	if got := delivered(effs); got != "b:v3" {
		t.Fatalf("b subscribing got %q", got)
	}
	// An ack frees one slot of a's window: the next ready message goes to a.
	if got := delivered(h.apply(Command{Op: OpAck, Channel: a, Tag: 1})); got != "a:v4" {
		t.Fatalf("after a's ack: %q", got)
	}
	if got := delivered(h.apply(Command{Op: OpAck, Channel: b, Tag: 1})); got != "b:v5" {
		t.Fatalf("after b's ack: %q", got)
	}
	if n := len(h.s.Unsettled()); n != 3 {
		t.Fatalf("%d unsettled, want 3", n)
	}
}

func TestUnlimitedPrefetchPushesEverythingToOneConsumer(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	h.subscribe("slow", 0, false)
	h.enqueue("v1", "v2", "v3")
	_, effs := h.subscribe("fast", 0, false)
	if got := delivered(effs); got != "" {
		t.Fatalf("the late consumer got %q; the first one should hold everything", got)
	}
	if cs := h.s.Consumers(); cs[0].Unacked != 3 || cs[1].Unacked != 0 {
		t.Fatalf("consumers %+v", cs)
	}
}

func TestRoundRobinAmongConsumersWithCredit(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	h.subscribe("a", 1, false)
	h.subscribe("b", 1, false)
	h.subscribe("c", 1, false)
	if got := delivered(h.enqueue("v1", "v2", "v3", "v4")); got != "a:v1 b:v2 c:v3" {
		t.Fatalf("got %q", got)
	}
}

func TestAutoAckSettlesOnDelivery(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	ch, _ := h.subscribe("a", 1, true) // prefetch does not apply to auto-ack
	if got := delivered(h.enqueue("v1", "v2")); got != "a:v1 a:v2" {
		t.Fatalf("got %q", got)
	}
	if len(h.s.Unsettled()) != 0 {
		t.Fatal("auto-acked messages are unsettled")
	}
	// Its channel dying returns nothing: the messages are gone.
	h.apply(Command{Op: OpDown, Channel: ch, Reason: "crash"})
	if h.s.Len() != 0 {
		t.Fatalf("%d messages after the channel died", h.s.Len())
	}
}

func TestRejectNackRequeue(t *testing.T) {
	cfg := DefaultQueueConfig("q")
	h := newHarness(t, cfg)
	h.enqueue("v1", "v2", "v3")
	a, effs := h.subscribe("a", 1, false)
	if got := delivered(effs); got != "a:v1" {
		t.Fatalf("got %q", got)
	}
	// basic.reject requeue=true: back at its original position, redelivered, counted.
	effs = h.apply(Command{Op: OpReject, Channel: a, Tag: 1, Requeue: true})
	d := of(effs, EffDeliver)
	if len(d) != 1 || d[0].Msg.Value != "v1" || d[0].Msg.AcquiredCount != 2 || d[0].Msg.DeliveryCount != 1 {
		t.Fatalf("after reject: %+v", d)
	}
	// basic.nack requeue=true: redelivered, not counted (RabbitMQ 4.3).
	effs = h.apply(Command{Op: OpReject, Channel: a, Tag: 2, Requeue: true, Nack: true})
	d = of(effs, EffDeliver)
	if len(d) != 1 || d[0].Msg.Value != "v1" || d[0].Msg.AcquiredCount != 3 || d[0].Msg.DeliveryCount != 1 {
		t.Fatalf("after nack: %+v", d)
	}
	// requeue=false without a dead-letter exchange: dropped.
	effs = h.apply(Command{Op: OpReject, Channel: a, Tag: 3})
	if !traced(effs, "drop") || len(of(effs, EffDeadLetter)) != 0 {
		t.Fatalf("reject without a DLX: %v", effs)
	}
	if got := delivered(effs); got != "a:v2" {
		t.Fatalf("next delivery %q", got)
	}
	// A stale tag is ignored.
	if effs := h.apply(Command{Op: OpAck, Channel: a, Tag: 99}); !traced(effs, "ack") || h.s.Stats().Acked != 0 {
		t.Fatal("a stale ack settled something")
	}
}

func TestDeadLetterExchangeAndDeliveryLimit(t *testing.T) {
	cfg := DefaultQueueConfig("orders")
	cfg.DLX, cfg.DeliveryLimit = "dlx", 2
	h := newHarness(t, cfg)
	h.enqueue("poison", "ok")
	a, _ := h.subscribe("a", 1, false)
	var dead []Effect
	for tag := uint64(1); tag <= 3; tag++ {
		effs := h.apply(Command{Op: OpReject, Channel: a, Tag: tag, Requeue: true})
		dead = append(dead, of(effs, EffDeadLetter)...)
	}
	if len(dead) != 1 {
		t.Fatalf("dead letters: %+v", dead)
	}
	e := dead[0]
	if e.Msg.Value != "poison" || e.Exchange != "dlx" || e.Key != "k" || e.Reason != "delivery_limit" ||
		!slices.Equal(e.Msg.Deaths, []Death{{Queue: "orders", Reason: "delivery_limit", Count: 1}}) {
		t.Fatalf("dead letter %+v", e)
	}
	if got := readyValues(h.s); got != "" || h.s.Unsettled()[0].Msg.Value != "ok" {
		t.Fatalf("after the poison left: ready %q, unsettled %+v", got, h.s.Unsettled())
	}
	// requeue=false dead-letters at once, with its own reason; a DLX key replaces the key.
	cfg.DLXKey = "parked"
	h = newHarness(t, cfg)
	h.enqueue("bad")
	b, _ := h.subscribe("b", 1, false)
	dead = of(h.apply(Command{Op: OpReject, Channel: b, Tag: 1}), EffDeadLetter)
	if len(dead) != 1 || dead[0].Reason != "rejected" || dead[0].Key != "parked" {
		t.Fatalf("reject requeue=false: %+v", dead)
	}
}

func TestDeadLetterCycleWithoutRejectionIsDropped(t *testing.T) {
	cfg := DefaultQueueConfig("q")
	cfg.DLX, cfg.MessageTTL = "dlx", time.Second
	h := newHarness(t, cfg)
	h.qseq++
	h.apply(Command{Op: OpEnqueue, Via: "q1", Msg: &Message{Value: "v", PubID: "dlx:q", Seq: 1, Enqueuer: "x", QSeq: 1,
		Deaths: []Death{{Queue: "q", Reason: "expired", Count: 1}}}})
	effs := h.at(2 * time.Second).apply(Command{Op: OpTick})
	if len(of(effs, EffDeadLetter)) != 0 || !traced(effs, "drop") {
		t.Fatalf("a second expiry from the same queue should be dropped: %v", effs)
	}
}

func TestTTLExpiresReadyMessagesOnly(t *testing.T) {
	cfg := DefaultQueueConfig("q")
	cfg.DLX, cfg.MessageTTL = "dlx", 100*time.Millisecond
	h := newHarness(t, cfg)
	h.enqueue("v1", "v2")
	a, _ := h.at(10*time.Millisecond).subscribe("a", 1, false) // takes v1
	if d := h.s.NextDeadline(); d != sim.Time(100*time.Millisecond) {
		t.Fatalf("next deadline %s", d)
	}
	if effs := h.at(50 * time.Millisecond).apply(Command{Op: OpTick}); len(of(effs, EffDeadLetter)) != 0 {
		t.Fatal("expired early")
	}
	effs := h.at(100 * time.Millisecond).apply(Command{Op: OpTick})
	dead := of(effs, EffDeadLetter)
	if len(dead) != 1 || dead[0].Msg.Value != "v2" || dead[0].Reason != "expired" {
		t.Fatalf("tick at the ttl: %+v", dead)
	}
	// The delivered v1 is not expired; once requeued after its ttl, it expires instead of
	// being delivered again.
	effs = h.at(200 * time.Millisecond).apply(Command{Op: OpReject, Channel: a, Tag: 1, Requeue: true})
	if len(of(effs, EffDeliver)) != 0 || len(of(effs, EffDeadLetter)) != 1 {
		t.Fatalf("requeued after its ttl: %v", effs)
	}
	// A per-message TTL shorter than the queue's wins.
	h = newHarness(t, cfg)
	h.apply(Command{Op: OpEnqueue, Msg: &Message{Value: "short", TTL: 10 * time.Millisecond, Enqueuer: "e", QSeq: 1}})
	if m := h.s.Ready()[0]; m.ExpiresAt != sim.Time(10*time.Millisecond) {
		t.Fatalf("expires at %s", m.ExpiresAt)
	}
}

func TestChannelsCloseAndRequeue(t *testing.T) {
	cfg := DefaultQueueConfig("q")
	h := newHarness(t, cfg)
	h.enqueue("v1", "v2", "v3")
	a, _ := h.subscribe("a", 2, false)
	// The broker lost a's connection: its two messages go back, counted as failed.
	effs := h.apply(Command{Op: OpDown, Channel: a, Reason: "no heartbeat"})
	if len(of(effs, EffClosed)) != 1 || readyValues(h.s) != "v1 v2 v3" {
		t.Fatalf("after down: %v, ready %q", effs, readyValues(h.s))
	}
	if m := h.s.Ready()[0]; m.DeliveryCount != 1 || m.AcquiredCount != 1 {
		t.Fatalf("v1 after down: %+v", m)
	}
	_, effs = h.subscribe("b", 1, false)
	if d := of(effs, EffDeliver); len(d) != 1 || d[0].Msg.Value != "v1" || d[0].Msg.AcquiredCount != 2 {
		t.Fatalf("redelivery: %+v", d)
	}
	// A new epoch (a new leader) closes every older channel without counting a failure.
	effs = h.apply(Command{Op: OpEpoch})
	if len(of(effs, EffClosed)) != 1 || len(h.s.Consumers()) != 0 || h.s.Ready()[0].DeliveryCount != 1 {
		t.Fatalf("after epoch: %v, consumers %v", effs, h.s.Consumers())
	}
	// Channels are never reused: a new subscriber gets a higher number.
	if c, _ := h.subscribe("c", 1, false); c <= a {
		t.Fatalf("channel %d after %d", c, a)
	}
}

func TestConsumerTimeout(t *testing.T) {
	cfg := DefaultQueueConfig("q")
	cfg.ConsumerTimeout = time.Second
	h := newHarness(t, cfg)
	h.enqueue("long-job")
	h.subscribe("a", 1, false)
	if d := h.s.NextDeadline(); d != sim.Time(time.Second) {
		t.Fatalf("deadline %s", d)
	}
	effs := h.at(time.Second).apply(Command{Op: OpTick})
	closed := of(effs, EffClosed)
	if len(closed) != 1 || !strings.Contains(closed[0].Reason, "consumer timeout") || h.s.Stats().ConsumerTimeouts != 1 {
		t.Fatalf("after the timeout: %v", effs)
	}
	if m := h.s.Ready(); len(m) != 1 || m[0].DeliveryCount != 0 {
		t.Fatalf("a timeout is not a failed delivery: %+v", m)
	}
}

func TestMaxLengthOverflow(t *testing.T) {
	cfg := DefaultQueueConfig("q")
	cfg.MaxLength, cfg.DLX = 2, "dlx"
	h := newHarness(t, cfg)
	effs := h.enqueue("v1", "v2", "v3")
	if dead := of(effs, EffDeadLetter); len(dead) != 1 || dead[0].Msg.Value != "v1" || dead[0].Reason != "maxlen" {
		t.Fatalf("drop-head: %+v", dead)
	}
	if readyValues(h.s) != "v2 v3" {
		t.Fatalf("ready %q", readyValues(h.s))
	}
	cfg.Overflow = RejectPublish
	h = newHarness(t, cfg)
	effs = h.enqueue("v1", "v2", "v3")
	enq := of(effs, EffEnqueued)
	if enq[2].OK || enq[2].Retry || !strings.Contains(enq[2].Reason, "reject-publish") || readyValues(h.s) != "v1 v2" {
		t.Fatalf("reject-publish: %+v, ready %q", enq, readyValues(h.s))
	}
	// The refused one used up its sequence number: the next publish is not blocked.
	if enq := of(h.enqueue("v4"), EffEnqueued); enq[0].Retry {
		t.Fatalf("the next publish after a refusal: %+v", enq)
	}
}

func TestEnqueueSequenceKeepsPublishOrder(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	send := func(v string, qseq int64) Effect {
		effs := h.apply(Command{Op: OpEnqueue, Via: "q1", Msg: &Message{Value: v, PubID: "p#1", Seq: qseq, Enqueuer: "p#1@q1.x", QSeq: qseq}})
		return of(effs, EffEnqueued)[0]
	}
	if e := send("v2", 2); e.OK || !e.Retry {
		t.Fatalf("an early enqueue: %+v", e)
	}
	if e := send("v1", 1); !e.OK {
		t.Fatalf("v1: %+v", e)
	}
	if e := send("v2", 2); !e.OK {
		t.Fatalf("v2 resent: %+v", e)
	}
	if e := send("v1", 1); !e.OK || h.s.Stats().Enqueued != 2 {
		t.Fatalf("a resend of v1 enqueued it twice: %+v, %d enqueued", e, h.s.Stats().Enqueued)
	}
	if got := readyValues(h.s); got != "v1 v2" {
		t.Fatalf("ready %q", got)
	}
}

func TestVisibilityTimeoutAndReceiptHandles(t *testing.T) {
	cfg := DefaultQueueConfig("jobs")
	cfg.Visibility = time.Second
	h := newHarness(t, cfg)
	h.enqueue("job")
	recv := func(who string) Effect {
		return of(h.apply(Command{Op: OpReceive, Consumer: who, Max: 1}), EffReceived)[0]
	}
	r1 := recv("w1")
	if len(r1.Msgs) != 1 || r1.Handles[0] != "h0.1" || r1.Msgs[0].AcquiredCount != 1 {
		t.Fatalf("first receive %+v", r1)
	}
	if r := recv("w2"); len(r.Msgs) != 0 {
		t.Fatal("an in-flight message was received again")
	}
	h.at(time.Second).apply(Command{Op: OpTick})
	r2 := recv("w2")
	if len(r2.Msgs) != 1 || r2.Handles[0] != "h0.2" || r2.Msgs[0].AcquiredCount != 2 {
		t.Fatalf("after the timeout: %+v", r2)
	}
	// w1's delete comes with the old handle: success, nothing deleted.
	d := of(h.apply(Command{Op: OpDelete, Consumer: "w1", Handle: "h0.1"}), EffDeleted)[0]
	if !d.OK || d.Deleted || h.s.Len() != 1 || h.s.Stats().Stale != 1 {
		t.Fatalf("stale delete: %+v, len %d", d, h.s.Len())
	}
	// w2 extends its visibility, then deletes with the current handle.
	h.at(1500 * time.Millisecond).apply(Command{Op: OpVisibility, Handle: "h0.2", Visibility: 5 * time.Second})
	if tick := h.at(2500 * time.Millisecond).apply(Command{Op: OpTick}); traced(tick, "visibility") {
		t.Fatal("the extended message became visible")
	}
	d = of(h.apply(Command{Op: OpDelete, Consumer: "w2", Handle: "h0.2"}), EffDeleted)[0]
	if !d.Deleted || h.s.Len() != 0 {
		t.Fatalf("delete: %+v", d)
	}
}

func TestRedriveAfterMaxReceiveCount(t *testing.T) {
	cfg := DefaultQueueConfig("jobs")
	cfg.Visibility, cfg.MaxReceive, cfg.DLQ = time.Second, 2, "jobs-dlq"
	h := newHarness(t, cfg)
	h.enqueue("poison")
	for i := 1; i <= 2; i++ {
		if r := of(h.apply(Command{Op: OpReceive, Consumer: "w", Max: 1}), EffReceived)[0]; len(r.Msgs) != 1 {
			t.Fatalf("receive %d: %+v", i, r)
		}
		h.at(time.Duration(i) * time.Second).apply(Command{Op: OpTick})
	}
	effs := h.apply(Command{Op: OpReceive, Consumer: "w", Max: 1})
	dead := of(effs, EffDeadLetter)
	if len(of(effs, EffReceived)[0].Msgs) != 0 || len(dead) != 1 || dead[0].Key != "jobs-dlq" || dead[0].Exchange != "" ||
		dead[0].Msg.Deaths[0].Reason != "maxReceiveCount" {
		t.Fatalf("third receive: %v", effs)
	}
}

func TestFIFOGroupsBlockWhileInFlight(t *testing.T) {
	cfg := DefaultQueueConfig("orders")
	cfg.FIFO = true
	h := newHarness(t, cfg)
	h.enqueueIn("a", "", "a1", "a2")
	h.enqueueIn("b", "", "b1")
	recv := func() string {
		r := of(h.apply(Command{Op: OpReceive, Consumer: "w", Max: 1}), EffReceived)[0]
		var vs []string
		for i, m := range r.Msgs {
			vs = append(vs, m.Value+"/"+r.Handles[i])
		}
		return strings.Join(vs, " ")
	}
	for i, want := range []string{"a1/h0.1", "b1/h2.1", ""} {
		if got := recv(); got != want {
			t.Fatalf("receive %d: %q, want %q", i+1, got, want)
		}
	}
	h.apply(Command{Op: OpDelete, Consumer: "w", Handle: "h0.1"})
	if got := recv(); got != "a2/h1.1" {
		t.Fatalf("after a1 was deleted: %q", got)
	}
	// One receive may return several messages of a group, in order.
	h = newHarness(t, cfg)
	h.enqueueIn("a", "", "a1", "a2", "a3")
	r := of(h.apply(Command{Op: OpReceive, Consumer: "w", Max: 10}), EffReceived)[0]
	if len(r.Msgs) != 3 || r.Msgs[0].Value != "a1" || r.Msgs[2].Value != "a3" {
		t.Fatalf("batch %+v", r.Msgs)
	}
}

func TestFIFODeduplicationWindow(t *testing.T) {
	cfg := DefaultQueueConfig("orders")
	cfg.FIFO, cfg.DedupWindow = true, 5*time.Minute
	h := newHarness(t, cfg)
	h.enqueueIn("g", "order-1", "first")
	h.at(10*time.Second).enqueueIn("g", "order-1", "retry-within")
	h.at(6*time.Minute).enqueueIn("g", "order-1", "retry-after")
	if got := readyValues(h.s); got != "first retry-after" || h.s.Stats().Deduplicated != 1 {
		t.Fatalf("ready %q, deduplicated %d", got, h.s.Stats().Deduplicated)
	}
	// Content-based deduplication drops a different order with the same body.
	cfg.ContentDedup = true
	h = newHarness(t, cfg)
	effs := h.enqueueIn("g", "", "2 x coffee")
	effs = append(effs, h.at(time.Minute).enqueueIn("g", "", "2 x coffee")...)
	if enq := of(effs, EffEnqueued); len(enq) != 2 || !enq[1].OK || h.s.Len() != 1 {
		t.Fatalf("content dedup: %+v, len %d", enq, h.s.Len())
	}
}

func TestCommandsRoundTrip(t *testing.T) {
	c := Command{Op: OpEnqueue, At: 5, Via: "q1", Msg: &Message{Value: "v", Headers: []Header{{"a", "b"}}, Deaths: []Death{{"q", "expired", 2}},
		Enqueuer: "e", QSeq: 3, TTL: time.Second}}
	got, err := DecodeCommand(c.Encode())
	if err != nil || fmt.Sprint(got) != fmt.Sprint(c) && fmt.Sprintf("%+v", *got.Msg) != fmt.Sprintf("%+v", *c.Msg) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}
