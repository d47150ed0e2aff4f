package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"mqsim/checker"
	"mqsim/scenarios"
)

func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

func TestRunCatalogScenarioPrintsTranscriptAndHash(t *testing.T) {
	out, _, err := run(t, "run", "kernel-pingpong")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "crash s1\n----\n") || !strings.Contains(out, "\ntrace-hash: ") {
		t.Errorf("transcript missing parts:\n%s", out)
	}
	hash := out[strings.LastIndex(out, "trace-hash: ")+12:]
	if len(strings.TrimSpace(hash)) != 16 {
		t.Errorf("hash %q is not 16 hex digits", hash)
	}
	again, _, _ := run(t, "run", "kernel-pingpong", "-q")
	if !strings.HasSuffix(again, hash) {
		t.Errorf("quiet rerun gave %q, want hash %q", again, hash)
	}
	other, _, _ := run(t, "run", "kernel-pingpong", "-q", "--seed", "2")
	if strings.HasSuffix(other, hash) {
		t.Errorf("seed 2 gave the same hash as seed 1")
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("world\n----\n\nrun for=soon\n----\n"), 0o644)
	unknown := filepath.Join(dir, "unknown.txt")
	os.WriteFile(unknown, []byte("# x\nfrobnicate\n----\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", filepath.Join(dir, "missing.txt")}, `no scenario file or catalogue entry named`},
		{[]string{"run", bad}, "bad.txt:4: run: for=: bad duration \"soon\""},
		{[]string{"run", unknown}, "unknown.txt:2: unknown command \"frobnicate\""},
		{[]string{"run"}, "accepts 1 arg(s), received 0"},
		{[]string{"run", "x", "--frob"}, "unknown flag: --frob"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestListFitsAndGroups: mqsim list fits 80 columns, opens with "Start here" and the
// flagship, and lists every catalogue scenario once, under a topic.
func TestListFitsAndGroups(t *testing.T) {
	for _, args := range [][]string{{"list"}, {"list", "--long"}} {
		out, _, err := run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("%v: line %d is %d columns: %q", args, i+1, n, l)
			}
		}
		if !strings.HasPrefix(out, "Start here: ") || !strings.Contains(out, "Start here: mqsim tui NAME steps through one, mqsim run NAME prints it\n  acks1-leader-crash\n") {
			t.Errorf("%v does not start with the flagship:\n%s", args, out)
		}
		for _, e := range scenarios.Catalog() {
			if n := strings.Count(out, "\n  "+e.Name+"\n"); n != 1 {
				t.Errorf("%v lists %s %d times", args, e.Name, n)
			}
		}
		for _, topic := range []string{"Planted bugs", "Queue brokers", "Transactions", "Consumers and consumer groups", "Kafka's history"} {
			if !strings.Contains(out, "\n\n"+topic) {
				t.Errorf("%v has no topic %q", args, topic)
			}
		}
	}
}

func TestCommandsAndBugsList(t *testing.T) {
	out, _, err := run(t, "commands")
	if err != nil || !strings.Contains(out, "run for=D | until=TIME | steps=N") || !strings.Contains(out, "min-isr") {
		t.Errorf("commands: %v\n%s", err, out)
	}
	out, _, err = run(t, "bugs")
	if err != nil || !strings.Contains(out, "hw-from-leader-only") {
		t.Errorf("bugs: %v\n%s", err, out)
	}
}

// exitCode is the status main would exit with for err.
func exitCode(err error) int {
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	}
	return 2
}

// A run's exported history checks to the same verdict: the scenario's lost write is
// found again from the file alone, and a clean scenario stays clean.
func TestRunHistoryRoundTripsThroughCheck(t *testing.T) {
	dir := t.TempDir()
	lossy := filepath.Join(dir, "lossy.jsonl")
	_, _, err := run(t, "run", "acks1-leader-crash", "-q", "--history", lossy)
	if exitCode(err) != 1 {
		t.Fatalf("run: %v, want exit 1 (the scenario's check finds the loss)", err)
	}
	out, _, err := run(t, "check", lossy)
	if exitCode(err) != 1 || !strings.Contains(out, "violation log lost-write t-0") || !strings.HasPrefix(out, "result: invalid") {
		t.Errorf("check %s: %v, want exit 1 and the lost write:\n%s", lossy, err, out)
	}
	clean := filepath.Join(dir, "clean.jsonl")
	if _, _, err := run(t, "run", "slow-follower-isr", "-q", "--history", clean); err != nil {
		t.Fatalf("run: %v", err)
	}
	out, _, err = run(t, "check", clean)
	if err != nil || !strings.HasPrefix(out, "result: valid (0 violations") {
		t.Errorf("check %s: %v\n%s", clean, err, out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour written to a buffer with --color=auto:\n%q", out)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the directory holds %d files, want the 2 histories (no temporary files left)", len(entries))
	}
}

func TestCheckJSONAndHTML(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h.jsonl")
	run(t, "run", "acks1-leader-crash", "-q", "--history", h)
	html := filepath.Join(dir, "lin.html")
	out, _, err := run(t, "check", h, "--json", "--html", html, "--budget", "5s")
	if exitCode(err) != 1 {
		t.Fatalf("check: %v, want exit 1", err)
	}
	var rep checker.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	if rep.Result != checker.Invalid || rep.Counts[checker.LostWrite] != 1 || rep.Counts[checker.Nonlinearizable] != 1 {
		t.Errorf("JSON report: result %s, counts %v", rep.Result, rep.Counts)
	}
	page, err := os.ReadFile(html)
	if err != nil || !bytes.Contains(page, []byte("<html")) {
		t.Errorf("--html wrote %d bytes (%v)", len(page), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the directory holds %d files, want 2 (no temporary files left)", len(entries))
	}
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":"v"}}`+"\n"+
		`{"index":1,"time":2,"process":1,"type":"ok","f":"send","invoke":0,"value":{"topic":"t","partition":0,"value":"v","offset":"x"}}`+"\n"), 0o644)
	order := filepath.Join(dir, "order.jsonl")
	os.WriteFile(order, []byte(`{"index":0,"time":5,"process":1,"type":"invoke","f":"poll","value":{}}`+"\n\n"+
		`{"index":1,"time":4,"process":1,"type":"ok","f":"poll","invoke":0,"value":{}}`+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", bad}, "bad.jsonl:2: field \"value.offset\""},
		{[]string{"check", order}, "order.jsonl:3: time 4 is before the previous op's time 5"},
		{[]string{"check", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl: no such file"},
		{[]string{"check", bad, "--color", "sometimes"}, "--color=sometimes: want auto, always or never"},
		{[]string{"check"}, "accepts 1 arg(s), received 0"},
	} {
		_, _, err := run(t, tc.args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: exit %d, err %v; want exit 2 and %q", tc.args, exitCode(err), err, tc.want)
		}
	}
	if _, _, err := run(t, "run", "kernel-pingpong", "-q", "--history", filepath.Join(dir, "none.jsonl")); exitCode(err) != 2 ||
		!strings.Contains(err.Error(), "no client history") {
		t.Errorf("--history of a scenario without a cluster: %v", err)
	}
}

func TestColorize(t *testing.T) {
	text := "result: invalid (1 violations, 0 allowed)\nviolation log lost-write t-0 at t=1s: x\nnote log: y\ncounts: lost-write 1\n"
	got := colorize(text)
	for _, want := range []string{ansiRed + ansiBold + "result: invalid", ansiRed + "violation log", ansiFaint + "note log: y" + ansiReset + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("colorize lacks %q:\n%q", want, got)
		}
	}
	if plain := strings.NewReplacer(ansiRed, "", ansiBold, "", ansiFaint, "", ansiReset, "").Replace(got); plain != text {
		t.Errorf("colorize changed the text itself:\n%q", plain)
	}
	var buf bytes.Buffer
	if colorOn(&buf, "auto") || !colorOn(&buf, "always") || colorOn(os.Stdout, "never") {
		t.Error("colorOn: auto must be off for a buffer, always on, never off")
	}
}

// TestOneViolationReadsRight: a run whose checks find one violation says so in the
// singular.
func TestOneViolationReadsRight(t *testing.T) {
	_, _, err := run(t, "run", "acks0-silent-loss", "-q")
	if err == nil || err.Error() != "the checks found 1 violation" {
		t.Errorf("got %v, want: the checks found 1 violation", err)
	}
}

// TestSetErrorsNameTheFlag: a bad --set is reported as the flag the user typed, not as a
// line of a catalogue file they never wrote.
func TestSetErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "acks1-leader-crash", "--set", "acks=bogus"}, "--set: acks=bogus: want 0, 1 or all"},
		{[]string{"run", "acks1-leader-crash", "--set", "foo=1"}, "--set: foo is not a setting of cluster (mqsim commands lists them)"},
		{[]string{"run", "acks1-leader-crash", "--set", "acks"}, `--set: "acks": want KEY=VALUE`},
		{[]string{"run", "rabbit-quorum-leader-crash", "--set", "prefetch=lots"}, "--set: prefetch=lots: want an integer"},
		{[]string{"run", "aborted-read-uncommitted", "--set", "c1.isolation=bogus"}, "catalog/aborted-read-uncommitted.txt:30: consumer (with --set c1.isolation=bogus): isolation=bogus: want read_committed or read_uncommitted"},
		{[]string{"run", "acks1-leader-crash", "--set", "min-isr=5"}, "catalog/acks1-leader-crash.txt:13: cluster (with --set min-isr=5): invalid configuration:\n  min-isr=5 is more than rf=3: no write with acks=all could ever succeed"},
		{[]string{"run", "aborted-read-uncommitted", "--set", "c1.frob=1"}, "--set: c1.frob is not a setting of consumer (mqsim commands lists them)"},
	} {
		_, _, err := run(t, append(c.args, "-q")...)
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: got %v\nwant %s", c.args, err, c.want)
		}
	}
}

// TestRunMarksNarrationUnderSet: with --fix or --set the transcript keeps the file's
// narration, and a note says it was written for the run without those settings.
func TestRunMarksNarrationUnderSet(t *testing.T) {
	_, stderr, _ := run(t, "run", "acks1-leader-crash", "--fix")
	if !strings.Contains(stderr, "note: the narration (# lines) was written for the run without --set acks=all min-isr=2 idempotence=true; the outputs are this run's\n") {
		t.Errorf("stderr: %q", stderr)
	}
	_, stderr, _ = run(t, "run", "acks1-leader-crash")
	if strings.Contains(stderr, "narration") {
		t.Errorf("the unmodified run's narration is marked: %q", stderr)
	}
}
