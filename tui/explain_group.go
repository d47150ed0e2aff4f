package tui

import (
	"fmt"
	"strings"

	"mqsim/model/group"
	"mqsim/model/proto"
)

// Consumer-group note file names (see Notes).
const (
	NoteGroups    = "consumer-groups.md"
	NoteStatic    = "static-membership.md"
	NoteAssignors = "assignors.md"
	NoteKIP848    = "kip848-rebalance-protocol.md"
)

// fencingText says what generation fencing protects; commit explanations end with it.
const fencingText = "Commits carry the member id and generation, and the coordinator refuses those of a member it removed or of an older generation (generation fencing): " +
	"a member that was removed while it was paused or slow may still believe it owns its partitions, and its commit would move the offsets of partitions that now belong to someone else."

// explainGroup says what the group coordinator's events mean.
func explainGroup(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case group.Loaded:
		var names []string
		for _, g := range d.Groups {
			names = append(names, fmt.Sprintf("%s (generation %d, %d members, %d committed offsets)", g.ID, g.Generation, g.Members, g.Offsets))
		}
		held := "no group yet"
		if len(names) > 0 {
			held = strings.Join(names, "; ")
		}
		return Explanation{fmt.Sprintf("%s now leads %s/%d, so it is the coordinator of the groups whose ids hash to that partition. It rebuilt them from the partition's log (%d records): %s. "+
			"Membership and committed offsets are records in a replicated partition, so a coordinator fails over like any leader; every member gets a fresh session, and members still talking to the old coordinator find this one with FindCoordinator.",
			e.Node, proto.OffsetsTopic, d.Partition, d.Records, held), NoteGroups}, true
	case group.Unloaded:
		return Explanation{fmt.Sprintf("%s no longer leads %s/%d (%s): it stops coordinating its %d groups and answers their members NOT_COORDINATOR. "+
			"Nothing is lost: the groups' membership and committed offsets are records in the partition, and its new leader loads them.",
			e.Node, proto.OffsetsTopic, d.Partition, d.Why, d.Groups), NoteGroups}, true
	case group.LoadFailed, group.Unreadable:
		return Explanation{fmt.Sprintf("%s could not read all of its offsets partition while loading its groups: %s. The groups are rebuilt from what it could read.", e.Node, e.Detail), NoteGroups}, true
	case group.MemberExpired:
		return Explanation{fmt.Sprintf("The coordinator heard no heartbeat from %s for %s (session.timeout.ms), so it takes the member for dead and removes it from group %s. "+
			"Its partitions go to the other members at the rebalance that follows, and they start from the last committed offsets: whatever %s processed since its last commit will be processed again. "+
			"If it was only paused (a long GC pause), it learns it was removed at its next heartbeat or commit.", d.Member, d.SessionTimeout, d.Group, d.Member), NoteGroups}, true
	case group.JoinRefused:
		return Explanation{fmt.Sprintf("The coordinator refuses %s's join to group %s: it asks for assignor %s, and the group's members use %s. Every member must support the assignor the group uses (INCONSISTENT_GROUP_PROTOCOL).",
			d.Client, d.Group, d.Wants, d.Uses), NoteAssignors}, true
	case group.MemberJoined:
		if d.Instance != "" {
			return Explanation{fmt.Sprintf("%s joins group %s as a static member (group.instance.id %s). The coordinator will recognise the instance id: if it restarts within session.timeout.ms it gets its partitions back without a rebalance.",
				d.Member, d.Group, d.Instance), NoteStatic}, true
		}
		return Explanation{fmt.Sprintf("%s joins group %s, with the member id the coordinator gave it (a first JoinGroup gets MEMBER_ID_REQUIRED and an id, KIP-394). A new member means a new assignment: the group rebalances.",
			d.Member, d.Group), NoteGroups}, true
	case group.MemberRejoined:
		return Explanation{fmt.Sprintf("Static instance %s of group %s is back (it restarted) and gets a new member id, %s. The old id %s is fenced: anything still running under it gets FENCED_INSTANCE_ID, so two incarnations never both consume.",
			d.Instance, d.Group, d.Member, d.Was), NoteStatic}, true
	case group.StaticRejoined:
		return Explanation{fmt.Sprintf("%s rejoined group %s with the same subscription, so it keeps generation %d and its partitions %s: no rebalance, the other members never pause (KIP-345). "+
			"That is what static membership buys: a planned restart within session.timeout.ms costs no rebalance, at the price of nobody reading its partitions while it is down.",
			d.Member, d.Group, d.Generation, proto.TPList(d.Partitions)), NoteStatic}, true
	case group.RebalanceStarted:
		return explainRebalance(d), true
	case group.MembersRemoved:
		return Explanation{fmt.Sprintf("%s did not rejoin group %s within the rebalance timeout: the coordinator removes them and ends the join phase without them. Their partitions are shared among the members that did rejoin.",
			strings.Join(d.Members, ", "), d.Group), NoteGroups}, true
	case group.GroupEmptied:
		return Explanation{fmt.Sprintf("Group %s has no members left (generation %d): it is Empty. Its committed offsets stay, so the next consumer to join starts where the group left off.",
			d.Group, d.Generation), NoteGroups}, true
	case group.JoinCompleted:
		return Explanation{fmt.Sprintf("The join phase of group %s ends: generation %d, members %s, leader %s. "+
			"The generation is the group's epoch: every heartbeat and commit carries it, and the coordinator refuses those of an older one. "+
			"The leader now runs the assignor over everyone's subscriptions and sends the result in SyncGroup; until it is stored, the members consume nothing new.",
			d.Group, d.Generation, strings.Join(d.Members, " "), d.Leader), NoteGroups}, true
	case group.SyncFailed:
		return Explanation{fmt.Sprintf("The coordinator could not store generation %d's assignment of group %s in %s (%s): the members cannot get their partitions, so the group rebalances again.",
			d.Generation, d.Group, proto.OffsetsTopic, d.Err), NoteGroups}, true
	case group.GroupStabilized:
		var parts []string
		for _, a := range d.Assignment {
			parts = append(parts, fmt.Sprintf("%s gets %s", a.Member, proto.TPList(a.Partitions)))
		}
		return Explanation{fmt.Sprintf("Generation %d of group %s is stable: the leader's assignment is replicated in %s and every member gets its partitions (%s). "+
			"Each starts a partition at the group's committed offset, so records processed but not committed before the rebalance are processed again.",
			d.Generation, d.Group, proto.OffsetsTopic, strings.Join(parts, "; ")), NoteGroups}, true
	case group.MemberLeft:
		return Explanation{fmt.Sprintf("%s leaves group %s (%s) with LeaveGroup: the coordinator rebalances at once instead of waiting for its session to time out, so its partitions get a new owner quickly.",
			d.Member, d.Group, d.Reason), NoteGroups}, true
	case group.CommitRejected:
		return Explanation{fmt.Sprintf("The coordinator refuses %s's commit of %s in group %s (generation %d): %s. %s The client gets CommitFailedException, drops its partitions and rejoins.",
			d.Member, offsetList(d.Offsets), d.Group, d.Generation, d.Err, fencingText), NoteGroups}, true
	case group.CommitUnfenced:
		return Explanation{fmt.Sprintf("%s commits %s in group %s with generation %d while the group is at %d: the coordinator should refuse it (%s) but accepts it, because of the planted bug no-generation-fencing. "+
			"A zombie has just moved the offsets of partitions another member owns: the group will re-read or skip records. %s",
			d.Member, offsetList(d.Offsets), d.Group, d.Generation, d.Current, d.Err, fencingText), NoteGroups}, true
	case group.CommitFailed:
		return Explanation{fmt.Sprintf("The coordinator accepted %s's commit of %s in group %s but could not store it (%s): the member learns that its offsets are not committed.",
			d.Member, offsetList(d.Offsets), d.Group, d.Err), NoteGroups}, true
	case group.TxnCommitRejected:
		return Explanation{fmt.Sprintf("The coordinator refuses the offsets %s that %s (generation %d) sent to pid %d's transaction in group %s: %s. "+
			"KIP-447 fences transactional commits like plain ones: an application whose group moved on must not commit inputs another member now owns; its transaction will have to abort.",
			offsetList(d.Offsets), d.Member, d.Generation, d.ProducerID, d.Group, d.Err), NoteExactlyOnce}, true
	case group.TxnCommitUnfenced:
		return Explanation{fmt.Sprintf("The coordinator takes the offsets %s from %s (generation %d) into pid %d's transaction although it should refuse them (%s): the planted no-txn-offset-fencing bug. A zombie can now commit inputs another member also processes.",
			offsetList(d.Offsets), d.Member, d.Generation, d.ProducerID, d.Err), NoteExactlyOnce}, true
	case group.TxnCommitFailed:
		return Explanation{fmt.Sprintf("The coordinator could not store the offsets %s of pid %d's transaction in group %s: %s.", offsetList(d.Offsets), d.ProducerID, d.Group, d.Err), NoteExactlyOnce}, true
	case group.TxnOffsetsPending:
		return Explanation{fmt.Sprintf("The coordinator stored %s's offsets %s for group %s inside pid %d's transaction. They are pending: OffsetFetch does not see them until the transaction's marker reaches %s, so a crash before the commit makes the group re-read those inputs.",
			d.Member, offsetList(d.Offsets), d.Group, d.ProducerID, proto.OffsetsTopic), NoteExactlyOnce}, true
	case group.TxnOffsetsCompleted:
		what := "the pending offsets are dropped: the inputs will be read again"
		if d.Commit {
			what = "the pending offsets become the committed ones, in the same step as the transaction's output becomes visible"
		}
		return Explanation{fmt.Sprintf("Pid %d's marker reached the offsets partition: %s (%d offsets).", d.ProducerID, what, len(d.Offsets)), NoteExactlyOnce}, true
	case group.GroupEpochBumped:
		return Explanation{fmt.Sprintf("Group %s (consumer protocol, KIP-848) moves to group epoch %d because %s %s. Nothing stops: the coordinator recomputes the target assignment at the next heartbeat it gets, "+
			"and each member moves to the new epoch on its own heartbeats. There is no join phase and no waiting for the whole group.", d.Group, d.Epoch, d.Member, d.Reason), NoteKIP848}, true
	case group.TargetAssigned:
		return Explanation{fmt.Sprintf("The coordinator ran the %s assignor for group %s at epoch %d: %s. This is the target, not what members hold: a partition reaches its new owner only after its old owner has stopped reporting it in its heartbeats.",
			d.Assignor, d.Group, d.Epoch, assignmentList(d.Target)), NoteKIP848}, true
	case group.MemberReconciled:
		var what string
		switch d.State {
		case group.MemberUnrevoked:
			what = fmt.Sprintf("it must first give up %s: it stays at epoch %d, keeps %s, and the coordinator waits for a heartbeat that no longer lists them (at most its rebalance timeout, max.poll.interval.ms, or it is fenced)", proto.TPList(d.Revoking), d.Epoch, proto.TPList(d.Assigned))
		case group.MemberUnreleased:
			what = fmt.Sprintf("it reaches epoch %d and may use %s now; the rest of its target is still owned by other members, and comes at a later heartbeat once they release it", d.Epoch, proto.TPList(d.Assigned))
		default:
			what = fmt.Sprintf("it reaches epoch %d holding its whole target, %s", d.Epoch, proto.TPList(d.Assigned))
		}
		return Explanation{fmt.Sprintf("The coordinator reconciles %s in group %s: %s. Each member is reconciled on its own heartbeats: revoke first, then the new owner gets the partition, so no two members of the group hold it at once.",
			d.Member, d.Group, what), NoteKIP848}, true
	case group.ConsumerMemberFenced:
		return Explanation{fmt.Sprintf("The coordinator fences %s of group %s (at epoch %d): it %s. It is removed, the group epoch moves on and %s go to other members; its commits are refused from now on, and when it learns it was fenced it drops its partitions without committing and rejoins with epoch 0.",
			d.Member, d.Group, d.Epoch, d.Reason, proto.TPList(d.Partitions)), NoteKIP848}, true
	case group.ConsumerMemberLeft:
		if d.Static {
			return Explanation{fmt.Sprintf("Static member %s of group %s goes away with a heartbeat of epoch -2: the coordinator keeps its assignment (nobody else gets it) for the session timeout, expecting it back.", d.Member, d.Group), NoteKIP848}, true
		}
		return Explanation{fmt.Sprintf("%s leaves group %s with a heartbeat of epoch -1: the coordinator removes it and moves the group epoch on, so its partitions go to the others at their next heartbeats.", d.Member, d.Group), NoteKIP848}, true
	case group.StaticMemberReturned:
		return Explanation{fmt.Sprintf("Static instance %s of group %s is back as %s (it was %s) within its session: it takes over %s with no new group epoch, so no other member is disturbed.",
			d.Instance, d.Group, d.Member, d.Was, proto.TPList(d.Partitions)), NoteKIP848}, true
	case group.HeartbeatRefused:
		if d.Share {
			return Explanation{fmt.Sprintf("The coordinator refuses %s's ShareGroupHeartbeat in group %s at epoch %d: %s. A fenced or unknown share member joins again with epoch 0; a group id already used by a classic or consumer group cannot be a share group.",
				orUnnamed(d.Member), d.Group, d.Epoch, d.Err), NoteKIP848}, true
		}
		return Explanation{fmt.Sprintf("The coordinator refuses %s's ConsumerGroupHeartbeat in group %s at epoch %d: %s. A fenced or unknown member drops its partitions without committing and rejoins with epoch 0.",
			orUnnamed(d.Member), d.Group, d.Epoch, d.Err), NoteKIP848}, true
	case group.ShareMemberAssigned:
		return Explanation{fmt.Sprintf("Share-group member %s of %s moves straight to epoch %d and %s. Unlike a consumer group there is nothing to revoke first: share members hold no partition alone (the share-partition leader hands out each record to one member at a time), so several members may fetch from one partition.",
			d.Member, d.Group, d.Epoch, proto.TPList(d.Assigned)), NoteKIP848}, true
	case group.ShareMemberLeft:
		return Explanation{fmt.Sprintf("%s leaves share group %s with a heartbeat of epoch -1: the group epoch moves on and the simple assignor shares the partitions among the others at their next heartbeats. Records it still held were released by its closing ShareAcknowledge.", d.Member, d.Group), NoteKIP848}, true
	case group.ShareMemberFenced:
		return Explanation{fmt.Sprintf("Share-group member %s of %s (epoch %d) sent no ShareGroupHeartbeat within group.share.session.timeout.ms: it is removed and %s are shared among the others. Records it had acquired stay locked until their acquisition locks expire at the share-partition leader.",
			d.Member, d.Group, d.Epoch, proto.TPList(d.Partitions)), NoteKIP848}, true
	case group.OffsetsCommitted:
		return Explanation{fmt.Sprintf("The coordinator stored %s's commit of %s in group %s (generation %d), replicated in %s like any record. "+
			"A committed offset is the next record to read: whoever owns these partitions after a crash or rebalance starts here, so records the member processed past it are processed again, and records below it are never read by the group again.",
			d.Member, offsetList(d.Offsets), d.Group, d.Generation, proto.OffsetsTopic), NoteGroups}, true
	}
	return Explanation{}, false
}

// explainRebalance says why a group rebalances and what the members must do.
func explainRebalance(d group.RebalanceStarted) Explanation {
	var why string
	switch d.Reason {
	case group.NewMember:
		why = d.Member + " joined it"
	case group.NewMetadata:
		why = d.Member + " joined again with a new subscription (or is the leader, whose join always recomputes the assignment)"
	case group.StaticNewMetadata:
		why = "static member " + d.Member + " came back with a different subscription, so it cannot simply take its old partitions back"
	case group.SessionExpired:
		why = d.Member + "'s session expired: no heartbeat within session.timeout.ms"
	case group.MemberLeave:
		why = d.Member + " left it"
	case group.StoreFailed:
		why = "the leader's assignment could not be stored"
	default:
		why = d.Why()
	}
	text := fmt.Sprintf("Group %s starts a rebalance because %s. Every member must rejoin (JoinGroup) within the rebalance timeout; the others learn it from their next heartbeat (REBALANCE_IN_PROGRESS). "+
		"Members that do not rejoin are removed. When the join phase ends, generation %d becomes %d, and commits stamped with an older generation are refused.",
		d.Group, why, d.Generation, d.Generation+1)
	if d.Initial {
		text += fmt.Sprintf(" This is the first rebalance of an empty group: the coordinator waits %s (group.initial.rebalance.delay.ms) for more members, so that a group starting up does not rebalance once per consumer.", d.Delay)
	}
	return Explanation{text, NoteGroups}
}

// offsetList names partition offsets as the trace does: t/0@5 t/1@3.
func offsetList(os []proto.PartitionOffset) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
	}
	return strings.Join(s, " ")
}

// assignmentList is "m1=[t/0] m2=[t/1]".
func assignmentList(as []group.MemberAssignment) string {
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = a.Member + "=" + proto.TPList(a.Partitions)
	}
	return strings.Join(parts, " ")
}

// orUnnamed names a member that has no id yet.
func orUnnamed(id string) string {
	if id == "" {
		return "a new member"
	}
	return id
}
