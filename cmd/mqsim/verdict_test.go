package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/export"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/tui"
)

// finding is one violation as a view shows it: what, where, from which step.
type finding struct {
	anomaly checker.Anomaly
	subject string
	step    uint64
}

func (f finding) String() string { return fmt.Sprintf("%s %s@%d", f.anomaly, f.subject, f.step) }

func findingOf(v checker.Violation, step uint64) finding {
	return finding{v.Anomaly, fmt.Sprintf("%s-%d", v.Topic, v.Partition), step}
}

// disagreements compares what each view shows (view name -> its findings) with the first
// view's, finding by finding (order aside), and says where they differ.
func disagreements(views [][]finding, names []string) []string {
	sorted := func(fs []finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.String())
		}
		slices.Sort(out)
		return out
	}
	var out []string
	want := sorted(views[0])
	for i := 1; i < len(views); i++ {
		if got := sorted(views[i]); !slices.Equal(got, want) {
			out = append(out, fmt.Sprintf("%s shows [%s], %s shows [%s]", names[i], strings.Join(got, ", "), names[0], strings.Join(want, ", ")))
		}
	}
	return out
}

// views runs one catalogue scenario at one seed and reads the verdict as each view shows
// it: the scenario's last check, the TUI's Checks pane (the step each one names and the
// event c jumps to), mqsim export's violation marks, and mqsim run's exit status and count.
func views(t *testing.T, name string, seed uint64) (found [][]finding, names []string) {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	opts := runner.Options{Seed: seed, SeedSet: true}
	res, err := runner.Run(s, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	var check []finding
	if reps := res.Runner.Reports(); len(reps) > 0 {
		for _, v := range reps[len(reps)-1].Violations {
			check = append(check, findingOf(v, v.Step))
		}
	}
	tr, err := tui.Record("main", s, opts)
	if err != nil {
		t.Fatal(err)
	}
	var pane []finding
	for _, c := range tr.Checks {
		step := c.V.Step
		if c.Event >= 0 && tr.Events[c.Event].Step < step {
			step = tr.Events[c.Event].Step // c would land before the step it names
		}
		pane = append(pane, findingOf(c.V, step))
	}
	ex, err := export.Record(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	var marks []finding
	for _, mk := range ex.Marks() {
		step := mk.V.Step
		if mk.Event >= 0 && ex.Events[mk.Event].Step < step {
			step = ex.Events[mk.Event].Step
		}
		marks = append(marks, findingOf(mk.V, step))
	}
	// mqsim run: exit status 1 with the count of the verdict's violations, or success.
	_, _, runErr := run(t, "run", name, "-q", "--seed", fmt.Sprint(seed))
	var ee exitError
	switch {
	case runErr == nil && len(check) > 0:
		t.Errorf("%s seed %d: mqsim run succeeds, the check finds %d violations", name, seed, len(check))
	case runErr != nil && (!errors.As(runErr, &ee) || ee.code != 1 || !strings.Contains(runErr.Error(), "found "+count(len(check), "violation"))):
		t.Errorf("%s seed %d: mqsim run: %v; the check finds %d violations", name, seed, runErr, len(check))
	}
	return [][]finding{check, pane, marks}, []string{"the scenario's check", "the TUI's Checks pane", "mqsim export's marks"}
}

// Every view of a run shows its one verdict: for every catalogue scenario at seeds 1-3,
// the scenario's last check, the TUI's Checks pane, mqsim export's violation marks and
// mqsim run's exit status agree, anomaly by anomaly and step by step.
func TestViewsShowOneVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the catalogue four ways at three seeds")
	}
	judged := 0
	for _, e := range scenarios.Catalog() {
		for seed := uint64(1); seed <= 3; seed++ {
			found, names := views(t, e.Name, seed)
			for _, d := range disagreements(found, names) {
				t.Errorf("%s seed %d: %s", e.Name, seed, d)
			}
			if len(found[0]) > 0 {
				judged++
			}
		}
	}
	if judged < 30 {
		t.Errorf("only %d runs found violations: the comparison compared little", judged)
	}
}

// The comparison catches two views that judge with different options: the TUI judged
// tag-filtering with empty checker options, which do not know that a consumer filtering
// by tag skips offsets on purpose, and saw violations the scenario's check does not.
func TestDisagreementsCatchADifferentJudge(t *testing.T) {
	s, err := scenarios.Load("tag-filtering")
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(s, runner.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := res.Runner.Verdict()
	if !ok {
		t.Fatal("no verdict")
	}
	var verdict, emptyOptions []finding
	for _, x := range v.Report.Violations {
		verdict = append(verdict, findingOf(x, x.Step))
	}
	rep, err := checker.Check(res.Runner.System().History(), checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rep.Violations {
		emptyOptions = append(emptyOptions, findingOf(x, x.Step))
	}
	d := disagreements([][]finding{verdict, emptyOptions}, []string{"the verdict", "a judge with empty options"})
	if len(d) != 1 || !strings.Contains(d[0], "poll-skip") {
		t.Errorf("disagreements: %q; want one naming poll-skip", d)
	}
	if len(disagreements([][]finding{verdict, verdict}, []string{"a", "b"})) != 0 {
		t.Errorf("a verdict disagrees with itself")
	}
}
