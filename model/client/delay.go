package client

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The producer's side of delayed messages and tags.
//
// A delayed send travels alone in its batch, with the delay in the produce request; the
// leader appends it as a scheduled entry, answers as acks says, and appends the record
// again, as an ordinary one, when it is due (model/broker/delayed.go). The entry's offset
// names the delayed message ("t/0@3"): CancelDelay sends a cancellation marker for it.
//
// In the history a delayed send completes as info, not ok: the acknowledgement says the
// broker holds the message, not that it is in the partition (it enters later, at an offset
// nobody knows yet, or never if cancelled). And it is recorded under a process of its own
// (SetProcessSource): the broker's timer writes it, in due order, not in the producer's
// send order, so comparing it with the producer's other sends would be wrong.

// CancelDelay is the scenario's command to a Producer: cancel the delayed message whose
// scheduled entry is at Offset of TP.
type CancelDelay struct {
	TP     proto.TP
	Offset int64
}

func (c CancelDelay) String() string { return fmt.Sprintf("cancel delayed %s@%d", c.TP, c.Offset) }

// DelayedSend is a delayed send the broker accepted, for views.
type DelayedSend struct {
	Value  string
	TP     proto.TP
	Offset int64 // of its scheduled entry: its id
	Delay  time.Duration
	// Cancel is what became of a cancellation: "" (none asked), "cancelled", or why not.
	Cancel string
}

// ID is the delayed message's name, "t/0@3".
func (d DelayedSend) ID() string { return fmt.Sprintf("%s@%d", d.TP, d.Offset) }

// Producer timers of delay.go (after producer.go's own).
const (
	ptCancelTimeout = firstOwnTimer + 40 // a cancellation got no answer; Arg = correlation id
	ptCancelRetry   = firstOwnTimer + 41 // retry.backoff.ms before sending a cancellation again; Arg = cancel number
)

// cancelAttemptsMax bounds the attempts of one cancellation.
const cancelAttemptsMax = 10

type delayState struct {
	sent    []DelayedSend
	cancels []*cancelReq
	next    int64
	// procs hands out history processes for delayed sends (SetProcessSource).
	procs func() int
}

type cancelReq struct {
	n        int64
	cmd      CancelDelay
	corr     int64
	timer    sim.TimerID
	attempts int
}

// SetProcessSource gives the producer a source of fresh history processes for its delayed
// sends (the cluster's). Without one they are recorded under the producer's own process.
func (p *Producer) SetProcessSource(next func() int) { p.delays.procs = next }

// Delayed lists the delayed sends the broker accepted, in the order of their answers.
func (p *Producer) Delayed() []DelayedSend { return append([]DelayedSend(nil), p.delays.sent...) }

func (p *Producer) processFor(r *record) int {
	if r.delay > 0 && p.delays.procs != nil {
		return p.delays.procs()
	}
	return p.process
}

func sendExtras(s Send) string {
	var b strings.Builder
	if len(s.Tags) > 0 {
		fmt.Fprintf(&b, " tags=%s", strings.Join(s.Tags, ","))
	}
	if s.Delay > 0 {
		fmt.Fprintf(&b, " after %s", s.Delay)
	}
	return b.String()
}

// tagHeaders are a record's headers for its tags: nil without tags.
func tagHeaders(tags []string) []wal.Header {
	if len(tags) == 0 {
		return nil
	}
	return []wal.Header{{Key: proto.HeaderTags, Value: []byte(strings.Join(tags, ","))}}
}

// appendDelayed puts a delayed send in a batch of its own, closed at once.
func (p *Producer) appendDelayed(env *sim.Env, r *record) {
	ps := p.part(r.tp)
	b := p.newBatch(env, ps, len(r.key)+len(r.value))
	b.recs = append(b.recs, r)
	b.bytes = len(r.key) + len(r.value)
	b.delay = r.delay
	p.close(env, b)
}

// ackDelayed completes a delayed batch the leader accepted: info in the history (see the
// file comment), the entry's offset kept as the message's id.
func (p *Producer) ackDelayed(env *sim.Env, b *batch, base int64) {
	p.complete(env, b)
	for _, r := range b.recs {
		d := DelayedSend{Value: r.value, TP: b.tp, Offset: base, Delay: b.delay}
		why := fmt.Sprintf("scheduled as %s: the leader appends it %s after it stored it", d.ID(), b.delay)
		if base < 0 {
			why = "scheduled (id unknown: acks=0)"
		}
		if p.rec != nil {
			p.rec.Info(p.now(env), r.h, history.Result{Error: why})
		}
		p.delays.sent = append(p.delays.sent, d)
		sim.Record(env, Scheduled{TP: b.tp, Value: r.value, Offset: base, Delay: b.delay})
	}
	p.stats.Acked += len(b.recs)
}

// cancelDelay starts a cancellation.
func (p *Producer) cancelDelay(env *sim.Env, m CancelDelay) {
	p.begin(env)
	p.delays.next++
	c := &cancelReq{n: p.delays.next, cmd: m}
	p.delays.cancels = append(p.delays.cancels, c)
	p.sendCancel(env, c)
}

// sendCancel sends a cancellation marker to the partition's leader: a produce of one
// record with no key and no value, whose header names the entry.
func (p *Producer) sendCancel(env *sim.Env, c *cancelReq) {
	c.attempts++
	leader, _, ok := p.cl.leader(c.cmd.TP)
	if !ok {
		p.cl.refresh(env)
		p.retryCancel(env, c, "no leader known")
		return
	}
	c.corr = p.cl.newCorr()
	rec := wal.Record{Headers: []wal.Header{{Key: proto.HeaderDelayCancel, Value: []byte(strconv.FormatInt(c.cmd.Offset, 10))}}}
	env.Send(leader, proto.ProduceRequest{CorrelationID: c.corr, TP: c.cmd.TP, Acks: proto.AcksAll, Timeout: p.cfg.RequestTimeout,
		Batch: wal.Batch{LeaderEpoch: wal.UndefinedEpoch, ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch,
			BaseSequence: wal.NoSequence, Records: []wal.Record{rec}}})
	c.timer = env.SetTimer(p.cfg.RequestTimeout, sim.TimerTag{Kind: p.cl.timerBase + ptCancelTimeout, Arg: c.corr})
	sim.Record(env, CancelAsked{TP: c.cmd.TP, Offset: c.cmd.Offset, Leader: env.NameOf(leader), Attempt: c.attempts})
}

func (p *Producer) retryCancel(env *sim.Env, c *cancelReq, why string) {
	c.corr = 0
	if c.attempts >= cancelAttemptsMax {
		p.endCancel(env, c, fmt.Sprintf("not cancelled: %s after %d attempts", why, c.attempts))
		return
	}
	env.SetTimer(p.cfg.RetryBackoff, sim.TimerTag{Kind: p.cl.timerBase + ptCancelRetry, Arg: c.n})
}

// onCancelAnswer takes the answer to a cancellation; false if m answers something else.
func (p *Producer) onCancelAnswer(env *sim.Env, m proto.ProduceResponse) bool {
	for _, c := range p.delays.cancels {
		if c.corr == 0 || c.corr != m.CorrelationID {
			continue
		}
		env.CancelTimer(c.timer)
		switch {
		case m.Error == proto.None:
			p.endCancel(env, c, "cancelled")
		case m.Error.Retriable():
			if needsRefresh(m.Error) {
				p.cl.refresh(env)
			}
			p.retryCancel(env, c, m.Error.String())
		default:
			p.endCancel(env, c, "not cancelled: "+m.Error.String())
		}
		return true
	}
	return false
}

func (p *Producer) delayTimer(env *sim.Env, tag sim.TimerTag) {
	for _, c := range p.delays.cancels {
		switch {
		case tag.Kind == ptCancelTimeout && c.corr != 0 && c.corr == tag.Arg:
			sim.Record(env, CancelTimeout{TP: c.cmd.TP, Offset: c.cmd.Offset})
			p.retryCancel(env, c, "no answer")
			return
		case tag.Kind == ptCancelRetry && c.n == tag.Arg && c.corr == 0:
			p.sendCancel(env, c)
			return
		}
	}
}

// endCancel records a cancellation's outcome.
func (p *Producer) endCancel(env *sim.Env, c *cancelReq, outcome string) {
	for i, x := range p.delays.cancels {
		if x == c {
			p.delays.cancels = append(p.delays.cancels[:i], p.delays.cancels[i+1:]...)
			break
		}
	}
	for i := range p.delays.sent {
		if d := &p.delays.sent[i]; d.TP == c.cmd.TP && d.Offset == c.cmd.Offset {
			d.Cancel = outcome
		}
	}
	sim.Record(env, CancelResult{TP: c.cmd.TP, Offset: c.cmd.Offset, Outcome: outcome})
}
