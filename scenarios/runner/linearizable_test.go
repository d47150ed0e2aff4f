package runner

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"mqsim/checker"
	"mqsim/scenarios"
)

// standardWorkload is the 3-broker workload the linearizability check must finish on:
// two producers, a leader crash and restart in the middle, reads from the start.
const standardWorkload = `cluster brokers=3 partitions=2 rf=3 min-isr=2 session-timeout=3s heartbeat=1s request-timeout=2s auto-offset-reset=earliest %s
----

produce producer=p1 count=60 wait=false
----

produce producer=p2 count=60 wait=false
----

run for=300ms
----

crash b1
----

produce producer=p1 count=40 wait=false
----

run for=5s
----

restart b1
----

run for=10s
----

consume
----

check linearizable=true
----
`

func linearizableReport(t *testing.T, settings string) checker.Report {
	t.Helper()
	r := runScript(t, strings.Replace(standardWorkload, "%s", settings, 1), Options{})
	reps := r.Reports()
	if len(reps) != 1 {
		t.Fatalf("%d reports", len(reps))
	}
	return reps[0]
}

// The linearizability check of the standard workload finishes within its budget with a
// verdict (not Unknown), and it is valid for the correct broker.
func TestStandardWorkloadIsLinearizableWithinBudget(t *testing.T) {
	rep := linearizableReport(t, "")
	if rep.Result != checker.Valid {
		t.Fatalf("result %s, want valid within the %s budget:\n%s", rep.Result, linearizableBudget, rep)
	}
	if !hasNote(rep, "linearizability", "in 2 partitions") {
		t.Errorf("the linearizability checker did not judge both partitions:\n%s", rep)
	}
}

// The linearizability checker must catch a planted bug on its own: the catalogue's
// reads-beyond-hw scenario, judged by porcupine, is not linearizable (a consumer read a
// record that the failover then replaced at the same offset).
func TestLinearizabilityCatchesReadsAboveTheHW(t *testing.T) {
	s, err := scenarios.Load("bug-reads-beyond-hw")
	if err != nil {
		t.Fatal(err)
	}
	last := &s.Steps[len(s.Steps)-1]
	if last.Cmd != "check" {
		t.Fatalf("the scenario no longer ends with check: %s", last.Cmd)
	}
	last.Args = append(last.Args, datadriven.CmdArg{Key: "linearizable", Vals: []string{"true"}})
	res, err := Run(s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Runner.Reports()[0]
	if rep.Counts[checker.Nonlinearizable] == 0 {
		t.Errorf("porcupine did not find the history non-linearizable:\n%s", rep)
	}
}
