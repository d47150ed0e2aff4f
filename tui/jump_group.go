package tui

import (
	"mqsim/model/client"
	"mqsim/model/group"
	"mqsim/sim"
)

// The consumer-group jump groups pick events by type: the coordinator's and the members'
// sides of one step of the protocol share a group, and kind words such as "error" or
// "fenced" are shared with events of other jobs.
var groupJumpGroups = []jumpGroup{
	{Name: "join", Match: isGroupJoin},
	{Name: "sync", Match: isGroupSync},
	{Name: "rebalance", Match: isGroupRebalance},
	{Name: "commit", Match: isGroupCommit},
}

// isGroupJoin: a member asks to join (JoinGroup) and the coordinator takes it in, or
// refuses it.
func isGroupJoin(e sim.Event) bool {
	switch e.Data.(type) {
	case client.Subscribed, client.Joined, client.JoinError, client.CannotJoin,
		group.MemberJoined, group.MemberRejoined, group.StaticRejoined, group.JoinRefused, group.JoinCompleted:
		return true
	}
	return false
}

// isGroupSync: the leader's assignment goes out (SyncGroup) and the members take their
// partitions; the group is stable.
func isGroupSync(e sim.Event) bool {
	switch e.Data.(type) {
	case client.LeaderAssigned, client.PartitionsAssigned, group.SyncFailed, group.GroupStabilized:
		return true
	}
	return false
}

// isGroupRebalance: what starts a rebalance (a member comes, goes, is expelled or
// fenced) and the members' giving up of their partitions.
func isGroupRebalance(e sim.Event) bool {
	switch e.Data.(type) {
	case group.RebalanceStarted, group.MemberExpired, group.MembersRemoved, group.MemberLeft, group.GroupEmptied,
		client.MustRejoin, client.Left, client.PartitionsLost, client.HeartbeatFenced, client.Fenced, client.MaxPollExceeded:
		return true
	}
	return false
}

// isGroupCommit: a member commits offsets (OffsetCommit) and the coordinator takes or
// refuses them; a member reads the committed offsets.
func isGroupCommit(e sim.Event) bool {
	switch e.Data.(type) {
	case client.CommitSent, client.CommitFailed, client.CommittedOffsets,
		group.OffsetsCommitted, group.CommitRejected, group.CommitUnfenced, group.CommitFailed:
		return true
	}
	return false
}
