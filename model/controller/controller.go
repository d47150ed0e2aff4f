// Package controller is mqsim's cluster controller: one node that owns the metadata (topics,
// partition leaders, leader epochs, ISRs), watches broker liveness by heartbeats, elects
// leaders, applies leaders' ISR changes and pushes the result to every broker.
//
// It is the ZooKeeper-era and single-node-KRaft controller in one: one node, which can
// crash and be partitioned like any other. Its state is an append-only metadata log on
// its disk; every change is appended and fsynced before anyone hears of it (responses and
// pushes wait in a queue for the fsync), so a restarted controller never contradicts what
// it said before the crash. A later issue replaces it with a Raft quorum.
//
// Election rules, as Kafka's: a new leader comes from the live ISR; if none is alive and
// unclean.leader.election.enable is set, any live replica (which may lack committed
// records); otherwise the partition stays offline, its ISR keeping the last member, until
// that member returns. Every leader change bumps the leader epoch; every change of any
// kind bumps the partition epoch, which AlterPartition must name (fencing stale leaders).
// A broker that restarts (new incarnation) is fenced as if its session had expired before
// it registers again, so a fast restart cannot keep a leadership its lost memory no longer
// backs.
package controller

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/sim"
)

const (
	timerLiveness = iota + 1
)

const logFile = "controller/metadata.log"

// state is what the controller persists: one JSON line per change.
type state struct {
	ControllerEpoch int32
	Version         int64
	NextProducerID  int64
	Topics          []proto.TopicConfig
	Partitions      []proto.PartitionState
	// Incarnations are the brokers' registered incarnations, by broker index, so that a
	// restarted controller still recognises a broker that restarted meanwhile (KRaft keeps
	// broker registrations in its metadata log for the same reason).
	Incarnations []int64
}

type brokerInfo struct {
	name        string
	id          sim.NodeID
	alive       bool
	incarnation int64
	lastSeen    sim.Time
	metaVersion int64 // the newest metadata the broker said it has
	// heard is set by the broker's first heartbeat to this incarnation of the controller.
	heard bool
}

type outgoing struct {
	to        sim.NodeID
	msg       sim.Message
	durableAt int64 // log size that must be synced before sending
}

// Controller is the controller node.
type Controller struct {
	cfg     proto.Config
	st      state
	brokers []*brokerInfo
	queue   []outgoing
	written int64 // log size after our last append
}

// New returns a controller for brokers named b1..bN (N = cfg.Brokers).
func New(cfg proto.Config) *Controller {
	return &Controller{cfg: cfg}
}

// BrokerName is the name of broker i (from 1).
func BrokerName(i int) string { return fmt.Sprintf("b%d", i) }

// Start recovers the metadata log and waits a session for brokers to report.
func (c *Controller) Start(env *sim.Env) {
	for i := 1; i <= c.cfg.Brokers; i++ {
		id, ok := env.Lookup(BrokerName(i))
		if !ok {
			env.Emitf("error", "no broker node %s", BrokerName(i))
			continue
		}
		// Every broker gets a full session from the controller's start to report in.
		c.brokers = append(c.brokers, &brokerInfo{name: BrokerName(i), id: id, alive: true, lastSeen: env.Now()})
	}
	c.recover(env)
	if len(c.st.Incarnations) != len(c.brokers) {
		c.st.Incarnations = make([]int64, len(c.brokers))
	}
	for i, b := range c.brokers {
		b.incarnation = c.st.Incarnations[i]
	}
	c.st.ControllerEpoch++
	c.persist(env)
	env.Emitf("controller", "active, controller epoch %d, %d topics, metadata v%d", c.st.ControllerEpoch, len(c.st.Topics), c.st.Version)
	env.SetTimer(c.cfg.Broker.HeartbeatInterval/2, sim.TimerTag{Kind: timerLiveness})
}

// recover reads the last complete line of the metadata log.
func (c *Controller) recover(env *sim.Env) {
	data := env.Disk().ReadAll(logFile)
	c.written = int64(len(data))
	end := strings.LastIndexByte(string(data), '\n')
	if end < 0 {
		return
	}
	if int64(end+1) < c.written {
		env.Disk().Truncate(logFile, int64(end+1)) // a torn last line
		c.written = int64(end + 1)
	}
	lines := strings.Split(string(data[:end]), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var s state
		if json.Unmarshal([]byte(lines[i]), &s) == nil {
			c.st = s
			return
		}
	}
}

// persist appends the state and asks for an fsync; messages sent after it wait for it.
func (c *Controller) persist(env *sim.Env) {
	c.st.Version++
	line, err := json.Marshal(c.st)
	if err != nil {
		panic(err) // plain data always encodes
	}
	env.Disk().Append(logFile, append(line, '\n'))
	c.written = env.Disk().Size(logFile)
	env.Fsync(logFile)
}

// send delivers msg once everything written so far is durable.
func (c *Controller) send(env *sim.Env, to sim.NodeID, msg sim.Message) {
	if env.Disk().SyncedSize(logFile) >= c.written {
		env.Send(to, msg)
		return
	}
	c.queue = append(c.queue, outgoing{to: to, msg: msg, durableAt: c.written})
}

func (c *Controller) release(env *sim.Env) {
	synced := env.Disk().SyncedSize(logFile)
	n := 0
	for n < len(c.queue) && c.queue[n].durableAt <= synced {
		env.Send(c.queue[n].to, c.queue[n].msg)
		n++
	}
	c.queue = c.queue[n:]
}

// Recv dispatches.
func (c *Controller) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case sim.FsyncDone:
		c.release(env)
	case proto.BrokerHeartbeat:
		c.onHeartbeat(env, m)
	case proto.AlterPartition:
		c.onAlterPartition(env, from, m)
	case proto.CreateTopic:
		c.onCreateTopic(env, from, m)
	case proto.InitProducerID:
		c.st.NextProducerID++
		pid := c.st.NextProducerID
		c.persist(env)
		c.send(env, from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: pid})
	case proto.MetadataRequest:
		c.send(env, from, proto.MetadataResponse{CorrelationID: m.CorrelationID, Metadata: c.metadata()})
	}
}

// Timer runs the liveness check.
func (c *Controller) Timer(env *sim.Env, tag sim.TimerTag) {
	if tag.Kind != timerLiveness {
		return
	}
	for _, b := range c.brokers {
		if b.alive && env.Now().Sub(b.lastSeen) > c.cfg.Broker.SessionTimeout {
			c.fence(env, b, fmt.Sprintf("no heartbeat for %s", env.Now().Sub(b.lastSeen)))
		}
	}
	env.SetTimer(c.cfg.Broker.HeartbeatInterval/2, sim.TimerTag{Kind: timerLiveness})
}

func (c *Controller) brokerIndex(b *brokerInfo) int {
	for i, x := range c.brokers {
		if x == b {
			return i
		}
	}
	panic("controller: unknown broker")
}

func (c *Controller) broker(id sim.NodeID) *brokerInfo {
	for _, b := range c.brokers {
		if b.id == id {
			return b
		}
	}
	return nil
}

func (c *Controller) onHeartbeat(env *sim.Env, m proto.BrokerHeartbeat) {
	b := c.broker(m.Broker)
	if b == nil {
		return
	}
	if b.alive && b.incarnation != 0 && m.Incarnation != b.incarnation {
		c.fence(env, b, fmt.Sprintf("restarted (incarnation %d -> %d)", b.incarnation, m.Incarnation))
	}
	b.lastSeen, b.metaVersion = env.Now(), m.MetadataVersion
	first := !b.heard
	b.heard = true
	if !b.alive || b.incarnation != m.Incarnation {
		b.alive, b.incarnation = true, m.Incarnation
		c.st.Incarnations[c.brokerIndex(b)] = m.Incarnation
		c.persist(env)
		env.Emitf("register", "%s (incarnation %d)", b.name, m.Incarnation)
		c.electOffline(env, fmt.Sprintf("%s is back", b.name))
		c.pushTo(env, b)
		return
	}
	if first {
		// A restarted controller presumes every broker alive, but its log may hold
		// partitions left offline while their last in-sync replica was fenced. The
		// broker's first heartbeat to it is that replica coming back.
		c.electOffline(env, fmt.Sprintf("%s reported to the new controller", b.name))
	}
	if m.MetadataVersion < c.st.Version {
		c.pushTo(env, b)
	}
}

// fence declares a broker dead: it leaves every ISR, and partitions it led get new
// leaders.
func (c *Controller) fence(env *sim.Env, b *brokerInfo, why string) {
	b.alive = false
	env.Emitf("fence", "%s: %s", b.name, why)
	var changed []int
	for i := range c.st.Partitions {
		p := &c.st.Partitions[i]
		if !slices.Contains(p.Replicas, b.id) {
			continue
		}
		switch {
		case p.Leader == b.id:
			c.elect(env, p, why)
		case slices.Contains(p.ISR, b.id) && len(p.ISR) > 1:
			p.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(id sim.NodeID) bool { return id == b.id })
			p.PartitionEpoch++
			env.Emitf("isr", "%s: ISR %s (%s fenced)", p.TP, c.names(env, p.ISR), b.name)
		default:
			continue
		}
		changed = append(changed, i)
	}
	c.commit(env, changed)
}

// electOffline tries to give every leaderless partition a leader.
func (c *Controller) electOffline(env *sim.Env, why string) {
	var changed []int
	for i := range c.st.Partitions {
		p := &c.st.Partitions[i]
		if p.Leader == proto.NoLeader && c.elect(env, p, why) {
			changed = append(changed, i)
		}
	}
	c.commit(env, changed)
}

// elect picks a leader for p and reports whether the partition changed: a new leader,
// or the old one gone with nobody to replace it. An offline partition that stays offline
// is left untouched, so nothing unpersisted can leak out in its state.
func (c *Controller) elect(env *sim.Env, p *proto.PartitionState, why string) bool {
	topic := c.topic(p.TP.Topic)
	old := p.Leader
	leader := proto.NoLeader
	for _, id := range p.ISR {
		if id != old && c.isAlive(id) {
			leader = id
			break
		}
	}
	if leader == proto.NoLeader && old != proto.NoLeader && slices.Contains(p.ISR, old) && c.isAlive(old) {
		leader = old // the old leader is back and still in the ISR
	}
	unclean := false
	if leader == proto.NoLeader && topic.UncleanLeaderElection {
		for _, id := range p.Replicas {
			if c.isAlive(id) {
				leader, unclean = id, true
				break
			}
		}
	}
	if leader == proto.NoLeader && old == proto.NoLeader {
		return false
	}
	p.PartitionEpoch++
	if leader == proto.NoLeader {
		p.Leader = proto.NoLeader
		// The ISR keeps its last member: it alone holds every committed record.
		if len(p.ISR) > 1 && old != proto.NoLeader {
			p.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(id sim.NodeID) bool { return id == old })
		}
		env.Emitf("offline", "%s: no live in-sync replica (ISR %s); partition offline (%s)", p.TP, c.names(env, p.ISR), why)
		return true
	}
	if !c.cfg.Bugs.NoEpochBump {
		p.LeaderEpoch++
	}
	p.Leader = leader
	if unclean {
		p.ISR = []sim.NodeID{leader}
		env.Emitf("election", "%s: UNCLEAN election of %s, epoch %d: it may lack committed records (%s)", p.TP, env.NameOf(leader), p.LeaderEpoch, why)
		return true
	}
	p.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(id sim.NodeID) bool { return !c.isAlive(id) && id != leader })
	env.Emitf("election", "%s: %s leads in epoch %d, ISR %s (%s)", p.TP, env.NameOf(leader), p.LeaderEpoch, c.names(env, p.ISR), why)
	return true
}

func (c *Controller) isAlive(id sim.NodeID) bool {
	b := c.broker(id)
	return b != nil && b.alive
}

func (c *Controller) topic(name string) proto.TopicConfig {
	for _, t := range c.st.Topics {
		if t.Name == name {
			return t
		}
	}
	return proto.TopicConfig{}
}

// commit persists a change and tells the replicas of the changed partitions and every
// live broker.
func (c *Controller) commit(env *sim.Env, changed []int) {
	if len(changed) == 0 {
		return
	}
	c.persist(env)
	for _, i := range changed {
		p := c.st.Partitions[i]
		for _, id := range p.Replicas {
			if c.isAlive(id) {
				c.send(env, id, proto.LeaderAndIsr{ControllerEpoch: c.st.ControllerEpoch, BrokerEpoch: c.broker(id).incarnation, State: p.Clone(), Topic: c.topic(p.TP.Topic)})
			}
		}
	}
	meta := c.metadata()
	for _, b := range c.brokers {
		if b.alive {
			c.send(env, b.id, meta)
		}
	}
}

// pushTo sends a broker everything: its partitions and the metadata.
func (c *Controller) pushTo(env *sim.Env, b *brokerInfo) {
	for _, p := range c.st.Partitions {
		if slices.Contains(p.Replicas, b.id) {
			c.send(env, b.id, proto.LeaderAndIsr{ControllerEpoch: c.st.ControllerEpoch, BrokerEpoch: b.incarnation, State: p.Clone(), Topic: c.topic(p.TP.Topic)})
		}
	}
	c.send(env, b.id, c.metadata())
}

func (c *Controller) metadata() proto.Metadata {
	m := proto.Metadata{ControllerEpoch: c.st.ControllerEpoch, Version: c.st.Version, Topics: slices.Clone(c.st.Topics)}
	for _, p := range c.st.Partitions {
		m.Partitions = append(m.Partitions, p.Clone())
	}
	for _, b := range c.brokers {
		if b.alive {
			m.LiveBrokers = append(m.LiveBrokers, b.id)
			m.Incarnations = append(m.Incarnations, b.incarnation)
		}
	}
	return m
}

func (c *Controller) onAlterPartition(env *sim.Env, from sim.NodeID, m proto.AlterPartition) {
	i := c.partitionIndex(m.TP)
	reply := func(e proto.Error) {
		resp := proto.AlterPartitionResponse{TP: m.TP, Error: e}
		if i >= 0 {
			resp.State = c.st.Partitions[i].Clone()
		}
		c.send(env, from, resp)
	}
	if i < 0 {
		reply(proto.UnknownTopicOrPartition)
		return
	}
	p := &c.st.Partitions[i]
	switch {
	case p.Leader != m.Broker || p.LeaderEpoch != m.LeaderEpoch:
		reply(proto.FencedLeaderEpoch)
		return
	case p.PartitionEpoch != m.PartitionEpoch:
		reply(proto.InvalidUpdateVersion)
		return
	}
	for _, id := range m.NewISR {
		if !slices.Contains(p.Replicas, id) || (!c.isAlive(id) && !slices.Contains(p.ISR, id)) {
			reply(proto.InvalidUpdateVersion) // only live replicas may join (KIP-903)
			return
		}
	}
	if !slices.Contains(m.NewISR, p.Leader) {
		reply(proto.InvalidUpdateVersion)
		return
	}
	before := c.names(env, p.ISR)
	p.ISR = slices.Clone(m.NewISR)
	p.PartitionEpoch++
	env.Emitf("isr", "%s: ISR %s -> %s (%s)", p.TP, before, c.names(env, p.ISR), m.Reason)
	c.commit(env, []int{i})
	reply(proto.None)
}

func (c *Controller) partitionIndex(tp proto.TP) int {
	for i, p := range c.st.Partitions {
		if p.TP == tp {
			return i
		}
	}
	return -1
}

func (c *Controller) onCreateTopic(env *sim.Env, from sim.NodeID, m proto.CreateTopic) {
	t := m.Config
	reply := func(e proto.Error, detail string) {
		c.send(env, from, proto.CreateTopicResponse{CorrelationID: m.CorrelationID, Topic: t.Name, Error: e, Detail: detail})
	}
	if c.topic(t.Name).Name != "" {
		reply(proto.TopicAlreadyExists, "")
		return
	}
	if err := t.Validate(len(c.brokers)); err != nil {
		reply(proto.InvalidReplicationFactor, err.Error())
		return
	}
	c.st.Topics = append(c.st.Topics, t)
	slices.SortFunc(c.st.Topics, func(a, b proto.TopicConfig) int { return strings.Compare(a.Name, b.Name) })
	var changed []int
	n := len(c.brokers)
	for p := 0; p < t.Partitions; p++ {
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
		c.st.Partitions = append(c.st.Partitions, st)
	}
	slices.SortFunc(c.st.Partitions, func(a, b proto.PartitionState) int {
		switch {
		case a.TP.Less(b.TP):
			return -1
		case b.TP.Less(a.TP):
			return 1
		}
		return 0
	})
	for p := 0; p < t.Partitions; p++ {
		changed = append(changed, c.partitionIndex(proto.TP{Topic: t.Name, Partition: int32(p)}))
	}
	env.Emitf("topic", "created %s", t)
	c.commit(env, changed)
	reply(proto.None, "")
}

func (c *Controller) names(env *sim.Env, ids []sim.NodeID) string {
	var s []string
	for _, id := range ids {
		s = append(s, env.NameOf(id))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Partitions is the controller's view, for views and checkers.
func (c *Controller) Partitions() []proto.PartitionState {
	var out []proto.PartitionState
	for _, p := range c.st.Partitions {
		out = append(out, p.Clone())
	}
	return out
}

// Alive reports whether the controller considers a broker alive.
func (c *Controller) Alive(id sim.NodeID) bool { return c.isAlive(id) }
