package checker

import (
	"strings"
	"testing"

	"mqsim/model/history"
)

// qmHistory builds queue-mode histories: sends by topic and key, and polls that process
// one message (queue, id, value) each.
type qmHistory struct {
	r   *history.Recorder
	now int64
}

func newQM() *qmHistory { return &qmHistory{r: history.NewRecorder()} }

func (q *qmHistory) tick() int64 { q.now += 10; return q.now }

func (q *qmHistory) send(process int, topic, key, value string, outcome history.Type) {
	h := q.r.InvokeSend(q.tick(), process, history.TopicPartition{Topic: topic}, key, value)
	switch outcome {
	case history.Ok:
		q.r.Ok(q.tick(), h, history.Result{Offset: history.NoOffset})
	case history.Fail:
		q.r.Fail(q.tick(), h, history.Result{Error: "nack"})
	case history.Info:
		q.r.Info(q.tick(), h, history.Result{Error: "timeout"})
	}
}

func (q *qmHistory) process(process int, queue string, id int64, value string, ok bool) {
	h := q.r.InvokePoll(q.tick(), process, queue)
	res := history.Result{Reads: []history.PartitionRecords{{TopicPartition: history.TopicPartition{Topic: queue},
		Records: []history.Record{{Offset: id, Value: value}}}}}
	if ok {
		q.r.Ok(q.tick(), h, res)
	} else {
		q.r.Fail(q.tick(), h, res)
	}
}

func (q *qmHistory) check(t *testing.T, opts QueueOptions) Report {
	t.Helper()
	rep, err := CheckQueue(q.r.History(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestQueueModeCleanHistoryWithFanoutAndDLQ(t *testing.T) {
	q := newQM()
	q.send(1, "events", "order.1.paid", "paid-1", history.Ok) // fans out to audit and billing
	q.send(1, "orders", "orders", "poison", history.Ok)       // fails, then dead-lettered
	q.process(2, "audit", 0, "paid-1", true)
	q.process(3, "billing", 0, "paid-1", true)
	q.process(4, "orders", 0, "poison", false)
	q.process(4, "orders", 0, "poison", false)
	q.process(5, "orders-dlq", 0, "poison", true)
	rep := q.check(t, QueueOptions{Promise: ExactlyOnce, Order: OrderPerKey})
	if len(rep.Violations) != 0 {
		t.Fatalf("a fan-out and a dead letter are not anomalies:\n%s", rep)
	}
	if !strings.Contains(rep.String(), "1 only from another queue") {
		t.Fatalf("the dead letter is not counted:\n%s", rep)
	}
}

func TestQueueModeAnomalies(t *testing.T) {
	q := newQM()
	q.send(1, "orders", "k", "lost", history.Ok)
	q.send(1, "orders", "k", "later", history.Ok) // processed: the queue moved past "lost"
	q.send(1, "orders", "k", "twice", history.Ok) // enqueued twice: two ids
	q.send(1, "orders", "k", "again", history.Ok) // redelivered: one id, processed twice
	q.send(1, "orders", "k", "nacked", history.Fail)
	q.send(1, "other", "k", "never", history.Ok) // nothing of "other" was processed
	q.process(2, "orders", 1, "later", true)
	q.process(2, "orders", 2, "twice", true)
	q.process(2, "orders", 3, "twice", true)
	q.process(2, "orders", 4, "again", true)
	q.process(3, "orders", 4, "again", true)
	q.process(2, "orders", 5, "nacked", true)
	q.process(2, "orders", 6, "ghost", true)
	rep := q.check(t, QueueOptions{})
	for _, want := range []Anomaly{LostWrite, Unseen, Duplicate, G1a, Unexpected} {
		if rep.Counts[want] != 1 {
			t.Errorf("%s: counted %d, want 1", want, rep.Counts[want])
		}
	}
	// Redeliveries are at-least-once at work: allowed unless exactly-once is promised.
	if len(rep.Allowed) != 1 || rep.Allowed[0].Anomaly != Redelivered {
		t.Errorf("allowed: %+v", rep.Allowed)
	}
	rep = q.check(t, QueueOptions{Promise: ExactlyOnce})
	if rep.Counts[Redelivered] != 1 || len(rep.Allowed) != 0 {
		t.Errorf("under exactly-once the redelivery is a violation:\n%s", rep)
	}
	if t.Failed() {
		t.Log(rep)
	}
}

func TestQueueModeReorderPerKey(t *testing.T) {
	q := newQM()
	q.send(1, "orders", "alice", "a1", history.Ok)
	q.send(1, "orders", "bob", "b1", history.Ok)
	q.send(1, "orders", "alice", "a2", history.Ok)
	q.process(2, "orders", 2, "a2", true) // a2 before a1: reordered for alice
	q.process(2, "orders", 1, "b1", true)
	q.process(3, "orders", 0, "a1", true)
	if rep := q.check(t, QueueOptions{Order: OrderPerKey}); rep.Counts[Reordered] != 1 || len(rep.Violations) != 1 ||
		!strings.Contains(rep.Violations[0].Text, `"a2" before "a1"`) {
		t.Fatalf("per key:\n%s", rep)
	}
	// Without an order promise it is reported as allowed.
	if rep := q.check(t, QueueOptions{}); len(rep.Violations) != 0 || rep.Counts[Reordered] != 1 {
		t.Fatalf("no promise:\n%s", rep)
	}
	// Per queue, b1 (sent before a2) processed after a2 counts too.
	if rep := q.check(t, QueueOptions{Order: OrderPerQueue}); rep.Counts[Reordered] != 1 ||
		!strings.Contains(rep.Violations[0].Text, `2 values processed before one published earlier`) {
		t.Fatalf("per queue:\n%s", rep)
	}
}

func TestQueueModeUnseenBound(t *testing.T) {
	q := newQM()
	q.send(1, "orders", "k", "slow", history.Ok) // acked at t=20
	q.now = 10_000
	q.process(2, "orders", 0, "slow", true)
	if rep := q.check(t, QueueOptions{Unseen: UnseenRule{Within: 1000}}); rep.Counts[Unseen] != 1 ||
		!strings.Contains(rep.String(), "processed late") {
		t.Fatalf("late:\n%s", rep)
	}
	if rep := q.check(t, QueueOptions{}); len(rep.Violations) != 0 {
		t.Fatalf("read at all is enough without a bound:\n%s", rep)
	}
}
