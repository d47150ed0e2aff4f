package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"mqsim/model/controller"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
)

// TestGoldenMetricsPane: key 7 shows the Metrics pane; at the election in
// acks1-leader-crash it puts first what the step changed (t/0 under-replicated, marked as
// an alert; one election in the window) and says so in its title.
func TestGoldenMetricsPane(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	elect := findData[controller.LeaderElected](t, r, 0, "ctl")
	m := sized(New(r, Options{}), 120, 40).At(elect)
	if strings.Contains(frameText(m), "── Metrics") {
		t.Fatal("the Metrics pane shows before 7 is pressed")
	}
	m = press(t, m, "7")
	out := frameText(m)
	checkFrame(t, out, 120, 40)
	for _, want := range []string{
		"── Metrics · 3 changed at step 76, 1 alert · rates over 10s",
		"▲ LeaderElectionRate           cluster  0.1 (was 0)",
		"▲ UnderReplicated              t/0      1 (was 0) ✖ alert",
		"▼ InSyncReplicasCount          t/0      2 (was 3)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the frame:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// With its fix (min.insync.replicas=2), acks1-leader-crash's partition makes b1 shrink
// the ISR to itself once its followers lag for replica.lag.time.max.ms: at that step the
// pane shows b1's UnderMinIsrPartitionCount rising to 1 with an alert, and IsrShrinksPerSec.
func TestMetricsPaneShowsTheShrink(t *testing.T) {
	s, err := scenarios.Load("acks1-leader-crash")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record("main", s, runner.Options{Set: s.Fix})
	if err != nil {
		t.Fatal(err)
	}
	shrink := -1
	for i, e := range r.Events {
		if d, ok := e.Data.(controller.ISRChanged); ok && len(d.After) < len(d.Before) {
			shrink = i
			break
		}
	}
	if shrink < 0 {
		t.Fatal("no ISR shrink")
	}
	m := press(t, sized(New(r, Options{}), 120, 40).At(shrink), "7")
	out := frameText(m)
	for _, want := range []string{
		"▲ UnderMinIsrPartitionCount    b1       1 (was 0) ✖ alert",
		"▲ IsrShrinksPerSec             b1       0.1 (was 0)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q at the shrink:\n%s", want, out)
		}
	}
	// One event earlier (b1's proposal, not yet accepted) nothing has moved.
	m = m.At(shrink - 1)
	if out := frameText(m); strings.Contains(out, "UnderMinIsrPartitionCount    b1       1") {
		t.Errorf("UnderMinIsr moved before the controller accepted the shrink:\n%s", out)
	}
}

// At the end of hot-partition-skew the Metrics pane ends with the load per partition:
// t/2, which the hottest key hashes to, holds half of the run's records and two thirds of
// the last 10 seconds', the figures show load prints.
func TestGoldenMetricsPaneLoad(t *testing.T) {
	r := record(t, "hot-partition-skew")
	m := press(t, sized(New(r, Options{}), 120, 60).At(r.Len()-1), "7")
	out := frameText(m)
	checkFrame(t, out, 120, 60)
	for _, want := range []string{
		"  Load: records (share), bytes · last 10s",
		"  t/2    b3      305 ( 50%)     2906B ·    203 ( 67%)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the frame:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}
