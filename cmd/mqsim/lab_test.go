package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mqsim lab lists the labs; a name it does not know is refused with the list.
func TestLabListsAndRefuses(t *testing.T) {
	out, _, err := run(t, "lab")
	if err != nil || !strings.HasPrefix(out, "idempotent-consumer  about 30 min  apply each payment") {
		t.Errorf("mqsim lab: %v\n%s", err, out)
	}
	_, _, err = run(t, "lab", "nope")
	if err == nil || err.Error() != `no lab "nope": the labs are idempotent-consumer` {
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
	file := filepath.Join(t.TempDir(), "fail.txt")
	out, _, err := run(t, "lab", "idempotent-consumer", "--seeds", "5", "--out", file)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitInvalid {
		t.Fatalf("err %v, want exit %d\n%s", err, exitInvalid, out)
	}
	for _, want := range []string{
		"lab idempotent-consumer, starter code: 5 seeds from 1\n",
		"seed 2 fails (double-applied); shrinking its 71 commands...\n",
		"what the checker found:\n  step 3241: double-applied: payment v1",
		"written to " + file + "; step through it where it broke:\n  go run ./cmd/mqsim tui " + file + " --step 3241\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil || !strings.HasPrefix(string(data), "# Lab idempotent-consumer: seed 2 failed (double-applied), shrunk from 71 to 22 commands.") {
		t.Errorf("%v\n%s", err, data)
	}
	out, _, err = run(t, "lab", "idempotent-consumer", "--seeds", "5", "--solution")
	if err != nil || !strings.HasSuffix(out, "all 5 seeds pass: the checker found nothing.\n") {
		t.Errorf("--solution: %v\n%s", err, out)
	}
}
