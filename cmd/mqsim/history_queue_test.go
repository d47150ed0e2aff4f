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
			// The file's header names the queue broker, so check needs no --mode; the
			// same ops without it prove nothing either way, and check asks.
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			header, ops, _ := strings.Cut(string(data), "\n")
			if header != `{"system":"queue"}` {
				t.Fatalf("first line %s, want the queue broker's header", header)
			}
			foreign := filepath.Join(t.TempDir(), "foreign.jsonl")
			if err := os.WriteFile(foreign, []byte(ops), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := run(t, "check", foreign); exitCode(err) != 2 || !strings.Contains(err.Error(), "--mode queue") {
				t.Errorf("check without header or --mode: %v, want exit 2 asking for --mode", err)
			}
			if out, _, err := run(t, append([]string{"check", foreign, "--mode", "queue"}, tc.flags...)...); exitCode(err) != tc.exit {
				t.Errorf("check --mode queue without header: %v, want exit %d\n%s", err, tc.exit, out)
			}
			out, _, err := run(t, append([]string{"check", path}, tc.flags...)...)
			if exitCode(err) != tc.exit {
				t.Fatalf("check: %v, want exit %d\n%s", err, tc.exit, out)
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
			if want := reports[len(reports)-1].WithoutSteps().String(); out != want { // a history file has no steps
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
	out, _, err := run(t, "check", q) // the header says queue
	if exitCode(err) != 0 || !strings.Contains(out, "note queue:") {
		t.Errorf("a queue broker's history without --mode: %v\n%s", err, out)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, []byte("\n"), 0o644)
	if out, _, err := run(t, "check", empty); exitCode(err) != 2 || !strings.Contains(err.Error(), "no operations") || strings.Contains(out, "valid") {
		t.Errorf("an empty history: %v\n%s; want exit 2, no operations", err, out)
	}
	out, _, err = run(t, "check", q, "--mode", "queue", "--promise", "exactly-once")
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
		{[]string{"check", q, "--mode", "queue", "--order", "sorted"}, `--order: order "sorted": want none, key or queue`},
		{[]string{"check", q, "--mode", "queue", "--promise", "never"}, `--promise: promise "never": want at-least-once or exactly-once`},
		{[]string{"check", q, "--mode", "queue", "--live-within", "5s"}, "a queue broker's history has none"},
		{[]string{"check", q, "--mode", "queue", "--ack-within", "5s"}, "a queue broker's history has none"},
		{[]string{"check", lg, "--order", "key"}, "--order judges a queue broker's history"},
		{[]string{"check", lg, "--promise", "never"}, `--promise: promise "never"`},
		{[]string{"check", lg, "--allow", "poll-skipp"}, `--allow: anomaly "poll-skipp": no checker reports it`},
		{[]string{"check", lg, "--budget", "-1s"}, "--budget=-1s: want a duration of 0 or more"},
		{[]string{"check", lg, "--live-within", "-1s"}, "--live-within=-1s"},
		{[]string{"check", lg, "--healed-at", "-1s"}, "--healed-at=-1s"},
		{[]string{"check", lg, "--memory-budget", "0"}, "--memory-budget=0"},
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
