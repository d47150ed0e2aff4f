package labs

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"mqsim/checker"
	lab "mqsim/labs/idempotent-consumer"
	"mqsim/scenarios/swarm"
)

// The starter applies every delivery: the swarm finds a payment applied twice within
// 200 seeds (seed 2), and the shrinker makes that run small.
func TestIdempotentStarterFailsWithin200Seeds(t *testing.T) {
	starterCaught(t, "idempotent-consumer", 2, "double-applied", func(fs []checker.Anomaly) bool {
		return slices.Equal(fs, []checker.Anomaly{lab.DoubleApplied})
	}, lab.DoubleApplied)
}

// The reference solution passes. go test runs 200 seeds; make labs runs 2,000.
func TestIdempotentSolutionPasses(t *testing.T) { solutionPasses(t, "idempotent-consumer") }

// firstFailing runs seeds 1 to 200 of l with code and returns the first that fails.
func firstFailing(l Lab, code Code) Result {
	var res Result
	for seed := uint64(1); seed <= 200 && !res.Failed(); seed++ {
		res = l.RunSeed(seed, code)
	}
	return res
}

// starterCaught checks that the first of seeds 1 to 200 on which lab name's starter
// fails is seed, with failures that match (described by want), and that the shrinker
// makes that run smaller while it still fails: with anomaly, with anomaly first.
func starterCaught(t *testing.T, name string, seed uint64, want string, match func([]checker.Anomaly) bool, anomaly checker.Anomaly) {
	t.Helper()
	l, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	failing := firstFailing(l, Starter)
	if failing.Seed != seed || failing.Err != nil || !match(failing.Failures) {
		t.Fatalf("first failing seed %d with %v (err %v), want seed %d with %s", failing.Seed, failing.Failures, failing.Err, seed, want)
	}
	shrunk := Shrink(context.Background(), failing, 300)
	before, after := swarm.CountSteps(failing.Script), swarm.CountSteps(shrunk.Text)
	small := swarm.RunScript("shrunk", shrunk.Text)
	if !small.Failed() || anomaly != "" && !slices.Contains(small.Failures, anomaly) {
		t.Fatalf("the shrunk run does not fail with %s: %v\n%s", want, small.Failures, shrunk.Text)
	}
	if after >= before {
		t.Errorf("shrunk from %d to %d commands", before, after)
	}
	v, ok := FirstFailure(small)
	if !ok || v.Step == 0 || anomaly != "" && v.Anomaly != anomaly {
		t.Errorf("first failure %+v (%v): want %s at a step", v, ok, cmp.Or(string(anomaly), "one"))
	}
	t.Logf("seed %d: %d commands shrunk to %d in %d runs; %s at step %d", failing.Seed, before, after, shrunk.Runs, v.Anomaly, v.Step)
}

// solutionPasses runs lab name's reference solution on seeds 1 to 200 (20 with -short).
func solutionPasses(t *testing.T, name string) {
	t.Helper()
	l, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	seeds := uint64(200)
	if testing.Short() {
		seeds = 20
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		if res := l.RunSeed(seed, Solution); res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s", seed, res.Failures, res.Err, res.Script)
		}
	}
}

// The starter and the solution keep the determinism rules.
func TestLabCodeKeepsTheRules(t *testing.T) {
	for _, l := range All() {
		for _, code := range []Code{Starter, Solution} {
			ps, err := l.Check(code)
			if err != nil || len(ps) > 0 {
				t.Errorf("%s %s: %v %v", l.Name, code, err, ps)
			}
		}
	}
}

// A learner's file that starts a goroutine, reads the clock, waits on a channel, ranges
// over a map or imports what it must not is rejected, each breach named by file and
// line with its reason.
func TestDeterminismCheckRejectsBadCode(t *testing.T) {
	dir := t.TempDir()
	bad := `package starter

import (
	"math/rand"
	"os"
	"time"

	lab "mqsim/labs/idempotent-consumer"
	"mqsim/model/broker"
)

var _ = broker.New
var seen = map[string]bool{}

type handler struct{ seen map[string]bool }

func (h *handler) Process(tx lab.Tx, p lab.Payment) error {
	go func() { h.seen[p.ID] = true }()
	if time.Now().Unix()%2 == 0 && rand.Intn(2) == 0 {
		return nil
	}
	done := make(chan bool)
	<-done
	for id := range h.seen {
		_ = os.Getpid()
		tx.Upsert(id, "1")
	}
	var wait time.Duration = time.Second
	_ = wait
	return nil
}
`
	good := "package starter\n\nfunc helper() int { return 1 }\n"
	for name, src := range map[string]string{"bad.go": bad, "good.go": good, "bad_test.go": "package starter\n\nimport \"os\"\n\nvar _ = os.Args\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := CheckFS(os.DirFS(dir), "labs/idempotent-consumer/starter", "mqsim/labs/idempotent-consumer")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	f := "labs/idempotent-consumer/starter/bad.go"
	want := []string{
		f + ":4: imports math/rand, which draws from a random source the seed does not decide",
		f + ":5: imports os, which reaches the operating system: a run must depend on its seed alone",
		f + ":9: imports mqsim/model/broker: a lab's code may import only its lab's package, mqsim/labs/idempotent-consumer",
		f + ":13: seen " + whyGlobal,
		f + ":18: " + whyGo,
		f + ":19: time.Now " + whyClock,
		f + ":22: " + whyChan,
		f + ":23: " + whyChan,
		f + ":24: " + whyMapIter,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The check reads an in-memory package too, and one without Go files is an error.
func TestDeterminismCheckNeedsFiles(t *testing.T) {
	_, err := CheckFS(fstest.MapFS{"README.md": {Data: []byte("x")}}, "labs/x/starter", "mqsim/labs/x")
	if err == nil || err.Error() != "labs/x/starter: no Go files" {
		t.Errorf("err %v", err)
	}
	ps, err := CheckFS(fstest.MapFS{"a.go": {Data: []byte("package a\n\nfunc f() { select {} }\n")}}, "labs/x/starter", "mqsim/labs/x")
	if err != nil || len(ps) != 1 || ps[0].String() != "labs/x/starter/a.go:3: "+whySelect {
		t.Errorf("%v %v", ps, err)
	}
}
