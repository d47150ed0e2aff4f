package swarm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

func TestSwarmSafeSeedsPass(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		res := RunSeed(seed, Options{Profile: ProfileSafe})
		if res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s\n%s", seed, res.Err, res.Failures, res.Report, res.Script)
		}
	}
}

// In the any profile, violations are expected where the drawn settings allow them, and
// only those: the runs fail for none, and some of them do lose or duplicate.
func TestSwarmAnyProfileFailsOnlyForWhatTheSettingsForbid(t *testing.T) {
	allowed := 0
	for seed := uint64(1); seed <= 60; seed++ {
		res := RunSeed(seed, Options{Profile: ProfileAny})
		if res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s", seed, res.Err, res.Failures, res.Report)
		}
		allowed += len(res.Allowed)
	}
	if allowed == 0 {
		t.Error("60 seeds of settings drawn freely and no violation anywhere: the profile tests nothing")
	}
}

// A planted bug is found by some seed, and shrinking keeps the failure while cutting the
// scenario down.
func TestSwarmFindsAndShrinksAPlantedBug(t *testing.T) {
	opts := Options{Profile: ProfileSafe, Bug: "hw-from-leader-only"}
	for seed := uint64(1); seed <= 200; seed++ {
		res := RunSeed(seed, opts)
		if !res.Failed() {
			continue
		}
		shrunk := Shrink(res.Script, res.Failures, 300)
		small, runs := shrunk.Text, shrunk.Runs
		again := RunScript("shrunk", small)
		if !again.Failed() {
			t.Fatalf("seed %d: the shrunk scenario no longer fails:\n%s", seed, small)
		}
		if CountSteps(small) >= CountSteps(res.Script) {
			t.Errorf("seed %d: shrinking did not remove anything (%d steps)", seed, CountSteps(small))
		}
		// What is left reads as a scenario: runs are merged, and nothing undoes a fault
		// that is gone.
		sc, err := script.Parse("shrunk", small)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range sc.Steps {
			if i > 0 && st.Cmd == "run" && sc.Steps[i-1].Cmd == "run" && !strings.HasPrefix(strings.Join(st.Narration, " "), "Liveness") {
				t.Errorf("seed %d: two runs in a row at line %d:\n%s", seed, st.Line, small)
			}
			clogged := slices.ContainsFunc(sc.Steps, func(c script.Step) bool { return c.Text == "clog"+strings.TrimPrefix(st.Text, "unclog") })
			if st.Cmd == "unclog" && !clogged {
				t.Errorf("seed %d: %q at line %d undoes no clog:\n%s", seed, st.Text, st.Line, small)
			}
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
		res := RunSeed(uint64(i+1), Options{Profile: ProfileSafe})
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

// Scenarios the swarm once failed on, shrunk and kept as files so that the fix stays fixed
// whatever the generator draws later (a graveyard, in the simulation-testing sense). Each
// file's header says what went wrong.
func TestSwarmRegressions(t *testing.T) {
	files, err := filepath.Glob("testdata/swarm-regressions/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no regression scenarios: %v", err)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if res := RunScript(f, string(text)); res.Failed() {
			t.Errorf("%s fails again: %v %v\n%s", f, res.Err, res.Failures, res.Report)
		}
	}
}

// The shrinker simplifies the control-plane faults: one message instead of several, and a
// run to the moment of a change as a plain run of its limit.
func TestSimplificationsOfControlFaults(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"drop-next ctl -> leader:t/0 kind=LeaderAndIsr count=7", "drop-next ctl -> leader:t/0 kind=LeaderAndIsr"},
		{"delay-next b1 -> ctl for=300ms kind=AlterPartition count=2", "delay-next b1 -> ctl for=300ms kind=AlterPartition"},
		{"run until-change=isr partition=t/0 limit=2500ms", "run for=2500ms"},
	} {
		s, err := script.Parse("t", tc.line+"\n----\n")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, st := range simplifications(s.Steps[0]) {
			got = append(got, st.Text)
		}
		if !slices.Contains(got, tc.want) {
			t.Errorf("%q: simplifications %q, want %q among them", tc.line, got, tc.want)
		}
	}
}

// Every seed's script parses and names only known commands, the control-plane faults
// included, and some seeds draw each of them.
func TestGeneratedControlFaultsAreValid(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		text := Generate(seed, Options{Profile: ProfileSafe})
		s, err := script.Parse("gen", text)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := runner.Check(s); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, st := range s.Steps {
			if _, ok := argVal(st, "until-change"); ok || slices.Contains([]string{"drop-next", "delay-next", "dup-next"}, st.Cmd) {
				seen[st.Cmd+" "+strings.Fields(st.Text)[1]] = true
			}
		}
	}
	for _, want := range []string{"run until-change=isr", "drop-next ctl", "delay-next ctl", "dup-next ctl", "drop-next b1"} {
		if !seen[want] {
			t.Errorf("no seed of 200 draws %q (seen %v)", want, seen)
		}
	}
}

// A third of the safe seeds with a consumer group run it under the consumer protocol
// (KIP-848); the other seeds' scripts do not mention it.
func TestSwarmDrawsTheConsumerProtocol(t *testing.T) {
	groups, kip848 := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		text := Generate(seed, Options{Profile: ProfileSafe})
		if !strings.Contains(text, "group name=g") {
			continue
		}
		groups++
		if strings.Contains(text, "group-protocol=consumer") {
			kip848++
			if !strings.Contains(text, "consumer-session-timeout=6s") {
				t.Fatalf("seed %d: a consumer-protocol group without the coordinator's short session", seed)
			}
		}
	}
	t.Logf("%d of %d seeds with a group draw the consumer protocol", kip848, groups)
	if groups == 0 || kip848*5 < groups || kip848*2 > groups {
		t.Errorf("%d of %d seeds with a group draw the consumer protocol, want about a third", kip848, groups)
	}
}
