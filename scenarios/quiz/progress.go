package quiz

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mqsim/scenarios"
	"mqsim/scenarios/script"
)

// InterviewPath is the interview path of notes/README.md ("The one-hour interview
// refresher"), one concept per note, by the note's name without ".md": the concepts a
// question's concept= names and `mqsim progress` reports on (a test holds it to the notes).
var InterviewPath = []string{
	"why-queues", "topics-partitions-keys", "acks", "replication", "isr", "high-watermark",
	"min-isr", "leader-election", "idempotence", "consumer-groups", "delivery-semantics",
	"exactly-once", "kafka-rabbitmq-sqs", "share-groups",
}

// CourseScenarios are the catalogue scenarios that the labs of notes/README.md's "A course
// in four lectures" run (`mqsim run NAME`, `mqsim tui NAME`), in lecture order, each once
// (a test holds it to the note). `mqsim quiz --path course` plays those that ask questions.
var CourseScenarios = []string{
	// 1. The log.
	"add-partitions-breaks-key-order", "hot-partition-skew", "hot-partition-saturation", "load-leveling-burst",
	"torn-write-recovery", "retention-overtakes-consumer", "lagging-consumer-reads-disk", "kernel-pingpong",
	// 2. Writing durably.
	"acks1-leader-crash", "batching-linger", "compression-codecs", "retry-duplicates", "idempotent-producer",
	// 3. When things break.
	"kip101-truncate-to-hw", "controller-minority-partition",
	// 4. Reading.
	"commit-before-process-loss", "eager-vs-cooperative", "poison-message-dlq",
	"rabbit-poison-dlx", "sqs-redrive-dlq", "replay-after-bug-fix",
	"share-group-lock-timeout-redelivery", "sqs-visibility-timeout-duplicate",
}

// PathNames are the paths `mqsim quiz --path` takes.
var PathNames = []string{"interview", "course"}

// Path is the scenarios a named path quizzes: for "interview", those that ask about a
// concept of InterviewPath, in the path's order (PathScripts); for "course", those of
// CourseScenarios that ask questions, in lecture order.
func Path(name string) ([]*script.Script, error) {
	switch name {
	case "interview":
		return PathScripts(InterviewPath), nil
	case "course":
		byName := map[string]scenarios.Entry{}
		for _, e := range scenarios.Catalog() {
			byName[e.Name] = e
		}
		var out []*script.Script
		for _, n := range CourseScenarios {
			e, ok := byName[n]
			if !ok {
				return nil, fmt.Errorf("the course names %s, which is not in the catalogue", n)
			}
			s, err := script.Parse(e.Name, e.Text)
			if err != nil {
				return nil, err
			}
			if len(s.Questions) > 0 {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("--path %s: no such path; want %s", name, strings.Join(PathNames, " or "))
}

// Quizzes lists the catalogue scenarios that ask questions.
func Quizzes() []string {
	var names []string
	for _, e := range scenarios.Catalog() {
		if s, err := script.Parse(e.Name, e.Text); err == nil && len(s.Questions) > 0 {
			names = append(names, e.Name)
		}
	}
	return names
}

// PathScripts are the catalogue scenarios that ask about a concept of path, ordered by
// the first of their concepts along the path (then by name).
func PathScripts(path []string) []*script.Script {
	type entry struct {
		s     *script.Script
		first int
	}
	var es []entry
	for _, e := range scenarios.Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			continue
		}
		first := len(path)
		for _, q := range s.Questions {
			if i := slices.Index(path, q.Concept); i >= 0 && i < first {
				first = i
			}
		}
		if first < len(path) {
			es = append(es, entry{s, first})
		}
	}
	slices.SortStableFunc(es, func(a, b entry) int { return a.first - b.first }) // the catalogue is sorted by name
	out := make([]*script.Script, len(es))
	for i, e := range es {
		out[i] = e.s
	}
	return out
}

// Progress is what a learner got right and wrong, per concept.
type Progress struct {
	Concepts map[string]*ConceptProgress `json:"concepts"`
}

// ConceptProgress counts a concept's answers; Last is "right" or "wrong".
type ConceptProgress struct {
	Right int    `json:"right"`
	Wrong int    `json:"wrong"`
	Last  string `json:"last"`
}

// A concept's standing: mastered when its last answer was right, missed when it was
// wrong, untried with no answer yet.
const (
	Mastered = "mastered"
	Missed   = "missed"
	Untried  = "untried"
)

// ProgressFile is where progress is kept: mqsim/progress.json in the user's config
// directory (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/
// Application Support on macOS, %AppData% on Windows).
func ProgressFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory to keep progress in: %v", err)
	}
	return filepath.Join(dir, "mqsim", "progress.json"), nil
}

// LoadProgress reads the progress file; a missing file is no progress yet.
func LoadProgress(path string) (*Progress, error) {
	p := &Progress{Concepts: map[string]*ConceptProgress{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("%s: not a progress file (%v); remove it to start again", path, err)
	}
	if p.Concepts == nil {
		p.Concepts = map[string]*ConceptProgress{}
	}
	return p, nil
}

// Record counts one answer about concept.
func (p *Progress) Record(concept string, right bool) {
	c := p.Concepts[concept]
	if c == nil {
		c = &ConceptProgress{}
		p.Concepts[concept] = c
	}
	if right {
		c.Right++
		c.Last = "right"
	} else {
		c.Wrong++
		c.Last = "wrong"
	}
}

// Status is a concept's standing.
func (p *Progress) Status(concept string) string {
	c := p.Concepts[concept]
	switch {
	case c == nil:
		return Untried
	case c.Last == "right":
		return Mastered
	}
	return Missed
}

// Save writes the progress file atomically: a temporary file in the same directory,
// synced, then renamed over the old one, so that a crash never leaves it half-written.
func (p *Progress) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ") // map keys sorted: the same progress, the same file
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".progress-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Report shows the standing of every concept of path, in path order.
func (p *Progress) Report(name string, path []string) string {
	asked := map[string]int{}
	for _, s := range PathScripts(path) {
		for _, q := range s.Questions {
			asked[q.Concept]++
		}
	}
	count := map[string]int{}
	var lines []string
	for _, concept := range path {
		st := p.Status(concept)
		count[st]++
		detail := "no question in the catalogue yet"
		if c := p.Concepts[concept]; c != nil {
			detail = fmt.Sprintf("%d right, %d wrong", c.Right, c.Wrong)
		} else if asked[concept] > 0 {
			detail = fmt.Sprintf("%d to try: mqsim quiz --path %s", asked[concept], name)
		}
		lines = append(lines, fmt.Sprintf("  %-9s %-23s %s", st, concept, detail))
	}
	head := fmt.Sprintf("%s path: %d of %d concepts mastered, %d missed, %d untried", name, count[Mastered], len(path), count[Missed], count[Untried])
	return head + "\n" + strings.Join(lines, "\n") + "\n"
}
