package scenarios

import (
	"testing"
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
