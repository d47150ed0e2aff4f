package swarm

import (
	"slices"
	"strings"
	"testing"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// The txn profile's generator is a function of the seed: the same seed writes the same
// script, and different seeds different ones; every script parses and names only known
// commands, and some seeds draw each of the transactions' own fault kinds.
func TestTxnGeneratorIsDeterministic(t *testing.T) {
	opts := Options{Profile: ProfileTxn}
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 100; seed++ {
		text := Generate(seed, opts)
		if again := Generate(seed, opts); again != text {
			t.Fatalf("seed %d: two scripts from one seed", seed)
		}
		if seed > 1 && text == Generate(seed-1, opts) {
			t.Fatalf("seeds %d and %d write the same script", seed-1, seed)
		}
		s, err := script.Parse("gen", text)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := runner.Check(s); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, st := range s.Steps {
			msgFault := slices.Contains([]string{"drop-next", "delay-next", "dup-next"}, st.Cmd)
			for what, drawn := range map[string]bool{
				"coordinator crash": st.Cmd == "crash" && strings.Contains(st.Text, "leader:__transaction_state/"),
				"pipeline takeover": st.Cmd == "pipeline" && strings.Contains(st.Text, "name=app-"),
				"producer takeover": st.Cmd == "producer" && (strings.Contains(st.Text, "name=tp1-") || strings.Contains(st.Text, "name=tp2-")),
				"EndTxn":            msgFault && strings.Contains(st.Text, "kind=EndTxn"),
				"WriteTxnMarkers":   msgFault && strings.Contains(st.Text, "kind=WriteTxnMarkers"),
				"abort":             st.Cmd == "abort-txn" && strings.Contains(st.Text, "wait=false"),
			} {
				seen[what] = seen[what] || drawn
			}
		}
	}
	for _, want := range []string{"coordinator crash", "pipeline takeover", "producer takeover", "EndTxn", "WriteTxnMarkers", "abort"} {
		if !seen[want] {
			t.Errorf("no seed of 100 draws %s (seen %v)", want, seen)
		}
	}
}

// A short run of the txn profile passes: every transaction ends, the pipeline holds to
// exactly-once, and nothing the checkers judge is violated.
func TestSwarmTxnSeedsPass(t *testing.T) {
	n := uint64(30)
	if testing.Short() {
		n = 10
	}
	for seed := uint64(1); seed <= n; seed++ {
		res := RunSeed(seed, Options{Profile: ProfileTxn})
		if res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s", seed, res.Err, res.Failures, res.Report)
		}
	}
}

// The markers-before-prepare bias is drawn for the bug named: the scripts of seeds that
// fail with the bug planted pass with it removed, so the failures are the bug's, found by
// the checkers judging the history (notes/planted-bugs.md).
func TestSwarmTxnBiasControl(t *testing.T) {
	opts := Options{Profile: ProfileTxn, Bug: "markers-before-prepare"}
	for _, seed := range []uint64{6, 17} {
		res := RunSeed(seed, opts)
		if res.Err != nil || len(res.Failures) == 0 {
			t.Errorf("seed %d with the bug: %v, no failure", seed, res.Err)
		}
		control := strings.Replace(res.Script, " bugs=(markers-before-prepare)", "", 1)
		if control == res.Script {
			t.Fatalf("seed %d: no planted bug in the script", seed)
		}
		if c := RunScript("control", control); c.Failed() {
			t.Errorf("seed %d without the bug: %v %v\n%s", seed, c.Err, c.Failures, c.Report)
		}
	}
}
