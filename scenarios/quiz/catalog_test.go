package quiz

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

var rewrite = flag.Bool("rewrite-answers", false, "rewrite testdata/answers.txt from the runs")

// answers plays s to the end and lists every question's computed answer.
func answers(t *testing.T, s *script.Script, opts runner.Options) []string {
	t.Helper()
	sess, err := New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	for !sess.Done() {
		if _, err := sess.Next(); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
	}
	var out []string
	for i, q := range s.Questions {
		if !sess.revealed[i] {
			t.Fatalf("%s: never revealed", q.Pos)
		}
		if a := sess.Answers[i]; !a.Among && len(opts.Set) == 0 {
			t.Errorf("%s: the run answers %q, which is not among the choices (%s)", q.Pos, a.Value, strings.Join(q.Choices, ", "))
		}
		out = append(out, fmt.Sprintf("%s %s [%s] = %s", q.Pos, q.Answer, q.Concept, sess.Answers[i].Value))
	}
	return out
}

// Every question of the catalogue is answered by its run, its answer is one of its
// choices, and the answers are the pinned ones (testdata/answers.txt): a change to the
// model that changes an outcome a question asks about fails here.
func TestCatalogueAnswers(t *testing.T) {
	var got []string
	for _, e := range scenarios.Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Questions) > 0 {
			got = append(got, answers(t, s, runner.Options{})...)
		}
	}
	text := strings.Join(got, "\n") + "\n"
	if *rewrite {
		if err := os.WriteFile("testdata/answers.txt", []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/answers.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != text {
		t.Errorf("answers changed (go test ./scenarios/quiz -run TestCatalogueAnswers -rewrite-answers, and read the diff):\n%s", text)
	}
}

// A scenario that asks questions and names a fix asks at least one whose answer the fix
// changes: under --fix the same question has another answer, and that second answer is
// the lesson.
func TestFixesChangeAnAnswer(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Questions) == 0 || len(s.Fix) == 0 {
			continue
		}
		written, fixed := answers(t, s, runner.Options{}), answers(t, s, runner.Options{Set: s.Fix})
		changed := 0
		for i := range written {
			if written[i] != fixed[i] {
				changed++
			}
		}
		if changed == 0 {
			t.Errorf("%s: no answer changes with the fix %v:\n%s", e.Name, s.Fix, strings.Join(fixed, "\n"))
		}
	}
}
