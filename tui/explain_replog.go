package tui

import (
	"fmt"

	replog "mqsim/labs/replicated-log"
)

// explainReplog says what the replicated-log lab's events mean: replicas that run the
// learner's code over a durable log, and the controller that names each epoch's leader.
func explainReplog(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case replog.ReplicaStarted:
		text := fmt.Sprintf("%s starts and reads its log back: %d entries. What it appended survives a crash once fsynced; its high watermark, kept in memory, starts again at 0.", e.Node, d.Entries)
		if d.Cut > 0 {
			text += fmt.Sprintf(" It cuts %d bytes of a torn last entry.", d.Cut)
		}
		return Explanation{text, NoteWAL}, true
	case replog.RoleSet:
		if d.Leader == e.Node {
			return Explanation{fmt.Sprintf("%s hears from the controller that it leads epoch %d: its log is now the one every follower copies, and truncates to.", e.Node, d.Epoch), NoteElection}, true
		}
		return Explanation{fmt.Sprintf("%s hears from the controller that %s leads epoch %d: it follows %s and refuses clients.", e.Node, d.Leader, d.Epoch, d.Leader), NoteElection}, true
	case replog.LeaderNamed:
		return Explanation{fmt.Sprintf("The controller heard nothing from the leader for a second and names %s, which answered it, leader of epoch %d. It does not look at the logs: any live replica may lead, so an acknowledged entry must be on every replica.",
			d.Leader, d.Epoch), NoteElection}, true
	case replog.AppendAcknowledged:
		return Explanation{fmt.Sprintf("Your code acknowledges the append at offset %d to %s: it promises the value stays there whatever fails next. That holds only if every replica has it (the offset is below the high watermark).",
			d.Offset, d.Client), NoteHW}, true
	case replog.LogTruncated:
		return Explanation{fmt.Sprintf("Your code removes %d entries of %s's log from offset %d on: they differ from the leader's. Any of them acknowledged, or read, is now gone.", d.Removed, e.Node, d.From), NoteTruncation}, true
	case replog.CodePanicked:
		return Explanation{fmt.Sprintf("Your code panicked on %s (%s): the call stopped there, and the replica goes on with the state it left.", e.Node, d.Why), NoteFaults}, true
	}
	return Explanation{}, false
}
