package checker

import (
	"testing"

	"mqsim/model/history"
)

// deliveryHistory: group g reads "a" once, "b" twice, never "c"; group h
// reads everything once; a send to topic u is outside both groups' topics.
func deliveryHistory() history.History {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.ok(1, t0, "c", 2)
	b.ok(1, u0, "elsewhere", 0)
	b.send(1, t0, "failed", history.Fail, 0)
	sub := b.r.InvokeSubscribe(b.tick(), 2, "g", []string{"t"})
	b.r.Ok(b.tick(), sub, history.Result{Partitions: []history.TopicPartition{t0}})
	b.poll(2, "g", history.Ok, rd(t0, at(0, "a"), at(1, "b")))
	b.poll(3, "g", history.Ok, rd(t0, at(1, "b")))
	b.poll(3, "g", history.Info, rd(t0, at(2, "c"))) // not processed: outcome unknown
	b.poll(4, "h", history.Ok, rd(t0, at(0, "a"), at(1, "b"), at(2, "c")))
	b.read(5, u0, at(0, "elsewhere")) // group-less: not counted
	return b.history()
}

func TestDelivery(t *testing.T) {
	gCounts := GroupDelivery{Group: "g", Values: 3, Zero: 1, Once: 1, More: 1, Observed: ObservedNone}
	hCounts := GroupDelivery{Group: "h", Values: 3, Once: 3, Observed: ObservedExactlyOnce}
	tests := []struct {
		promise Promise
		want    []want
		notes   []string
	}{
		{promise: ExactlyOnce, want: []want{
			{anomaly: Undelivered, tp: t0, group: "g", offsets: []int64{2}, values: []string{"c"}},
			{anomaly: Redelivered, tp: t0, group: "g", offsets: []int64{1}, values: []string{"b"}},
		}},
		{promise: AtLeastOnce,
			want:  []want{{anomaly: Undelivered, tp: t0, group: "g", values: []string{"c"}}},
			notes: []string{"group g: 1 acknowledged value read more than once (allowed: promise at-least-once)"}},
		{promise: AtMostOnce,
			want:  []want{{anomaly: Redelivered, tp: t0, group: "g", values: []string{"b"}}},
			notes: []string{"group g: 1 acknowledged value never read (allowed: promise at-most-once)"}},
		{promise: 0, notes: []string{
			"group g: 1 acknowledged value never read (allowed: promise none)",
			"group g: 1 acknowledged value read more than once (allowed: promise none)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.promise.String(), func(t *testing.T) {
			r, err := CheckDelivery(deliveryHistory(), tt.promise)
			if err != nil {
				t.Fatal(err)
			}
			expectExactly(t, r.Violations, tt.want)
			if len(r.Delivery) != 2 || r.Delivery[0] != gCounts || r.Delivery[1] != hCounts {
				t.Errorf("delivery counts %+v, want %+v and %+v", r.Delivery, gCounts, hCounts)
			}
			for _, n := range tt.notes {
				if !noteContaining(r, n) {
					t.Errorf("missing note %q", n)
				}
			}
			if len(r.Notes) != len(tt.notes) {
				t.Errorf("notes %v, want %d", r.Notes, len(tt.notes))
			}
			if t.Failed() {
				t.Log("\n" + r.String())
			}
		})
	}
}

func TestObservedSemantics(t *testing.T) {
	for _, c := range []struct {
		d    GroupDelivery
		want Semantics
	}{
		{GroupDelivery{Once: 2}, ObservedExactlyOnce},
		{GroupDelivery{Once: 1, More: 1}, ObservedAtLeastOnce},
		{GroupDelivery{Zero: 1, Once: 1}, ObservedAtMostOnce},
		{GroupDelivery{Zero: 1, More: 1}, ObservedNone},
	} {
		if got := observed(c.d); got != c.want {
			t.Errorf("%+v observed %s, want %s", c.d, got, c.want)
		}
	}
}
