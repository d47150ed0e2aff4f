package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"testing"

	"mqsim/gateway"
	"mqsim/sim"
)

// A session's run does not fork, nor save as a scenario: its clients' requests are no script to replay with a
// fault, and would not have answered a changed cluster as they did.
func TestSessionRunDoesNotFork(t *testing.T) {
	run := record(t, "acks1-leader-crash")
	if _, err := PlanFork(run, run.Len()-1, sim.Action{Verb: sim.VerbCrash, Nodes: []string{"b1"}}); err != nil {
		t.Fatalf("a scenario's run forks: %v", err)
	}
	run.Session = &gateway.Session{}
	_, err := PlanFork(run, run.Len()-1, sim.Action{Verb: sim.VerbCrash, Nodes: []string{"b1"}})
	if err == nil || !strings.Contains(err.Error(), "cannot fork") {
		t.Fatalf("fork of a session's run: err = %v", err)
	}
	res, _ := New(run, Options{NoColor: true}).Update(tea.KeyPressMsg{Code: 'w', Text: "w"})
	if m := res.(Model); m.prompt != promptNone || !strings.Contains(m.status, "session file") {
		t.Errorf("w on a session's run: prompt %d, status %q", m.prompt, m.status)
	}
}
