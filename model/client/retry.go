package client

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Processing failures, retries and dead letters: the application side of a consumer.
//
// The application processes a poll's records in order; those that proto.ConsumerPatterns
// names as poison fail (every attempt, or their first N). What happens then is the
// consumer's retry policy:
//
//   - No retry topics and no dead-letter topic: the application retries the record in
//     place, with a growing backoff, and processes nothing else meanwhile (a blocking retry,
//     what a handler that rethrows or loops amounts to). A poison message stops the
//     consumer: its poll never completes, nothing after it is processed or committed, and
//     max.poll.interval.ms ends its membership; the next owner of the partition reads the
//     same record and stops too.
//   - Retry topics (RetryDelays d1, d2, ...): the failed record is produced to T.retry.1
//     with a header saying when it is due (now + d1) and how often it failed, and the
//     application goes on with the next record: the partition is not blocked. The same
//     consumer also subscribes to the retry topics (withRetryTopics); a record of
//     T.retry.k that is not due yet stops that partition's fetches until it is (Kafka's
//     pause/seek; the retry topic's records are in due order because they all wait the
//     same delay). A record that fails again goes to T.retry.k+1, and after the last one
//     to T.dlq (DeadLetter) or is dropped. Attempts are bounded: 1 + len(RetryDelays).
//   - Dead-letter topic only: the first failure goes to T.dlq.
//
// The republished records are recorded in the history as this consumer's sends; the poll
// completes (and commits, under commit-after-processing) only once every republish of its
// records is acknowledged, so a crash before that reprocesses the records rather than
// losing them: at-least-once, with possible duplicates in the retry topics.
//
// Simplifications, one line each: one republish in flight at a time, acks=all, no
// idempotence; a republish that fails for good loses its record (reported in the trace);
// the retry headers are mqsim's own (Spring Kafka and Uber's design carry the same facts).

// inPlaceBackoff is the pause after a record's first failed in-place attempt; it doubles
// with each attempt up to inPlaceBackoffMax (an exponential backoff, as Spring Kafka's).
const (
	inPlaceBackoff    = time.Second
	inPlaceBackoffMax = 30 * time.Second
)

// republishAttemptsMax bounds the attempts of one republish.
const republishAttemptsMax = 50

// Consumer timers of the patterns (after group.go's).
const (
	rtInPlace          = 200 + iota // the next in-place attempt; Arg = poll number
	rtRepublishTimeout              // a republish got no answer; Arg = correlation id
	rtRepublishRetry                // the backoff before a republish is over; Arg = poll number

	rtFirst = rtInPlace
)

// pollPatterns is a poll's state for the patterns.
type pollPatterns struct {
	skip []skipMark // tags.go

	n         int64 // the poll's number (consumerPatterns.polls), once processing began
	evaluated bool
	recs      []procRecord // the poll's records, in processing order
	cursor    int          // the record being processed
	inPlace   int          // failed in-place attempts at the record at cursor
	queue     []*republish // failed records to send on, in order
	settled   bool         // processing is over: the poll may complete
}

// procRecord is one record handed to the application.
type procRecord struct {
	tp proto.TP
	f  fetched
}

// republish is one failed record on its way to a retry or dead-letter topic.
type republish struct {
	from     procRecord
	topic    string
	tp       proto.TP // chosen once the topic's partitions are known
	placed   bool
	dlq      bool
	due      sim.Time // retry topics only
	headers  []wal.Header
	h        history.Handle
	corr     int64
	timer    sim.TimerID
	attempts int
}

// withRetryTopics adds the retry topics of a non-blocking policy to a subscription.
func (c *Consumer) withRetryTopics(topics []string) []string {
	p := c.cfg.Patterns
	if len(p.RetryDelays) == 0 {
		return topics
	}
	out := slices.Clone(topics)
	for _, t := range topics {
		if base, stage := proto.RetryStage(t); stage > 0 || base != t {
			continue
		}
		for k := 1; k <= len(p.RetryDelays); k++ {
			if rt := proto.RetryTopic(t, k); !slices.Contains(out, rt) {
				out = append(out, rt)
			}
		}
	}
	return out
}

// attemptOf is how many times the application tried a record before (retry.attempt).
func attemptOf(f *fetched) int {
	v, ok := fetchedHeader(f, proto.HeaderRetryAttempt)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// NextStage is where a record of topic goes after its attempt-th processing failed: the
// next retry topic and its delay, or the dead-letter topic (dlq), or nowhere (drop).
func NextStage(p proto.ConsumerPatterns, topic string) (next string, delay time.Duration, dlq, drop bool) {
	base, stage := proto.RetryStage(topic)
	if stage < len(p.RetryDelays) {
		return proto.RetryTopic(base, stage+1), p.RetryDelays[stage], false, false
	}
	if p.DeadLetter {
		return proto.DeadLetterTopic(base), 0, true, false
	}
	return "", 0, false, true
}

// holdBack is how many of a retry-topic fetch's records are due, and when the first one
// that is not comes due. A consumer without retry topics holds nothing back.
func (c *Consumer) holdBack(env *sim.Env, tp proto.TP, got []fetched) (int, sim.Time) {
	if len(c.cfg.Patterns.RetryDelays) == 0 {
		return len(got), 0
	}
	for i := range got {
		v, ok := fetchedHeader(&got[i], proto.HeaderRetryDue)
		if !ok {
			continue
		}
		due, err := strconv.ParseInt(v, 10, 64)
		if err != nil || sim.Time(due) <= env.Now() {
			continue
		}
		w := slices.IndexFunc(c.pat.waited, func(x waitedAt) bool { return x.tp == tp })
		if w < 0 || c.pat.waited[w].offset != got[i].offset {
			sim.Record(env, RetryWait{TP: tp, Offset: got[i].offset, Value: got[i].value, Due: sim.Time(due)})
			if w < 0 {
				c.pat.waited = append(c.pat.waited, waitedAt{tp: tp, offset: got[i].offset})
			} else {
				c.pat.waited[w].offset = got[i].offset
			}
		}
		return i, sim.Time(due)
	}
	return len(got), 0
}

// processingFailed runs when the application has processed a poll's records: it finds the
// records whose processing failed and applies the retry policy. It reports true while the
// poll must wait (retrying in place, or republishing); complete runs again when it is over.
func (c *Consumer) processingFailed(env *sim.Env) bool {
	op := c.poll
	pp := &op.pat
	if pp.settled || op.fail != "" || len(c.cfg.Patterns.Poison) == 0 || len(op.reads) == 0 {
		return false
	}
	if !pp.evaluated {
		pp.evaluated = true
		c.pat.polls++
		pp.n = c.pat.polls
		for _, pr := range op.reads {
			tp := proto.TP{Topic: pr.Topic, Partition: pr.Partition}
			for _, rec := range pr.Records {
				i := slices.IndexFunc(op.got[tp], func(f fetched) bool { return f.offset == rec.Offset })
				if i >= 0 {
					pp.recs = append(pp.recs, procRecord{tp: tp, f: op.got[tp][i]})
				}
			}
		}
	}
	return c.processRecords(env)
}

// processRecords goes on from the cursor.
func (c *Consumer) processRecords(env *sim.Env) bool {
	op := c.poll
	pp := &op.pat
	pol := c.cfg.Patterns
	st := &c.pat.stats
	for pp.cursor < len(pp.recs) {
		pr := pp.recs[pp.cursor]
		attempt := attemptOf(&pr.f) + 1 + pp.inPlace
		if !pol.Fails(pr.f.key, pr.f.value, attempt) {
			if attempt > 1 {
				sim.Record(env, Processed{TP: pr.tp, Offset: pr.f.offset, Value: pr.f.value, Attempt: attempt})
			}
			pp.cursor++
			pp.inPlace = 0
			continue
		}
		st.Failures++
		failed := ProcessFailed{TP: pr.tp, Offset: pr.f.offset, Value: pr.f.value, Attempt: attempt}
		if !pol.NonBlocking() {
			st.InPlace++
			pp.inPlace++
			wait := min(inPlaceBackoff<<min(pp.inPlace-1, 10), inPlaceBackoffMax)
			failed.Action, failed.Wait = RetryInPlace, wait
			sim.Record(env, failed)
			env.SetTimer(wait, sim.TimerTag{Kind: rtInPlace, Arg: pp.n})
			return true
		}
		next, delay, dlq, drop := NextStage(pol, pr.tp.Topic)
		pp.cursor++
		pp.inPlace = 0
		if drop {
			st.Dropped++
			failed.Action = DropRecord
			sim.Record(env, failed)
			continue
		}
		rp := &republish{from: pr, topic: next, dlq: dlq}
		rp.headers = retryHeaders(pr, attempt, dlq, env.Now().Add(delay))
		if !dlq {
			rp.due = env.Now().Add(delay)
			failed.Action, failed.Wait, failed.Topic = SendToRetryTopic, delay, next
			sim.Record(env, failed)
		} else {
			failed.Action, failed.Topic = SendToDeadLetter, next
			sim.Record(env, failed)
		}
		pp.queue = append(pp.queue, rp)
	}
	if len(pp.queue) > 0 {
		c.sendRepublish(env)
		return true
	}
	pp.settled = true
	return false
}

// retryHeaders are a republished record's headers: its own (tags), without earlier retry
// headers, and the attempt count, origin and, for a retry topic, due time.
func retryHeaders(pr procRecord, attempt int, dlq bool, due sim.Time) []wal.Header {
	origin, ok := fetchedHeader(&pr.f, proto.HeaderRetryOrigin)
	if !ok {
		origin = fmt.Sprintf("%s@%d", pr.tp, pr.f.offset)
	}
	var hs []wal.Header
	for _, h := range pr.f.headers {
		if !strings.HasPrefix(h.Key, "retry.") && !strings.HasPrefix(h.Key, "delay.") {
			hs = append(hs, h)
		}
	}
	hs = append(hs, wal.Header{Key: proto.HeaderRetryAttempt, Value: []byte(strconv.Itoa(attempt))},
		wal.Header{Key: proto.HeaderRetryOrigin, Value: []byte(origin)})
	if !dlq {
		hs = append(hs, wal.Header{Key: proto.HeaderRetryDue, Value: []byte(strconv.FormatInt(int64(due), 10))})
	}
	wal.SortHeaders(hs)
	return hs
}

// sendRepublish sends the first queued republish, unless one is in flight.
func (c *Consumer) sendRepublish(env *sim.Env) {
	pp := &c.poll.pat
	if len(pp.queue) == 0 || pp.queue[0].corr != 0 {
		return
	}
	rp := pp.queue[0]
	rp.attempts++
	if !rp.placed {
		n := c.cl.partitions(rp.topic)
		if n == 0 {
			c.cl.refresh(env)
			c.retryRepublish(env, rp, "no metadata for "+rp.topic)
			return
		}
		p := rp.from.tp.Partition % int32(n)
		if rp.from.f.key != "" {
			p = KeyPartition([]byte(rp.from.f.key), n)
		}
		rp.tp, rp.placed = proto.TP{Topic: rp.topic, Partition: p}, true
		if c.rec != nil {
			rp.h = c.rec.InvokeSend(c.now(env), c.process, htp(rp.tp), rp.from.f.key, rp.from.f.value)
		}
	}
	leader, _, ok := c.cl.leader(rp.tp)
	if !ok {
		c.cl.refresh(env)
		c.retryRepublish(env, rp, "no leader for "+rp.tp.String())
		return
	}
	rec := wal.Record{Value: []byte(rp.from.f.value), Headers: rp.headers}
	if rp.from.f.key != "" {
		rec.Key = []byte(rp.from.f.key)
	}
	rp.corr = c.cl.newCorr()
	env.Send(leader, proto.ProduceRequest{CorrelationID: rp.corr, TP: rp.tp, Acks: proto.AcksAll, Timeout: c.cfg.RequestTimeout,
		Batch: wal.Batch{LeaderEpoch: wal.UndefinedEpoch, ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch,
			BaseSequence: wal.NoSequence, Records: []wal.Record{rec}}})
	rp.timer = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: rtRepublishTimeout, Arg: rp.corr})
}

// retryRepublish tries a republish again after the backoff, or gives it up.
func (c *Consumer) retryRepublish(env *sim.Env, rp *republish, why string) {
	rp.corr = 0
	if rp.attempts < republishAttemptsMax {
		env.SetTimer(consumerRetryBackoff, sim.TimerTag{Kind: rtRepublishRetry, Arg: c.poll.pat.n})
		return
	}
	sim.Record(env, RepublishLost{TP: rp.from.tp, Offset: rp.from.f.offset, Value: rp.from.f.value, Topic: rp.topic, Why: why})
	if rp.placed && c.rec != nil {
		c.rec.Info(c.now(env), rp.h, history.Result{Error: why})
	}
	c.endRepublish(env)
}

// onRepublished takes a broker's answer to a republish.
func (c *Consumer) onRepublished(env *sim.Env, m proto.ProduceResponse) {
	if c.poll == nil || len(c.poll.pat.queue) == 0 || c.poll.pat.queue[0].corr != m.CorrelationID || m.CorrelationID == 0 {
		return
	}
	rp := c.poll.pat.queue[0]
	env.CancelTimer(rp.timer)
	if m.Error != proto.None {
		if needsRefresh(m.Error) {
			c.cl.refresh(env)
		}
		if m.Error.Retriable() {
			c.retryRepublish(env, rp, m.Error.String())
			return
		}
		rp.attempts = republishAttemptsMax
		c.retryRepublish(env, rp, m.Error.String())
		return
	}
	if c.rec != nil {
		c.rec.Ok(c.now(env), rp.h, history.Result{Offset: m.BaseOffset})
	}
	if rp.dlq {
		c.pat.stats.DeadLettered++
	} else {
		c.pat.stats.Retried++
	}
	sim.Record(env, Republished{From: rp.from.tp, Offset: rp.from.f.offset, Value: rp.from.f.value, To: rp.tp, At: m.BaseOffset,
		DeadLetter: rp.dlq, Due: rp.due})
	c.endRepublish(env)
}

// endRepublish moves on to the next republish, or lets the poll complete.
func (c *Consumer) endRepublish(env *sim.Env) {
	pp := &c.poll.pat
	pp.queue = pp.queue[1:]
	if len(pp.queue) > 0 {
		c.sendRepublish(env)
		return
	}
	pp.settled = true
	c.complete(env)
}

// patternTimer runs the timers of retry.go.
func (c *Consumer) patternTimer(env *sim.Env, tag sim.TimerTag) {
	op := c.poll
	if op == nil {
		return
	}
	pp := &op.pat
	switch tag.Kind {
	case rtInPlace:
		if pp.n == tag.Arg && !pp.settled {
			if !c.processRecords(env) {
				c.complete(env)
			}
		}
	case rtRepublishTimeout:
		if len(pp.queue) > 0 && pp.queue[0].corr == tag.Arg && tag.Arg != 0 {
			sim.Record(env, RepublishTimeout{Value: pp.queue[0].from.f.value, To: pp.queue[0].tp})
			c.retryRepublish(env, pp.queue[0], "no answer")
		}
	case rtRepublishRetry:
		if pp.n == tag.Arg && len(pp.queue) > 0 && pp.queue[0].corr == 0 {
			c.sendRepublish(env)
		}
	}
}
