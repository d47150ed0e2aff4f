package tui

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mqsim/model/client"
	"mqsim/model/group"
)

// TestGroupExplanations: every event of the clients and group coordinators in the group
// scenarios is explained by its type, in words of its own (not the generic fallback), with
// a note that exists; key events say why.
func TestGroupExplanations(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range []string{"max-poll-zombie-fenced", "no-generation-fencing", "static-membership-rolling-restart", "coordinator-failover", "poison-message-dlq"} {
		r := record(t, name)
		for i, e := range r.Events {
			var pkg string
			switch e.Data.(type) {
			case group.Loaded, group.Unloaded, group.MemberExpired, group.MemberJoined, group.MemberRejoined, group.StaticRejoined,
				group.RebalanceStarted, group.MembersRemoved, group.GroupEmptied, group.JoinCompleted, group.GroupStabilized,
				group.MemberLeft, group.CommitRejected, group.CommitUnfenced, group.OffsetsCommitted:
				pkg = "group"
			default:
				if e.Data == nil || reflect.TypeOf(e.Data).PkgPath() != "mqsim/model/client" {
					continue
				}
				pkg = "client"
			}
			s := r.StateAt(i)
			ex := Explain(r, i, &s)
			generic := fmt.Sprintf("%s %s: %s.", e.Node, e.Kind, e.Detail)
			if ex.Note == "" || !slices.Contains(Notes, ex.Note) || ex.Text == generic {
				t.Errorf("%s step %d %s (%s): not explained by type: %q (note %q)", name, i+1, e, pkg, ex.Text, ex.Note)
			}
			seen[fmt.Sprintf("%T", e.Data)] = true
			switch d := e.Data.(type) {
			case group.RebalanceStarted:
				if d.Reason == group.SessionExpired && !strings.Contains(ex.Text, "session.timeout.ms") {
					t.Errorf("%s: a rebalance after an expiry does not say why: %q", name, ex.Text)
				}
			case group.CommitRejected:
				if !strings.Contains(ex.Text, "generation fencing") || ex.Note != NoteGroups {
					t.Errorf("%s: a refused commit does not say what fencing protects: %q", name, ex.Text)
				}
			case group.CommitUnfenced:
				if !strings.Contains(ex.Text, "no-generation-fencing") {
					t.Errorf("%s: an unfenced commit does not name the bug: %q", name, ex.Text)
				}
			case group.StaticRejoined:
				if ex.Note != NoteStatic {
					t.Errorf("%s: a static rejoin points to %q", name, ex.Note)
				}
			case client.Acked:
				if d.Base >= 0 && !strings.Contains(ex.Text, "acknowledgement") {
					t.Errorf("%s: a client ack: %q", name, ex.Text)
				}
			}
		}
	}
	for _, want := range []string{"group.RebalanceStarted", "group.JoinCompleted", "group.GroupStabilized", "group.OffsetsCommitted", "group.CommitRejected",
		"group.CommitUnfenced", "group.StaticRejoined", "group.MemberLeft", "client.Joined", "client.CommitSent", "client.Acked", "client.ProcessFailed"} {
		if !seen[want] {
			t.Errorf("no %s in the scenarios: the test does not cover it", want)
		}
	}
}
