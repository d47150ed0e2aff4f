package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSwarmRefusesBadNumbers(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "-1"}, "--workers -1: want 0 (one per CPU) to 1024"},
		{[]string{"--workers", "5000"}, "--workers 5000: want 0 (one per CPU) to 1024"},
		{[]string{"--shrink-runs", "-1"}, "--shrink-runs -1: want 0 (write failures as generated) or more"},
		{[]string{"--seeds", "0"}, "--seeds 0: want at least 1"},
		{[]string{"--start", "18446744073709551615", "--seeds", "2"}, "the last seed would pass 18446744073709551615"},
	} {
		_, _, err := run(t, append([]string{"swarm"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.args, err, tc.want)
		}
	}
}

// swarmUntil runs a swarm whose context is cancelled after d, as Ctrl-C or SIGTERM would.
func swarmUntil(t *testing.T, d time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var outb, errb strings.Builder
	root := newRoot(&outb, &errb)
	root.SetArgs(append([]string{"swarm"}, args...))
	start := time.Now()
	err := root.ExecuteContext(ctx)
	if took := time.Since(start); took > d+20*time.Second {
		t.Errorf("stopped %s after the interrupt", took-d)
	}
	return outb.String(), err
}

// TestSwarmOfAllSeedsStreams: 2^63-1 seeds used to be listed before the first ran; they
// are now drawn one at a time, so the swarm starts at once and stops when interrupted.
func TestSwarmOfAllSeedsStreams(t *testing.T) {
	out, err := swarmUntil(t, 2*time.Second, "--seeds", "9223372036854775807", "--workers", "1")
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err %v\n%s", err, out)
	}
	if !strings.Contains(out, "of 9223372036854775807 seeds)") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestInterruptedSwarmWritesWhatItFound: the failing seeds found before the interrupt
// are written to --out (as generated: shrinking stops), and listed in the summary.
func TestInterruptedSwarmWritesWhatItFound(t *testing.T) {
	dir := t.TempDir()
	out, err := swarmUntil(t, 8*time.Second, "--seeds", "100000", "--workers", "1", "--bug", "no-idempotent-dedup", "--out", dir)
	if err == nil {
		t.Fatalf("no error:\n%s", out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seed-*.txt"))
	if !strings.Contains(out, "(interrupted: ") || len(files) == 0 || strings.Count(out, " -> "+dir) != len(files) {
		t.Fatalf("%d files written; summary:\n%s", len(files), out)
	}
	text, _ := os.ReadFile(files[0])
	if !strings.Contains(string(text), "cluster ") {
		t.Errorf("%s:\n%s", files[0], text)
	}
}

// TestSIGTERMInterruptsAsSIGINTDoes: the context of long commands ends on SIGTERM too,
// so a swarm or run killed politely still reports and writes what it has.
func TestSIGTERMInterruptsAsSIGINTDoes(t *testing.T) {
	ctx, stop := interruptible(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not end the context")
	}
}

func TestFlagsOutOfRangeAreRefusedBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "h.jsonl")
	if _, _, err := run(t, "run", "acks1-leader-crash", "-q", "--history", hist); err == nil {
		t.Fatal("acks1-leader-crash should fail its check")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "acks1-leader-crash", "--format", "svg", "-o", dir}, "-o: " + dir + " is a directory: give a file name"},
		{[]string{"export", "acks1-leader-crash", "--format", "svg", "-o", filepath.Join(dir, "no", "x.svg")}, "no directory " + filepath.Join(dir, "no")},
		{[]string{"export", "acks1-leader-crash", "--format", "svg", "--hide", "heartbeet"}, `--hide: no message of type "heartbeet" in this run (types: `},
		{[]string{"export", "acks1-leader-crash", "--format", "porcupine", "--budget", "-1s"}, "--budget -1s: want 0 (no bound) or a positive duration"},
		{[]string{"check", hist, "--budget", "-1s"}, "--budget=-1s: want a duration of 0 or more"},
		{[]string{"check", hist, "--live-within", "-5s"}, "--live-within=-5s: want a duration of 0 or more"},
		{[]string{"check", hist, "--healed-at", "-1ms"}, "--healed-at=-1ms: want a duration of 0 or more"},
		{[]string{"check", hist, "--html", dir}, "--html: " + dir + " is a directory"},
		{[]string{"tui", "--print", "--width", "100000", "--height", "100000"}, "--width 100000 --height 100000: want a width of 20 to 1000 and a height of 5 to 1000"},
		{[]string{"tui", "--print", "--step", "-3"}, "--step -3: want a step number, from 1"},
		{[]string{"tui", "--print", "--step", "100000"}, "--step 100000: the run has 344 kernel steps"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v:\n got %v\nwant %s", tc.args, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir("/"); len(entries) > 0 {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".mqsim-") {
				t.Errorf("a temporary file was left in /: %s", e.Name())
			}
		}
	}
}

// TestRunOfAPausedConsumerEndsWithAnError: mqsim run used to spin for good on a consume of
// a paused consumer.
func TestRunOfAPausedConsumerEndsWithAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pause.txt")
	text := "cluster brokers=3 partitions=2\n----\n\njoin consumer=c2 group=g\n----\n\npause c2\n----\n\nconsume consumer=c2\n----\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "run", path)
	if err == nil || !strings.Contains(err.Error(), "pause.txt:10: consume: c2 is paused") {
		t.Fatalf("err %v", err)
	}
}
