package runner

import (
	"strings"
	"testing"
	"time"

	"mqsim/scenarios/script"
	"mqsim/sim"
)

// produceTime is how much virtual time producing count records takes, from the produce
// command to the last acknowledgement, on a one-broker cluster with the given settings.
func produceTime(t *testing.T, settings string, count string) time.Duration {
	t.Helper()
	r, _ := execAll(t, "cluster brokers=1 partitions=1 rf=1 min-isr=1 "+settings)
	start := r.World().Now()
	s, err := script.Parse("inline", scriptOf("produce count="+count))
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Exec(s.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "fail") || strings.Contains(out, "unknown") {
		t.Fatalf("not every record was acknowledged:\n%s", out)
	}
	return time.Duration(r.World().Now() - start)
}

// With CPU costs, a broker spends a request's cost once per batch: records sent one to a
// batch take longer each than records sent in big batches, and what the costs add to the
// run is almost all in the small batches. (Small batches are slower without costs too:
// max.in.flight.requests bounds how many are on their way at once.)
func TestBiggerBatchesCostLessPerRecordWithCPUCosts(t *testing.T) {
	const cpu = " cpu-request=1ms cpu-record=10us"
	const small, big = "batch-size=1 linger=5ms", "batch-size=65536 linger=5ms"
	smallCPU, bigCPU := produceTime(t, small+cpu, "200"), produceTime(t, big+cpu, "200")
	smallFree, bigFree := produceTime(t, small, "200"), produceTime(t, big, "200")
	t.Logf("200 records with CPU costs: %s one record a batch, %s in big batches; without: %s and %s",
		smallCPU, bigCPU, smallFree, bigFree)
	if smallCPU < 5*bigCPU {
		t.Errorf("with CPU costs one-record batches took %s, big ones %s: want them at least 5 times slower", smallCPU, bigCPU)
	}
	addedSmall, addedBig := smallCPU-smallFree, bigCPU-bigFree
	if addedBig <= 0 || addedSmall < 10*addedBig {
		t.Errorf("the CPU costs added %s to one-record batches and %s to big ones: want at least 10 times more to the small ones", addedSmall, addedBig)
	}
}

func TestCostSettingsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"costs fast", `"fast": want realistic or off`},
		{"costs bandwidth=lots", `bandwidth=lots: "lots": want bytes per second`},
		{"costs page-cache=3XB", `page-cache=3XB: "3XB": unknown unit "XB"`},
		{"costs cpu-request=-1ms", "cpu-request"},
		{"cluster costs=cheap", "costs=cheap: want realistic or off"},
	} {
		err := execErr(t, []string{"world seed=1"}, tc.cmd)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.cmd, err, tc.want)
		}
	}
}

func TestCostsCommandAndSetReachTheWorld(t *testing.T) {
	r, outs := execAll(t, "costs realistic bandwidth=10MB/s")
	want := sim.RealisticCosts()
	want.Bandwidth = 10_000_000
	if got := r.World().Costs(); got != want {
		t.Errorf("costs %v, want %v", got, want)
	}
	if !strings.HasPrefix(outs[0], "costs: bandwidth=10MB/s disk-write=500MB/s") {
		t.Errorf("output %q", outs[0])
	}
	s, err := script.Parse("inline", scriptOf("cluster brokers=1 partitions=1 rf=1"))
	if err != nil {
		t.Fatal(err)
	}
	r = NewRunner(Options{Set: []string{"costs=realistic", "cpu-record=2us"}})
	out, err := r.Exec(s.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	want = sim.RealisticCosts()
	want.CPUPerRecord = 2 * time.Microsecond
	if got := r.World().Costs(); got != want {
		t.Errorf("--set costs=realistic cpu-record=2us: costs %v, want %v", got, want)
	}
	if !strings.Contains(out, "costs: bandwidth=125MB/s") {
		t.Errorf("the cluster's output does not say its costs:\n%s", out)
	}
	_, outs = execAll(t, "cluster brokers=1 partitions=1 rf=1 disk-read=100KB/s page-cache=8KiB", "show disk b1")
	if !strings.Contains(outs[1], "b1: page cache 8192B of 8KiB") {
		t.Errorf("show disk does not show the page cache:\n%s", outs[1])
	}
	if err := CheckClusterSettings([]string{"disk-read=slow"}); err == nil || !strings.Contains(err.Error(), "disk-read=slow") {
		t.Errorf("CheckClusterSettings(disk-read=slow): %v", err)
	}
}

// consumeTime is how much virtual time a consumer takes to read from the earliest offset
// 2000 records produced just before, with the given cost settings.
func consumeTime(t *testing.T, costs string) time.Duration {
	t.Helper()
	r, _ := execAll(t, "cluster brokers=1 partitions=1 rf=1 min-isr=1 "+costs, "produce count=2000")
	start := r.World().Now()
	s, err := script.Parse("inline", scriptOf("consume from=earliest"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Exec(s.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "v2000") {
		t.Fatalf("the consumer did not read every record:\n%s", out)
	}
	return time.Duration(r.World().Now() - start)
}

// A consumer that reads what was just written reads it from the page cache; with a
// cache too small to hold the log, the broker reads it from the disk, and the fetches
// answer later by the read time. A crash (power loss) of the broker would empty the
// cache the same way (sim's TestCrashEmptiesThePageCacheKillKeepsIt).
func TestFetchOfDataOutsideThePageCacheWaitsForTheDisk(t *testing.T) {
	const disk = "disk-read=100KB/s "
	warm := consumeTime(t, disk+"page-cache=1MiB")
	cold := consumeTime(t, disk+"page-cache=4KiB")
	free := consumeTime(t, "")
	t.Logf("consume 2000 records: %s with a warm cache, %s with a one-page cache, %s without costs", warm, cold, free)
	if warm != free {
		t.Errorf("with the log in the cache the consumer took %s, want %s as without costs", warm, free)
	}
	if cold < warm+50*time.Millisecond {
		t.Errorf("with a one-page cache the consumer took %s, want at least 50ms more than %s (a log of some 13KB read at 100KB/s)", cold, warm)
	}
}
