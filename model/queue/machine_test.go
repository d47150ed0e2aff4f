package queue

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"mqsim/internal/machinetest"
	"mqsim/sim"
)

// The queue's interaction tests: testdata/machine/*.txt drive one State with commands and
// print the effects Apply returns (trace events as the trace prints them, then "=> " for
// what the acting node must do). go test ./model/queue -run TestMachine -rewrite rewrites
// the expected output.
//
// Commands (every one takes at=DURATION, the virtual time it happens at; time never goes
// back):
//
//	queue [name=q] [dlx=X] [dlx-key=K] [delivery-limit=N] [ttl=D] [max-length=N]
//	      [overflow=drop-head|reject-publish] [consumer-timeout=D] [visibility=D]
//	      [max-receive=N dlq=Q] [fifo] [content-dedup] [delay=D]
//	enqueue            one message a line: VALUE [key=K] [ttl=D] [delay=D] [group=G]
//	                   [dedup=ID] [qseq=N] (the router's enqueue number; by default the next)
//	checkout consumer=C [prefetch=N] [auto-ack]
//	ack consumer=C tag=N | reject consumer=C tag=N [requeue] [nack]
//	cancel consumer=C | down consumer=C [reason=TEXT] | epoch
//	tick
//	receive consumer=C [max=N] [visibility=D] | delete consumer=C handle=H
//	visibility consumer=C handle=H timeout=D
//	state              the queue's messages, deliveries and consumers

func TestMachine(t *testing.T) {
	machinetest.Run(t, "testdata/machine", func() machinetest.Runner { return newMachine().run })
}

// A file must catch a queue that ignores requeue: the same commands against a State whose
// rejections all drop the message print something else, first at the file's first
// reject with requeue.
func TestMachineCatchesIgnoredRequeue(t *testing.T) {
	m := newMachine()
	m.mutate = func(c *Command) {
		if c.Op == OpReject {
			c.Requeue = false
		}
	}
	at := machinetest.Diverging(t, "testdata/machine/reject_and_dead_letter.txt", m.run)
	if len(at) == 0 || at[0] != "testdata/machine/reject_and_dead_letter.txt:30" {
		t.Fatalf("a queue that never requeues diverged at %v, want first at the reject with requeue (line 30)", at)
	}
}

// machine drives one queue State.
type machine struct {
	s         *State
	now       sim.Time
	qseq      map[string]int64 // per enqueuer, the last QSeq sent
	channels  map[string]int64 // consumer name -> its channel
	published int64
	// mutate, when set, changes every command before it is applied: a planted mistake.
	mutate func(*Command)
}

func newMachine() *machine {
	return &machine{qseq: map[string]int64{}, channels: map[string]int64{}}
}

func (m *machine) run(t testing.TB, d *datadriven.TestData) string {
	if d.HasArg("at") {
		at := sim.Time(machinetest.Duration(t, d, "at", 0))
		if at < m.now {
			d.Fatalf(t, "at=%s is before the current time %s", at, m.now)
		}
		m.now = at
	}
	if d.Cmd == "queue" {
		m.s = NewState(queueConfig(t, d))
		m.qseq, m.channels, m.published = map[string]int64{}, map[string]int64{}, 0
		return m.s.Config().String()
	}
	if m.s == nil {
		d.Fatalf(t, "%s before any queue command", d.Cmd)
	}
	switch d.Cmd {
	case "state":
		return m.state()
	case "enqueue":
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			out = append(out, m.apply(m.enqueueCommand(t, d, line))...)
		}
		return strings.Join(out, "\n")
	}
	c := Command{Consumer: machinetest.String(t, d, "consumer", "")}
	switch d.Cmd {
	case "checkout":
		c.Op, c.Prefetch, c.AutoAck = OpCheckout, machinetest.Int(t, d, "prefetch", 0), d.HasArg("auto-ack")
	case "ack":
		c.Op, c.Channel, c.Tag = OpAck, m.channel(t, d), uint64(machinetest.Int(t, d, "tag", 0))
	case "reject":
		c.Op, c.Channel, c.Tag = OpReject, m.channel(t, d), uint64(machinetest.Int(t, d, "tag", 0))
		c.Requeue, c.Nack = d.HasArg("requeue"), d.HasArg("nack")
	case "cancel":
		c.Op, c.Channel = OpCancel, m.channel(t, d)
	case "down":
		c.Op, c.Channel, c.Reason = OpDown, m.channel(t, d), machinetest.String(t, d, "reason", "connection lost")
	case "epoch":
		c.Op = OpEpoch
	case "tick":
		c.Op = OpTick
	case "receive":
		c.Op, c.Max, c.Visibility = OpReceive, machinetest.Int(t, d, "max", 1), machinetest.Duration(t, d, "visibility", 0)
	case "delete":
		c.Op, c.Handle = OpDelete, machinetest.String(t, d, "handle", "")
	case "visibility":
		c.Op, c.Handle, c.Visibility = OpVisibility, machinetest.String(t, d, "handle", ""), machinetest.Duration(t, d, "timeout", 0)
	default:
		d.Fatalf(t, "unknown command %q: want queue, enqueue, checkout, ack, reject, cancel, down, epoch, tick, receive, delete, visibility or state", d.Cmd)
	}
	return strings.Join(m.apply(c), "\n")
}

// apply applies c at the current time and renders its effects, one a line.
func (m *machine) apply(c Command) []string {
	if m.mutate != nil {
		m.mutate(&c)
	}
	c.At = m.now
	var out []string
	for _, e := range m.s.Apply(c) {
		if e.Kind == EffSubscribed {
			m.channels[e.To] = e.Channel
		}
		out = append(out, effectLine(e))
	}
	if len(out) == 0 {
		out = append(out, "(no effect)")
	}
	return out
}

// effectLine renders one effect: a trace event as the trace prints it (kind: text), any
// other effect after "=> " as what the acting node does.
func effectLine(e Effect) string {
	switch e.Kind {
	case EffTrace: // the one line that knows how a trace effect carries its event
		return e.Event.Kind() + ": " + e.Event.Detail()
	case EffEnqueued:
		what := "confirmed"
		switch {
		case e.Retry:
			what = "out of sequence: resend"
		case !e.OK:
			what = "refused: " + e.Reason
		}
		return fmt.Sprintf("=> %s: publish %s seq %d %s", e.To, e.PubID, e.Seq, what)
	case EffSubscribed:
		return fmt.Sprintf("=> %s: subscribed on ch%d", e.To, e.Channel)
	case EffDeliver:
		return fmt.Sprintf("=> %s: deliver %s ch%d tag %d", e.To, e.Msg.Label(), e.Channel, e.Tag)
	case EffClosed:
		return fmt.Sprintf("=> %s: ch%d closed (%s)", e.To, e.Channel, e.Reason)
	case EffDeadLetter:
		return fmt.Sprintf("=> dead-letter %s to exchange %q key %q (%s), x-death %s", e.Msg.Label(), e.Exchange, e.Key, e.Reason, deathList(e.Msg.Deaths))
	case EffReceived:
		var got []string
		for i, msg := range e.Msgs {
			got = append(got, msg.Label()+" as "+e.Handles[i])
		}
		if len(got) == 0 {
			got = append(got, "nothing")
		}
		return fmt.Sprintf("=> %s: received %s", e.To, strings.Join(got, ", "))
	case EffDeleted:
		what := "deleted"
		if !e.Deleted {
			what = "success, nothing deleted"
		}
		if e.Reason != "" {
			what += " (" + e.Reason + ")"
		}
		return fmt.Sprintf("=> %s: %s", e.To, what)
	case EffChanged:
		if !e.OK {
			return fmt.Sprintf("=> %s: visibility refused: %s", e.To, e.Reason)
		}
		return fmt.Sprintf("=> %s: visibility changed", e.To)
	}
	return fmt.Sprintf("=> unknown effect %d", e.Kind)
}

func (m *machine) state() string {
	var b strings.Builder
	var ready []string
	for _, msg := range m.s.Ready() {
		r := msg.Label()
		if msg.DeliveryCount > 0 || msg.AcquiredCount > 0 {
			r += fmt.Sprintf("(failed %d, acquired %d)", msg.DeliveryCount, msg.AcquiredCount)
		}
		ready = append(ready, r)
	}
	fmt.Fprintf(&b, "ready: [%s]\n", strings.Join(ready, " "))
	for _, u := range m.s.Unsettled() {
		if u.Handle != "" {
			fmt.Fprintf(&b, "in flight: %s at %s as %s, invisible until %s\n", u.Msg.Label(), u.Consumer, u.Handle, u.Msg.VisibleAt)
		} else {
			fmt.Fprintf(&b, "unacked: %s at %s ch%d tag %d since %s\n", u.Msg.Label(), u.Consumer, u.Channel, u.Tag, u.At)
		}
	}
	for _, c := range m.s.Consumers() {
		fmt.Fprintf(&b, "consumer %s ch%d prefetch %s unacked %d epoch %d\n", c.Name, c.Channel, prefetchString(c.Prefetch), c.Unacked, c.Epoch)
	}
	if d := m.s.NextDeadline(); d > 0 {
		fmt.Fprintf(&b, "next deadline %s\n", d)
	}
	return b.String()
}

// enqueueCommand reads one message line of an enqueue: VALUE [key=...] ... .
func (m *machine) enqueueCommand(t testing.TB, d *datadriven.TestData, line string) Command {
	value, args, err := datadriven.ParseLine(line)
	if err != nil {
		d.Fatalf(t, "enqueue %q: %v", line, err)
	}
	md := &datadriven.TestData{Pos: d.Pos, Cmd: value, CmdArgs: args}
	const enqueuer = "p#1@q1"
	m.published++
	msg := &Message{Value: value, Key: machinetest.String(t, md, "key", "k"), PubID: "p#1", Seq: m.published, Enqueuer: enqueuer,
		TTL: machinetest.Duration(t, md, "ttl", 0), Delay: machinetest.Duration(t, md, "delay", 0),
		Group: machinetest.String(t, md, "group", ""), DedupID: machinetest.String(t, md, "dedup", "")}
	msg.QSeq = int64(machinetest.Int(t, md, "qseq", int(m.qseq[enqueuer]+1)))
	m.qseq[enqueuer] = max(m.qseq[enqueuer], msg.QSeq)
	return Command{Op: OpEnqueue, Via: "q1", Msg: msg}
}

func (m *machine) channel(t testing.TB, d *datadriven.TestData) int64 {
	name := machinetest.String(t, d, "consumer", "")
	ch, ok := m.channels[name]
	if !ok {
		d.Fatalf(t, "consumer=%q has not checked out", name)
	}
	return ch
}

func queueConfig(t testing.TB, d *datadriven.TestData) QueueConfig {
	q := DefaultQueueConfig(machinetest.String(t, d, "name", "q"))
	q.DLX, q.DLXKey = machinetest.String(t, d, "dlx", ""), machinetest.String(t, d, "dlx-key", "")
	q.DeliveryLimit = machinetest.Int(t, d, "delivery-limit", q.DeliveryLimit)
	q.MessageTTL = machinetest.Duration(t, d, "ttl", 0)
	q.MaxLength = machinetest.Int(t, d, "max-length", 0)
	q.Overflow = Overflow(machinetest.String(t, d, "overflow", string(q.Overflow)))
	q.ConsumerTimeout = machinetest.Duration(t, d, "consumer-timeout", q.ConsumerTimeout)
	q.Visibility = machinetest.Duration(t, d, "visibility", q.Visibility)
	q.MaxReceive, q.DLQ = machinetest.Int(t, d, "max-receive", 0), machinetest.String(t, d, "dlq", "")
	q.FIFO, q.ContentDedup = d.HasArg("fifo"), d.HasArg("content-dedup")
	q.Delay = machinetest.Duration(t, d, "delay", 0)
	if q.Overflow != DropHead && q.Overflow != RejectPublish {
		d.Fatalf(t, "overflow=%s: want drop-head or reject-publish", q.Overflow)
	}
	return q
}
