package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
)

// A queue scenario's history, written by run --history and read back by check, is
// judged as the scenario's own check command judged the run: the same report, word for
// word, and the same exit status.
func TestQueueRunHistoryRoundTripsThroughCheck(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		flags []string // check's flags matching the scenario's check command
		exit  int
	}{
		{"rabbit-routing", nil, 1},             // two unroutable messages: unseen
		{"rabbit-quorum-leader-crash", nil, 0}, // redelivered, allowed
		{"sqs-visibility-timeout-duplicate", []string{"--promise", "exactly-once"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".jsonl")
			if _, _, err := run(t, "run", tc.name, "-q", "--history", path); exitCode(err) != tc.exit {
				t.Fatalf("run: %v, want exit %d", err, tc.exit)
			}
			out, stderr, err := run(t, append([]string{"check", path}, tc.flags...)...)
			if exitCode(err) != tc.exit {
				t.Fatalf("check: %v, want exit %d\n%s", err, tc.exit, out)
			}
			if !strings.Contains(stderr, "judged in queue mode") {
				t.Errorf("check did not say it recognised a queue history: %q", stderr)
			}
			s, err := scenarios.Load(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(s, runner.Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			reports := res.Runner.Reports()
			if want := reports[len(reports)-1].String(); out != want {
				t.Errorf("check of the written history:\n%s\nthe scenario's own check:\n%s", out, want)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the directory holds %d files, want the 3 histories (no temporary files left)", len(entries))
	}
}

// The file is written whole or not at all: into a directory that does not exist,
// nothing is written and run says why.
func TestQueueRunHistoryIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "missing", "h.jsonl")
	_, _, err := run(t, "run", "rabbit-quorum-leader-crash", "-q", "--history", path)
	if err == nil || !strings.Contains(err.Error(), "--history") {
		t.Fatalf("run: %v, want a --history error", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left %d entries behind", len(entries))
	}
}

// Check's queue-mode flags: --mode forces a mode, --promise and --order belong to queue
// mode, and a log's history keeps the log checkers.
func TestCheckModes(t *testing.T) {
	dir := t.TempDir()
	q := filepath.Join(dir, "q.jsonl")
	run(t, "run", "rabbit-quorum-leader-crash", "-q", "--history", q)
	lg := filepath.Join(dir, "log.jsonl")
	run(t, "run", "acks1-leader-crash", "-q", "--history", lg)
	out, _, err := run(t, "check", q, "--promise", "exactly-once")
	if exitCode(err) != 1 || !strings.Contains(out, "violation queue redelivered orders-0") {
		t.Errorf("--promise exactly-once on redeliveries: %v\n%s", err, out)
	}
	out, stderr, err := run(t, "check", lg)
	if exitCode(err) != 1 || !strings.Contains(out, "violation log lost-write t-0") || strings.Contains(stderr, "queue mode") {
		t.Errorf("a log's history: %v\n%s%s", err, out, stderr)
	}
	out, _, err = run(t, "check", q, "--mode", "log", "--linearizable=false")
	if strings.Contains(out, "note queue:") || strings.Contains(out, "violation queue ") {
		t.Errorf("--mode log still judged in queue mode: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", q, "--mode", "stream"}, "--mode=stream: want auto, log or queue"},
		{[]string{"check", q, "--order", "sorted"}, `--order: order "sorted": want none, key or queue`},
		{[]string{"check", q, "--promise", "never"}, `--promise: promise "never": want at-least-once or exactly-once`},
		{[]string{"check", q, "--live-within", "5s"}, "a queue broker's history has none"},
		{[]string{"check", lg, "--promise", "exactly-once"}, "--promise and --order judge a queue broker's history"},
	} {
		_, _, err := run(t, tc.args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, err %v; want exit 2 and %q", tc.args, exitCode(err), err, tc.want)
		}
	}
}

// mqsim bugs lists the queue broker's bugs too.
func TestBugsListsQueueBrokerBugs(t *testing.T) {
	out, _, err := run(t, "bugs")
	if err != nil || !strings.Contains(out, "queue-broker bugs=(NAME") || !strings.Contains(out, "confirm-before-commit") ||
		!strings.Contains(out, "confirm-on-route") {
		t.Errorf("bugs: %v\n%s", err, out)
	}
}
