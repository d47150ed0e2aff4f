package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mqsim/scenarios/script"
)

// The quiz mode (Options.Quiz, mqsim quiz in a terminal): the run goes to each question
// of its script and stops there, at the last event before the question's step; the
// learner picks a choice with its letter; the run goes on to the question's reveal point,
// where the answer computed while recording (Run.Answers), the step that decided it and
// the explanation show; enter goes on. In presenter mode the room answers aloud: enter
// goes on from a question, and an answer shows only on enter. Everything happens in
// Update by moving the position: nothing runs, nothing blocks.

// quizStop is one stop of the quiz: a question to ask or an answer to reveal, at an event.
type quizStop struct {
	reveal bool
	q      int // the question, an index into Script.Questions
	event  int
}

// quizState is where a quiz is. It is a value: a copy of the model keeps its own.
type quizState struct {
	stops []quizStop
	at    int      // the current stop; len(stops) once the quiz is over
	picks []string // per question, the learner's pick ("" none)
	shown bool     // presenter: the current reveal's answer is shown
}

// QuizResult is how the learner did on one question.
type QuizResult struct {
	Question script.Question
	Given    string
	Correct  string
	Right    bool
}

// newQuiz lays out the stops of r's questions: before step k runs, the answers revealed
// there, then the questions asked there (the order of quiz.Session); after the last step,
// the answers revealed at the end.
func newQuiz(r *Run) quizState {
	qs := r.Script.Questions
	var stops []quizStop
	for k := 0; k <= len(r.Script.Steps); k++ {
		ev := r.Len() - 1
		if k < len(r.Steps) {
			ev = max(r.Steps[k].First-1, 0)
		}
		for i, q := range qs {
			if q.Reveal == k {
				stops = append(stops, quizStop{reveal: true, q: i, event: ev})
			}
		}
		for i, q := range qs {
			if q.Step == k {
				stops = append(stops, quizStop{q: i, event: ev})
			}
		}
	}
	return quizState{stops: stops, picks: make([]string, len(qs))}
}

// quizOn reports a quiz still under way. Its keys act on the original run only (key).
func (m Model) quizOn() bool { return m.opts.Quiz && m.quiz.at < len(m.quiz.stops) }

// QuizResults are the learner's results so far, in the order the answers were revealed.
func (m Model) QuizResults() []QuizResult {
	var out []QuizResult
	for _, st := range m.quiz.stops[:m.quiz.at] {
		if !st.reveal {
			continue
		}
		q := m.runs[0].Script.Questions[st.q]
		given, correct := m.quiz.picks[st.q], m.runs[0].Answers[st.q].Value
		out = append(out, QuizResult{Question: q, Given: given, Correct: correct, Right: given == correct})
	}
	return out
}

// quizKey handles a key while a quiz is under way; handled is false for the keys the
// quiz leaves to the TUI (stepping, panes, quitting ...).
func (m Model) quizKey(msg tea.KeyPressMsg) (Model, tea.Cmd, bool) {
	st := m.quiz.stops[m.quiz.at]
	k := msg.String()
	switch {
	case k == "enter" && m.Pos() != st.event:
		m.moveTo(st.event) // back to the question after looking around
		return m, nil, true
	case !st.reveal && len(k) == 1 && k[0] >= 'a' && int(k[0]-'a') < len(m.Run().Script.Questions[st.q].Choices):
		m.quiz.picks = slices.Clone(m.quiz.picks)
		m.quiz.picks[st.q] = m.Run().Script.Questions[st.q].Choices[k[0]-'a']
		return m.quizNext(), nil, true
	case !st.reveal && k == "enter" && m.opts.Presenter:
		return m.quizNext(), nil, true
	case st.reveal && k == "enter" && m.opts.Presenter && !m.quiz.shown:
		m.quiz.shown = true
		return m, nil, true
	case st.reveal && k == "enter":
		return m.quizNext(), nil, true
	}
	return m, nil, false
}

// quizNext goes to the next stop.
func (m Model) quizNext() Model {
	m.quiz.at++
	m.quiz.shown = false
	if m.quiz.at < len(m.quiz.stops) {
		m.moveTo(m.quiz.stops[m.quiz.at].event)
	}
	return m
}

// quizLines is the quiz box above the panes, w wide.
func (m Model) quizLines(w int) []string {
	if !m.opts.Quiz {
		return nil
	}
	r := m.runs[0] // the quiz is the original run's: a fork has its own steps

	wrap := func(s string) []string { return strings.Split(ansi.Wordwrap(s, max(w-2, 10), ""), "\n") }
	var text []string
	if m.quiz.at >= len(m.quiz.stops) {
		res := m.QuizResults()
		right := 0
		for _, x := range res {
			if x.Right {
				right++
			}
		}
		text = append(text, fmt.Sprintf("Quiz over: %d of %d right. q quits; the run stays to explore.", right, len(res)))
		return m.quizBox(w, "Quiz", text)
	}
	st := m.quiz.stops[m.quiz.at]
	q := r.Script.Questions[st.q]
	title := fmt.Sprintf("Quiz · question %d of %d · %s", st.q+1, len(r.Script.Questions), q.Concept)
	if !st.reveal {
		text = append(text, wrap(q.Text)...)
		var cs []string
		for n, c := range q.Choices {
			cs = append(cs, fmt.Sprintf("%c) %s", 'a'+n, c))
		}
		text = append(text, wrap(strings.Join(cs, "   "))...)
		hint := fmt.Sprintf("press a-%c to answer", 'a'+len(q.Choices)-1)
		if m.opts.Presenter {
			hint = "ask the room; enter goes on (or a letter for the room's pick)"
		}
		text = append(text, m.st.dim.Render(hint))
		return m.quizBox(w, title, text)
	}
	if m.opts.Presenter && !m.quiz.shown {
		text = append(text, wrap(q.Text)...)
		text = append(text, m.st.dim.Render("the run has decided: enter reveals the answer"))
		return m.quizBox(w, title, text)
	}
	a := r.Answers[st.q]
	given := m.quiz.picks[st.q]
	verdict := "right"
	if given != a.Value {
		verdict = "wrong"
	}
	line := fmt.Sprintf("Answer: %s. You said %s: %s.", a.Value, given, verdict)
	if given == "" {
		line = fmt.Sprintf("Answer: %s.", a.Value)
	}
	text = append(text, wrap(line)...)
	if !a.Among {
		text = append(text, m.st.warn.Render(" none of the choices: they were written for the run without --set"))
	}
	if i := r.EventAtStep(a.Step); i >= 0 {
		sp := r.Steps[r.StepOf(i)].Step
		text = append(text, wrap(fmt.Sprintf("Decided at step %d, during %s: %s", a.Step, sp.Pos(), sp.Text))...)
	}
	if len(q.Explanation) > 0 {
		text = append(text, wrap("Why: "+strings.Join(q.Explanation, " "))...)
	}
	text = append(text, m.st.dim.Render("enter goes on"))
	return m.quizBox(w, title, text)
}

// quizBox frames the quiz's lines under a title rule, as the panes are.
func (m Model) quizBox(w int, title string, text []string) []string {
	lines := []string{m.st.title.Render("── " + title + " " + strings.Repeat("─", max(w-ansi.StringWidth(title)-4, 0)))}
	for _, l := range text {
		lines = append(lines, " "+l)
	}
	return lines
}
