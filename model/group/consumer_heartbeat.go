package group

import (
	"encoding/json"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// ConsumerGroupHeartbeat at the coordinator (Kafka's GroupMetadataManager.consumerGroupHeartbeat):
// validate the member epoch, take in the member's subscription, bump the group epoch when
// the membership, a subscription or the subscribed topics' metadata changed, recompute the
// target assignment when the group epoch is ahead of it, reconcile this one member, store
// what changed in the offsets partition and answer once it is replicated.
//
// Simplifications: one record holds the group's whole consumer-protocol state
// (consumer_group.go); member ids come from the coordinator, as before KIP-1082; no regex
// subscriptions, rack ids or group size limit; no online conversion from a classic group
// (a heartbeat for a classic group with members gets GROUP_ID_NOT_FOUND).

func (c *Coordinator) onConsumerHeartbeat(h Host, from sim.NodeID, m proto.ConsumerGroupHeartbeat) {
	reply := func(r proto.ConsumerGroupHeartbeatResponse) {
		r.CorrelationID, r.Group = m.CorrelationID, m.Group
		h.Send(from, r)
	}
	fail := func(e proto.Error) {
		if h.Tracing() {
			h.Record(HeartbeatRefused{Group: m.Group, Member: m.MemberID, Epoch: m.MemberEpoch, Err: e})
		}
		reply(proto.ConsumerGroupHeartbeatResponse{Error: e, MemberID: m.MemberID, MemberEpoch: -1})
	}
	if _, ok := serverAssignor(m.ServerAssignor); !ok {
		fail(proto.UnsupportedAssignor)
		return
	}
	g := c.group(m.Group, m.MemberEpoch == proto.JoinEpoch)
	if g == nil {
		fail(proto.UnknownMemberID)
		return
	}
	if g.Consumer == nil {
		if len(g.members) > 0 || g.Share != nil {
			fail(proto.GroupIDNotFound) // a classic group in use, or a share group
			return
		}
		g.Consumer = &ConsumerGroup{Assignor: m.ServerAssignor}
		if g.Consumer.Assignor == "" {
			g.Consumer.Assignor = ServerAssignors[0]
		}
	}
	cg := g.Consumer
	if m.MemberEpoch == proto.LeaveEpoch || m.MemberEpoch == proto.StaticLeaveEpoch {
		c.consumerLeave(h, g, m, reply)
		return
	}
	mem, bump, e := c.consumerMember(h, g, from, m)
	if e != proto.None {
		fail(e)
		return
	}
	mem.Client, mem.ClientID, mem.RebalanceTimeout = from, h.NameOf(from), m.RebalanceTimeout
	bump = epochBump(bump, m.Subscribed, &mem.Subscribed, &cg.metadata, func() []TopicSize { return cg.subscribedMetadata(h.TopicPartitions) })
	changed := bump != noBump
	if changed {
		cg.Epoch++
		record(h, GroupEpochBumped{Group: g.ID, Epoch: cg.Epoch, Reason: bump, Member: mem.ID})
	}
	if cg.Epoch > cg.AssignmentEpoch {
		cg.updateTarget(h.TopicPartitions)
		if h.Tracing() {
			h.Record(TargetAssigned{Group: g.ID, Epoch: cg.AssignmentEpoch, Assignor: cg.Assignor, Target: cg.targets()})
		}
	}
	if cg.reconcile(mem, cg.AssignmentEpoch, m.Owned, c.bugs.NoRevokeFirst) {
		changed = true
		if h.Tracing() {
			h.Record(MemberReconciled{Group: g.ID, Member: mem.ID, Epoch: mem.Epoch, State: mem.State,
				Assigned: slices.Clone(mem.Assigned), Revoking: slices.Clone(mem.Revoking)})
		}
		c.watchRevocation(h, g, mem)
	}
	c.touchConsumer(h, g, mem)
	resp := proto.ConsumerGroupHeartbeatResponse{MemberID: mem.ID, MemberEpoch: mem.Epoch, HeartbeatInterval: c.cfg.ConsumerHeartbeat(),
		HasAssignment: true, Assignment: slices.Clone(mem.Assigned)}
	c.answerWhenStored(h, changed, func(done func(Host, proto.Error)) { c.writeConsumerGroup(h, g, done) }, func(h Host, e proto.Error) {
		if e != proto.None {
			fail(e)
			return
		}
		reply(resp)
	})
}

// epochBump folds a heartbeat's subscription into its member and the subscribed topics'
// sizes into the group (consumer and share groups alike), and says why the group epoch
// moves: bump (the membership changed) if there is one, else a changed subscription,
// else changed topic sizes; noBump when nothing changed.
func epochBump(bump EpochReason, heartbeat []string, subscribed *[]string, metadata *[]TopicSize, sizes func() []TopicSize) EpochReason {
	topics := slices.Clone(heartbeat)
	slices.Sort(topics)
	topics = slices.Compact(topics)
	if !slices.Equal(topics, *subscribed) {
		*subscribed = topics
		if bump == noBump {
			bump = SubscriptionChanged
		}
	}
	if md := sizes(); !slices.Equal(md, *metadata) {
		*metadata = md
		if bump == noBump {
			bump = MetadataChanged
		}
	}
	return bump
}

// answerWhenStored answers a modern group's heartbeat (done) once what it reports is
// replicated: after write, when it changed the group; else after the coordinator's last
// write is committed; else at once. The member may use its assignment once the record that
// gives it is replicated: a coordinator loaded from the log after a failover then knows it
// too. An answer that changes nothing still waits until the last write is committed, since
// it reports the state that write holds (Kafka's CoordinatorRuntime defers it to the last
// written offset), even if that write itself timed out: without that, a coordinator about
// to lose its partition handed out an assignment its successor never heard of, and two
// members held one partition (swarm seed 958).
func (c *Coordinator) answerWhenStored(h Host, changed bool, write func(done func(Host, proto.Error)), done func(Host, proto.Error)) {
	switch {
	case changed:
		write(done)
	case c.lastWritten > c.highWatermark:
		c.await(h, c.lastWritten, done)
	default:
		done(h, proto.None)
	}
}

// consumerMember finds (or, on a join, creates) the heartbeat's member and validates its
// epoch (Kafka's throwIfConsumerGroupMemberEpochIsInvalid): a higher epoch than the
// coordinator's, or a lower one that is not the previous epoch with owned partitions
// within the assignment (an answer that got lost), is fenced.
func (c *Coordinator) consumerMember(h Host, g *Group, from sim.NodeID, m proto.ConsumerGroupHeartbeat) (*ConsumerMember, EpochReason, proto.Error) {
	cg := g.Consumer
	if m.MemberEpoch != proto.JoinEpoch {
		mem, err := cg.knownMember(m.MemberID, m.InstanceID)
		switch {
		case err != proto.None:
			return nil, noBump, err
		case m.MemberEpoch > mem.Epoch:
			return nil, noBump, proto.FencedMemberEpoch
		case m.MemberEpoch < mem.Epoch && (m.MemberEpoch != mem.PreviousEpoch || !subset(m.Owned, mem.Assigned)):
			return nil, noBump, proto.FencedMemberEpoch
		}
		return mem, noBump, proto.None
	}
	if m.MemberID != "" {
		if mem := cg.Member(m.MemberID); mem != nil {
			return mem, noBump, proto.None // a full heartbeat of a known member: nothing new
		}
	}
	if old := cg.byInstance(m.InstanceID); old != nil {
		if old.Epoch != proto.StaticLeaveEpoch {
			return nil, noBump, proto.UnreleasedInstanceID
		}
		// A static member back within its session: it takes over the old member's
		// assignment under a new id, without a group epoch bump. As in Kafka
		// (getOrMaybeSubscribeStaticConsumerGroupMember), it starts again from epoch 0
		// and the reconciliation below brings it to the target epoch with what it may have
		// now: partitions it was still waiting for when it left included (resuming at its
		// old epoch left it stable without them, and them without an owner). That move is
		// a change, so the replacement is stored before it is answered: a coordinator that
		// took over without it would not know the new member id.
		was := old.ID
		old.ID, old.Epoch, old.PreviousEpoch = g.newMemberID(h.NameOf(from)), 0, 0
		record(h, StaticMemberReturned{Group: g.ID, Instance: m.InstanceID, Member: old.ID, Was: was, Partitions: slices.Clone(old.Assigned)})
		return old, noBump, proto.None
	}
	mem := &ConsumerMember{ID: g.newMemberID(h.NameOf(from)), InstanceID: m.InstanceID, PreviousEpoch: -1}
	cg.members = append(cg.members, mem)
	return mem, MemberJoinedGroup, proto.None
}

// knownMember finds the member a heartbeat other than a join speaks for. A static member
// is found by its instance id, as Kafka does (getOrMaybeSubscribeStaticConsumerGroupMember
// and consumerGroupLeave): an unknown instance is UNKNOWN_MEMBER_ID, and a member id that
// is not the instance's current one is FENCED_INSTANCE_ID (throwIfInstanceIdIsFenced): a
// newer process took the instance over while this one was away, and the old one must
// stop rather than rejoin and take it back.
func (cg *ConsumerGroup) knownMember(memberID, instanceID string) (*ConsumerMember, proto.Error) {
	if instanceID == "" {
		if mem := cg.Member(memberID); mem != nil {
			return mem, proto.None
		}
		return nil, proto.UnknownMemberID
	}
	mem := cg.byInstance(instanceID)
	switch {
	case mem == nil:
		return nil, proto.UnknownMemberID
	case mem.ID != memberID:
		return nil, proto.FencedInstanceID
	}
	return mem, proto.None
}

// consumerLeave is a heartbeat with epoch -1 (leave) or -2 (a static member away for a
// while: it keeps its assignment for the session timeout).
func (c *Coordinator) consumerLeave(h Host, g *Group, m proto.ConsumerGroupHeartbeat, reply func(proto.ConsumerGroupHeartbeatResponse)) {
	cg := g.Consumer
	mem, err := cg.knownMember(m.MemberID, m.InstanceID)
	if err != proto.None {
		reply(proto.ConsumerGroupHeartbeatResponse{Error: err, MemberID: m.MemberID, MemberEpoch: -1})
		return
	}
	if m.MemberEpoch == proto.StaticLeaveEpoch && mem.InstanceID != "" {
		mem.PreviousEpoch, mem.Epoch = mem.Epoch, proto.StaticLeaveEpoch
		mem.Revoking = nil
		mem.State = MemberStable
		c.cancel(h, mem.revoke, mem.revokeKey)
		mem.revoke, mem.revokeKey = 0, 0
		record(h, ConsumerMemberLeft{Group: g.ID, Member: mem.ID, Static: true})
	} else {
		record(h, ConsumerMemberLeft{Group: g.ID, Member: mem.ID})
		c.removeConsumer(h, g, mem, MemberLeftGroup)
	}
	c.writeConsumerGroup(h, g, func(h Host, e proto.Error) {
		reply(proto.ConsumerGroupHeartbeatResponse{Error: e, MemberID: m.MemberID, MemberEpoch: m.MemberEpoch})
	})
}

// writeConsumerGroup stores the group's consumer-protocol state and calls done once it
// is committed. If nothing could be appended the state goes back to what was last
// appended, as Kafka's coordinator reverts its in-memory state to the last written
// offset: otherwise a later heartbeat that changes nothing would be answered from state
// no log holds (swarm seed 2816).
func (c *Coordinator) writeConsumerGroup(h Host, g *Group, done func(h Host, e proto.Error)) {
	c.writeModernGroup(h, encodeConsumerGroup(g), &g.storedConsumer, func() { c.revertConsumerGroup(h, g) }, done)
}

// writeModernGroup appends a modern group's state record (consumer or share group) and
// calls done once it is committed; stored keeps the value last appended, and revert puts
// the group back to it when nothing could be appended.
func (c *Coordinator) writeModernGroup(h Host, rec wal.Record, stored *[]byte, revert func(), done func(h Host, e proto.Error)) {
	next, err := h.Append([]wal.Record{rec})
	if err != proto.None {
		revert()
		done(h, storeError(err))
		return
	}
	*stored = rec.Value
	c.lastWritten = next
	c.await(h, next, done)
}

// revertConsumerGroup puts the group back to its last appended state (none: no
// consumer-protocol state), with fresh timers for its members.
func (c *Coordinator) revertConsumerGroup(h Host, g *Group) {
	c.unloadConsumerGroup(h, g)
	g.Consumer = nil
	if g.storedConsumer != nil {
		var r consumerGroupRecord
		if json.Unmarshal(g.storedConsumer, &r) == nil {
			g.applyConsumerGroup(&r)
		}
	}
	c.loadedConsumerGroup(h, g)
}

// removeConsumer takes a member out and bumps the group epoch: its partitions go to the
// others through the next target assignment.
func (c *Coordinator) removeConsumer(h Host, g *Group, mem *ConsumerMember, why EpochReason) {
	cg := g.Consumer
	c.cancel(h, mem.session, mem.sessionKey)
	c.cancel(h, mem.revoke, mem.revokeKey)
	cg.members = slices.DeleteFunc(cg.members, func(x *ConsumerMember) bool { return x == mem })
	cg.Epoch++
	record(h, GroupEpochBumped{Group: g.ID, Epoch: cg.Epoch, Reason: why, Member: mem.ID})
}

// touchConsumer (re)starts a member's session: group.consumer.session.timeout.ms, set by
// the coordinator under this protocol.
func (c *Coordinator) touchConsumer(h Host, g *Group, mem *ConsumerMember) {
	if mem.session != 0 {
		c.cancel(h, mem.session, mem.sessionKey)
	}
	mem.session, mem.sessionKey = c.setTimer(h, c.cfg.ConsumerSession(), timerRef{kind: tkConsumerSession, group: g.ID, member: mem.ID})
}

// watchRevocation (re)starts the rebalance timeout of a member that must revoke, and
// stops it otherwise: a member that has not revoked by then is fenced. It runs whenever
// the member's assignment has changed, as Kafka's maybeReconcile schedules
// (scheduleConsumerGroupRebalanceTimeout) or cancels it then: a member still revoking
// after a change revoked what it had to and has a new revocation for a newer target,
// which gets a full timeout of its own (keeping the first deadline fenced it for the
// revocation it had made).
func (c *Coordinator) watchRevocation(h Host, g *Group, mem *ConsumerMember) {
	if mem.revoke != 0 {
		c.cancel(h, mem.revoke, mem.revokeKey)
		mem.revoke, mem.revokeKey = 0, 0
	}
	if mem.State == MemberUnrevoked {
		mem.revoke, mem.revokeKey = c.setTimer(h, mem.RebalanceTimeout, timerRef{kind: tkConsumerRevoke, group: g.ID, member: mem.ID})
	}
}

// consumerTimer runs a member's session or rebalance timeout: the member is fenced.
func (c *Coordinator) consumerTimer(h Host, key int64, ref timerRef) {
	g := c.group(ref.group, false)
	if g == nil || g.Consumer == nil {
		return
	}
	mem := g.Consumer.Member(ref.member)
	if mem == nil {
		return
	}
	why := SessionTimedOut
	switch {
	case ref.kind == tkConsumerSession && mem.sessionKey == key:
		mem.session, mem.sessionKey = 0, 0
	case ref.kind == tkConsumerRevoke && mem.revokeKey == key:
		mem.revoke, mem.revokeKey = 0, 0
		why = RevocationTimedOut
	default:
		return
	}
	if h.Tracing() {
		h.Record(ConsumerMemberFenced{Group: g.ID, Member: mem.ID, Epoch: mem.Epoch, Reason: why, Partitions: slices.Clone(mem.Assigned)})
	}
	c.removeConsumer(h, g, mem, MemberFencedGroup)
	c.writeConsumerGroup(h, g, func(Host, proto.Error) {})
}

// loadedConsumerGroup gives the members of a group loaded from the log fresh sessions, and
// a revoking member its rebalance timeout again.
func (c *Coordinator) loadedConsumerGroup(h Host, g *Group) {
	if g.Consumer == nil {
		return
	}
	for _, mem := range g.Consumer.members {
		c.touchConsumer(h, g, mem)
		c.watchRevocation(h, g, mem)
	}
}

func (c *Coordinator) unloadConsumerGroup(h Host, g *Group) {
	if g.Consumer == nil {
		return
	}
	for _, mem := range g.Consumer.members {
		h.CancelTimer(mem.session)
		h.CancelTimer(mem.revoke)
	}
}

// validateConsumerCommit is ConsumerGroup.validateOffsetCommit: a consumer-protocol
// member commits under its current member epoch (STALE_MEMBER_EPOCH otherwise); a commit
// from outside the group (epoch -1, no member) only while the group has no members.
func validateConsumerCommit(cg *ConsumerGroup, m proto.OffsetCommit) proto.Error {
	if m.Generation < 0 && m.MemberID == "" {
		if len(cg.members) == 0 {
			return proto.None
		}
		return proto.UnknownMemberID
	}
	mem := cg.Member(m.MemberID)
	switch {
	case mem == nil:
		return proto.UnknownMemberID
	case m.Generation != mem.Epoch:
		return proto.StaleMemberEpoch
	}
	return proto.None
}

// subscribedMetadata is the partition count of every topic a member subscribes to.
func (cg *ConsumerGroup) subscribedMetadata(topicPartitions func(string) int) []TopicSize {
	subs := make([][]string, len(cg.members))
	for i, m := range cg.members {
		subs[i] = m.Subscribed
	}
	return topicSizes(subs, topicPartitions)
}

// topicSizes is the partition count of every topic in any of the subscriptions, sorted by
// topic: what a modern group's target is computed for (consumer and share groups).
func topicSizes(subscriptions [][]string, topicPartitions func(string) int) []TopicSize {
	var md []TopicSize
	for _, sub := range subscriptions {
		for _, t := range sub {
			if !slices.ContainsFunc(md, func(s TopicSize) bool { return s.Topic == t }) {
				md = append(md, TopicSize{Topic: t, Partitions: topicPartitions(t)})
			}
		}
	}
	slices.SortFunc(md, func(a, b TopicSize) int { return strings.Compare(a.Topic, b.Topic) })
	return md
}

// targets lists every member's target, for the trace.
func (cg *ConsumerGroup) targets() []MemberAssignment {
	out := make([]MemberAssignment, len(cg.members))
	for i, m := range cg.members {
		out[i] = MemberAssignment{Member: m.ID, Partitions: slices.Clone(m.Target)}
	}
	return out
}

// subset reports whether every partition of a is in b.
func subset(a, b []proto.TP) bool {
	for _, tp := range a {
		if !slices.Contains(b, tp) {
			return false
		}
	}
	return true
}
