package timewheel

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/sim"
)

// refItem is a pending item of the reference timer.
type refItem struct {
	id  uint64
	due sim.Time
	seq uint64
	val int
}

// refTimer is the reference: a list of pending items kept sorted by (due, seq). Insert and
// cancel are O(n); it is obviously right, which is all it is for.
type refTimer struct {
	now   sim.Time
	seq   uint64
	items []refItem
}

func refLess(a, b refItem) int {
	if a.due != b.due {
		if a.due < b.due {
			return -1
		}
		return 1
	}
	if a.seq < b.seq {
		return -1
	}
	if a.seq > b.seq {
		return 1
	}
	return 0
}

func (r *refTimer) add(id uint64, due sim.Time, val int) {
	r.cancel(id)
	it := refItem{id: id, due: due, seq: r.seq, val: val}
	r.seq++
	at, _ := slices.BinarySearchFunc(r.items, it, refLess)
	r.items = slices.Insert(r.items, at, it)
}

func (r *refTimer) cancel(id uint64) bool {
	for i, it := range r.items {
		if it.id == id {
			r.items = slices.Delete(r.items, i, i+1)
			return true
		}
	}
	return false
}

func (r *refTimer) advance(now sim.Time) []Expired[int] {
	r.now = max(r.now, now)
	n := 0
	for n < len(r.items) && r.items[n].due <= r.now {
		n++
	}
	var out []Expired[int]
	for _, it := range r.items[:n] {
		out = append(out, Expired[int]{ID: it.id, Due: it.due, Payload: it.val})
	}
	r.items = r.items[n:]
	return out
}

// TestMatchesSortedList runs random schedules of adds (past, current-tick, near and far
// future, re-adds of pending ids), cancels and advances (small steps, jumps, no-ops, time
// running backwards) on the wheel and the reference, which must expire the same items in
// the same order, agree on Len, and NextDue must be a lower bound that makes progress.
func TestMatchesSortedList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// A tick of 10^6 keeps most items in the current tick, where cancelled items are
		// dropped lazily and the heap is compacted.
		tick := rapid.SampledFrom([]int64{1, 2, 3, 7, 1_000_000}).Draw(t, "tick")
		size := rapid.IntRange(2, 6).Draw(t, "wheelSize")
		start := sim.Time(rapid.Int64Range(0, 50).Draw(t, "start"))
		w := New[int](time.Duration(tick), size, start)
		ref := &refTimer{now: start}
		horizon := rapid.SampledFrom([]int64{20, 500, 100_000}).Draw(t, "horizon")
		ids := rapid.SampledFrom([]uint64{8, 40, 300}).Draw(t, "ids")
		steps := rapid.IntRange(1, 400).Draw(t, "steps")
		for step := range steps {
			switch rapid.IntRange(0, 9).Draw(t, "op") {
			case 0, 1, 2, 3:
				id := rapid.Uint64Range(0, ids).Draw(t, "id")
				due := ref.now + sim.Time(rapid.Int64Range(-10, horizon).Draw(t, "delay"))
				if due < 0 {
					due = 0
				}
				w.Add(id, due, step)
				ref.add(id, due, step)
			case 4, 5:
				id := rapid.Uint64Range(0, ids).Draw(t, "id")
				if got, want := w.Cancel(id), ref.cancel(id); got != want {
					t.Fatalf("Cancel(%d) = %v, reference %v", id, got, want)
				}
			case 6:
				// Advance to NextDue, as a broker's single sim timer would.
				next, ok := w.NextDue()
				if !ok {
					continue
				}
				got, want := w.Advance(next), ref.advance(next)
				if !slices.Equal(got, want) {
					t.Fatalf("Advance(NextDue=%d):\n got %v\nwant %v", next, got, want)
				}
				if after, ok := w.NextDue(); ok && after <= w.Now() {
					t.Fatalf("NextDue %d right after Advance(%d) makes no progress", after, w.Now())
				}
			default:
				now := ref.now + sim.Time(rapid.Int64Range(-5, horizon/4).Draw(t, "step"))
				got, want := w.Advance(now), ref.advance(now)
				if !slices.Equal(got, want) {
					t.Fatalf("Advance(%d):\n got %v\nwant %v", now, got, want)
				}
				if next, ok := w.NextDue(); ok && next <= w.Now() {
					t.Fatalf("NextDue %d right after Advance(%d) makes no progress", next, w.Now())
				}
			}
			if w.Len() != len(ref.items) {
				t.Fatalf("Len = %d, reference %d", w.Len(), len(ref.items))
			}
			next, ok := w.NextDue()
			if ok != (len(ref.items) > 0) {
				t.Fatalf("NextDue ok = %v with %d pending", ok, len(ref.items))
			}
			if ok && next > ref.items[0].due {
				t.Fatalf("NextDue %d is after the earliest due time %d", next, ref.items[0].due)
			}
		}
		// Drain: everything left expires, in order.
		got, want := w.Advance(math.MaxInt64), ref.advance(math.MaxInt64)
		if !slices.Equal(got, want) {
			t.Fatalf("final Advance:\n got %v\nwant %v", got, want)
		}
		if w.Len() != 0 {
			t.Fatalf("Len = %d after draining", w.Len())
		}
	})
}

// TestCascade follows the TimingWheel javadoc example (tick 1, wheelSize 3): an item 20
// ticks ahead starts in the third wheel and moves down one wheel at a time.
func TestCascade(t *testing.T) {
	w := New[string](1, 3, 0)
	w.Add(1, 20, "far")
	if lv, _ := w.Level(1); lv != 2 || w.Levels() != 3 {
		t.Fatalf("due 20 from 0: level %d of %d, want level 2 of 3", lv, w.Levels())
	}
	// Level 2's bucket [18, 27) comes due at 18 and cascades into level 0 ([18, 21)).
	if next, _ := w.NextDue(); next != 18 {
		t.Fatalf("NextDue = %d, want 18 (start of the level-2 bucket)", next)
	}
	if out := w.Advance(18); out != nil {
		t.Fatalf("Advance(18) expired %v", out)
	}
	if lv, _ := w.Level(1); lv != 0 {
		t.Fatalf("after Advance(18): level %d, want 0", lv)
	}
	// From 12 instead, level 1 ([12, 21) at tick 3) covers it: bucket [18, 21).
	w = New[string](1, 3, 12)
	w.Add(1, 20, "far")
	if lv, _ := w.Level(1); lv != 1 {
		t.Fatalf("due 20 from 12: level %d, want 1", lv)
	}
	if next, _ := w.NextDue(); next != 18 {
		t.Fatalf("NextDue = %d, want 18 (start of the level-1 bucket)", next)
	}
	if out := w.Advance(19); out != nil {
		t.Fatalf("Advance(19) expired %v", out)
	}
	if lv, _ := w.Level(1); lv != 0 {
		t.Fatalf("after Advance(19): level %d, want 0", lv)
	}
	if out := w.Advance(20); len(out) != 1 || out[0].Payload != "far" || out[0].Due != 20 {
		t.Fatalf("Advance(20) = %v", out)
	}
}

// TestExactWithinTick shows the difference from Kafka: with a 1s tick, an item due at
// 1.5s expires at 1.5s, not at the 1s boundary, and NextDue names 1.5s once the clock is
// in that tick.
func TestExactWithinTick(t *testing.T) {
	w := New[int](time.Second, 20, 0)
	w.Add(7, sim.Time(1500*time.Millisecond), 0)
	next, _ := w.NextDue()
	if next != sim.Time(time.Second) {
		t.Fatalf("NextDue = %v, want 1s (bucket start)", next)
	}
	if out := w.Advance(next); out != nil {
		t.Fatalf("Advance(1s) expired %v", out)
	}
	next, _ = w.NextDue()
	if next != sim.Time(1500*time.Millisecond) {
		t.Fatalf("NextDue = %v, want 1.5s", next)
	}
	if out := w.Advance(next); len(out) != 1 || out[0].ID != 7 {
		t.Fatalf("Advance(1.5s) = %v", out)
	}
}

// TestCancelStormInCurrentTick cancels most of many items of the current tick: the heap
// compacts, and the survivors still expire in order.
func TestCancelStormInCurrentTick(t *testing.T) {
	w := New[int](time.Second, 20, 0)
	for id := range uint64(1000) {
		w.Add(id, sim.Time(999-id), int(id))
	}
	for id := range uint64(1000) {
		if id%10 != 0 && !w.Cancel(id) {
			t.Fatalf("Cancel(%d) = false", id)
		}
	}
	if w.Len() != 100 || len(w.current) >= 1000 {
		t.Fatalf("Len = %d, heap %d: want 100 and a compacted heap", w.Len(), len(w.current))
	}
	out := w.Advance(sim.Time(time.Second))
	if len(out) != 100 || out[0].ID != 990 || out[99].ID != 0 {
		t.Fatalf("expired %d items, first %v last %v", len(out), out[0], out[len(out)-1])
	}
}

func TestPastDueCancelReschedule(t *testing.T) {
	w := New[int](time.Millisecond, 20, sim.Time(time.Second))
	w.Add(1, 0, 1)                               // long past
	w.Add(2, sim.Time(time.Second), 2)           // now
	w.Add(3, sim.Time(2*time.Second), 3)         // later
	w.Add(3, sim.Time(500*time.Millisecond), 30) // rescheduled into the past
	if w.Len() != 3 {
		t.Fatalf("Len = %d, want 3", w.Len())
	}
	if next, _ := w.NextDue(); next != 0 {
		t.Fatalf("NextDue = %v, want 0 (overdue item)", next)
	}
	if !w.Cancel(2) || w.Cancel(2) || w.Cancel(99) {
		t.Fatal("Cancel: want true once, then false")
	}
	out := w.Advance(sim.Time(time.Second))
	want := []Expired[int]{{ID: 1, Due: 0, Payload: 1}, {ID: 3, Due: sim.Time(500 * time.Millisecond), Payload: 30}}
	if !slices.Equal(out, want) {
		t.Fatalf("Advance = %v, want %v", out, want)
	}
	if _, ok := w.NextDue(); ok || w.Len() != 0 {
		t.Fatal("wheel should be empty")
	}
	if w.Cancel(1) {
		t.Fatal("Cancel of an expired item returned true")
	}
}

// TestFarFuture places an item at the end of time: the hierarchy stops growing once a
// wheel spans every representable time.
func TestFarFuture(t *testing.T) {
	w := New[int](time.Millisecond, 20, 0)
	w.Add(1, math.MaxInt64, 0)
	w.Add(2, math.MaxInt64-1, 0)
	if w.Levels() > 12 {
		t.Fatalf("%d levels for MaxInt64 at 1ms × 20", w.Levels())
	}
	if out := w.Advance(math.MaxInt64 - 1); len(out) != 1 || out[0].ID != 2 {
		t.Fatalf("Advance(max-1) = %v", out)
	}
	if out := w.Advance(math.MaxInt64); len(out) != 1 || out[0].ID != 1 {
		t.Fatalf("Advance(max) = %v", out)
	}
}

// TestTiesInInsertionOrder: items due at the same time come out in insertion order even
// when they reached the current tick by different paths (added there, or cascaded).
func TestTiesInInsertionOrder(t *testing.T) {
	w := New[int](time.Millisecond, 4, 0)
	due := sim.Time(10 * time.Millisecond)
	for id := range uint64(5) {
		w.Add(id, due, int(id))
	}
	w.Advance(due - 1)
	w.Add(5, due, 5) // added straight into the current tick
	out := w.Advance(due)
	for k, e := range out {
		if e.ID != uint64(k) {
			t.Fatalf("position %d: id %d (%v)", k, e.ID, out)
		}
	}
	if len(out) != 6 {
		t.Fatalf("expired %d, want 6", len(out))
	}
}

func TestNewRejectsBadShape(t *testing.T) {
	for _, c := range []struct {
		tick  time.Duration
		size  int
		start sim.Time
	}{{0, 20, 0}, {time.Millisecond, 1, 0}, {time.Millisecond, 20, -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%v, %d, %v) did not panic", c.tick, c.size, c.start)
				}
			}()
			New[int](c.tick, c.size, c.start)
		}()
	}
}

// Example drives a wheel the way a broker does: one sim timer, set to NextDue.
func Example() {
	w := New[string](time.Millisecond, 20, 0)
	w.Add(1, sim.Time(1500*time.Millisecond), "DelayedFetch")
	w.Add(2, sim.Time(5*time.Millisecond), "DelayedProduce")
	w.Add(3, sim.Time(30*time.Second), "heartbeat expiry")
	w.Cancel(3) // the heartbeat arrived
	for {
		next, ok := w.NextDue()
		if !ok {
			break
		}
		for _, e := range w.Advance(next) {
			fmt.Println(e.Due, e.Payload)
		}
	}
	// Output:
	// 5ms DelayedProduce
	// 1.5s DelayedFetch
}
