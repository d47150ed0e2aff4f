package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mqsim/tui"
)

// The replicated-log starter fails at seed 2: mqsim lab shrinks the run, prints what the
// checkers found, writes the scenario, and --tui opens it at the step where it broke:
// the leader acknowledging offset 0 while r2, down, lacks it. The solution passes.
func TestLabReplicatedLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fail.txt")
	out, _, err := run(t, "lab", "replicated-log", "--seeds", "5", "--out", file)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitInvalid {
		t.Fatalf("err %v, want exit %d\n%s", err, exitInvalid, out)
	}
	for _, want := range []string{
		"lab replicated-log, starter code: 5 seeds from 1\n",
		"seed 2 fails (nonlinearizable, inconsistent-offsets, lost-write, nonmonotonic-send); shrinking its 47 commands...\n",
		"  step 335: inconsistent-offsets: offset 0 (index 0) holds 2 values: \"w1-1.4\", \"w1-1.31\"\n",
		"written to " + file + "; step through it where it broke:\n  go run ./cmd/mqsim tui " + file + " --step 335\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(data), "# Lab replicated-log: seed 2 failed (nonlinearizable, inconsistent-offsets, lost-write, nonmonotonic-send), shrunk from 47 to 19 commands.") {
		t.Errorf("%v\n%s", err, data)
	}
	m, err := labTUIModel(context.Background(), file, 335, tui.Options{NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	screen := ansi.Strip(m.WithSize(140, 40).Render())
	if !regexp.MustCompile(`▶\s+337\s+\S+\s+r1\s+replica-ack offset 0 to w1`).MatchString(screen) || !strings.Contains(screen, "r2 ✖ down") {
		t.Errorf("the TUI is not at the acknowledgment of offset 0 with r2 down:\n%s", screen)
	}
	out, _, err = run(t, "lab", "replicated-log", "--seeds", "5", "--solution")
	if err != nil || !strings.HasSuffix(out, "all 5 seeds pass: the checker found nothing.\n") {
		t.Errorf("--solution: %v\n%s", err, out)
	}
}
