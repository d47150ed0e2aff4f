package notes

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"mqsim/estimate"
	"mqsim/export"
	"mqsim/export/page"
	"mqsim/labs"
	"mqsim/scenarios"
	"mqsim/scenarios/compare"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/tui"
)

var update = flag.Bool("update", false, "regenerate the diagram files under diagrams/ (excerpts are never rewritten)")

// note is one Markdown file.
type note struct {
	path  string
	lines []string
}

func readNotes(t *testing.T, dir string) []note {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var notes []note
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		notes = append(notes, note{p, strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")})
	}
	return notes
}

// block is a fenced code block: its info string, the line of its opening fence (from 1)
// and its lines.
type block struct {
	info  string
	line  int
	lines []string
}

func (n note) blocks() ([]block, error) {
	var bs []block
	var cur *block
	for i, l := range n.lines {
		trimmed := strings.TrimSpace(l)
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				cur.lines = append(cur.lines, l)
			}
			continue
		}
		if cur == nil {
			cur = &block{info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1}
			continue
		}
		if trimmed != "```" {
			return nil, fmt.Errorf("%s:%d: a fence that closes a block must be bare ```", n.path, i+1)
		}
		bs = append(bs, *cur)
		cur = nil
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: code block never closed", n.path, cur.line)
	}
	return bs, nil
}

// An excerpt's first line: "$ mqsim run NAME --seed N [--fix] [--set K=V]...".
var reExcerpt = regexp.MustCompile(`^\$ mqsim (\S+)(.*)$`)

// runCommand is a parsed "mqsim run" excerpt command.
type runCommand struct {
	name string
	opts runner.Options
	fix  bool
}

func parseRun(args string) (runCommand, error) {
	words := strings.Fields(args)
	var c runCommand
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--fix":
			c.fix = true
		case (w == "--seed" || w == "--set") && i+1 < len(words):
			i++
			if w == "--set" {
				c.opts.Set = append(c.opts.Set, words[i])
				continue
			}
			seed, err := strconv.ParseUint(words[i], 10, 64)
			if err != nil {
				return c, fmt.Errorf("--seed %s: %v", words[i], err)
			}
			c.opts.Seed, c.opts.SeedSet = seed, true
		case !strings.HasPrefix(w, "-") && c.name == "":
			c.name = w
		default:
			return c, fmt.Errorf("%q: an excerpt's command takes a scenario, --seed N, --fix and --set KEY=VALUE", args)
		}
	}
	if c.name == "" || !c.opts.SeedSet {
		return c, fmt.Errorf("%q: an excerpt names its scenario and pins its seed (--seed N)", args)
	}
	return c, nil
}

// loadScenario loads a catalogue scenario, or a file named from the repository's root as
// the notes name them ("notes/examples/keys.txt"; the tests run in notes/).
func loadScenario(name string) (*script.Script, error) {
	if _, err := os.Stat(name); err != nil {
		if _, err := os.Stat(filepath.Join("..", name)); err == nil {
			return scenarios.Load(filepath.Join("..", name))
		}
	}
	return scenarios.Load(name)
}

var (
	outputsMu sync.Mutex
	outputs   = map[string][]string{}
)

// output runs an excerpt's command once per test binary and returns the lines mqsim run
// prints: the transcript, a blank line, and the trace hash.
func output(cmd string) ([]string, error) {
	outputsMu.Lock()
	defer outputsMu.Unlock()
	if out, ok := outputs[cmd]; ok {
		return out, nil
	}
	c, err := parseRun(cmd)
	if err != nil {
		return nil, err
	}
	s, err := loadScenario(c.name)
	if err != nil {
		return nil, err
	}
	opts := c.opts
	if c.fix {
		if len(s.Fix) == 0 {
			return nil, fmt.Errorf("%s names no fix", c.name)
		}
		opts.Set = append(slices.Clone(s.Fix), opts.Set...)
	}
	res, err := runner.Run(s, opts, nil)
	if err != nil {
		return nil, err
	}
	text := strings.TrimRight(res.Transcript, "\n") + "\n\ntrace-hash: " + res.Hash
	out := strings.Split(text, "\n")
	for i := range out {
		out[i] = strings.TrimRight(out[i], " \t")
	}
	outputs[cmd] = out
	return out, nil
}

// compareLines computes what "mqsim compare WORKLOAD [--seed N]" prints, through the
// command's own compare.Run.
func compareLines(args string) ([]string, error) {
	words := strings.Fields(args)
	name, seed := "orders", uint64(1)
	for i := 0; i < len(words); i++ {
		switch {
		case words[i] == "--seed" && i+1 < len(words):
			n, err := strconv.ParseUint(words[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("--seed %q: %v", words[i+1], err)
			}
			seed = n
			i++
		case !strings.HasPrefix(words[i], "-"):
			name = words[i]
		default:
			return nil, fmt.Errorf("mqsim compare excerpts take a workload and --seed N, not %q", words[i])
		}
	}
	w, err := compare.Find(name)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := compare.Run(&b, w, seed, false); err != nil {
		return nil, err
	}
	out := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i := range out {
		out[i] = strings.TrimRight(out[i], " \t")
	}
	return out, nil
}

// estimateLines computes what "mqsim estimate ARGS" prints, through the same table of
// flags (estimate.Options) and the same parser (estimate.FromFlags) as the command.
func estimateLines(args string) ([]string, error) {
	typed := map[string]string{}
	words := strings.Fields(args)
	for i := 0; i < len(words); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(words[i], "--"), "=")
		known := slices.ContainsFunc(estimate.Options, func(o estimate.Option) bool { return o.Name == name })
		if !strings.HasPrefix(words[i], "--") || !known {
			return nil, fmt.Errorf("mqsim estimate does not take %q", words[i])
		}
		if !hasValue {
			if i+1 == len(words) {
				return nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = words[i]
		}
		typed[name] = value
	}
	in, err := estimate.FromFlags(func(name string) (string, bool) {
		v, ok := typed[name]
		return v, ok
	})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := estimate.Write(&b, in, estimate.Compute(in)); err != nil {
		return nil, err
	}
	out := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i := range out {
		out[i] = strings.TrimRight(out[i], " \t")
	}
	return out, nil
}

// checkExcerpt finds the quoted lines in the command's output: each run of lines between
// "..." elisions together, the runs in order. It returns the first quoted line (its index
// in quoted) that is not where it should be.
func checkExcerpt(out, quoted []string) (int, error) {
	var chunk []string
	var chunkAt []int
	pos := 0
	flush := func() (int, error) {
		if len(chunk) == 0 {
			return 0, nil
		}
		for start := pos; start+len(chunk) <= len(out); start++ {
			if slices.Equal(out[start:start+len(chunk)], chunk) {
				pos = start + len(chunk)
				chunk, chunkAt = nil, nil
				return 0, nil
			}
		}
		// Name the first line of the chunk that breaks it: the longest prefix that does
		// appear after pos tells which.
		bad := 0
		for k := len(chunk); k > 0; k-- {
			found := false
			for start := pos; start+k <= len(out); start++ {
				if slices.Equal(out[start:start+k], chunk[:k]) {
					found = true
					break
				}
			}
			if found {
				bad = k
				break
			}
		}
		if bad == len(chunk) {
			bad = len(chunk) - 1
		}
		return chunkAt[bad], fmt.Errorf("quoted line %q is not in the output where the excerpt puts it", chunk[bad])
	}
	for i, l := range quoted {
		l = strings.TrimRight(l, " \t")
		if l == "..." {
			if at, err := flush(); err != nil {
				return at, err
			}
			continue
		}
		chunk = append(chunk, l)
		chunkAt = append(chunkAt, i)
	}
	return flush()
}

// excerptErrors checks every excerpt of a note.
func excerptErrors(n note) []error {
	bs, err := n.blocks()
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, b := range bs {
		if len(b.lines) == 0 {
			continue
		}
		m := reExcerpt.FindStringSubmatch(strings.TrimSpace(b.lines[0]))
		if m == nil {
			continue
		}
		var out []string
		switch m[1] {
		case "run":
			out, err = output(m[2])
		case "estimate":
			out, err = estimateLines(m[2])
		case "compare":
			out, err = compareLines(m[2])
		default:
			errs = append(errs, fmt.Errorf("%s:%d: only `$ mqsim run`, `$ mqsim estimate` and `$ mqsim compare` excerpts can be checked; show other commands without the $ prompt", n.path, b.line+1))
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %v", n.path, b.line+1, err))
			continue
		}
		quoted := b.lines[1:]
		if len(quoted) == 0 {
			errs = append(errs, fmt.Errorf("%s:%d: an excerpt with no lines", n.path, b.line+1))
			continue
		}
		if at, err := checkExcerpt(out, quoted); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %v (rerun: go run ./cmd/mqsim %s %s)", n.path, b.line+2+at, err, m[1], strings.TrimSpace(m[2])))
		}
	}
	return errs
}

// Every transcript excerpt in a note is still what its scenario prints.
func TestExcerptsMatchTheirRuns(t *testing.T) {
	count := 0
	for _, n := range readNotes(t, ".") {
		bs, _ := n.blocks()
		for _, b := range bs {
			if len(b.lines) > 0 && reExcerpt.MatchString(strings.TrimSpace(b.lines[0])) {
				count++
			}
		}
		for _, err := range excerptErrors(n) {
			t.Error(err)
		}
	}
	if count < 25 {
		t.Errorf("only %d excerpts in the notes; every note quotes a run", count)
	}
}

// The excerpt check catches a changed line, lines out of order and a broken run of lines,
// and accepts a faithful excerpt (fixtures under testdata).
func TestExcerptCheckerOnFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string // "" for no error
	}{
		{"faithful.md", ""},
		{"changed-line.md", `testdata/changed-line.md:12: quoted line "lost: ok t/0@2" is not in the output`},
		{"out-of-order.md", `testdata/out-of-order.md:11: quoted line "produce value=before" is not in the output`},
		{"missing-elision.md", `testdata/missing-elision.md:8: quoted line "crash b1" is not in the output`},
		{"unpinned-seed.md", "pins its seed"},
		{"other-command.md", "only `$ mqsim run`, `$ mqsim estimate` and `$ mqsim compare` excerpts can be checked"},
		{"estimate-changed.md", `testdata/estimate-changed.md:8: quoted line "brokers              180`},
		{"unknown-scenario.md", `no scenario file or catalogue entry named "acks7-nothing"`},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		n := note{filepath.Join("testdata", tc.file), strings.Split(string(b), "\n")}
		errs := excerptErrors(n)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: %v", tc.file, errs)
		case tc.want != "" && len(errs) != 1:
			t.Errorf("%s: %d errors %v, want one containing %q", tc.file, len(errs), errs, tc.want)
		case tc.want != "" && !strings.Contains(errs[0].Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.file, errs[0], tc.want)
		}
	}
}

// Scenario references: `mqsim run NAME`, `mqsim tui NAME`, `mqsim export NAME`.
var reScenarioRef = regexp.MustCompile(`mqsim (?:run|tui|export) ([A-Za-z0-9][A-Za-z0-9._/|-]*)`)

// placeholders are words that stand for a scenario in usage lines.
var placeholders = []string{"NAME", "FILE", "NAME|FILE", "FILE.txt"}

func references(n note) map[string][]int {
	refs := map[string][]int{}
	for i, l := range n.lines {
		for _, m := range reScenarioRef.FindAllStringSubmatch(l, -1) {
			name := m[1]
			if slices.Contains(placeholders, name) || strings.ContainsAny(name, "./") {
				continue // a placeholder or a file of one's own
			}
			refs[name] = append(refs[name], i+1)
		}
	}
	return refs
}

func catalogNames() []string {
	var names []string
	for _, e := range scenarios.Catalog() {
		names = append(names, e.Name)
	}
	return names
}

// Every scenario a note names exists, and every catalogue scenario is named by a note:
// `mqsim list` and the notes agree.
func TestNotesAndCatalogAgree(t *testing.T) {
	catalog := catalogNames()
	named := map[string]bool{}
	for _, n := range readNotes(t, ".") {
		for name, lines := range references(n) {
			if !slices.Contains(catalog, name) {
				t.Errorf("%s:%d: no scenario %q in the catalogue (mqsim list)", n.path, lines[0], name)
			}
			named[name] = true
		}
	}
	for _, name := range catalog {
		if !named[name] {
			t.Errorf("scenario %s is in the catalogue but no note runs it: add a `mqsim run %s` to the note of its concept (README.md maps concepts to notes)", name, name)
		}
	}
}

// The notes the terminal UI points to exist.
func TestTUINotesExist(t *testing.T) {
	for _, name := range tui.Notes {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("the TUI's Explain pane points to notes/%s: %v", name, err)
		}
	}
}

var reLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

// Relative links between notes, to diagrams and to the repository resolve; the path in
// README.md visits every note.
func TestLinksResolve(t *testing.T) {
	notes := readNotes(t, ".")
	linked := map[string]bool{}
	for _, n := range notes {
		for i, l := range n.lines {
			for _, m := range reLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(n.path), target)); err != nil {
					t.Errorf("%s:%d: link to %s: %v", n.path, i+1, target, err)
				}
				if filepath.Base(n.path) == "README.md" {
					linked[filepath.Clean(target)] = true
				}
			}
		}
	}
	for _, n := range notes {
		if base := filepath.Base(n.path); base != "README.md" && !linked[base] {
			t.Errorf("README.md does not link %s: put it on the path", base)
		}
	}
	if len(notes) < 26 {
		t.Errorf("%d notes, want at least 25 and the README", len(notes))
	}
}

// reDiagramPath finds a diagram named in a note's text, such as the -o of the command
// that made it.
var reDiagramPath = regexp.MustCompile(`(?:notes/)?diagrams/[A-Za-z0-9._-]+\.(?:svg|mmd)`)

var (
	reSVGCommand     = regexp.MustCompile(`mqsim export [^<\n]*`)
	reMermaidCommand = regexp.MustCompile(`(?m)^\s*%% (mqsim export .*)$`)
)

// regenerate makes a diagram again from the command it carries.
func regenerate(command string) ([]byte, error) {
	q, err := export.ParseCommandLine(html.UnescapeString(command))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	_, err = export.Export(q, &b)
	return b.Bytes(), err
}

// Every diagram under diagrams/ and every ```mermaid block in a note is what its command
// makes now. `go test ./notes -update` rewrites the files (review the diff).
func TestDiagramsAreCurrent(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("diagrams", "*"))
	used := map[string]bool{}
	notes := readNotes(t, ".")
	for _, n := range notes {
		for _, l := range n.lines {
			for _, m := range reLink.FindAllStringSubmatch(l, -1) {
				used[filepath.Clean(m[1])] = true
			}
			for _, m := range reDiagramPath.FindAllString(l, -1) {
				used[strings.TrimPrefix(m, "notes/")] = true
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cmd string
		switch filepath.Ext(f) {
		case ".svg":
			cmd = reSVGCommand.FindString(string(data))
		case ".mmd":
			if m := reMermaidCommand.FindStringSubmatch(string(data)); m != nil {
				cmd = m[1]
			}
		default:
			t.Errorf("%s: diagrams/ holds .svg and .mmd files only", f)
			continue
		}
		if cmd == "" {
			t.Errorf("%s carries no mqsim export command", f)
			continue
		}
		if !used[f] {
			t.Errorf("%s: no note links it", f)
		}
		got, err := regenerate(cmd)
		if err != nil {
			t.Errorf("%s: %s: %v", f, cmd, err)
			continue
		}
		if !bytes.Equal(got, data) {
			if *update {
				if err := os.WriteFile(f, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s is stale: regenerate it with go run ./cmd/mqsim %s -o notes/%s (or go test ./notes -update)",
				f, strings.TrimPrefix(html.UnescapeString(cmd), "mqsim "), f)
		}
	}
	blocks := 0
	for _, n := range notes {
		bs, err := n.blocks()
		if err != nil {
			t.Error(err)
			continue
		}
		for _, b := range bs {
			if b.info != "mermaid" {
				continue
			}
			blocks++
			text := strings.Join(b.lines, "\n") + "\n"
			m := reMermaidCommand.FindStringSubmatch(text)
			if m == nil {
				t.Errorf("%s:%d: a mermaid block without the %%%% mqsim export command that made it", n.path, b.line)
				continue
			}
			got, err := regenerate(m[1])
			if err != nil {
				t.Errorf("%s:%d: %v", n.path, b.line, err)
				continue
			}
			if string(got) != text {
				t.Errorf("%s:%d: the mermaid block is stale: paste the output of go run ./cmd/mqsim %s", n.path, b.line, strings.TrimPrefix(m[1], "mqsim "))
			}
		}
	}
	if blocks == 0 || len(files) == 0 {
		t.Errorf("the notes embed %d mermaid blocks and %d diagram files; they should show both", blocks, len(files))
	}
}

// A "Try it" command: a line of a code block (not an excerpt) that starts with mqsim or
// go run ./cmd/mqsim; a trailing "# comment" is not part of it.
var reComment = regexp.MustCompile(`\s+#.*$`)

func tryItCommands(n note) ([][2]string, error) {
	bs, err := n.blocks()
	if err != nil {
		return nil, err
	}
	var cmds [][2]string // {position, command}
	for _, b := range bs {
		if b.info == "mermaid" || len(b.lines) == 0 || reExcerpt.MatchString(strings.TrimSpace(b.lines[0])) {
			continue
		}
		for i, l := range b.lines {
			l = reComment.ReplaceAllString(strings.TrimSpace(l), "")
			for _, part := range strings.Split(l, "&&") {
				part = strings.TrimSpace(strings.ReplaceAll(part, "go run ./cmd/mqsim ", "mqsim "))
				if reCommandLine.MatchString(part) && !isUsageLine(part) {
					cmds = append(cmds, [2]string{fmt.Sprintf("%s:%d", n.path, b.line+1+i), part})
				}
			}
		}
	}
	return cmds, nil
}

// ownFile reports a command of the repository's README that runs a file of the reader's
// own (my-scenario.txt, a swarm's failures/seed-N.txt): it cannot be tried here.
func ownFile(n note, cmd string) bool {
	if filepath.Base(n.path) != "README.md" || filepath.Dir(n.path) == "." {
		return false
	}
	for _, w := range strings.Fields(cmd)[2:] {
		if strings.HasSuffix(w, ".txt") {
			_, err := os.Stat(filepath.Join("..", w))
			return err != nil
		}
	}
	return false
}

// reCommandLine is "mqsim SUBCOMMAND ...".
var reCommandLine = regexp.MustCompile(`^mqsim [a-z][a-z-]*( |$)`)

// isUsageLine reports a synopsis such as "mqsim export NAME|FILE --format F": words in
// capitals stand for what the reader fills in.
func isUsageLine(cmd string) bool {
	for _, w := range strings.Fields(cmd) {
		if slices.Contains(placeholders, w) || strings.Contains(w, "NAME") || strings.Contains(w, "|") {
			return true
		}
	}
	return false
}

// tryIt runs one command as mqsim would, without printing: run, tui and export for
// real; other subcommands only by name.
func tryIt(cmd string) error {
	words := strings.Fields(cmd)
	if len(words) < 2 {
		return fmt.Errorf("no subcommand")
	}
	switch words[1] {
	case "list", "commands", "bugs", "events", "version", "swarm", "check", "progress":
		return nil // cheap or slow, and not about a scenario's run
	case "export":
		q, err := export.ParseCommandLine(cmd)
		if err != nil {
			return err
		}
		if _, err := os.Stat(q.Scenario); err != nil {
			if _, err := os.Stat(filepath.Join("..", q.Scenario)); err == nil {
				q.Scenario = filepath.Join("..", q.Scenario)
			}
		}
		q.Record = page.Record
		_, err = export.Export(q, io.Discard)
		return err
	case "estimate":
		_, err := estimateLines(strings.Join(words[2:], " "))
		return err
	case "lab":
		if len(words) > 2 && !strings.HasPrefix(words[2], "-") {
			_, err := labs.Find(words[2]) // the lab exists; its seeds run in labs' tests
			return err
		}
		return nil
	case "run", "tui", "classroom", "quiz":
	default:
		return fmt.Errorf("mqsim has no command %q", words[1])
	}
	var name string
	var opts runner.Options
	fix := false
	valued := map[string]bool{"--seed": true, "--set": true, "--history": true, "--step": true, "--width": true, "--height": true,
		"--listen": true, "--max-sessions": true, "--idle": true, "--host-key": true, // mqsim classroom
		"--path": true} // mqsim quiz
	flags := map[string]bool{"--fix": true, "-q": true, "--quiet": true, "--print": true, "--presenter": true, "--no-color": true,
		"--plain": true, "--no-progress": true}
	for i := 2; i < len(words); i++ {
		w := words[i]
		switch {
		case valued[w] && i+1 < len(words):
			i++
			switch w {
			case "--seed":
				seed, err := strconv.ParseUint(words[i], 10, 64)
				if err != nil {
					return err
				}
				opts.Seed, opts.SeedSet = seed, true
			case "--set":
				opts.Set = append(opts.Set, words[i])
			}
		case flags[w]:
			fix = fix || w == "--fix"
		case !strings.HasPrefix(w, "-") && name == "":
			name = w
		default:
			return fmt.Errorf("mqsim %s does not take %q", words[1], w)
		}
	}
	if name == "" && words[1] == "quiz" {
		return nil // --path: the quiz package's tests play the path
	}
	if name == "" {
		if words[1] == "run" {
			return fmt.Errorf("mqsim run needs a scenario")
		}
		name = "acks1-leader-crash" // mqsim tui's default
	}
	s, err := loadScenario(name)
	if err != nil {
		return err
	}
	if fix {
		if len(s.Fix) == 0 {
			return fmt.Errorf("%s names no fix", name)
		}
		opts.Set = append(slices.Clone(s.Fix), opts.Set...)
	}
	if words[1] == "quiz" && len(s.Questions) == 0 {
		return fmt.Errorf("%s asks no questions", name)
	}
	if words[1] == "tui" || words[1] == "classroom" { // classroom serves a tui run
		_, err = tui.Record("main", s, opts)
		return err
	}
	_, err = runner.Run(s, opts, nil)
	return err
}

// Every command a note tells the reader to try works: the scenario exists, the flags are
// mqsim's, and the run (or export) completes.
func TestTryItCommandsWork(t *testing.T) {
	count := 0
	seen := map[string]error{}
	notes := readNotes(t, ".")
	if b, err := os.ReadFile(filepath.Join("..", "README.md")); err == nil {
		notes = append(notes, note{filepath.Join("..", "README.md"), strings.Split(string(b), "\n")})
	}
	for _, n := range notes {
		cmds, err := tryItCommands(n)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, c := range cmds {
			if ownFile(n, c[1]) {
				continue
			}
			count++
			err, done := seen[c[1]]
			if !done {
				err = tryIt(c[1])
				seen[c[1]] = err
			}
			if err != nil {
				t.Errorf("%s: %s: %v", c[0], c[1], err)
			}
		}
	}
	if count < 50 {
		t.Errorf("only %d commands to try in the notes and the README", count)
	}
}

// The example scenarios under examples/ print what they say they print.
func TestExamplesRunAsWritten(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("examples", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, f := range files {
		s, err := scenarios.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := runner.Run(s, runner.Options{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(res.Mismatches) > 0 {
			t.Errorf("%s: outputs differ from the file at %v; rerun mqsim run notes/%s and copy its output", f, res.Mismatches, f)
		}
	}
}
