package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tourQuote is a line the README's tour quotes from what a step's commands print: the
// text as the README has it, and what the output must match (the quote itself when
// Output is empty).
type tourQuote struct {
	Step   int
	README string
	Output string // a regular expression, when the README paraphrases a table's row
}

var tourQuotes = []tourQuote{
	{1, "`lost: ok t/0@1`", ""},
	{1, "`after: ok t/0@1`", ""},
	{1, "`election`", ""},
	{1, "`lost-write`", ""},
	{1, "`mqsim: the checks found 3 violations`", ""},
	{2, "`ack t/0: offset 1 to p1 (acks=1, HW 1)`", ""},
	{3, "the check reports a `duplicate`", `violation \(duplicate\)`},
	{4, "the safe configuration: 0 failed", `(?m)^failed +0$`},
	{4, "a file under `swarm-failures/`", `-> swarm-failures/seed-\d+\.txt`},
	{4, "`seed 10: isr-behind-hw -> swarm-failures/seed-10.txt (10 commands, shrunk from 98)`", ""},
	{5, "(for seed 10, `mqsim: the checks found 1 violation`)", "mqsim: the checks found 1 violation"},
}

// TestReadmeTour runs every command of the README's ten-minute tour, in order, in an
// empty directory (the TUI's with --print), and finds in each step's output every line
// the tour quotes from it; "mqsim run" of the fix exits 0 as the tour says, the others
// as the tour says too. A tour that is no longer true fails here.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two swarms")
	}
	text, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(text)
	start, end := strings.Index(readme, "## A ten-minute tour"), strings.Index(readme, "## Running scenarios")
	if start < 0 || end < start {
		t.Fatal("README.md has no tour section")
	}
	tour := readme[start:end]
	steps := regexp.MustCompile(`(?m)^\*\*(\d)\. `).FindAllStringSubmatchIndex(tour, -1)
	if len(steps) != 5 {
		t.Fatalf("the tour has %d numbered steps, want 5", len(steps))
	}
	for _, q := range tourQuotes {
		if !strings.Contains(tour, q.README) {
			t.Errorf("the tour no longer says %q", q.README)
		}
	}
	seed := regexp.MustCompile("`seed (\\d+): ").FindStringSubmatch(tour)
	if seed == nil {
		t.Fatal("step 5 quotes no seed line")
	}
	t.Chdir(t.TempDir())
	// The commands: the lines of the code blocks, and those quoted in the prose with
	// their arguments (`mqsim tui acks1-leader-crash --print --step 51`).
	block := regexp.MustCompile("(?s)```\n(.*?)```|`(mqsim [^`]+ [^`]+ [^`]+)`")
	outputs := map[int]string{}
	ran := 0
	for i, s := range steps {
		step := int(tour[s[2]] - '0')
		body := tour[s[0]:]
		if i+1 < len(steps) {
			body = tour[s[0]:steps[i+1][0]]
		}
		for _, b := range block.FindAllStringSubmatch(body, -1) {
			for _, line := range strings.Split(b[1]+b[2], "\n") {
				line, _, _ = strings.Cut(line, "#")
				line = strings.ReplaceAll(line, "seed-N.txt", "seed-"+seed[1]+".txt")
				args := strings.Fields(strings.ReplaceAll(line, "/tmp/", "")) // into the test's directory
				if len(args) == 0 {
					continue
				}
				if args[0] != "mqsim" {
					t.Fatalf("step %d: %q is not an mqsim command", step, line)
				}
				args = args[1:]
				if args[0] == "tui" && !strings.Contains(line, "--print") {
					args = append(args, "--print")
				}
				stdout, stderr, err := run(t, args...)
				outputs[step] += stdout + stderr
				if err != nil {
					outputs[step] += "mqsim: " + err.Error() + "\n"
				}
				ran++
				checkTourExit(t, step, args, err)
			}
		}
	}
	if ran < 8 {
		t.Errorf("ran %d commands of the tour", ran)
	}
	for _, q := range tourQuotes {
		want := q.Output
		if want == "" {
			want = regexp.QuoteMeta(strings.Trim(q.README, "`"))
		}
		if !regexp.MustCompile(want).MatchString(outputs[q.Step]) {
			t.Errorf("step %d's commands do not print %s:\n%s", q.Step, want, outputs[q.Step])
		}
	}
	if _, err := os.Stat(filepath.Join("swarm-failures", "seed-"+seed[1]+".txt")); err != nil {
		t.Errorf("the swarm wrote no file for the quoted seed: %v", err)
	}
}

// checkTourExit: the tour's runs of the anomalies and its planted-bug swarm exit 1 (the
// anomaly is the lesson), the rest 0.
func checkTourExit(t *testing.T, step int, args []string, err error) {
	t.Helper()
	line := strings.Join(args, " ")
	failing := (args[0] == "run" && !strings.Contains(line, "--fix")) || strings.Contains(line, "--bug")
	var ee exitError
	switch {
	case failing && (!errors.As(err, &ee) || ee.code != 1):
		t.Errorf("step %d: mqsim %s: %v, want exit status 1", step, line, err)
	case !failing && err != nil:
		t.Errorf("step %d: mqsim %s: %v", step, line, err)
	}
}
