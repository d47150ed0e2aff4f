package group

import (
	"encoding/json"
	"slices"

	"mqsim/model/proto"
	"mqsim/sim"
)

// ShareGroupHeartbeat at the coordinator (Kafka's GroupMetadataManager.shareGroupHeartbeat):
// validate the member epoch, take in the subscription, bump the group epoch when the
// membership, a subscription or the subscribed topics' sizes changed, recompute the target
// with the simple assignor when the group epoch is ahead of it, move the member straight
// to its part of the target, store what changed and answer once it is replicated (the same
// write-then-answer rule as consumer-protocol groups, consumer_heartbeat.go).
//
// A group id in use by a classic or consumer-protocol group is not a share group:
// GROUP_ID_NOT_FOUND, as Kafka's getOrMaybeCreateShareGroup answers ("Group %s is not a
// share group"); the other way round, a classic JoinGroup for a share group gets
// INCONSISTENT_GROUP_PROTOCOL (GroupMetadataManager.classicGroupJoin) and a
// ConsumerGroupHeartbeat GROUP_ID_NOT_FOUND.

func (c *Coordinator) onShareHeartbeat(h Host, from sim.NodeID, m proto.ShareGroupHeartbeat) {
	reply := func(r proto.ShareGroupHeartbeatResponse) {
		r.CorrelationID, r.Group = m.CorrelationID, m.Group
		h.Send(from, r)
	}
	fail := func(e proto.Error) {
		if h.Tracing() {
			h.Record(HeartbeatRefused{Group: m.Group, Member: m.MemberID, Epoch: m.MemberEpoch, Err: e, Share: true})
		}
		reply(proto.ShareGroupHeartbeatResponse{Error: e, MemberID: m.MemberID, MemberEpoch: -1})
	}
	join := m.MemberEpoch == proto.JoinEpoch
	g := c.group(m.Group, false)
	switch {
	case g != nil && g.Share == nil && (g.Consumer != nil || len(g.members) > 0 || len(g.offsets) > 0):
		fail(proto.GroupIDNotFound) // a classic or consumer-protocol group
		return
	case (g == nil || g.Share == nil) && !join:
		fail(proto.UnknownMemberID)
		return
	case g == nil:
		g = c.group(m.Group, true)
	}
	if g.Share == nil {
		g.Share = &ShareGroup{}
	}
	sg := g.Share
	if m.MemberEpoch == proto.LeaveEpoch {
		c.shareLeave(h, g, m, reply, fail)
		return
	}
	mem, bump, e := c.shareMember(h, g, from, m)
	if e != proto.None {
		fail(e)
		return
	}
	mem.Client, mem.ClientID = from, h.NameOf(from)
	bump = epochBump(bump, m.Subscribed, &mem.Subscribed, &sg.metadata, func() []TopicSize { return sg.subscribedMetadata(h.TopicPartitions) })
	changed := bump != noBump
	if changed {
		sg.Epoch++
		record(h, GroupEpochBumped{Group: g.ID, Epoch: sg.Epoch, Reason: bump, Member: mem.ID})
	}
	if sg.Epoch > sg.AssignmentEpoch {
		sg.updateTarget()
		if h.Tracing() {
			h.Record(TargetAssigned{Group: g.ID, Epoch: sg.AssignmentEpoch, Assignor: SimpleAssignorName, Target: sg.targets()})
		}
	}
	if mem.Epoch != sg.AssignmentEpoch {
		// No revocation phase: the member jumps to the target epoch and its part of it.
		mem.PreviousEpoch, mem.Epoch = mem.Epoch, sg.AssignmentEpoch
		changed = true
		if h.Tracing() {
			h.Record(ShareMemberAssigned{Group: g.ID, Member: mem.ID, Epoch: mem.Epoch, Assigned: slices.Clone(mem.Assigned)})
		}
	}
	c.touchShare(h, g, mem)
	resp := proto.ShareGroupHeartbeatResponse{MemberID: mem.ID, MemberEpoch: mem.Epoch, HeartbeatInterval: c.shareConfig().HeartbeatInterval,
		HasAssignment: true, Assignment: slices.Clone(mem.Assigned)}
	c.answerWhenStored(h, changed, func(done func(Host, proto.Error)) { c.writeShareGroup(h, g, done) }, func(h Host, e proto.Error) {
		if e != proto.None {
			fail(e)
			return
		}
		reply(resp)
	})
}

// shareConfig is the coordinator's share-group settings (Kafka's defaults when unset, as
// in the package's tests).
func (c *Coordinator) shareConfig() proto.ShareConfig {
	if c.share.SessionTimeout <= 0 {
		return proto.DefaultShareConfig()
	}
	return c.share
}

// shareMember finds (or, on a join, creates) the heartbeat's member and checks its epoch
// (kafka4.md 1.9): the member's epoch or the previous one (an answer that got lost) is
// accepted, anything else is FENCED_MEMBER_EPOCH.
func (c *Coordinator) shareMember(h Host, g *Group, from sim.NodeID, m proto.ShareGroupHeartbeat) (*ShareMember, EpochReason, proto.Error) {
	sg := g.Share
	if m.MemberEpoch == proto.JoinEpoch {
		if mem := sg.Member(m.MemberID); m.MemberID != "" && mem != nil {
			return mem, noBump, proto.None // joining again under its id: nothing new
		}
		mem := &ShareMember{ID: g.newMemberID(h.NameOf(from)), PreviousEpoch: -1}
		sg.members = append(sg.members, mem)
		return mem, MemberJoinedGroup, proto.None
	}
	mem := sg.Member(m.MemberID)
	switch {
	case mem == nil:
		return nil, noBump, proto.UnknownMemberID
	case m.MemberEpoch != mem.Epoch && m.MemberEpoch != mem.PreviousEpoch:
		return nil, noBump, proto.FencedMemberEpoch
	}
	return mem, noBump, proto.None
}

// shareLeave is a heartbeat with epoch -1: the member leaves, the group epoch moves on.
func (c *Coordinator) shareLeave(h Host, g *Group, m proto.ShareGroupHeartbeat, reply func(proto.ShareGroupHeartbeatResponse), fail func(proto.Error)) {
	mem := g.Share.Member(m.MemberID)
	if mem == nil {
		fail(proto.UnknownMemberID)
		return
	}
	record(h, ShareMemberLeft{Group: g.ID, Member: mem.ID})
	c.removeShare(h, g, mem, MemberLeftGroup)
	c.writeShareGroup(h, g, func(h Host, e proto.Error) {
		reply(proto.ShareGroupHeartbeatResponse{Error: e, MemberID: m.MemberID, MemberEpoch: proto.LeaveEpoch})
	})
}

// removeShare takes a member out and bumps the group epoch: the next heartbeat recomputes
// the target without it.
func (c *Coordinator) removeShare(h Host, g *Group, mem *ShareMember, why EpochReason) {
	sg := g.Share
	c.cancel(h, mem.session, mem.sessionKey)
	sg.members = slices.DeleteFunc(sg.members, func(x *ShareMember) bool { return x == mem })
	sg.Epoch++
	record(h, GroupEpochBumped{Group: g.ID, Epoch: sg.Epoch, Reason: why, Member: mem.ID})
}

// touchShare (re)starts a member's session: group.share.session.timeout.ms.
func (c *Coordinator) touchShare(h Host, g *Group, mem *ShareMember) {
	if mem.session != 0 {
		c.cancel(h, mem.session, mem.sessionKey)
	}
	mem.session, mem.sessionKey = c.setTimer(h, c.shareConfig().SessionTimeout, timerRef{kind: tkShareSession, group: g.ID, member: mem.ID})
}

// shareTimer runs a member's session timeout: the member is removed.
func (c *Coordinator) shareTimer(h Host, key int64, ref timerRef) {
	g := c.group(ref.group, false)
	if g == nil || g.Share == nil {
		return
	}
	mem := g.Share.Member(ref.member)
	if mem == nil || mem.sessionKey != key {
		return
	}
	mem.session, mem.sessionKey = 0, 0
	if h.Tracing() {
		h.Record(ShareMemberFenced{Group: g.ID, Member: mem.ID, Epoch: mem.Epoch, Partitions: slices.Clone(mem.Assigned)})
	}
	c.removeShare(h, g, mem, MemberFencedGroup)
	c.writeShareGroup(h, g, func(Host, proto.Error) {})
}

// writeShareGroup stores the group's share state, reverting to the last stored one if
// nothing could be appended (as writeConsumerGroup does).
func (c *Coordinator) writeShareGroup(h Host, g *Group, done func(h Host, e proto.Error)) {
	c.writeModernGroup(h, encodeShareGroup(g), &g.storedShare, func() { c.revertShareGroup(h, g) }, done)
}

func (c *Coordinator) revertShareGroup(h Host, g *Group) {
	c.unloadShareGroup(h, g)
	g.Share = nil
	if g.storedShare != nil {
		var r shareGroupRecord
		if json.Unmarshal(g.storedShare, &r) == nil {
			g.applyShareGroup(&r)
		}
	}
	c.loadedShareGroup(h, g)
}

// loadedShareGroup gives the members of a group loaded from the log fresh sessions.
func (c *Coordinator) loadedShareGroup(h Host, g *Group) {
	if g.Share == nil {
		return
	}
	for _, mem := range g.Share.members {
		c.touchShare(h, g, mem)
	}
}

func (c *Coordinator) unloadShareGroup(h Host, g *Group) {
	if g.Share == nil {
		return
	}
	for _, mem := range g.Share.members {
		h.CancelTimer(mem.session)
	}
}
