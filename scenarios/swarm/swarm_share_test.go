package swarm

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// The share profile's generator is a function of the seed: the same seed writes the same
// script, and different seeds different ones; every script parses and names only known
// commands, and some seeds draw each of the share groups' own faults and workloads.
func TestShareGeneratorIsDeterministic(t *testing.T) {
	opts := Options{Profile: ProfileShare}
	slow := regexp.MustCompile(`processing=\d{4,}ms`)
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
		liveness := false
		for _, st := range s.Steps {
			liveness = liveness || slices.ContainsFunc(st.Narration, func(n string) bool { return strings.HasPrefix(n, "Liveness phase") })
			msgFault := slices.Contains([]string{"drop-next", "delay-next", "dup-next"}, st.Cmd)
			for what, drawn := range map[string]bool{
				"share-partition leader crash": st.Cmd == "crash" && strings.Contains(st.Text, "leader:t/"),
				"share coordinator crash":      st.Cmd == "crash" && strings.Contains(st.Text, "leader:__share_group_state/"),
				"consumer crash":               st.Cmd == "crash" && strings.HasPrefix(st.Text, "crash s"),
				"close":                        st.Cmd == "share-close" && !liveness,
				"join mid-run":                 st.Cmd == "share-consumer" && strings.Contains(st.Text, "name=s6"),
				"second group":                 st.Cmd == "share-consumer" && strings.Contains(st.Text, "group=sg2"),
				"implicit":                     strings.Contains(st.Text, "ack=implicit"),
				"reject poison":                strings.Contains(st.Text, "reject-poison=true"),
				"slow consumer":                slow.MatchString(st.Text),
				"ShareFetch":                   msgFault && strings.Contains(st.Text, "kind=ShareFetch"),
				"ShareAcknowledge":             msgFault && strings.Contains(st.Text, "kind=ShareAcknowledge"),
				"WriteShareGroupState":         msgFault && strings.Contains(st.Text, "kind=WriteShareGroupState"),
				"ReadShareGroupState":          msgFault && strings.Contains(st.Text, "kind=ReadShareGroupState"),
			} {
				seen[what] = seen[what] || drawn
			}
		}
	}
	for _, want := range []string{"share-partition leader crash", "share coordinator crash", "consumer crash", "close", "join mid-run", "second group",
		"implicit", "reject poison", "slow consumer", "ShareFetch", "ShareAcknowledge", "WriteShareGroupState", "ReadShareGroupState"} {
		if !seen[want] {
			t.Errorf("no seed of 100 draws %s", want)
		}
	}
}

// A short run of the share profile passes: every group drains, no acknowledged record is
// lost, none is delivered beyond the delivery count limit or again after an accept.
func TestSwarmShareSeedsPass(t *testing.T) {
	n := uint64(30)
	if testing.Short() {
		n = 10
	}
	for seed := uint64(1); seed <= n; seed++ {
		res := RunSeed(seed, Options{Profile: ProfileShare})
		if res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s", seed, res.Err, res.Failures, res.Report)
		}
	}
}

// The share profile finds both planted share bugs, each by the anomaly it causes, and
// the same scripts with the bug removed pass: the failures are the bugs', found by the
// share checker judging the history (notes/planted-bugs.md gives the seeds each needs).
func TestSwarmShareFindsPlantedBugs(t *testing.T) {
	for _, tc := range []struct {
		bug  string
		seed uint64
		want checker.Anomaly
	}{
		{"share-lock-never-expires", 2, checker.ShareLost},
		{"share-ack-before-persist", 5, checker.ShareRedeliveredAfterAccept},
	} {
		res := RunSeed(tc.seed, Options{Profile: ProfileShare, Bug: tc.bug})
		if res.Err != nil || !slices.Contains(res.Failures, tc.want) {
			t.Errorf("%s, seed %d: %v %v, want %s", tc.bug, tc.seed, res.Err, res.Failures, tc.want)
		}
		control := strings.Replace(res.Script, " bugs=("+tc.bug+")", "", 1)
		if control == res.Script {
			t.Fatalf("%s, seed %d: no planted bug in the script", tc.bug, tc.seed)
		}
		if c := RunScript("control", control); c.Failed() {
			t.Errorf("%s, seed %d without the bug: %v %v\n%s", tc.bug, tc.seed, c.Err, c.Failures, c.Report)
		}
	}
}

// The shrinker works on share scripts: the first seed the lock bug fails shrinks to a
// script that fails with the same anomaly, keeps its share consumers (setup), and is much
// smaller.
func TestSwarmShareShrinks(t *testing.T) {
	if testing.Short() {
		t.Skip("shrinking runs the seed dozens of times")
	}
	res := RunSeed(2, Options{Profile: ProfileShare, Bug: "share-lock-never-expires"})
	if len(res.Failures) == 0 {
		t.Fatalf("seed 2 passes with the bug: %v", res.Err)
	}
	shrunk := Shrink(res.Script, res.Failures, 100)
	again := RunScript("shrunk", shrunk.Text)
	if !slices.Contains(again.Failures, checker.ShareLost) {
		t.Fatalf("the shrunk script does not fail with share-lost: %v %v\n%s", again.Err, again.Failures, shrunk.Text)
	}
	if n, was := CountSteps(shrunk.Text), CountSteps(res.Script); n > was/2 || !strings.Contains(shrunk.Text, "share-consumer name=s1 ") {
		t.Errorf("shrunk from %d to %d commands, want at most half, share consumers kept:\n%s", was, n, shrunk.Text)
	}
}
