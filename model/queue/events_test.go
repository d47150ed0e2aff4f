package queue

import (
	"reflect"
	"strings"
	"testing"
)

// TestStateTracesTypedEvents: Apply describes a delivery as a Delivered value with the
// queue's numbers in it, and a state that is not tracing describes nothing while doing
// the same.
func TestStateTracesTypedEvents(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	ch, _ := h.subscribe("a", 2, false)
	var got []Delivered
	for _, e := range of(h.enqueue("v1", "v2"), EffTrace) {
		if d, ok := e.Event.(Delivered); ok {
			got = append(got, d)
		}
	}
	want := []Delivered{
		{Queue: "q", Consumer: "a", Channel: ch, Tag: 1, Unacked: 1, Prefetch: 2},
		{Queue: "q", Consumer: "a", Channel: ch, Tag: 2, Unacked: 2, Prefetch: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("%d deliveries traced, want %d", len(got), len(want))
	}
	for i := range want {
		g := got[i]
		if g.Msg.Value != []string{"v1", "v2"}[i] || g.Msg.AcquiredCount != 1 {
			t.Errorf("delivery %d carries %+v", i, g.Msg)
		}
		g.Msg = Message{}
		if !reflect.DeepEqual(g, want[i]) {
			t.Errorf("delivery %d: %+v, want %+v", i, g, want[i])
		}
	}
	if d := got[1].Detail(); d != `q: m1:"v2" to a ch1 tag 2 (unacked 2/2)` {
		t.Errorf("the second delivery reads %q", d)
	}

	quiet := newHarness(t, DefaultQueueConfig("q"))
	quiet.s.SetTracing(false)
	quiet.subscribe("a", 2, false)
	effs := quiet.enqueue("v1", "v2")
	if n := len(of(effs, EffTrace)); n != 0 {
		t.Errorf("a state that is not tracing made %d trace effects", n)
	}
	if got := delivered(effs); got != "a:v1 a:v2" {
		t.Errorf("without tracing the deliveries are %q", got)
	}
}

// TestEventDocs: every event type is listed once, with its kind and a line about it.
func TestEventDocs(t *testing.T) {
	seen := map[reflect.Type]bool{}
	for _, d := range EventDocs() {
		ty := reflect.TypeOf(d.Example)
		if seen[ty] {
			t.Errorf("%s listed twice", ty)
		}
		seen[ty] = true
		if d.About == "" {
			t.Errorf("%s has no About", ty)
		}
	}
	// The zero value of a kind that depends on a field still has a kind.
	for _, p := range []interface{ Kind() string }{NoDelivery{}, Rejected{How: SettleNack}, Unroutable{}, Unroutable{Mandatory: true}} {
		if p.Kind() == "" {
			t.Errorf("%T has no kind", p)
		}
	}
}

// TestQueueEvents: the events that name their queue as queue events are exactly those
// whose text starts with the queue's name, so views can tell a queue's events by type.
func TestQueueEvents(t *testing.T) {
	n := 0
	for _, d := range EventDocs() {
		v := reflect.New(reflect.TypeOf(d.Example)).Elem()
		f := v.FieldByName("Queue")
		if !f.IsValid() {
			if _, ok := d.Example.(QueueEvent); ok {
				t.Errorf("%T is a queue event without a Queue field", d.Example)
			}
			continue
		}
		f.SetString("jobs")
		p := v.Interface().(interface{ Detail() string })
		qe, ok := v.Interface().(QueueEvent)
		if starts := strings.HasPrefix(p.Detail(), "jobs: "); starts != ok {
			t.Errorf("%T: text %q, a queue event: %v", d.Example, p.Detail(), ok)
		}
		if ok {
			n++
			if qe.QueueName() != "jobs" {
				t.Errorf("%T names queue %q", d.Example, qe.QueueName())
			}
		}
	}
	if n < 25 {
		t.Errorf("only %d queue events", n)
	}
}
