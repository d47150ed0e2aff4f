package cluster_test

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkInvariantOverhead runs the end-to-end workload of BenchmarkEndToEnd (with the
// history recorder on, so the read-above-hw check has polls to read) with and without
// the invariant checks, alternately, and reports the ratio of their wall times: what
// checking every invariant after every event costs. The ratio reported is the median of
// the iterations' ratios, which a busy machine disturbs less than the total.
func BenchmarkInvariantOverhead(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "flush=never"
		if durable {
			name = "flush=every-batch"
		}
		b.Run(name, func(b *testing.B) {
			var off, on time.Duration
			var ratios []float64
			for i := 0; i < b.N; i++ {
				start := time.Now()
				runEndToEndWith(b, e2eOptions{history: true, durable: durable})
				offRun := time.Since(start)
				start = time.Now()
				runEndToEndWith(b, e2eOptions{history: true, durable: durable, invariants: true})
				onRun := time.Since(start)
				off, on = off+offRun, on+onRun
				ratios = append(ratios, float64(onRun)/float64(offRun))
			}
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "ratio")
			b.ReportMetric(float64(off.Milliseconds())/float64(b.N), "ms-off/run")
			b.ReportMetric(float64(on.Milliseconds())/float64(b.N), "ms-on/run")
			b.ReportMetric(0, "ns/op")
		})
	}
}
