package controller

import (
	"slices"

	"mqsim/model/proto"
	"mqsim/sim"
)

// Leader election and Eligible Leader Replicas (KIP-966), as KRaft's controller runs them:
// apache/kafka metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java
// (electAnyLeader, isValidNewLeader, canElectLastKnownLeader, tryElection,
// maybePopulateTargetElr, maybeUpdateLastKnownLeader) and ReplicationControlManager.java
// (generateLeaderAndIsrUpdates, handleBrokerUncleanShutdown, maybeElectUncleanLeaders).

// Via says how a partition's leader was chosen, in the order the controller tries.
type Via uint8

const (
	// ViaISR: a live ISR member, the first in replica-assignment order. Clean.
	ViaISR Via = iota
	// ViaELR: the ISR is empty and a live eligible leader replica, the first in
	// assignment order, leads with ISR = {itself}. Clean: an ELR member holds every
	// record below the HW.
	ViaELR
	// ViaLastKnownLeader: ISR and ELR are both empty; the leader at the moment the ISR
	// emptied is elected, even with unclean election off ("balanced recovery"). Unclean:
	// it may have lost records in an unclean shutdown.
	ViaLastKnownLeader
	// ViaUnclean: unclean.leader.election.enable lets any live replica, the first in
	// assignment order, lead. It may lack committed records.
	ViaUnclean
)

// Clean says whether the new leader is sure to hold every committed record.
func (v Via) Clean() bool { return v == ViaISR || v == ViaELR }

// elect picks a leader for p, whose leader is dead or missing, and reports whether the
// partition changed: a new leader, or the old one gone with nobody to replace it. An
// offline partition that stays offline is left untouched, so nothing unrecorded can leak
// out in its state.
func (c *Controller) elect(env *sim.Env, p *proto.PartitionState, why Cause) bool {
	return c.electWith(env, p, why, c.st.topic(p.TP.Topic).UncleanLeaderElection)
}

// electWith is elect with unclean saying whether an out-of-sync replica may be chosen.
func (c *Controller) electWith(env *sim.Env, p *proto.PartitionState, why Cause, unclean bool) bool {
	old := p.Leader
	elr := c.cfg.Broker.EligibleLeaderReplicas
	// The target ISR: the live members. Without ELR the ISR never empties: it keeps its
	// last member, the one replica sure to hold every committed record.
	target := slices.DeleteFunc(slices.Clone(p.ISR), func(id sim.NodeID) bool { return !c.isAlive(id) })
	before := p.Clone()
	if elr {
		c.trackELR(p, target)
	}
	leader, via := c.chooseLeader(p, target, unclean)
	if leader == proto.NoLeader && old == proto.NoLeader {
		*p = before
		return false
	}
	p.PartitionEpoch++
	if leader == proto.NoLeader {
		p.Leader = proto.NoLeader
		switch {
		case elr:
			if len(target) == 0 && old != proto.NoLeader && len(p.LastKnownELR) == 0 {
				p.LastKnownELR = []sim.NodeID{old} // only when the partition first loses its leader
			}
			p.ISR = target
		case len(p.ISR) > 1 && old != proto.NoLeader:
			p.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(id sim.NodeID) bool { return id == old })
		}
		if env.Tracing() {
			sim.Record(env, PartitionOffline{TP: p.TP, ISR: names(env, p.ISR), ELR: names(env, p.ELR), Why: why})
		}
		return true
	}
	if !c.cfg.Bugs.NoEpochBump {
		p.LeaderEpoch++
	}
	p.Leader = leader
	p.LastKnownELR = nil
	switch via {
	case ViaISR:
		p.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(id sim.NodeID) bool { return !c.isAlive(id) && id != leader })
	case ViaELR:
		p.ISR = []sim.NodeID{leader}
		p.ELR = slices.DeleteFunc(p.ELR, func(id sim.NodeID) bool { return id == leader })
	default: // unclean: the leader's log is the truth from now on; ELR means nothing
		p.ISR = []sim.NodeID{leader}
		p.ELR = nil
	}
	if env.Tracing() {
		sim.Record(env, LeaderElected{TP: p.TP, Leader: env.NameOf(leader), Epoch: p.LeaderEpoch, ISR: names(env, p.ISR), ELR: names(env, p.ELR), Via: via, Why: why})
	}
	return true
}

// chooseLeader is PartitionChangeBuilder.electAnyLeader: the first acceptable (alive)
// replica in assignment order that is in the target ISR, or, the ISR being empty, in the
// ELR; then the last known leader; then, if unclean election is allowed, the first live
// replica in assignment order.
func (c *Controller) chooseLeader(p *proto.PartitionState, target []sim.NodeID, unclean bool) (sim.NodeID, Via) {
	for _, id := range p.Replicas {
		if !c.isAlive(id) {
			continue
		}
		if slices.Contains(target, id) {
			return id, ViaISR
		}
		if len(target) == 0 && slices.Contains(p.ELR, id) {
			return id, ViaELR
		}
	}
	if c.cfg.Broker.EligibleLeaderReplicas && len(target) == 0 && len(p.ELR) == 0 && len(p.LastKnownELR) == 1 && c.isAlive(p.LastKnownELR[0]) {
		// Kafka's canElectLastKnownLeader only logs when this replica is not alive, and
		// elects it anyway; mqsim waits for it to be alive.
		return p.LastKnownELR[0], ViaLastKnownLeader
	}
	if unclean {
		for _, id := range p.Replicas {
			if c.isAlive(id) {
				return id, ViaUnclean
			}
		}
	}
	return proto.NoLeader, ViaISR
}

// trackELR is PartitionChangeBuilder.maybePopulateTargetElr, for an ISR about to become
// target: at or above min.insync.replicas the ELR is cleared; below it, the members that
// leave the ISR join the ELR. They stay caught up to the HW, which does not advance while
// the ISR is below min.insync.replicas (KAFKA-15583). Kept in assignment order.
func (c *Controller) trackELR(p *proto.PartitionState, target []sim.NodeID) {
	if !c.cfg.Broker.EligibleLeaderReplicas {
		return
	}
	if len(target) >= c.st.topic(p.TP.Topic).MinInsyncReplicas {
		p.ELR, p.LastKnownELR = nil, nil
		return
	}
	var elr []sim.NodeID
	for _, id := range p.Replicas {
		if !slices.Contains(target, id) && (slices.Contains(p.ELR, id) || slices.Contains(p.ISR, id)) {
			elr = append(elr, id)
		}
	}
	p.ELR = elr
}

// forgetUncleanShutdown is ReplicationControlManager.handleBrokerUncleanShutdown: a broker
// that registers with a new incarnation had an unclean shutdown (every mqsim restart is
// one: there is no clean-shutdown marker) and may have lost records it acknowledged, so it
// leaves every ELR, and ISR, it was in. It returns the changed partitions.
func (c *Controller) forgetUncleanShutdown(env *sim.Env, id sim.NodeID, why Cause) ([]proto.TP, []record) {
	if !c.cfg.Broker.EligibleLeaderReplicas {
		return nil, nil
	}
	var changed []proto.TP
	var recs []record
	for _, old := range c.st.Partitions {
		if !slices.Contains(old.ELR, id) && !(slices.Contains(old.ISR, id) && old.Leader != id) {
			continue
		}
		p := old.Clone()
		without := func(s []sim.NodeID) []sim.NodeID {
			return slices.DeleteFunc(slices.Clone(s), func(x sim.NodeID) bool { return x == id })
		}
		target := without(p.ISR)
		c.trackELR(&p, target)
		p.ELR = without(p.ELR)
		p.ISR = target
		p.PartitionEpoch++
		if env.Tracing() {
			sim.Record(env, UncleanShutdown{TP: p.TP, Broker: env.NameOf(id), ISR: names(env, p.ISR), ELR: names(env, p.ELR), Why: why})
		}
		recs = append(recs, record{Partition: &p})
		changed = append(changed, p.TP)
	}
	return changed, recs
}

// electUncleanPeriodically is QuorumController's maybeElectUncleanLeaders task: every
// unclean.leader.election.interval.ms, while some partition is leaderless, the active
// controller tries an unclean election for each leaderless partition of a topic that
// allows it. Partition changes (a broker fenced or back) already try one inline, so the
// task catches what they cannot: a partition that had no live replica at the change, or
// a topic whose setting changed since. The ZooKeeper-era controller had no such task; it
// elected on the broker-change event alone.
func (c *Controller) electUncleanPeriodically(env *sim.Env) {
	var recs []record
	var changed []proto.TP
	for _, old := range c.st.Partitions {
		if old.Leader != proto.NoLeader || !c.st.topic(old.TP.Topic).UncleanLeaderElection {
			continue
		}
		p := old.Clone()
		if c.electWith(env, &p, Cause{Kind: UncleanTask}, true) {
			recs = append(recs, record{Partition: &p})
			changed = append(changed, p.TP)
		}
	}
	c.commit(env, changed, recs)
}

// someLeaderless says whether the periodic unclean election has work to look at.
func (c *Controller) someLeaderless() bool {
	for _, p := range c.st.Partitions {
		if p.Leader == proto.NoLeader {
			return true
		}
	}
	return false
}

// scheduleUncleanTask arms the periodic unclean election while some partition is
// leaderless (QuorumController.maybeScheduleNextElectUncleanLeaders, run after every
// controller write).
func (c *Controller) scheduleUncleanTask(env *sim.Env) {
	if c.uncleanScheduled || !c.active || !c.someLeaderless() {
		return
	}
	c.uncleanScheduled = true
	env.SetTimer(c.cfg.Broker.UncleanElectionInterval, sim.TimerTag{Kind: timerElectUnclean})
}
