package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/history"
)

// Queue mode: histories of queue brokers (model/queue: RabbitMQ- and SQS-style), where a
// message has no offset in a shared log but an identity inside the queue that holds it.
//
// The conventions such a history follows:
//
//   - A send's topic is the destination the publisher named: the queue for RabbitMQ's
//     default exchange and for SQS, else the exchange. Its key is the routing key (the
//     message group for an SQS FIFO queue). An ok send never learns an offset.
//   - A poll is one message processed by a consumer. Its records' topic is the queue the
//     message came from, and its offset is the message's ID in that queue: its place in
//     enqueue order, kept by redeliveries. A dead-lettered or republished copy has a new
//     ID in its new queue. Ok: processed; fail: processing failed (rejected); never
//     completed: the consumer crashed while processing.
//
// CheckLog applies unchanged where a publish goes straight to a queue (topic = queue):
// lost-write, unseen, duplicate and inconsistent-offsets mean what they mean for a log,
// with IDs for offsets; poll-skip and nonmonotonic-poll are what competing consumers and
// redeliveries do and must be allowed. Where routing fans a message out to several
// queues, or dead-letters it into another, CheckQueue judges it: it follows each
// value across queues, never across offsets.

// QueueChecker names CheckQueue's findings.
const QueueChecker = "queue"

// Reordered: inside one queue, a value was processed (its first ok poll completed)
// before a value with the same key that the same publisher had published earlier. In a
// log (CheckKeyOrder), a reader read a value before one of the same key that the same
// producer sent earlier.
const Reordered Anomaly = "reordered"

// OrderRule is which order a queue promises its consumers.
type OrderRule string

const (
	// OrderNone promises no order: reorders are reported as allowed.
	OrderNone OrderRule = ""
	// OrderPerKey promises publish order per routing key (per message group in SQS
	// FIFO) and per publisher.
	OrderPerKey OrderRule = "key"
	// OrderPerQueue promises publish order per queue and per publisher.
	OrderPerQueue OrderRule = "queue"
)

// ParseOrderRule reads an order rule by its name: none, key or queue.
func ParseOrderRule(name string) (OrderRule, error) {
	switch name {
	case "none":
		return OrderNone, nil
	case string(OrderPerKey), string(OrderPerQueue):
		return OrderRule(name), nil
	}
	return OrderNone, fmt.Errorf("order %q: want none, key or queue", name)
}

// ParseQueuePromise reads the promise a queue-mode check holds a broker to: at-least-once
// or exactly-once. A broker that confirms publishes promises no loss, so at-most-once is
// refused.
func ParseQueuePromise(name string) (Promise, error) {
	p, err := ParsePromise(name)
	if err != nil || p&NoLoss == 0 {
		return 0, fmt.Errorf("promise %q: want at-least-once or exactly-once (a queue that confirms promises no loss)", name)
	}
	return p, nil
}

// QueueOptions configures CheckQueue.
type QueueOptions struct {
	// Unseen bounds how soon an acknowledged value must be processed, as for CheckLog.
	Unseen UnseenRule
	// Promise: NoDuplicates makes a value processed twice from one queue a violation
	// (redelivered); otherwise it is counted and noted. NoLoss is always checked.
	Promise Promise
	// Order is the order the queues promise; reorders outside it are allowed.
	Order OrderRule
	// Allow lists anomalies reported as allowed rather than as violations.
	Allow []Anomaly
}

// qmSend is one send op.
type qmSend struct {
	ref   OpRef
	topic string
	key   string
	ackAt int64 // completion time of an ok send
}

// qmRead is one record of one poll.
type qmRead struct {
	ref   OpRef
	queue string
	id    int64
	ok    bool
}

// qmValue is what the history says about one value.
type qmValue struct {
	s      string
	send   int // index into sends; -1 if never sent
	sends  int
	reads  []qmRead // in completion order
	okRead int      // ok reads, all queues
}

// CheckQueue judges a queue-mode history, following each value (values are unique
// per history) across the queues it was routed or dead-lettered to:
//
//   - lost-write: an acknowledged value never processed, although a value sent to the
//     same destination after it was acknowledged was (the queue moved past it);
//     unseen: never processed otherwise (or processed after the UnseenRule's bound);
//   - duplicate: processed from one queue under two IDs (enqueued twice);
//   - redelivered: processed twice under one ID (at-least-once delivery; a violation
//     only under NoDuplicates);
//   - unexpected: processed but never sent; G1a: processed although its send failed;
//   - reordered: see the constant; a violation only where Order promises it.
//
// It also counts, per queue, how often each value it held was processed (Delivery).
func CheckQueue(h history.History, opts QueueOptions) (Report, error) {
	if err := h.Validate(); err != nil {
		return Report{}, err
	}
	allow := slices.Clone(opts.Allow)
	if opts.Promise&NoDuplicates == 0 {
		allow = append(allow, Redelivered)
	}
	if opts.Order == OrderNone {
		allow = append(allow, Reordered)
	}
	f := newFindings(QueueChecker, allow)
	q := buildQueueMode(h)
	q.readAnomalies(f)
	q.lossAnomalies(f, opts.Unseen)
	q.duplicates(f)
	q.reorders(f, opts.Order)
	q.delivery(f)
	return f.done(), nil
}

type queueMode struct {
	h      history.History
	end    int64
	sends  []qmSend
	values []*qmValue
	ids    map[string]int
	queues []string // read from, in first-read order
}

func buildQueueMode(h history.History) *queueMode {
	q := &queueMode{h: h, ids: map[string]int{}}
	if len(h) > 0 {
		q.end = h[len(h)-1].Time
	}
	comp := make([]int, len(h)) // invocation -> completion index, -1 if none
	for i := range comp {
		comp[i] = -1
	}
	for i, op := range h {
		if op.Type != history.Invoke {
			comp[op.Invoke] = i
		}
	}
	ref := func(inv int) OpRef {
		o := h[inv]
		r := OpRef{Index: inv, Process: o.Process, F: o.F, Type: history.Invoke, Start: o.Time, End: -1}
		if c := comp[inv]; c >= 0 {
			r.Index, r.Type, r.End = c, h[c].Type, h[c].Time
		}
		return r
	}
	// Reads in completion order, sends in invocation order.
	for i, op := range h {
		switch {
		case op.F == history.Send && op.Type == history.Invoke:
			r := ref(i)
			s := qmSend{ref: r, topic: op.Send.Topic, key: op.Send.Key, ackAt: -1}
			if r.Type == history.Ok {
				s.ackAt = r.End
			}
			v := q.value(op.Send.Value)
			v.sends++
			if v.send < 0 {
				v.send = len(q.sends)
			}
			q.sends = append(q.sends, s)
		case op.F == history.Poll && op.Type != history.Invoke:
			r := ref(op.Invoke)
			for _, pr := range op.Poll.Reads {
				if !slices.Contains(q.queues, pr.Topic) {
					q.queues = append(q.queues, pr.Topic)
				}
				for _, rec := range pr.Records {
					v := q.value(rec.Value)
					v.reads = append(v.reads, qmRead{ref: r, queue: pr.Topic, id: rec.Offset, ok: op.Type == history.Ok})
					if op.Type == history.Ok {
						v.okRead++
					}
				}
			}
		}
	}
	return q
}

func (q *queueMode) value(s string) *qmValue {
	if i, ok := q.ids[s]; ok {
		return q.values[i]
	}
	q.ids[s] = len(q.values)
	v := &qmValue{s: s, send: -1}
	q.values = append(q.values, v)
	return v
}

func (q *queueMode) acked(v *qmValue) bool {
	return v.send >= 0 && q.sends[v.send].ref.Type == history.Ok
}

func (v *qmValue) firstOK() (qmRead, bool) {
	for _, r := range v.reads {
		if r.ok {
			return r, true
		}
	}
	return qmRead{}, false
}

func tp(topic string) history.TopicPartition { return history.TopicPartition{Topic: topic} }

func (q *queueMode) readAnomalies(f *findings) {
	var repeated []string
	for _, v := range q.values {
		if v.sends > 1 {
			repeated = append(repeated, v.s)
		}
		r, ok := v.firstOK()
		if !ok {
			continue
		}
		switch {
		case v.send < 0:
			f.add(Violation{Anomaly: Unexpected, TopicPartition: tp(r.queue), Offsets: []int64{r.id}, Values: []string{v.s},
				Ops: []OpRef{r.ref}, Text: fmt.Sprintf("value %q (id %d) was processed (op %d) but never sent", v.s, r.id, r.ref.Index)})
		case q.sends[v.send].ref.Type == history.Fail:
			s := q.sends[v.send]
			f.add(Violation{Anomaly: G1a, TopicPartition: tp(r.queue), Offsets: []int64{r.id}, Values: []string{v.s},
				Ops: []OpRef{s.ref, r.ref}, Text: fmt.Sprintf("value %q was processed (op %d) although its send failed (op %d)",
					v.s, r.ref.Index, s.ref.Index)})
		}
	}
	if len(repeated) > 0 {
		f.note("%s sent by more than one op; values must be unique, so these are judged by their first send: %s",
			plural(len(repeated), "value"), quoteList(repeated, len(repeated)))
	}
}

// lossAnomalies reports acknowledged values never processed.
func (q *queueMode) lossAnomalies(f *findings, rule UnseenRule) {
	// For the lost-write rule: per destination, the ok reads' send invocation times.
	type lost struct {
		v   *qmValue
		why string
	}
	var lostWrites []lost
	unseen := map[string][]*qmValue{}
	var topics []string
	late, undecided := 0, 0
	for _, v := range q.values {
		if !q.acked(v) {
			continue
		}
		s := q.sends[v.send]
		deadline := rule.deadline(s.ackAt, q.end)
		first, read := v.firstOK()
		switch {
		case read && first.ref.End <= deadline:
			continue
		case !read && deadline > q.end:
			undecided++
			continue
		case read:
			late++
		}
		if !read {
			if later := q.laterRead(s); later != nil {
				lostWrites = append(lostWrites, lost{v, fmt.Sprintf("yet %q, sent to %s after it was acknowledged, was processed (op %d)",
					later.s, s.topic, mustFirst(later).ref.Index)})
				continue
			}
		}
		if unseen[s.topic] == nil {
			topics = append(topics, s.topic)
		}
		unseen[s.topic] = append(unseen[s.topic], v)
	}
	for _, l := range lostWrites {
		s := q.sends[l.v.send]
		f.add(Violation{Anomaly: LostWrite, TopicPartition: tp(s.topic), Values: []string{l.v.s}, Ops: []OpRef{s.ref},
			Text: fmt.Sprintf("acknowledged value %q was never processed, %s", l.v.s, l.why)})
	}
	slices.Sort(topics)
	within := "by the end of the history"
	if rule.Within > 0 {
		within = fmt.Sprintf("within %s of max(ack, t=%s)", time.Duration(rule.Within), time.Duration(rule.After))
	}
	if late > 0 {
		within += fmt.Sprintf(" (%d processed late)", late)
	}
	for _, t := range topics {
		vs := unseen[t]
		var values []string
		var refs []OpRef
		for _, v := range vs[:min(len(vs), listMax)] {
			values = append(values, v.s)
			refs = append(refs, q.sends[v.send].ref)
		}
		f.add(Violation{Anomaly: Unseen, TopicPartition: tp(t), Values: values, Ops: refs,
			Text: fmt.Sprintf("%s not processed %s: %s", plural(len(vs), "acknowledged value"), within, quoteList(values, len(vs)))})
	}
	if undecided > 0 {
		f.note("%s not processed yet, with a deadline after the end of the history (t=%s): undecided",
			plural(undecided, "acknowledged value"), time.Duration(q.end))
	}
}

func mustFirst(v *qmValue) qmRead {
	r, _ := v.firstOK()
	return r
}

// laterRead finds a value sent to the same destination, invoked after s was
// acknowledged, that was processed: proof that the destination moved past s.
func (q *queueMode) laterRead(s qmSend) *qmValue {
	var best *qmValue
	for _, v := range q.values {
		if v.send < 0 || v.okRead == 0 {
			continue
		}
		o := q.sends[v.send]
		if o.topic == s.topic && o.ref.Start > s.ackAt && (best == nil || o.ref.Start < q.sends[best.send].ref.Start) {
			best = v
		}
	}
	return best
}

// duplicates finds values processed from one queue under two IDs (enqueued twice), and
// values processed twice under one ID (redelivered).
func (q *queueMode) duplicates(f *findings) {
	for _, queue := range q.queues {
		var redelivered []string
		var redeliveredOps []OpRef
		for _, v := range q.values {
			var ids []int64
			var refs []OpRef
			times := map[int64]int{}
			for _, r := range v.reads {
				if !r.ok || r.queue != queue {
					continue
				}
				times[r.id]++
				if !slices.Contains(ids, r.id) {
					ids = append(ids, r.id)
					refs = append(refs, r.ref)
				}
			}
			if len(ids) > 1 {
				slices.Sort(ids)
				f.add(Violation{Anomaly: Duplicate, TopicPartition: tp(queue), Offsets: ids, Values: []string{v.s}, Ops: refs,
					Text: fmt.Sprintf("value %q was processed under %d ids (%s): enqueued %d times", v.s, len(ids), joinInts(ids), len(ids))})
			}
			for _, id := range ids {
				if times[id] > 1 {
					redelivered = append(redelivered, fmt.Sprintf("%s (id %d, %d times)", v.s, id, times[id]))
					redeliveredOps = append(redeliveredOps, refs[0])
					break
				}
			}
		}
		if len(redelivered) > 0 {
			f.add(Violation{Anomaly: Redelivered, TopicPartition: tp(queue), Group: queue, Ops: redeliveredOps[:1],
				Values: redelivered[:min(len(redelivered), listMax)],
				Text: fmt.Sprintf("%s processed more than once from %s: %s", plural(len(redelivered), "value"), queue,
					strings.Join(redelivered[:min(len(redelivered), listMax)], ", "))})
		}
	}
}

// reorders walks each publisher's sends in invocation order per queue (and key) and
// reports the values processed before a value published earlier.
func (q *queueMode) reorders(f *findings, rule OrderRule) {
	type stream struct {
		queue, key string
		process    int
	}
	type item struct {
		v     *qmValue
		send  qmSend
		first qmRead
	}
	var keys []stream
	items := map[stream][]item{}
	bySend := make([]*qmValue, len(q.sends))
	for _, v := range q.values {
		if v.send >= 0 {
			bySend[v.send] = v
		}
	}
	for i, s := range q.sends {
		v := bySend[i]
		if v == nil || v.okRead == 0 {
			continue
		}
		first := mustFirst(v)
		k := stream{queue: first.queue, process: s.ref.Process}
		if rule != OrderPerQueue {
			k.key = s.key
		}
		if items[k] == nil {
			keys = append(keys, k)
		}
		items[k] = append(items[k], item{v: v, send: s, first: first})
	}
	for _, k := range keys {
		// Group the values processed early by the earlier-published value they passed.
		var passed []string
		early := map[string][]string{}
		var ops []OpRef
		n := 0
		var latest *item
		for i := range items[k] {
			it := &items[k][i]
			if latest != nil && it.first.ref.End < latest.first.ref.End {
				if early[latest.v.s] == nil {
					passed = append(passed, latest.v.s)
				}
				early[latest.v.s] = append(early[latest.v.s], it.v.s)
				n++
				if len(ops) == 0 {
					ops = []OpRef{latest.first.ref, it.first.ref}
				}
				continue
			}
			latest = it
		}
		if n == 0 {
			continue
		}
		var parts []string
		for _, p := range passed {
			parts = append(parts, fmt.Sprintf("%s before %q", quoteList(early[p][:min(len(early[p]), 8)], len(early[p])), p))
		}
		scope := fmt.Sprintf("key %q", k.key)
		if rule == OrderPerQueue {
			scope = "the queue"
		}
		f.add(Violation{Anomaly: Reordered, TopicPartition: tp(k.queue), Ops: ops,
			Text: fmt.Sprintf("%s, publisher process %d: %s processed before one published earlier: %s", scope, k.process,
				plural(n, "value"), strings.Join(parts, "; "))})
	}
}

// delivery counts, per queue, how often each value was processed from it: values
// acknowledged for the queue itself (sent to it by name) and values it held.
func (q *queueMode) delivery(f *findings) {
	qs := slices.Clone(q.queues)
	for _, s := range q.sends {
		if s.ref.Type == history.Ok && !slices.Contains(qs, s.topic) && q.isQueueTopic(s.topic) {
			qs = append(qs, s.topic)
		}
	}
	slices.Sort(qs)
	acked, processed, elsewhere := 0, 0, 0
	for _, v := range q.values {
		if !q.acked(v) {
			continue
		}
		acked++
		if v.okRead > 0 {
			processed++
			if r := mustFirst(v); r.queue != q.sends[v.send].topic && q.isQueueTopic(q.sends[v.send].topic) {
				elsewhere++
			}
		}
	}
	for _, queue := range qs {
		d := GroupDelivery{Group: queue}
		for _, v := range q.values {
			n, held := 0, false
			for _, r := range v.reads {
				if r.queue == queue {
					held = true
					if r.ok {
						n++
					}
				}
			}
			direct := q.acked(v) && q.sends[v.send].topic == queue
			if !direct && !(held && v.send >= 0 && q.sends[v.send].ref.Type != history.Fail) {
				continue
			}
			d.Values++
			switch {
			case n == 0:
				d.Zero++
			case n == 1:
				d.Once++
			default:
				d.More++
			}
		}
		d.Observed = observed(d)
		f.report.Delivery = append(f.report.Delivery, d)
	}
	if acked > 0 {
		f.note("%s: %d processed (%d only from another queue: dead-lettered or redriven), %d never",
			plural(acked, "acknowledged value"), processed, elsewhere, acked-processed)
	}
}

// isQueueTopic reports whether some poll read from topic: then it names a queue.
func (q *queueMode) isQueueTopic(topic string) bool { return slices.Contains(q.queues, topic) }

// LogSign returns the first op of h that only a log's history has, and
// what it is: an assign, subscribe, commit, txn, seek or ack; a send acknowledged with an
// offset; a poll without a group, or one that read a topic other than its
// group (a queue-mode poll names as its group the one queue it read). A
// history without such an op (ok false) could be either, for a reader that
// gets a history without being told (mqsim check): only the user can say.
func LogSign(h history.History) (index int, what string, ok bool) {
	for i, op := range h {
		switch op.F {
		case history.Assign, history.Subscribe, history.Commit, history.Txn, history.Seek:
			return i, "a " + string(op.F), true
		case history.Ack:
			return i, "an ack", true
		case history.Send:
			if op.Type == history.Ok && op.Send.Offset != history.NoOffset {
				return i, "a send acknowledged with an offset", true
			}
		case history.Poll:
			if op.Poll.Group == "" {
				return i, "a poll without a group", true
			}
			if op.Poll.Share {
				return i, "a share poll", true
			}
			for _, pr := range op.Poll.Reads {
				if pr.Topic != op.Poll.Group {
					return i, "a poll of group " + op.Poll.Group + " that read topic " + pr.Topic, true
				}
			}
		}
	}
	return 0, "", false
}
