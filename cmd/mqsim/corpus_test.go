package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mqsim/checker"
)

// corpusCase is one hand-made history of checker/testdata/corpus: a header of
// "# " lines (what it shows, derived from a definition; "want:" the verdict;
// optional "args:" flags of mqsim check), then the history itself.
type corpusCase struct {
	name, about string
	args        []string
	body        []byte
	// The verdict: exit status, the anomalies reported as violations and as
	// allowed, and for exit 2 the line (0: none) and words the error names.
	exit               int
	violations, allows []string
	errLine            int
	errText            string
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	paths, err := filepath.Glob("../../checker/testdata/corpus/*.case")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var cases []corpusCase
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := corpusCase{name: strings.TrimSuffix(filepath.Base(p), ".case"), exit: -1}
		for bytes.HasPrefix(data, []byte("# ")) {
			line, rest, _ := bytes.Cut(data, []byte("\n"))
			data = rest
			key, value, _ := strings.Cut(string(line[2:]), ": ")
			switch key {
			case "want":
				c.parseWant(t, value)
			case "args":
				c.args = strings.Fields(value)
			default:
				c.about = string(line[2:])
			}
		}
		if c.exit < 0 || c.about == "" {
			t.Fatalf("%s: the header needs a description and a want: line", p)
		}
		c.body = data
		cases = append(cases, c)
	}
	return cases
}

func (c *corpusCase) parseWant(t *testing.T, want string) {
	words := strings.Fields(want)
	switch words[0] {
	case "valid":
		c.exit = exitValid
	case "invalid":
		c.exit = exitInvalid
	case "unknown":
		c.exit = exitUndecided
	case "error":
		c.exit = exitBadInput
		c.errLine, _ = strconv.Atoi(words[1])
		c.errText = strings.Join(words[2:], " ")
		return
	default:
		t.Fatalf("%s: want %q: expected valid, invalid, unknown or error", c.name, want)
	}
	for _, w := range words[1:] {
		if a, ok := strings.CutPrefix(w, "allowed:"); ok {
			c.allows = append(c.allows, a)
		} else {
			c.violations = append(c.violations, w)
		}
	}
}

// Every case of the corpus gets its verdict from mqsim check, through the
// same path as a user's file: exit status, and the exact set of anomalies
// reported as violations and as allowed; bad input names its line.
func TestCorpus(t *testing.T) {
	cases := loadCorpus(t)
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".jsonl")
			if err := os.WriteFile(path, c.body, 0o644); err != nil {
				t.Fatal(err)
			}
			out, _, err := run(t, append([]string{"check", path, "--json"}, c.args...)...)
			if got := exitCode(err); got != c.exit {
				t.Fatalf("%s\nexit %d (%v), want %d\n%s", c.about, got, err, c.exit, out)
			}
			if c.exit == exitBadInput {
				where := path + ":"
				if c.errLine > 0 {
					where = fmt.Sprintf("%s:%d: ", path, c.errLine)
				}
				if !strings.Contains(err.Error(), c.errText) || (c.errLine > 0 && !strings.Contains(err.Error(), where)) {
					t.Fatalf("%s\nerror %q, want line %d and %q", c.about, err, c.errLine, c.errText)
				}
				return
			}
			var rep checker.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, out)
			}
			if got := anomalyNames(rep.Violations); !slices.Equal(got, sorted(c.violations)) {
				t.Errorf("%s\nviolations %v, want %v\n%s", c.about, got, sorted(c.violations), out)
			}
			if got := anomalyNames(rep.Allowed); !slices.Equal(got, sorted(c.allows)) {
				t.Errorf("%s\nallowed %v, want %v\n%s", c.about, got, sorted(c.allows), out)
			}
		})
	}
	counts := corpusCounts(cases)
	var b strings.Builder
	fmt.Fprintf(&b, "corpus: %d cases\n", len(cases))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "  %-24s %3d found, %3d tricky negatives\n", k, counts[k][0], counts[k][1])
	}
	t.Log(b.String())
	if len(cases) < 100 {
		t.Errorf("the corpus holds %d cases, want at least 100", len(cases))
	}
	for _, a := range checker.Anomalies() {
		if n := counts[string(a)]; n[0] == 0 || n[1] == 0 {
			t.Errorf("anomaly %s: %d cases that find it and %d negatives named after it; want both", a, n[0], n[1])
		}
	}
	if counts["bad-input"][0] < 20 {
		t.Errorf("%d malformed-input cases, want at least 20", counts["bad-input"][0])
	}
}

// corpusCounts counts, per anomaly, the cases that report it (as a violation
// or allowed) and the negatives named after it (NAME-not-... or any case
// named after it that does not report it); malformed files count under
// bad-input, usage errors under usage, plain valid histories under valid.
func corpusCounts(cases []corpusCase) map[string][2]int {
	counts := map[string][2]int{}
	bump := func(k string, i int) { n := counts[k]; n[i]++; counts[k] = n }
	for _, c := range cases {
		switch {
		case strings.HasPrefix(c.name, "bad-"):
			bump("bad-input", 0)
			continue
		case strings.HasPrefix(c.name, "usage-"):
			bump("usage", 0)
			continue
		case strings.HasPrefix(c.name, "mode-"):
			bump("mode", 0)
			continue
		case strings.HasPrefix(c.name, "valid-"):
			bump("valid", 0)
			continue
		}
		reported := append(slices.Clone(c.violations), c.allows...)
		for _, a := range reported {
			bump(a, 0)
		}
		for _, a := range checker.Anomalies() {
			if strings.HasPrefix(c.name, string(a)+"-") && !slices.Contains(reported, string(a)) {
				bump(string(a), 1)
			}
		}
	}
	return counts
}

func anomalyNames(vs []checker.Violation) []string {
	var names []string
	for _, v := range vs {
		names = append(names, string(v.Anomaly))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func sorted(xs []string) []string {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return slices.Compact(ys)
}
