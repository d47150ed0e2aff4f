// Package controller is mqsim's cluster controller: it owns the metadata (topics,
// partition leaders, leader epochs, ISRs, broker registrations, producer ids), watches
// broker liveness by heartbeats, elects leaders, applies leaders' ISR changes and pushes
// the result to every broker. It runs in one of two modes, chosen by proto.Config's
// Controllers, with one decision code and one state machine:
//
//   - Single (Controllers = 1, node "ctl"): the ZooKeeper-era and single-node-KRaft
//     controller in one, a node that can crash and be partitioned like any other. Its
//     metadata is a file of JSON lines on its disk (fileLog); every change is appended and
//     fsynced before anyone hears of it.
//   - Quorum (Controllers = N > 1, nodes c1..cN): KRaft. The controllers run Raft
//     (package raft) over the metadata log; the Raft leader, once it has applied its whole
//     log, is the active controller. It alone decides; each decision is a batch of
//     records proposed to the log (quorum), and every controller applies it when it
//     commits. A new active controller starts from the committed log (snapshot and
//     entries), so no election, epoch or registration is lost.
//
// Either way a decision is a batch of records (metadata.go): applied at once to the
// deciding controller's working state, so the next decision builds on it, then appended
// to the metadata log; every response and push it causes waits in a queue until the log
// says the batch is durable (single) or committed (quorum). A restarted single controller
// or a new active one never contradicts what its predecessor said.
//
// Election rules, as Kafka's: a new leader comes from the live ISR; if none is alive and
// unclean.leader.election.enable is set, any live replica (which may lack committed
// records); otherwise the partition stays offline, its ISR keeping the last member, until
// that member returns. Every leader change bumps the leader epoch; every change of any
// kind bumps the partition epoch, which AlterPartition must name (fencing stale leaders).
// A broker that restarts (new incarnation) is fenced as if its session had expired before
// it registers again, so a fast restart cannot keep a leadership its lost memory no longer
// backs.
//
// Simplification (quorum mode): brokers learn metadata from the active controller's
// pushes (LeaderAndIsr, Metadata), as in the single mode, rather than by fetching the
// metadata log as KRaft brokers do.
//
// testdata/machine holds the interaction tests (machine_test.go): the controller, single or
// quorum, with stand-in brokers and client, printing its events and every push and answer.
//
// The controller's trace events are the types in events.go (EventDocs lists them); its
// Raft node's are package raft's.
package controller

import (
	"fmt"
	"slices"

	"mqsim/model/proto"
	"mqsim/sim"
)

const (
	timerLiveness = iota + 1
	timerElectUnclean
	timerLeaderRebalance // the leader imbalance check (ops.go)
)

// brokerInfo is the active controller's session with one broker (volatile: a new active
// controller starts every session afresh).
type brokerInfo struct {
	name        string
	id          sim.NodeID
	lastSeen    sim.Time
	metaVersion int64 // the newest metadata the broker said it has
	// heard is set by the broker's first heartbeat to this controller since it became
	// active.
	heard bool
	// shutdown is the broker's controlled shutdown in progress (ops.go).
	shutdown shutdownState
}

type outgoing struct {
	to  sim.NodeID
	msg sim.Message
	at  int64 // the metadata log position that must be done (durable, committed) first
}

// Controller is a controller node.
type Controller struct {
	cfg proto.Config
	// st is the working state: what decisions read and change. On the active quorum
	// controller it runs ahead of applied by its own uncommitted proposals; otherwise it
	// is applied.
	st *state
	// applied is the committed metadata (quorum); the single controller's is st.
	applied *state
	brokers []*brokerInfo
	queue   []outgoing
	log     metadataLog
	q       *quorum // nil in single mode
	active  bool
	// uncleanScheduled: the periodic unclean election task is waiting for its timer.
	uncleanScheduled bool
}

// New returns a controller for brokers named b1..bN (N = cfg.Brokers): the single
// controller, or one member of the quorum c1..cN when cfg.Controllers > 1.
func New(cfg proto.Config) *Controller {
	c := &Controller{cfg: cfg}
	if cfg.Controllers > 1 {
		c.q = newQuorum(c)
		c.log = c.q
	} else {
		c.log = &fileLog{}
	}
	return c
}

// Names are the controller nodes' names: "ctl" for one, c1..cN for a quorum.
func Names(n int) []string {
	if n <= 1 {
		return []string{"ctl"}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

// BrokerName is the name of broker i (from 1).
func BrokerName(i int) string { return fmt.Sprintf("b%d", i) }

// Start recovers the metadata and starts the liveness check. The single controller is
// active at once, after a new controller epoch is durable; a quorum member waits to win
// an election and catch up.
func (c *Controller) Start(env *sim.Env) {
	for i := 1; i <= c.cfg.Brokers; i++ {
		id, ok := env.Lookup(BrokerName(i))
		if !ok {
			sim.Record(env, NoBroker{Name: BrokerName(i)})
			continue
		}
		// Every broker gets a full session from the controller's start to report in.
		c.brokers = append(c.brokers, &brokerInfo{name: BrokerName(i), id: id, lastSeen: env.Now()})
	}
	if c.q != nil {
		c.applied = newState(len(c.brokers), true)
		c.st = c.applied
		c.q.raft.Start(env)
		env.SetTimer(c.cfg.Broker.HeartbeatInterval/2, sim.TimerTag{Kind: timerLiveness})
		c.startRebalanceTimer(env)
		c.q.tend(env)
		return
	}
	fl := c.log.(*fileLog)
	c.st = fl.recover(env, len(c.brokers))
	c.applied = c.st
	c.st.ControllerEpoch++
	c.log.append(env, c.st, nil)
	c.active = true
	sim.Record(env, SingleActive{Epoch: c.st.ControllerEpoch, Topics: len(c.st.Topics), Version: c.st.Version})
	env.SetTimer(c.cfg.Broker.HeartbeatInterval/2, sim.TimerTag{Kind: timerLiveness})
	c.startRebalanceTimer(env)
}

// activate makes this quorum controller the active one, from the committed metadata up
// to offset.
func (c *Controller) activate(env *sim.Env, epoch int32, offset int64) {
	c.st = c.applied.clone()
	c.st.ControllerEpoch = epoch
	c.active = true
	c.queue = nil
	for _, b := range c.brokers {
		b.lastSeen, b.metaVersion, b.heard = env.Now(), 0, false
		b.shutdown = shutdownState{} // a broker shutting down asks again in its next heartbeat
	}
	var alive, fenced []string
	for i, b := range c.brokers {
		switch {
		case !c.st.Fenced[i]:
			alive = append(alive, b.name)
		case c.st.Incarnations[i] != 0:
			fenced = append(fenced, b.name)
		}
	}
	sim.Record(env, Activated{Epoch: epoch, Offset: offset, Topics: len(c.st.Topics), Sessions: alive, Fenced: fenced})
}

// resign stops acting: the working state and every answer not yet sent are dropped (what
// they depend on may never commit; the next active controller decides again).
func (c *Controller) resign(env *sim.Env, why ResignCause) {
	sim.Record(env, Resigned{Cause: why, Term: c.q.term, Role: c.q.raft.Role(), NowTerm: c.q.raft.Term(), Unsent: len(c.queue)})
	c.active = false
	c.q.term = 0
	c.st = c.applied
	c.queue = nil
}

// send delivers msg once everything appended so far is done. A quorum controller that
// is not active (it resigned while deciding) sends nothing.
func (c *Controller) send(env *sim.Env, to sim.NodeID, msg sim.Message) {
	if !c.active {
		return
	}
	if c.log.done(env) >= c.log.end() {
		env.Send(to, msg)
		return
	}
	c.queue = append(c.queue, outgoing{to: to, msg: msg, at: c.log.end()})
}

func (c *Controller) release(env *sim.Env) {
	done := c.log.done(env)
	n := 0
	for n < len(c.queue) && c.queue[n].at <= done {
		env.Send(c.queue[n].to, c.queue[n].msg)
		n++
	}
	c.queue = c.queue[n:]
}

// Recv dispatches.
func (c *Controller) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if c.q != nil {
		if c.q.raft.Step(env, from, msg) {
			c.q.tend(env)
			return
		}
		if !c.active {
			c.notActive(env, from, msg)
			return
		}
	}
	switch m := msg.(type) {
	case sim.FsyncDone:
		c.release(env)
	case proto.BrokerHeartbeat:
		c.onHeartbeat(env, m)
	case proto.AlterPartition:
		c.onAlterPartition(env, from, m)
	case proto.CreateTopic:
		c.onCreateTopic(env, from, m)
	case proto.CreatePartitions:
		c.onCreatePartitions(env, from, m)
	case proto.InitProducerID:
		pid := c.st.NextProducerID + 1
		c.commit(env, nil, []record{{ProducerIDs: pid}})
		c.send(env, from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: pid})
	case proto.MetadataRequest:
		c.send(env, from, proto.MetadataResponse{CorrelationID: m.CorrelationID, Metadata: c.metadata()})
	case proto.ElectLeaders:
		c.onElectLeaders(env, from, m)
	case proto.AlterPartitionReassignments:
		c.onReassign(env, from, m)
	}
	if c.q != nil {
		c.q.tend(env)
	}
}

// notActive answers what only the active controller may handle: NOT_CONTROLLER, with
// the active controller if this one knows it (KRaft's brokers and clients follow it).
func (c *Controller) notActive(env *sim.Env, from sim.NodeID, msg sim.Message) {
	hint := proto.NoController
	if l := c.q.raft.Leader(); l != -1 {
		hint = l
	}
	switch m := msg.(type) {
	case proto.BrokerHeartbeat:
		env.Send(from, proto.BrokerHeartbeatResponse{Error: proto.NotController, ActiveController: hint})
	case proto.AlterPartition:
		env.Send(from, proto.AlterPartitionResponse{TP: m.TP, Error: proto.NotController, For: m})
	case proto.CreateTopic:
		env.Send(from, proto.CreateTopicResponse{CorrelationID: m.CorrelationID, Topic: m.Config.Name, Error: proto.NotController})
	case proto.CreatePartitions:
		env.Send(from, proto.CreatePartitionsResponse{CorrelationID: m.CorrelationID, Topic: m.Topic, Error: proto.NotController})
	case proto.InitProducerID:
		env.Send(from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ActiveController: hint})
	case proto.MetadataRequest:
		env.Send(from, proto.MetadataResponse{CorrelationID: m.CorrelationID, Metadata: c.metadata()})
	}
}

// Timer runs the liveness check, on the active controller.
func (c *Controller) Timer(env *sim.Env, tag sim.TimerTag) {
	if c.q != nil && c.q.raft.HandleTimer(env, tag) {
		c.q.tend(env)
		return
	}
	if tag.Kind == timerElectUnclean {
		c.uncleanScheduled = false
		if c.active {
			c.electUncleanPeriodically(env)
		}
		c.scheduleUncleanTask(env)
		return
	}
	if tag.Kind == timerLeaderRebalance {
		c.onRebalanceTimer(env)
		return
	}
	if tag.Kind != timerLiveness {
		return
	}
	if c.active {
		for i, b := range c.brokers {
			if c.active && !c.st.Fenced[i] && env.Now().Sub(b.lastSeen) > c.cfg.Broker.SessionTimeout {
				c.fence(env, i, Cause{Kind: NoHeartbeat, Broker: b.name, Silence: env.Now().Sub(b.lastSeen)})
			}
		}
	}
	env.SetTimer(c.cfg.Broker.HeartbeatInterval/2, sim.TimerTag{Kind: timerLiveness})
	if c.q != nil {
		c.q.tend(env)
	}
}

func (c *Controller) brokerIndex(id sim.NodeID) int {
	for i, b := range c.brokers {
		if b.id == id {
			return i
		}
	}
	return -1
}

func (c *Controller) onHeartbeat(env *sim.Env, m proto.BrokerHeartbeat) {
	i := c.brokerIndex(m.Broker)
	if i < 0 {
		if i = c.admit(env, m.Broker); i < 0 {
			return
		}
	}
	b := c.brokers[i]
	// A new incarnation means the broker restarted and may have lost its unsynced tail:
	// fence it, so that it leaves every ISR until it has caught up again (KIP-380's
	// broker epoch, KIP-903). With broker-epoch=off the controller, like Kafka's before
	// them, does not notice: it registers the new incarnation below and the broker keeps
	// its ISR places.
	if inc := c.st.Incarnations[i]; !c.st.Fenced[i] && inc != 0 && m.Incarnation != inc && !c.cfg.Legacy.NoBrokerEpoch {
		c.fence(env, i, Cause{Kind: Restarted, Broker: b.name, Old: inc, New: m.Incarnation})
		if !c.active {
			return
		}
	}
	b.lastSeen, b.metaVersion = env.Now(), m.MetadataVersion
	first := !b.heard
	b.heard = true
	if m.WantShutDown {
		c.onShutdownHeartbeat(env, i)
		return
	}
	if c.st.Fenced[i] || c.st.Incarnations[i] != m.Incarnation {
		old := c.st.Incarnations[i]
		b.shutdown = shutdownState{}
		c.commit(env, nil, []record{{Register: &brokerRecord{Broker: i, Incarnation: m.Incarnation}}})
		sim.Record(env, Registered{Broker: b.name, Incarnation: m.Incarnation})
		if old != 0 && old != m.Incarnation {
			changed, recs := c.forgetUncleanShutdown(env, b.id, Cause{Kind: Restarted, Broker: b.name, Old: old, New: m.Incarnation})
			c.commit(env, changed, recs)
		}
		c.electOffline(env, Cause{Kind: BrokerBack, Broker: b.name})
		c.pushTo(env, b)
		c.answerHeartbeat(env, b)
		return
	}
	if first {
		// A new controller presumes every unfenced broker alive, but its metadata may
		// hold partitions left offline while their last in-sync replica was fenced. The
		// broker's first heartbeat to it is that replica coming back.
		c.electOffline(env, Cause{Kind: BrokerReported, Broker: b.name})
	}
	if m.MetadataVersion < c.st.Version {
		c.pushTo(env, b)
	}
	c.answerHeartbeat(env, b)
}

// answerHeartbeat answers a heartbeat in quorum mode, once what it changed is committed:
// that is how a broker knows it found the active controller.
func (c *Controller) answerHeartbeat(env *sim.Env, b *brokerInfo) {
	if c.q != nil {
		c.send(env, b.id, proto.BrokerHeartbeatResponse{})
	}
}

// fence declares broker i dead: it leaves every ISR, and partitions it led get new
// leaders.
func (c *Controller) fence(env *sim.Env, i int, why Cause) {
	if !c.active {
		return
	}
	name := c.brokers[i].name
	id := c.brokers[i].id
	recs := []record{{Fence: &brokerRecord{Broker: i, Incarnation: c.st.Incarnations[i]}}}
	// The elections below must see the broker dead. (commit applies the record again:
	// records set state rather than change it, so applying one twice is applying it once.)
	c.st.apply(recs[0])
	sim.Record(env, BrokerFenced{Broker: name, Why: why})
	var changed []proto.TP
	for _, old := range c.st.Partitions {
		if !slices.Contains(old.Replicas, id) {
			continue
		}
		p := old.Clone()
		switch {
		case p.Leader == id:
			c.elect(env, &p, why)
		case slices.Contains(p.ISR, id) && (len(p.ISR) > 1 || c.cfg.Broker.EligibleLeaderReplicas):
			target := slices.DeleteFunc(slices.Clone(p.ISR), func(x sim.NodeID) bool { return x == id })
			c.trackELR(&p, target)
			p.ISR = target
			p.PartitionEpoch++
			if c.cfg.Legacy.EpochBumpOnShrink {
				// isr-shrink-epoch=bump: the ZooKeeper controller's removal of a dead
				// replica made a new leader epoch (ReplicaStateMachine.doRemoveReplicasFromIsr
				// through LeaderAndIsr.newLeaderAndIsr), as KRaft did for every shrink
				// before 3.6 (KAFKA-15021). Every replica then starts a new term.
				p.LeaderEpoch++
			}
			if env.Tracing() {
				sim.Record(env, ISRShrunk{TP: p.TP, ISR: names(env, p.ISR), ELR: names(env, p.ELR), Broker: name})
			}
		default:
			continue
		}
		recs = append(recs, record{Partition: &p})
		changed = append(changed, p.TP)
	}
	c.commit(env, changed, recs)
}

// electOffline tries to give every leaderless partition a leader.
func (c *Controller) electOffline(env *sim.Env, why Cause) {
	var recs []record
	var changed []proto.TP
	for _, old := range c.st.Partitions {
		if old.Leader != proto.NoLeader {
			continue
		}
		p := old.Clone()
		if c.elect(env, &p, why) {
			recs = append(recs, record{Partition: &p})
			changed = append(changed, p.TP)
		}
	}
	c.commit(env, changed, recs)
}

// isAlive reports whether a broker may lead or join an ISR: registered, not fenced, and
// not in controlled shutdown (KRaft's ClusterControlManager.isActive).
func (c *Controller) isAlive(id sim.NodeID) bool {
	i := c.brokerIndex(id)
	return i >= 0 && !c.st.Fenced[i] && !c.brokers[i].shutdown.requested
}

// commit makes a decision: it applies the batch to the working state, appends it to the
// metadata log, and tells the replicas of the changed partitions and every live broker
// once the log says it is done. A batch that changes no partition tells nobody.
func (c *Controller) commit(env *sim.Env, changed []proto.TP, recs []record) {
	if len(recs) == 0 || !c.active {
		return // nothing decided, or the controller resigned in the middle of a decision
	}
	for _, r := range recs {
		c.st.apply(r)
	}
	if !c.log.append(env, c.st, recs) {
		// The Raft leader refuses proposals (too many uncommitted): the working state
		// holds a change that will never commit. Start over from the committed state.
		c.resign(env, ProposalRefused)
		return
	}
	c.scheduleUncleanTask(env)
	for _, tp := range changed {
		p := c.st.Partitions[c.st.partitionIndex(tp)]
		for _, id := range p.Replicas {
			if c.isAlive(id) {
				c.send(env, id, proto.LeaderAndIsr{ControllerEpoch: c.st.ControllerEpoch, BrokerEpoch: c.incarnation(id), State: p.Clone(), Topic: c.st.topic(p.TP.Topic)})
			}
		}
	}
	if len(changed) == 0 {
		return
	}
	meta := c.metadata()
	for i, b := range c.brokers {
		if !c.st.Fenced[i] {
			c.send(env, b.id, meta)
		}
	}
}

func (c *Controller) incarnation(id sim.NodeID) int64 {
	return c.st.Incarnations[c.brokerIndex(id)]
}

// pushTo sends a broker everything: its partitions and the metadata.
func (c *Controller) pushTo(env *sim.Env, b *brokerInfo) {
	for _, p := range c.st.Partitions {
		if slices.Contains(p.Replicas, b.id) {
			c.send(env, b.id, proto.LeaderAndIsr{ControllerEpoch: c.st.ControllerEpoch, BrokerEpoch: c.incarnation(b.id), State: p.Clone(), Topic: c.st.topic(p.TP.Topic)})
		}
	}
	c.send(env, b.id, c.metadata())
}

func (c *Controller) metadata() proto.Metadata {
	m := proto.Metadata{ControllerEpoch: c.st.ControllerEpoch, Version: c.st.Version, Topics: slices.Clone(c.st.Topics)}
	for _, p := range c.st.Partitions {
		m.Partitions = append(m.Partitions, p.Clone())
	}
	for i, b := range c.brokers {
		if !c.st.Fenced[i] {
			m.LiveBrokers = append(m.LiveBrokers, b.id)
			m.Incarnations = append(m.Incarnations, c.st.Incarnations[i])
		}
	}
	return m
}

func (c *Controller) onAlterPartition(env *sim.Env, from sim.NodeID, m proto.AlterPartition) {
	i := c.st.partitionIndex(m.TP)
	reply := func(e proto.Error) {
		resp := proto.AlterPartitionResponse{TP: m.TP, Error: e, For: m}
		if i >= 0 {
			resp.State = c.st.Partitions[i].Clone()
		}
		c.send(env, from, resp)
	}
	if i < 0 {
		reply(proto.UnknownTopicOrPartition)
		return
	}
	p := c.st.Partitions[i].Clone()
	switch {
	case m.LeaderEpoch > p.LeaderEpoch || m.PartitionEpoch > p.PartitionEpoch:
		// The leader knows a newer state of the partition than this controller: it may be
		// a deposed controller that has not heard of its successor yet. KRaft checks this
		// before the lower epochs and answers NOT_CONTROLLER, which the leader retries
		// (ReplicationControlManager.validateAlterPartitionData); INVALID_UPDATE_VERSION
		// would leave the leader waiting for metadata that may never change.
		reply(proto.NotController)
		return
	case p.Leader != m.Broker || p.LeaderEpoch != m.LeaderEpoch:
		reply(proto.FencedLeaderEpoch)
		return
	case p.PartitionEpoch != m.PartitionEpoch:
		reply(proto.InvalidUpdateVersion)
		return
	}
	// The errors are KRaft's (ReplicationControlManager.validateAlterPartitionData): the
	// leader goes back to its committed ISR only on INELIGIBLE_REPLICA, which says that
	// nothing was applied (model/broker/isr.go).
	for _, id := range m.NewISR {
		if !slices.Contains(p.Replicas, id) {
			reply(proto.InvalidRequest)
			return
		}
		if !c.isAlive(id) && !slices.Contains(p.ISR, id) {
			reply(proto.IneligibleReplica) // only live replicas may join (KIP-841, KIP-903)
			return
		}
	}
	if !slices.Contains(m.NewISR, p.Leader) {
		reply(proto.InvalidRequest)
		return
	}
	c.trackELR(&p, m.NewISR)
	if env.Tracing() {
		sim.Record(env, ISRChanged{TP: p.TP, Before: names(env, p.ISR), After: names(env, m.NewISR), ELR: names(env, p.ELR), Reason: m.Reason})
	}
	p.ISR = slices.Clone(m.NewISR)
	p.PartitionEpoch++
	moved := c.finishReassignment(env, &p)
	c.commit(env, []proto.TP{p.TP}, []record{{Partition: &p}})
	if moved {
		reply(proto.NewLeaderElected)
		return
	}
	reply(proto.None)
}

func (c *Controller) onCreateTopic(env *sim.Env, from sim.NodeID, m proto.CreateTopic) {
	t := m.Config
	reply := func(e proto.Error, detail string) {
		c.send(env, from, proto.CreateTopicResponse{CorrelationID: m.CorrelationID, Topic: t.Name, Error: e, Detail: detail})
	}
	if c.st.topic(t.Name).Name != "" {
		reply(proto.TopicAlreadyExists, "")
		return
	}
	if err := t.Validate(len(c.brokers)); err != nil {
		reply(proto.InvalidReplicationFactor, err.Error())
		return
	}
	recs, changed := c.placePartitions(t, 0)
	recs = append([]record{{Topic: &t}}, recs...)
	sim.Record(env, TopicCreated{Config: t})
	c.commit(env, changed, recs)
	reply(proto.None, "")
}

// placePartitions assigns replicas to partitions from..t.Partitions-1 of topic t, round
// robin over the brokers from partition p's broker p (as Kafka's replica placer, given the
// first new partition as its start), with every replica in the ISR and the first live one
// leading (Kafka's ISR holds only the active replicas; this is how mqsim has always made
// a topic's partitions).
func (c *Controller) placePartitions(t proto.TopicConfig, from int) ([]record, []proto.TP) {
	var recs []record
	var changed []proto.TP
	n := len(c.brokers)
	for p := from; p < t.Partitions; p++ {
		st := proto.PartitionState{TP: proto.TP{Topic: t.Name, Partition: int32(p)}, Leader: proto.NoLeader, PartitionEpoch: 1}
		for r := 0; r < t.ReplicationFactor; r++ {
			st.Replicas = append(st.Replicas, c.brokers[(p+r)%n].id)
		}
		st.ISR = slices.Clone(st.Replicas)
		for _, id := range st.Replicas {
			if c.isAlive(id) {
				st.Leader = id
				break
			}
		}
		recs = append(recs, record{Partition: &st})
		changed = append(changed, st.TP)
	}
	return recs, changed
}

// onCreatePartitions grows a topic (ReplicationControlManager.createPartitions): the
// count only increases, INVALID_PARTITIONS otherwise, with Kafka's messages. The topic
// record takes the new count and the new partitions are placed as a new topic's; the
// existing partitions do not move, so neither do their records: keys hashed to them
// now hash elsewhere.
func (c *Controller) onCreatePartitions(env *sim.Env, from sim.NodeID, m proto.CreatePartitions) {
	reply := func(e proto.Error, detail string) {
		if e != proto.None {
			sim.Record(env, PartitionsRefused{Topic: m.Topic, Count: m.Count, Err: e, Reason: detail})
		}
		c.send(env, from, proto.CreatePartitionsResponse{CorrelationID: m.CorrelationID, Topic: m.Topic, Error: e, Detail: detail})
	}
	t := c.st.topic(m.Topic)
	switch {
	case t.Name == "":
		reply(proto.UnknownTopicOrPartition, "no such topic")
		return
	case m.Count == t.Partitions:
		reply(proto.InvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", t.Partitions))
		return
	case m.Count < t.Partitions:
		reply(proto.InvalidPartitions, fmt.Sprintf("The topic %s currently has %d partition(s); %d would not be an increase.", t.Name, t.Partitions, m.Count))
		return
	}
	before := t.Partitions
	t.Partitions = m.Count
	recs, changed := c.placePartitions(t, before)
	recs = append([]record{{Topic: &t}}, recs...)
	sim.Record(env, PartitionsCreated{Topic: t.Name, Before: before, After: t.Partitions})
	c.commit(env, changed, recs)
	reply(proto.None, "")
}
