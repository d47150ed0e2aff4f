package script

import (
	"slices"
	"strings"
	"testing"
)

const askFile = `# header
cluster brokers=3
----

# ask: Who leads? choices=(b1, b2) answer=leader(t/0) concept=leader-election
# The controller elects b2.
#
# Prose after the question.
crash b1
----

# ask: Lost? choices=(yes, no) answer=if(anomaly(lost-write), yes, no) concept=acks
run for=1s
----

# reveal
# ask: HW? choices=(1, 2) answer=hw(t/0, b2) concept=high-watermark
show partitions
----

check
----
`

// An ask line becomes a Question with its explanation (the lines up to a blank one), the
// step it is asked before, and where it is answered: at the next reveal line, or at the
// end of the run when none follows or when the answer reads the verdict.
func TestParseQuestions(t *testing.T) {
	s, err := Parse("f.txt", askFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Questions) != 3 {
		t.Fatalf("got %d questions", len(s.Questions))
	}
	q := s.Questions[0]
	if q.Pos != "f.txt:5" || q.Text != "Who leads?" || !slices.Equal(q.Choices, []string{"b1", "b2"}) ||
		q.Answer.String() != "leader(t/0)" || q.Concept != "leader-election" || q.Step != 1 || q.Reveal != 3 {
		t.Errorf("question 1: %+v", q)
	}
	if !slices.Equal(q.Explanation, []string{"The controller elects b2."}) {
		t.Errorf("explanation %q", q.Explanation)
	}
	if v := s.Questions[1]; v.Step != 2 || v.Reveal != 5 || !v.Answer.ReadsVerdict() {
		t.Errorf("a verdict question waits for the end (5 steps): step %d reveal %d", v.Step, v.Reveal)
	}
	if v := s.Questions[2]; v.Step != 3 || v.Reveal != 5 || v.Answer.String() != "hw(t/0, b2)" {
		t.Errorf("question 3: step %d reveal %d %s", v.Step, v.Reveal, v.Answer)
	}
	if got := Prose(s.Steps[1].Narration); !slices.Equal(got, []string{"Prose after the question."}) {
		t.Errorf("prose %q", got)
	}
	if got := Prose(s.Steps[3].Narration); len(got) != 0 {
		t.Errorf("prose of a reveal and a question: %q", got)
	}
}

func TestParseExpr(t *testing.T) {
	for in, want := range map[string]string{
		"count(read value=v5)":                "count(read, value=v5)",
		"count(acked, partition=t/1)":         "count(acked, partition=t/1)",
		"if(read(x), yes, no)":                "if(read(x), yes, no)",
		"if( anomaly(duplicate) ,  a , b )":   "if(anomaly(duplicate), a, b)",
		"isr(topic.with-dots/12)":             "isr(topic.with-dots/12)",
		"if(acked(a), if(read(a), x, y), no)": "if(acked(a), if(read(a), x, y), no)",
	} {
		e, err := ParseExpr(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if e.String() != want {
			t.Errorf("%s: got %s, want %s", in, e, want)
		}
	}
}

// Bad input names the file:line and what was expected.
func TestParseAskErrors(t *testing.T) {
	for line, want := range map[string]string{
		"# ask: choices=(a, b) answer=read(x) concept=acks":               "f.txt:1: ask: the question is missing",
		"# ask: Q? choices=(a, b) concept=acks":                           "f.txt:1: ask: answer= is missing",
		"# ask: Q? choices=(a) answer=read(x) concept=acks":               "choices=(a): want at least two choices",
		"# ask: Q? choices=(a, a) answer=read(x) concept=acks":            `choice "a" is given twice`,
		"# ask: Q? choices=a,b answer=read(x) concept=acks":               "want a list in parentheses",
		"# ask: Q? choices=(a, b) answer=yes concept=acks":                "answer=yes is a word: an answer is computed from the run, never typed",
		"# ask: Q? choices=(a, b) answer=from(show partitions) concept=x": "unknown function from; want one of leader, epoch",
		"# ask: Q? choices=(a, b) answer=leader(t0) concept=acks":         `"t0": want a partition TOPIC/N such as t/0; usage: leader(TOPIC/N)`,
		"# ask: Q? choices=(a, b) answer=leader(t/0, b1) concept=acks":    "want leader(TOPIC/N)",
		"# ask: Q? choices=(a, b) answer=anomaly(lost) concept=acks":      `anomaly "lost": no checker reports it`,
		"# ask: Q? choices=(a, b) answer=if(leader(t/0), a, b) concept=x": "leader(t/0) does not answer yes or no",
		"# ask: Q? choices=(a, b) answer=count(read who=c1) concept=x":    "unknown argument who=; usage: count(read|acked, [value=WORD], [partition=WORD])",
		"# ask: Q? choices=(a, b) answer=read(x concept=acks":             `a "(" is not closed`,
		"# ask: Q? choices=(a, b) answer=read(x) concept=acks level=2":    "unknown key level=",
		"# ask: Q? choices=(a, b) answer=read(x) concept=acks concept=b":  "concept= is given twice",
		"# reveal": "f.txt:1: reveal: no question asked before an earlier command is waiting",
	} {
		_, err := Parse("f.txt", line+"\nrun for=1s\n----\n")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s:\n got %v\nwant %s", line, err, want)
		}
	}
	if _, err := Parse("f.txt", "run for=1s\n----\n\n# ask: Q? choices=(a, b) answer=read(x) concept=acks\n"); err == nil ||
		!strings.Contains(err.Error(), "f.txt:4: ask: no command follows the question") {
		t.Errorf("a question after the last command: %v", err)
	}
}
