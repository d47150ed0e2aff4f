package tui

import (
	"bytes"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// forkKeys opens the fault prompt at event at and submits fault, one Update per key,
// without recording the fork: the model is left with the fork's job, as a program would be
// while the recording runs in the background.
func forkKeys(t *testing.T, m Model, at int, fault string) (Model, tea.Cmd) {
	t.Helper()
	m = m.At(at)
	next, _ := m.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
	m = next.(Model)
	for _, r := range fault {
		next, _ = m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
		m = next.(Model)
	}
	next, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	m = next.(Model)
	if m.job == nil || cmd == nil {
		t.Fatalf("no fork started: %s", m.status)
	}
	return m, cmd
}

// TestForkOfAPausedConsumerComesBack: in rebalance-duplicates, pausing c2 at step 109
// used to spin for good inside Update (c2's consume waited for a poll a paused consumer
// never makes). The fork now records off the UI loop and comes back with the consume's
// error, well within the test's time.
func TestForkOfAPausedConsumerComesBack(t *testing.T) {
	r := record(t, "rebalance-duplicates")
	m, _ := forkKeys(t, sized(New(r, Options{}), 100, 30), 108, "pause c2")
	if out := frameText(m); !strings.Contains(out, "recording fork-1") || !strings.Contains(out, "esc cancels") {
		t.Errorf("no progress line while the fork records:\n%s", out)
	}
	start := time.Now()
	next, _ := m.Update(m.job.record())
	m = next.(Model)
	if time.Since(start) > 20*time.Second {
		t.Errorf("the fork took %s", time.Since(start))
	}
	if m.Run().Name != "fork-1" || m.Run().Err == nil || !strings.Contains(m.Run().Err.Error(), "c2 is paused: a paused consumer cannot poll") {
		t.Fatalf("on %s, err %v, status %q; want fork-1 stopped by the paused consumer", m.Run().Name, m.Run().Err, m.status)
	}
	if !strings.Contains(m.status, "fork-1: the script stopped: ") {
		t.Errorf("status %q", m.status)
	}
}

// TestForkEscCancelsAndQuitQuits: while a fork records, esc cancels it (the model stays
// on its run and says so) and q quits at once.
func TestForkEscCancelsAndQuitQuits(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	at := r.Len() / 2
	m, _ := forkKeys(t, sized(New(r, Options{}), 80, 24), at, "crash b1")
	next, _ := m.Update(tea.KeyPressMsg{Code: 'l', Text: "l"})
	if next.(Model).Pos() != at {
		t.Error("a step key moved while the fork records")
	}
	next, _ = m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	m = next.(Model)
	if !strings.Contains(frameText(m), "cancelling fork-1") {
		t.Errorf("esc:\n%s", frameText(m))
	}
	next, _ = m.Update(m.job.record())
	m = next.(Model)
	if len(m.Runs()) != 1 || m.job != nil || m.status != "fork-1 cancelled" {
		t.Errorf("after cancel: %d runs, status %q", len(m.Runs()), m.status)
	}
	for _, k := range []tea.KeyPressMsg{{Code: 'q', Text: "q"}, {Code: 'c', Mod: tea.ModCtrl}} {
		m2, _ := forkKeys(t, m, at, "crash b2")
		_, cmd := m2.Update(k)
		if cmd == nil {
			t.Fatalf("%s while forking: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s while forking does not quit", k)
		}
		if done := m2.job.record().(forkDoneMsg); done.run == nil || done.err != nil {
			t.Errorf("the cancelled recording: %v", done.err)
		}
	}
}

// TestFlowForkOfAPausedConsumer: the same fork in a running program: the UI keeps
// answering, the fork comes back, and q quits.
func TestFlowForkOfAPausedConsumer(t *testing.T) {
	r := record(t, "rebalance-duplicates")
	tm := start(t, New(r, Options{}).At(108))
	tm.Type("xpause c2")
	tm.Send(special(tea.KeyEnter))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("fork-1: the script stopped")) },
		teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	fm := quit(t, tm)
	if len(fm.Runs()) != 2 {
		t.Errorf("%d runs", len(fm.Runs()))
	}
}
