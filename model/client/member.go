package client

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/group"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// leaderMetadataTries bounds how often a group leader asks for metadata naming a
// subscribed topic before it assigns that topic nothing.
const leaderMetadataTries = 5

// Group timers.
const (
	gtRequest      = 100 + iota // a FindCoordinator, JoinGroup, SyncGroup or LeaveGroup got no answer; Arg = corr
	gtRetry                     // the backoff before finding the coordinator or joining again is over
	gtHeartbeat                 // the next heartbeat is due; Arg = heartbeat generation
	gtHBTimeout                 // a heartbeat got no answer; Arg = corr
	gtCommit                    // a commit got no answer; Arg = corr
	gtOffsets                   // an OffsetFetch got no answer; Arg = corr
	gtMaxPoll                   // processing exceeded max.poll.interval.ms; Arg = poll number
	gtPollWait                  // a poll waited too long for the group; Arg = poll number
	gtAutoCommit                // auto.commit.interval.ms has passed
	gtOffsetsRetry              // the backoff after UNSTABLE_OFFSET_COMMIT is over
)

// phaseGroup: the poll waits for the member to have its partitions (a rebalance).
// phaseCommit: the poll waits for its commit before processing (commit before processing).
// noPoll: the application is not in a poll.
const (
	phaseGroup = 100 + iota
	phaseCommit
	noPoll = -1
)

// Member states.
type memberState uint8

const (
	msIdle    memberState = iota // needs a coordinator and a join
	msFinding                    // FindCoordinator in flight
	msJoining                    // JoinGroup in flight
	msSyncing                    // SyncGroup in flight (or the leader waits for metadata)
	msStable                     // in the generation; heartbeating
	msLeft                       // closed (Leave) or fenced for good
)

func (s memberState) String() string {
	return [...]string{"unjoined", "finding coordinator", "joining", "syncing", "stable", "left"}[s]
}

// commitReq is a commit in flight.
type commitReq struct {
	corr     int64
	h        history.Handle
	offsets  []proto.PartitionOffset
	timer    sim.TimerID
	sync     bool   // the member waits for it (commitSync)
	member   string // the identity it was sent with
	gen      int32
	then     func(env *sim.Env, ok bool)
	recorded bool
}

// member is a consumer's group membership: the group protocol (find the coordinator, join,
// sync, heartbeat, commit, leave) of KafkaConsumer's ConsumerCoordinator. It keeps its own
// state and reaches the consumer it serves only through c: the partitions the consumer
// holds, their positions, and the application's poll. The consumer's fetch and poll
// machinery knows the member through the methods it calls on it.
type member struct {
	c       memberConsumer
	cl      *cluster // the consumer's connection to the cluster: correlation ids, brokers, metadata
	cfg     proto.ConsumerConfig
	rec     *history.Recorder
	process int

	sub         Subscribe
	assignor    group.Assignor
	cooperative bool

	state    memberState
	coord    sim.NodeID
	hasCoord bool
	lastLost sim.NodeID // the coordinator last given up on
	hasLost  bool
	memberID string
	gen      int32
	// synced is the generation of the last assignment received (SyncGroup): the
	// generation under which the member holds its partitions.
	synced   int32
	leaderOf bool // this member led the last join
	// assigned is, for a classic group's leader, each subscribed topic's partition count
	// when it last assigned (Kafka's assignmentSnapshot), by topic name in order.
	assigned []topicCount

	reqCorr  int64 // find, join, sync or leave in flight
	reqTimer sim.TimerID
	retry    sim.TimerID

	hbGen   int64 // bumps to retire scheduled heartbeats
	hbCorr  int64
	hbTimer sim.TimerID

	rejoin    bool // a rebalance is needed
	lost      bool // the membership is gone: drop the partitions (no commit) and rejoin
	lostWhy   string
	pending   []proto.TP               // an assignment received, not applied yet
	hasPend   bool                     // pending is set (it may be empty)
	join      *proto.JoinGroupResponse // a leader's join waiting for metadata
	metaTries int                      // metadata refreshes it waited for

	// precommitted are the partitions whose commit before revoking has ended, ok or not:
	// the revocation then goes on without committing them again.
	precommitted []proto.TP

	fetchCorr  int64 // OffsetFetch in flight
	fetchTimer sim.TimerID
	unknown    []proto.TP // assigned partitions whose committed offset is not known yet

	commits    []*commitReq
	acked      map[proto.TP]int64 // last acknowledged commit per partition
	autoTimer  sim.TimerID
	maxPoll    sim.TimerID
	pollSeq    int64
	zombie     bool // left for max.poll.interval.ms while processing
	first      bool // no assignment applied yet
	rebalances int
	fenced     string

	// consumerProto: the member speaks the consumer protocol (KIP-848,
	// member_consumer.go); gen is then its member epoch.
	consumerProto bool
	hbInterval    time.Duration // the coordinator's heartbeat interval under it
}

// memberConsumer is what a group member needs from the consumer it serves.
type memberConsumer interface {
	// owned is the partitions the consumer holds, sorted: read it, never keep it.
	owned() []proto.TP
	// setPartitions replaces them (new ones start without a position) and records the
	// assign op under group.
	setPartitions(env *sim.Env, group string, parts []proto.TP, why string)
	// position is the next offset the consumer reads from tp, false while it has none.
	position(tp proto.TP) (int64, bool)
	// positionEpoch is the leader epoch to commit with tp's position (KIP-320).
	positionEpoch(tp proto.TP) int32
	// startAt sets where the consumer starts in tp: a committed offset (ignored if
	// negative) and the leader epoch it was committed with. It returns the partition's
	// auto.offset.reset, and false if the consumer does not hold tp.
	startAt(tp proto.TP, offset int64, committedEpoch int32) (reset string, ok bool)

	// pollPhase is the phase of the application's poll, noPoll when it is not in one.
	pollPhase() int
	setPollPhase(phase int)
	// resumePoll goes on with a poll that waited for the member's partitions.
	resumePoll(env *sim.Env)
	// pollWithoutPartitions ends the wait of a poll for the group: it returns what it has,
	// with why among its errors.
	pollWithoutPartitions(env *sim.Env, why string)
	// startProcessing has the application process the poll's n records.
	startProcessing(env *sim.Env, n int)
	// stopPollLoop ends the application's poll loop.
	stopPollLoop()
}

func newMember(c memberConsumer, cl *cluster, cfg proto.ConsumerConfig, rec *history.Recorder, process int, sub Subscribe, a group.Assignor) *member {
	m := &member{c: c, cl: cl, cfg: cfg, rec: rec, process: process, sub: sub, assignor: a, cooperative: cfg.Protocol == proto.ProtocolCooperative,
		consumerProto: cfg.ConsumerProtocol(), gen: -1, synced: -1, acked: map[proto.TP]int64{}, first: true}
	m.sub.Topics = slices.Clone(sub.Topics)
	slices.Sort(m.sub.Topics)
	return m
}

func (m *member) now(env *sim.Env) int64 { return int64(env.Now()) }

// group is the member's group id.
func (m *member) group() string { return m.sub.Group }

// active reports whether the member is still in its group (not closed nor fenced).
func (m *member) active() bool { return m.state != msLeft }

// status is the member's state, for views and invariants.
func (m *member) status() MemberStatus {
	return MemberStatus{Group: m.sub.Group, InstanceID: m.sub.InstanceID, MemberID: m.memberID, Generation: m.gen,
		State: m.state.String(), Owned: slices.Clone(m.c.owned()), Rebalances: m.rebalances, Fenced: m.fenced,
		Settled: m.state == msStable && !m.rejoin && !m.hasPend && !m.first && !m.lost && !m.zombie && len(m.unknown) == 0}
}

// ownership is the generation the member holds its partitions under (see
// Consumer.Ownership).
func (m *member) ownership() int32 {
	if m.gen < 0 || m.lost {
		return -1
	}
	return m.synced
}

// start begins the membership: the auto-commit clock, then the join.
func (m *member) start(env *sim.Env) {
	if m.cfg.Commit == proto.CommitAuto {
		m.autoTimer = env.SetTimer(m.cfg.AutoCommitInterval, sim.TimerTag{Kind: gtAutoCommit})
	}
}

// onMetadata goes on with a leader's assignment that waited for metadata. A classic
// leader whose metadata no longer matches what it assigned asks for a rebalance
// (ConsumerCoordinator.rejoinNeededOrPending: "the assignment metadata has changed"), so
// that added partitions get owners.
func (m *member) onMetadata(env *sim.Env) {
	if m.join != nil && m.state == msSyncing {
		m.leaderAssign(env)
		return
	}
	if !m.leaderOf || m.consumerProto || m.state != msStable || m.rejoin {
		return
	}
	for _, t := range m.assigned {
		if n := m.cl.partitions(t.topic); n != t.count && n > 0 {
			sim.Record(env, MetadataChangedRejoin{Group: m.sub.Group, Member: m.memberID, Topic: t.topic, Before: t.count, After: n})
			m.rejoin = true
			m.advance(env)
			return
		}
	}
}

// topicCount is a topic's partition count.
type topicCount struct {
	topic string
	count int
}

// pollStarted counts a poll of the application; the number names the poll in the
// member's max.poll.interval.ms and poll-wait timers.
func (m *member) pollStarted() (seq int64) {
	m.pollSeq++
	return m.pollSeq
}

// setAssignment replaces the consumer's partitions and forgets what the member knew of the
// partitions it no longer holds.
func (m *member) setAssignment(env *sim.Env, parts []proto.TP, why string) {
	m.c.setPartitions(env, m.sub.Group, parts, why)
	m.unknown = slices.DeleteFunc(m.unknown, func(tp proto.TP) bool { return !slices.Contains(parts, tp) })
	for tp := range m.acked {
		if !slices.Contains(parts, tp) {
			delete(m.acked, tp) // ranging only to delete: order does not matter
		}
	}
}

// leave closes the membership: commit under auto-commit, LeaveGroup unless static.
func (m *member) leave(env *sim.Env, why string) {
	if m.state == msLeft {
		return
	}
	if m.cfg.Commit == proto.CommitAuto && m.commitPositions(env, m.c.owned(), true, "on close", func(env *sim.Env, ok bool) { m.finishLeave(env, why) }) {
		return
	}
	m.finishLeave(env, why)
}

func (m *member) finishLeave(env *sim.Env, why string) {
	if m.consumerProto {
		m.sendConsumerLeave(env, why)
	} else if m.sub.InstanceID == "" && m.memberID != "" && m.hasCoord {
		env.Send(m.coord, proto.LeaveGroup{CorrelationID: m.cl.newCorr(), Group: m.sub.Group, MemberID: m.memberID, Reason: why})
		sim.Record(env, Left{Group: m.sub.Group, Member: m.memberID, Why: why})
	} else {
		sim.Record(env, Left{Group: m.sub.Group, Member: m.memberID, Why: why, Static: true})
	}
	m.stopRequests(env)
	m.state = msLeft
	env.CancelTimer(m.autoTimer)
	m.c.stopPollLoop() // the application's poll loop ends with it
	if len(m.c.owned()) > 0 {
		m.setAssignment(env, nil, "closed")
	}
}

func (m *member) stopRequests(env *sim.Env) {
	env.CancelTimer(m.reqTimer)
	env.CancelTimer(m.retry)
	env.CancelTimer(m.hbTimer)
	env.CancelTimer(m.fetchTimer)
	m.reqCorr, m.hbCorr, m.fetchCorr, m.retry = 0, 0, 0, 0
	m.hbGen++
}

// blocked reports whether the application waits in a synchronous commit.
func (m *member) blocked() bool {
	for _, r := range m.commits {
		if r.sync {
			return true
		}
	}
	return false
}

// busy reports whether the application is inside a poll that a rebalance must not
// interrupt.
func (m *member) busy() bool {
	phase := m.c.pollPhase()
	return (phase != noPoll && phase != phaseGroup) || m.blocked()
}

// ready reports whether a poll may fetch: the member holds its partitions and knows where
// to start in each.
func (m *member) ready() bool {
	if m.state == msLeft {
		return true
	}
	if m.lost || m.hasPend || len(m.unknown) > 0 || m.first || m.zombie {
		return false
	}
	// The cooperative and consumer protocols keep consuming owned partitions during a
	// rebalance.
	return m.state == msStable && !m.rejoin || (m.cooperative || m.consumerProto) && len(m.c.owned()) > 0
}

// advance does whatever the membership needs next, if the application lets it.
func (m *member) advance(env *sim.Env) {
	if m.state == msLeft || m.busy() {
		return
	}
	if m.lost {
		m.lost = false
		if len(m.c.owned()) > 0 {
			if env.Tracing() {
				sim.Record(env, PartitionsLost{Group: m.sub.Group, Why: m.lostWhy, Partitions: slices.Clone(m.c.owned())})
			}
			m.setAssignment(env, nil, "lost")
		}
		m.rejoin = true
	}
	if m.hasPend {
		if !m.applyAssignment(env) {
			return // waits for the commit of revoked partitions
		}
	}
	if m.state == msIdle || m.state == msStable && m.rejoin {
		m.startJoin(env)
	}
	if m.c.pollPhase() == phaseGroup && m.ready() {
		m.c.resumePoll(env)
	}
}

// startJoin finds the coordinator if needed, then (re)joins. Under the eager protocol the
// member first commits (auto-commit) and revokes everything.
func (m *member) startJoin(env *sim.Env) {
	if m.reqCorr != 0 || m.retry != 0 {
		return
	}
	if !m.hasCoord {
		m.findCoordinator(env)
		return
	}
	if m.consumerProto {
		m.sendConsumerJoin(env)
		return
	}
	if !m.cooperative && len(m.c.owned()) > 0 {
		revoke := slices.Clone(m.c.owned())
		if m.cfg.Commit == proto.CommitAuto && m.commitPositions(env, revoke, true, "before revoking", func(env *sim.Env, ok bool) { m.advance(env) }) {
			m.state = msIdle
			m.rejoin = true
			m.setAssignment(env, nil, "revoked (eager)")
			return
		}
		m.setAssignment(env, nil, "revoked (eager)")
	}
	m.sendJoin(env)
}

func (m *member) findCoordinator(env *sim.Env) {
	if len(m.cl.brokers) == 0 {
		return
	}
	m.state = msFinding
	if m.hasLost && len(m.cl.brokers) > 1 && m.cl.brokers[m.cl.next] == m.lastLost {
		m.cl.rotate() // not the broker that just stopped answering as coordinator
	}
	to := m.cl.brokers[m.cl.next]
	m.reqCorr = m.cl.newCorr()
	env.Send(to, proto.FindCoordinator{CorrelationID: m.reqCorr, Group: m.sub.Group})
	m.reqTimer = env.SetTimer(m.cfg.RequestTimeout, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

func (m *member) sendJoin(env *sim.Env) {
	m.state = msJoining
	m.rejoin = false
	owned := []proto.TP(nil)
	if m.cooperative && !m.lost && m.gen >= 0 {
		// A member that lost its membership (fenced, expired, unknown) claims nothing:
		// its partitions may already belong to someone in a newer generation, and it
		// drops them without committing (Kafka's onPartitionsLost).
		owned = slices.Clone(m.c.owned())
	}
	m.reqCorr = m.cl.newCorr()
	env.Send(m.coord, proto.JoinGroup{CorrelationID: m.reqCorr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		ClientID: env.Name(), SessionTimeout: m.cfg.SessionTimeout, RebalanceTimeout: m.cfg.EffectiveRebalanceTimeout(),
		Assignor: m.cfg.Assignor, Subscription: proto.Subscription{Topics: slices.Clone(m.sub.Topics), Owned: owned}})
	// Kafka's JoinGroup may wait a whole rebalance timeout at the coordinator.
	m.reqTimer = env.SetTimer(m.cfg.EffectiveRebalanceTimeout()+5*time.Second, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

// backoff retries the join (or the coordinator lookup) after retry.backoff.ms.
func (m *member) backoff(env *sim.Env) {
	m.reqCorr = 0
	env.CancelTimer(m.reqTimer)
	if m.retry == 0 {
		m.retry = env.SetTimer(consumerRetryBackoff, sim.TimerTag{Kind: gtRetry})
	}
}

// coordinatorLost forgets the coordinator; the member finds it again and carries on.
func (m *member) coordinatorLost(env *sim.Env, why string) {
	if m.hasCoord {
		sim.Record(env, CoordinatorLost{Group: m.sub.Group, Coordinator: env.NameOf(m.coord), Why: why})
		m.lastLost, m.hasLost = m.coord, true
	}
	m.hasCoord = false
	if m.fetchCorr != 0 {
		env.CancelTimer(m.fetchTimer)
		m.fetchCorr = 0 // asked again of the next coordinator
	}
	if m.state == msJoining || m.state == msSyncing {
		// The join was cut short: the rebalance is still owed. Under the eager protocol the
		// member already revoked everything, so the generation it still remembers (synced
		// == gen) no longer describes what it holds; without this, the next coordinator's
		// answer took it back to stable holding nothing while the coordinator, which never
		// saw the join, kept its old partitions assigned to it for ever. Kafka clears
		// rejoinNeeded only when a JoinGroup is answered, and a failed SyncGroup asks for
		// a rejoin again.
		m.rejoin = true
	}
	if m.state != msStable {
		m.state = msIdle
	}
	m.backoff(env)
}

// recv handles the coordinator's answers. It reports whether the member went on (advance):
// then the consumer carries on with its queued commands.
func (m *member) recv(env *sim.Env, from sim.NodeID, msg sim.Message) bool {
	switch r := msg.(type) {
	case proto.FindCoordinatorResponse:
		if r.CorrelationID != m.reqCorr || m.state != msFinding {
			return false
		}
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
		if r.Error != proto.None {
			m.cl.rotate()
			m.state = msIdle
			m.backoff(env)
			return false
		}
		m.coord, m.hasCoord = r.Coordinator, true
		sim.Record(env, CoordinatorFound{Group: m.sub.Group, Coordinator: env.NameOf(r.Coordinator)})
		if m.memberID != "" && m.gen >= 0 && m.synced == m.gen && !m.first && !m.lost {
			// Still a member that holds its generation's assignment: carry on with the
			// new coordinator (advance rejoins if a rebalance was asked for). A member
			// whose SyncGroup went unanswered never learnt its partitions, and the new
			// coordinator may list some for it: it joins again (Kafka keeps
			// rejoinNeeded until a sync succeeds).
			m.state = msStable
			m.scheduleHeartbeat(env, 0)
			m.fetchCommitted(env)
		} else {
			m.state = msIdle
			m.startJoin(env)
		}
	case proto.JoinGroupResponse:
		if r.CorrelationID != m.reqCorr || m.state != msJoining {
			return false
		}
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
		m.onJoined(env, r)
	case proto.SyncGroupResponse:
		if r.CorrelationID != m.reqCorr || m.state != msSyncing {
			return false
		}
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
		m.onSynced(env, r)
	case proto.HeartbeatResponse:
		if r.CorrelationID != m.hbCorr {
			return false
		}
		env.CancelTimer(m.hbTimer)
		m.hbCorr = 0
		m.onHeartbeat(env, r)
	case proto.OffsetCommitResponse:
		m.onCommitted(env, r)
	case proto.OffsetFetchResponse:
		m.onOffsets(env, r)
	case proto.LeaveGroupResponse:
	case proto.ConsumerGroupHeartbeatResponse:
		if !m.onConsumerHeartbeatResponse(env, r) {
			return false
		}
	}
	m.advance(env)
	return true
}

func (m *member) onJoined(env *sim.Env, r proto.JoinGroupResponse) {
	switch r.Error {
	case proto.None:
	case proto.MemberIDRequired:
		m.memberID = r.MemberID
		m.sendJoin(env)
		return
	case proto.UnknownMemberID, proto.IllegalGeneration:
		sim.Record(env, JoinError{Group: m.sub.Group, Err: r.Error})
		// The membership is gone, and with it the partitions: they are dropped before the
		// next join, as after a failed heartbeat or sync.
		m.loseMembership(fmt.Sprintf("join of %s in generation %d: %s", m.memberID, m.gen, r.Error), false)
		m.backoff(env)
		return
	case proto.RebalanceInProgress:
		m.state = msIdle
		m.backoff(env)
		return
	case proto.FencedInstanceID:
		m.fence(env, r.Error)
		return
	case proto.InconsistentGroupProtocol, proto.InvalidSessionTimeout:
		sim.Record(env, CannotJoin{Group: m.sub.Group, Err: r.Error})
		m.fence(env, r.Error)
		return
	default:
		m.coordinatorLost(env, r.Error.String())
		return
	}
	m.memberID, m.gen = r.MemberID, r.Generation
	m.leaderOf = r.Leader == r.MemberID
	m.state = msSyncing
	sim.Record(env, Joined{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Leader: r.Leader})
	if m.leaderOf && !r.SkipAssignment {
		jr := r
		m.join = &jr
		m.leaderAssign(env)
		return
	}
	m.sendSync(env, nil)
}

// leaderAssign runs the assignor as the group leader, once the metadata names every
// subscribed topic's partitions.
func (m *member) leaderAssign(env *sim.Env) {
	r := m.join
	var members []group.Member
	var topics []string
	for _, x := range r.Members {
		members = append(members, group.Member{ID: x.MemberID, InstanceID: x.InstanceID, Topics: slices.Clone(x.Subscription.Topics),
			Owned: slices.Clone(x.Subscription.Owned)})
		for _, t := range x.Subscription.Topics {
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	slices.Sort(topics)
	var parts []proto.TP
	missing := !m.cl.known
	for _, t := range topics {
		missing = missing || m.cl.partitions(t) == 0
	}
	if missing && m.metaTries < leaderMetadataTries {
		// The metadata may be stale (a restarted broker's is empty): ask again, a few
		// times, before assigning a topic nothing. leaderAssign runs again when it comes.
		m.metaTries++
		m.cl.refresh(env)
		return
	}
	m.metaTries = 0
	m.assigned = m.assigned[:0]
	for _, t := range topics {
		n := m.cl.partitions(t)
		m.assigned = append(m.assigned, topicCount{topic: t, count: n})
		for p := 0; p < n; p++ {
			parts = append(parts, proto.TP{Topic: t, Partition: int32(p)})
		}
	}
	m.join = nil
	a := m.assignor.Assign(members, parts)
	var held []proto.TP
	if m.cooperative && !m.sub.Bugs.NoRevokeFirst {
		a, held = group.RevokeFirst(a, members)
	}
	var as []proto.MemberAssignment
	for _, x := range members {
		as = append(as, proto.MemberAssignment{MemberID: x.ID, Partitions: slices.Clone(a[x.ID])})
	}
	sim.Record(env, LeaderAssigned{Group: m.sub.Group, Leader: m.memberID, Assignor: m.assignor.Name(), Generation: m.gen,
		Assignment: as, Held: held, NoRevokeFirst: m.cooperative && m.sub.Bugs.NoRevokeFirst})
	m.sendSync(env, as)
}

func (m *member) sendSync(env *sim.Env, as []proto.MemberAssignment) {
	m.state = msSyncing
	m.reqCorr = m.cl.newCorr()
	env.Send(m.coord, proto.SyncGroup{CorrelationID: m.reqCorr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		Generation: m.gen, Assignments: as})
	m.reqTimer = env.SetTimer(m.cfg.RequestTimeout, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

func (m *member) onSynced(env *sim.Env, r proto.SyncGroupResponse) {
	switch r.Error {
	case proto.None:
	case proto.RebalanceInProgress:
		m.state = msIdle
		m.backoff(env)
		return
	case proto.UnknownMemberID, proto.IllegalGeneration:
		m.loseMembership(fmt.Sprintf("sync of %s in generation %d: %s", m.memberID, m.gen, r.Error), false)
		m.backoff(env)
		return
	case proto.FencedInstanceID:
		m.fence(env, r.Error)
		return
	default:
		m.coordinatorLost(env, r.Error.String())
		return
	}
	m.pending, m.hasPend = slices.Clone(r.Partitions), true
	m.synced = r.Generation
	m.state = msStable
	m.scheduleHeartbeat(env, m.cfg.HeartbeatInterval)
}

// applyAssignment takes the pending assignment: revoke what is gone (committing it first
// under auto-commit), add what is new (its committed offsets fetched next). Under the
// cooperative protocol, revoking anything calls for a follow-up rebalance. It reports false
// while it waits for the commit.
func (m *member) applyAssignment(env *sim.Env) bool {
	next := m.pending
	slices.SortFunc(next, proto.CompareTP)
	var revoked []proto.TP
	for _, tp := range m.c.owned() {
		if !slices.Contains(next, tp) {
			revoked = append(revoked, tp)
		}
	}
	// A commit that fails does not hold the revocation back: Kafka's reconciliation goes on
	// with it anyway (AbstractMembershipManager, "Will proceed with the reconciliation
	// anyway"). Committing again instead looped for ever when the commit failed at once
	// (no coordinator known): commit, fail, apply, commit... (a stack overflow in swarm
	// seed 1123 of the any profile under group-protocol=consumer).
	if len(revoked) > 0 && m.cfg.Commit == proto.CommitAuto && !subsetTP(revoked, m.precommitted) {
		if m.commitPositions(env, revoked, true, "before revoking", func(env *sim.Env, ok bool) {
			m.precommitted = revoked
			m.advance(env)
		}) {
			return false
		}
	}
	m.precommitted = nil
	m.hasPend, m.pending = false, nil
	var added []proto.TP
	for _, tp := range next {
		if !slices.Contains(m.c.owned(), tp) {
			added = append(added, tp)
		}
	}
	m.rebalances++
	changed := m.first || len(revoked) > 0 || len(added) > 0
	m.first = false
	if changed {
		why := fmt.Sprintf("generation %d", m.gen)
		if m.consumerProto {
			why = fmt.Sprintf("epoch %d", m.gen)
		}
		if len(revoked) > 0 {
			why += ", revoked " + proto.TPList(revoked)
		}
		if len(added) > 0 {
			why += ", added " + proto.TPList(added)
		}
		m.setAssignment(env, next, why)
	}
	if len(revoked) > 0 && m.cooperative {
		m.rejoin = true // the revoked partitions go to their new owners in a follow-up rebalance
	}
	if changed && m.consumerProto {
		m.scheduleHeartbeat(env, 0) // tell the coordinator at once (Kafka acknowledges a reconciliation)
	}
	m.unknown = append(m.unknown, added...)
	m.fetchCommitted(env)
	return true
}

// fetchCommitted asks the coordinator where the group left off in newly assigned
// partitions.
func (m *member) fetchCommitted(env *sim.Env) {
	if m.fetchCorr != 0 || len(m.unknown) == 0 {
		return
	}
	if !m.hasCoord {
		m.coordinatorLost(env, "no coordinator for OffsetFetch")
		return
	}
	m.fetchCorr = m.cl.newCorr()
	env.Send(m.coord, proto.OffsetFetch{CorrelationID: m.fetchCorr, Group: m.sub.Group, Partitions: slices.Clone(m.unknown),
		RequireStable: m.cfg.Isolation == proto.ReadCommitted})
	m.fetchTimer = env.SetTimer(m.cfg.RequestTimeout, sim.TimerTag{Kind: gtOffsets, Arg: m.fetchCorr})
}

func (m *member) onOffsets(env *sim.Env, r proto.OffsetFetchResponse) {
	if r.CorrelationID != m.fetchCorr {
		return
	}
	env.CancelTimer(m.fetchTimer)
	m.fetchCorr = 0
	if r.Error == proto.UnstableOffsetCommit {
		// A transaction's offsets wait for their marker: ask again soon, as Kafka's
		// ConsumerCoordinator does after retry.backoff.ms (KIP-447).
		m.fetchTimer = env.SetTimer(consumerRetryBackoff, sim.TimerTag{Kind: gtOffsetsRetry})
		return
	}
	if r.Error != proto.None {
		m.coordinatorLost(env, "OffsetFetch: "+r.Error.String())
		return
	}
	var found []StartOffset
	for _, o := range r.Offsets {
		if !slices.Contains(m.unknown, o.TP) {
			continue
		}
		m.unknown = slices.DeleteFunc(m.unknown, func(tp proto.TP) bool { return tp == o.TP })
		reset, ok := m.c.startAt(o.TP, o.Offset, o.LeaderEpoch)
		if !ok {
			continue
		}
		if o.Offset >= 0 {
			m.acked[o.TP] = o.Offset
		}
		if env.Tracing() {
			found = append(found, StartOffset{TP: o.TP, Offset: o.Offset, Reset: reset})
		}
	}
	sim.Record(env, CommittedOffsets{Group: m.sub.Group, Offsets: found})
	m.fetchCommitted(env)
}

func (m *member) scheduleHeartbeat(env *sim.Env, d time.Duration) {
	m.hbGen++
	env.SetTimer(d, sim.TimerTag{Kind: gtHeartbeat, Arg: m.hbGen})
}

func (m *member) heartbeat(env *sim.Env) {
	if m.state != msStable || !m.hasCoord || m.hbCorr != 0 {
		return
	}
	if m.consumerProto {
		m.sendConsumerHeartbeat(env)
		return
	}
	m.hbCorr = m.cl.newCorr()
	env.Send(m.coord, proto.Heartbeat{CorrelationID: m.hbCorr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID, Generation: m.gen})
	// A heartbeat still unanswered when the next is due counts as a broken connection to
	// the coordinator (mqsim has no connection resets; Kafka's client sees the disconnect).
	m.hbTimer = env.SetTimer(min(m.cfg.RequestTimeout, m.cfg.HeartbeatInterval), sim.TimerTag{Kind: gtHBTimeout, Arg: m.hbCorr})
}

func (m *member) onHeartbeat(env *sim.Env, r proto.HeartbeatResponse) {
	switch r.Error {
	case proto.None:
	case proto.RebalanceInProgress:
		if !m.rejoin {
			sim.Record(env, MustRejoin{Group: m.sub.Group, Member: m.memberID, Generation: m.gen})
		}
		m.rejoin = true
	case proto.UnknownMemberID, proto.IllegalGeneration:
		sim.Record(env, HeartbeatFenced{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Err: r.Error})
		m.loseMembership(fmt.Sprintf("%s in generation %d: %s", m.memberID, m.gen, r.Error), r.Error == proto.IllegalGeneration)
	case proto.FencedInstanceID:
		m.fence(env, r.Error)
	default:
		m.coordinatorLost(env, "heartbeat: "+r.Error.String())
	}
	if m.state == msStable {
		m.scheduleHeartbeat(env, m.cfg.HeartbeatInterval)
	}
}

// loseMembership records that the member is no longer one (fenced, expired, unknown to
// the coordinator): advance drops its partitions without committing and it joins again.
// An assignment received but not applied yet belongs to the lost generation and is void.
// keepID keeps the member id, which the coordinator still knows after an
// IllegalGeneration answer.
func (m *member) loseMembership(why string, keepID bool) {
	m.lostWhy = why
	if !keepID {
		m.memberID = ""
	}
	m.gen = -1
	m.lost = true
	m.hasPend, m.pending, m.precommitted = false, nil, nil
	m.state = msIdle
}

// fence ends the membership for good (FENCED_INSTANCE_ID: another instance has the
// group.instance.id; or a configuration the coordinator refuses).
func (m *member) fence(env *sim.Env, e proto.Error) {
	sim.Record(env, Fenced{Group: m.sub.Group, Err: e})
	m.fenced = e.String()
	m.stopRequests(env)
	m.state = msLeft
	env.CancelTimer(m.autoTimer)
	if len(m.c.owned()) > 0 {
		m.setAssignment(env, nil, "fenced")
	}
}

// timer handles the group timers. It reports whether the member went on (advance): then
// the consumer carries on with its queued commands.
func (m *member) timer(env *sim.Env, tag sim.TimerTag) bool {
	switch tag.Kind {
	case gtRequest:
		if tag.Arg != m.reqCorr {
			return false
		}
		m.reqCorr = 0
		switch m.state {
		case msFinding:
			m.cl.rotate()
			m.state = msIdle
			m.backoff(env)
		default:
			m.coordinatorLost(env, "no answer to "+m.state.String())
		}
	case gtRetry:
		m.retry = 0
		if m.state == msIdle || (m.state == msStable && m.rejoin) {
			m.advance(env)
		} else if m.state == msStable && !m.hasCoord {
			m.findCoordinator(env)
		}
		if m.state != msLeft && !m.hasCoord && m.reqCorr == 0 && m.retry == 0 && !m.busy() {
			m.findCoordinator(env)
		}
	case gtHeartbeat:
		if tag.Arg == m.hbGen {
			if m.leaderOf && !m.consumerProto {
				m.cl.refreshIfOlder(env, m.cfg.MetadataMaxAge)
			}
			m.heartbeat(env)
			if m.hbCorr == 0 && m.state == msStable {
				m.scheduleHeartbeat(env, m.heartbeatInterval())
			}
		}
	case gtHBTimeout:
		if tag.Arg == m.hbCorr {
			m.hbCorr = 0
			m.coordinatorLost(env, "heartbeat got no answer")
			m.scheduleHeartbeat(env, m.heartbeatInterval())
		}
	case gtCommit:
		for _, r := range m.commits {
			if r.corr == tag.Arg {
				m.endCommit(env, r, history.Info, "no answer")
				break
			}
		}
	case gtOffsets:
		if tag.Arg == m.fetchCorr {
			m.fetchCorr = 0
			m.coordinatorLost(env, "OffsetFetch got no answer")
		}
	case gtOffsetsRetry:
		m.fetchCommitted(env)
	case gtMaxPoll:
		if m.c.pollPhase() != noPoll && tag.Arg == m.pollSeq && !m.zombie && m.state != msLeft {
			m.maxPollExceeded(env)
		}
		return false
	case gtPollWait:
		if m.c.pollPhase() == phaseGroup && tag.Arg == m.pollSeq {
			m.c.pollWithoutPartitions(env, fmt.Sprintf("group %s: no partitions yet (%s)", m.sub.Group, m.state))
		}
		return false
	case gtAutoCommit:
		if m.state == msLeft {
			return false
		}
		m.autoTimer = env.SetTimer(m.cfg.AutoCommitInterval, sim.TimerTag{Kind: gtAutoCommit})
		if phase := m.c.pollPhase(); phase == noPoll || (phase != phaseProcess && phase != phaseCommit) {
			m.commitPositions(env, m.c.owned(), false, "auto-commit", nil)
		}
		return false
	}
	m.advance(env)
	return true
}

// maxPollExceeded: the application spent more than max.poll.interval.ms on one poll's
// records. The client leaves the group by itself (KIP-62); its partitions go to others
// while it still processes them, and its commit afterwards is fenced.
func (m *member) maxPollExceeded(env *sim.Env) {
	sim.Record(env, MaxPollExceeded{Group: m.sub.Group, Member: m.memberID, Interval: m.cfg.MaxPollInterval})
	if m.consumerProto {
		m.sendConsumerLeave(env, "consumer poll timeout has expired")
	} else if m.hasCoord && m.memberID != "" {
		env.Send(m.coord, proto.LeaveGroup{CorrelationID: m.cl.newCorr(), Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
			Reason: "consumer poll timeout has expired"})
	}
	env.CancelTimer(m.reqTimer)
	env.CancelTimer(m.hbTimer)
	m.reqCorr, m.hbCorr = 0, 0
	m.hbGen++
	m.zombie = true
	m.state = msIdle
}

// beforeProcessing runs when a poll hands records to the application: it starts the
// max.poll.interval.ms clock and, under commit-before-processing, commits first. It
// reports true when processing must wait for the commit.
func (m *member) beforeProcessing(env *sim.Env, n int, reads []history.PartitionRecords) bool {
	if n == 0 {
		return false
	}
	env.CancelTimer(m.maxPoll)
	m.maxPoll = env.SetTimer(m.cfg.MaxPollInterval, sim.TimerTag{Kind: gtMaxPoll, Arg: m.pollSeq})
	if env.Tracing() {
		sim.Record(env, Processing{Group: m.sub.Group, Records: n, Spans: spansOf(reads), Time: time.Duration(n) * m.cfg.ProcessingTime})
	}
	before := m.cfg.Commit == proto.CommitBefore || (m.cfg.Commit == proto.CommitAfter && m.sub.Bugs.CommitBeforeProcessing)
	if !before {
		return false
	}
	why := "before processing"
	if m.cfg.Commit == proto.CommitAfter {
		why = "before processing (commit-before-processing bug)"
	}
	m.c.setPollPhase(phaseCommit)
	if m.commitPositions(env, m.c.owned(), true, why, func(env *sim.Env, ok bool) {
		if m.c.pollPhase() == phaseCommit {
			m.c.startProcessing(env, n)
		}
	}) {
		return true
	}
	m.c.setPollPhase(phaseFetch)
	return false
}

// afterPoll runs when a poll completes (its records processed): commit after processing,
// the end of a zombie's membership, and whatever the group waited for.
func (m *member) afterPoll(env *sim.Env, n int) {
	env.CancelTimer(m.maxPoll)
	if n > 0 && m.cfg.Commit == proto.CommitAfter && !m.sub.Bugs.CommitBeforeProcessing {
		m.commitPositions(env, m.c.owned(), true, "after processing", func(env *sim.Env, ok bool) { m.endZombie(env) })
	}
	if !m.blocked() {
		m.endZombie(env)
	}
}

// endZombie ends a membership abandoned for max.poll.interval.ms once its last commit is
// answered: the partitions are lost, and the member joins again as a new one.
func (m *member) endZombie(env *sim.Env) {
	if !m.zombie || m.blocked() {
		m.advance(env)
		return
	}
	m.zombie = false
	m.loseMembership(fmt.Sprintf("%s left generation %d for max.poll.interval.ms", m.memberID, m.gen), false)
	m.advance(env)
}

// commitPositions commits the positions of parts that moved since their last acknowledged
// commit. It reports whether a commit was sent; then, if set, runs when the commit ends. A
// sync commit blocks the application (commitSync) until it ends.
func (m *member) commitPositions(env *sim.Env, parts []proto.TP, sync bool, why string, then func(env *sim.Env, ok bool)) bool {
	var offsets []proto.PartitionOffset
	for _, tp := range parts {
		off, ok := m.c.position(tp)
		if !ok {
			continue
		}
		if last, ok := m.acked[tp]; ok && last == off {
			continue
		}
		offsets = append(offsets, proto.PartitionOffset{TP: tp, Offset: off, LeaderEpoch: m.c.positionEpoch(tp)})
	}
	if len(offsets) == 0 {
		return false
	}
	r := &commitReq{corr: m.cl.newCorr(), offsets: offsets, sync: sync, member: m.memberID, gen: m.gen, then: then}
	if m.rec != nil {
		var hoff []history.PartitionOffset
		for _, o := range offsets {
			hoff = append(hoff, history.PartitionOffset{TopicPartition: htp(o.TP), Offset: o.Offset})
		}
		r.h = m.rec.InvokeCommit(m.now(env), m.process, m.sub.Group, hoff)
		r.recorded = true
	}
	m.commits = append(m.commits, r)
	sim.Record(env, CommitSent{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Offsets: offsets, Why: why})
	switch {
	case m.gen < 0:
		// Kafka's client refuses a commit once it knows it is out of the group.
		m.endCommit(env, r, history.Fail, "not in a generation of the group (CommitFailedException)")
		return true
	case !m.hasCoord:
		m.endCommit(env, r, history.Fail, "no coordinator known")
		return true
	}
	env.Send(m.coord, proto.OffsetCommit{CorrelationID: r.corr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		Generation: m.gen, Offsets: offsets})
	r.timer = env.SetTimer(m.cfg.RequestTimeout, sim.TimerTag{Kind: gtCommit, Arg: r.corr})
	return true
}

func (m *member) onCommitted(env *sim.Env, resp proto.OffsetCommitResponse) {
	for _, r := range m.commits {
		if r.corr != resp.CorrelationID {
			continue
		}
		switch resp.Error {
		case proto.None:
			for _, o := range r.offsets {
				m.acked[o.TP] = o.Offset
			}
			m.endCommit(env, r, history.Ok, "")
		case proto.IllegalGeneration, proto.UnknownMemberID, proto.FencedInstanceID, proto.RebalanceInProgress:
			sim.Record(env, CommitFailed{Group: m.sub.Group, Offsets: r.offsets, Member: r.member, Generation: r.gen, Err: resp.Error})
			m.endCommit(env, r, history.Fail, resp.Error.String())
			if r.member == m.memberID && r.gen == m.gen && resp.Error != proto.RebalanceInProgress && !m.zombie && m.state != msLeft {
				m.loseMembership(fmt.Sprintf("commit of %s in generation %d: %s", m.memberID, m.gen, resp.Error), resp.Error != proto.UnknownMemberID)
				if resp.Error == proto.FencedInstanceID {
					m.fence(env, resp.Error)
				}
			}
		case proto.StaleMemberEpoch:
			// The member moved to a newer epoch while the commit was on its way: the
			// commit fails, the membership stays (ConsumerGroup.validateOffsetCommit).
			sim.Record(env, CommitFailed{Group: m.sub.Group, Offsets: r.offsets, Member: r.member, Generation: r.gen, Err: resp.Error})
			m.endCommit(env, r, history.Fail, resp.Error.String())
		case proto.CoordinatorNotAvailable:
			m.endCommit(env, r, history.Fail, resp.Error.String())
			m.coordinatorLost(env, "commit: "+resp.Error.String())
		default:
			// NOT_COORDINATOR after the append, REQUEST_TIMED_OUT: the commit may yet
			// be stored.
			m.endCommit(env, r, history.Info, resp.Error.String())
			if proto.CoordinatorMoved(resp.Error) {
				m.coordinatorLost(env, "commit: "+resp.Error.String())
			}
		}
		return
	}
}

func (m *member) endCommit(env *sim.Env, r *commitReq, t history.Type, why string) {
	i := slices.Index(m.commits, r)
	if i < 0 {
		return
	}
	m.commits = slices.Delete(m.commits, i, i+1)
	env.CancelTimer(r.timer)
	if r.recorded && m.rec != nil {
		now := m.now(env)
		switch t {
		case history.Ok:
			m.rec.Ok(now, r.h, history.Result{})
		case history.Fail:
			m.rec.Fail(now, r.h, history.Result{Error: why})
		default:
			m.rec.Info(now, r.h, history.Result{Error: why})
		}
	}
	if r.then != nil {
		r.then(env, t == history.Ok)
	}
}

// Commit command.
func (m *member) commitNow(env *sim.Env) {
	if m.state == msLeft {
		sim.Record(env, NotMember{})
		return
	}
	m.commitPositions(env, m.c.owned(), true, "on request", func(env *sim.Env, ok bool) { m.advance(env) })
}

// subsetTP reports whether every partition of a is in b.
func subsetTP(a, b []proto.TP) bool {
	for _, tp := range a {
		if !slices.Contains(b, tp) {
			return false
		}
	}
	return true
}
