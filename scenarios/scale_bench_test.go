package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// The scale workloads: the cost of a run should grow with the work (messages, and
// partitions times simulated time), not with its square. Each benchmark runs a workload at
// its goal size beside the same workload at a tenth of the size (of its messages, or of its
// partitions), measured in the same run, and reports the ratio of their costs: about 10
// means linear, 100 quadratic. The goal
// sizes are also scenario files under testdata/scale, for mqsim run and for profiling
// (MQSIM_SCALE_FILE with BenchmarkScaleFile). The benchmarks take tens of seconds, so
// they run only with MQSIM_SCALE_BENCH set (make bench-scale).

// produceScenario sends count records through a small safe cluster and reads them back.
func produceScenario(count int) string {
	return fmt.Sprintf(`# produce count=%d on a small cluster: the cost should grow linearly in the count.
cluster brokers=3 partitions=4 rf=3 min-isr=2 acks=all idempotence=true
----

produce count=%d
----

consume
----

check
----
`, count, count)
}

// idleScenario builds a cluster of that many partitions and runs it for ten simulated
// seconds with no client: creating the topic, fetching and heartbeats.
func idleScenario(partitions int) string {
	return fmt.Sprintf(`# A cluster with %d partitions, then ten simulated seconds of idle time: the cost
# should grow about linearly with the partitions.
cluster brokers=3 partitions=%d rf=3 min-isr=2 acks=all idempotence=true
----

run for=10s
----
`, partitions, partitions)
}

// bigScenario is a large safe cluster: brokers, partitions and count records, produced,
// consumed and checked.
func bigScenario(brokers, partitions, count int) string {
	return fmt.Sprintf(`# %d brokers, %d partitions and %d messages with safe settings.
cluster brokers=%d partitions=%d rf=3 min-isr=2 acks=all idempotence=true
----

produce count=%d
----

consume
----

check
----
`, brokers, partitions, count, brokers, partitions, count)
}

// scaleFiles are the goal workloads as written under testdata/scale.
var scaleFiles = map[string]string{
	"produce-100k.txt":                  produceScenario(100_000),
	"partitions-1000.txt":               idleScenario(1000),
	"brokers64-partitions1000-100k.txt": bigScenario(64, 1000, 100_000),
}

// The files under testdata/scale are the benchmarks' goal workloads, word for word.
func TestScaleFilesAreTheBenchmarkWorkloads(t *testing.T) {
	for name, want := range scaleFiles {
		got, err := os.ReadFile(filepath.Join("testdata", "scale", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("testdata/scale/%s differs from its benchmark's workload:\n%s", name, want)
		}
		if _, err := script.Parse(name, want); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// runScale runs one workload and fails unless it ends valid with every send
// acknowledged (count of them; 0 for a workload without clients). It returns the wall
// and CPU time the run took.
func runScale(tb testing.TB, name, text string, count int) (wall, cpu time.Duration) {
	s, err := script.Parse(name, text)
	if err != nil {
		tb.Fatal(err)
	}
	runtime.GC() // the previous run's garbage is not this run's cost
	startCPU, startWall := processCPU(), time.Now()
	res, err := runner.Run(s, runner.Options{}, nil)
	wall, cpu = time.Since(startWall), processCPU()-startCPU
	if err != nil {
		tb.Fatal(err)
	}
	if res.Violations != 0 {
		tb.Fatalf("%s: %d violations", name, res.Violations)
	}
	acked := 0
	for _, op := range res.Runner.Cluster().History.History() {
		if op.F == history.Send && op.Type == history.Ok {
			acked++
		}
	}
	if acked != count {
		tb.Fatalf("%s: %d of %d sends acknowledged", name, acked, count)
	}
	return wall, cpu
}

// benchScale runs the baseline and the goal workload once per iteration and reports the
// goal's cost as a ratio of the baseline's (CPU time, which a shared machine disturbs
// less, and wall time; the median of the iterations' ratios), beside both mean costs in
// seconds.
func benchScale(b *testing.B, base, goal string, baseCount, goalCount int) {
	if os.Getenv("MQSIM_SCALE_BENCH") == "" {
		b.Skip("set MQSIM_SCALE_BENCH=1 (make bench-scale): each iteration takes seconds")
	}
	var baseWall, baseCPU, goalWall, goalCPU time.Duration
	var cpuRatios, wallRatios []float64
	for b.Loop() {
		bw, bc := runScale(b, "baseline", base, baseCount)
		gw, gc := runScale(b, "goal", goal, goalCount)
		baseWall, baseCPU, goalWall, goalCPU = baseWall+bw, baseCPU+bc, goalWall+gw, goalCPU+gc
		cpuRatios = append(cpuRatios, gc.Seconds()/bc.Seconds())
		wallRatios = append(wallRatios, gw.Seconds()/bw.Seconds())
	}
	n := float64(b.N)
	slices.Sort(cpuRatios)
	slices.Sort(wallRatios)
	b.ReportMetric(cpuRatios[len(cpuRatios)/2], "ratio-cpu")
	b.ReportMetric(wallRatios[len(wallRatios)/2], "ratio-wall")
	b.ReportMetric(baseCPU.Seconds()/n, "s-cpu-baseline")
	b.ReportMetric(goalCPU.Seconds()/n, "s-cpu-goal")
	b.ReportMetric(baseWall.Seconds()/n, "s-wall-baseline")
	b.ReportMetric(goalWall.Seconds()/n, "s-wall-goal")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkScaleProduce: produce count=100000 on three brokers, then consume and check,
// against count=10000. The produce command alone is linear (10x the records, about 11x
// the time); consuming is not quite, by what the model does: a poll hands out at most
// max.poll.records (500) and the next poll fetches again from its position, up to a
// mebibyte a partition, so reading n records of a partition decodes about n²/1000 of them
// until a mebibyte's worth caps it (Kafka's consumer keeps what it fetched instead).
func BenchmarkScaleProduce(b *testing.B) {
	benchScale(b, produceScenario(10_000), produceScenario(100_000), 10_000, 100_000)
}

// BenchmarkScalePartitions: 1,000 partitions for ten simulated seconds, against 100.
func BenchmarkScalePartitions(b *testing.B) {
	benchScale(b, idleScenario(100), idleScenario(1000), 0, 0)
}

// BenchmarkScaleBigCluster: 64 brokers, 1,000 partitions and 100,000 messages, against
// the same cluster with 10,000 messages: linear in the messages at this size. (Against a
// tenth of everything, 100 partitions and 10,000 messages, the ratio is about 45, below
// the work's own growth: consuming polls every assigned partition once per 500 records,
// so ten times the records over ten times the partitions is a hundred times the fetches.)
func BenchmarkScaleBigCluster(b *testing.B) {
	benchScale(b, bigScenario(64, 1000, 10_000), bigScenario(64, 1000, 100_000), 10_000, 100_000)
}

// BenchmarkScaleFile runs the scenario file MQSIM_SCALE_FILE names, for profiling:
// MQSIM_SCALE_FILE=testdata/scale/partitions-1000.txt go test ./scenarios -run '^$'
// -bench ScaleFile -benchtime 1x -cpuprofile cpu.out
func BenchmarkScaleFile(b *testing.B) {
	path := os.Getenv("MQSIM_SCALE_FILE")
	if path == "" {
		b.Skip("set MQSIM_SCALE_FILE to a scenario file")
	}
	text, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	s, err := script.Parse(path, string(text))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := runner.Run(s, runner.Options{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("trace hash %s, %d violations", res.Hash, res.Violations)
	}
}
