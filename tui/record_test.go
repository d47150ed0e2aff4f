package tui

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mqsim/checker"
	"mqsim/model/broker"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// record records a catalogue scenario.
func record(t testing.TB, name string) *Run {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record("main", s, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Err != nil {
		t.Fatalf("%s stopped: %v", name, r.Err)
	}
	return r
}

// find is the first event from index from on that has kind, node and detail text.
func find(t testing.TB, r *Run, from int, node, kind, detail string) int {
	t.Helper()
	for i := max(from, 0); i < r.Len(); i++ {
		e := r.Events[i]
		if e.Node == node && e.Kind == kind && strings.Contains(e.Detail, detail) {
			return i
		}
	}
	t.Fatalf("no %s %s event with %q after %d", node, kind, detail, from)
	return -1
}

// TestRecordIsTheRun: recording (with its observer) changes nothing: every catalogue
// scenario gives the trace and hash that runner.Run gives.
func TestRecordIsTheRun(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		t.Run(e.Name, func(t *testing.T) {
			s, err := script.Parse(e.Name, e.Text)
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(s, runner.Options{}, nil)
			if err != nil {
				t.Skipf("the scenario does not run: %v", err)
			}
			r, err := Record("main", s, runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Hash != res.Hash {
				t.Errorf("hash %s, runner.Run gives %s", r.Hash, res.Hash)
			}
			want := res.Runner.World().Trace().Events()
			if !reflect.DeepEqual(r.Events, want) {
				t.Errorf("recorded %d events, the run has %d (or they differ)", len(r.Events), len(want))
			}
			if r.Transcript() != res.Transcript {
				t.Errorf("the recorded transcript differs from the run's")
			}
		})
	}
}

// TestStateAtIsAFold: the state rebuilt from a checkpoint at any event, in any order,
// equals the state folded event by event from the start.
func TestStateAtIsAFold(t *testing.T) {
	for _, name := range []string{"acks1-leader-crash", "kernel-pingpong", "unclean-election-offset-reuse"} {
		t.Run(name, func(t *testing.T) {
			r := record(t, name)
			var s State
			folded := make([]State, r.Len())
			for i := 0; i < r.Len(); i++ {
				for _, c := range r.changes[r.chStart[i]:r.chStart[i+1]] {
					s.apply(c)
				}
				folded[i] = s.Clone()
			}
			for _, i := range []int{r.Len() - 1, 0, r.Len() / 2, 1, r.Len() - 2, CheckpointEvery - 1, CheckpointEvery, CheckpointEvery + 1} {
				if i < 0 || i >= r.Len() {
					continue
				}
				if got := r.StateAt(i); !reflect.DeepEqual(got, folded[i]) {
					t.Fatalf("StateAt(%d) differs from the fold:\n%+v\n%+v", i, got, folded[i])
				}
			}
			for i := r.Len() - 1; i >= 0; i-- {
				if got := r.StateAt(i); !reflect.DeepEqual(got, folded[i]) {
					t.Fatalf("StateAt(%d) differs from the fold", i)
				}
			}
			if !reflect.DeepEqual(r.Final(), folded[r.Len()-1]) {
				t.Errorf("the last state is not the final one")
			}
		})
	}
}

// TestFlagshipStates checks what the view model says at the flagship's key moments.
func TestFlagshipStates(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	replica := func(s State, part, broker int) ReplicaView { return s.Replicas[part*len(r.Brokers)+broker] }

	ack := find(t, r, 0, "b1", "ack", "offset 1 to p1")
	s := r.StateAt(ack)
	b1, b2 := replica(s, 0, 0), replica(s, 0, 1)
	if !b1.Leader || b1.LEO != 2 || b1.HW != 1 || b2.LEO != 1 {
		t.Errorf("after the ack of %q: b1 %+v, b2 %+v", "lost", b1, b2)
	}
	if got := b1.Recs[1].Value; got != "lost" {
		t.Errorf("b1's offset 1 holds %q", got)
	}
	if len(s.Net.Cuts) != 4 {
		t.Errorf("cuts in force: %v", s.Net.Cuts)
	}

	crash := find(t, r, ack, "b1", "crash", "")
	s = r.StateAt(crash)
	if n, _ := s.Node("b1"); n.Status != sim.Down || !replica(s, 0, 0).Down {
		t.Errorf("after the crash b1 is %v", n.Status)
	}
	if s.Parts[0].Leader != "b1" {
		t.Errorf("the controller should not know yet: leader %q", s.Parts[0].Leader)
	}

	elect := find(t, r, crash, "ctl", "election", "")
	s = r.StateAt(elect)
	if p := s.Parts[0]; p.Leader != "b2" || p.Epoch != 1 || !reflect.DeepEqual(p.ISR, []string{"b2", "b3"}) {
		t.Errorf("after the election: %+v", p)
	}

	trunc := find(t, r, elect, "b1", "truncate", "")
	if b1 := replica(r.StateAt(trunc-1), 0, 0); b1.LEO != 2 || b1.Recs[1].Value != "lost" {
		t.Errorf("before the truncation b1 holds %+v", b1)
	}
	if b1 := replica(r.StateAt(trunc), 0, 0); b1.LEO != 1 {
		t.Errorf("after the truncation b1 holds %+v", b1)
	}

	// Within one kernel step the HW moves at the hw event, not before it.
	checked := 0
	for i, e := range r.Events {
		hw, ok := e.Data.(broker.HWAdvanced)
		if !ok || i == 0 || r.Events[i-1].Step != e.Step || r.Events[i-1].Node != e.Node {
			continue
		}
		bi := indexOf(r.Brokers, e.Node)
		if before, after := replica(r.StateAt(i-1), 0, bi).HW, replica(r.StateAt(i), 0, bi).HW; before != hw.From || after != hw.To {
			t.Errorf("event %d %s: HW %d then %d", i, e, before, after)
		}
		checked++
	}
	if checked == 0 {
		t.Error("no hw event shares its step with an earlier event of its broker: nothing checked")
	}

	if len(r.Checks) == 0 {
		t.Fatal("the checkers found nothing")
	}
	for _, c := range r.Checks {
		if c.Event < 0 || r.Events[c.Event].Time < sim.Time(c.V.Time) {
			t.Errorf("check %s placed at %d", c.V.Anomaly, c.Event)
		}
	}
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// The Checks pane shows the invariant the planted bug breaks, under the step mqsim run
// names, and c jumps to that step: in bug-hw-from-leader-only, the leader-incomplete step.
func TestChecksShowThePlantedBugAndCJumpsToIt(t *testing.T) {
	r := record(t, "bug-hw-from-leader-only")
	var inv *checker.Violation
	for _, v := range r.Verdict.Report.Violations {
		if v.Anomaly == "leader-incomplete" {
			inv = &v
			break
		}
	}
	if inv == nil || inv.Step == 0 {
		t.Fatalf("the verdict has no leader-incomplete with a step: %v", r.Verdict.Report.Violations)
	}
	m := sized(New(r, Options{}), 120, 40)
	pane := m.checksPane()
	want := fmt.Sprintf("leader-incomplete t/0 from step %s:", thousands(int(inv.Step)))
	if lines := ansi.Strip(strings.Join(pane.lines, "\n")); !strings.Contains(lines, want) {
		t.Errorf("the Checks pane does not show %q:\n%s", want, lines)
	}
	// c visits the checks in order (isr-behind-hw, broken when the HW passed b2, comes
	// first): press it until it reaches leader-incomplete.
	for range r.Checks {
		if m = press(t, m, "c"); strings.Contains(m.status, "leader-incomplete") {
			break
		}
	}
	if e := r.Events[m.Pos()]; e.Step != inv.Step || (m.Pos() > 0 && r.Events[m.Pos()-1].Step >= inv.Step) {
		t.Errorf("c landed on event %d (step %d, %s %s), want the first event of step %d", m.Pos(), e.Step, e.Node, e.Kind, inv.Step)
	}
}
