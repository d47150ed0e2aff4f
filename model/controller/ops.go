package controller

import (
	"slices"

	"mqsim/model/proto"
	"mqsim/sim"
)

// What an operator asks of the controller: an election (ElectLeaders), a controlled
// shutdown (a broker's heartbeat with WantShutDown), a partition reassignment
// (AlterPartitionReassignments). Each decision is a batch of records like any other; the
// brokers learn it from the pushes, so an old leader is never fenced by these, it hears
// that it follows now.

// shutdownState is a broker's controlled shutdown, as the active controller sees it
// (volatile, as KRaft's BrokerHeartbeatManager state: the broker asks again in every
// heartbeat until it may stop, so a new active controller picks it up).
type shutdownState struct {
	requested bool
	// at is the metadata version of the batch that moved its leaderships; every other
	// live broker must report it before the broker may stop (KRaft waits until the
	// lowest active broker's metadata offset passes the broker's controlledShutdownOffset,
	// BrokerHeartbeatManager.calculateNextBrokerState).
	at int64
}

// onElectLeaders holds an operator's election (Kafka's ElectLeaders with ElectionType
// PREFERRED: ReplicationControlManager.electLeader answers ELECTION_NOT_NEEDED when the
// preferred replica already leads and PREFERRED_LEADER_NOT_AVAILABLE when it is not an
// acceptable leader: alive and in the ISR). The partition epoch and the leader epoch
// bump; the ISR stays.
func (c *Controller) onElectLeaders(env *sim.Env, from sim.NodeID, m proto.ElectLeaders) {
	reply := func(e proto.Error) { c.send(env, from, proto.ElectLeadersResponse{TP: m.TP, Error: e}) }
	i := c.st.partitionIndex(m.TP)
	if i < 0 {
		reply(proto.UnknownTopicOrPartition)
		return
	}
	p := c.st.Partitions[i].Clone()
	want, notAvailable := m.Leader, proto.EligibleLeadersNotAvailable
	if want == proto.NoLeader {
		want, notAvailable = p.Replicas[0], proto.PreferredLeaderNotAvailable
	}
	refuse := func(e proto.Error) {
		sim.Record(env, ElectionRefused{TP: p.TP, Wanted: env.NameOf(want), Err: e})
		reply(e)
	}
	switch {
	case p.Leader == want:
		refuse(proto.ElectionNotNeeded)
		return
	case !slices.Contains(p.ISR, want) || !c.isAlive(want):
		refuse(notAvailable)
		return
	}
	p.Leader = want
	if !c.cfg.Bugs.NoEpochBump {
		p.LeaderEpoch++
	}
	p.PartitionEpoch++
	if env.Tracing() {
		sim.Record(env, LeaderElected{TP: p.TP, Leader: env.NameOf(want), Epoch: p.LeaderEpoch, ISR: names(env, p.ISR), Why: Cause{Kind: OperatorElection}})
	}
	c.commit(env, []proto.TP{p.TP}, []record{{Partition: &p}})
	reply(proto.None)
}

// onShutdownHeartbeat is a heartbeat of broker i asking to shut down
// (ReplicationControlManager.processBrokerHeartbeat). The first one moves every
// leadership it holds to another in-sync replica and takes it out of every ISR
// (handleBrokerInControlledShutdown); from then on it is no acceptable leader or ISR
// member. Once it leads nothing and every other live broker has reported the metadata
// that says so, the controller fences it (SHUTDOWN_NOW) and tells it to stop. A fenced
// broker may stop at once.
func (c *Controller) onShutdownHeartbeat(env *sim.Env, i int) {
	b := c.brokers[i]
	if !c.st.Fenced[i] && !b.shutdown.requested {
		b.shutdown.requested = true
		c.moveOff(env, i)
	}
	if !c.st.Fenced[i] {
		for k, o := range c.brokers {
			if k != i && !c.st.Fenced[k] && !o.shutdown.requested && o.metaVersion < b.shutdown.at {
				c.answerHeartbeat(env, b)
				return
			}
		}
		c.fence(env, i, Cause{Kind: ShutDown, Broker: b.name})
		sim.Record(env, ShutdownGranted{Broker: b.name})
	}
	c.send(env, b.id, proto.BrokerHeartbeatResponse{ShouldShutDown: true})
}

// moveOff elects other leaders for what broker i leads and removes it from the ISRs it
// is in, in one batch. A partition whose ISR is the broker alone goes offline with the
// ISR kept (nobody else has every committed record), as fencing would leave it.
func (c *Controller) moveOff(env *sim.Env, i int) {
	b := c.brokers[i]
	var recs []record
	var changed, moved, left []proto.TP
	for _, old := range c.st.Partitions {
		if !slices.Contains(old.ISR, b.id) && old.Leader != b.id {
			continue
		}
		p := old.Clone()
		switch {
		case p.Leader == b.id:
			c.elect(env, &p, Cause{Kind: ShuttingDown, Broker: b.name})
			moved = append(moved, p.TP)
		case len(p.ISR) > 1:
			p.ISR = slices.DeleteFunc(p.ISR, func(x sim.NodeID) bool { return x == b.id })
			p.PartitionEpoch++
			left = append(left, p.TP)
		default:
			continue
		}
		recs = append(recs, record{Partition: &p})
		changed = append(changed, p.TP)
	}
	if env.Tracing() {
		sim.Record(env, ShutdownStarted{Broker: b.name, Moved: moved, LeftISR: left})
	}
	c.commit(env, changed, recs)
	b.shutdown.at = c.st.Version
}

// onReassign starts a reassignment (AlterPartitionReassignments, as KRaft's
// ReplicationControlManager runs it with PartitionReassignmentReplicas): the replica set
// becomes the target followed by the replicas to remove, the ISR is unchanged, and the
// partition records which replicas are being added and removed. The added replicas
// fetch from the leader; when the last of them joins the ISR (an AlterPartition),
// finishReassignment shrinks the replicas to the target. A reassignment that adds
// nothing completes at once.
func (c *Controller) onReassign(env *sim.Env, from sim.NodeID, m proto.AlterPartitionReassignments) {
	reply := func(e proto.Error, detail string) {
		c.send(env, from, proto.AlterPartitionReassignmentsResponse{TP: m.TP, Error: e, Detail: detail})
	}
	i := c.st.partitionIndex(m.TP)
	if i < 0 {
		reply(proto.UnknownTopicOrPartition, "")
		return
	}
	p := c.st.Partitions[i].Clone()
	if len(p.AddingReplicas)+len(p.RemovingReplicas) > 0 {
		reply(proto.ReassignmentInProgress, "")
		return
	}
	if len(m.Replicas) == 0 {
		reply(proto.InvalidReplicaAssignment, "no replicas")
		return
	}
	for k, id := range m.Replicas {
		if c.brokerIndex(id) < 0 || slices.Contains(m.Replicas[:k], id) {
			reply(proto.InvalidReplicaAssignment, "every replica must be a distinct broker")
			return
		}
	}
	target := slices.Clone(m.Replicas)
	var adding, removing []sim.NodeID
	for _, id := range target {
		if !slices.Contains(p.Replicas, id) {
			adding = append(adding, id)
		}
	}
	for _, id := range p.Replicas {
		if !slices.Contains(target, id) {
			removing = append(removing, id)
		}
	}
	p.Replicas = append(slices.Clone(target), removing...)
	p.AddingReplicas, p.RemovingReplicas = adding, removing
	p.PartitionEpoch++
	if env.Tracing() {
		sim.Record(env, ReassignmentStarted{TP: p.TP, Target: names(env, target), Adding: names(env, adding), Removing: names(env, removing)})
	}
	c.finishReassignment(env, &p)
	c.commit(env, []proto.TP{p.TP}, []record{{Partition: &p}})
	reply(proto.None, "")
}

// finishReassignment completes p's reassignment if every added replica is in the ISR
// (KRaft's PartitionChangeBuilder.tryCompleteReassignment): the replicas become the
// target, the removed ones leave the ISR, and if the leader was removed the first target
// replica in the ISR that is alive leads, in a new leader epoch. It changes p in place
// (the caller records it) and reports whether the leader changed. While removing would
// empty the ISR it waits.
func (c *Controller) finishReassignment(env *sim.Env, p *proto.PartitionState) bool {
	if len(p.AddingReplicas)+len(p.RemovingReplicas) == 0 {
		return false
	}
	for _, id := range p.AddingReplicas {
		if !slices.Contains(p.ISR, id) {
			return false
		}
	}
	gone := func(id sim.NodeID) bool { return slices.Contains(p.RemovingReplicas, id) }
	isr := slices.DeleteFunc(slices.Clone(p.ISR), gone)
	if len(isr) == 0 {
		return false
	}
	old := p.Leader
	p.Replicas = slices.DeleteFunc(slices.Clone(p.Replicas), gone)
	p.ISR = isr
	p.AddingReplicas, p.RemovingReplicas = nil, nil
	moved := old != proto.NoLeader && !slices.Contains(p.Replicas, old)
	if moved {
		p.Leader = proto.NoLeader
		for _, id := range p.Replicas {
			if slices.Contains(p.ISR, id) && c.isAlive(id) {
				p.Leader = id
				break
			}
		}
		if !c.cfg.Bugs.NoEpochBump {
			p.LeaderEpoch++
		}
	}
	if env.Tracing() {
		leader := "none"
		if p.Leader != proto.NoLeader {
			leader = env.NameOf(p.Leader)
		}
		sim.Record(env, ReassignmentDone{TP: p.TP, Replicas: names(env, p.Replicas), ISR: names(env, p.ISR), Leader: leader})
	}
	return moved
}

// admit makes a broker added to a running cluster known: the next broker in name order
// (b4 after b1..b3) that heartbeats. It starts fenced, so its heartbeat registers it
// as a restarted broker's would (KRaft: BrokerRegistration, then unfencing). A broker
// with any other name is ignored, as before. It returns the broker's index, or -1.
func (c *Controller) admit(env *sim.Env, id sim.NodeID) int {
	i := len(c.brokers)
	if env.NameOf(id) != BrokerName(i+1) {
		return -1
	}
	c.brokers = append(c.brokers, &brokerInfo{name: BrokerName(i + 1), id: id, lastSeen: env.Now()})
	for _, s := range []*state{c.st, c.applied} {
		s.grow(i)
		s.Fenced[i] = true
	}
	return i
}

func (c *Controller) startRebalanceTimer(env *sim.Env) {
	if d := c.cfg.Broker.LeaderImbalanceCheck; d > 0 {
		env.SetTimer(d, sim.TimerTag{Kind: timerLeaderRebalance})
	}
}

// onRebalanceTimer is auto.leader.rebalance.enable: on the active controller, every
// partition whose preferred replica (the first assigned) does not lead but is alive and
// in the ISR gets a preferred election, in one batch (KRaft's
// ReplicationControlManager.maybeBalancePartitionLeaders, which has no imbalance
// percentage: leader.imbalance.per.broker.percentage is the ZooKeeper-era controller's).
func (c *Controller) onRebalanceTimer(env *sim.Env) {
	c.startRebalanceTimer(env)
	if !c.active {
		return
	}
	var recs []record
	var changed []proto.TP
	for _, old := range c.st.Partitions {
		want := old.Replicas[0]
		if old.Leader == want || len(old.AddingReplicas)+len(old.RemovingReplicas) > 0 || !slices.Contains(old.ISR, want) || !c.isAlive(want) {
			continue
		}
		p := old.Clone()
		p.Leader = want
		if !c.cfg.Bugs.NoEpochBump {
			p.LeaderEpoch++
		}
		p.PartitionEpoch++
		if env.Tracing() {
			sim.Record(env, LeaderElected{TP: p.TP, Leader: env.NameOf(want), Epoch: p.LeaderEpoch, ISR: names(env, p.ISR), Why: Cause{Kind: Rebalance}})
		}
		recs = append(recs, record{Partition: &p})
		changed = append(changed, p.TP)
	}
	c.commit(env, changed, recs)
	if c.q != nil {
		c.q.tend(env)
	}
}
