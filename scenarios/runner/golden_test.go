package runner

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cockroachdb/datadriven"
	"mqsim/scenarios"
	"mqsim/scenarios/script"
)

// runFile runs a scenario file as a datadriven golden test; errors become output lines so
// that files under testdata can pin error messages. Steps come from this package's own
// parser, matched one to one with datadriven's directives, so positions and narration are
// the ones `mqsim run` reports.
func runFile(t *testing.T, path string) *Runner {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	script, err := script.Parse(filepath.Base(path), string(text))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{})
	next := 0
	datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
		if next >= len(script.Steps) || script.Steps[next].Cmd != d.Cmd {
			t.Fatalf("%s: parsers disagree at directive %d (%s)", d.Pos, next, d.Cmd)
		}
		step := script.Steps[next]
		next++
		out, err := r.Exec(step)
		if err != nil {
			return "error: " + err.Error()
		}
		return out
	})
	return r
}

// Every catalogue scenario is a golden test of the runner (go test ./scenarios/runner
// -rewrite refreshes the catalogue's outputs for review).
func TestCatalog(t *testing.T) {
	datadriven.Walk(t, "../catalog", func(t *testing.T, path string) { runFile(t, path) })
}

// Files under testdata pin behaviour of the harness itself, errors included.
func TestHarness(t *testing.T) {
	datadriven.Walk(t, "testdata/harness", func(t *testing.T, path string) { runFile(t, path) })
}

// Every catalogue scenario gives the same hash three times in a row and with one CPU.
func TestCatalogIsDeterministic(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			t.Fatal(err)
		}
		var first string
		for i := 0; i < 4; i++ {
			if i == 3 {
				prev := runtime.GOMAXPROCS(1)
				defer runtime.GOMAXPROCS(prev)
			}
			res, err := Run(s, Options{}, nil)
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			if i == 0 {
				first = res.Hash
			} else if res.Hash != first {
				t.Fatalf("%s: run %d hash %s, first %s", e.Name, i+1, res.Hash, first)
			}
		}
	}
}

// A scenario that names a fix must show its anomaly as written and none with the fix.
func TestCatalogFixesRemoveTheAnomaly(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Fix) == 0 {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			res, err := Run(s, Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The anomaly is a violation, or one the settings allow and the checker
			// reports as allowed (a read_uncommitted poll's aborted read): then the fix
			// must remove that too.
			allowedOnly := res.Violations == 0 && allowedFindings(res) > 0
			if res.Violations == 0 && !allowedOnly {
				t.Errorf("as written, the checks find nothing; the scenario should show its anomaly")
			}
			fixed, err := Run(s, Options{Set: s.Fix}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fixed.Violations != 0 {
				t.Errorf("with the fix %v the checks still find %d violations:\n%s", s.Fix, fixed.Violations, fixed.Transcript)
			}
			if allowedOnly && allowedFindings(fixed) != 0 {
				t.Errorf("with the fix %v the checks still find %d allowed anomalies:\n%s", s.Fix, allowedFindings(fixed), fixed.Transcript)
			}
		})
	}
}

// allowedFindings counts the anomalies a run's verdict found and allowed.
func allowedFindings(res *Result) int {
	v, ok := res.Runner.Verdict()
	if !ok {
		return 0
	}
	return len(v.Report.Allowed)
}
