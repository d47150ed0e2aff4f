package runner

import (
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/scenarios/script"
)

func runText(t *testing.T, text string) *Result {
	t.Helper()
	s, err := script.Parse("t", text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func anomalies(t *testing.T, res *Result) []checker.Anomaly {
	t.Helper()
	v, ok := res.Runner.Verdict()
	if !ok {
		t.Fatal("no verdict")
	}
	var as []checker.Anomaly
	for _, x := range v.Report.Violations {
		as = append(as, x.Anomaly)
	}
	return as
}

// The diverged and phantom-read checks catch what the legacy scenarios plant, and the
// verdict counts both as failures of a legacy mode.
func TestConvergenceChecksCatchTheLegacyScenarios(t *testing.T) {
	for name, want := range map[string]checker.Anomaly{
		"kafka6361-fast-double-failover": cluster.Diverged,
		"kafka15583-hw-below-min-isr":    cluster.PhantomRead,
	} {
		res, err := Run(loadCatalogue(t, name), Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := res.Runner.Verdict()
		failures, _ := v.Classify()
		if got := anomalies(t, res); !slices.Equal(got, []checker.Anomaly{want}) || !slices.Contains(failures, want) {
			t.Errorf("%s: anomalies %v, failures %v; want exactly %s, as a failure", name, got, failures, want)
		}
	}
}

// A legacy switch allows nothing: its losses are the bug the fix removed.
func TestLegacySwitchesAllowNothing(t *testing.T) {
	for _, f := range proto.LegacyFixes {
		cfg := proto.DefaultConfig()
		cfg.Topic.MinInsyncReplicas = 2
		cfg.Broker.Log.Flush = wal.FlushEveryBatch
		if err := f.Set(&cfg, f.Old); err != nil {
			t.Fatal(err)
		}
		if allowed := Unpromised(cfg); len(allowed) != 0 {
			t.Errorf("%s=%s allows %v", f.Key, f.Old, allowed)
		}
	}
}

// When every replica of a partition was down at once under a flush policy that leaves
// writes in the page cache, the verdict says so in a note, and counts nothing for it.
func TestAllReplicasDownIsANote(t *testing.T) {
	script := func(flush string) string {
		return "cluster brokers=3 rf=3 flush=" + flush + "\n----\n\nproduce value=a\n----\n\ncrash b1 b2 b3\n----\n\nrun for=1s\n----\n\n" +
			"restart b1 b2 b3\n----\n\nrun for=5s\n----\n\nconsume\n----\n\ncheck\n----\n"
	}
	res := runText(t, script("never"))
	if !strings.Contains(res.Transcript, "note invariant: t/0: every replica was down at once") {
		t.Errorf("flush=never: no note that every replica was down:\n%s", res.Transcript)
	}
	res = runText(t, script("every-batch"))
	if strings.Contains(res.Transcript, "every replica was down") || res.Violations != 0 {
		t.Errorf("flush=every-batch: %d violations, and a note though nothing was at risk:\n%s", res.Violations, res.Transcript)
	}
}
