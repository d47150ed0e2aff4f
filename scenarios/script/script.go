package script

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"
)

// Step is one command of a script with its narration, input block and expected output.
type Step struct {
	File string // the script's name, for positions
	Line int    // line of the command, from 1
	// Narration is the comment lines just before the command, without "# ".
	Narration []string
	Cmd       string
	Args      []datadriven.CmdArg
	// Text is the command line as written (continuations joined).
	Text string
	// Input is the block between the command and "----".
	Input string
	// Expected is the output written after "----"; HasExpected says whether there was one.
	Expected    string
	HasExpected bool
}

// Pos is "file:line".
func (s Step) Pos() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Script is a parsed scenario file.
type Script struct {
	Name  string
	Steps []Step
	// Description is the first narration line of the file: what the scenario shows.
	Description string
	// Fix is the settings that make the scenario's anomaly go away, from a narration line
	// "fix: KEY=VALUE ...": `mqsim run --fix` applies them to the cluster command, and a
	// test checks that the checkers then find nothing.
	Fix []string
	// Tags are the concepts the scenario teaches, from a narration line "tags: a, b".
	Tags []string
	// Questions are the predictions the file asks of its reader ("ask: ..." lines), in
	// file order (ask.go).
	Questions []Question
}

// Parse reads a scenario file. It follows datadriven's rules (comments start with #, a
// command line may continue with a trailing \, "----" separates input from output, and an
// output with blank lines is fenced by "----" twice) and also keeps the narration.
func Parse(name, text string) (*Script, error) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r") // files written on Windows read the same
	}
	s := &Script{Name: name}
	var narration []string
	explaining := -1 // the question whose explanation the narration continues, or -1
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "#") {
			c := strings.TrimSpace(strings.TrimPrefix(line, "#"))
			narration = append(narration, c)
			var err error
			if explaining, err = s.question(c, fmt.Sprintf("%s:%d", name, i+1), explaining); err != nil {
				return nil, err
			}
			if fix, ok := strings.CutPrefix(c, fixPrefix); ok {
				s.Fix = strings.Fields(fix)
			}
			if tags, ok := strings.CutPrefix(c, tagsPrefix); ok {
				for _, t := range strings.Split(tags, ",") {
					if t = strings.TrimSpace(t); t != "" {
						s.Tags = append(s.Tags, t)
					}
				}
			}
			if s.Description == "" && c != "" {
				s.Description = c
			}
			continue
		}
		explaining = -1
		if line == "" {
			if len(narration) > 0 {
				narration = append(narration, "")
			}
			continue
		}
		step := Step{File: name, Line: i + 1, Narration: trimBlank(narration)}
		narration = nil
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		line = strings.TrimSpace(line)
		if strings.HasSuffix(line, `\`) {
			return nil, fmt.Errorf("%s: a line continuation \\ with no line after it", step.Pos())
		}
		if line == "----" {
			return nil, fmt.Errorf("%s: \"----\" without a command before it", step.Pos())
		}
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", step.Pos(), err)
		}
		if cmd == "" {
			return nil, fmt.Errorf("%s: empty command line", step.Pos())
		}
		if err := noRepeatedKeys(cmd, args); err != nil {
			return nil, fmt.Errorf("%s: %v", step.Pos(), err)
		}
		step.Cmd, step.Args, step.Text = cmd, args, line
		var input []string
		for i+1 < len(lines) && !isSep(lines[i+1]) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			input = append(input, lines[i])
		}
		step.Input = strings.TrimSpace(strings.Join(input, "\n"))
		if i+1 >= len(lines) || !isSep(lines[i+1]) {
			return nil, fmt.Errorf("%s: %q needs a \"----\" line after it (and its expected output, if any)", step.Pos(), cmd)
		}
		{
			i++
			step.HasExpected = true
			var out []string
			if i+1 < len(lines) && isSep(lines[i+1]) {
				// Fenced output: runs until "----" twice.
				i++
				closed := false
				for i+1 < len(lines) {
					i++
					if isSep(lines[i]) && i+1 < len(lines) && isSep(lines[i+1]) {
						i++
						closed = true
						break
					}
					out = append(out, lines[i])
				}
				if !closed {
					return nil, fmt.Errorf("%s: output fenced by \"----\" twice is not closed by \"----\" twice", step.Pos())
				}
			} else {
				for i+1 < len(lines) && lines[i+1] != "" {
					i++
					out = append(out, lines[i])
				}
			}
			if len(out) > 0 {
				step.Expected = strings.Join(out, "\n") + "\n"
			}
		}
		s.Steps = append(s.Steps, step)
	}
	if len(s.Steps) == 0 {
		return nil, fmt.Errorf("%s: no commands: a scenario needs at least one (e.g. \"cluster brokers=3\" followed by a \"----\" line)", name)
	}
	for i, q := range s.Questions {
		if q.Step >= len(s.Steps) {
			return nil, fmt.Errorf("%s: ask: no command follows the question; a question is asked before a command runs", q.Pos)
		}
		if q.Reveal < 0 {
			s.Questions[i].Reveal = len(s.Steps)
		}
	}
	return s, nil
}

// noRepeatedKeys refuses a key given twice on one command line ("brokers=3 brokers=5"):
// which one should win is a guess, so neither does.
func noRepeatedKeys(cmd string, args []datadriven.CmdArg) error {
	for i, a := range args {
		if a.Vals == nil {
			continue // a bare word (a node name, "->"): these may repeat
		}
		for _, b := range args[:i] {
			if b.Vals != nil && b.Key == a.Key {
				return fmt.Errorf("%s: %s= is given twice; give it once", cmd, a.Key)
			}
		}
	}
	return nil
}

// isSep reports a "----" separator line (trailing blanks forgiven).
func isSep(line string) bool { return strings.TrimSpace(line) == "----" }

func trimBlank(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Format renders a step the way a scenario file writes it, with the given output.
func (s Step) Format(output string) string {
	var b strings.Builder
	for _, n := range s.Narration {
		if n == "" {
			b.WriteString("#\n")
			continue
		}
		b.WriteString("# " + n + "\n")
	}
	b.WriteString(s.Text + "\n")
	if s.Input != "" {
		b.WriteString(s.Input + "\n")
	}
	b.WriteString("----\n")
	if output != "" && !strings.HasSuffix(output, "\n") {
		output += "\n"
	}
	if strings.Contains("\n"+output, "\n\n") {
		b.WriteString("----\n" + output + "----\n----\n")
	} else {
		b.WriteString(output)
	}
	return b.String()
}

// The narration lines that carry settings of the file rather than prose.
const (
	fixPrefix  = "fix:"
	tagsPrefix = "tags:"
)

// IsSetting reports whether a narration line carries a setting of the file ("fix: ...",
// "tags: ...", "ask: ...", "reveal") rather than prose, so that a view reflowing the prose
// keeps it apart.
func IsSetting(line string) bool {
	return strings.HasPrefix(line, fixPrefix) || strings.HasPrefix(line, tagsPrefix) ||
		strings.HasPrefix(line, askPrefix) || line == revealLine
}

// question reads one narration line c at pos for the questions: an ask line starts a
// question (whose explanation the next lines are), a reveal line sets where the questions
// asked before it are answered, a blank or setting line ends an explanation. It returns
// the question whose explanation continues, or -1.
func (s *Script) question(c, pos string, explaining int) (int, error) {
	step := len(s.Steps) // the command this narration comes before
	switch {
	case strings.HasPrefix(c, askPrefix):
		q, err := ParseAsk(strings.TrimSpace(strings.TrimPrefix(c, askPrefix)))
		if err != nil {
			return -1, fmt.Errorf("%s: %v", pos, err)
		}
		q.Pos, q.Step, q.Reveal = pos, step, -1
		s.Questions = append(s.Questions, q)
		return len(s.Questions) - 1, nil
	case c == revealLine:
		revealed := 0
		for i := range s.Questions {
			if q := &s.Questions[i]; q.Reveal < 0 && q.Step < step && !q.Answer.ReadsVerdict() {
				q.Reveal = step
				revealed++
			}
		}
		if revealed == 0 {
			return -1, fmt.Errorf("%s: reveal: no question asked before an earlier command is waiting for its answer (one that reads the verdict, anomaly() or violations(), waits for the end of the run)", pos)
		}
		return -1, nil
	case endsExplanation(c):
		return -1, nil
	case explaining >= 0:
		s.Questions[explaining].Explanation = append(s.Questions[explaining].Explanation, c)
	}
	return explaining, nil
}

// endsExplanation reports a narration line that ends a question's explanation: a blank
// line or another setting.
func endsExplanation(c string) bool { return c == "" || IsSetting(c) }

// Prose is a step's narration without its questions: the ask lines, their explanations
// and the reveal lines left out, so that a quiz can show the narration before the
// reader answers.
func Prose(narration []string) []string {
	var out []string
	inAsk := false
	for _, c := range narration {
		switch {
		case strings.HasPrefix(c, askPrefix):
			inAsk = true
			continue
		case c == revealLine:
			inAsk = false
			continue
		case endsExplanation(c):
			inAsk = false
		case inAsk:
			continue
		}
		if c == "" && len(out) == 0 {
			continue // a question's block was the narration's start
		}
		out = append(out, c)
	}
	return trimBlank(out)
}
