package raft

import (
	"fmt"
	"strings"

	"mqsim/model/wal"
	"mqsim/sim"
)

// The events a Raft node and a KV client put in the trace. Node names are the names the
// world gives the peers; an entry or snapshot position is an index and its term.

// Recovered is a node built again from its disk: the term and vote, the snapshot, the log
// and what recovery repaired.
type Recovered struct {
	// StateFile is the term-and-vote file used, "" when neither slot held a valid record.
	StateFile string
	StateGen  uint64
	Term      int64
	Vote      sim.NodeID
	Snapshot  SnapshotMeta // zero when there is none
	// InvalidSnapshots are the torn or corrupt snapshot files deleted.
	InvalidSnapshots []string
	LogFirst         int64 // the first index after the snapshot
	LogLast          int64
	// WAL is the log's recovery; it is worth telling when WALRepaired (it cut a tail or
	// dropped epoch cache entries).
	WAL         wal.Recovery
	WALRepaired bool
	Reset       LogReset // the log did not fit the snapshot and starts over after it
}

// LogResetCause says why a recovered log could not continue from the snapshot.
type LogResetCause uint8

const (
	// NoReset: the log fits the snapshot.
	NoReset LogResetCause = iota
	// LogStartsAfterSnapshot: the log lost entries right after the snapshot.
	LogStartsAfterSnapshot
	// LogEndsBeforeSnapshot: the log is shorter than the snapshot.
	LogEndsBeforeSnapshot
	// LogTermDiffers: the log's entry at the snapshot's index has another term.
	LogTermDiffers
)

// LogReset is the log found not to fit the snapshot at recovery.
type LogReset struct {
	Cause    LogResetCause
	Offset   int64 // LogStartsAfterSnapshot: the log's first index; LogEndsBeforeSnapshot: its end
	LogTerm  int64 // LogTermDiffers: the log entry's term at the snapshot index
	Snapshot SnapshotMeta
}

func (r LogReset) String() string {
	switch r.Cause {
	case LogStartsAfterSnapshot:
		return fmt.Sprintf("log starts at %d, after the snapshot at %d", r.Offset, r.Snapshot.Index)
	case LogEndsBeforeSnapshot:
		return fmt.Sprintf("log ends at %d, before the snapshot at %d", r.Offset, r.Snapshot.Index)
	case LogTermDiffers:
		return fmt.Sprintf("log has %d/t%d, the snapshot %d/t%d", r.Snapshot.Index, r.LogTerm, r.Snapshot.Index, r.Snapshot.Term)
	}
	return ""
}

// SnapshotDropped is a snapshot write that a crash left short: it is not used.
type SnapshotDropped struct {
	Snapshot      SnapshotMeta
	Durable, Size int64 // bytes
}

// SnapshotTaken is the host's snapshot made durable: the log before it is compacted.
type SnapshotTaken struct {
	Snapshot SnapshotMeta
	Bytes    int
}

// SnapshotInstalled is a leader's snapshot made durable on a follower, which now starts
// from it.
type SnapshotInstalled struct {
	Snapshot SnapshotMeta
	Bytes    int
	From     string
}

// SnapshotSent is a leader sending its snapshot to a follower whose next entry it
// compacted away.
type SnapshotSent struct {
	Snapshot SnapshotMeta
	To       string
}

// SnapshotInstalling is a follower starting to write a leader's snapshot.
type SnapshotInstalling struct {
	Snapshot SnapshotMeta
	From     string
}

// LostQuorum is a leader (with CheckQuorum) stepping down after an election timeout in
// which fewer than a quorum of the peers answered.
type LostQuorum struct {
	Term          int64
	Active, Peers int
}

// SteppedDown is a leader stepping down on a message with a higher term.
type SteppedDown struct {
	Term    int64 // the leader's
	From    string
	NewTerm int64
}

// TermSeen is a non-leader moving to a higher term a message carried.
type TermSeen struct {
	Term int64
	Msg  MsgType
	From string
}

// PreCampaign is a node asking for pre-votes: would the others vote for it in Term?
type PreCampaign struct{ Term int64 }

// Campaign is a node starting an election in Term, voting for itself.
type Campaign struct{ Term int64 }

// ElectionLost is a (pre-)candidate rejected by enough peers that it cannot win.
type ElectionLost struct {
	Term            int64
	Rejected, Peers int
}

// BecameLeader is a candidate with a quorum of votes becoming leader.
type BecameLeader struct {
	Term   int64
	Voters []string
}

// LeaderAppended is a leader appending an entry (its term's noop, or a proposal).
type LeaderAppended struct{ Entry Entry }

// FollowerAppended is a follower appending entries from the leader.
type FollowerAppended struct {
	First, Last int64
	Term        int64 // the last entry's
	From        string
}

// Committed is the commit index moving up to Index.
type Committed struct{ Index int64 }

// VoteRejection says why a node refused a (pre-)vote.
type VoteRejection uint8

const (
	// LogBehind: the candidate's log is less up to date than the voter's.
	LogBehind VoteRejection = iota
	// VotedForOther: the voter voted for Other (or "nobody") in the term.
	VotedForOther
	// LeaderKnown: the voter follows leader Other.
	LeaderKnown
)

// Voted is a node answering a vote or pre-vote request.
type Voted struct {
	Pre       bool // a pre-vote: nobody's term changes
	Candidate string
	Term      int64
	Granted   bool
	Why       VoteRejection // when not Granted
	Other     string        // VotedForOther, LeaderKnown: whom
}

// Truncated is a follower removing its entries from Index on, which conflict with the
// leader's.
type Truncated struct {
	Index      int64
	HadTerm    int64
	Leader     string
	LeaderTerm int64
}

// KVFinished is a KV client's operation finished: its history record.
type KVFinished struct{ Record KVRecord }

func (Recovered) Kind() string { return "recover" }
func (e Recovered) Detail() string {
	var notes []string
	if e.StateFile == "" {
		notes = append(notes, "no term or vote on disk")
	} else {
		notes = append(notes, fmt.Sprintf("term %d vote %d (%s gen %d)", e.Term, e.Vote, e.StateFile, e.StateGen))
	}
	if e.Snapshot.Index > 0 {
		notes = append(notes, fmt.Sprintf("snapshot %d/t%d", e.Snapshot.Index, e.Snapshot.Term))
	}
	for _, name := range e.InvalidSnapshots {
		notes = append(notes, "deleted invalid "+name)
	}
	notes = append(notes, fmt.Sprintf("log %d..%d", e.LogFirst, e.LogLast))
	var repair []string
	if e.WALRepaired {
		repair = append(repair, e.WAL.String())
	}
	if e.Reset.Cause != NoReset {
		repair = append(repair, "reset: "+e.Reset.String())
	}
	if len(repair) > 0 {
		notes = append(notes, strings.Join(repair, "; "))
	}
	return strings.Join(notes, ", ")
}

func (SnapshotDropped) Kind() string { return "snapshot" }
func (e SnapshotDropped) Detail() string {
	return fmt.Sprintf("write of %d/t%d not durable (%dB of %dB); dropped", e.Snapshot.Index, e.Snapshot.Term, e.Durable, e.Size)
}
func (SnapshotTaken) Kind() string { return "snapshot" }
func (e SnapshotTaken) Detail() string {
	return fmt.Sprintf("taken at %d/t%d (%dB), log from %d", e.Snapshot.Index, e.Snapshot.Term, e.Bytes, e.Snapshot.Index+1)
}
func (SnapshotInstalled) Kind() string { return "snapshot" }
func (e SnapshotInstalled) Detail() string {
	return fmt.Sprintf("installed %d/t%d (%dB) from %s", e.Snapshot.Index, e.Snapshot.Term, e.Bytes, e.From)
}
func (SnapshotSent) Kind() string { return "snapshot" }
func (e SnapshotSent) Detail() string {
	return fmt.Sprintf("sent %d/t%d to %s", e.Snapshot.Index, e.Snapshot.Term, e.To)
}
func (SnapshotInstalling) Kind() string { return "snapshot" }
func (e SnapshotInstalling) Detail() string {
	return fmt.Sprintf("installing %d/t%d from %s", e.Snapshot.Index, e.Snapshot.Term, e.From)
}
func (LostQuorum) Kind() string { return "step-down" }
func (e LostQuorum) Detail() string {
	return fmt.Sprintf("term %d: lost quorum, %d of %d active", e.Term, e.Active, e.Peers)
}
func (SteppedDown) Kind() string { return "step-down" }
func (e SteppedDown) Detail() string {
	return fmt.Sprintf("term %d: %s has term %d", e.Term, e.From, e.NewTerm)
}
func (TermSeen) Kind() string        { return "term" }
func (e TermSeen) Detail() string    { return fmt.Sprintf("%d (%s from %s)", e.Term, e.Msg, e.From) }
func (PreCampaign) Kind() string     { return "election" }
func (e PreCampaign) Detail() string { return fmt.Sprintf("pre-candidate for term %d", e.Term) }
func (Campaign) Kind() string        { return "election" }
func (e Campaign) Detail() string    { return fmt.Sprintf("candidate for term %d", e.Term) }
func (ElectionLost) Kind() string    { return "election" }
func (e ElectionLost) Detail() string {
	return fmt.Sprintf("lost term %d: %d of %d rejected", e.Term, e.Rejected, e.Peers)
}
func (BecameLeader) Kind() string { return "election" }
func (e BecameLeader) Detail() string {
	return fmt.Sprintf("leader for term %d (votes %s)", e.Term, strings.Join(e.Voters, " "))
}
func (LeaderAppended) Kind() string     { return "append" }
func (e LeaderAppended) Detail() string { return e.Entry.String() }
func (FollowerAppended) Kind() string   { return "append" }
func (e FollowerAppended) Detail() string {
	return fmt.Sprintf("%d..%d t%d from %s", e.First, e.Last, e.Term, e.From)
}
func (Committed) Kind() string     { return "commit" }
func (e Committed) Detail() string { return fmt.Sprintf("%d", e.Index) }
func (Voted) Kind() string         { return "vote" }
func (e Voted) Detail() string {
	kind := "vote"
	if e.Pre {
		kind = "pre-vote"
	}
	if e.Granted {
		return fmt.Sprintf("%s for %s in term %d granted", kind, e.Candidate, e.Term)
	}
	return fmt.Sprintf("%s for %s in term %d rejected: %s", kind, e.Candidate, e.Term, e.Why.describe(e.Other))
}

func (v VoteRejection) describe(other string) string {
	switch v {
	case VotedForOther:
		return "voted for " + other
	case LeaderKnown:
		return "leader " + other + " known"
	}
	return "log behind"
}

func (Truncated) Kind() string { return "truncate" }
func (e Truncated) Detail() string {
	return fmt.Sprintf("from %d: have t%d, leader %s has t%d", e.Index, e.HadTerm, e.Leader, e.LeaderTerm)
}
func (KVFinished) Kind() string     { return "kv" }
func (e KVFinished) Detail() string { return e.Record.String() }

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: Recovered{}, About: "a Raft node restarted from its disk: term and vote, snapshot, log, and what recovery repaired"},
		{Example: SnapshotDropped{}, About: "a crash left a snapshot write short; the node does not use it"},
		{Example: SnapshotTaken{}, About: "a Raft node's own snapshot is durable and its log before it is compacted"},
		{Example: SnapshotInstalled{}, About: "a follower made the leader's snapshot durable and starts from it"},
		{Example: SnapshotSent{}, About: "a leader sent its snapshot to a follower that needs entries it compacted away"},
		{Example: SnapshotInstalling{}, About: "a follower started writing the leader's snapshot"},
		{Example: LostQuorum{}, About: "a Raft leader stepped down: a quorum of its peers did not answer within an election timeout"},
		{Example: SteppedDown{}, About: "a Raft leader stepped down on a message with a higher term"},
		{Example: TermSeen{}, About: "a Raft node moved to the higher term a message carried"},
		{Example: PreCampaign{}, About: "a Raft node asks for pre-votes before starting an election"},
		{Example: Campaign{}, About: "a Raft node starts an election in a new term and votes for itself"},
		{Example: ElectionLost{}, About: "a Raft (pre-)candidate was rejected by too many peers to win"},
		{Example: BecameLeader{}, About: "a Raft candidate won a quorum of votes and leads the term"},
		{Example: LeaderAppended{}, About: "a Raft leader appended an entry (its term's noop or a proposal)"},
		{Example: FollowerAppended{}, About: "a Raft follower appended entries from its leader"},
		{Example: Committed{}, About: "a Raft node's commit index moved: the entries up to it are on a quorum"},
		{Example: Voted{}, About: "a Raft node granted or refused a vote or pre-vote, and why"},
		{Example: Truncated{}, About: "a Raft follower removed entries that conflict with its leader's log"},
		{Example: KVFinished{}, About: "a Raft KV client's operation finished: its history record"},
	}
}
