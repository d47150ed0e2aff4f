package quiz

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

func load(t *testing.T, name string) *script.Script {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The answers follow the run: acks1-leader-crash with its fix (acks=all, min-isr=2)
// answers its questions otherwise than as written, so that a model change that changed
// an outcome would change the answers TestCatalogueAnswers pins.
func TestFixChangesTheAnswers(t *testing.T) {
	s := load(t, "acks1-leader-crash")
	written := answers(t, s, runner.Options{})
	fixed := answers(t, s, runner.Options{Set: s.Fix})
	want := []string{
		"catalog/acks1-leader-crash.txt:34 acked(lost) [acks] = no",
		"catalog/acks1-leader-crash.txt:50 leader(t/0) [leader-election] = b2",
		"catalog/acks1-leader-crash.txt:53 anomaly(lost-write) [acks] = no",
		"catalog/acks1-leader-crash.txt:79 hw(t/0) [high-watermark] = 2",
	}
	if !slices.Equal(fixed, want) {
		t.Errorf("with the fix:\n%s", strings.Join(fixed, "\n"))
	}
	if written[0] == fixed[0] || written[2] == fixed[2] {
		t.Errorf("the fix should change the answers about acks:\n%s\n%s", strings.Join(written, "\n"), strings.Join(fixed, "\n"))
	}
}

const tinyTranscript = `# One broker, one write, one read.
cluster brokers=1 partitions=1 rf=1 min-isr=1
----
controller ctl, brokers b1
topic t partitions=1 rf=1 min-isr=1 unclean=false
producers: acks=all idempotence=true max-in-flight=5; flush=never; truncation=epoch
t/0: leader b1, epoch 0, isr [b1]

Question 1 of 2 (acks): Will the producer be told "a" is written?
  a) yes
  b) no
your answer: b
noted: no. The run goes on to the point that decides it.

produce value=a
----
a: ok t/0@0

Answer 1: yes. You said no: wrong.
Decided at step 22, during testdata/tiny.txt:11: produce value=a
Why: A single broker is the whole ISR: it answers once it has appended.

Question 2 of 2 (delivery-semantics): How many times will "a" have been read at the end?
  a) 0
  b) 1
  c) 2
your answer: three
"three" is not among the choices: type a letter from a to c or a choice as written
your answer: 1
noted: 1. The run goes on to the point that decides it.

consume
----
t/0: 0:a

check
----
result: valid (0 violations, 0 allowed)

Answer 2: 1. You said 1: right.
Decided at step 41, during testdata/tiny.txt:18: consume
Why: One consumer reads the partition once.
`

// The plain mode, answers from a reader: the exact transcript, with a wrong answer, an
// answer not among the choices asked again, and a choice typed as written.
func TestPlainTranscript(t *testing.T) {
	sess, err := New(load(t, "testdata/tiny.txt"), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := Plain(sess, bufio.NewReader(strings.NewReader("b\nthree\n1\n")), &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != tinyTranscript {
		t.Errorf("transcript:\n%s", out.String())
	}
	if len(res) != 2 || res[0].Right || !res[1].Right || res[0].Question.Concept != "acks" {
		t.Errorf("results %+v", res)
	}
}

// Bad answers are asked again at most MaxTries times; input that ends stops the quiz.
func TestPlainBadInput(t *testing.T) {
	for in, want := range map[string]string{
		"x\ny\nz\n": `question 1: no answer among the choices after 3 tries ("z" is not among the choices: type a letter from a to b or a choice as written)`,
		"":          "question 1: the input ended before an answer",
		"a\n":       "question 2: the input ended before an answer",
	} {
		sess, err := New(load(t, "testdata/tiny.txt"), runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		_, err = Plain(sess, bufio.NewReader(strings.NewReader(in)), &out)
		if err == nil || err.Error() != want {
			t.Errorf("input %q: got %v, want %s", in, err, want)
		}
	}
	if _, err := New(load(t, "kernel-pingpong"), runner.Options{}); err == nil || !strings.Contains(err.Error(), "asks no questions; the scenarios that do: aborted-read-uncommitted, acks0-silent-loss, acks1-leader-crash") {
		t.Errorf("a scenario without questions: %v", err)
	}
}

func TestChoose(t *testing.T) {
	q := script.Question{Choices: []string{"b2", "a", "2"}}
	for in, want := range map[string]string{"B2": "b2", "a": "a", "b": "a", "c": "2", " 2 ": "2"} {
		if got, err := Choose(q, in); err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Choose(q, "d"); err == nil {
		t.Error("d is beyond the choices")
	}
}

// Progress is counted per concept, saved atomically (no temporary file left beside it),
// and read back; an unreadable file is reported, not overwritten.
func TestProgress(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mqsim", "progress.json")
	p, err := LoadProgress(file)
	if err != nil {
		t.Fatal(err)
	}
	p.Record("acks", true)
	p.Record("isr", true)
	p.Record("isr", false)
	if err := p.Save(file); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("files beside the progress file: %v", entries)
	}
	back, err := LoadProgress(file)
	if err != nil {
		t.Fatal(err)
	}
	if back.Status("acks") != Mastered || back.Status("isr") != Missed || back.Status("min-isr") != Untried {
		t.Errorf("statuses: %+v", back.Concepts)
	}
	if c := back.Concepts["isr"]; c.Right != 1 || c.Wrong != 1 {
		t.Errorf("isr: %+v", c)
	}
	os.WriteFile(file, []byte("{half"), 0o644)
	if _, err := LoadProgress(file); err == nil || !strings.Contains(err.Error(), "not a progress file") {
		t.Errorf("a broken file: %v", err)
	}
}

// The interview path is notes/README.md's refresher, note by note; every question's
// concept names a note; every concept of the path has a question.
func TestInterviewPathFollowsTheNotes(t *testing.T) {
	b, err := os.ReadFile("../../notes/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	refresher := text[strings.Index(text, "## The one-hour interview refresher"):]
	refresher = refresher[:strings.Index(refresher, "\n## ")]
	var notes []string
	for _, m := range regexp.MustCompile(`(?m)^\d+\. \[([a-z0-9-]+)\.md\]`).FindAllStringSubmatch(refresher, -1) {
		notes = append(notes, m[1])
	}
	if !slices.Equal(notes, InterviewPath) {
		t.Errorf("notes/README.md's refresher: %v\nInterviewPath: %v", notes, InterviewPath)
	}
	asked := map[string]bool{}
	for _, e := range scenarios.Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range s.Questions {
			asked[q.Concept] = true
			if _, err := os.Stat("../../notes/" + q.Concept + ".md"); err != nil {
				t.Errorf("%s: concept=%s names no note", q.Pos, q.Concept)
			}
		}
	}
	for _, c := range InterviewPath {
		if !asked[c] {
			t.Errorf("no question of the catalogue practises %s", c)
		}
	}
}

// Under --set an answer may fall outside the choices, written for the scenario as
// written: the quiz says so and goes on.
func TestAnswerOutsideTheChoices(t *testing.T) {
	sess, err := New(load(t, "acks1-leader-crash"), runner.Options{Set: []string{"acks=all"}})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := Plain(sess, bufio.NewReader(strings.NewReader("a\na\na\na\n")), &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 || res[2].Correct != "10" || res[2].Right {
		t.Fatalf("results %+v", res)
	}
	if !strings.Contains(out.String(), "Answer 4: 10. You said 1: wrong.\nDecided at step") ||
		!strings.Contains(out.String(), "None of the choices: they were written for the scenario as written, and this run has --set acks=all.\n") {
		t.Errorf("transcript:\n%s", out.String())
	}
}

// --path interview plays the scenarios in the order of the path's concepts.
func TestPathScripts(t *testing.T) {
	var names []string
	for _, s := range PathScripts(InterviewPath) {
		names = append(names, s.Name)
	}
	want := "load-leveling-burst retention-overtakes-consumer add-partitions-breaks-key-order inflight-reordering pubsub-vs-point-to-point acks0-silent-loss acks1-leader-crash min-isr-not-enough-replicas rabbit-quorum-leader-crash partition-reassignment slow-follower-isr elr-last-replica-standing isr-shrink-unclean-election kip101-truncate-to-hw unclean-election-offset-reuse idempotent-producer retry-duplicates commit-before-process-loss rebalance-duplicates sqs-visibility-timeout-duplicate aborted-read-uncommitted consume-transform-produce hanging-transaction producer-restart-duplicates zombie-producer-fenced rabbit-consumer-crash-redelivery rabbit-poison-dlx sqs-redrive-dlq bug-share-ack-before-persist share-group-leader-failover share-group-lock-timeout-redelivery share-group-poison-archived"
	if strings.Join(names, " ") != want {
		t.Errorf("path order: %s", strings.Join(names, " "))
	}
}

// The course path is the scenarios the labs of notes/README.md's "A course in four
// lectures" run, in lecture order; --path course plays those that ask questions.
func TestCoursePathFollowsTheNotes(t *testing.T) {
	b, err := os.ReadFile("../../notes/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	course := text[strings.Index(text, "## A course in four lectures"):]
	course = course[:strings.Index(course[1:], "\n## ")+1]
	var named []string
	for _, m := range regexp.MustCompile(`mqsim (?:run|tui) ([A-Za-z0-9][A-Za-z0-9._/-]*)`).FindAllStringSubmatch(course, -1) {
		if !strings.ContainsAny(m[1], "./") && !slices.Contains(named, m[1]) { // a file of notes/examples is not a catalogue name
			named = append(named, m[1])
		}
	}
	if !slices.Equal(named, CourseScenarios) {
		t.Errorf("notes/README.md's course runs %v\nCourseScenarios: %v", named, CourseScenarios)
	}
	scripts, err := Path("course")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range scripts {
		names = append(names, s.Name)
	}
	want := "add-partitions-breaks-key-order load-leveling-burst retention-overtakes-consumer acks1-leader-crash retry-duplicates idempotent-producer kip101-truncate-to-hw commit-before-process-loss poison-message-dlq rabbit-poison-dlx sqs-redrive-dlq share-group-lock-timeout-redelivery sqs-visibility-timeout-duplicate"
	if strings.Join(names, " ") != want {
		t.Errorf("--path course plays %s", strings.Join(names, " "))
	}
	if _, err := Path("lectures"); err == nil || err.Error() != "--path lectures: no such path; want interview or course" {
		t.Errorf("an unknown path: %v", err)
	}
}
