package runner

import (
	"testing"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/scenarios/script"
)

// What a configuration promises follows its settings: the safe one promises everything,
// acks=1 not to keep acknowledged writes, no idempotence not to prevent duplicates.
func TestUnpromisedFollowsTheSettings(t *testing.T) {
	safe := proto.DefaultConfig()
	safe.Producer.Acks, safe.Producer.Idempotence = proto.AcksAll, true
	safe.Topic.MinInsyncReplicas, safe.Broker.Log.Flush = 2, wal.FlushEveryBatch
	if a := Unpromised(safe); len(a) != 0 {
		t.Errorf("the safe settings allow %v", a)
	}
	lossy := safe
	lossy.Producer.Acks, lossy.Producer.Idempotence = proto.AcksLeader, false
	a := Unpromised(lossy)
	for _, want := range []checker.Anomaly{checker.LostWrite, checker.Undelivered, checker.Duplicate, cluster.DoubleOwnership} {
		if !a[want] {
			t.Errorf("acks=1 does not allow %s", want)
		}
	}
	noIdem := safe
	noIdem.Producer.Idempotence = false
	if a := Unpromised(noIdem); !a[checker.Duplicate] || a[checker.LostWrite] {
		t.Errorf("acks=all without idempotence allows %v, want duplicates and no loss", a)
	}
}

// A command registered from outside (a lab's) adds its judge to the run's one verdict:
// the check command, and the verdict of a run without one, both show what it found.
func TestAddedJudgeJoinsTheVerdict(t *testing.T) {
	Register(&Command{Name: "plant-finding", Usage: "plant-finding", Help: "test only", Run: func(r *Runner, a *Args) (string, error) {
		r.AddJudge(func() checker.Report {
			return checker.Collect([]checker.Violation{{Checker: "planted", Anomaly: "planted-anomaly", Time: 1, Text: "planted"}}, nil)
		})
		return "planted", nil
	}})
	s, err := script.Parse("planted", "cluster brokers=1 partitions=1 rf=1 min-isr=1\n----\n\nplant-finding\n----\n\n")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := res.Runner.Verdict()
	failures, _ := v.Classify()
	if !ok || len(v.Report.Violations) != 1 || v.Report.Violations[0].Checker != "planted" || len(failures) != 1 || failures[0] != "planted-anomaly" {
		t.Errorf("verdict %+v, failures %v", v.Report.Violations, failures)
	}
}
