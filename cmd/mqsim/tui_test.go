package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTUIPrint(t *testing.T) {
	out, _, err := run(t, "tui", "acks1-leader-crash", "--print", "--step", "52", "--width", "80", "--height", "24")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 24 {
		t.Errorf("%d lines, want 24:\n%s", len(lines), out)
	}
	for _, want := range []string{"step 52 / ", "b1 ★ e0", "Explain", "notes/acks.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("--print wrote escape codes")
	}
	// --step is a kernel step, bounded by the last traced one (not by the number of trace
	// events, fewer than the steps in a transactional run); an untraced step shows the
	// next traced one.
	txnRun := filepath.Join(t.TempDir(), "txn.txt")
	if err := os.WriteFile(txnRun, []byte("cluster brokers=3 partitions=1 rf=3 min-isr=2\n----\n\nproducer name=tp transactional-id=tx-1\n----\n\n"+
		"run for=2s\n----\n\nbegin-txn producer=tp\n----\n\nproduce producer=tp values=(a, b)\n----\n\ncommit-txn producer=tp\n----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, "tui", txnRun, "--print", "--step", "150"); err != nil || !strings.Contains(out, "step 156 / 192") {
		t.Errorf("--step 150 of a transactional run: %v\n%s", err, out)
	}
	if _, _, err := run(t, "tui", "no-such-scenario", "--print"); err == nil || !strings.Contains(err.Error(), "no scenario file or catalogue entry") {
		t.Errorf("unknown scenario: %v", err)
	}
	if _, _, err := run(t, "tui", "kernel-pingpong", "--fix", "--print"); err == nil {
		t.Errorf("--fix on a scenario without a fix: no error")
	}
}

// TestTUIBadSetIsAnError: a --set the first command refuses is an error naming the flag,
// not an empty screen.
func TestTUIBadSetIsAnError(t *testing.T) {
	_, _, err := run(t, "tui", "acks1-leader-crash", "--set", "acks=bogus", "--print")
	if err == nil || err.Error() != "--set: acks=bogus: want 0, 1 or all" {
		t.Errorf("got %v, want the --set error", err)
	}
}
