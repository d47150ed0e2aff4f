package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"go.uber.org/goleak"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
)

// TestMain checks that the tests leave no goroutine behind, except the SIGINT watcher
// every teatest.NewTestModel starts and never stops.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"))
}

// start runs the model in a teatest program at 80x24 with an ASCII colour profile, and
// waits for the first frame.
func start(t *testing.T, m Model) *teatest.TestModel {
	t.Helper()
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(scriptTitle(m.Run()))) },
		teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	return tm
}

func quit(t *testing.T, tm *teatest.TestModel) Model {
	t.Helper()
	tm.Type("q")
	return tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Model)
}

func special(code rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: code} }

// TestFlowStepping: step, jump and go back in a running program.
func TestFlowStepping(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	tm := start(t, New(r, Options{}))
	tm.Type("llll")               // step 5
	tm.Send(special(tea.KeyLeft)) // step 4
	tm.Type("]")                  // next fault: the partition
	tm.Type("tttt]")              // next hw after it
	tm.Type("[")                  // and back to the one before
	tm.Type("]]")                 // forward twice
	fm := quit(t, tm)
	e := r.Events[fm.Pos()]
	if e.Kind != "hw" || e.Node != "b3" {
		t.Errorf("ended at %d %s", fm.Pos(), e)
	}
	teatest.RequireEqualOutput(t, []byte(ansi.Strip(fm.Render())))
}

// TestFlowForkAndSave: break the run from the keyboard, save the fork, replay the file.
func TestFlowForkAndSave(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := New(r, Options{}).At(find(t, r, 0, "b1", "append", "offsets 1..1"))
	tm := start(t, m)
	tm.Type("xcrash b1")
	tm.Send(special(tea.KeyEnter))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("fork-1: crash b1 at")) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	path := filepath.Join(t.TempDir(), "acks1-fork.txt")
	tm.Type("w")
	tm.Send(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	tm.Type(path)
	tm.Send(special(tea.KeyEnter))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("saved")) },
		teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	fm := quit(t, tm)
	if len(fm.Runs()) != 2 || fm.Run().Name != "fork-1" {
		t.Fatalf("no fork: %q", fm.status)
	}
	fork := fm.Run()
	// The fork: b1 crashed right after appending "lost", before it could answer.
	if e := fork.Events[fm.Pos()]; e.Kind != "crash" || e.Node != "b1" {
		t.Errorf("the fork is at %s", e)
	}
	s, err := scenarios.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(s, runner.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Runner.World().Trace().Events(), fork.Events) || res.Hash != fork.Hash {
		t.Errorf("the saved file does not replay the fork")
	}
	text, _ := os.ReadFile(path)
	if !strings.Contains(string(text), "# Fork of main at step ") || !strings.Contains(string(text), "\nat 173.006001ms crash b1\n") {
		t.Errorf("saved file:\n%s", text)
	}
	teatest.RequireEqualOutput(t, []byte(ansi.Strip(fm.Render())))
}

// TestFlowPlay: space plays in real time until space again.
func TestFlowPlay(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	tm := start(t, New(r, Options{}))
	tm.Type("++++") // 50 events/s
	tm.Send(special(tea.KeySpace))
	second := []byte(r.stepName(1) + " / " + r.stepName(r.Len()-1))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, second) },
		teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	tm.Send(special(tea.KeySpace))
	fm := quit(t, tm)
	if fm.playing || fm.Pos() == 0 {
		t.Errorf("after play and pause: playing %t at %d", fm.playing, fm.Pos())
	}
}

// TestFlowQueue: in a running program on a queue scenario, t picks the deliveries as the
// kind to jump to, ] goes from one to the next, x crash q2 forks, and the final frame
// shows the queue pane of the fork.
func TestFlowQueue(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	tm := start(t, New(r, Options{}))
	tm.Type("t]]")                 // the second delivery: c1's window is full
	tm.Type("xcrash q2")           // and q2 crashes right after it
	tm.Send(special(tea.KeyEnter)) // fork-1
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("fork-1: crash q2 at")) },
		teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
	fm := quit(t, tm)
	if len(fm.Runs()) != 2 || fm.Run().Name != "fork-1" {
		t.Fatalf("no fork: %q", fm.status)
	}
	second := find(t, r, 0, "q3", "deliver", "tag 2")
	if e := fm.Run().Events[fm.Pos()]; e.Kind != "crash" || e.Node != "q2" || e.Time != r.Events[second].Time+1 {
		t.Errorf("the fork is at %s, want q2's crash right after %s", e, r.Events[second])
	}
	out := ansi.Strip(fm.Render())
	for _, w := range []string{"q2 ✖ down", "c1 ch1 prefetch 2: ●● full", "fork-1: crash q2 at"} {
		if !strings.Contains(out, w) {
			t.Errorf("the final frame lacks %q:\n%s", w, out)
		}
	}
	teatest.RequireEqualOutput(t, []byte(out))
}
