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
	if c.grp == nil {
		return MemberStatus{}, false
	}
	return c.grp.status(), true
}

// Ownership is the group of a subscribed consumer, the partitions it holds, and the
// generation it holds them under: that of the last assignment it received (it may not have
// applied it yet: a partition it must give up is still held until the revocation), -1 once
// it knows it lost its membership. It does not copy: read owned, never keep it. ok is false
// in assign mode.
func (c *Consumer) Ownership() (group string, gen int32, owned []proto.TP, ok bool) {
	if c.grp == nil {
		return "", 0, nil, false
	}
	return c.grp.group(), c.grp.ownership(), c.assigned, true
}

// MemberID is the consumer's member id in its group ("" in assign mode or before it has
// one).
func (c *Consumer) MemberID() string {
	if c.grp == nil {
		return ""
	}
	return c.grp.memberID
}

// Resubscribe makes a consumer built for a restart subscribe as soon as it starts: the
// application subscribes again at startup.
func (c *Consumer) Resubscribe(s Subscribe) { c.resub = &s }

func (c *Consumer) group() string {
	if c.grp == nil {
		return ""
	}
	return c.grp.group()
}

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
	if c.grp != nil && c.grp.active() {
		c.grp.finishLeave(env, "resubscribing")
	}
	if len(c.assigned) > 0 {
		if c.grp != nil {
			c.grp.setAssignment(env, nil, "")
		} else {
			c.setPartitions(env, "", nil, "")
		}
	}
	m := newMember(c, &c.cl, c.cfg, c.rec, c.process, s, a)
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
	m.start(env)
	if s.PollEvery > 0 {
		c.cmds = append(c.cmds, PollLoop{Every: s.PollEvery, Count: 1 << 40})
	}
	m.advance(env)
}

// groupPoll starts a group member's poll: it waits for the member's partitions if a
// rebalance is under way. It reports false when the poll should go on as usual.
func (c *Consumer) groupPoll(env *sim.Env) bool {
	m := c.grp
	if m == nil {
		return false
	}
	seq := m.pollStarted()
	if !m.active() {
		c.poll.fail = fmt.Sprintf("not a member of %s (left)", m.group())
		c.gather(env)
		return true
	}
	if m.ready() {
		return false
	}
	c.poll.phase = phaseGroup
	c.poll.metaT = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: gtPollWait, Arg: seq})
	m.advance(env)
	return true
}

// --- what the member reaches of the consumer (memberConsumer) ---

func (c *Consumer) owned() []proto.TP { return c.assigned }

// setPartitions replaces the consumer's partitions and records the assign op.
func (c *Consumer) setPartitions(env *sim.Env, group string, parts []proto.TP, why string) {
	pos := map[proto.TP]*position{}
	var hparts []history.TopicPartition
	for _, tp := range parts {
		hparts = append(hparts, htp(tp))
		if old := c.pos[tp]; old != nil {
			pos[tp] = old
			continue
		}
		pos[tp] = &position{offset: -1, epoch: wal.UndefinedEpoch, committedEpoch: wal.UndefinedEpoch, reset: c.cfg.AutoOffsetReset}
	}
	c.assigned, c.pos = slices.Clone(parts), pos
	if c.rec != nil {
		h := c.rec.InvokeAssign(c.now(env), c.process, group, hparts, false)
		c.rec.Ok(c.now(env), h, history.Result{})
	}
	if env.Tracing() {
		sim.Record(env, PartitionsAssigned{Group: group, Partitions: slices.Clone(parts), Why: why})
	}
}

func (c *Consumer) position(tp proto.TP) (int64, bool) { return c.Position(tp) }

func (c *Consumer) startAt(tp proto.TP, offset int64, committedEpoch int32) (string, bool) {
	p := c.pos[tp]
	if p == nil {
		return "", false
	}
	if offset >= 0 {
		p.offset, p.epoch, p.committedEpoch = offset, wal.UndefinedEpoch, committedEpoch
	}
	return p.reset, true
}

// positionEpoch is the leader epoch to commit with the position of tp: that of the last
// record consumed, or, before any, the one the committed offset came with (Kafka commits
// the FetchPosition's offsetEpoch).
func (c *Consumer) positionEpoch(tp proto.TP) int32 {
	p := c.pos[tp]
	if p == nil {
		return wal.UndefinedEpoch
	}
	if p.epoch != wal.UndefinedEpoch {
		return p.epoch
	}
	return p.committedEpoch
}

func (c *Consumer) pollPhase() int {
	if c.poll == nil {
		return noPoll
	}
	return c.poll.phase
}

func (c *Consumer) setPollPhase(phase int) { c.poll.phase = phase }

func (c *Consumer) resumePoll(env *sim.Env) {
	c.poll.phase = phaseMeta
	env.CancelTimer(c.poll.metaT)
	if len(c.assigned) == 0 {
		c.gather(env)
		return
	}
	c.fetchWhenKnown(env)
}

func (c *Consumer) pollWithoutPartitions(env *sim.Env, why string) {
	c.poll.errs = append(c.poll.errs, why)
	c.poll.phase = phaseFetch
	c.gather(env)
}

func (c *Consumer) stopPollLoop() {
	c.loopGen++
	c.loopLeft = 0
}
