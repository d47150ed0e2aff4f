package main

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// mqsim estimate prints the interview's case as read and checked by hand in
// testdata/estimate-1M-1KB-7d.txt (its arithmetic is worked out in estimate's tests),
// within 80 columns.
func TestEstimateTranscript(t *testing.T) {
	want, err := os.ReadFile("testdata/estimate-1M-1KB-7d.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "estimate", "--rate", "1M/s", "--size", "1KB", "--retention", "7d", "--rf", "3")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("mqsim estimate printed\n%s\nwant (testdata/estimate-1M-1KB-7d.txt)\n%s", out, want)
	}
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, n, l)
		}
	}
}

// Bad input is refused with the flag, the value and what is expected; cobra's own
// errors (an unknown flag, a flag with no value, an argument) stay as cobra words them.
func TestEstimateErrors(t *testing.T) {
	base := []string{"estimate", "--rate", "1M/s", "--size", "1KB", "--retention", "7d"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(base, "--rf", "0"), `--rf "0": zero; want a whole number, at least 1`},
		{[]string{"estimate", "--rate", "-5k/s", "--size", "1KB", "--retention", "7d"}, `--rate "-5k/s": negative; want messages per second`},
		{append(base, "--size", "1kb"), `--size "1kb": unknown unit "kb"`},
		{[]string{"estimate", "--rate", "1M/s", "--size", "1KB"}, "--retention is required: how long messages are kept, e.g. 7d or 12h"},
		{append(base, "--partitions", "8"), "unknown flag: --partitions"},
		{append(base, "--nic"), "flag needs an argument: --nic"},
		{append(base, "extra"), `unknown command "extra" for "mqsim estimate"`},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: got %v\nwant %s...", tc.args[1:], err, tc.want)
		}
	}
}

// mqsim --help lists estimate, and its own help names every flag with where its default
// comes from.
func TestEstimateInHelp(t *testing.T) {
	out, _, err := run(t, "--help")
	if err != nil || !strings.Contains(out, "\n  estimate ") {
		t.Errorf("mqsim --help does not list estimate: %v\n%s", err, out)
	}
	out, _, err = run(t, "estimate", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  --cache-window 30s\n      Kafka's docs (ops.html, 6.7 Hardware and OS)", "  --disk-rate 600MB/s\n      Kafka's docs (design.html", "--nic BYTES/S", "--rate RATE"} {
		if !strings.Contains(out, want) {
			t.Errorf("mqsim estimate --help has no %q", want)
		}
	}
}
