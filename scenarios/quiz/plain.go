package quiz

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"mqsim/scenarios/script"
)

// MaxTries bounds how often the plain mode asks one question again after an answer that
// is not among its choices.
const MaxTries = 3

// Result is how a learner did on one question.
type Result struct {
	Script   string
	Question script.Question
	Given    string
	Correct  string
	Right    bool
}

// Plain plays the session in a terminal without a TUI: the transcript as it runs, each
// question with its numbered choices, one answer read per line of in, and once the run
// decides it, right or wrong, the run's answer, the step that decided it and the
// explanation. It returns the results in the order the answers were revealed.
func Plain(s *Session, in *bufio.Reader, out io.Writer) ([]Result, error) {
	given := map[int]string{}
	var results []Result
	for first := true; ; first = false {
		stop, err := s.Next()
		if err != nil {
			return results, err
		}
		if stop.Played != "" {
			if !first {
				fmt.Fprintln(out)
			}
			fmt.Fprint(out, stop.Played)
		}
		for _, i := range stop.Reveal {
			res := s.Result(i, given[i])
			results = append(results, res)
			fmt.Fprint(out, "\n"+s.RevealText(i, res))
		}
		for _, i := range stop.Ask {
			fmt.Fprint(out, "\n"+s.AskText(i))
			pick, err := readChoice(s.Script.Questions[i], in, out)
			if err != nil {
				return results, fmt.Errorf("question %d: %w", i+1, err)
			}
			given[i] = pick
			fmt.Fprintf(out, "noted: %s. The run goes on to the point that decides it.\n", pick)
		}
		if stop.Done {
			return results, nil
		}
	}
}

// readChoice reads lines until one is a choice, at most MaxTries times.
func readChoice(q script.Question, in *bufio.Reader, out io.Writer) (string, error) {
	for try := 1; ; try++ {
		fmt.Fprint(out, "your answer: ")
		line, err := in.ReadString('\n')
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			if errors.Is(err, io.EOF) {
				return "", fmt.Errorf("the input ended before an answer")
			}
			return "", err
		}
		fmt.Fprintln(out, strings.TrimSpace(line))
		pick, cerr := Choose(q, line)
		if cerr == nil {
			return pick, nil
		}
		if try == MaxTries {
			return "", fmt.Errorf("no answer among the choices after %d tries (%v)", MaxTries, cerr)
		}
		fmt.Fprintf(out, "%v\n", cerr)
	}
}

// AskText is question i as the quiz asks it, with numbered choices.
func (s *Session) AskText(i int) string {
	q := s.Script.Questions[i]
	var b strings.Builder
	fmt.Fprintf(&b, "Question %d of %d (%s): %s\n", i+1, len(s.Script.Questions), q.Concept, q.Text)
	for n, c := range q.Choices {
		fmt.Fprintf(&b, "  %s) %s\n", Letter(n), c)
	}
	return b.String()
}

// Result is how the learner did on revealed question i, having answered given.
func (s *Session) Result(i int, given string) Result {
	correct := s.Answers[i].Value
	return Result{Script: s.Script.Name, Question: s.Script.Questions[i], Given: given, Correct: correct, Right: given == correct}
}

// RevealText shows revealed question i: right or wrong, the run's answer, the step that
// decided it and the explanation.
func (s *Session) RevealText(i int, res Result) string {
	var b strings.Builder
	verdict := "wrong"
	if res.Right {
		verdict = "right"
	}
	fmt.Fprintf(&b, "Answer %d: %s. You said %s: %s.\n", i+1, res.Correct, res.Given, verdict)
	a := s.Answers[i]
	if st, ok := s.DecidedBy(a.Step); ok {
		fmt.Fprintf(&b, "Decided at step %d, during %s: %s\n", a.Step, st.Pos(), st.Text)
	}
	if !a.Among {
		fmt.Fprintf(&b, "None of the choices: they were written for the scenario as written, and this run has --set %s.\n", strings.Join(s.Opts.Set, " "))
	} else if len(s.Opts.Set) > 0 {
		fmt.Fprintf(&b, "This run has --set %s: the scenario as written may answer otherwise.\n", strings.Join(s.Opts.Set, " "))
	}
	if len(res.Question.Explanation) > 0 {
		fmt.Fprintf(&b, "Why: %s\n", strings.Join(res.Question.Explanation, " "))
	}
	return b.String()
}
