package scenarios

import (
	"testing"
	"time"
)

func TestSwarmSafeSeedsPass(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		res := RunSeed(seed, SwarmOptions{Profile: ProfileSafe})
		if res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s\n%s", seed, res.Err, res.Failures, res.Report, res.Script)
		}
	}
}

// A planted bug is found by some seed, and shrinking keeps the failure while cutting the
// scenario down.
func TestSwarmFindsAndShrinksAPlantedBug(t *testing.T) {
	opts := SwarmOptions{Profile: ProfileSafe, Bug: "hw-from-leader-only"}
	for seed := uint64(1); seed <= 200; seed++ {
		res := RunSeed(seed, opts)
		if !res.Failed() {
			continue
		}
		small, runs := Shrink(res.Script, res.Failures, 300)
		again := RunScript("shrunk", small)
		if !again.Failed() {
			t.Fatalf("seed %d: the shrunk scenario no longer fails:\n%s", seed, small)
		}
		if CountSteps(small) >= CountSteps(res.Script) {
			t.Errorf("seed %d: shrinking did not remove anything (%d steps)", seed, CountSteps(small))
		}
		t.Logf("seed %d: %v, %d -> %d steps in %d runs", seed, res.Failures, CountSteps(res.Script), CountSteps(small), runs)
		return
	}
	t.Fatal("200 seeds with hw-from-leader-only planted found nothing")
}

// BenchmarkSwarmSeeds runs safe-profile seeds on one goroutine and reports seeds per
// minute per core and how much faster than real time the simulation runs.
func BenchmarkSwarmSeeds(b *testing.B) {
	var sim time.Duration
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res := RunSeed(uint64(i+1), SwarmOptions{Profile: ProfileSafe})
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		sim += res.SimTime
	}
	wall := time.Since(start)
	b.ReportMetric(float64(b.N)/wall.Minutes(), "seeds/min/core")
	b.ReportMetric(sim.Seconds()/wall.Seconds(), "sim/wall")
	b.ReportMetric(0, "ns/op")
}

// Seeds the swarm once failed on, kept so the fix stays fixed (a graveyard, in the
// simulation-testing sense). 527: a member fenced during a long pause rejoined still
// claiming its partitions, and two members owned t/0 in one generation.
var regressionSeeds = []uint64{527}

func TestSwarmRegressionSeeds(t *testing.T) {
	for _, seed := range regressionSeeds {
		if res := RunSeed(seed, SwarmOptions{Profile: ProfileSafe}); res.Failed() {
			t.Errorf("seed %d fails again: %v %v", seed, res.Err, res.Failures)
		}
	}
}
