package client

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/group"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The consumer as a member of a group (KafkaConsumer.subscribe): it finds the group's
// coordinator, joins, lets the group leader (one of the members) compute the assignment,
// heartbeats, commits its positions, and rebalances when told to.
//
// mqsim's application is always in its poll loop: between the polls a scenario asks for it
// takes part in rebalances and auto-commits at once, as a Kafka application calling poll()
// in a loop would. What it never does is take part while it processes records: a rebalance
// waits for the poll in progress to end, as Kafka's does for the next poll() call, and
// max.poll.interval.ms bounds that processing (KIP-62: the member then leaves the group by
// itself). The records of a poll count as processed when the poll completes.
//
// The history gets a subscribe op at Subscribe, an assign op (with the group's name) each
// time the member's partitions change (an eager rebalance shows as an empty assignment
// followed by the new one), a poll op per poll, and a commit op per commit. A commit is
// sent with the member id and generation the records were processed under, so that the
// coordinator's generation fencing is what rejects a zombie's commit (Kafka's client
// refuses it already, with the same CommitFailedException).
//
// Simplifications, each in one line: one assignor per member (Kafka sends a list); commits
// are not retried; auto-commit skips partitions whose position has not moved since the last
// acknowledged commit; a member that cannot find its coordinator keeps trying every
// retry.backoff.ms without bound; a heartbeat unanswered when the next one is due counts
// as a lost connection to the coordinator (mqsim has no connection resets).

// Subscribe is the scenario's command to a Consumer: join Group and consume the partitions
// it assigns from the topics. It replaces an earlier subscription.
type Subscribe struct {
	Group  string
	Topics []string
	// InstanceID is group.instance.id: a static member (KIP-345).
	InstanceID string
	// Config, when set, replaces the consumer's configuration (group settings, commit mode).
	Config *proto.ConsumerConfig
	// Bugs are the planted client-side bugs (commit-before-processing, no-revoke-first).
	Bugs proto.Bugs
	// PollEvery, when positive, is the application's poll loop: a poll every PollEvery (or
	// as soon as the previous one ends), from the subscription on, restarts included.
	PollEvery time.Duration
}

func (s Subscribe) String() string {
	inst := ""
	if s.InstanceID != "" {
		inst = " instance " + s.InstanceID
	}
	return fmt.Sprintf("subscribe %s to %s%s", s.Group, strings.Join(s.Topics, ","), inst)
}

// Leave is the scenario's command for a graceful close: commit (under auto-commit), leave
// the group (dynamic members only; a static member leaves nothing behind, KIP-345) and
// stop consuming.
type Leave struct{ Reason string }

func (Leave) String() string { return "leave" }

// Commit is the scenario's command for commitSync of the current positions.
type Commit struct{}

func (Commit) String() string { return "commit" }

// leaderMetadataTries bounds how often a group leader asks for metadata naming a
// subscribed topic before it assigns that topic nothing.
const leaderMetadataTries = 5

// Group timers.
const (
	gtRequest    = 100 + iota // a FindCoordinator, JoinGroup, SyncGroup or LeaveGroup got no answer; Arg = corr
	gtRetry                   // the backoff before finding the coordinator or joining again is over
	gtHeartbeat               // the next heartbeat is due; Arg = heartbeat generation
	gtHBTimeout               // a heartbeat got no answer; Arg = corr
	gtCommit                  // a commit got no answer; Arg = corr
	gtOffsets                 // an OffsetFetch got no answer; Arg = corr
	gtMaxPoll                 // processing exceeded max.poll.interval.ms; Arg = poll number
	gtPollWait                // a poll waited too long for the group; Arg = poll number
	gtAutoCommit              // auto.commit.interval.ms has passed
)

// phaseGroup: the poll waits for the member to have its partitions (a rebalance).
// phaseCommit: the poll waits for its commit before processing (commit before processing).
const (
	phaseGroup = 100 + iota
	phaseCommit
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

// member is a Consumer's group membership.
type member struct {
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
}

// MemberStatus is a group member's state, for views and invariants.
type MemberStatus struct {
	Group      string
	InstanceID string
	MemberID   string
	Generation int32
	State      string
	// Owned are the partitions the consumer holds now (it may still be revoking some).
	Owned      []proto.TP
	Rebalances int // assignments applied
	Fenced     string
	// Settled: stable in its generation, with its assignment applied and its starting
	// offsets known.
	Settled bool
}

// Member reports the consumer's group membership; false in assign mode.
func (c *Consumer) Member() (MemberStatus, bool) {
	m := c.grp
	if m == nil {
		return MemberStatus{}, false
	}
	return MemberStatus{Group: m.sub.Group, InstanceID: m.sub.InstanceID, MemberID: m.memberID, Generation: m.gen,
		State: m.state.String(), Owned: slices.Clone(c.assigned), Rebalances: m.rebalances, Fenced: m.fenced,
		Settled: m.state == msStable && !m.rejoin && !m.hasPend && !m.first && !m.lost && !m.zombie && len(m.unknown) == 0}, true
}

// Ownership is the group of a subscribed consumer, the partitions it holds, and the
// generation it holds them under: that of the last assignment it received (it may not have
// applied it yet: a partition it must give up is still held until the revocation), -1 once
// it knows it lost its membership. It does not copy: read owned, never keep it. ok is false
// in assign mode.
func (c *Consumer) Ownership() (group string, gen int32, owned []proto.TP, ok bool) {
	m := c.grp
	if m == nil {
		return "", 0, nil, false
	}
	gen = m.synced
	if m.gen < 0 || m.lost {
		gen = -1
	}
	return m.sub.Group, gen, c.assigned, true
}

// Resubscribe makes a consumer built for a restart subscribe as soon as it starts: the
// application subscribes again at startup.
func (c *Consumer) Resubscribe(s Subscribe) { c.resub = &s }

func (c *Consumer) group() string {
	if c.grp == nil {
		return ""
	}
	return c.grp.sub.Group
}

// --- commands ---

func (c *Consumer) subscribe(env *sim.Env, s Subscribe) {
	if s.Config != nil {
		c.cfg = *s.Config
	}
	s.Topics = c.withRetryTopics(s.Topics) // retry.go: a non-blocking retry policy consumes its retry topics too
	a, err := group.AssignorByName(c.cfg.Assignor)
	if err != nil {
		sim.Record(env, SubscribeFailed{Err: err})
		return
	}
	if c.grp != nil && c.grp.state != msLeft {
		c.finishLeave(env, "resubscribing")
	}
	if len(c.assigned) > 0 {
		c.setAssignment(env, nil, "")
	}
	m := &member{sub: s, assignor: a, cooperative: c.cfg.Protocol == proto.ProtocolCooperative, gen: -1, synced: -1,
		acked: map[proto.TP]int64{}, first: true}
	m.sub.Topics = slices.Clone(s.Topics)
	slices.Sort(m.sub.Topics)
	c.grp = m
	if c.rec != nil {
		h := c.rec.InvokeSubscribe(c.now(env), c.process, s.Group, m.sub.Topics)
		c.rec.Ok(c.now(env), h, history.Result{})
	}
	if env.Tracing() {
		sim.Record(env, Subscribed{Group: s.Group, Topics: slices.Clone(s.Topics), InstanceID: s.InstanceID, Assignor: c.cfg.Assignor, Protocol: c.cfg.Protocol, Commit: c.cfg.Commit})
	}
	c.started = true
	c.cl.refresh(env)
	if c.cfg.Commit == proto.CommitAuto {
		m.autoTimer = env.SetTimer(c.cfg.AutoCommitInterval, sim.TimerTag{Kind: gtAutoCommit})
	}
	if s.PollEvery > 0 {
		c.cmds = append(c.cmds, PollLoop{Every: s.PollEvery, Count: 1 << 40})
	}
	c.advance(env)
}

func staticText(inst string) string {
	if inst == "" {
		return ""
	}
	return ", static"
}

// leave closes the membership: commit under auto-commit, LeaveGroup unless static.
func (c *Consumer) leave(env *sim.Env, why string) {
	m := c.grp
	if m == nil || m.state == msLeft {
		return
	}
	if c.cfg.Commit == proto.CommitAuto && c.commitPositions(env, c.assigned, true, "on close", func(env *sim.Env, ok bool) { c.finishLeave(env, why) }) {
		return
	}
	c.finishLeave(env, why)
}

func (c *Consumer) finishLeave(env *sim.Env, why string) {
	m := c.grp
	if m.sub.InstanceID == "" && m.memberID != "" && m.hasCoord {
		env.Send(m.coord, proto.LeaveGroup{CorrelationID: c.cl.newCorr(), Group: m.sub.Group, MemberID: m.memberID, Reason: why})
		sim.Record(env, Left{Group: m.sub.Group, Member: m.memberID, Why: why})
	} else {
		sim.Record(env, Left{Group: m.sub.Group, Member: m.memberID, Why: why, Static: true})
	}
	c.stopRequests(env)
	m.state = msLeft
	env.CancelTimer(m.autoTimer)
	c.loopGen++ // the application's poll loop ends with it
	c.loopLeft = 0
	if len(c.assigned) > 0 {
		c.setAssignment(env, nil, "closed")
	}
}

func (c *Consumer) stopRequests(env *sim.Env) {
	m := c.grp
	env.CancelTimer(m.reqTimer)
	env.CancelTimer(m.retry)
	env.CancelTimer(m.hbTimer)
	env.CancelTimer(m.fetchTimer)
	m.reqCorr, m.hbCorr, m.fetchCorr, m.retry = 0, 0, 0, 0
	m.hbGen++
}

// blocked reports whether the application waits in a synchronous commit.
func (c *Consumer) blocked() bool {
	if c.grp == nil {
		return false
	}
	for _, r := range c.grp.commits {
		if r.sync {
			return true
		}
	}
	return false
}

// busy reports whether the application is inside a poll that a rebalance must not
// interrupt.
func (c *Consumer) busy() bool {
	return (c.poll != nil && c.poll.phase != phaseGroup) || c.blocked()
}

// ready reports whether a poll may fetch: the member holds its partitions and knows where
// to start in each.
func (c *Consumer) ready() bool {
	m := c.grp
	if m == nil || m.state == msLeft {
		return true
	}
	if m.lost || m.hasPend || len(m.unknown) > 0 || m.first || m.zombie {
		return false
	}
	// The cooperative protocol keeps consuming owned partitions during a rebalance.
	return m.state == msStable && !m.rejoin || m.cooperative && len(c.assigned) > 0
}

// advance does whatever the membership needs next, if the application lets it.
func (c *Consumer) advance(env *sim.Env) {
	m := c.grp
	if m == nil || m.state == msLeft || c.busy() {
		return
	}
	if m.lost {
		m.lost = false
		if len(c.assigned) > 0 {
			if env.Tracing() {
				sim.Record(env, PartitionsLost{Group: m.sub.Group, Why: m.lostWhy, Partitions: slices.Clone(c.assigned)})
			}
			c.setAssignment(env, nil, "lost")
		}
		m.rejoin = true
	}
	if m.hasPend {
		if !c.applyAssignment(env) {
			return // waits for the commit of revoked partitions
		}
	}
	if m.state == msIdle || m.state == msStable && m.rejoin {
		c.startJoin(env)
	}
	if c.poll != nil && c.poll.phase == phaseGroup && c.ready() {
		c.poll.phase = phaseMeta
		env.CancelTimer(c.poll.metaT)
		c.continuePoll(env)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(no member id)"
	}
	return s
}

// startJoin finds the coordinator if needed, then (re)joins. Under the eager protocol the
// member first commits (auto-commit) and revokes everything.
func (c *Consumer) startJoin(env *sim.Env) {
	m := c.grp
	if m.reqCorr != 0 || m.retry != 0 {
		return
	}
	if !m.hasCoord {
		c.findCoordinator(env)
		return
	}
	if !m.cooperative && len(c.assigned) > 0 {
		revoke := slices.Clone(c.assigned)
		if c.cfg.Commit == proto.CommitAuto && c.commitPositions(env, revoke, true, "before revoking", func(env *sim.Env, ok bool) { c.advance(env) }) {
			m.state = msIdle
			m.rejoin = true
			c.setAssignment(env, nil, "revoked (eager)")
			return
		}
		c.setAssignment(env, nil, "revoked (eager)")
	}
	c.sendJoin(env)
}

func (c *Consumer) findCoordinator(env *sim.Env) {
	m := c.grp
	if len(c.cl.brokers) == 0 {
		return
	}
	m.state = msFinding
	if m.hasLost && len(c.cl.brokers) > 1 && c.cl.brokers[c.cl.next] == m.lastLost {
		c.cl.rotate() // not the broker that just stopped answering as coordinator
	}
	to := c.cl.brokers[c.cl.next]
	m.reqCorr = c.cl.newCorr()
	env.Send(to, proto.FindCoordinator{CorrelationID: m.reqCorr, Group: m.sub.Group})
	m.reqTimer = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

func (c *Consumer) sendJoin(env *sim.Env) {
	m := c.grp
	m.state = msJoining
	m.rejoin = false
	owned := []proto.TP(nil)
	if m.cooperative && !m.lost && m.gen >= 0 {
		// A member that lost its membership (fenced, expired, unknown) claims nothing:
		// its partitions may already belong to someone in a newer generation, and it
		// drops them without committing (Kafka's onPartitionsLost).
		owned = slices.Clone(c.assigned)
	}
	m.reqCorr = c.cl.newCorr()
	env.Send(m.coord, proto.JoinGroup{CorrelationID: m.reqCorr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		ClientID: env.Name(), SessionTimeout: c.cfg.SessionTimeout, RebalanceTimeout: c.cfg.EffectiveRebalanceTimeout(),
		Assignor: c.cfg.Assignor, Subscription: proto.Subscription{Topics: slices.Clone(m.sub.Topics), Owned: owned}})
	// Kafka's JoinGroup may wait a whole rebalance timeout at the coordinator.
	m.reqTimer = env.SetTimer(c.cfg.EffectiveRebalanceTimeout()+5*time.Second, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

// backoff retries the join (or the coordinator lookup) after retry.backoff.ms.
func (c *Consumer) backoff(env *sim.Env) {
	m := c.grp
	m.reqCorr = 0
	env.CancelTimer(m.reqTimer)
	if m.retry == 0 {
		m.retry = env.SetTimer(consumerRetryBackoff, sim.TimerTag{Kind: gtRetry})
	}
}

// coordinatorLost forgets the coordinator; the member finds it again and carries on.
func (c *Consumer) coordinatorLost(env *sim.Env, why string) {
	m := c.grp
	if m.hasCoord {
		sim.Record(env, CoordinatorLost{Group: m.sub.Group, Coordinator: env.NameOf(m.coord), Why: why})
		m.lastLost, m.hasLost = m.coord, true
	}
	m.hasCoord = false
	if m.fetchCorr != 0 {
		env.CancelTimer(m.fetchTimer)
		m.fetchCorr = 0 // asked again of the next coordinator
	}
	if m.state != msStable {
		m.state = msIdle
	}
	c.backoff(env)
}

// --- responses ---

func (c *Consumer) groupRecv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	m := c.grp
	if m == nil {
		return
	}
	switch r := msg.(type) {
	case proto.FindCoordinatorResponse:
		if r.CorrelationID != m.reqCorr || m.state != msFinding {
			return
		}
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
		if r.Error != proto.None {
			c.cl.rotate()
			m.state = msIdle
			c.backoff(env)
			return
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
			c.scheduleHeartbeat(env, 0)
			c.fetchCommitted(env)
		} else {
			m.state = msIdle
			c.startJoin(env)
		}
	case proto.JoinGroupResponse:
		if r.CorrelationID != m.reqCorr || m.state != msJoining {
			return
		}
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
		c.onJoined(env, r)
	case proto.SyncGroupResponse:
		if r.CorrelationID != m.reqCorr || m.state != msSyncing {
			return
		}
		env.CancelTimer(m.reqTimer)
		m.reqCorr = 0
		c.onSynced(env, r)
	case proto.HeartbeatResponse:
		if r.CorrelationID != m.hbCorr {
			return
		}
		env.CancelTimer(m.hbTimer)
		m.hbCorr = 0
		c.onHeartbeat(env, r)
	case proto.OffsetCommitResponse:
		c.onCommitted(env, r)
	case proto.OffsetFetchResponse:
		c.onOffsets(env, r)
	case proto.LeaveGroupResponse:
	}
	c.advance(env)
	c.run(env)
}

func (c *Consumer) onJoined(env *sim.Env, r proto.JoinGroupResponse) {
	m := c.grp
	switch r.Error {
	case proto.None:
	case proto.MemberIDRequired:
		m.memberID = r.MemberID
		c.sendJoin(env)
		return
	case proto.UnknownMemberID, proto.IllegalGeneration:
		sim.Record(env, JoinError{Group: m.sub.Group, Err: r.Error})
		// The membership is gone, and with it the partitions: they are dropped before the
		// next join, as after a failed heartbeat or sync.
		c.loseMembership(fmt.Sprintf("join of %s in generation %d: %s", m.memberID, m.gen, r.Error), false)
		c.backoff(env)
		return
	case proto.RebalanceInProgress:
		m.state = msIdle
		c.backoff(env)
		return
	case proto.FencedInstanceID:
		c.fence(env, r.Error)
		return
	case proto.InconsistentGroupProtocol, proto.InvalidSessionTimeout:
		sim.Record(env, CannotJoin{Group: m.sub.Group, Err: r.Error})
		c.fence(env, r.Error)
		return
	default:
		c.coordinatorLost(env, r.Error.String())
		return
	}
	m.memberID, m.gen = r.MemberID, r.Generation
	m.leaderOf = r.Leader == r.MemberID
	m.state = msSyncing
	sim.Record(env, Joined{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Leader: r.Leader})
	if m.leaderOf && !r.SkipAssignment {
		jr := r
		m.join = &jr
		c.leaderAssign(env)
		return
	}
	c.sendSync(env, nil)
}

// leaderAssign runs the assignor as the group leader, once the metadata names every
// subscribed topic's partitions.
func (c *Consumer) leaderAssign(env *sim.Env) {
	m := c.grp
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
	missing := !c.cl.known
	for _, t := range topics {
		missing = missing || c.cl.partitions(t) == 0
	}
	if missing && m.metaTries < leaderMetadataTries {
		// The metadata may be stale (a restarted broker's is empty): ask again, a few
		// times, before assigning a topic nothing. leaderAssign runs again when it comes.
		m.metaTries++
		c.cl.refresh(env)
		return
	}
	m.metaTries = 0
	for _, t := range topics {
		n := c.cl.partitions(t)
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
	c.sendSync(env, as)
}

func (c *Consumer) sendSync(env *sim.Env, as []proto.MemberAssignment) {
	m := c.grp
	m.state = msSyncing
	m.reqCorr = c.cl.newCorr()
	env.Send(m.coord, proto.SyncGroup{CorrelationID: m.reqCorr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		Generation: m.gen, Assignments: as})
	m.reqTimer = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: gtRequest, Arg: m.reqCorr})
}

func (c *Consumer) onSynced(env *sim.Env, r proto.SyncGroupResponse) {
	m := c.grp
	switch r.Error {
	case proto.None:
	case proto.RebalanceInProgress:
		m.state = msIdle
		c.backoff(env)
		return
	case proto.UnknownMemberID, proto.IllegalGeneration:
		c.loseMembership(fmt.Sprintf("sync of %s in generation %d: %s", m.memberID, m.gen, r.Error), false)
		c.backoff(env)
		return
	case proto.FencedInstanceID:
		c.fence(env, r.Error)
		return
	default:
		c.coordinatorLost(env, r.Error.String())
		return
	}
	m.pending, m.hasPend = slices.Clone(r.Partitions), true
	m.synced = r.Generation
	m.state = msStable
	c.scheduleHeartbeat(env, c.cfg.HeartbeatInterval)
}

// applyAssignment takes the pending assignment: revoke what is gone (committing it first
// under auto-commit), add what is new (its committed offsets fetched next). Under the
// cooperative protocol, revoking anything calls for a follow-up rebalance. It reports false
// while it waits for the commit.
func (c *Consumer) applyAssignment(env *sim.Env) bool {
	m := c.grp
	next := m.pending
	slices.SortFunc(next, proto.CompareTP)
	var revoked []proto.TP
	for _, tp := range c.assigned {
		if !slices.Contains(next, tp) {
			revoked = append(revoked, tp)
		}
	}
	if len(revoked) > 0 && c.cfg.Commit == proto.CommitAuto {
		if c.commitPositions(env, revoked, true, "before revoking", func(env *sim.Env, ok bool) { c.advance(env) }) {
			return false
		}
	}
	m.hasPend, m.pending = false, nil
	var added []proto.TP
	for _, tp := range next {
		if !slices.Contains(c.assigned, tp) {
			added = append(added, tp)
		}
	}
	m.rebalances++
	changed := m.first || len(revoked) > 0 || len(added) > 0
	m.first = false
	if changed {
		why := fmt.Sprintf("generation %d", m.gen)
		if len(revoked) > 0 {
			why += ", revoked " + proto.TPList(revoked)
		}
		if len(added) > 0 {
			why += ", added " + proto.TPList(added)
		}
		c.setAssignment(env, next, why)
	}
	if len(revoked) > 0 && m.cooperative {
		m.rejoin = true // the revoked partitions go to their new owners in a follow-up rebalance
	}
	m.unknown = append(m.unknown, added...)
	c.fetchCommitted(env)
	return true
}

// setAssignment replaces the consumer's partitions and records the assign op.
func (c *Consumer) setAssignment(env *sim.Env, parts []proto.TP, why string) {
	m := c.grp
	pos := map[proto.TP]*position{}
	var hparts []history.TopicPartition
	for _, tp := range parts {
		hparts = append(hparts, htp(tp))
		if old := c.pos[tp]; old != nil {
			pos[tp] = old
			continue
		}
		pos[tp] = &position{offset: -1, epoch: wal.UndefinedEpoch, reset: c.cfg.AutoOffsetReset}
	}
	c.assigned, c.pos = slices.Clone(parts), pos
	if m != nil {
		m.unknown = slices.DeleteFunc(m.unknown, func(tp proto.TP) bool { return !slices.Contains(parts, tp) })
		for tp := range m.acked {
			if !slices.Contains(parts, tp) {
				delete(m.acked, tp) // ranging only to delete: order does not matter
			}
		}
	}
	if c.rec != nil {
		h := c.rec.InvokeAssign(c.now(env), c.process, c.group(), hparts, false)
		c.rec.Ok(c.now(env), h, history.Result{})
	}
	if env.Tracing() {
		sim.Record(env, PartitionsAssigned{Group: c.group(), Partitions: slices.Clone(parts), Why: why})
	}
}

// fetchCommitted asks the coordinator where the group left off in newly assigned
// partitions.
func (c *Consumer) fetchCommitted(env *sim.Env) {
	m := c.grp
	if m.fetchCorr != 0 || len(m.unknown) == 0 {
		return
	}
	if !m.hasCoord {
		c.coordinatorLost(env, "no coordinator for OffsetFetch")
		return
	}
	m.fetchCorr = c.cl.newCorr()
	env.Send(m.coord, proto.OffsetFetch{CorrelationID: m.fetchCorr, Group: m.sub.Group, Partitions: slices.Clone(m.unknown)})
	m.fetchTimer = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: gtOffsets, Arg: m.fetchCorr})
}

func (c *Consumer) onOffsets(env *sim.Env, r proto.OffsetFetchResponse) {
	m := c.grp
	if r.CorrelationID != m.fetchCorr {
		return
	}
	env.CancelTimer(m.fetchTimer)
	m.fetchCorr = 0
	if r.Error != proto.None {
		c.coordinatorLost(env, "OffsetFetch: "+r.Error.String())
		return
	}
	var found []StartOffset
	for _, o := range r.Offsets {
		if !slices.Contains(m.unknown, o.TP) {
			continue
		}
		m.unknown = slices.DeleteFunc(m.unknown, func(tp proto.TP) bool { return tp == o.TP })
		p := c.pos[o.TP]
		if p == nil {
			continue
		}
		if o.Offset >= 0 {
			p.offset, p.epoch = o.Offset, wal.UndefinedEpoch
			m.acked[o.TP] = o.Offset
		}
		if env.Tracing() {
			found = append(found, StartOffset{TP: o.TP, Offset: o.Offset, Reset: p.reset})
		}
	}
	sim.Record(env, CommittedOffsets{Group: m.sub.Group, Offsets: found})
	c.fetchCommitted(env)
}

func (c *Consumer) scheduleHeartbeat(env *sim.Env, d time.Duration) {
	m := c.grp
	m.hbGen++
	env.SetTimer(d, sim.TimerTag{Kind: gtHeartbeat, Arg: m.hbGen})
}

func (c *Consumer) heartbeat(env *sim.Env) {
	m := c.grp
	if m.state != msStable || !m.hasCoord || m.hbCorr != 0 {
		return
	}
	m.hbCorr = c.cl.newCorr()
	env.Send(m.coord, proto.Heartbeat{CorrelationID: m.hbCorr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID, Generation: m.gen})
	// A heartbeat still unanswered when the next is due counts as a broken connection to
	// the coordinator (mqsim has no connection resets; Kafka's client sees the disconnect).
	m.hbTimer = env.SetTimer(min(c.cfg.RequestTimeout, c.cfg.HeartbeatInterval), sim.TimerTag{Kind: gtHBTimeout, Arg: m.hbCorr})
}

func (c *Consumer) onHeartbeat(env *sim.Env, r proto.HeartbeatResponse) {
	m := c.grp
	switch r.Error {
	case proto.None:
	case proto.RebalanceInProgress:
		if !m.rejoin {
			sim.Record(env, MustRejoin{Group: m.sub.Group, Member: m.memberID, Generation: m.gen})
		}
		m.rejoin = true
	case proto.UnknownMemberID, proto.IllegalGeneration:
		sim.Record(env, HeartbeatFenced{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Err: r.Error})
		c.loseMembership(fmt.Sprintf("%s in generation %d: %s", m.memberID, m.gen, r.Error), r.Error == proto.IllegalGeneration)
	case proto.FencedInstanceID:
		c.fence(env, r.Error)
	default:
		c.coordinatorLost(env, "heartbeat: "+r.Error.String())
	}
	if m.state == msStable {
		c.scheduleHeartbeat(env, c.cfg.HeartbeatInterval)
	}
}

// loseMembership records that the member is no longer one (fenced, expired, unknown to
// the coordinator): advance drops its partitions without committing and it joins again.
// An assignment received but not applied yet belongs to the lost generation and is void.
// keepID keeps the member id, which the coordinator still knows after an
// IllegalGeneration answer.
func (c *Consumer) loseMembership(why string, keepID bool) {
	m := c.grp
	m.lostWhy = why
	if !keepID {
		m.memberID = ""
	}
	m.gen = -1
	m.lost = true
	m.hasPend, m.pending = false, nil
	m.state = msIdle
}

// fence ends the membership for good (FENCED_INSTANCE_ID: another instance has the
// group.instance.id; or a configuration the coordinator refuses).
func (c *Consumer) fence(env *sim.Env, e proto.Error) {
	m := c.grp
	sim.Record(env, Fenced{Group: m.sub.Group, Err: e})
	m.fenced = e.String()
	c.stopRequests(env)
	m.state = msLeft
	env.CancelTimer(m.autoTimer)
	if len(c.assigned) > 0 {
		c.setAssignment(env, nil, "fenced")
	}
}

// --- timers ---

func (c *Consumer) groupTimer(env *sim.Env, tag sim.TimerTag) {
	m := c.grp
	if m == nil {
		return
	}
	switch tag.Kind {
	case gtRequest:
		if tag.Arg != m.reqCorr {
			return
		}
		m.reqCorr = 0
		switch m.state {
		case msFinding:
			c.cl.rotate()
			m.state = msIdle
			c.backoff(env)
		default:
			c.coordinatorLost(env, "no answer to "+m.state.String())
		}
	case gtRetry:
		m.retry = 0
		if m.state == msIdle || (m.state == msStable && m.rejoin) {
			c.advance(env)
		} else if m.state == msStable && !m.hasCoord {
			c.findCoordinator(env)
		}
		if m.state != msLeft && !m.hasCoord && m.reqCorr == 0 && m.retry == 0 && !c.busy() {
			c.findCoordinator(env)
		}
	case gtHeartbeat:
		if tag.Arg == m.hbGen {
			c.heartbeat(env)
			if m.hbCorr == 0 && m.state == msStable {
				c.scheduleHeartbeat(env, c.cfg.HeartbeatInterval)
			}
		}
	case gtHBTimeout:
		if tag.Arg == m.hbCorr {
			m.hbCorr = 0
			c.coordinatorLost(env, "heartbeat got no answer")
			c.scheduleHeartbeat(env, c.cfg.HeartbeatInterval)
		}
	case gtCommit:
		for _, r := range m.commits {
			if r.corr == tag.Arg {
				c.endCommit(env, r, history.Info, "no answer")
				break
			}
		}
	case gtOffsets:
		if tag.Arg == m.fetchCorr {
			m.fetchCorr = 0
			c.coordinatorLost(env, "OffsetFetch got no answer")
		}
	case gtMaxPoll:
		if c.poll != nil && tag.Arg == m.pollSeq && !m.zombie && m.state != msLeft {
			c.maxPollExceeded(env)
		}
		return
	case gtPollWait:
		if c.poll != nil && c.poll.phase == phaseGroup && tag.Arg == m.pollSeq {
			c.poll.errs = append(c.poll.errs, fmt.Sprintf("group %s: no partitions yet (%s)", m.sub.Group, m.state))
			c.poll.phase = phaseFetch
			c.gather(env)
		}
		return
	case gtAutoCommit:
		if m.state == msLeft {
			return
		}
		m.autoTimer = env.SetTimer(c.cfg.AutoCommitInterval, sim.TimerTag{Kind: gtAutoCommit})
		if c.poll == nil || (c.poll.phase != phaseProcess && c.poll.phase != phaseCommit) {
			c.commitPositions(env, c.assigned, false, "auto-commit", nil)
		}
		return
	}
	c.advance(env)
	c.run(env)
}

// maxPollExceeded: the application spent more than max.poll.interval.ms on one poll's
// records. The client leaves the group by itself (KIP-62); its partitions go to others
// while it still processes them, and its commit afterwards is fenced.
func (c *Consumer) maxPollExceeded(env *sim.Env) {
	m := c.grp
	sim.Record(env, MaxPollExceeded{Group: m.sub.Group, Member: m.memberID, Interval: c.cfg.MaxPollInterval})
	if m.hasCoord && m.memberID != "" {
		env.Send(m.coord, proto.LeaveGroup{CorrelationID: c.cl.newCorr(), Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
			Reason: "consumer poll timeout has expired"})
	}
	env.CancelTimer(m.reqTimer)
	env.CancelTimer(m.hbTimer)
	m.reqCorr, m.hbCorr = 0, 0
	m.hbGen++
	m.zombie = true
	m.state = msIdle
}

// --- polls ---

// groupPoll starts a group member's poll: it waits for the member's partitions if a
// rebalance is under way. It reports false when the poll should go on as usual.
func (c *Consumer) groupPoll(env *sim.Env) bool {
	m := c.grp
	if m == nil {
		return false
	}
	m.pollSeq++
	if m.state == msLeft {
		c.poll.fail = fmt.Sprintf("not a member of %s (left)", m.sub.Group)
		c.gather(env)
		return true
	}
	if c.ready() {
		return false
	}
	c.poll.phase = phaseGroup
	c.poll.metaT = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: gtPollWait, Arg: m.pollSeq})
	c.advance(env)
	return true
}

// continuePoll goes on with a poll that waited for the group.
func (c *Consumer) continuePoll(env *sim.Env) {
	if len(c.assigned) == 0 {
		c.gather(env)
		return
	}
	c.fetchWhenKnown(env)
}

// beforeProcessing runs when a poll hands records to the application: it starts the
// max.poll.interval.ms clock and, under commit-before-processing, commits first. It
// reports true when processing must wait for the commit.
func (c *Consumer) beforeProcessing(env *sim.Env, n int) bool {
	m := c.grp
	if m == nil || n == 0 {
		return false
	}
	env.CancelTimer(m.maxPoll)
	m.maxPoll = env.SetTimer(c.cfg.MaxPollInterval, sim.TimerTag{Kind: gtMaxPoll, Arg: m.pollSeq})
	if env.Tracing() {
		sim.Record(env, Processing{Group: m.sub.Group, Records: n, Spans: spansOf(c.poll.reads), Time: time.Duration(n) * c.cfg.ProcessingTime})
	}
	before := c.cfg.Commit == proto.CommitBefore || (c.cfg.Commit == proto.CommitAfter && m.sub.Bugs.CommitBeforeProcessing)
	if !before {
		return false
	}
	why := "before processing"
	if c.cfg.Commit == proto.CommitAfter {
		why = "before processing (commit-before-processing bug)"
	}
	c.poll.phase = phaseCommit
	if c.commitPositions(env, c.assigned, true, why, func(env *sim.Env, ok bool) {
		if c.poll != nil && c.poll.phase == phaseCommit {
			c.startProcessing(env, n)
		}
	}) {
		return true
	}
	c.poll.phase = phaseFetch
	return false
}

// afterPoll runs when a poll completes (its records processed): commit after processing,
// the end of a zombie's membership, and whatever the group waited for.
func (c *Consumer) afterPoll(env *sim.Env, n int) {
	m := c.grp
	if m == nil {
		return
	}
	env.CancelTimer(m.maxPoll)
	if n > 0 && c.cfg.Commit == proto.CommitAfter && !m.sub.Bugs.CommitBeforeProcessing {
		c.commitPositions(env, c.assigned, true, "after processing", func(env *sim.Env, ok bool) { c.endZombie(env) })
	}
	if !c.blocked() {
		c.endZombie(env)
	}
}

// endZombie ends a membership abandoned for max.poll.interval.ms once its last commit is
// answered: the partitions are lost, and the member joins again as a new one.
func (c *Consumer) endZombie(env *sim.Env) {
	m := c.grp
	if !m.zombie || c.blocked() {
		c.advance(env)
		return
	}
	m.zombie = false
	c.loseMembership(fmt.Sprintf("%s left generation %d for max.poll.interval.ms", m.memberID, m.gen), false)
	c.advance(env)
}

// --- commits ---

// commitPositions commits the positions of parts that moved since their last acknowledged
// commit. It reports whether a commit was sent; then, if set, runs when the commit ends. A
// sync commit blocks the application (commitSync) until it ends.
func (c *Consumer) commitPositions(env *sim.Env, parts []proto.TP, sync bool, why string, then func(env *sim.Env, ok bool)) bool {
	m := c.grp
	var offsets []proto.PartitionOffset
	for _, tp := range parts {
		p := c.pos[tp]
		if p == nil || p.offset < 0 {
			continue
		}
		if last, ok := m.acked[tp]; ok && last == p.offset {
			continue
		}
		offsets = append(offsets, proto.PartitionOffset{TP: tp, Offset: p.offset})
	}
	if len(offsets) == 0 {
		return false
	}
	r := &commitReq{corr: c.cl.newCorr(), offsets: offsets, sync: sync, member: m.memberID, gen: m.gen, then: then}
	if c.rec != nil {
		var hoff []history.PartitionOffset
		for _, o := range offsets {
			hoff = append(hoff, history.PartitionOffset{TopicPartition: htp(o.TP), Offset: o.Offset})
		}
		r.h = c.rec.InvokeCommit(c.now(env), c.process, m.sub.Group, hoff)
		r.recorded = true
	}
	m.commits = append(m.commits, r)
	sim.Record(env, CommitSent{Group: m.sub.Group, Member: m.memberID, Generation: m.gen, Offsets: offsets, Why: why})
	switch {
	case m.gen < 0:
		// Kafka's client refuses a commit once it knows it is out of the group.
		c.endCommit(env, r, history.Fail, "not in a generation of the group (CommitFailedException)")
		return true
	case !m.hasCoord:
		c.endCommit(env, r, history.Fail, "no coordinator known")
		return true
	}
	env.Send(m.coord, proto.OffsetCommit{CorrelationID: r.corr, Group: m.sub.Group, MemberID: m.memberID, InstanceID: m.sub.InstanceID,
		Generation: m.gen, Offsets: offsets})
	r.timer = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: gtCommit, Arg: r.corr})
	return true
}

func offsetsText(os []proto.PartitionOffset) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
	}
	return strings.Join(s, " ")
}

func (c *Consumer) onCommitted(env *sim.Env, resp proto.OffsetCommitResponse) {
	m := c.grp
	for _, r := range m.commits {
		if r.corr != resp.CorrelationID {
			continue
		}
		switch resp.Error {
		case proto.None:
			for _, o := range r.offsets {
				m.acked[o.TP] = o.Offset
			}
			c.endCommit(env, r, history.Ok, "")
		case proto.IllegalGeneration, proto.UnknownMemberID, proto.FencedInstanceID, proto.RebalanceInProgress:
			sim.Record(env, CommitFailed{Group: m.sub.Group, Offsets: r.offsets, Member: r.member, Generation: r.gen, Err: resp.Error})
			c.endCommit(env, r, history.Fail, resp.Error.String())
			if r.member == m.memberID && r.gen == m.gen && resp.Error != proto.RebalanceInProgress && !m.zombie && m.state != msLeft {
				c.loseMembership(fmt.Sprintf("commit of %s in generation %d: %s", m.memberID, m.gen, resp.Error), resp.Error != proto.UnknownMemberID)
				if resp.Error == proto.FencedInstanceID {
					c.fence(env, resp.Error)
				}
			}
		case proto.CoordinatorNotAvailable:
			c.endCommit(env, r, history.Fail, resp.Error.String())
			c.coordinatorLost(env, "commit: "+resp.Error.String())
		default:
			// NOT_COORDINATOR after the append, REQUEST_TIMED_OUT: the commit may yet
			// be stored.
			c.endCommit(env, r, history.Info, resp.Error.String())
			if proto.CoordinatorMoved(resp.Error) {
				c.coordinatorLost(env, "commit: "+resp.Error.String())
			}
		}
		return
	}
}

func (c *Consumer) endCommit(env *sim.Env, r *commitReq, t history.Type, why string) {
	m := c.grp
	i := slices.Index(m.commits, r)
	if i < 0 {
		return
	}
	m.commits = slices.Delete(m.commits, i, i+1)
	env.CancelTimer(r.timer)
	if r.recorded && c.rec != nil {
		now := c.now(env)
		switch t {
		case history.Ok:
			c.rec.Ok(now, r.h, history.Result{})
		case history.Fail:
			c.rec.Fail(now, r.h, history.Result{Error: why})
		default:
			c.rec.Info(now, r.h, history.Result{Error: why})
		}
	}
	if r.then != nil {
		r.then(env, t == history.Ok)
	}
}

// Commit command.
func (c *Consumer) commitNow(env *sim.Env) {
	if c.grp == nil || c.grp.state == msLeft {
		sim.Record(env, NotMember{})
		return
	}
	c.commitPositions(env, c.assigned, true, "on request", func(env *sim.Env, ok bool) { c.advance(env) })
}
