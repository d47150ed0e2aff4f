// Package quiz plays a scenario as a quiz: the run goes step by step to each question a
// scenario asks (script.Question), stops so that the learner predicts the outcome, goes
// on to the point that decides it, and shows the answer the run computed
// (runner.Runner.Evaluate), the explanation and the step that decided it. A Session never
// blocks: it stops and returns, so the plain mode (Plain, for a terminal without a TUI and
// for tests) and the TUI drive the same session. Progress per concept is kept in the
// user's config directory (progress.go).
package quiz

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// Session is one scenario played as a quiz.
type Session struct {
	Script *script.Script
	Opts   runner.Options
	r      *runner.Runner
	next   int      // the index of the next step to run
	ends   []uint64 // the kernel step count once each step had run
	// Answers are the answers the run computed, by question index, once revealed.
	Answers  []runner.Answer
	revealed []bool
	stopped  int // the step index a stop was last made before, -1 for none
	done     bool
}

// Stop is where a session stops for the learner.
type Stop struct {
	// Played is the transcript of the steps run since the previous stop, with their
	// narration's prose only (questions and explanations left out).
	Played string
	// Reveal are the questions whose answers were computed at this point.
	Reveal []int
	// Ask are the questions to ask now: their step has not run.
	Ask []int
	// Done says the run is over and every answer shown.
	Done bool
}

// New starts a quiz of s under opts (--fix or --set give the same questions, answered
// again by the changed run).
func New(s *script.Script, opts runner.Options) (*Session, error) {
	if err := runner.Check(s); err != nil {
		return nil, err
	}
	if len(s.Questions) == 0 {
		return nil, fmt.Errorf("%s asks no questions; the scenarios that do: %s", s.Name, strings.Join(Quizzes(), ", "))
	}
	return &Session{Script: s, Opts: opts, r: runner.NewRunner(opts),
		Answers: make([]runner.Answer, len(s.Questions)), revealed: make([]bool, len(s.Questions)), stopped: -1}, nil
}

// Runner is the session's run.
func (s *Session) Runner() *runner.Runner { return s.r }

// Next runs steps until the next stop: answers to reveal (computed before the step they
// are revealed at runs, or after the last step), questions to ask (before their step
// runs), or the end.
func (s *Session) Next() (Stop, error) {
	var stop Stop
	var played strings.Builder
	for {
		k := s.next
		if s.stopped != k {
			s.stopped = k
			revealed, err := s.r.Reveal(s.Script, k, s.Answers)
			if err != nil {
				return stop, err
			}
			for _, i := range revealed {
				s.revealed[i] = true
			}
			stop.Reveal = revealed
			for i, q := range s.Script.Questions {
				if q.Step == k {
					stop.Ask = append(stop.Ask, i)
				}
			}
		}
		if k == len(s.Script.Steps) {
			s.done = true
			stop.Done = true
		}
		if stop.Done || len(stop.Reveal) > 0 || len(stop.Ask) > 0 {
			stop.Played = played.String()
			return stop, nil
		}
		st := s.Script.Steps[k]
		out, err := s.r.Exec(st)
		if err != nil {
			return stop, err
		}
		s.next++
		s.ends = append(s.ends, s.r.World().Steps())
		prose := st
		prose.Narration = script.Prose(st.Narration)
		if played.Len() > 0 {
			played.WriteString("\n")
		}
		played.WriteString(prose.Format(out))
	}
}

// Done reports whether the run is over.
func (s *Session) Done() bool { return s.done }

// DecidedBy is the scenario step during which kernel step k ran (ok false before any).
func (s *Session) DecidedBy(k uint64) (script.Step, bool) {
	i, _ := slices.BinarySearch(s.ends, k)
	if i >= len(s.ends) || k == 0 {
		return script.Step{}, false
	}
	return s.Script.Steps[i], true
}

// Choose reads a learner's pick for q: a choice as written (case and blanks aside) or
// its letter (a for the first). The text wins, so a choice "b" is never taken for the
// second; letters rather than numbers, so that a choice "2" is never taken for the second.
func Choose(q script.Question, input string) (string, error) {
	in := strings.Join(strings.Fields(input), " ")
	for _, c := range q.Choices {
		if strings.EqualFold(c, in) {
			return c, nil
		}
	}
	if len(in) == 1 {
		if i := int(strings.ToLower(in)[0]) - 'a'; i >= 0 && i < len(q.Choices) {
			return q.Choices[i], nil
		}
	}
	want := fmt.Sprintf("type a letter from a to %c or a choice as written", 'a'+len(q.Choices)-1)
	if in == "" {
		return "", fmt.Errorf("no answer given: %s", want)
	}
	return "", fmt.Errorf("%q is not among the choices: %s", in, want)
}

// Letter is the letter of choice n (from 0).
func Letter(n int) string { return string(rune('a' + n)) }

// Answer is one answer a learner gave.
type Answer struct {
	Question int
	Given    string
}

// Right reports whether the learner's answer is the run's (once revealed).
func (s *Session) Right(a Answer) bool {
	return s.revealed[a.Question] && s.Answers[a.Question].Value == a.Given
}
