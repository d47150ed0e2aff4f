package group

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/keyedtimer"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Host is what a coordinator needs from the broker that runs it: the clock, the network,
// timers, the trace, and appends to the coordinator's own partition of the offsets topic.
type Host interface {
	Now() sim.Time
	Send(to sim.NodeID, msg sim.Message)
	// Tracing says whether the trace keeps events; Record puts one in it. Events are built
	// and recorded through record, so nothing is described when the trace is off.
	Tracing() bool
	Record(e sim.Payload)
	NameOf(id sim.NodeID) string
	// SetTimer arranges for the broker to call Coordinator.Timer with key after d.
	SetTimer(d time.Duration, key int64) sim.TimerID
	CancelTimer(id sim.TimerID)
	// NewKey returns a key no other timer of the broker uses.
	NewKey() int64
	// Append writes records to the coordinator's partition as its leader and returns the
	// offset after them: the high watermark that makes them committed. The broker calls
	// Coordinator.Committed as the high watermark advances. An error means nothing was
	// appended.
	Append(records []wal.Record) (next int64, err proto.Error)
	// AppendTransactional appends records as a transactional batch of producer pid at
	// epoch (a TxnOffsetCommit's offsets), checked against the partition's producer state
	// as a produce is: INVALID_PRODUCER_EPOCH says a newer instance of the producer exists.
	AppendTransactional(pid int64, epoch int16, records []wal.Record) (next int64, err proto.Error)
	// TopicPartitions is a topic's partition count in the broker's metadata, 0 if it has
	// no such topic (a consumer-protocol group's assignor runs on the coordinator).
	TopicPartitions(topic string) int
}

// State is a classic group's state (Kafka's ClassicGroupState).
type State uint8

const (
	// Empty: no members; committed offsets may still be there.
	Empty State = iota
	// PreparingRebalance: waiting for the members to (re)join.
	PreparingRebalance
	// CompletingRebalance: joined; waiting for the leader's assignment (SyncGroup).
	CompletingRebalance
	// Stable: every member has its assignment.
	Stable
	// Dead: the coordinator no longer hosts the group (it lost the partition).
	Dead
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	case Dead:
		return "Dead"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

func parseState(s string) State {
	for st := Empty; st <= Dead; st++ {
		if st.String() == s {
			return st
		}
	}
	return Empty
}

// MemberInfo is one member of a group, at the coordinator.
type MemberInfo struct {
	ID               string
	InstanceID       string
	ClientID         string
	Client           sim.NodeID
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	Assignor         string
	Subscription     proto.Subscription
	Assignment       []proto.TP

	awaitingJoin bool
	joinCorr     int64
	awaitingSync bool
	syncCorr     int64
	session      sim.TimerID
	sessionKey   int64
}

// Group is one consumer group at its coordinator.
type Group struct {
	ID         string
	State      State
	Generation int32
	Assignor   string
	Leader     string
	// Rebalances counts the rebalances the group completed (persisted, so it survives a
	// coordinator failover).
	Rebalances int
	members    []*MemberInfo // in join order: the first is the leader when one must be chosen
	offsets    []Committed
	nextMember int
	pending    []string // member ids handed out with MEMBER_ID_REQUIRED, not joined yet

	joinTimer sim.TimerID
	joinKey   int64
	// writing is set while the metadata of a completed rebalance is being replicated.
	writing bool
	// initial is set during the first rebalance of an empty group, which waits out
	// group.initial.rebalance.delay.ms even when every member has joined.
	initial bool
	// Consumer is the group's consumer-protocol state (KIP-848), nil for a classic group.
	Consumer *ConsumerGroup
	// storedConsumer is the value of the last consumer-protocol record appended for the
	// group: what a failed append reverts to (consumer_heartbeat.go).
	storedConsumer []byte
	// Share is the group's share-group state (KIP-932, share_group.go), nil otherwise.
	Share *ShareGroup
	// storedShare is the value of the last share-group record appended for the group.
	storedShare []byte
}

// Committed is one committed offset.
type Committed struct {
	TP          proto.TP
	Offset      int64
	LeaderEpoch int32 // of the last record consumed below Offset (proto.PartitionOffset)
	// Member and Generation committed it.
	Member     string
	Generation int32
}

// StaleCommit is a commit the coordinator accepted although its member or generation was
// not the group's current one: possible only with the no-generation-fencing bug.
type StaleCommit struct {
	Group      string
	Member     string
	Generation int32 // the commit's
	Current    int32 // the group's
	Offsets    []proto.PartitionOffset
	At         sim.Time
}

// timer kinds of the coordinator
const (
	tkSession = iota + 1
	tkJoin
	tkWrite
	tkConsumerSession // a consumer-protocol member's session (consumer_heartbeat.go)
	tkConsumerRevoke  // a consumer-protocol member's rebalance timeout while it revokes
	tkShareSession    // a share-group member's session (share_heartbeat.go)
)

type timerRef struct {
	kind   int
	group  string
	member string
	write  *pendingWrite
}

// pendingWrite is an append waiting for the high watermark (acks=all semantics).
type pendingWrite struct {
	next  int64
	timer sim.TimerID
	key   int64
	done  func(h Host, e proto.Error)
}

// Coordinator is the group coordinator for one partition of the offsets topic, run by the
// partition's leader. It is built by Load from the partition's log when the broker becomes
// leader, and thrown away (Unload) when it stops being leader.
type Coordinator struct {
	cfg       proto.GroupConfig
	share     proto.ShareConfig // the share groups' session timeout and heartbeat interval
	bugs      proto.Bugs
	Partition int32
	Epoch     int32 // the leader epoch it was loaded in
	groups    []*Group
	writes    []*pendingWrite
	timers    keyedtimer.Table[timerRef]
	// Stale lists the commits accepted from stale members (no-generation-fencing only).
	Stale []StaleCommit
	// txnOffsets are the transactional offsets waiting for their marker (txn.go).
	txnOffsets []pendingTxnOffset
	// lastWritten is the offset after the coordinator's last append: an answer that
	// writes nothing but reports state written before waits for it (consumer_heartbeat.go).
	lastWritten int64
	// highWatermark is the offsets partition's high watermark, as Committed last heard.
	highWatermark int64
}

// Load builds the coordinator of a partition from its log: the latest group metadata and
// committed offset of every key. Every loaded member gets a fresh session.
func Load(h Host, cfg proto.GroupConfig, share proto.ShareConfig, bugs proto.Bugs, partition, epoch int32, log *wal.Log) *Coordinator {
	c := &Coordinator{cfg: cfg, share: share, bugs: bugs, Partition: partition, Epoch: epoch}
	records, bad := 0, 0
	for off := log.LogStartOffset(); off < log.LogEndOffset(); {
		batches, err := log.Read(off, 1<<20)
		if err != nil || len(batches) == 0 {
			record(h, LoadFailed{Partition: partition, Offset: off, Err: err})
			break
		}
		for _, b := range batches {
			if b.IsTransactional() {
				n, nbad := c.loadTxnBatch(&b, off)
				records, bad, off = records+n, bad+nbad, b.NextOffset()
				continue
			}
			for i, r := range b.Records {
				if b.BaseOffset+int64(i) < off {
					continue
				}
				records++
				d, err := decode(r)
				if err != nil {
					bad++
					continue
				}
				c.apply(d)
			}
			off = b.NextOffset()
		}
	}
	for _, g := range c.groups {
		for _, m := range g.members {
			c.touch(h, g, m)
		}
		c.loadedConsumerGroup(h, g)
		c.loadedShareGroup(h, g)
	}
	if h.Tracing() {
		loaded := Loaded{Partition: partition, Records: records, Epoch: epoch}
		for _, g := range c.groups {
			loaded.Groups = append(loaded.Groups, LoadedGroup{ID: g.ID, State: g.State, Generation: g.Generation, Members: len(g.members), Offsets: len(g.offsets)})
		}
		h.Record(loaded)
	}
	if bad > 0 {
		record(h, Unreadable{Partition: partition, Bad: bad})
	}
	return c
}

func (c *Coordinator) apply(d decoded) {
	g := c.group(d.group, true)
	if d.cmeta != nil {
		g.applyConsumerGroup(d.cmeta)
		g.storedConsumer, _ = json.Marshal(d.cmeta)
		return
	}
	if d.smeta != nil {
		g.applyShareGroup(d.smeta)
		g.storedShare, _ = json.Marshal(d.smeta)
		return
	}
	if d.offset != nil {
		g.setOffset(Committed{TP: d.tp, Offset: d.offset.Offset, LeaderEpoch: d.offset.LeaderEpoch, Member: d.offset.Member, Generation: d.offset.Generation})
		return
	}
	r := d.meta
	g.Generation, g.State, g.Assignor, g.Leader = r.Generation, parseState(r.State), r.Assignor, r.Leader
	g.nextMember, g.Rebalances = r.NextMember, r.Rebalances
	if g.State != Empty && g.State != Stable {
		g.State = Stable
	}
	g.members = nil
	for _, m := range r.Members {
		g.members = append(g.members, &MemberInfo{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, Client: -1,
			SessionTimeout: m.SessionTimeout, RebalanceTimeout: m.RebalanceTimeout, Assignor: r.Assignor,
			Subscription: proto.Subscription{Topics: m.Topics, Owned: slices.Clone(m.Assignment)}, Assignment: m.Assignment})
	}
	if len(g.members) == 0 {
		g.State = Empty
	}
}

// Unload ends the coordinator: every waiting request is answered NOT_COORDINATOR and
// every group is Dead here.
func (c *Coordinator) Unload(h Host, why string) {
	for _, w := range c.writes {
		h.CancelTimer(w.timer)
		w.done(h, proto.NotCoordinator)
	}
	c.writes = nil
	for _, g := range c.groups {
		for _, m := range g.members {
			h.CancelTimer(m.session)
			c.answerWaiting(h, g, m, proto.NotCoordinator)
		}
		h.CancelTimer(g.joinTimer)
		c.unloadConsumerGroup(h, g)
		c.unloadShareGroup(h, g)
		g.State = Dead
	}
	c.timers.Reset()
	record(h, Unloaded{Partition: c.Partition, Groups: len(c.groups), Why: why})
}

// Groups lists the groups, sorted by id, for views.
func (c *Coordinator) Groups() []*Group { return c.groups }

// Group returns a group by id, or nil.
func (c *Coordinator) Group(id string) *Group { return c.group(id, false) }

func (c *Coordinator) group(id string, create bool) *Group {
	i, found := slices.BinarySearchFunc(c.groups, id, func(g *Group, id string) int { return strings.Compare(g.ID, id) })
	if found {
		return c.groups[i]
	}
	if !create {
		return nil
	}
	g := &Group{ID: id}
	c.groups = slices.Insert(c.groups, i, g)
	return g
}

// Members lists the group's members in join order.
func (g *Group) Members() []*MemberInfo { return g.members }

// Offsets lists the committed offsets, sorted by partition.
func (g *Group) Offsets() []Committed { return g.offsets }

// Offset is the committed offset of tp, or -1.
func (g *Group) Offset(tp proto.TP) int64 {
	i, ok := g.offsetIndex(tp)
	if !ok {
		return -1
	}
	return g.offsets[i].Offset
}

func (g *Group) offsetIndex(tp proto.TP) (int, bool) {
	return slices.BinarySearchFunc(g.offsets, tp, func(o Committed, tp proto.TP) int {
		switch {
		case o.TP.Less(tp):
			return -1
		case tp.Less(o.TP):
			return 1
		}
		return 0
	})
}

func (g *Group) setOffset(o Committed) {
	i, ok := g.offsetIndex(o.TP)
	if ok {
		g.offsets[i] = o
		return
	}
	g.offsets = slices.Insert(g.offsets, i, o)
}

func (g *Group) member(id string) *MemberInfo {
	for _, m := range g.members {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (g *Group) byInstance(inst string) *MemberInfo {
	if inst == "" {
		return nil
	}
	for _, m := range g.members {
		if m.InstanceID == inst {
			return m
		}
	}
	return nil
}

func (g *Group) newMemberID(client string) string {
	g.nextMember++
	return fmt.Sprintf("%s-%d", client, g.nextMember)
}

func (g *Group) removeMember(m *MemberInfo) {
	g.members = slices.DeleteFunc(g.members, func(x *MemberInfo) bool { return x == m })
}

// --- timers ---

func (c *Coordinator) setTimer(h Host, d time.Duration, ref timerRef) (sim.TimerID, int64) {
	return c.timers.Set(h, d, ref)
}

func (c *Coordinator) cancel(h Host, id sim.TimerID, key int64) { c.timers.Cancel(h, id, key) }

// Owns reports whether a timer key is one of this coordinator's.
func (c *Coordinator) Owns(key int64) bool { return c.timers.Owns(key) }

// Timer runs one of the coordinator's timers.
func (c *Coordinator) Timer(h Host, key int64) {
	ref, ok := c.timers.Fired(key)
	if !ok {
		return
	}
	switch ref.kind {
	case tkSession:
		g := c.group(ref.group, false)
		if g == nil {
			return
		}
		m := g.member(ref.member)
		if m == nil || m.sessionKey != key {
			return
		}
		if m.awaitingJoin || m.awaitingSync {
			c.touch(h, g, m) // Kafka keeps members alive while they wait for the group
			return
		}
		record(h, MemberExpired{Group: g.ID, Member: m.ID, SessionTimeout: m.SessionTimeout})
		c.remove(h, g, m, SessionExpired)
	case tkJoin:
		g := c.group(ref.group, false)
		if g == nil || g.joinKey != key || g.State != PreparingRebalance {
			return
		}
		g.joinTimer, g.joinKey = 0, 0
		c.completeJoin(h, g)
	case tkConsumerSession, tkConsumerRevoke:
		c.consumerTimer(h, key, ref)
	case tkShareSession:
		c.shareTimer(h, key, ref)
	case tkWrite:
		w := ref.write
		i := slices.Index(c.writes, w)
		if i < 0 {
			return
		}
		c.writes = slices.Delete(c.writes, i, i+1)
		w.done(h, proto.RequestTimedOut)
	}
}

// touch (re)starts a member's session.
func (c *Coordinator) touch(h Host, g *Group, m *MemberInfo) {
	if m.session != 0 {
		c.cancel(h, m.session, m.sessionKey)
	}
	m.session, m.sessionKey = c.setTimer(h, m.SessionTimeout, timerRef{kind: tkSession, group: g.ID, member: m.ID})
}

// --- appends ---

// write appends records and calls done once they are committed (or at once under the
// offsets-acks-1 bug), or with an error.
func (c *Coordinator) write(h Host, records []wal.Record, done func(h Host, e proto.Error)) {
	next, err := h.Append(records)
	if err != proto.None {
		done(h, storeError(err))
		return
	}
	c.lastWritten = next
	c.await(h, next, done)
}

// storeError is what a client is told when its write could not be appended.
func storeError(err proto.Error) proto.Error {
	if err == proto.NotEnoughReplicas || err == proto.KafkaStorageError {
		return proto.CoordinatorNotAvailable
	}
	return proto.NotCoordinator
}

// await calls done once the high watermark reaches next (at once under the
// offsets-acks-1 bug), or with REQUEST_TIMED_OUT after offsets.commit.timeout.ms.
func (c *Coordinator) await(h Host, next int64, done func(h Host, e proto.Error)) {
	if c.bugs.OffsetsAcks1 {
		done(h, proto.None)
		return
	}
	w := &pendingWrite{next: next, done: done}
	w.timer, w.key = c.setTimer(h, c.cfg.OffsetCommitTimeout, timerRef{kind: tkWrite, write: w})
	c.writes = append(c.writes, w)
}

// Committed completes the writes that the high watermark hw now covers.
func (c *Coordinator) Committed(h Host, hw int64) {
	c.highWatermark = max(c.highWatermark, hw)
	for len(c.writes) > 0 {
		var done []*pendingWrite
		kept := c.writes[:0]
		for _, w := range c.writes {
			if w.next <= hw {
				done = append(done, w)
				continue
			}
			kept = append(kept, w)
		}
		c.writes = kept
		if len(done) == 0 {
			return
		}
		for _, w := range done {
			c.cancel(h, w.timer, w.key)
			w.done(h, proto.None)
		}
	}
}

// --- requests ---

// Handle serves one group request; it reports whether msg was one.
func (c *Coordinator) Handle(h Host, from sim.NodeID, msg sim.Message) bool {
	switch m := msg.(type) {
	case proto.JoinGroup:
		c.onJoin(h, from, m)
	case proto.SyncGroup:
		c.onSync(h, from, m)
	case proto.Heartbeat:
		c.onHeartbeat(h, from, m)
	case proto.LeaveGroup:
		c.onLeave(h, from, m)
	case proto.OffsetCommit:
		c.onCommit(h, from, m)
	case proto.OffsetFetch:
		c.onOffsetFetch(h, from, m)
	case proto.TxnOffsetCommit:
		c.onTxnCommit(h, from, m)
	case proto.ConsumerGroupHeartbeat:
		c.onConsumerHeartbeat(h, from, m)
	case proto.ShareGroupHeartbeat:
		c.onShareHeartbeat(h, from, m)
	default:
		return false
	}
	return true
}

func (c *Coordinator) onJoin(h Host, from sim.NodeID, m proto.JoinGroup) {
	fail := func(e proto.Error, member string) {
		h.Send(from, proto.JoinGroupResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e, MemberID: member, Generation: -1})
	}
	if m.SessionTimeout < c.cfg.MinSessionTimeout || m.SessionTimeout > c.cfg.MaxSessionTimeout {
		fail(proto.InvalidSessionTimeout, m.MemberID)
		return
	}
	if g := c.group(m.Group, false); g != nil && g.Share != nil {
		fail(proto.InconsistentGroupProtocol, "") // a share group (GroupMetadataManager.classicGroupJoin)
		return
	}
	g := c.group(m.Group, true)
	if len(g.members) > 0 && g.Assignor != "" && m.Assignor != g.Assignor && !(len(g.members) == 1 && g.members[0].ID == m.MemberID) {
		record(h, JoinRefused{Group: g.ID, Client: m.ClientID, Wants: m.Assignor, Uses: g.Assignor})
		fail(proto.InconsistentGroupProtocol, m.MemberID)
		return
	}
	var mem *MemberInfo
	switch {
	case m.MemberID == "" && m.InstanceID != "":
		if old := g.byInstance(m.InstanceID); old != nil {
			c.rejoinStatic(h, g, old, from, m)
			return
		}
		mem = &MemberInfo{ID: g.newMemberID(m.ClientID), InstanceID: m.InstanceID}
		g.members = append(g.members, mem)
		record(h, MemberJoined{Group: g.ID, Member: mem.ID, Instance: m.InstanceID})
	case m.MemberID == "":
		id := g.newMemberID(m.ClientID)
		g.pending = append(g.pending, id)
		if len(g.pending) > 100 {
			g.pending = g.pending[1:]
		}
		fail(proto.MemberIDRequired, id)
		return
	default:
		mem = g.member(m.MemberID)
		if mem == nil {
			if i := slices.Index(g.pending, m.MemberID); i >= 0 {
				g.pending = slices.Delete(g.pending, i, i+1)
				mem = &MemberInfo{ID: m.MemberID}
				g.members = append(g.members, mem)
				record(h, MemberJoined{Group: g.ID, Member: mem.ID})
			} else {
				fail(proto.UnknownMemberID, m.MemberID)
				return
			}
		} else if m.InstanceID != "" && mem.InstanceID != m.InstanceID {
			fail(proto.FencedInstanceID, m.MemberID)
			return
		}
	}
	if s := g.byInstance(m.InstanceID); m.InstanceID != "" && s != nil && s != mem {
		fail(proto.FencedInstanceID, m.MemberID)
		return
	}
	changed := !slices.Equal(mem.Subscription.Topics, m.Subscription.Topics) || !slices.Equal(mem.Subscription.Owned, m.Subscription.Owned) ||
		mem.Assignor != m.Assignor
	mem.ClientID, mem.Client, mem.InstanceID = m.ClientID, from, m.InstanceID
	mem.SessionTimeout, mem.RebalanceTimeout, mem.Assignor = m.SessionTimeout, m.RebalanceTimeout, m.Assignor
	mem.Subscription = m.Subscription.Clone()
	if g.Assignor == "" || len(g.members) == 1 {
		g.Assignor = m.Assignor
	}
	c.answerWaiting(h, g, mem, proto.RebalanceInProgress) // an earlier join or sync of this member is superseded
	switch g.State {
	case Stable, CompletingRebalance:
		if !changed && mem.ID != g.Leader {
			// Nothing new: hand back the current generation (Kafka does the same for a
			// follower that rejoins with unchanged metadata).
			c.touch(h, g, mem)
			h.Send(from, c.joinResponse(g, mem, false))
			return
		}
		mem.awaitingJoin, mem.joinCorr = true, m.CorrelationID
		c.prepareRebalance(h, g, NewMetadata, mem.ID)
	case Empty, Dead:
		mem.awaitingJoin, mem.joinCorr = true, m.CorrelationID
		c.prepareRebalance(h, g, NewMember, mem.ID)
	case PreparingRebalance:
		mem.awaitingJoin, mem.joinCorr = true, m.CorrelationID
		c.maybeCompleteJoin(h, g)
	}
}

// rejoinStatic takes back a static member that restarted: a new member id replaces the old
// one (fencing the old incarnation). If the group is stable and the subscription is the
// same, the member gets its generation back without a rebalance (KIP-345).
func (c *Coordinator) rejoinStatic(h Host, g *Group, old *MemberInfo, from sim.NodeID, m proto.JoinGroup) {
	c.answerWaiting(h, g, old, proto.FencedInstanceID)
	prev := old.ID
	old.ID = g.newMemberID(m.ClientID)
	if g.Leader == prev {
		g.Leader = old.ID
	}
	old.ClientID, old.Client = m.ClientID, from
	old.SessionTimeout, old.RebalanceTimeout = m.SessionTimeout, m.RebalanceTimeout
	same := slices.Equal(old.Subscription.Topics, m.Subscription.Topics) && old.Assignor == m.Assignor
	record(h, MemberRejoined{Group: g.ID, Instance: old.InstanceID, Member: old.ID, Was: prev})
	if g.State == Stable && same {
		c.touch(h, g, old)
		c.write(h, []wal.Record{encodeGroup(g)}, func(Host, proto.Error) {})
		if h.Tracing() {
			h.Record(StaticRejoined{Group: g.ID, Member: old.ID, Generation: g.Generation, Partitions: slices.Clone(old.Assignment)})
		}
		// The answer is to this JoinGroup: its correlation id, not the one the member's
		// previous life joined with.
		old.joinCorr = m.CorrelationID
		resp := c.joinResponse(g, old, old.ID == g.Leader)
		resp.SkipAssignment = old.ID == g.Leader
		h.Send(from, resp)
		return
	}
	old.Subscription = m.Subscription.Clone()
	old.Assignor = m.Assignor
	old.awaitingJoin, old.joinCorr = true, m.CorrelationID
	if g.State == PreparingRebalance {
		c.maybeCompleteJoin(h, g)
		return
	}
	c.prepareRebalance(h, g, StaticNewMetadata, old.ID)
}

func (c *Coordinator) joinResponse(g *Group, m *MemberInfo, withMembers bool) proto.JoinGroupResponse {
	resp := proto.JoinGroupResponse{CorrelationID: m.joinCorr, Group: g.ID, Generation: g.Generation, Assignor: g.Assignor,
		Leader: g.Leader, MemberID: m.ID}
	if withMembers {
		for _, x := range g.members {
			resp.Members = append(resp.Members, proto.GroupMember{MemberID: x.ID, InstanceID: x.InstanceID, Subscription: x.Subscription.Clone()})
		}
	}
	return resp
}

// answerWaiting answers a member's parked join or sync with an error.
func (c *Coordinator) answerWaiting(h Host, g *Group, m *MemberInfo, e proto.Error) {
	if m.awaitingJoin {
		m.awaitingJoin = false
		if m.Client >= 0 {
			h.Send(m.Client, proto.JoinGroupResponse{CorrelationID: m.joinCorr, Group: g.ID, Error: e, MemberID: m.ID, Generation: -1})
		}
	}
	if m.awaitingSync {
		m.awaitingSync = false
		if m.Client >= 0 {
			h.Send(m.Client, proto.SyncGroupResponse{CorrelationID: m.syncCorr, Group: g.ID, Error: e})
		}
	}
}

// prepareRebalance starts a rebalance: the members must rejoin within the rebalance
// timeout. The first rebalance of an empty group waits group.initial.rebalance.delay.ms
// for more members.
func (c *Coordinator) prepareRebalance(h Host, g *Group, reason RebalanceReason, member string) {
	if g.State == CompletingRebalance {
		for _, m := range g.members {
			if m.awaitingSync {
				m.awaitingSync = false
				h.Send(m.Client, proto.SyncGroupResponse{CorrelationID: m.syncCorr, Group: g.ID, Error: proto.RebalanceInProgress})
			}
		}
	}
	delay := time.Duration(0)
	for _, m := range g.members {
		delay = max(delay, m.RebalanceTimeout)
	}
	initial := g.State == Empty && c.cfg.InitialRebalanceDelay > 0
	if initial {
		delay = min(delay, c.cfg.InitialRebalanceDelay)
	}
	if g.joinTimer != 0 {
		c.cancel(h, g.joinTimer, g.joinKey)
	}
	g.joinTimer, g.joinKey = c.setTimer(h, delay, timerRef{kind: tkJoin, group: g.ID})
	g.State = PreparingRebalance
	g.writing = false
	g.initial = initial
	record(h, RebalanceStarted{Group: g.ID, Generation: g.Generation, Reason: reason, Member: member, Initial: initial, Delay: delay})
	if !initial {
		c.maybeCompleteJoin(h, g)
	}
}

// maybeCompleteJoin completes the join phase once every member has rejoined (the first
// rebalance of an empty group waits for its delay anyway).
func (c *Coordinator) maybeCompleteJoin(h Host, g *Group) {
	if g.State != PreparingRebalance {
		return
	}
	if g.initial && len(g.members) > 0 {
		return // within the initial delay of an empty group: its timer ends the join
	}
	for _, m := range g.members {
		if !m.awaitingJoin {
			return
		}
	}
	if g.joinTimer != 0 {
		c.cancel(h, g.joinTimer, g.joinKey)
		g.joinTimer, g.joinKey = 0, 0
	}
	c.completeJoin(h, g)
}

// completeJoin ends the join phase: members that did not rejoin are removed, the
// generation moves on, and every member learns it (the leader with everyone's
// subscriptions).
func (c *Coordinator) completeJoin(h Host, g *Group) {
	g.initial = false
	var gone []string
	for _, m := range slices.Clone(g.members) {
		if !m.awaitingJoin {
			gone = append(gone, m.ID)
			c.cancel(h, m.session, m.sessionKey)
			g.removeMember(m)
		}
	}
	if len(gone) > 0 {
		record(h, MembersRemoved{Group: g.ID, Members: gone})
	}
	g.Generation++
	if len(g.members) == 0 {
		g.State, g.Leader = Empty, ""
		record(h, GroupEmptied{Group: g.ID, Generation: g.Generation})
		c.write(h, []wal.Record{encodeGroup(g)}, func(Host, proto.Error) {})
		return
	}
	if g.member(g.Leader) == nil {
		g.Leader = g.members[0].ID
	}
	g.Assignor = g.member(g.Leader).Assignor
	g.State = CompletingRebalance
	if h.Tracing() {
		ids := make([]string, len(g.members))
		for i, m := range g.members {
			ids[i] = m.ID
		}
		h.Record(JoinCompleted{Group: g.ID, Generation: g.Generation, Leader: g.Leader, Members: ids})
	}
	for _, m := range g.members {
		m.awaitingJoin = false
		c.touch(h, g, m)
		h.Send(m.Client, c.joinResponse(g, m, m.ID == g.Leader))
	}
}

func (c *Coordinator) onSync(h Host, from sim.NodeID, m proto.SyncGroup) {
	fail := func(e proto.Error) {
		h.Send(from, proto.SyncGroupResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
	}
	g := c.group(m.Group, false)
	if g == nil {
		fail(proto.UnknownMemberID)
		return
	}
	mem := g.member(m.MemberID)
	switch {
	case mem == nil:
		fail(proto.UnknownMemberID)
		return
	case m.InstanceID != "" && mem.InstanceID != m.InstanceID:
		fail(proto.FencedInstanceID)
		return
	case m.Generation != g.Generation:
		fail(proto.IllegalGeneration)
		return
	}
	switch g.State {
	case Empty, Dead:
		fail(proto.UnknownMemberID)
	case PreparingRebalance:
		fail(proto.RebalanceInProgress)
	case Stable:
		c.touch(h, g, mem)
		h.Send(from, proto.SyncGroupResponse{CorrelationID: m.CorrelationID, Group: g.ID, Generation: g.Generation, Partitions: slices.Clone(mem.Assignment)})
	case CompletingRebalance:
		mem.Client = from
		mem.awaitingSync, mem.syncCorr = true, m.CorrelationID
		c.touch(h, g, mem)
		if mem.ID != g.Leader || g.writing {
			return
		}
		for _, x := range g.members {
			x.Assignment = nil
		}
		for _, a := range m.Assignments {
			if x := g.member(a.MemberID); x != nil {
				x.Assignment = slices.Clone(a.Partitions)
			}
		}
		g.writing = true
		gen := g.Generation
		g.Rebalances++ // as the stored record will count it
		c.write(h, []wal.Record{encodeGroup(g)}, func(h Host, e proto.Error) {
			if g.State != CompletingRebalance || g.Generation != gen {
				return
			}
			g.writing = false
			if e != proto.None {
				g.Rebalances--
				record(h, SyncFailed{Group: g.ID, Generation: gen, Err: e})
				for _, x := range g.members {
					if x.awaitingSync {
						x.awaitingSync = false
						h.Send(x.Client, proto.SyncGroupResponse{CorrelationID: x.syncCorr, Group: g.ID, Error: e})
					}
				}
				c.prepareRebalance(h, g, StoreFailed, "")
				return
			}
			g.State = Stable
			if h.Tracing() {
				parts := make([]MemberAssignment, len(g.members))
				for i, x := range g.members {
					parts[i] = MemberAssignment{Member: x.ID, Partitions: slices.Clone(x.Assignment)}
				}
				h.Record(GroupStabilized{Group: g.ID, Generation: g.Generation, Assignment: parts})
			}
			for _, x := range g.members {
				if x.awaitingSync {
					x.awaitingSync = false
					h.Send(x.Client, proto.SyncGroupResponse{CorrelationID: x.syncCorr, Group: g.ID, Generation: g.Generation, Partitions: slices.Clone(x.Assignment)})
				}
			}
		})
	}
}

func (c *Coordinator) onHeartbeat(h Host, from sim.NodeID, m proto.Heartbeat) {
	reply := func(e proto.Error) {
		h.Send(from, proto.HeartbeatResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
	}
	g := c.group(m.Group, false)
	if g == nil {
		reply(proto.UnknownMemberID)
		return
	}
	mem := g.member(m.MemberID)
	switch {
	case mem == nil:
		if s := g.byInstance(m.InstanceID); s != nil {
			reply(proto.FencedInstanceID)
			return
		}
		reply(proto.UnknownMemberID)
		return
	case m.InstanceID != "" && mem.InstanceID != m.InstanceID:
		reply(proto.FencedInstanceID)
		return
	case m.Generation != g.Generation:
		reply(proto.IllegalGeneration)
		return
	}
	switch g.State {
	case Empty, Dead:
		reply(proto.UnknownMemberID)
	case PreparingRebalance:
		c.touch(h, g, mem)
		reply(proto.RebalanceInProgress)
	default:
		c.touch(h, g, mem)
		reply(proto.None)
	}
}

func (c *Coordinator) onLeave(h Host, from sim.NodeID, m proto.LeaveGroup) {
	reply := func(e proto.Error) {
		h.Send(from, proto.LeaveGroupResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
	}
	g := c.group(m.Group, false)
	if g == nil {
		reply(proto.UnknownMemberID)
		return
	}
	mem := g.member(m.MemberID)
	if mem == nil && m.MemberID == "" {
		mem = g.byInstance(m.InstanceID)
	}
	if mem == nil {
		reply(proto.UnknownMemberID)
		return
	}
	if m.InstanceID != "" && mem.InstanceID != m.InstanceID {
		reply(proto.FencedInstanceID)
		return
	}
	record(h, MemberLeft{Group: g.ID, Member: mem.ID, Reason: m.Reason})
	reply(proto.None)
	c.remove(h, g, mem, MemberLeave)
}

// remove takes a member out of the group and rebalances the others.
func (c *Coordinator) remove(h Host, g *Group, m *MemberInfo, why RebalanceReason) {
	c.cancel(h, m.session, m.sessionKey)
	c.answerWaiting(h, g, m, proto.UnknownMemberID)
	g.removeMember(m)
	switch g.State {
	case Stable, CompletingRebalance:
		c.prepareRebalance(h, g, why, m.ID)
	case PreparingRebalance:
		if len(g.members) == 0 {
			c.cancel(h, g.joinTimer, g.joinKey)
			g.joinTimer, g.joinKey = 0, 0
			c.completeJoin(h, g)
			return
		}
		c.maybeCompleteJoin(h, g)
	}
}

// validateCommit is Kafka's ClassicGroup.validateOffsetCommit.
func (c *Coordinator) validateCommit(g *Group, m proto.OffsetCommit) proto.Error {
	if g != nil && g.Consumer != nil {
		return validateConsumerCommit(g.Consumer, m)
	}
	if g == nil {
		if m.Generation < 0 {
			return proto.None
		}
		return proto.IllegalGeneration
	}
	if m.Generation < 0 && m.MemberID == "" {
		if g.State == Empty {
			return proto.None // a commit from outside the group protocol (assign(), admin)
		}
		return proto.UnknownMemberID
	}
	if e := g.checkMember(m.MemberID, m.InstanceID, m.Generation); e != proto.None {
		return e
	}
	if g.State == CompletingRebalance {
		return proto.RebalanceInProgress
	}
	return proto.None
}

// checkMember is the membership part of a classic group's commit checks
// (ClassicGroup.validateOffsetCommit): the member must be in the group, with its instance
// id, in the group's generation.
func (g *Group) checkMember(memberID, instanceID string, generation int32) proto.Error {
	mem := g.member(memberID)
	switch {
	case mem == nil:
		if g.byInstance(instanceID) != nil {
			return proto.FencedInstanceID
		}
		return proto.UnknownMemberID
	case instanceID != "" && mem.InstanceID != instanceID:
		return proto.FencedInstanceID
	case generation != g.Generation:
		return proto.IllegalGeneration
	}
	return proto.None
}

func (c *Coordinator) onCommit(h Host, from sim.NodeID, m proto.OffsetCommit) {
	reply := func(e proto.Error) {
		h.Send(from, proto.OffsetCommitResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
	}
	g := c.group(m.Group, false)
	if e := c.validateCommit(g, m); e != proto.None {
		if !c.bugs.NoGenerationFencing {
			if h.Tracing() {
				h.Record(CommitRejected{Group: m.Group, Member: m.MemberID, Generation: m.Generation, Offsets: slices.Clone(m.Offsets), Err: e})
			}
			reply(e)
			return
		}
		cur := int32(-1)
		if g != nil {
			cur = g.Generation
		}
		c.Stale = append(c.Stale, StaleCommit{Group: m.Group, Member: m.MemberID, Generation: m.Generation, Current: cur,
			Offsets: slices.Clone(m.Offsets), At: h.Now()})
		if h.Tracing() {
			h.Record(CommitUnfenced{Group: m.Group, Member: m.MemberID, Generation: m.Generation, Current: cur, Offsets: slices.Clone(m.Offsets), Err: e})
		}
	}
	if g == nil {
		g = c.group(m.Group, true)
	}
	records := make([]wal.Record, len(m.Offsets))
	for i, o := range m.Offsets {
		records[i] = encodeOffset(g.ID, o, m.MemberID, m.Generation)
	}
	offsets := slices.Clone(m.Offsets)
	c.write(h, records, func(h Host, e proto.Error) {
		if e != proto.None {
			record(h, CommitFailed{Group: g.ID, Member: m.MemberID, Offsets: offsets, Err: e})
			reply(e)
			return
		}
		for _, o := range offsets {
			g.setOffset(Committed{TP: o.TP, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Member: m.MemberID, Generation: m.Generation})
		}
		record(h, OffsetsCommitted{Group: g.ID, Member: m.MemberID, Generation: m.Generation, Offsets: offsets})
		reply(proto.None)
	})
}

func (c *Coordinator) onOffsetFetch(h Host, from sim.NodeID, m proto.OffsetFetch) {
	resp := proto.OffsetFetchResponse{CorrelationID: m.CorrelationID, Group: m.Group}
	if m.RequireStable && c.pendingOffsetFor(m.Group, m.Partitions) {
		resp.Error = proto.UnstableOffsetCommit
		h.Send(from, resp)
		return
	}
	g := c.group(m.Group, false)
	for _, tp := range m.Partitions {
		o := proto.PartitionOffset{TP: tp, Offset: -1, LeaderEpoch: wal.UndefinedEpoch}
		if g != nil {
			if i, ok := g.offsetIndex(tp); ok {
				o.Offset, o.LeaderEpoch = g.offsets[i].Offset, g.offsets[i].LeaderEpoch
			}
		}
		resp.Offsets = append(resp.Offsets, o)
	}
	h.Send(from, resp)
}

func offsetsText(os []proto.PartitionOffset) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
	}
	return strings.Join(s, " ")
}
