package raft

import (
	"testing"

	"mqsim/model/wal"
	"mqsim/sim"
)

// TestEventDetails: the events the catalogue's pinned traces do not reach print what the
// node's trace always printed for them.
func TestEventDetails(t *testing.T) {
	rec := wal.Recovery{Dir: "raft/log", Segments: 1, Batches: 3, LogEndOffset: 3,
		Cuts: []wal.Cut{{File: "raft/log/00000000000000000000.log", Position: 90, Offset: 3, Bytes: 12, Reason: "torn tail"}}}
	snap := SnapshotMeta{Index: 40, Term: 3}
	for _, tc := range []struct {
		e    sim.Payload
		want string
	}{
		{Recovered{StateFile: "raft/state-1", StateGen: 7, Term: 3, Vote: 2, Snapshot: snap, LogFirst: 41, LogLast: 57},
			"term 3 vote 2 (raft/state-1 gen 7), snapshot 40/t3, log 41..57"},
		{Recovered{InvalidSnapshots: []string{"raft/snap-00000000000000000050"}, LogFirst: 1, LogLast: 3, WAL: rec, WALRepaired: true},
			"no term or vote on disk, deleted invalid raft/snap-00000000000000000050, log 1..3, " +
				"recovered raft/log: log [0,3) in 1 segment, 3 batches; truncated 12 bytes torn tail at offset 3 (raft/log/00000000000000000000.log byte 90)"},
		{Recovered{Snapshot: snap, LogFirst: 41, LogLast: 40, Reset: LogReset{Cause: LogEndsBeforeSnapshot, Offset: 12, Snapshot: snap}},
			"no term or vote on disk, snapshot 40/t3, log 41..40, reset: log ends at 12, before the snapshot at 40"},
		{Recovered{Snapshot: snap, LogFirst: 41, LogLast: 40, WAL: rec, WALRepaired: true, Reset: LogReset{Cause: LogTermDiffers, LogTerm: 2, Snapshot: snap}},
			"no term or vote on disk, snapshot 40/t3, log 41..40, recovered raft/log: log [0,3) in 1 segment, 3 batches; " +
				"truncated 12 bytes torn tail at offset 3 (raft/log/00000000000000000000.log byte 90); reset: log has 40/t2, the snapshot 40/t3"},
		{Recovered{Snapshot: snap, LogFirst: 41, LogLast: 40, Reset: LogReset{Cause: LogStartsAfterSnapshot, Offset: 45, Snapshot: snap}},
			"no term or vote on disk, snapshot 40/t3, log 41..40, reset: log starts at 45, after the snapshot at 40"},
		{SnapshotDropped{Snapshot: snap, Durable: 100, Size: 300}, "write of 40/t3 not durable (100B of 300B); dropped"},
		{SnapshotTaken{Snapshot: snap, Bytes: 250}, "taken at 40/t3 (250B), log from 41"},
		{SnapshotInstalled{Snapshot: snap, Bytes: 250, From: "s1"}, "installed 40/t3 (250B) from s1"},
		{SnapshotSent{Snapshot: snap, To: "s2"}, "sent 40/t3 to s2"},
		{SnapshotInstalling{Snapshot: snap, From: "s1"}, "installing 40/t3 from s1"},
		{SteppedDown{Term: 4, From: "s2", NewTerm: 5}, "term 4: s2 has term 5"},
		{Voted{Pre: true, Candidate: "s3", Term: 5, Why: LogBehind}, "pre-vote for s3 in term 5 rejected: log behind"},
		{Voted{Candidate: "s3", Term: 5, Why: VotedForOther, Other: "s1"}, "vote for s3 in term 5 rejected: voted for s1"},
		{Voted{Candidate: "s3", Term: 5, Why: LeaderKnown, Other: "s1"}, "vote for s3 in term 5 rejected: leader s1 known"},
		{LeaderAppended{Entry{Index: 12, Term: 3, Data: make([]byte, 8)}}, "12/t3 8B"},
	} {
		if got := tc.e.Detail(); got != tc.want {
			t.Errorf("%T:\n got %q\nwant %q", tc.e, got, tc.want)
		}
	}
}
