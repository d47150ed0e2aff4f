package tui

import (
	"testing"

	"mqsim/model/controller"
	"mqsim/model/raft"
	"mqsim/sim"
)

// findData is the first event from index from on by node whose payload has type P.
func findData[P sim.Payload](t testing.TB, r *Run, from int, node string) int {
	t.Helper()
	for i := max(from, 0); i < r.Len(); i++ {
		if _, ok := r.Events[i].Data.(P); ok && r.Events[i].Node == node {
			return i
		}
	}
	var p P
	t.Fatalf("no %s event of type %T after %d", node, p, from)
	return -1
}

// TestControllerQuorumExplanations: in the KRaft scenarios every event has an explanation
// of its own (none falls back to "NODE KIND: DETAIL."), the controllers' and Raft's events
// are explained by their own explainers with a note, and key events say the right thing.
func TestControllerQuorumExplanations(t *testing.T) {
	explain := func(r *Run, i int) Explanation {
		s := r.StateAt(i)
		return Explain(r, i, &s)
	}
	for _, name := range []string{"controller-failover", "controller-minority-partition"} {
		r := record(t, name)
		for i, e := range r.Events {
			s := r.StateAt(i)
			claimed := false
			for _, ex := range explainers {
				if _, ok := ex(r, i, &s); ok {
					claimed = true
					break
				}
			}
			if !claimed {
				t.Errorf("%s step %d %s: falls back to %q", name, i+1, e, explain(r, i).Text)
			}
			var own func(*Run, int, *State) (Explanation, bool)
			switch e.Data.(type) {
			case raft.Recovered, raft.PreCampaign, raft.Campaign, raft.Voted, raft.TermSeen, raft.BecameLeader,
				raft.ElectionLost, raft.LeaderAppended, raft.FollowerAppended, raft.Committed, raft.LostQuorum,
				raft.SteppedDown, raft.Truncated, raft.SnapshotTaken, raft.SnapshotSent, raft.SnapshotInstalling,
				raft.SnapshotInstalled, raft.SnapshotDropped:
				own = explainRaft
			case controller.Activated, controller.Resigned, controller.Registered, controller.TopicCreated,
				controller.BrokerFenced, controller.ISRShrunk, controller.PartitionOffline, controller.LeaderElected,
				controller.ISRChanged, controller.Applied:
				own = explainController
			default:
				continue
			}
			if ex, ok := own(r, i, &s); !ok || ex.Note == "" {
				t.Errorf("%s step %d %s: its own explainer says %q (ok %v)", name, i+1, e, ex.Text, ok)
			}
		}
	}

	fo := record(t, "controller-failover")
	elected := findData[raft.BecameLeader](t, fo, findData[sim.NodeCrashed](t, fo, 0, "c2"), "c1")
	active := findData[controller.Activated](t, fo, elected, "c1")
	firstCommit := findData[raft.Committed](t, fo, 0, "c2")
	followerCommit := findData[raft.Committed](t, fo, firstCommit+1, "c1")
	fence := findData[controller.BrokerFenced](t, fo, active, "c1")
	shrunk := findData[controller.ISRShrunk](t, fo, fence, "c1")

	mp := record(t, "controller-minority-partition")
	lost := findData[raft.LostQuorum](t, mp, 0, "c2")
	resign := findData[controller.Resigned](t, mp, lost, "c2")
	truncated := findData[raft.Truncated](t, mp, resign, "c2")
	for _, tc := range []struct {
		r    *Run
		at   int
		note string
		want string
	}{
		{fo, elected, NoteRaft, "c1 wins the election for term 2 with the votes of c1 and c3 (2 of 3 controllers, a majority): it is now the Raft leader of the metadata log. " +
			"It appends a no-op entry in its term and becomes the active controller only once that entry is committed and it has applied its whole log, so it starts from every decision its predecessors committed."},
		{fo, active, NoteRaft, "c1 becomes the active controller in controller epoch 2. It is the Raft leader of term 2 and has applied the metadata log up to entry 7, " +
			"so it goes on from every decision its predecessors committed (1 topic) and never contradicts them. " +
			"It gives b1, b2, b3 a new session before fencing anyone: a broker that was talking to the old controller gets a full session timeout to find this one."},
		{fo, firstCommit, NoteRaft, "The metadata log is committed up to entry 1: a majority of the controllers (at least 2 of 3) have it on disk, so every future leader will have it too. " +
			"c2, the leader, applies the entries: the decisions they carry are final, and the answers and pushes to brokers that waited for them go out."},
		{fo, followerCommit, NoteRaft, "c1 learns from the leader that the metadata log is committed up to entry 1, and applies the entries up to there to its own copy of the metadata. " +
			"A standby controller that keeps up like this can take over at once if the active one fails."},
		{fo, fence, NoteElection, "c1, the active controller, fences b1: no heartbeat for 3.494272s, longer than the session timeout. " +
			"It stops counting b1 as alive, removes it from every ISR and elects new leaders for the partitions b1 led."},
		{fo, shrunk, NoteISR, "With b1 fenced, the controller removes it from the ISR of t/1, which it followed: the ISR is now [b2 b3]. " +
			"The high watermark no longer waits for b1, and acks=all needs min.insync.replicas of the members left."},
		{mp, lost, NoteRaft, "c2 has led term 1, but during the last election timeout only 1 of the 3 controllers (itself included) answered it: fewer than the majority of 2 it needs to commit anything. " +
			"With check-quorum it steps down instead of going on as a leader that cannot decide: a controller cut off in a minority stops acting, and the majority side can elect a new one."},
		{mp, resign, NoteRaft, "c2 stops acting as the active controller: it is no longer the Raft leader of term 1 (it is a follower in term 1). " +
			"Its decisions that did not commit are void, and the 19 answers and pushes that waited for them are dropped: telling a broker about a decision that may never commit could contradict the next controller. " +
			"The next active controller decides again from the committed metadata log."},
		{mp, truncated, NoteRaft, "c2 removes its metadata log entries from 7 on: it has term 1 there, the leader c1 has term 2. " +
			"Those entries were never committed (a committed entry is on a majority, and the leader was elected with all of them); a leader that lost its term wrote them, and the decisions in them never took effect."},
	} {
		got := explain(tc.r, tc.at)
		if got.Text != tc.want || got.Note != tc.note {
			t.Errorf("%s step %d %s:\n got %q (%s)\nwant %q (%s)", tc.r.Script.Name, tc.at+1, tc.r.Events[tc.at], got.Text, got.Note, tc.want, tc.note)
		}
	}
}

// TestRaftExplainerLeavesQueueMode: in a queue-mode run the Raft groups are quorum
// queues, not the metadata quorum: explainRaft claims none of their events.
func TestRaftExplainerLeavesQueueMode(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	raftEvents := 0
	for i, e := range r.Events {
		if _, ok := e.Data.(raft.BecameLeader); ok {
			raftEvents++
		}
		if _, ok := e.Data.(raft.LeaderAppended); ok {
			raftEvents++
		}
		s := r.StateAt(i)
		if ex, ok := explainRaft(r, i, &s); ok {
			t.Errorf("step %d %s: explainRaft claims it: %q", i+1, e, ex.Text)
		}
	}
	if raftEvents == 0 {
		t.Fatal("the queue run has no Raft events: the test proves nothing")
	}
}
