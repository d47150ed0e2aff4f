package labs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	lab "mqsim/labs/replicated-log"
	"mqsim/labs/replicated-log/solution"
)

// The starter acknowledges an append on the leader's own write and serves reads up to
// its log's end: the swarm finds, within 200 seeds (seed 2), a failover to a replica
// that lacked acknowledged entries, whose offsets then hold other values; the shrinker
// makes that run small.
func TestReplicatedLogStarterFailsWithin200Seeds(t *testing.T) {
	starterCaught(t, "replicated-log", 2, "inconsistent-offsets, lost-write and nonlinearizable", func(fs []checker.Anomaly) bool {
		return slices.Contains(fs, checker.InconsistentOffsets) && slices.Contains(fs, checker.LostWrite) && slices.Contains(fs, checker.Nonlinearizable)
	}, "")
}

// The reference solution passes. go test runs 200 seeds; make labs runs 2,000.
func TestReplicatedLogSolutionPasses(t *testing.T) { solutionPasses(t, "replicated-log") }

// readsToLEO is the solution with the other beginner's mistake: it acknowledges at the
// HW but lets readers read up to its log's end, entries a failover may take back.
type readsToLEO struct {
	lab.Replica
	leader string
}

func (r *readsToLEO) Role(env lab.Env, epoch int64, leader string) {
	r.leader = leader
	r.Replica.Role(env, epoch, leader)
}

func (r *readsToLEO) Read(env lab.Env, req lab.Request, offset int64) {
	if r.leader != env.Self() || offset < 0 || offset >= env.Log().Len() {
		env.Refuse(req, r.leader)
		return
	}
	env.Give(req, env.Log().At(offset).Value)
}

// Reading beyond the HW fails within 200 seeds too: a reader sees an entry that the next
// leader's log does not hold.
func TestReplicatedLogReadsBeyondTheHWFail(t *testing.T) {
	l, _ := Find("replicated-log")
	replicas["reads-to-leo"] = func() lab.Replica { return &readsToLEO{Replica: solution.New()} }
	defer delete(replicas, "reads-to-leo")
	res := firstFailing(l, "reads-to-leo")
	if res.Seed != 2 || res.Err != nil || !slices.Contains(res.Failures, checker.InconsistentOffsets) {
		t.Errorf("first failing seed %d with %v (err %v), want seed 2 with inconsistent-offsets", res.Seed, res.Failures, res.Err)
	}
}

// The determinism check applies to this lab's code as to the first lab's: a starter that
// keeps its followers in a package-level map, ranges over it and reads the clock is
// refused, each line named.
func TestReplicatedLogDeterminismCheck(t *testing.T) {
	dir := t.TempDir()
	bad := `package starter

import (
	"time"

	lab "mqsim/labs/replicated-log"
)

var acked = map[string]int64{}

func highWatermark(env lab.Env) int64 {
	hw := env.Log().Len()
	for _, off := range acked {
		hw = min(hw, off)
	}
	_ = time.Now()
	return hw
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := CheckFS(os.DirFS(dir), "labs/replicated-log/starter", "mqsim/labs/replicated-log")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	f := "labs/replicated-log/starter/bad.go"
	want := []string{
		f + ":9: acked " + whyGlobal,
		f + ":13: " + whyMapIter,
		f + ":16: time.Now " + whyClock,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The lab's own starter and solution pass it (TestLabCodeKeepsTheRules checks every lab).
	if ps, err := replicatedLog.Check(Starter); err != nil || len(ps) > 0 {
		t.Errorf("starter: %v %v", err, ps)
	}
}
