package client

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The member under the consumer rebalance protocol (group.protocol=consumer, KIP-848; Kafka's
// ConsumerMembershipManager and AbstractMembershipManager). One request does everything:
// ConsumerGroupHeartbeat joins (epoch 0), keeps the session, reports the partitions the
// member owns and brings back its epoch and assignment; a leave is a heartbeat with epoch
// -1 (-2 for a static member). There is no join phase, no leader and no SyncGroup: the
// coordinator assigns. An assignment is reconciled as the cooperative protocol does (what
// is gone is committed under auto-commit and revoked, what is new is fetched from its
// committed offset), and the next heartbeat goes out at once so that the coordinator
// learns of the revocation and can hand the partitions on. The rest (polls, commits,
// max.poll.interval.ms, losing the partitions when fenced) is the classic member's
// (member.go), with the member epoch in place of the generation.

// heartbeatInterval is the coordinator's interval under the consumer protocol (it answers
// with it), heartbeat.interval.ms otherwise.
func (m *member) heartbeatInterval() time.Duration {
	if m.consumerProto && m.hbInterval > 0 {
		return m.hbInterval
	}
	return m.cfg.HeartbeatInterval
}

// consumerHeartbeat is the member's ConsumerGroupHeartbeat at epoch.
func (m *member) consumerHeartbeat(corr int64, epoch int32, owned []proto.TP) proto.ConsumerGroupHeartbeat {
	return proto.ConsumerGroupHeartbeat{CorrelationID: corr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		MemberEpoch: epoch, RebalanceTimeout: m.cfg.EffectiveRebalanceTimeout(), Subscribed: slices.Clone(m.sub.Topics),
		ServerAssignor: m.cfg.RemoteAssignor, Owned: owned}
}

// sendConsumerJoin joins with epoch 0, owning nothing: a member that lost its membership
// dropped its partitions first (onPartitionsLost).
func (m *member) sendConsumerJoin(env *sim.Env) {
	// Whatever it still holds or was about to take belongs to an epoch it is leaving: a
	// join that claims nothing while the member kept consuming let the coordinator give
	// the same partitions to another member (swarm seed 1448).
	m.hasPend, m.pending, m.precommitted = false, nil, nil
	if len(m.c.owned()) > 0 {
		if env.Tracing() {
			sim.Record(env, PartitionsLost{Group: m.sub.Group, Why: "joining again with epoch 0", Partitions: slices.Clone(m.c.owned())})
		}
		m.setAssignment(env, nil, "lost")
	}
	m.state = msJoining
	m.rejoin = false
	m.reqCorr = m.cl.newCorr()
	env.Send(m.coord, m.consumerHeartbeat(m.reqCorr, proto.JoinEpoch, nil))
	m.reqTimer = env.SetTimer(m.cfg.RequestTimeout, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

// sendConsumerHeartbeat is the periodic heartbeat of a member in the group: its epoch and
// the partitions it owns now (those it still must revoke included, until it has).
func (m *member) sendConsumerHeartbeat(env *sim.Env) {
	m.hbCorr = m.cl.newCorr()
	env.Send(m.coord, m.consumerHeartbeat(m.hbCorr, m.gen, slices.Clone(m.c.owned())))
	m.hbTimer = env.SetTimer(min(m.cfg.RequestTimeout, m.heartbeatInterval()), sim.TimerTag{Kind: gtHBTimeout, Arg: m.hbCorr})
}

// sendConsumerLeave leaves with epoch -1, or -2 for a static member (which keeps its
// assignment at the coordinator for the session timeout).
func (m *member) sendConsumerLeave(env *sim.Env, why string) {
	static := m.sub.InstanceID != ""
	if m.memberID != "" && m.hasCoord {
		epoch := proto.LeaveEpoch
		if static {
			epoch = proto.StaticLeaveEpoch
		}
		env.Send(m.coord, m.consumerHeartbeat(m.cl.newCorr(), epoch, nil))
	}
	sim.Record(env, Left{Group: m.sub.Group, Member: m.memberID, Why: why, Static: static})
}

// onConsumerHeartbeatResponse takes a ConsumerGroupHeartbeat's answer: the join's or the
// periodic heartbeat's. It reports false for an answer the member no longer waits for.
func (m *member) onConsumerHeartbeatResponse(env *sim.Env, r proto.ConsumerGroupHeartbeatResponse) bool {
	switch {
	case r.CorrelationID != 0 && r.CorrelationID == m.reqCorr && m.state == msJoining:
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
	case r.CorrelationID != 0 && r.CorrelationID == m.hbCorr:
		env.CancelTimer(m.hbTimer)
		m.hbCorr = 0
	default:
		return false
	}
	switch r.Error {
	case proto.None:
	case proto.FencedMemberEpoch, proto.UnknownMemberID:
		sim.Record(env, HeartbeatFenced{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Err: r.Error})
		m.loseMembership(fmt.Sprintf("%s at epoch %d: %s", m.memberID, m.gen, r.Error), false)
		m.backoff(env)
		return true
	case proto.UnreleasedInstanceID, proto.FencedInstanceID:
		m.fence(env, r.Error)
		return true
	case proto.GroupIDNotFound, proto.UnsupportedAssignor:
		sim.Record(env, CannotJoin{Group: m.sub.Group, Err: r.Error})
		m.fence(env, r.Error)
		return true
	default:
		m.coordinatorLost(env, "consumer heartbeat: "+r.Error.String())
		return true
	}
	if m.zombie || m.state == msLeft {
		return true // a poll timeout left the group while this was on its way
	}
	epochMoved := r.MemberEpoch != m.gen || m.memberID != r.MemberID
	m.memberID, m.gen, m.synced = r.MemberID, r.MemberEpoch, r.MemberEpoch
	m.hbInterval = r.HeartbeatInterval
	m.state = msStable
	if r.HasAssignment {
		next := slices.Clone(r.Assignment)
		slices.SortFunc(next, proto.CompareTP)
		if m.first || !slices.Equal(next, m.c.owned()) {
			m.pending, m.hasPend = next, true
		} else {
			m.pending, m.hasPend = nil, false // an older answer's change, already undone
		}
		if epochMoved || m.hasPend {
			sim.Record(env, EpochAssigned{Group: m.sub.Group, Member: m.memberID, Epoch: m.gen, Assignment: next})
		}
	}
	m.scheduleHeartbeat(env, m.heartbeatInterval())
	return true
}
