package raft

import (
	"fmt"
	"strings"

	"mqsim/sim"
)

// EntryType says what an entry carries.
type EntryType uint8

const (
	// EntryNormal carries a command of the host's state machine.
	EntryNormal EntryType = iota
	// EntryNoop is the empty entry a new leader appends in its term, so that it can
	// commit (and so learn the commit index of) everything before it.
	EntryNoop
)

func (t EntryType) String() string {
	switch t {
	case EntryNormal:
		return "normal"
	case EntryNoop:
		return "noop"
	}
	return fmt.Sprintf("entry-type(%d)", uint8(t))
}

// Entry is one slot of the replicated log. Data is immutable once proposed: logs and
// messages share it and nobody writes to it.
type Entry struct {
	Index int64
	Term  int64
	Type  EntryType
	Data  []byte
}

func (e Entry) String() string {
	if e.Type == EntryNoop {
		return fmt.Sprintf("%d/t%d noop", e.Index, e.Term)
	}
	return fmt.Sprintf("%d/t%d %dB", e.Index, e.Term, len(e.Data))
}

// SnapshotMeta says which log prefix a snapshot replaces: every entry up to Index, the
// last of which has term Term.
type SnapshotMeta struct {
	Index int64
	Term  int64
}

// Snapshot is a state machine image and the prefix it replaces. Data is immutable.
type Snapshot struct {
	SnapshotMeta
	Data []byte
}

// MsgType is the kind of a Raft message.
type MsgType uint8

const (
	// MsgPreVote asks for a pre-vote for Term (the sender's term + 1, not yet taken);
	// Index and LogTerm are the sender's last entry.
	MsgPreVote MsgType = iota + 1
	// MsgPreVoteResp answers a pre-vote; Term is the asked term when granted.
	MsgPreVoteResp
	// MsgVote asks for a vote in Term; Index and LogTerm are the candidate's last entry.
	MsgVote
	// MsgVoteResp answers a vote request.
	MsgVoteResp
	// MsgApp carries entries after (Index, LogTerm), the leader's commit index, and Seq,
	// the leader's latest leadership-check round. Without entries it is a heartbeat.
	MsgApp
	// MsgAppResp answers an append or a snapshot. When accepted, Index is the follower's
	// last index known to match the leader's log (durable before the answer is sent).
	// When rejected, Index is the rejected previous index and (Hint, LogTerm) the
	// follower's last index at or below it whose term is at most the leader's LogTerm:
	// where the leader should probe next. Seq echoes the append's Seq.
	MsgAppResp
	// MsgSnap carries a snapshot to a follower whose log is behind the leader's first
	// entry.
	MsgSnap
)

func (t MsgType) String() string {
	switch t {
	case MsgPreVote:
		return "pre-vote"
	case MsgPreVoteResp:
		return "pre-vote-resp"
	case MsgVote:
		return "vote"
	case MsgVoteResp:
		return "vote-resp"
	case MsgApp:
		return "app"
	case MsgAppResp:
		return "app-resp"
	case MsgSnap:
		return "snap"
	}
	return fmt.Sprintf("msg-type(%d)", uint8(t))
}

// Message is what Raft peers send each other. A host forwards every Message it receives
// to Raft.Step. Messages are immutable once sent.
type Message struct {
	Type    MsgType
	Group   int64
	Term    int64
	Index   int64
	LogTerm int64
	Entries []Entry
	Commit  int64
	Reject  bool
	Hint    int64
	Seq     uint64
	// Snapshot is set on MsgSnap only.
	Snapshot *Snapshot
}

// String renders the message for the trace: "app t3 prev=5/t2 ents=6..8 commit=5".
// MessageType names the message's kind ("app", "vote"), for views that tell messages
// apart by kind: every Raft message has the one Go type Message.
func (m Message) MessageType() string { return m.Type.String() }

func (m Message) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s t%d", m.Type, m.Term)
	switch m.Type {
	case MsgPreVote, MsgVote:
		fmt.Fprintf(&b, " last=%d/t%d", m.Index, m.LogTerm)
	case MsgPreVoteResp, MsgVoteResp:
		if m.Reject {
			b.WriteString(" rejected")
		} else {
			b.WriteString(" granted")
		}
	case MsgApp:
		fmt.Fprintf(&b, " prev=%d/t%d", m.Index, m.LogTerm)
		if n := len(m.Entries); n > 0 {
			fmt.Fprintf(&b, " ents=%d..%d", m.Entries[0].Index, m.Entries[n-1].Index)
		}
		fmt.Fprintf(&b, " commit=%d", m.Commit)
	case MsgAppResp:
		if m.Reject {
			fmt.Fprintf(&b, " reject %d hint=%d/t%d", m.Index, m.Hint, m.LogTerm)
		} else {
			fmt.Fprintf(&b, " ok %d", m.Index)
		}
	case MsgSnap:
		if m.Snapshot != nil {
			fmt.Fprintf(&b, " %d/t%d %dB", m.Snapshot.Index, m.Snapshot.Term, len(m.Snapshot.Data))
		}
	}
	if m.Group != 0 {
		fmt.Fprintf(&b, " g%d", m.Group)
	}
	return b.String()
}

// None is "no node": no vote cast, no leader known.
const None sim.NodeID = -1
