package tui

import (
	"fmt"
	"strings"

	"mqsim/model/raft"
	"mqsim/sim"
)

// explainRaft says what a Raft event means in a Kafka run, where the Raft group is the
// KRaft metadata quorum: controllers c1..cN replicate the metadata log, and the Raft
// leader is the active controller once it has applied that log. In a queue-mode run the
// Raft groups are quorum queues, which explainQueue explains: this explainer leaves them.
func explainRaft(run *Run, i int, st *State) (Explanation, bool) {
	if run.queueMode() {
		return Explanation{}, false
	}
	e := run.Events[i]
	n := countControllers(st)
	var text string
	switch d := e.Data.(type) {
	case raft.Recovered:
		text = explainRaftRecovered(e.Node, d)
	case raft.PreCampaign:
		text = fmt.Sprintf("%s has heard from no Raft leader of the metadata quorum for an election timeout, so it asks the other controllers for pre-votes for term %d: would they vote for it? "+
			"A pre-vote changes nobody's term, so a controller that is merely cut off cannot disrupt a working leader by bumping the term when it comes back. It needs %d of the %d controllers.",
			e.Node, d.Term, majority(n), n)
	case raft.Campaign:
		text = fmt.Sprintf("%s won a majority of pre-votes and starts a real election: it moves to term %d, votes for itself (fsynced before it counts) and asks the other controllers for their votes. "+
			"Each controller grants one vote per term, and only to a candidate whose metadata log is at least as up to date as its own, so a term has at most one leader and that leader has every committed record.",
			e.Node, d.Term)
	case raft.Voted:
		text = explainRaftVote(e.Node, d)
	case raft.TermSeen:
		text = fmt.Sprintf("%s sees term %d in a %s message from %s, newer than its own: it moves to term %d as a follower, with no vote cast yet. "+
			"Terms only grow, and a message from an older term is ignored: that is how a deposed leader's late messages are fenced off.",
			e.Node, d.Term, d.Msg, d.From, d.Term)
	case raft.BecameLeader:
		text = fmt.Sprintf("%s wins the election for term %d with the votes of %s (%d of %d controllers, a majority): it is now the Raft leader of the metadata log. "+
			"It appends a no-op entry in its term and becomes the active controller only once that entry is committed and it has applied its whole log, so it starts from every decision its predecessors committed.",
			e.Node, d.Term, strings.Join(d.Voters, " and "), len(d.Voters), n)
	case raft.ElectionLost:
		text = fmt.Sprintf("%s cannot win term %d: %d of the %d controllers refused it, so it cannot reach a majority of %d. "+
			"It goes back to being a follower and tries again after another randomized election timeout, unless a leader reaches it first.",
			e.Node, d.Term, d.Rejected, d.Peers, majority(d.Peers))
	case raft.LeaderAppended:
		text = explainRaftLeaderAppend(e.Node, d.Entry, n)
	case raft.FollowerAppended:
		text = fmt.Sprintf("%s appends metadata log entries %d..%d (term %d) from the leader %s, which first checked that %s's log matches its own just before them. "+
			"%s writes them to disk and tells %s, which counts it towards the majority that commits them.",
			e.Node, d.First, d.Last, d.Term, d.From, e.Node, e.Node, d.From)
	case raft.Committed:
		if raftLeads(run, i, e.Node) {
			text = fmt.Sprintf("The metadata log is committed up to entry %d: a majority of the controllers (at least %d of %d) have it on disk, so every future leader will have it too. "+
				"%s, the leader, applies the entries: the decisions they carry are final, and the answers and pushes to brokers that waited for them go out.",
				d.Index, majority(n), n, e.Node)
		} else {
			text = fmt.Sprintf("%s learns from the leader that the metadata log is committed up to entry %d, and applies the entries up to there to its own copy of the metadata. "+
				"A standby controller that keeps up like this can take over at once if the active one fails.",
				e.Node, d.Index)
		}
	case raft.LostQuorum:
		text = fmt.Sprintf("%s has led term %d, but during the last election timeout only %d of the %d controllers (itself included) answered it: fewer than the majority of %d it needs to commit anything. "+
			"With check-quorum it steps down instead of going on as a leader that cannot decide: a controller cut off in a minority stops acting, and the majority side can elect a new one.",
			e.Node, d.Term, d.Active, d.Peers, majority(d.Peers))
	case raft.SteppedDown:
		text = fmt.Sprintf("%s led term %d, but %s is in term %d: the other controllers held a newer election. %s steps down to follower; "+
			"its entries that never committed may be replaced by the new leader's, and the decisions in them never take effect.",
			e.Node, d.Term, d.From, d.NewTerm, e.Node)
	case raft.Truncated:
		text = fmt.Sprintf("%s removes its metadata log entries from %d on: it has term %d there, the leader %s has term %d. "+
			"Those entries were never committed (a committed entry is on a majority, and the leader was elected with all of them); a leader that lost its term wrote them, and the decisions in them never took effect.",
			e.Node, d.Index, d.HadTerm, d.Leader, d.LeaderTerm)
	case raft.SnapshotTaken:
		text = fmt.Sprintf("%s writes a snapshot of its metadata up to entry %d (term %d, %dB) and drops the log before it. "+
			"A restart loads the snapshot and replays only the entries after it, so the metadata log does not grow forever.",
			e.Node, d.Snapshot.Index, d.Snapshot.Term, d.Bytes)
	case raft.SnapshotSent:
		text = fmt.Sprintf("%s, the leader, sends its metadata snapshot up to entry %d (term %d) to %s: it has compacted away the entries %s needs next, so it sends the state they built instead.",
			e.Node, d.Snapshot.Index, d.Snapshot.Term, d.To, d.To)
	case raft.SnapshotInstalling:
		text = fmt.Sprintf("%s starts writing the leader %s's metadata snapshot (up to entry %d, term %d) to its disk; it replaces its state and log only once the write is durable.",
			e.Node, d.From, d.Snapshot.Index, d.Snapshot.Term)
	case raft.SnapshotInstalled:
		text = fmt.Sprintf("%s has the leader %s's metadata snapshot up to entry %d (term %d, %dB) on disk and now starts from it: its metadata is the snapshot's, and its log goes on after entry %d.",
			e.Node, d.From, d.Snapshot.Index, d.Snapshot.Term, d.Bytes, d.Snapshot.Index)
	case raft.SnapshotDropped:
		text = fmt.Sprintf("%s's snapshot write up to entry %d (term %d) was not durable when it crashed (%dB of %dB): it ignores it and keeps its previous snapshot and log.",
			e.Node, d.Snapshot.Index, d.Snapshot.Term, d.Durable, d.Size)
	case raft.KVFinished:
		text = fmt.Sprintf("%s, a client of the Raft key-value store, finished an operation: %s. Its history goes to the linearizability checker.", e.Node, e.Detail)
	default:
		return Explanation{}, false
	}
	return Explanation{text, NoteRaft}, true
}

// explainRaftRecovered says what a controller found on its disk when its Raft node started.
func explainRaftRecovered(node string, d raft.Recovered) string {
	var found []string
	if d.StateFile == "" {
		found = append(found, "no term or vote (a fresh controller)")
	} else {
		found = append(found, fmt.Sprintf("term %d and its vote", d.Term))
	}
	if d.Snapshot.Index > 0 {
		found = append(found, fmt.Sprintf("a metadata snapshot up to entry %d", d.Snapshot.Index))
	}
	switch {
	case d.LogLast >= d.LogFirst:
		found = append(found, fmt.Sprintf("metadata log entries %d..%d", d.LogFirst, d.LogLast))
	case d.Snapshot.Index > 0:
		found = append(found, "no log entries after it")
	default:
		found = append(found, "an empty metadata log")
	}
	text := fmt.Sprintf("%s starts its Raft node from its disk and finds %s. ", node, strings.Join(found, ", "))
	if n := len(d.InvalidSnapshots); n > 0 {
		text += fmt.Sprintf("It deleted %d torn or corrupt snapshot file(s). ", n)
	}
	if d.WALRepaired {
		text += fmt.Sprintf("Recovery cut %dB of torn or corrupt log tail: entries never fsynced, which it had therefore never acknowledged to the leader. ", d.WAL.TruncatedBytes())
	}
	if d.Reset.Cause != raft.NoReset {
		text += "Its log did not fit the snapshot, so the log starts over after the snapshot. "
	}
	return text + "The term and vote are fsynced before a vote is answered, so a restart can never make it vote twice in a term. It comes back as a follower and catches up from the leader."
}

// explainRaftVote says why a controller granted or refused a (pre-)vote.
func explainRaftVote(node string, d raft.Voted) string {
	what := "vote"
	if d.Pre {
		what = "pre-vote"
	}
	if d.Granted {
		if d.Pre {
			return fmt.Sprintf("%s would vote for %s in term %d: it has heard from no leader lately, and %s's metadata log is at least as up to date as its own. A pre-vote promises nothing and changes no term.",
				node, d.Candidate, d.Term, d.Candidate)
		}
		return fmt.Sprintf("%s votes for %s in term %d and writes the vote to disk before answering: it cannot vote for anyone else in this term, even after a crash. %s's metadata log is at least as up to date as its own.",
			node, d.Candidate, d.Term, d.Candidate)
	}
	text := fmt.Sprintf("%s refuses its %s to %s in term %d: ", node, what, d.Candidate, d.Term)
	switch d.Why {
	case raft.VotedForOther:
		return text + fmt.Sprintf("it already voted for %s in this term, and a controller votes once per term.", d.Other)
	case raft.LeaderKnown:
		return text + fmt.Sprintf("it follows the leader %s and has heard from it within an election timeout. A working leader keeps its term, so a controller that was only cut off cannot depose it.", d.Other)
	}
	return text + fmt.Sprintf("%s's metadata log is behind its own (an older last term, or shorter). A committed entry is on a majority, so a candidate missing one cannot gather a majority and never leads.", d.Candidate)
}

// explainRaftLeaderAppend says what the leader's new entry is.
func explainRaftLeaderAppend(node string, e raft.Entry, n int) string {
	if e.Type == raft.EntryNoop {
		return fmt.Sprintf("%s, the new Raft leader, appends a no-op entry at %d in term %d. A leader commits by counting copies only entries of its own term; committing this no-op commits every earlier entry with it, "+
			"and the controller becomes active once it has applied them all.", node, e.Index, e.Term)
	}
	return fmt.Sprintf("%s, the active controller, appends a batch of metadata records (%dB) to the Raft log at %d in term %d and sends it to the other controllers. "+
		"The decision takes effect, and the brokers hear of it, only once %d of the %d controllers have it on disk.", node, len(e.Data), e.Index, e.Term, majority(n), n)
}

// countControllers is the number of controllers in the run's state.
func countControllers(st *State) int {
	n := 0
	for _, v := range st.Nodes {
		if v.Role == RoleController {
			n++
		}
	}
	return n
}

func majority(n int) int { return n/2 + 1 }

// raftLeads says whether node was the Raft leader at event i: its latest event that
// changed its role, looking back at most scanBack events, made it leader.
func raftLeads(run *Run, i int, node string) bool {
	for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
		e := run.Events[k]
		if e.Node != node {
			continue
		}
		switch e.Data.(type) {
		case raft.BecameLeader:
			return true
		case raft.LostQuorum, raft.SteppedDown, raft.TermSeen, raft.PreCampaign, raft.Campaign, raft.Recovered, sim.NodeCrashed, sim.NodeKilled:
			return false
		}
	}
	return false
}
