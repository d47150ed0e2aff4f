package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// LecturerMsg tells a classroom session (Options.Classroom) where the lecturer's TUI is
// on the same recorded run: at event Event, in presenter mode or not. A following
// session moves there; an exploring one keeps it for when the student rejoins.
type LecturerMsg struct {
	Event   int
	Present bool
}

// classroom enables the keys of a classroom session (e explores, r rejoins) and disables
// those that would act on the lecturer's machine: forks run the simulation there and
// saves write its files.
func (k *keyMap) classroom(on bool) {
	k.Explore.SetEnabled(on)
	k.Rejoin.SetEnabled(on)
	k.Fault.SetEnabled(!on)
	k.Save.SetEnabled(!on)
	k.Branch.SetEnabled(!on)
}

// Following reports whether a classroom session steps with the lecturer.
func (m Model) Following() bool { return m.following }

// Presenting reports whether presenter mode is on (the lecturer's screen tells the
// students' screens).
func (m Model) Presenting() bool { return m.present }

// lecturerAt records the lecturer's position and, when following, moves there.
func (m Model) lecturerAt(msg LecturerMsg) Model {
	m.lecturer = msg
	if !m.following {
		return m
	}
	m.present = msg.Present
	m.playing, m.playUntil, m.pointStep = false, -1, -1
	m.moveTo(msg.Event)
	return m
}

// classroomKey handles a key in a classroom session before the usual keys: e and r, and,
// while following, every key that would move away from the lecturer. It reports whether
// it handled the key.
func (m Model) classroomKey(msg tea.KeyPressMsg) (bool, Model) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Explore):
		if m.following {
			m.following = false
			m.status = "exploring on your own: r rejoins the lecturer"
		}
		return true, m
	case key.Matches(msg, k.Rejoin):
		m.following = true
		m.status = "following the lecturer: e explores on your own"
		if m.lecturer.Event >= 0 {
			m = m.lecturerAt(m.lecturer)
		}
		return true, m
	case msg.String() == "x" || msg.String() == "w" || msg.String() == "b":
		m.status = "forks and saves are not offered in a classroom: run mqsim tui on your own machine"
		return true, m
	case !m.following:
		return false, m
	case key.Matches(msg, k.Quit), key.Matches(msg, k.Help), key.Matches(msg, k.Esc), key.Matches(msg, k.Panes):
		return false, m
	}
	m.status = "following the lecturer: e explores on your own, r rejoins"
	return true, m
}

// classroomBadge is what the header says of the session's mode, in place of play/pause.
func (m Model) classroomBadge(play string) string {
	switch {
	case !m.opts.Classroom:
		return play
	case m.following:
		return "⇄ following"
	}
	return "exploring · " + play
}
