package runner

import (
	"testing"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/scenarios"
)

// The acknowledged write the modern broker lost: an AlterPartition answer and two
// metadata pushes lost, a resend answered INVALID_UPDATE_VERSION. A leader that forgets
// its pending ISR change then (the planted bug) acknowledges a write the controller's
// new ISR member lacks, and a clean election loses it; one that stays pending, as Kafka's
// Partition.handleAlterPartitionError does, loses nothing.
func TestAlterPartitionErrorKeepsThePendingISR(t *testing.T) {
	s, err := scenarios.Load("bug-alter-partition-forgets-pending")
	if err != nil {
		t.Fatal(err)
	}
	counts := func(set []string) map[checker.Anomaly]int {
		res, err := Run(s, Options{Set: set}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := res.Runner.Verdict()
		if !ok {
			t.Fatal("no verdict")
		}
		return v.Report.Counts
	}
	if got := counts(nil); got[cluster.ISRBehindHW] != 1 || got[cluster.LeaderIncomplete] != 1 || got["unseen"] != 1 {
		t.Errorf("with the bug: counts %v, want isr-behind-hw 1, leader-incomplete 1 and unseen 1", got)
	}
	if got := counts([]string{"bugs=()"}); len(got) != 0 {
		t.Errorf("with the fix: counts %v, want none", got)
	}
}
