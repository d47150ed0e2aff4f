package tui

import (
	"slices"

	"mqsim/model/group"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/sim"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// TestSearchMatchesTheScreen: a search matches the text as the timeline shows it, kind and
// detail together (notes/acks.md's hint finds b1's answer to p1), and n wraps around to
// the first match after the last.
func TestSearchMatchesTheScreen(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	want := find(t, r, 0, "b1", "ack", "offset 1 to p1")
	m := sized(New(r, Options{}), 80, 24)
	m = press(t, m, "/")
	m = typeText(t, m, "ack t/0: offset 1")
	m = press(t, m, "enter")
	if m.Pos() != want {
		t.Fatalf("the search stopped at %d %s (%q), want %d %s", m.Pos(), r.Events[m.Pos()], m.status, want, r.Events[want])
	}
	if !strings.Contains(ansi.Strip(m.Render()), "▶") {
		t.Errorf("no current row on screen")
	}
	// Past the last match, n wraps to the first and says so.
	var matches []int
	for i := range r.Events {
		if strings.Contains(strings.ToLower(searchText(r.Events[i])), "ack t/0: offset 1") {
			matches = append(matches, i)
		}
	}
	for range len(matches) - 1 {
		m = press(t, m, "n")
	}
	m = press(t, m, "n")
	if m.Pos() != matches[0] || !strings.Contains(m.status, "wrapped") {
		t.Errorf("after the last match n went to %d (%q), want the first, %d, wrapped", m.Pos(), m.status, matches[0])
	}
}

// TestHealIsNotDrawnAsACrash: a fault that mends (heal, restart, resume, unclog) is drawn
// in the colour of health, not of the crash it undoes.
func TestHealIsNotDrawnAsACrash(t *testing.T) {
	st := newStyles(false)
	crash := st.kind("crash").GetForeground()
	for _, k := range []string{"heal", "restart", "resume", "unclog"} {
		if st.kind(k).GetForeground() == crash {
			t.Errorf("%s is drawn in the colour of a crash", k)
		}
	}
	if st.kind("partition").GetForeground() != crash {
		t.Errorf("a partition is not drawn as a fault")
	}
}

// TestKindIsNotSaidTwice: the timeline's kind column is not repeated by the detail after
// it ("assign assign [t/0]", "subscribe subscribe g").
func TestKindIsNotSaidTwice(t *testing.T) {
	for _, c := range []struct{ scenario, kind, want string }{
		{"aborted-read-uncommitted", "assign", "assign [t/0] from beginning (reset earliest)"},
		{"bug-commit-before-processing", "subscribe", "subscribe g to t (assignor range, eager protocol, commit after)"},
	} {
		r := record(t, c.scenario)
		i := slices.IndexFunc(r.Events, func(e sim.Event) bool { return e.Kind == c.kind })
		if i < 0 {
			t.Fatalf("%s has no %s event", c.scenario, c.kind)
		}
		m := sized(New(r, Options{}), 260, 30).At(i)
		if out := ansi.Strip(m.Render()); !strings.Contains(out, c.want) || strings.Contains(out, c.kind+" "+c.kind) {
			t.Errorf("%s: the row of %s does not read %q:\n%s", c.scenario, r.Events[i], c.want, out)
		}
	}
}

// TestOneViolationReadsRight: the Checks pane of a run with one violation says it in the
// singular.
func TestOneViolationReadsRight(t *testing.T) {
	r := record(t, "acks0-silent-loss")
	if len(r.Checks) != 1 {
		t.Fatalf("acks0-silent-loss has %d violations, want 1", len(r.Checks))
	}
	out := ansi.Strip(sized(New(r, Options{}), 80, 24).Render())
	if !strings.Contains(out, "1 violation ") || strings.Contains(out, "1 violations") {
		t.Errorf("the Checks pane does not say 1 violation:\n%s", out)
	}
}

// TestGroupsLeaveRoomAt80x24: with consumer groups (four partitions with
// __consumer_offsets) at 80x24, the Cluster pane leaves the Timeline events around the
// current one and the Explain pane whole lines, not one summary line each.
func TestGroupsLeaveRoomAt80x24(t *testing.T) {
	r := record(t, "rebalance-duplicates")
	m := sized(New(r, Options{}), 80, 24).At(find(t, r, 0, "c1", "rebalance", "must rejoin"))
	out := ansi.Strip(m.Render())
	for _, w := range []string{"── Timeline ─", "── Explain ", "── Cluster "} {
		if !strings.Contains(out, w) {
			t.Errorf("the frame has no %q pane with lines of its own:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n") + 1; n != 24 {
		t.Errorf("the frame is %d lines, want 24", n)
	}
}

// TestWideScreenGivesTheTimelineTheWidth: at 120x40 the timeline's rows around the lost
// acknowledgement are read whole, and on a wider screen the extra columns go to the
// timeline, not to the state panes.
func TestWideScreenGivesTheTimelineTheWidth(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	ack := find(t, r, 0, "b1", "ack", "offset 1 to p1")
	out := ansi.Strip(sized(New(r, Options{}), 120, 40).At(ack).Render())
	for _, w := range []string{"b1  ack t/0: offset 1 to p1 (acks=1, HW 1)", "b1  fsync t/0: offsets below 2 are on disk"} {
		if !strings.Contains(out, w) {
			t.Errorf("at 120x40 the timeline cuts %q:\n%s", w, out)
		}
	}
	for _, w := range []int{120, 160, 240} {
		lines := strings.Split(ansi.Strip(sized(New(r, Options{}), w, 40).At(ack).Render()), "\n")
		left := strings.Index(lines[1], "│")
		if left < 0 || utf8.RuneCountInString(lines[1][:left]) < (w-1)/2 {
			t.Errorf("at %d columns the timeline column is %d wide:\n%s", w, utf8.RuneCountInString(lines[1][:max(left, 0)]), lines[1])
		}
	}
}

// TestPromptInputStaysVisibleAt80: at 80 columns the fork prompt's long label (its
// examples) gives way so that what is typed stays on screen, even a long input.
func TestPromptInputStaysVisibleAt80(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	for _, typed := range []string{"crash b1", "cut b1 <-> b2 b1 <-> b3 b2 <-> b3 and more words than fit in eighty columns"} {
		m := press(t, sized(New(r, Options{}), 80, 24).At(40), "x")
		m = typeText(t, m, typed)
		out := ansi.Strip(m.Render())
		tail := typed[max(0, len(typed)-30):] + "█"
		if !strings.Contains(out, tail) {
			t.Errorf("typing %q, the screen does not show %q:\n%s", typed, tail, out)
		}
		if len(typed) < 20 && !strings.Contains(out, "fault at t=") {
			t.Errorf("the prompt does not say what it asks:\n%s", out)
		}
	}
}

// TestGroupEventsAreJumpKinds: join, sync, rebalance and commit are kinds to jump to; in
// rebalance-duplicates each finds its events, and ] on rebalance goes from the start of
// the first rebalance to the next.
func TestGroupEventsAreJumpKinds(t *testing.T) {
	r := record(t, "rebalance-duplicates")
	m := sized(New(r, Options{}), 80, 24)
	for _, name := range []string{"join", "sync", "rebalance", "commit"} {
		g := slices.IndexFunc(m.groups(), func(g jumpGroup) bool { return g.Name == name })
		if g < 0 {
			t.Fatalf("no jump group %q", name)
		}
		if !slices.ContainsFunc(r.Events, m.groups()[g].has) {
			t.Errorf("the %s group matches no event of rebalance-duplicates", name)
		}
	}
	for m.jumpGroup().Name != "rebalance" {
		m = press(t, m, "t")
		if m.jump == 0 {
			t.Fatal("t never offers rebalance")
		}
	}
	m = press(t, m, "]")
	if _, ok := r.Events[m.Pos()].Data.(group.RebalanceStarted); !ok {
		t.Errorf("] on rebalance went to %s", r.Events[m.Pos()])
	}
	first := m.Pos()
	m = press(t, m, "]")
	if m.Pos() <= first || !m.jumpGroup().has(r.Events[m.Pos()]) {
		t.Errorf("the second ] on rebalance went to %s", r.Events[m.Pos()])
	}
}

// TestPresenterStopsAtTheLostAck: presenter mode has a narrated point at the lost
// acknowledgement: the clicker plays its command through to b1's answer to p1, and the
// narration says what is happening, in lines broken at words.
func TestPresenterStopsAtTheLostAck(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	ack := find(t, r, 0, "b1", "ack", "offset 1 to p1")
	m := sized(New(r, Options{Presenter: true}), 80, 24)
	m = press(t, m, "pgdown", "pgdown", "pgdown") // the cluster, a moment, the partition, "lost"
	for i := 0; m.playing && i < 100; i++ {
		next, _ := m.Update(tickMsg{id: m.tickID})
		m = next.(Model)
	}
	if m.Pos() < ack || r.StepOf(m.Pos()) != r.StepOf(ack) {
		t.Errorf("the fourth narrated point stops at %s, want the command that has %s", r.Events[m.Pos()], r.Events[ack])
	}
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "acknowledges it at once") {
		t.Errorf("the narration does not speak of the lost acknowledgement:\n%s", out)
	}
	// Word breaks: the first narration, written in 90-column lines, is reflowed; no line
	// of the pane ends at a short line of the source.
	m = press(t, m, "home")
	out = ansi.Strip(m.Render())
	if strings.Contains(out, " followers fetch\n") || !strings.Contains(out, "The followers fetch the record") && !strings.Contains(out, "The\n followers fetch the record") {
		t.Errorf("the narration keeps the file's line breaks:\n%s", out)
	}
}

// TestNarrationUnderSetIsMarked: with --set (or --fix) the narration, written for the
// scenario as it stands, is marked as belonging to the unmodified run.
func TestNarrationUnderSetIsMarked(t *testing.T) {
	s, err := scenarios.Load("acks1-leader-crash")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record("main", s, runner.Options{Set: []string{"acks=all"}})
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	m := press(t, sized(New(r, Options{Presenter: true}), 80, 24), "pgdown", "pgdown", "pgdown")
	out := ansi.Strip(m.Render())
	if !strings.Contains(out, "written for the run without --set acks=all") {
		t.Errorf("the narration is not marked:\n%s", out)
	}
	plain := ansi.Strip(press(t, sized(New(record(t, "acks1-leader-crash"), Options{Presenter: true}), 80, 24), "pgdown").Render())
	if strings.Contains(plain, "written for the run without") {
		t.Errorf("the unmodified run's narration is marked:\n%s", plain)
	}
}

// TestTourStepTwo: the README tour's step 2 as a reader does it: c jumps to where the
// lost write began (p1 sending "lost"), and / offset 1 to p1 reaches b1's answer to p1.
func TestTourStepTwo(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := press(t, sized(New(r, Options{}), 80, 24), "c")
	if e := r.Events[m.Pos()]; e.Kind != "send" || e.Node != "p1" || e.Detail != "lost to t/0" {
		t.Errorf("c went to %s, want p1 sending lost", e)
	}
	m = press(t, m, "/")
	m = typeText(t, m, "offset 1 to p1")
	m = press(t, m, "enter")
	if want := find(t, r, 0, "b1", "ack", "offset 1 to p1 (acks=1, HW 1)"); m.Pos() != want {
		t.Errorf("the search went to %s, want %s", r.Events[m.Pos()], r.Events[want])
	}
}
