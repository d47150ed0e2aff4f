package script

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/checker"
)

// Question is a prediction a scenario asks of its reader, from a narration line
//
//	# ask: Is "lost" readable at the end? choices=(yes, no) answer=read(lost) concept=acks
//	# Why: the narration lines right after the question explain the answer.
//
// Its answer is never typed by the author: it is an expression (Expr) that the runner
// evaluates against the run's typed state and its verdict, so the answer follows the
// model when the model changes, and under --fix or --set it is computed again.
type Question struct {
	// Pos is the "file:line" of the ask line.
	Pos  string
	Text string
	// Choices are what the reader picks from; the computed answer must be one of them.
	Choices []string
	Answer  Expr
	// Concept is the concept the question practises: a note of notes/ by its name
	// without ".md" (acks, isr, consumer-groups ...).
	Concept string
	// Explanation is the narration right after the ask line, up to a blank narration
	// line: shown once the answer is.
	Explanation []string
	// Step is the index in Script.Steps of the step the question is asked before:
	// that step and the ones after it have not run when the reader answers.
	Step int
	// Reveal is the index of the step before which the answer is computed and shown:
	// the step whose narration holds the first "reveal" line after the question, or
	// len(Script.Steps) (the end of the run) when no such line follows or when the
	// answer reads the run's verdict (Expr.ReadsVerdict), which is judged at the end.
	Reveal int
}

// Expr is an answer expression: a call NAME(ARG, ...), a word, or (as an argument
// only) KEY=WORD. The grammar:
//
//	expr := word | name "(" [arg {sep arg}] ")"
//	arg  := expr | key "=" word
//	sep  := "," or blanks
//	word := letters, digits and - _ . / : (a value, a partition t/0, a broker b1)
//
// The functions and their arguments are listed in Functions.
type Expr struct {
	// Func is the function called; "" for a word.
	Func string
	// Word is the literal (Func == ""); with Key set it is the value of KEY=WORD.
	Word string
	Key  string
	Args []Expr
}

// String writes the expression back the way a scenario writes it.
func (e Expr) String() string {
	switch {
	case e.Key != "":
		return e.Key + "=" + e.Word
	case e.Func == "":
		return e.Word
	}
	args := make([]string, len(e.Args))
	for i, a := range e.Args {
		args[i] = a.String()
	}
	return e.Func + "(" + strings.Join(args, ", ") + ")"
}

// ReadsVerdict reports whether the expression calls a function that reads the run's
// verdict (anomaly, violations): its question is answered at the end of the run.
func (e Expr) ReadsVerdict() bool {
	if f, ok := FunctionNamed(e.Func); ok && f.Verdict {
		return true
	}
	for _, a := range e.Args {
		if a.ReadsVerdict() {
			return true
		}
	}
	return false
}

// ArgKind is what a function's argument must be.
type ArgKind int

const (
	// ArgTP is a topic partition "t/0".
	ArgTP ArgKind = iota
	// ArgWord is any word: a value, a broker, a group, a choice.
	ArgWord
	// ArgAnomaly is an anomaly name a checker reports (lost-write, duplicate ...).
	ArgAnomaly
	// ArgCond is an expression answering yes or no (a function with Yes set).
	ArgCond
	// ArgAny is a word or any expression.
	ArgAny
	// ArgWhat is what count counts: read or acked.
	ArgWhat
)

// Function is one function of the answer grammar: the runner evaluates it.
type Function struct {
	Name string
	// Args are the positional arguments; Optional of them, at the end, may be left out.
	Args     []ArgKind
	Optional int
	// Keys are the KEY=WORD arguments it accepts.
	Keys []string
	// Yes says it answers yes or no (so it may be if's condition).
	Yes bool
	// Verdict says it reads the run's verdict: a question that calls it is answered at
	// the end of the run, where the verdict is judged, whatever reveal lines say.
	Verdict bool
	Help    string
}

// Functions are the answer grammar's functions, documented in the scenario format
// (doc.go) and evaluated by scenarios/runner (answer.go).
var Functions = []Function{
	{Name: "leader", Args: []ArgKind{ArgTP}, Help: "the broker that leads the partition, as the controller has it (none when offline)"},
	{Name: "epoch", Args: []ArgKind{ArgTP}, Help: "the partition's leader epoch, as the controller has it"},
	{Name: "isr", Args: []ArgKind{ArgTP}, Help: "the partition's in-sync replicas, sorted and separated by blanks (b1 b2 b3)"},
	{Name: "hw", Args: []ArgKind{ArgTP, ArgWord}, Optional: 1, Help: "the high watermark of the leader's replica, or of the named broker's"},
	{Name: "leo", Args: []ArgKind{ArgTP, ArgWord}, Optional: 1, Help: "the log end offset of the leader's replica, or of the named broker's"},
	{Name: "read", Args: []ArgKind{ArgWord}, Yes: true, Help: "yes when an ok poll (or queue delivery) returned the value, else no"},
	{Name: "acked", Args: []ArgKind{ArgWord}, Yes: true, Help: "yes when the send of the value completed ok, else no"},
	{Name: "count", Args: []ArgKind{ArgWhat}, Keys: []string{"value", "partition"}, Help: "count(read) records returned by ok polls (each delivery counts), count(acked) sends completed ok; value= and partition= narrow it"},
	{Name: "anomaly", Args: []ArgKind{ArgAnomaly}, Yes: true, Verdict: true, Help: "yes when the run's verdict found the anomaly (a failure or one the settings allow), else no"},
	{Name: "violations", Verdict: true, Help: "how many violations the run's verdict holds"},
	{Name: "dead-lettered", Args: []ArgKind{ArgWord}, Help: "how many messages the queue has dead-lettered: to its dead-letter exchange (RabbitMQ) or redriven to its dead-letter queue (SQS)"},
	{Name: "generation", Args: []ArgKind{ArgWord}, Help: "the group's generation at its coordinator (-1 with no coordinator)"},
	{Name: "if", Args: []ArgKind{ArgCond, ArgAny, ArgAny}, Help: "if(COND, A, B): A when COND answers yes, else B"},
}

// FunctionNamed returns the grammar's function of that name.
func FunctionNamed(name string) (Function, bool) {
	i := slices.IndexFunc(Functions, func(f Function) bool { return f.Name == name })
	if i < 0 {
		return Function{}, false
	}
	return Functions[i], true
}

func functionNames() string {
	names := make([]string, len(Functions))
	for i, f := range Functions {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// The narration lines that ask and reveal.
const (
	askPrefix  = "ask:"
	revealLine = "reveal"
)

// ParseAsk reads the text after "ask:": the question, then choices=(A, B, ...),
// answer=EXPR and concept=NAME, each once, in any order.
func ParseAsk(text string) (Question, error) {
	var q Question
	text = " " + text // so that a key at the start is found as " key="
	start := len(text)
	for _, k := range []string{"choices=", "answer=", "concept="} {
		if i := strings.Index(text, " "+k); i >= 0 && i < start {
			start = i
		}
	}
	q.Text = strings.TrimSpace(text[:start])
	if q.Text == "" {
		return q, fmt.Errorf("ask: the question is missing; want: ask: QUESTION choices=(A, B) answer=EXPR concept=NAME")
	}
	fields, err := splitTop(text[start:])
	if err != nil {
		return q, fmt.Errorf("ask: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || v == "" {
			return q, fmt.Errorf("ask: %q: want KEY=VALUE (choices=, answer=, concept=) after the question", f)
		}
		if seen[k] {
			return q, fmt.Errorf("ask: %s= is given twice; give it once", k)
		}
		seen[k] = true
		switch k {
		case "choices":
			if q.Choices, err = parseChoices(v); err != nil {
				return q, fmt.Errorf("ask: choices=%s: %v", v, err)
			}
		case "answer":
			if q.Answer, err = ParseExpr(v); err != nil {
				return q, fmt.Errorf("ask: answer=%s: %v", v, err)
			}
		case "concept":
			if !isWord(v) {
				return q, fmt.Errorf("ask: concept=%s: want a note's name such as acks or consumer-groups", v)
			}
			q.Concept = v
		default:
			return q, fmt.Errorf("ask: unknown key %s=; want choices=, answer= and concept=", k)
		}
	}
	for _, k := range []string{"choices", "answer", "concept"} {
		if !seen[k] {
			return q, fmt.Errorf("ask: %s= is missing; want: ask: QUESTION choices=(A, B) answer=EXPR concept=NAME", k)
		}
	}
	if len(q.Answer.Args) == 0 && q.Answer.Func == "" {
		return q, fmt.Errorf("ask: answer=%s is a word: an answer is computed from the run, never typed (want one of %s)", q.Answer.Word, functionNames())
	}
	return q, nil
}

// splitTop splits s at blanks outside parentheses.
func splitTop(s string) ([]string, error) {
	var out []string
	depth, cur := 0, ""
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			if depth--; depth < 0 {
				return nil, fmt.Errorf("a \")\" without its \"(\"")
			}
		case (r == ' ' || r == '\t') && depth == 0:
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(r)
	}
	if depth != 0 {
		return nil, fmt.Errorf("a \"(\" is not closed")
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out, nil
}

func parseChoices(v string) ([]string, error) {
	inner, opened := strings.CutPrefix(v, "(")
	inner, closed := strings.CutSuffix(inner, ")")
	if !opened || !closed {
		return nil, fmt.Errorf("want a list in parentheses, (A, B, ...)")
	}
	var cs []string
	for _, c := range strings.Split(inner, ",") {
		c = strings.Join(strings.Fields(c), " ")
		if c == "" {
			return nil, fmt.Errorf("an empty choice")
		}
		if slices.Contains(cs, c) {
			return nil, fmt.Errorf("choice %q is given twice", c)
		}
		cs = append(cs, c)
	}
	if len(cs) < 2 {
		return nil, fmt.Errorf("want at least two choices")
	}
	return cs, nil
}

// ParseExpr reads an answer expression and checks each call against Functions.
func ParseExpr(s string) (Expr, error) {
	p := exprParser{s: s}
	e, err := p.expr()
	if err != nil {
		return e, err
	}
	if p.i < len(p.s) {
		return e, fmt.Errorf("unexpected %q after %s", p.s[p.i:], e)
	}
	return e, nil
}

type exprParser struct {
	s string
	i int
}

func (p *exprParser) word() string {
	j := p.i
	for j < len(p.s) && isWordByte(p.s[j]) {
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

func (p *exprParser) skipBlanks() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *exprParser) expr() (Expr, error) {
	p.skipBlanks()
	w := p.word()
	if w == "" {
		if p.i >= len(p.s) {
			return Expr{}, fmt.Errorf("an expression ends too early")
		}
		return Expr{}, fmt.Errorf("want a word or NAME(...) at %q", p.s[p.i:])
	}
	if p.i >= len(p.s) || p.s[p.i] != '(' {
		return Expr{Word: w}, nil
	}
	f, ok := FunctionNamed(w)
	if !ok {
		return Expr{}, fmt.Errorf("unknown function %s; want one of %s", w, functionNames())
	}
	p.i++ // (
	e := Expr{Func: w}
	for {
		p.skipBlanks()
		if p.i < len(p.s) && p.s[p.i] == ')' {
			p.i++
			break
		}
		if len(e.Args) > 0 && p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			p.skipBlanks()
		}
		if p.i >= len(p.s) {
			return e, fmt.Errorf("%s( is not closed by )", w)
		}
		a, err := p.expr()
		if err != nil {
			return e, err
		}
		if a.Func == "" && p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			v := p.word()
			if v == "" {
				return e, fmt.Errorf("%s(%s=): want a word after =", w, a.Word)
			}
			a = Expr{Key: a.Word, Word: v}
		}
		e.Args = append(e.Args, a)
	}
	return e, checkCall(f, e)
}

// checkCall checks a call's arguments against its function.
func checkCall(f Function, e Expr) error {
	usage := f.Name + "(" + argNames(f) + ")"
	var pos []Expr
	for _, a := range e.Args {
		if a.Key == "" {
			pos = append(pos, a)
			continue
		}
		if !slices.Contains(f.Keys, a.Key) {
			return fmt.Errorf("%s: unknown argument %s=; usage: %s", e, a.Key, usage)
		}
	}
	if len(pos) < len(f.Args)-f.Optional || len(pos) > len(f.Args) {
		return fmt.Errorf("%s: want %s", e, usage)
	}
	for i, a := range pos {
		if err := checkArg(f.Args[i], a); err != nil {
			return fmt.Errorf("%s: argument %d: %v; usage: %s", e, i+1, err, usage)
		}
	}
	return nil
}

func checkArg(k ArgKind, a Expr) error {
	switch k {
	case ArgAny:
		return nil
	case ArgCond:
		if f, ok := FunctionNamed(a.Func); ok && f.Yes {
			return nil
		}
		return fmt.Errorf("%s does not answer yes or no; want one of read, acked, anomaly", a)
	}
	if a.Func != "" {
		return fmt.Errorf("%s: want a word here, not a call", a)
	}
	switch k {
	case ArgTP:
		if _, _, ok := SplitTP(a.Word); !ok {
			return fmt.Errorf("%q: want a partition TOPIC/N such as t/0", a.Word)
		}
	case ArgAnomaly:
		if _, err := checker.ParseAnomaly(a.Word); err != nil {
			return err
		}
	case ArgWhat:
		if a.Word != "read" && a.Word != "acked" {
			return fmt.Errorf("%q: want read or acked", a.Word)
		}
	}
	return nil
}

func argNames(f Function) string {
	names := map[ArgKind]string{ArgTP: "TOPIC/N", ArgWord: "WORD", ArgAnomaly: "ANOMALY", ArgCond: "COND", ArgAny: "A", ArgWhat: "read|acked"}
	var s []string
	for i, k := range f.Args {
		n := names[k]
		if f.Name == "if" && i == 2 {
			n = "B"
		}
		if i >= len(f.Args)-f.Optional {
			n = "[" + n + "]"
		}
		s = append(s, n)
	}
	for _, k := range f.Keys {
		s = append(s, "["+k+"=WORD]")
	}
	return strings.Join(s, ", ")
}

// SplitTP reads "TOPIC/N".
func SplitTP(s string) (topic string, partition int32, ok bool) {
	t, n, found := strings.Cut(s, "/")
	if !found || t == "" || n == "" || len(n) > 6 {
		return "", 0, false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		partition = partition*10 + int32(c-'0')
	}
	return t, partition, true
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '/' || c == ':'
}

func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return s != ""
}
