package timewheel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"mqsim/sim"
)

// timer is what the benchmark drives: the wheel, or the sorted-list reference.
type timer interface {
	add(id uint64, due sim.Time)
	advance(now sim.Time) int
	// fill adds items with ids 0.. at the given due times, as fast as the timer allows.
	fill(dues []sim.Time)
}

type wheelTimer struct{ w *Wheel[struct{}] }

func (t wheelTimer) add(id uint64, due sim.Time) { t.w.Add(id, due, struct{}{}) }
func (t wheelTimer) advance(now sim.Time) int    { return len(t.w.Advance(now)) }
func (t wheelTimer) fill(dues []sim.Time) {
	for id, due := range dues {
		t.add(uint64(id), due)
	}
}

// sortedTimer is the reference without its cancel-before-add scan (the benchmark's ids are
// unique): binary search and insert into a slice sorted by (due, seq).
type sortedTimer struct{ r *refTimer }

func (t sortedTimer) add(id uint64, due sim.Time) {
	it := refItem{id: id, due: due, seq: t.r.seq}
	t.r.seq++
	at, _ := slices.BinarySearchFunc(t.r.items, it, refLess)
	t.r.items = slices.Insert(t.r.items, at, it)
}
func (t sortedTimer) advance(now sim.Time) int { return len(t.r.advance(now)) }
func (t sortedTimer) fill(dues []sim.Time) {
	for id, due := range dues {
		t.r.items = append(t.r.items, refItem{id: uint64(id), due: due, seq: t.r.seq})
		t.r.seq++
	}
	slices.SortFunc(t.r.items, refLess)
}

// shape is a benchmark workload: delays uniform in [0, 2·delayMean), one insert every
// delayMean/pending of virtual time, so about pending items are in flight.
type shape struct {
	name      string
	delayMean time.Duration
}

var shapes = []shape{
	// Purgatory-like: delays around a second (fetch.max.wait, request timeouts), spread
	// over a thousand 1ms ticks; items cascade through two or three wheels.
	{"spread", time.Second},
	// Crowded ticks: every item is due within a few ticks, so most of the work is the
	// exact ordering inside the current tick (where Kafka would simply fire the bucket).
	{"dense", 0},
}

// insertExpire fills t with pending items, then times ops operations: each moves the clock
// one step, adds one item and expires what is due (one item per operation on average).
func insertExpire(b *testing.B, t timer, sh shape, pending, ops int) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	rng := rand.New(rand.NewPCG(1, uint64(pending)))
	delayMean := sh.delayMean
	if delayMean == 0 {
		delayMean = time.Duration(pending) * time.Microsecond
	}
	step := sim.Time(delayMean) / sim.Time(pending)
	delay := func() sim.Time { return 1 + sim.Time(rng.Int64N(2*int64(delayMean))) }
	dues := make([]sim.Time, pending)
	for k := range dues {
		dues[k] = delay()
	}
	t.fill(dues)
	now, id := sim.Time(0), uint64(pending)
	b.StartTimer()
	begin := time.Now()
	for range ops {
		now += step
		t.add(id, now+delay())
		id++
		t.advance(now)
	}
	return time.Since(begin)
}

// BenchmarkInsertExpire measures insert+expire throughput of the wheel (Kafka's shape:
// 1ms tick, 20 buckets) and of the sorted-list reference with 10^3, 10^4 and 10^5 items
// in flight, and reports both and their ratio. ns/op is the wheel's.
func BenchmarkInsertExpire(b *testing.B) {
	for _, sh := range shapes {
		for _, pending := range []int{1_000, 10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/pending=%d", sh.name, pending), func(b *testing.B) {
				// The wheel runs at least 2^18 operations, so that its time is measurable
				// even when the reference's slowness keeps b.N small.
				wheelOps := max(b.N, 1<<18)
				wheel := insertExpire(b, wheelTimer{New[struct{}](time.Millisecond, 20, 0)}, sh, pending, wheelOps)
				sorted := insertExpire(b, sortedTimer{&refTimer{}}, sh, pending, b.N)
				wheelRate := float64(wheelOps) / wheel.Seconds()
				sortedRate := float64(b.N) / sorted.Seconds()
				b.ReportMetric(float64(wheel.Nanoseconds())/float64(wheelOps), "ns/op")
				b.ReportMetric(wheelRate, "wheel-ops/s")
				b.ReportMetric(sortedRate, "sorted-ops/s")
				b.ReportMetric(wheelRate/sortedRate, "speedup")
			})
		}
	}
}
