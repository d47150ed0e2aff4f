package compare

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
)

// tinyHistory: two orders of one key sent and acknowledged; reads lists the values each
// ok poll processed, in order.
func tinyHistory(reads ...[]string) history.History {
	r := history.NewRecorder()
	tp := history.TopicPartition{Topic: "orders"}
	for i, v := range []string{"order-1", "order-2"} {
		s := r.InvokeSend(int64(i*10), 1, tp, "customer-1", v)
		r.Ok(int64(i*10+1), s, history.Result{Offset: int64(i)})
	}
	for i, vs := range reads {
		p := r.InvokePoll(int64(100+i*10), 2, "g")
		var recs []history.Record
		for j, v := range vs {
			recs = append(recs, history.Record{Offset: int64(j), Value: v})
		}
		r.Ok(int64(101+i*10), p, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: recs}}})
	}
	return r.History()
}

// measure counts from the history alone: a value read twice is one duplicate, a value
// never read is lost, a key whose second order was processed first is reordered.
func TestMeasure(t *testing.T) {
	keys := map[string]string{"order-1": "customer-1", "order-2": "customer-1"}
	for _, tc := range []struct {
		name                            string
		reads                           [][]string
		delivered, dup, lost, reordered int
	}{
		{"each once, in order", [][]string{{"order-1", "order-2"}}, 2, 0, 0, 0},
		{"one twice", [][]string{{"order-1"}, {"order-1", "order-2"}}, 2, 1, 0, 0},
		{"one never", [][]string{{"order-1"}}, 1, 0, 1, 0},
		{"out of order", [][]string{{"order-2"}, {"order-1"}}, 2, 0, 0, 1},
	} {
		m := measure(&outcome{h: tinyHistory(tc.reads...)}, keys)
		got := []int{m.published, m.acked, m.delivered, m.duplicated, m.lost, m.reorderedKeys, m.keys}
		want := []int{2, 2, tc.delivered, tc.dup, tc.lost, tc.reordered, 1}
		if !slices.Equal(got, want) {
			t.Errorf("%s: published, acked, delivered, duplicated, lost, reordered, keys = %v, want %v", tc.name, got, want)
		}
	}
}

// The closing text restates the table: a design is named under duplicates, losses or
// reordering only when its figures show them.
func TestClosingSaysOnlyWhatTheTableShows(t *testing.T) {
	r := &Result{
		outcomes: []*outcome{{design: "A"}, {design: "B", waits: "B waited."}},
		figures:  []metrics{{keys: 8}, {keys: 8, duplicated: 2, lost: 1, reorderedKeys: 3}},
	}
	want := []string{
		"Acknowledged orders never processed: B 1.",
		"Processed twice: B 2. That is at-least-once at work: an order",
		"processed whose commit, ack or delete did not take effect (a consumer crash, an expired lock or",
		"lease, a leader change) is delivered again.",
		"B waited.",
		"Every key's orders were processed in order by: A.",
		"Keys with orders processed out of order: B 3 of 8.",
	}
	if got := r.closing(); !slices.Equal(got, want) {
		t.Errorf("closing:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	calm := &Result{outcomes: []*outcome{{design: "A"}}, figures: []metrics{{keys: 8}}}
	want = []string{"No design lost an acknowledged order.", "No design processed an order twice.",
		"Every key's orders were processed in order by: A."}
	if got := calm.closing(); !slices.Equal(got, want) {
		t.Errorf("closing of a calm run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{1 * time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond}
	for p, want := range map[int]string{50: "2ms", 99: "4ms", 100: "4ms", 1: "1ms"} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%d = %s, want %s", p, got, want)
		}
	}
	if got := percentile(nil, 50); got != "-" {
		t.Errorf("p50 of nothing = %s, want -", got)
	}
}

// The orders workload through every design: none loses a confirmed order, the queues
// dead-letter the poison message (processed once, from the DLQ), and the same seed gives
// the same comparison.
func TestOrdersWorkload(t *testing.T) {
	w, err := Find("orders")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Compare(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, o := range r.outcomes {
		m := r.figures[i]
		names = append(names, o.design)
		// A share group archives the poison message at the delivery count limit and, with
		// no dead-letter queue before Kafka 4.4, never processes it: its one loss.
		var wantLost []string
		if strings.HasPrefix(o.design, "share group") {
			wantLost = []string{w.poison}
		}
		if m.acked != w.Orders || !slices.Equal(m.lostValues, wantLost) {
			t.Errorf("%s: %d of %d acknowledged, lost %v; want all acknowledged, lost %v", o.design, m.acked, w.Orders, m.lostValues, wantLost)
		}
		if o.dlq != "" && m.viaDLQ != 1 {
			t.Errorf("%s: %d orders processed from the DLQ, want the poison message only", o.design, m.viaDLQ)
		}
		if o.poison == "" {
			t.Errorf("%s: nothing said about the poison message", o.design)
		}
	}
	if want := []string{"log (Kafka-style)", "share group (Kafka 4.2)", "queue (RabbitMQ-style)", "queue (SQS-style)"}; !slices.Equal(names, want) {
		t.Errorf("designs %v, want %v", names, want)
	}
	var first, again strings.Builder
	if err := r.Write(&first, false); err != nil {
		t.Fatal(err)
	}
	r2, err := Compare(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Write(&again, false); err != nil {
		t.Fatal(err)
	}
	if first.String() != again.String() {
		t.Errorf("the same seed printed another comparison:\n%s\nthen:\n%s", first.String(), again.String())
	}
}

// acceptedOnly keeps a share poll's record only when the consumer's next acknowledgement
// of it accepted it or was never sent: a release or reject is a failed processing. The
// same offset of another partition in the same poll is judged on its own.
func TestAcceptedOnly(t *testing.T) {
	r := history.NewRecorder()
	t0, t1 := history.TopicPartition{Topic: "t"}, history.TopicPartition{Topic: "t", Partition: 1}
	p := r.InvokeSharePoll(1, 1, "g")
	r.Ok(2, p, history.Result{Reads: []history.PartitionRecords{
		{TopicPartition: t0, Records: []history.Record{{Offset: 0, Value: "a", DeliveryCount: 1}, {Offset: 1, Value: "b", DeliveryCount: 1}}},
		{TopicPartition: t1, Records: []history.Record{{Offset: 0, Value: "c", DeliveryCount: 1}, {Offset: 1, Value: "d", DeliveryCount: 1}}},
	}})
	a := r.InvokeAck(3, 1, "g", t0, []history.RecordAck{{Offset: 0, Type: history.AckAccept}, {Offset: 1, Type: history.AckRelease}})
	r.Ok(4, a, history.Result{})
	b := r.InvokeAck(5, 1, "g", t1, []history.RecordAck{{Offset: 0, Type: history.AckReject}})
	r.Info(6, b, history.Result{})
	var got []string
	for _, op := range acceptedOnly(r.History()) {
		if op.F == history.Poll && op.Type == history.Ok {
			for _, pr := range op.Poll.Reads {
				for _, rec := range pr.Records {
					got = append(got, rec.Value)
				}
			}
		}
	}
	if want := []string{"a", "d"}; !slices.Equal(got, want) {
		t.Errorf("processed %v, want %v (b released, c rejected, d never acknowledged)", got, want)
	}
}
