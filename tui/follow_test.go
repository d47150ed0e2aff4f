package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// lecturer sends the lecturer's position to a session.
func lecturer(m Model, event int) Model {
	next, _ := m.Update(LecturerMsg{Event: event})
	return next.(Model)
}

func TestClassroomSessionFollowsExploresAndRejoins(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := New(r, Options{Classroom: true, NoColor: true})
	if !m.Following() {
		t.Fatal("a classroom session starts following the lecturer")
	}
	m = lecturer(m, 10)
	if m.Pos() != 10 {
		t.Fatalf("following: at event %d, want the lecturer's 10", m.Pos())
	}
	// While following, moving keys stay with the lecturer and say how to explore.
	m = press(t, m, "right", "end")
	if m.Pos() != 10 || !strings.Contains(m.status, "e explores") {
		t.Fatalf("following, → and end: at %d (want 10), status %q", m.Pos(), m.status)
	}
	m = press(t, m, "e", "right", "right")
	if m.Following() || m.Pos() != 12 {
		t.Fatalf("after e → →: following %v at %d, want exploring at 12", m.Following(), m.Pos())
	}
	// The lecturer moves on; the explorer stays, and rejoins at the lecturer's step.
	m = lecturer(m, 30)
	if m.Pos() != 12 {
		t.Fatalf("exploring: the lecturer's step moved the session to %d", m.Pos())
	}
	if screen := ansi.Strip(m.WithSize(100, 30).Render()); !strings.Contains(screen, "exploring · ❚❚ paused") || !strings.Contains(screen, "r rejoin the lecturer") {
		t.Fatalf("the explorer's screen names neither the mode nor the key to rejoin:\n%s", screen)
	}
	m = press(t, m, "r")
	if !m.Following() || m.Pos() != 30 {
		t.Fatalf("after r: following %v at %d, want following at 30", m.Following(), m.Pos())
	}
	if screen := ansi.Strip(m.WithSize(100, 30).Render()); !strings.Contains(screen, "⇄ following") {
		t.Fatalf("the follower's header does not say so:\n%s", screen)
	}
	// Forks and saves would act on the lecturer's machine.
	m = press(t, m, "e", "x")
	if m.prompt != promptNone || !strings.Contains(m.status, "not offered in a classroom") {
		t.Fatalf("x in a classroom: prompt %v, status %q", m.prompt, m.status)
	}
}

func TestOutsideTheClassroomEAndRDoNothingAndLecturerMsgIsIgnored(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	m := New(r, Options{NoColor: true})
	m = lecturer(m, 10)
	m = press(t, m, "e", "r")
	if m.Pos() != 0 || m.Following() {
		t.Fatalf("plain TUI: at %d following %v, want 0 and not following", m.Pos(), m.Following())
	}
	if screen := ansi.Strip(m.WithSize(100, 30).Render()); strings.Contains(screen, "rejoin") {
		t.Fatalf("the plain TUI's help offers classroom keys:\n%s", screen)
	}
}
