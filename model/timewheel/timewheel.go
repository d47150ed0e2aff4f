// Package timewheel is a hierarchical timing wheel over virtual time: Kafka's purgatory
// timer (TimingWheel, TimerTaskList, SystemTimer; Varghese and Lauck's scheme 7), which
// brokers use for delayed operations such as DelayedProduce, DelayedFetch and heartbeat
// expiry, and which a queue broker can use for delayed delivery.
//
// A wheel of wheelSize buckets, each tick wide, covers wheelSize·tick of the future; an
// item further out goes to an overflow wheel whose tick is the whole span of the wheel
// below, created when first needed. Inserting costs one step per level (usually at most
// four), cancelling is O(1) amortised, and a bucket of a coarse wheel that comes due is poured into
// the finer wheels (cascading) until its items land in the current tick and expire.
//
// The clock is the sim.Time the caller passes to Advance, never the wall clock. NextDue
// tells the caller when the earliest non-empty bucket comes due, so a broker keeps a
// single sim timer for the whole wheel (what Kafka's DelayQueue of buckets is for).
//
// Where mqsim differs from Kafka, in one line each: Kafka fires an item at the start of
// its tick, mqsim at its exact due time (the items of the current tick sit in a small
// min-heap); items that expire in one Advance come out in (due, insertion) order, not in
// bucket order.
package timewheel

import (
	"math"
	"time"

	"mqsim/sim"
)

// Expired is an item returned by Advance.
type Expired[T any] struct {
	ID      uint64
	Due     sim.Time
	Payload T
}

// nowhere marks a list link or a home that points to no entry or no bucket.
const nowhere int32 = -1

// homeCurrent is the home of entries in the current-tick heap.
const homeCurrent int32 = -2

// homeFree is the home of an unused entry slot.
const homeFree int32 = -3

// homeCancelled is the home of a cancelled entry still in the current-tick heap: it is
// dropped when it reaches the top, so that cancelling stays O(1).
const homeCancelled int32 = -4

// wheelSizeMax bounds wheelSize, so that bucket indexes of every level fit in an int32.
const wheelSizeMax = 1 << 20

// entry is one pending item. Entries live in an arena and link to each other by index, so
// the wheel allocates only when the arena grows.
type entry[T any] struct {
	id      uint64
	due     sim.Time
	seq     uint64 // insertion order; breaks ties between equal due times
	payload T
	prev    int32
	next    int32
	home    int32 // bucket index (level·wheelSize + slot), homeCurrent, homeCancelled or homeFree
}

// list is a doubly linked list of entries (Kafka's TimerTaskList).
type list struct {
	head, tail int32
}

// bucket is one slot of one wheel: the items whose due time falls in one tick of that
// wheel, and the start of that tick (its expiration).
type bucket struct {
	items      list
	expiration sim.Time
	queued     bool // in the bucket queue
}

// level is one wheel of the hierarchy.
type level struct {
	tickNs int64    // bucket width
	clock  sim.Time // start of the current tick of this wheel: now rounded down to tick
}

// Wheel is a hierarchical timing wheel holding items with a payload of type T. The zero
// value is not usable; build one with New.
type Wheel[T any] struct {
	wheelSize int
	now       sim.Time
	levels    []level
	buckets   []bucket // wheelSize buckets per level, level after level

	// current holds the items due before the end of the current tick of the finest wheel
	// (including items added with a due time in the past) in a min-heap by (due, seq), so
	// that Advance expires them at their exact due time, in order. Cancelled items stay
	// in it until they reach the top or outnumber the live ones.
	current   []int32
	cancelled int // cancelled entries in current

	// queue is a min-heap of bucket indexes by (expiration, index): Kafka's DelayQueue.
	queue []int32

	entries []entry[T]
	free    []int32
	byID    map[uint64]int32
	seq     uint64
	pending int

	// poured is Advance's scratch buffer.
	poured []int32
}

// New returns an empty wheel whose finest level has wheelSize buckets of tick each, with
// its clock at start. Kafka's purgatory uses tick = 1ms and wheelSize = 20. tick must be
// positive, wheelSize at least 2 and start not negative.
func New[T any](tick time.Duration, wheelSize int, start sim.Time) *Wheel[T] {
	if tick <= 0 {
		panic("timewheel: tick must be positive")
	}
	if wheelSize < 2 || wheelSize > wheelSizeMax {
		panic("timewheel: wheelSize must be between 2 and 2^20")
	}
	if start < 0 {
		panic("timewheel: start must not be negative")
	}
	w := &Wheel[T]{
		wheelSize: wheelSize,
		now:       start,
		byID:      make(map[uint64]int32),
	}
	w.addLevel(int64(tick))
	return w
}

// addLevel appends a wheel whose buckets are tickNs wide.
func (w *Wheel[T]) addLevel(tickNs int64) {
	w.levels = append(w.levels, level{tickNs: tickNs, clock: w.now - w.now%sim.Time(tickNs)})
	for range w.wheelSize {
		w.buckets = append(w.buckets, bucket{items: list{nowhere, nowhere}})
	}
}

// Now is the wheel's clock: the latest time passed to Advance, or the start.
func (w *Wheel[T]) Now() sim.Time { return w.now }

// Len is the number of pending items.
func (w *Wheel[T]) Len() int { return w.pending }

// Levels is the number of wheels in the hierarchy so far (overflow wheels are created on
// demand and kept).
func (w *Wheel[T]) Levels() int { return len(w.levels) }

// Level reports which wheel holds the pending item id: 0 is the finest (including the
// current tick), 1 its first overflow wheel, and so on. It lets a test or a teaching view
// watch an item cascade down as its time approaches.
func (w *Wheel[T]) Level(id uint64) (int, bool) {
	i, ok := w.byID[id]
	if !ok {
		return 0, false
	}
	home := w.entries[i].home
	if home == homeCurrent {
		return 0, true
	}
	return int(home) / w.wheelSize, true
}

// Add schedules id to expire at due with payload. An id that is already pending is
// rescheduled: it is removed and added anew (and counts as inserted now for ordering).
// An item due at or before the clock expires at the next Advance.
func (w *Wheel[T]) Add(id uint64, due sim.Time, payload T) {
	if old, ok := w.byID[id]; ok {
		w.remove(old)
	}
	i := w.alloc()
	e := &w.entries[i]
	e.id, e.due, e.seq, e.payload = id, due, w.seq, payload
	w.seq++
	w.byID[id] = i
	w.pending++
	if w.isCurrent(due) {
		w.pushCurrent(i)
		return
	}
	w.place(i)
}

// Cancel removes the pending item id and reports whether it was pending. It is O(1)
// amortised: an item in a bucket is unlinked (the bucket stays queued until it comes due
// or NextDue drops it); an item of the current tick is marked and dropped from the heap
// later.
func (w *Wheel[T]) Cancel(id uint64) bool {
	i, ok := w.byID[id]
	if !ok {
		return false
	}
	w.remove(i)
	return true
}

// remove takes the pending entry i out of the wheel.
func (w *Wheel[T]) remove(i int32) {
	w.forget(i)
	if w.entries[i].home != homeCurrent {
		w.unlink(i)
		w.freeSlot(i)
		return
	}
	w.entries[i].home = homeCancelled
	w.cancelled++
	if w.cancelled > 64 && 2*w.cancelled > len(w.current) {
		w.compactCurrent()
	}
}

// NextDue is when the caller should next call Advance, or false if nothing is pending:
// the exact due time of the earliest item in the current tick, or else the start of the
// earliest non-empty bucket. It is never later than the earliest pending due time, and
// right after Advance(now) it is later than now unless an item was since added in the
// past. When it is the start of a bucket, Advance at that time may expire nothing (the
// bucket's items are due later in its tick, or it belongs to an overflow wheel and only
// cascades into finer ones); then call NextDue again.
func (w *Wheel[T]) NextDue() (sim.Time, bool) {
	for len(w.queue) > 0 && w.buckets[w.queue[0]].items.head == nowhere {
		w.buckets[w.popBucket()].queued = false
	}
	w.dropCancelled()
	next, ok := sim.Time(0), false
	if len(w.current) > 0 {
		next, ok = w.entries[w.current[0]].due, true
	}
	if len(w.queue) > 0 {
		b := w.buckets[w.queue[0]].expiration
		if !ok || b < next {
			next, ok = b, true
		}
	}
	return next, ok
}

// Advance moves the clock to now and returns the items due at or before now, in due-time
// order, ties in insertion order. A now earlier than the clock is taken as the clock: time
// never runs backwards.
func (w *Wheel[T]) Advance(now sim.Time) []Expired[T] {
	if now < w.now {
		now = w.now
	}
	w.now = now
	for k := range w.levels {
		l := &w.levels[k]
		l.clock = now - now%sim.Time(l.tickNs)
	}

	// Pour every bucket that has come due. All of them are emptied before any item is
	// placed again, so a bucket that is reused for a later tick holds no stale items.
	w.poured = w.poured[:0]
	for len(w.queue) > 0 && w.buckets[w.queue[0]].expiration <= now {
		bi := w.popBucket()
		b := &w.buckets[bi]
		b.queued = false
		for i := b.items.head; i != nowhere; {
			next := w.entries[i].next
			w.poured = append(w.poured, i)
			i = next
		}
		b.items = list{nowhere, nowhere}
	}

	// Each poured item lands in the current tick (it may be due already) or cascades to a
	// finer wheel, in a bucket that starts after now.
	for _, i := range w.poured {
		if w.isCurrent(w.entries[i].due) {
			w.pushCurrent(i)
		} else {
			w.place(i)
		}
	}

	var out []Expired[T]
	for {
		w.dropCancelled()
		if len(w.current) == 0 || w.entries[w.current[0]].due > now {
			return out
		}
		i := w.popCurrent()
		e := &w.entries[i]
		out = append(out, Expired[T]{ID: e.id, Due: e.due, Payload: e.payload})
		w.forget(i)
		w.freeSlot(i)
	}
}

// isCurrent reports whether an item due at due belongs in the current tick of the finest
// wheel (or is overdue).
func (w *Wheel[T]) isCurrent(due sim.Time) bool {
	l := w.levels[0]
	return due < l.clock || due-l.clock < sim.Time(l.tickNs)
}

// place puts entry i, due after the current tick, into the finest wheel whose span covers
// its due time, creating overflow wheels as needed (Kafka's TimingWheel.add).
func (w *Wheel[T]) place(i int32) {
	due := w.entries[i].due
	n := int64(w.wheelSize)
	for k := 0; ; k++ {
		if k == len(w.levels) {
			// The wheel below did not cover due, so its span n·tick did not overflow.
			w.addLevel(w.levels[k-1].tickNs * n)
		}
		l := w.levels[k]
		if int64(due-l.clock)/l.tickNs >= n {
			continue
		}
		vid := int64(due) / l.tickNs
		bi := int32(k*w.wheelSize) + int32(vid%n)
		b := &w.buckets[bi]
		w.pushBack(bi, i)
		start := sim.Time(vid * l.tickNs)
		if !b.queued {
			b.expiration = start
			b.queued = true
			w.pushBucket(bi)
		} else if b.expiration != start {
			panic("timewheel: bucket reused before it came due")
		}
		return
	}
}

// pushCurrent adds entry i to the current-tick heap.
func (w *Wheel[T]) pushCurrent(i int32) {
	w.entries[i].home = homeCurrent
	w.current = append(w.current, i)
	w.siftUp(len(w.current) - 1)
}

// popCurrent removes and returns the top of the current-tick heap.
func (w *Wheel[T]) popCurrent() int32 {
	h := w.current
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	w.current = h[:last]
	if last > 0 {
		w.siftDown(0)
	}
	return top
}

// dropCancelled pops cancelled entries off the top of the current-tick heap.
func (w *Wheel[T]) dropCancelled() {
	for len(w.current) > 0 && w.entries[w.current[0]].home == homeCancelled {
		w.freeSlot(w.popCurrent())
		w.cancelled--
	}
}

// compactCurrent rebuilds the current-tick heap without its cancelled entries.
func (w *Wheel[T]) compactCurrent() {
	kept := w.current[:0]
	for _, i := range w.current {
		if w.entries[i].home == homeCancelled {
			w.freeSlot(i)
		} else {
			kept = append(kept, i)
		}
	}
	w.current = kept
	w.cancelled = 0
	for j := len(kept)/2 - 1; j >= 0; j-- {
		w.siftDown(j)
	}
}

func (w *Wheel[T]) siftUp(j int) {
	h := w.current
	for j > 0 {
		parent := (j - 1) / 2
		if w.cmp(h[j], h[parent]) >= 0 {
			break
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
}

func (w *Wheel[T]) siftDown(j int) {
	h := w.current
	for {
		l, r, least := 2*j+1, 2*j+2, j
		if l < len(h) && w.cmp(h[l], h[least]) < 0 {
			least = l
		}
		if r < len(h) && w.cmp(h[r], h[least]) < 0 {
			least = r
		}
		if least == j {
			return
		}
		h[j], h[least] = h[least], h[j]
		j = least
	}
}

// cmp orders entries by (due, seq).
func (w *Wheel[T]) cmp(a, b int32) int {
	ea, eb := &w.entries[a], &w.entries[b]
	if ea.due != eb.due {
		if ea.due < eb.due {
			return -1
		}
		return 1
	}
	if ea.seq < eb.seq {
		return -1
	}
	if ea.seq > eb.seq {
		return 1
	}
	return 0
}

// pushBack links entry i at the tail of bucket bi.
func (w *Wheel[T]) pushBack(bi, i int32) {
	l := &w.buckets[bi].items
	e := &w.entries[i]
	e.home, e.prev, e.next = bi, l.tail, nowhere
	if l.tail == nowhere {
		l.head = i
	} else {
		w.entries[l.tail].next = i
	}
	l.tail = i
}

// unlink takes entry i out of the bucket that holds it.
func (w *Wheel[T]) unlink(i int32) {
	e := &w.entries[i]
	l := &w.buckets[e.home].items
	if e.prev == nowhere {
		l.head = e.next
	} else {
		w.entries[e.prev].next = e.next
	}
	if e.next == nowhere {
		l.tail = e.prev
	} else {
		w.entries[e.next].prev = e.prev
	}
	e.prev, e.next, e.home = nowhere, nowhere, nowhere
}

// alloc returns a free entry slot.
func (w *Wheel[T]) alloc() int32 {
	if n := len(w.free); n > 0 {
		i := w.free[n-1]
		w.free = w.free[:n-1]
		return i
	}
	if len(w.entries) >= math.MaxInt32 {
		panic("timewheel: too many pending items")
	}
	w.entries = append(w.entries, entry[T]{})
	return int32(len(w.entries) - 1)
}

// forget drops the pending entry i from the id index and the count.
func (w *Wheel[T]) forget(i int32) {
	delete(w.byID, w.entries[i].id)
	w.pending--
}

// freeSlot returns entry slot i, out of every list and heap, to the free list.
func (w *Wheel[T]) freeSlot(i int32) {
	w.entries[i] = entry[T]{prev: nowhere, next: nowhere, home: homeFree}
	w.free = append(w.free, i)
}

// bucketLess orders the bucket queue by (expiration, bucket index).
func (w *Wheel[T]) bucketLess(a, b int32) bool {
	ea, eb := w.buckets[a].expiration, w.buckets[b].expiration
	if ea != eb {
		return ea < eb
	}
	return a < b
}

func (w *Wheel[T]) pushBucket(bi int32) {
	w.queue = append(w.queue, bi)
	j := len(w.queue) - 1
	for j > 0 {
		parent := (j - 1) / 2
		if !w.bucketLess(w.queue[j], w.queue[parent]) {
			break
		}
		w.queue[j], w.queue[parent] = w.queue[parent], w.queue[j]
		j = parent
	}
}

func (w *Wheel[T]) popBucket() int32 {
	q := w.queue
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	j := 0
	for {
		l, r, least := 2*j+1, 2*j+2, j
		if l < len(q) && w.bucketLess(q[l], q[least]) {
			least = l
		}
		if r < len(q) && w.bucketLess(q[r], q[least]) {
			least = r
		}
		if least == j {
			break
		}
		q[j], q[least] = q[least], q[j]
		j = least
	}
	w.queue = q
	return top
}
