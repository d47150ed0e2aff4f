package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestFlowQuiz: one quiz through acks1-leader-crash's four questions in a running
// program. The run stops before each question's step, a letter picks, the answer shows
// where the run decides it, enter goes on; the results are the learner's.
func TestFlowQuiz(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := New(r, Options{Quiz: true})
	if got := r.Steps[r.StepOf(m.Pos()+1)].Step.Text; got != "produce value=lost" {
		t.Fatalf("the quiz starts before %q, want before the question's step", got)
	}
	tm := start(t, m)
	tm.Type("a")                   // yes: the producer is told "lost" is written
	tm.Send(special(tea.KeyEnter)) // after the answer: right
	tm.Type("l")                   // a step to look around: the quiz keeps its place
	tm.Send(special(tea.KeyEnter)) // back to the question
	tm.Type("c")                   // b3: wrong
	tm.Type("a")                   // yes: lost-write
	tm.Send(special(tea.KeyEnter)) // after the answer b2
	tm.Type("b")                   // 2
	tm.Send(special(tea.KeyEnter)) // after the answer 2
	tm.Send(special(tea.KeyEnter)) // after the answer yes, at the end
	fm := quit(t, tm)
	var got []string
	for _, x := range fm.QuizResults() {
		got = append(got, x.Question.Concept+" "+x.Given+" "+x.Correct)
	}
	if strings.Join(got, "; ") != "acks yes yes; leader-election b3 b2; high-watermark 2 2; acks yes yes" {
		t.Errorf("results: %v", got)
	}
	if !strings.Contains(ansi.Strip(fm.Render()), "Quiz over: 3 of 4 right.") {
		t.Errorf("final screen:\n%s", ansi.Strip(fm.Render()))
	}
	if fm.Pos() != r.Len()-1 {
		t.Errorf("the quiz ends at event %d, want the run's last, %d", fm.Pos(), r.Len()-1)
	}
}

// In presenter mode the room answers aloud: enter goes on from a question, and an
// answer shows only on enter.
func TestQuizPresenterRevealsOnAKey(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := New(r, Options{Quiz: true, Presenter: true}).WithSize(100, 30)
	screen := func() string { return ansi.Strip(m.Render()) }
	if !strings.Contains(screen(), "ask the room") {
		t.Fatalf("question screen:\n%s", screen())
	}
	m, _ = m.update(special(tea.KeyEnter))
	if s := screen(); !strings.Contains(s, "enter reveals the answer") || strings.Contains(s, "Answer:") {
		t.Fatalf("before the reveal:\n%s", s)
	}
	m, _ = m.update(special(tea.KeyEnter))
	if s := screen(); !strings.Contains(s, "Answer: yes.") {
		t.Fatalf("after the reveal key:\n%s", s)
	}
}

// The screens of a question and of its answer.
func TestQuizScreens(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := New(r, Options{Quiz: true}).WithSize(100, 30)
	q := ansi.Strip(m.Render())
	for _, want := range []string{"Quiz · question 1 of 4 · acks", "Will the producer be told that \"lost\" is written?", "a) yes   b) no", "press a-b to answer"} {
		if !strings.Contains(q, want) {
			t.Errorf("question screen lacks %q:\n%s", want, q)
		}
	}
	m, _ = m.update(tea.KeyPressMsg{Code: 'b', Text: "b"})
	a := ansi.Strip(m.Render())
	for _, want := range []string{"Answer: yes. You said no: wrong.", "Decided at step 52, during catalog/acks1-leader-crash.txt:39: produce value=lost", "Why: With acks=1 the leader answers"} {
		if !strings.Contains(a, want) {
			t.Errorf("answer screen lacks %q:\n%s", want, a)
		}
	}
	m, _ = m.update(tea.KeyPressMsg{Code: 'z', Text: "z"}) // not a choice, and no key of the TUI: nothing happens
	if m.quiz.at != 1 {
		t.Errorf("a key that is no choice moved the quiz to stop %d", m.quiz.at)
	}
}
