package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mqsim/scenarios/quiz"
)

// runIn runs mqsim with standard input.
func runIn(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRoot(&out, &errb)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// A scripted quiz, then mqsim progress, in a config directory of the test's own: the
// concepts answered right are mastered, the one answered wrong missed, the rest untried.
func TestProgressAfterAScriptedQuiz(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir) // os.UserConfigDir on Linux
	t.Setenv("HOME", dir)            // and on macOS
	t.Setenv("AppData", dir)         // and on Windows
	before, err := runIn(t, "", "progress")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(before, "interview path: 0 of 14 concepts mastered, 0 missed, 14 untried\n") {
		t.Errorf("before any quiz:\n%s", before)
	}
	// acks1-leader-crash: acked(lost) yes (right), leader b3 (wrong), lost-write yes
	// (right), hw 2 (right).
	out, err := runIn(t, "a\nb3\nyes\n2\n", "quiz", "acks1-leader-crash")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "\nscore: 3 of 4 right\n") {
		t.Errorf("quiz ends:\n%s", out[max(0, len(out)-300):])
	}
	got, err := runIn(t, "", "progress")
	if err != nil {
		t.Fatal(err)
	}
	want := `interview path: 2 of 14 concepts mastered, 1 missed, 11 untried
  untried   why-queues              2 to try: mqsim quiz --path interview
  untried   topics-partitions-keys  4 to try: mqsim quiz --path interview
  mastered  acks                    2 right, 0 wrong
  untried   replication             3 to try: mqsim quiz --path interview
  untried   isr                     3 to try: mqsim quiz --path interview
  mastered  high-watermark          1 right, 0 wrong
  untried   min-isr                 3 to try: mqsim quiz --path interview
  missed    leader-election         0 right, 1 wrong
  untried   idempotence             3 to try: mqsim quiz --path interview
  untried   consumer-groups         3 to try: mqsim quiz --path interview
  untried   delivery-semantics      3 to try: mqsim quiz --path interview
  untried   exactly-once            5 to try: mqsim quiz --path interview
  untried   kafka-rabbitmq-sqs      4 to try: mqsim quiz --path interview
  untried   share-groups            6 to try: mqsim quiz --path interview
`
	if got != want {
		t.Errorf("progress:\n%s", got)
	}
}

func TestQuizBadUsage(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"quiz", "no-such-scenario"}, `no-such-scenario`},
		{[]string{"quiz"}, "name a scenario (one of aborted-read-uncommitted, acks0-silent-loss, acks1-leader-crash,"},
		{[]string{"quiz", "--path", "lectures"}, "--path lectures: no such path; want interview or course"},
		{[]string{"quiz", "acks1-leader-crash", "--path", "interview"}, "give a scenario or --path, not both"},
		{[]string{"quiz", "slow-follower-isr", "--fix"}, "slow-follower-isr.txt names no fix"},
		{[]string{"quiz", "kernel-pingpong"}, "kernel-pingpong.txt asks no questions; the scenarios that do: aborted-read-uncommitted"},
	} {
		_, err := runIn(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %s", c.args, err, c.want)
		}
	}
}

// --path course plays the course's scenarios that ask questions (quiz.Path, held to the
// note by scenarios/quiz's tests), in lecture order, and asks every question.
func TestQuizCoursePath(t *testing.T) {
	out, err := runIn(t, strings.Repeat("a\n", 60), "quiz", "--path", "course", "--no-progress", "--plain")
	if err != nil {
		t.Fatal(err)
	}
	var played []string
	for _, l := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(l, "=== quiz: "); ok {
			played = append(played, strings.Fields(name)[0])
		}
	}
	course, err := quiz.Path("course")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	questions := 0
	for _, s := range course {
		want = append(want, s.Name)
		questions += len(s.Questions)
	}
	if len(want) < 10 || !slices.Equal(played, want) {
		t.Errorf("played %v, want %v", played, want)
	}
	if !strings.HasSuffix(out, fmt.Sprintf(" of %d right\n", questions)) {
		t.Errorf("quiz ends:\n%s", out[max(0, len(out)-300):])
	}
}
