package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mqsim/tui"
)

// mqsim lab lists the labs; a name it does not know is refused with the list.
func TestLabListsAndRefuses(t *testing.T) {
	out, _, err := run(t, "lab")
	if err != nil || !strings.HasPrefix(out, "idempotent-consumer  about 30 min  apply each payment") {
		t.Errorf("mqsim lab: %v\n%s", err, out)
	}
	_, _, err = run(t, "lab", "nope")
	if err == nil || err.Error() != `no lab "nope": the labs are idempotent-consumer, ordered-retries, replicated-log` {
		t.Errorf("err %v", err)
	}
	_, _, err = run(t, "lab", "idempotent-consumer", "--seeds", "0")
	if err == nil || err.Error() != "--seeds 0: want 1 to 1000000" {
		t.Errorf("err %v", err)
	}
}

// The starter fails at seed 2: mqsim lab shrinks the run, prints what the checker found
// and the command that opens the TUI at the step, writes the scenario, and exits 1.
// The solution passes the same seeds.
func TestLabRunsTheStarterAndTheSolution(t *testing.T) {
	checkLab(t, labCase{lab: "idempotent-consumer", seeds: 5, step: 3241, width: 120,
		output: []string{
			"lab idempotent-consumer, starter code: 5 seeds from 1\n",
			"seed 2 fails (double-applied); shrinking its 71 commands...\n",
			"what the checker found:\n  step 3241: double-applied: payment v1",
			"go run ./cmd/mqsim tui FILE --step 3241\n",
		},
		header: "# Lab idempotent-consumer: seed 2 failed (double-applied), shrunk from 71 to 22 commands.",
		// The database's second credit of the payment.
		screen: "the second credit", atStep: func(screen string) bool {
			return strings.Contains(screen, "step 3,241 /") && regexp.MustCompile(`▶\s+3241\s+\S+\s+db\s+db-commit payment v1 from app1`).MatchString(screen)
		}})
}

// labCase is a lab's starter failing within seeds: what mqsim lab prints (FILE stands
// for the scenario it writes), the first line of that scenario, and what the TUI shows
// (described by screen) when --tui opens it at step.
type labCase struct {
	lab    string
	seeds  int
	output []string
	header string
	step   uint64
	width  int
	screen string
	atStep func(screen string) bool
}

// checkLab runs c's starter, which must exit 1 with c's output, write c's scenario and
// open in the TUI where c says, then the solution over the same seeds, which must pass;
// it returns the starter's output.
func checkLab(t *testing.T, c labCase) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fail.txt")
	seeds := strconv.Itoa(c.seeds)
	out, _, err := run(t, "lab", c.lab, "--seeds", seeds, "--out", file)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitInvalid {
		t.Fatalf("err %v, want exit %d\n%s", err, exitInvalid, out)
	}
	for _, want := range append(c.output, "written to "+file+"; step through it where it broke:\n") {
		if want = strings.ReplaceAll(want, "FILE", file); !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(data), c.header) {
		t.Errorf("%v\n%s", err, data)
	}
	m, err := labTUIModel(context.Background(), file, c.step, tui.Options{NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	if screen := ansi.Strip(m.WithSize(c.width, 40).Render()); !c.atStep(screen) {
		t.Errorf("the TUI is not at %s:\n%s", c.screen, screen)
	}
	sol, _, err := run(t, "lab", c.lab, "--seeds", seeds, "--solution")
	if err != nil || !strings.HasSuffix(sol, "all "+seeds+" seeds pass: the checker found nothing.\n") {
		t.Errorf("--solution: %v\n%s", err, sol)
	}
	return out
}

// --code checks the learner's folder where it is, before anything is built: a file that
// starts a goroutine and reads the clock is refused, each line named, exit status 2.
func TestLabCodeRefusesGoroutinesAndTheClock(t *testing.T) {
	dir := t.TempDir()
	src := `package starter

import (
	"time"

	lab "mqsim/labs/idempotent-consumer"
)

func New() lab.Handler { return h{} }

type h struct{}

func (h) Process(tx lab.Tx, p lab.Payment) error {
	go tx.Credit(p.Account, p.Amount, p.ID)
	if time.Since(time.Time{}) > time.Second {
		return nil
	}
	return nil
}
`
	if err := os.WriteFile(filepath.Join(dir, "mine.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "lab", "idempotent-consumer", "--code", dir)
	f := filepath.Join(dir, "mine.go")
	want := "your code breaks the simulation's determinism rules (3 problems):\n" +
		"  " + f + ":14: a go statement starts a goroutine: the simulation runs one event at a time, and a goroutine would run in an order the seed does not decide\n" +
		"  " + f + ":15: time.Since reads or waits on the real clock: the simulation has its own virtual clock, and only time.Duration and its units (time.Second ...) are allowed\n" +
		"  " + f + ":15: time.Time reads or waits on the real clock: the simulation has its own virtual clock, and only time.Duration and its units (time.Second ...) are allowed"
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitBadInput || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
	if _, _, err := run(t, "lab", "idempotent-consumer", "--code", dir, "--solution"); err == nil || !strings.HasPrefix(err.Error(), "--code and --solution: choose one") {
		t.Errorf("--code with --solution: %v", err)
	}
}

// The overlay puts the folder's Go files in place of the starter's and hides the
// starter's others; the module root is found above a subfolder; the child mqsim lab
// gets the same flags.
func TestLabCodeOverlay(t *testing.T) {
	root := t.TempDir()
	starter := filepath.Join(root, "labs", "x", "starter")
	mine := filepath.Join(root, "mine")
	for _, d := range []string{starter, mine} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, data := range map[string]string{
		filepath.Join(root, "go.mod"):           "module mqsim\n\ngo 1.26\n",
		filepath.Join(starter, "starter.go"):    "package starter\n",
		filepath.Join(starter, "helper.go"):     "package starter\n",
		filepath.Join(mine, "helper.go"):        "package starter\n",
		filepath.Join(mine, "solution.go"):      "package starter\n",
		filepath.Join(mine, "solution_test.go"): "package starter\n",
	} {
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := moduleRoot(mine)
	if err != nil || got != root {
		t.Fatalf("moduleRoot %q %v, want %q", got, err, root)
	}
	if _, err := moduleRoot(filepath.Dir(root)); err == nil {
		t.Errorf("found a module root above %s", root)
	}
	overlay, err := codeOverlay(root, "x", mine)
	if err != nil {
		t.Fatal(err)
	}
	var o struct{ Replace map[string]string }
	if err := json.Unmarshal(overlay, &o); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		filepath.Join(starter, "starter.go"):  "",
		filepath.Join(starter, "helper.go"):   filepath.Join(mine, "helper.go"),
		filepath.Join(starter, "solution.go"): filepath.Join(mine, "solution.go"),
	}
	if !maps.Equal(o.Replace, want) {
		t.Errorf("overlay %v, want %v", o.Replace, want)
	}
	args := labChildArgs("x", labFlags{seeds: 7, start: 3, shrinkRuns: 50, openTUI: true, out: "f.txt"})
	if strings.Join(args, " ") != "lab x --seeds 7 --start 3 --shrink-runs 50 --out f.txt --tui" {
		t.Errorf("child args %v", args)
	}
}

// The ordered-retries starter fails at seed 9: a request lost on the network times
// out, and its retry lands after a later record of its key. --tui opens the shrunk run
// where the second of the pair was acknowledged.
func TestLabOrderedRetriesOpensTheReordering(t *testing.T) {
	out := checkLab(t, labCase{lab: "ordered-retries", seeds: 10, step: 276, width: 120,
		output: []string{
			"seed 9 fails (reordered); shrinking its 57 commands...\n",
			"what the checker found:\n  step 276: reordered: process 2 read \"v7\" (t/1@1) before \"v3\" (t/1@3)",
			"--step 276\n",
		},
		header: "# Lab ordered-retries: seed 9 failed (reordered)",
		screen: "the retry of v3 landing after v7", atStep: func(screen string) bool {
			return strings.Contains(screen, "step 276 /") && regexp.MustCompile(`▶\s+276\s+\S+\s+app\s+answer request 9 partition 1 \[v3\]`).MatchString(screen) &&
				strings.Contains(screen, "0:v4 1:v7 2:v8 3:v3")
		}})
	if strings.Contains(out, "nonmonotonic-send") {
		t.Errorf("an allowed finding is listed as a failure:\n%s", out)
	}
}
