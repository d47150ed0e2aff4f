package tui

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// press sends keys to the model, one Update each, and runs no commands but a fork's
// recording (at once, rather than in the background): play ticks are delivered by the
// tests that want them.
func press(t testing.TB, m Model, keys ...string) Model {
	t.Helper()
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "right":
			msg = tea.KeyPressMsg{Code: tea.KeyRight}
		case "left":
			msg = tea.KeyPressMsg{Code: tea.KeyLeft}
		case "shift+right":
			msg = tea.KeyPressMsg{Code: tea.KeyRight, Mod: tea.ModShift}
		case "home":
			msg = tea.KeyPressMsg{Code: tea.KeyHome}
		case "end":
			msg = tea.KeyPressMsg{Code: tea.KeyEnd}
		case "space":
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "pgdown":
			msg = tea.KeyPressMsg{Code: tea.KeyPgDown}
		case "pgup":
			msg = tea.KeyPressMsg{Code: tea.KeyPgUp}
		case "ctrl+c":
			msg = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
		default:
			r := []rune(k)[0]
			msg = tea.KeyPressMsg{Code: r, Text: k}
		}
		next, _ := m.Update(msg)
		m = next.(Model)
		if m.job != nil {
			// A fork records in the background; here, at once.
			next, _ = m.Update(m.job.record())
			m = next.(Model)
		}
	}
	return m
}

// typeText types s into an open prompt, rune by rune.
func typeText(t testing.TB, m Model, s string) Model {
	t.Helper()
	for _, r := range s {
		m = press(t, m, string(r))
	}
	return m
}

func sized(m Model, w, h int) Model {
	next, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return next.(Model)
}

// frame is the screen as plain text: the colour styles rendered, then stripped, as an
// ASCII colour profile shows them.
func frameText(m Model) string { return ansi.Strip(m.View().Content) }

// keyFrames are the flagship's moments the goldens show.
func keyFrames(t testing.TB, r *Run) []struct {
	name string
	at   int
} {
	ack := find(t, r, 0, "b1", "ack", "offset 1 to p1")
	crash := find(t, r, ack, "b1", "crash", "")
	elect := find(t, r, crash, "ctl", "election", "")
	return []struct {
		name string
		at   int
	}{{"first", 0}, {"ack", ack}, {"crash", crash}, {"election", elect}}
}

// TestGoldenFrames are the flagship's key frames at 80x24 and 120x40.
func TestGoldenFrames(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, f := range keyFrames(t, r) {
			t.Run(fmt.Sprintf("%dx%d-%s", size[0], size[1], f.name), func(t *testing.T) {
				m := sized(New(r, Options{}), size[0], size[1]).At(f.at)
				out := frameText(m)
				checkFrame(t, out, size[0], size[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// checkFrame: exactly h lines, none wider than w.
func checkFrame(t testing.TB, out string, w, h int) {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d wide (> %d): %q", i, n, w, l)
		}
	}
}

// TestGoldenPresenter: presenter mode shows the narration, "step k of n", and the
// clicker key moves to the next narrated point.
func TestGoldenPresenter(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := sized(New(r, Options{Presenter: true}), 80, 24)
	if out := frameText(m); !strings.Contains(out, "step 1 of ") || !strings.Contains(out, "acks=1 acknowledges a write") {
		t.Errorf("presenter mode at the start:\n%s", out)
	}
	// The points: the cluster, "Give the followers a moment", "Cut the followers off",
	// "b1 appends "lost"", "The controller fenced b1", ... Two clicks from the first:
	m = press(t, m, "pgdown", ".")
	out := frameText(m)
	if !strings.Contains(out, "step 3 of ") || !strings.Contains(out, "Cut the followers off the leader") {
		t.Errorf("after 2 clicks:\n%s", out)
	}
	if e := r.Events[m.Pos()]; e.Kind != "partition" {
		t.Errorf("the third narrated point is at %s, want the partition", e)
	}
	m = press(t, m, "pgdown", "pgdown")
	out = frameText(m)
	if !strings.Contains(out, "The controller fenced b1 and elected b2") {
		t.Errorf("fifth point:\n%s", out)
	}
	golden.RequireEqual(t, out)
	// Back.
	m = press(t, m, "pgup")
	if out := frameText(m); !strings.Contains(out, "step 4 of ") {
		t.Errorf("pgup:\n%s", out)
	}
	// A step key leaves the narrated point; the narration follows the position.
	m = press(t, m, "end")
	if out := frameText(m); !strings.Contains(out, "step 6 of 6") {
		t.Errorf("at the end:\n%s", out)
	}
}

// TestNoColor: in no-colour mode nothing sets a colour; the markers are all there.
func TestNoColor(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	ack := find(t, r, 0, "b1", "ack", "offset 1 to p1")
	m := sized(New(r, Options{NoColor: true}), 100, 30).At(ack)
	raw := m.View().Content
	if regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7]|38;|48;)`).MatchString(raw) {
		t.Errorf("colour codes in no-colour mode: %q", raw)
	}
	plain := ansi.Strip(raw)
	for _, want := range []string{"★", "┃", "▶", "cut: b1 <-> b2"} {
		if !strings.Contains(plain, want) {
			t.Errorf("no %q in\n%s", want, plain)
		}
	}
	if colour := frameText(sized(New(r, Options{}), 100, 30).At(ack)); colour != plain {
		t.Errorf("no-colour text differs from the colour text:\n%s\n---\n%s", plain, colour)
	}
}

// TestKeys drives the controls through Update.
func TestKeys(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := sized(New(r, Options{}), 80, 24)
	m = press(t, m, "right", "l", "right")
	if m.Pos() != 3 {
		t.Errorf("three steps forward: at %d", m.Pos())
	}
	m = press(t, m, "left", "h")
	if m.Pos() != 1 {
		t.Errorf("two back: at %d", m.Pos())
	}
	m = press(t, m, "end")
	if m.Pos() != r.Len()-1 {
		t.Errorf("end: at %d", m.Pos())
	}
	m = press(t, m, "home", "L", "shift+right")
	if m.Pos() != 20 {
		t.Errorf("+10 twice: at %d", m.Pos())
	}
	// Jump kinds: t cycles (fault, append, fsync, ack, hw, ...); ] and [ jump.
	m = press(t, m, "home", "]")
	if e := r.Events[m.Pos()]; e.Kind != "partition" {
		t.Errorf("first fault: %s", e)
	}
	m = press(t, m, "t", "t", "t", "t", "]")
	if e := r.Events[m.Pos()]; e.Kind != "hw" {
		t.Errorf("next hw: %s", e)
	}
	m = press(t, m, "[")
	if e := r.Events[m.Pos()]; e.Kind != "hw" || m.Pos() >= find(t, r, 0, "b1", "crash", "") {
		t.Errorf("previous hw: %s", e)
	}
	// Go to a (kernel) step, the first event of it or after it, and to a time.
	m = press(t, m, "g")
	m = typeText(t, m, "35")
	m = press(t, m, "enter")
	if e := r.Events[m.Pos()]; e.Step < 35 || (m.Pos() > 0 && r.Events[m.Pos()-1].Step >= 35) {
		t.Errorf("go to step 35: at event %d, step %d", m.Pos(), e.Step)
	}
	m = press(t, m, "g")
	m = typeText(t, m, "t=3.5s")
	m = press(t, m, "enter")
	if e := r.Events[m.Pos()]; e.Time != 3_500_000_000 || (m.Pos() > 0 && r.Events[m.Pos()-1].Time >= e.Time) {
		t.Errorf("go to t=3.5s: %s", e)
	}
	// Search.
	m = press(t, m, "home", "/")
	m = typeText(t, m, "truncate")
	m = press(t, m, "enter")
	if e := r.Events[m.Pos()]; e.Kind != "truncate" {
		t.Errorf("search: %s", e)
	}
	// Filter by node: stepping follows the filter.
	m = press(t, m, "home", "f")
	m = typeText(t, m, "hw b3")
	m = press(t, m, "enter")
	if e := r.Events[m.Pos()]; e.Kind != "hw" || e.Node != "b3" {
		t.Errorf("filter: %s", e)
	}
	if out := frameText(m); !strings.Contains(out, "filter hw,b3") {
		t.Errorf("the filter is not shown:\n%s", out)
	}
	m = press(t, m, "esc")
	// Checks: c jumps to where each began.
	m = press(t, m, "home", "c")
	if m.Pos() != r.Checks[0].Event {
		t.Errorf("first check at %d, want %d", m.Pos(), r.Checks[0].Event)
	}
	// Panes toggle.
	m = press(t, m, "1")
	if out := frameText(m); strings.Contains(out, "── Timeline") {
		t.Errorf("timeline still shown:\n%s", out)
	}
	m = press(t, m, "1", "?")
	if out := frameText(m); !strings.Contains(out, "toggle panes") {
		t.Errorf("full help:\n%s", out)
	}
	// Quit.
	if _, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"}); cmd == nil {
		t.Error("q does not quit")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit")
	}
}

// TestPlay: space plays, one event per tick, until the end or space again.
func TestPlay(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := sized(New(r, Options{}), 80, 24)
	next, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	m = next.(Model)
	if cmd == nil || !m.playing {
		t.Fatal("space does not play")
	}
	for i := 0; i < 5; i++ {
		next, cmd = m.Update(tickMsg{id: m.tickID})
		m = next.(Model)
	}
	if m.Pos() != 5 || cmd == nil {
		t.Errorf("after 5 ticks at %d", m.Pos())
	}
	stale := tickMsg{id: m.tickID - 1}
	m = press(t, m, "space")
	next, _ = m.Update(tickMsg{id: m.tickID})
	if next.(Model).Pos() != 5 {
		t.Error("paused but still moving")
	}
	next, _ = m.Update(stale)
	if next.(Model).Pos() != 5 {
		t.Error("a stale tick moved")
	}
	m = press(t, m, "+", "+", "-")
	if speeds[m.speed] != 10 {
		t.Errorf("speed %d", speeds[m.speed])
	}
}

// TestForkFromKeys: x opens the fault prompt; the fork becomes the current branch; b
// goes back to the original, which is unchanged.
func TestForkFromKeys(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := sized(New(r, Options{}), 80, 24)
	ack := find(t, r, 0, "b1", "ack", "offset 0 to p1")
	m = m.At(ack)
	m = press(t, m, "x")
	m = typeText(t, m, "cr")
	m = press(t, m, "tab")
	m = typeText(t, m, "b1")
	m = press(t, m, "enter")
	if len(m.Runs()) != 2 || m.Run().Name != "fork-1" {
		t.Fatalf("no fork: %s", m.status)
	}
	if e := m.Run().Events[m.Pos()]; e.Kind != "crash" || e.Node != "b1" {
		t.Errorf("the fork starts at %s", e)
	}
	out := frameText(m)
	if !strings.Contains(out, "fork-1: crash b1 at") || !strings.Contains(out, "b1 ✖ down") {
		t.Errorf("fork frame:\n%s", out)
	}
	m = press(t, m, "b")
	if m.Run() != r || m.Pos() != ack {
		t.Errorf("b: on %s at %d", m.Run().Name, m.Pos())
	}
	m = press(t, m, "x")
	m = typeText(t, m, "explode b1")
	m = press(t, m, "enter")
	if len(m.Runs()) != 2 || !strings.Contains(m.status, "unknown fault verb") {
		t.Errorf("a bad fault: %q", m.status)
	}
}

// TestNeverPanics: random keys at random sizes, including tiny ones, never panic and
// always give a frame of the right size: on the log cluster's flagship and on queue-mode
// runs (a quorum queue failing over, SQS FIFO groups). Now and then a whole fault is
// typed, so forks happen too.
func TestNeverPanics(t *testing.T) {
	for _, tc := range []struct{ name, fault string }{
		{"acks1-leader-crash", "crash b2"},
		{"rabbit-quorum-leader-crash", "crash q2"},
		{"sqs-fifo-group-blocking", "pause q1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := record(t, tc.name)
			keys := []string{"right", "left", "l", "h", "L", "H", "home", "end", "space", "+", "-", "]", "[", "t",
				"g", "/", "n", "N", "f", "1", "2", "3", "4", "5", "6", "c", "C", "x", "w", "b", "p", "pgdown", "pgup",
				".", ",", "?", "esc", "enter", "backspace", "tab", "a", "3", "0", "|", "-", ">", " ", "é", "ctrl+c", "<fault>"}
			rng := rand.New(rand.NewPCG(1, 2))
			m := New(r, Options{})
			for i := 0; i < 3000; i++ {
				if rng.IntN(20) == 0 {
					m = sized(m, rng.IntN(200), rng.IntN(70))
				}
				k := keys[rng.IntN(len(keys))]
				if k == "w" || (m.prompt == promptSave && k == "enter") {
					continue // no files from a random walk
				}
				if k == "<fault>" {
					m = typeText(t, press(t, m, "x"), tc.fault)
					k = "enter"
				}
				m = press(t, m, k)
				if m.playing && rng.IntN(2) == 0 {
					next, _ := m.Update(tickMsg{id: m.tickID})
					m = next.(Model)
				}
				if strings.HasPrefix(m.status, "internal error") {
					t.Fatalf("step %d key %q: %s", i, k, m.status)
				}
				out := m.Render()
				if strings.HasPrefix(out, "render error") {
					t.Fatalf("step %d key %q: %s", i, k, out)
				}
				if m.width >= 24 && m.height >= 6 {
					checkFrame(t, ansi.Strip(out), m.width, m.height)
				}
			}
			if len(m.Runs()) < 2 {
				t.Errorf("the random walk made no fork")
			}
		})
	}
}

// TestOddRuns: a run with no events, and one whose script stops with an error, show
// without trouble whatever the keys.
func TestOddRuns(t *testing.T) {
	for _, text := range []string{
		"world seed=3\n----\n",
		"cluster brokers=3\n----\n\nproduce value=a\n----\n\ncrash b9\n----\n\nproduce value=b\n----\n",
	} {
		s, err := script.Parse("odd.txt", text)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Record("main", s, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := sized(New(r, Options{}), 80, 24)
		for _, k := range []string{"right", "left", "end", "]", "c", "x", "c", "r", "a", "s", "h", " ", "b", "1", "enter", "g", "t", "=", "1", "s", "enter", "space", "pgdown", "p", "f", "x", "enter"} {
			m = press(t, m, k)
			if strings.HasPrefix(m.status, "internal error") {
				t.Fatalf("%q: %s", k, m.status)
			}
			checkFrame(t, frameText(m), 80, 24)
		}
		if r.Err != nil && !strings.Contains(frameText(press(t, m, "esc")), "stopped: ") {
			t.Errorf("the error is not shown:\n%s", frameText(m))
		}
	}
}

// TestPresenterPlaysThePoint: the clicker plays the narrated step's events to its end.
func TestPresenterPlaysThePoint(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := sized(New(r, Options{Presenter: true}), 80, 24)
	m = press(t, m, "pgdown") // "Give the followers a moment": run for=100ms
	k := m.currentPoint()
	sp := r.Steps[k]
	if m.Pos() != sp.First || !m.playing {
		t.Fatalf("at %d playing %t, want the start %d of %q, playing", m.Pos(), m.playing, sp.First, sp.Step.Text)
	}
	for i := 0; i < 1000 && m.playing; i++ {
		next, _ := m.Update(tickMsg{id: m.tickID})
		m = next.(Model)
	}
	if m.Pos() != sp.End-1 || m.currentPoint() != k {
		t.Errorf("play stopped at %d (point %d), want %d (point %d)", m.Pos(), m.currentPoint(), sp.End-1, k)
	}
}

// TestGoldenMidRebalance: the Clients pane of a group scenario while a rebalance is in
// progress shows the group's state, generation, members and lag.
func TestGoldenMidRebalance(t *testing.T) {
	r := record(t, "rebalance-duplicates")
	at := -1
	for i := 0; i < r.Len(); i++ {
		m := sized(New(r, Options{}), 120, 40).At(i)
		if strings.Contains(frameText(m), "PreparingRebalance · generation 1") {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no frame shows a group preparing a rebalance")
	}
	m := sized(New(r, Options{}), 120, 40).At(at)
	out := frameText(m)
	checkFrame(t, out, 120, 40)
	if !strings.Contains(out, "group g: PreparingRebalance · generation 1") {
		t.Errorf("the Clients pane does not show the group mid-rebalance:\n%s", out)
	}
	golden.RequireEqual(t, out)
}
