package checker

import (
	"fmt"
	"testing"

	"mqsim/internal/benchhistory"
	"mqsim/model/history"
)

func benchHistory(n int) history.History { return benchhistory.Build(n, 16) }

// BenchmarkCheck measures the queue and delivery checkers together (what
// Check runs without linearizability) on growing histories; ops/s should
// stay roughly flat, as the analysis is O(n log n).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		h := benchHistory(n)
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Check(h, Options{Promise: AtLeastOnce})
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Violations) != 0 {
					b.Fatalf("benchmark history has violations:\n%s", r)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		})
	}
}
