package client

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// The share consumer (KIP-932; Kafka's KafkaShareConsumer and ShareConsumeRequestManager):
// a member of a share group that gets records one by one from the share-partition
// leaders, under acquisition locks, and acknowledges each.
//
//   - Membership: it finds the group's coordinator (FindCoordinator), joins and
//     heartbeats with ShareGroupHeartbeat (epoch 0 joins; the coordinator's interval; a
//     fenced or unknown member joins again), and takes the assignment it is given. It
//     revokes nothing: another member may fetch from the same partitions.
//   - Polls: the assigned partitions are grouped by leader and each leader gets one
//     ShareFetch per poll, in a share session per leader (epoch 0 opens it, then +1 per
//     answer; SHARE_SESSION_NOT_FOUND or INVALID_SHARE_SESSION_EPOCH reopen it from 0,
//     NOT_LEADER_OR_FOLLOWER refreshes the metadata). The acknowledgements of the previous
//     poll ride on it (piggybacked: the leader applies them before it acquires).
//   - Processing takes ConsumerConfig.ProcessingTime per record. A record its poison rules
//     make fail is released (explicit mode), so that the leader's delivery count limit
//     archives a poison record, or rejected (RejectPoison). In implicit mode
//     (share.acknowledgement.mode=implicit, Kafka's default) every record of a poll is
//     accepted at the next poll.
//   - Close acknowledges what is pending and releases what the application still held, in
//     a ShareAcknowledge with session epoch -1 to every leader with a session, then leaves
//     the group (heartbeat epoch -1). A crash sends nothing: the leader's acquisition locks
//     expire.
//
// History: a poll op (PollValue.Share) per ShareFetch, each record with its delivery
// count: ok with the records its answer gave, info when it went unanswered (timed out, or
// the consumer closed first: the leader may have acquired records for it unseen), so a
// lost answer from one leader leaves the records of the others read; an ack op
// per partition of each request that carries acknowledgements: ok when the leader
// answered no error for it, fail when it answered one (INVALID_RECORD_STATE: the lock was
// lost), info when no answer came or the answer was REQUEST_TIMED_OUT (the leader's state
// write may have landed). Pending acknowledgements are one per offset, the latest.
//
// Every wait has a bound: each request has request.timeout.ms, the coordinator lookup and
// a failed join are retried after retry.backoff.ms, and a poll with nothing to fetch waits
// fetch.max.wait.ms before the next.

// ShareOptions are a share consumer's group and acknowledgement settings.
type ShareOptions struct {
	Group  string
	Topics []string
	// AckMode is share.acknowledgement.mode: proto.AckImplicit ("" too) or AckExplicit.
	AckMode string
	// RejectPoison rejects a record whose processing failed instead of releasing it: it is
	// archived at once rather than redelivered up to the delivery count limit.
	RejectPoison bool
}

// Validate names what is wrong with the options.
func (o ShareOptions) Validate() error {
	switch {
	case o.Group == "":
		return fmt.Errorf("a share consumer needs a group")
	case len(o.Topics) == 0:
		return fmt.Errorf("share group %s: a share consumer needs topics", o.Group)
	case o.AckMode != "" && o.AckMode != proto.AckImplicit && o.AckMode != proto.AckExplicit:
		return fmt.Errorf("ack=%s: want %s or %s", o.AckMode, proto.AckExplicit, proto.AckImplicit)
	}
	return nil
}

// Explicit reports whether the application acknowledges each record itself.
func (o ShareOptions) Explicit() bool { return o.AckMode == proto.AckExplicit }

// ShareClose is the scenario's command for KafkaShareConsumer.close().
type ShareClose struct{}

func (ShareClose) String() string { return "close" }

// Share consumer timers.
const (
	stRequest   = firstOwnTimer + iota // a request got no answer; Arg = correlation id
	stHeartbeat                        // the next heartbeat is due
	stRetry                            // the backoff before finding the coordinator or joining again is over
	stProcess                          // the application processed the poll's records
	stPoll                             // the next poll is due
)

// shareRecord is a record the consumer acquired.
type shareRecord struct {
	tp         proto.TP
	offset     int64
	key, value string
	count      int16
}

// sentAck is one partition's acknowledgements in a request, with its history op.
type sentAck struct {
	tp      proto.TP
	batches []proto.AckBatch
	h       history.Handle
	has     bool
}

// shareReq is a ShareFetch or ShareAcknowledge in flight.
type shareReq struct {
	corr  int64
	to    sim.NodeID
	epoch int32
	timer sim.TimerID
	acks  []sentAck
	close bool
	// poll is the ShareFetch's poll op: one per request, so the records of the leaders
	// that answered are read (ok) even when another leader's answer is lost (info).
	poll    history.Handle
	hasPoll bool
}

// shareSession is the consumer's share session with one leader: the epoch its next
// request carries.
type shareSession struct {
	leader sim.NodeID
	next   int32
}

// ShareConsumer is a share-group member node.
type ShareConsumer struct {
	cfg     proto.ConsumerConfig
	opt     ShareOptions
	process int
	rec     *history.Recorder
	cl      cluster

	coord      sim.NodeID
	hasCoord   bool
	findCorr   int64
	hbCorr     int64
	reqTimer   sim.TimerID // the lookup's or the heartbeat's timeout
	hbDue      sim.TimerID
	retry      sim.TimerID
	memberID   string
	epoch      int32
	hbInterval time.Duration
	assigned   []proto.TP
	stopped    bool // closed, or the group cannot be joined
	closing    bool

	sessions []shareSession
	reqs     []*shareReq
	polling  bool
	got      []shareRecord
	held     []shareRecord // the records being processed
	processT sim.TimerID
	pollT    sim.TimerID
	pending  []proto.PartitionAcks // sorted by partition

	// Polls, Acquired and Acked count, for views: polls completed, records acquired,
	// and records acknowledged by type.
	Polls, Acquired int
	Acked           map[proto.AckType]int
}

// NewShareConsumer builds a share consumer of opt.Group that records its operations as
// process in rec (nil records nothing); brokers are the names to ask for metadata.
func NewShareConsumer(cfg proto.ConsumerConfig, opt ShareOptions, process int, brokers []string, rec *history.Recorder) *ShareConsumer {
	return &ShareConsumer{cfg: cfg, opt: opt, process: process, rec: rec,
		cl: newCluster(brokers, nil, cfg.RequestTimeout, consumerRetryBackoff), Acked: map[proto.AckType]int{}}
}

// Config is the consumer's configuration.
func (s *ShareConsumer) Config() proto.ConsumerConfig { return s.cfg }

// Group is the consumer's share group.
func (s *ShareConsumer) Group() string { return s.opt.Group }

// Options are the consumer's share settings.
func (s *ShareConsumer) Options() ShareOptions { return s.opt }

// MemberID and Epoch are the consumer's membership ("" and 0 before it joined).
func (s *ShareConsumer) MemberID() string { return s.memberID }
func (s *ShareConsumer) Epoch() int32     { return s.epoch }

// Assignment is the partitions the consumer fetches from, sorted.
func (s *ShareConsumer) Assignment() []proto.TP { return slices.Clone(s.assigned) }

// Closed reports whether the consumer closed (or gave up joining).
func (s *ShareConsumer) Closed() bool { return s.stopped }

// Start joins the group and starts polling.
func (s *ShareConsumer) Start(env *sim.Env) {
	s.cl.start(env)
	s.cl.refresh(env)
	s.findCoordinator(env)
	s.schedulePoll(env, 0)
}

func (s *ShareConsumer) now(env *sim.Env) int64 { return int64(env.Now()) }

// Recv takes the close command and the brokers' answers.
func (s *ShareConsumer) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case ShareClose:
		s.close(env)
	case proto.MetadataResponse:
		s.cl.onResponse(env, from, m)
	case proto.FindCoordinatorResponse:
		s.onFindCoordinator(env, m)
	case proto.ShareGroupHeartbeatResponse:
		s.onHeartbeat(env, m)
	case proto.ShareFetchResponse:
		if r := s.takeReq(env, m.CorrelationID); r != nil {
			s.onFetch(env, r, m)
		}
	case proto.ShareAcknowledgeResponse:
		if r := s.takeReq(env, m.CorrelationID); r != nil {
			s.onAcknowledge(env, r, m)
		}
	}
}

// Timer handles the consumer's timeouts, heartbeats, processing and polls.
func (s *ShareConsumer) Timer(env *sim.Env, tag sim.TimerTag) {
	if s.cl.onTimer(env, tag) {
		return
	}
	switch tag.Kind {
	case stRequest:
		s.onTimeout(env, tag.Arg)
	case stHeartbeat:
		s.hbDue = 0
		s.sendHeartbeat(env)
	case stRetry:
		s.retry = 0
		if s.hasCoord {
			s.sendHeartbeat(env)
		} else {
			s.findCoordinator(env)
		}
	case stProcess:
		s.processT = 0
		s.processed(env)
	case stPoll:
		s.pollT = 0
		s.poll(env)
	}
}

// --- membership ---

func (s *ShareConsumer) findCoordinator(env *sim.Env) {
	if s.stopped || len(s.cl.brokers) == 0 {
		return
	}
	s.findCorr = s.cl.newCorr()
	env.Send(s.cl.brokers[s.cl.next], proto.FindCoordinator{CorrelationID: s.findCorr, Group: s.opt.Group})
	s.reqTimer = env.SetTimer(s.cfg.RequestTimeout, sim.TimerTag{Kind: stRequest, Arg: s.findCorr})
}

func (s *ShareConsumer) onFindCoordinator(env *sim.Env, r proto.FindCoordinatorResponse) {
	if r.CorrelationID != s.findCorr || s.findCorr == 0 {
		return
	}
	env.CancelTimer(s.reqTimer)
	s.findCorr = 0
	if r.Error != proto.None {
		s.cl.rotate()
		s.backoff(env)
		return
	}
	s.coord, s.hasCoord = r.Coordinator, true
	sim.Record(env, CoordinatorFound{Group: s.opt.Group, Coordinator: env.NameOf(r.Coordinator)})
	s.sendHeartbeat(env)
}

// backoff tries again (the lookup, or the heartbeat) after retry.backoff.ms.
func (s *ShareConsumer) backoff(env *sim.Env) {
	if s.retry == 0 && !s.stopped {
		s.retry = env.SetTimer(consumerRetryBackoff, sim.TimerTag{Kind: stRetry})
	}
}

func (s *ShareConsumer) heartbeat(epoch int32) proto.ShareGroupHeartbeat {
	return proto.ShareGroupHeartbeat{CorrelationID: s.hbCorr, Group: s.opt.Group, MemberID: s.memberID, MemberEpoch: epoch,
		Subscribed: slices.Clone(s.opt.Topics)}
}

func (s *ShareConsumer) sendHeartbeat(env *sim.Env) {
	if s.stopped || s.closing || !s.hasCoord || s.hbCorr != 0 {
		return
	}
	s.hbCorr = s.cl.newCorr()
	env.Send(s.coord, s.heartbeat(s.epoch))
	s.reqTimer = env.SetTimer(min(s.cfg.RequestTimeout, s.interval()), sim.TimerTag{Kind: stRequest, Arg: s.hbCorr})
}

// interval is the coordinator's heartbeat interval (group.share.heartbeat.interval.ms),
// or the consumer's own until it has heard one.
func (s *ShareConsumer) interval() time.Duration {
	if s.hbInterval > 0 {
		return s.hbInterval
	}
	return s.cfg.HeartbeatInterval
}

func (s *ShareConsumer) onHeartbeat(env *sim.Env, r proto.ShareGroupHeartbeatResponse) {
	if r.CorrelationID != s.hbCorr || s.hbCorr == 0 {
		return
	}
	env.CancelTimer(s.reqTimer)
	s.hbCorr = 0
	if s.stopped {
		return // the answer to the leave
	}
	switch {
	case r.Error == proto.None:
	case r.Error == proto.FencedMemberEpoch || r.Error == proto.UnknownMemberID:
		sim.Record(env, HeartbeatFenced{Group: s.opt.Group, Member: s.memberID, Generation: s.epoch, Err: r.Error})
		s.memberID, s.epoch, s.assigned = "", 0, nil
		s.backoff(env)
		return
	case proto.CoordinatorMoved(r.Error) || r.Error == proto.RequestTimedOut:
		s.coordinatorLost(env, "share heartbeat: "+r.Error.String())
		return
	default: // GROUP_ID_NOT_FOUND: the id belongs to another kind of group
		sim.Record(env, CannotJoin{Group: s.opt.Group, Err: r.Error})
		s.stopped = true
		return
	}
	moved := r.MemberEpoch != s.epoch || r.MemberID != s.memberID
	if r.MemberID != s.memberID {
		s.sessions = nil // share sessions belong to a member id: a new member opens new ones
	}
	s.memberID, s.epoch, s.hbInterval = r.MemberID, r.MemberEpoch, r.HeartbeatInterval
	if r.HasAssignment {
		next := slices.Clone(r.Assignment)
		slices.SortFunc(next, proto.CompareTP)
		if !slices.Equal(next, s.assigned) {
			s.assigned, moved = next, true
		}
	}
	if moved {
		sim.Record(env, EpochAssigned{Group: s.opt.Group, Member: s.memberID, Epoch: s.epoch, Assignment: slices.Clone(s.assigned), Share: true})
	}
	s.hbDue = env.SetTimer(s.interval(), sim.TimerTag{Kind: stHeartbeat})
}

func (s *ShareConsumer) coordinatorLost(env *sim.Env, why string) {
	if s.hasCoord {
		sim.Record(env, CoordinatorLost{Group: s.opt.Group, Coordinator: env.NameOf(s.coord), Why: why})
		if len(s.cl.brokers) > 1 && s.cl.brokers[s.cl.next] == s.coord {
			s.cl.rotate()
		}
	}
	s.hasCoord = false
	s.backoff(env)
}

// --- polls ---

func (s *ShareConsumer) schedulePoll(env *sim.Env, d time.Duration) {
	if s.pollT == 0 && !s.stopped && !s.closing {
		s.pollT = env.SetTimer(d, sim.TimerTag{Kind: stPoll})
	}
}

// idle is the wait before the next poll when one had nothing to do: fetch.max.wait.ms
// stands in for the broker's long poll, which mqsim's ShareFetch does not have.
func (s *ShareConsumer) idle() time.Duration { return max(s.cfg.FetchMaxWait, time.Millisecond) }

// fetchPlan is one leader's ShareFetch of a poll.
type fetchPlan struct {
	leader sim.NodeID
	parts  []proto.TP
	acks   []proto.PartitionAcks
}

// plan groups the assigned partitions and the pending acknowledgements by leader, in
// partition order. Acknowledgements whose partition has no known leader stay pending, and
// so do those for a leader without an open session: a ShareFetch that opens a session
// (epoch 0) may carry none (SharePartitionManager.newContext refuses "acknowledge data
// present in initial fetch request"), so they go with the next one.
func (s *ShareConsumer) plan(env *sim.Env) []fetchPlan {
	var plans []fetchPlan
	at := func(l sim.NodeID) *fetchPlan {
		for i := range plans {
			if plans[i].leader == l {
				return &plans[i]
			}
		}
		plans = append(plans, fetchPlan{leader: l})
		return &plans[len(plans)-1]
	}
	unknown := false
	for _, tp := range s.assigned {
		if l, _, ok := s.cl.leader(tp); ok {
			p := at(l)
			p.parts = append(p.parts, tp)
		} else {
			unknown = true
		}
	}
	var keep []proto.PartitionAcks
	for _, pa := range s.pending {
		if l, _, ok := s.cl.leader(pa.TP); ok {
			p := at(l)
			if s.sessionEpoch(l) == proto.ShareSessionOpen {
				keep = append(keep, pa)
				continue
			}
			p.acks = append(p.acks, pa)
		} else {
			keep = append(keep, pa)
			unknown = true
		}
	}
	s.pending = keep
	if unknown {
		s.cl.refresh(env)
	}
	return plans
}

// poll sends one ShareFetch per leader, with the pending acknowledgements.
func (s *ShareConsumer) poll(env *sim.Env) {
	if s.stopped || s.closing || s.polling || len(s.held) > 0 {
		return
	}
	plans := s.plan(env)
	if len(plans) == 0 {
		s.schedulePoll(env, s.idle())
		return
	}
	s.polling, s.got = true, nil
	for _, p := range plans {
		r := s.send(env, p.leader, p.acks, false)
		if s.rec != nil {
			r.poll, r.hasPoll = s.rec.InvokeSharePoll(s.now(env), s.process, s.opt.Group), true
		}
		env.Send(p.leader, proto.ShareFetch{CorrelationID: r.corr, Group: s.opt.Group, MemberID: s.memberID, SessionEpoch: r.epoch,
			Partitions: p.parts, Acks: p.acks, MaxRecords: s.cfg.MaxPollRecords})
	}
}

// send registers a request to leader carrying acks (an ack op each) and returns it; the
// caller sends the message with its correlation id and session epoch.
func (s *ShareConsumer) send(env *sim.Env, leader sim.NodeID, acks []proto.PartitionAcks, closing bool) *shareReq {
	r := &shareReq{corr: s.cl.newCorr(), to: leader, epoch: s.sessionEpoch(leader), close: closing}
	if closing {
		r.epoch = proto.ShareSessionClose
	}
	for _, pa := range acks {
		sa := sentAck{tp: pa.TP, batches: pa.Batches}
		if s.rec != nil {
			sa.h, sa.has = s.rec.InvokeAck(s.now(env), s.process, s.opt.Group, htp(pa.TP), recordAcks(pa.Batches)), true
		}
		r.acks = append(r.acks, sa)
	}
	r.timer = env.SetTimer(s.cfg.RequestTimeout, sim.TimerTag{Kind: stRequest, Arg: r.corr})
	s.reqs = append(s.reqs, r)
	return r
}

func recordAcks(bs []proto.AckBatch) []history.RecordAck {
	var out []history.RecordAck
	for _, b := range bs {
		for o := b.First; o <= b.Last; o++ {
			out = append(out, history.RecordAck{Offset: o, Type: b.Type.String()})
		}
	}
	return out
}

func (s *ShareConsumer) sessionEpoch(leader sim.NodeID) int32 {
	for _, ss := range s.sessions {
		if ss.leader == leader {
			return ss.next
		}
	}
	return proto.ShareSessionOpen
}

// setSession records the epoch of the next request to leader; 0 forgets the session.
func (s *ShareConsumer) setSession(leader sim.NodeID, next int32) {
	s.sessions = slices.DeleteFunc(s.sessions, func(ss shareSession) bool { return ss.leader == leader })
	if next != proto.ShareSessionOpen {
		s.sessions = append(s.sessions, shareSession{leader: leader, next: next})
	}
}

func (s *ShareConsumer) takeReq(env *sim.Env, corr int64) *shareReq {
	i := slices.IndexFunc(s.reqs, func(r *shareReq) bool { return r.corr == corr })
	if i < 0 {
		return nil
	}
	r := s.reqs[i]
	s.reqs = slices.Delete(s.reqs, i, i+1)
	env.CancelTimer(r.timer)
	return r
}

func (s *ShareConsumer) onFetch(env *sim.Env, r *shareReq, m proto.ShareFetchResponse) {
	if m.Error != proto.None {
		s.sessionLost(env, r.to, m.Error)
		s.ackOutcomes(env, r, nil, m.Error)
		s.pollDone(env, r, nil, "") // a session error: the leader acquired nothing
		s.fetchDone(env)
		return
	}
	s.setSession(r.to, nextSessionEpoch(r.epoch))
	first := len(s.got)
	for _, p := range m.Partitions {
		if p.Error != proto.None && needsRefresh(p.Error) {
			s.cl.refresh(env)
		}
		s.acquire(env, p)
	}
	s.ackOutcomes(env, r, m.Partitions, proto.None)
	s.pollDone(env, r, s.got[first:], "")
	s.fetchDone(env)
}

func nextSessionEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// sessionLost forgets the session with leader: the next request opens a new one.
func (s *ShareConsumer) sessionLost(env *sim.Env, leader sim.NodeID, e proto.Error) {
	s.setSession(leader, proto.ShareSessionOpen)
	sim.Record(env, ShareSessionReset{Group: s.opt.Group, Leader: env.NameOf(leader), Err: e})
	s.cl.refresh(env)
}

// acquire takes the records of one partition the leader says the member acquired.
func (s *ShareConsumer) acquire(env *sim.Env, p proto.SharePartitionData) {
	if len(p.Acquired) == 0 {
		return
	}
	if env.Tracing() {
		sim.Record(env, ShareAcquired{Group: s.opt.Group, TP: p.TP, Ranges: slices.Clone(p.Acquired)})
	}
	for _, b := range p.Batches {
		for i, rec := range b.Records {
			off := b.BaseOffset + int64(i)
			for _, a := range p.Acquired {
				if off >= a.First && off <= a.Last {
					s.got = append(s.got, shareRecord{tp: p.TP, offset: off, key: string(rec.Key), value: string(rec.Value), count: a.DeliveryCount})
					s.Acquired++
					break
				}
			}
		}
	}
}

// ackOutcomes completes the ack ops of a request from its answer: per partition (parts)
// or for the whole request (all, an error for every partition); nil parts with no error:
// no answer came.
func (s *ShareConsumer) ackOutcomes(env *sim.Env, r *shareReq, results []proto.SharePartitionData, all proto.Error) {
	for _, sa := range r.acks {
		e, answered := all, all != proto.None
		for _, p := range results {
			if p.TP == sa.tp {
				e, answered = p.AckError, true
				if e == proto.None {
					e = p.Error
				}
			}
		}
		s.ackOutcome(env, sa, e, answered)
	}
}

func (s *ShareConsumer) ackOutcome(env *sim.Env, sa sentAck, e proto.Error, answered bool) {
	if env.Tracing() {
		sim.Record(env, ShareAckOutcome{Group: s.opt.Group, TP: sa.tp, Acks: slices.Clone(sa.batches), Err: e, Unknown: !answered})
	}
	if answered && e == proto.None {
		for _, b := range sa.batches {
			s.Acked[b.Type] += int(b.Last - b.First + 1)
		}
	}
	if !sa.has {
		return
	}
	now := s.now(env)
	switch {
	case !answered:
		s.rec.Info(now, sa.h, history.Result{Error: "no answer from the share-partition leader"})
	case e == proto.None:
		s.rec.Ok(now, sa.h, history.Result{})
	case e == proto.RequestTimedOut:
		// The leader's state write was sent but its outcome is unknown (it timed out, or
		// the leader lost the partition with the write in flight): the share coordinator
		// may have persisted it, and a new leader would then read it.
		s.rec.Info(now, sa.h, history.Result{Error: e.String()})
	default:
		s.rec.Fail(now, sa.h, history.Result{Error: e.String()})
	}
}

// fetchDone completes the poll once every ShareFetch of it is answered or timed out.
func (s *ShareConsumer) fetchDone(env *sim.Env) {
	if !s.polling || slices.ContainsFunc(s.reqs, func(r *shareReq) bool { return !r.close }) {
		return
	}
	s.polling = false
	s.Polls++
	if len(s.got) == 0 {
		s.schedulePoll(env, s.idle())
		return
	}
	s.held, s.got = s.got, nil
	s.processT = env.SetTimer(time.Duration(len(s.held))*s.cfg.ProcessingTime, sim.TimerTag{Kind: stProcess})
}

// pollDone completes a ShareFetch's poll op: ok with the records its answer gave, or
// info (unknown) with the reason when none came.
func (s *ShareConsumer) pollDone(env *sim.Env, r *shareReq, got []shareRecord, unknown string) {
	if s.rec == nil || !r.hasPoll {
		return
	}
	r.hasPoll = false
	if unknown != "" {
		s.rec.Info(s.now(env), r.poll, history.Result{Error: unknown})
		return
	}
	s.rec.Ok(s.now(env), r.poll, history.Result{Reads: shareReads(got)})
}

// shareReads are a poll's records for the history, per partition in the order received.
func shareReads(got []shareRecord) []history.PartitionRecords {
	var out []history.PartitionRecords
	for _, r := range got {
		i := slices.IndexFunc(out, func(pr history.PartitionRecords) bool { return pr.TopicPartition == htp(r.tp) })
		if i < 0 {
			out = append(out, history.PartitionRecords{TopicPartition: htp(r.tp)})
			i = len(out) - 1
		}
		out[i].Records = append(out[i].Records, history.Record{Offset: r.offset, Value: r.value, DeliveryCount: int(r.count)})
	}
	return out
}

// processed acknowledges the poll's records and polls again at once (the acknowledgements
// ride on that poll).
func (s *ShareConsumer) processed(env *sim.Env) {
	for _, r := range s.held {
		t := proto.AckAccept
		if s.opt.Explicit() && s.cfg.Patterns.Fails(r.key, r.value, int(r.count)) {
			t = proto.AckRelease
			if s.opt.RejectPoison {
				t = proto.AckReject
			}
			sim.Record(env, ShareRecordFailed{Group: s.opt.Group, TP: r.tp, Offset: r.offset, DeliveryCount: r.count, Ack: t})
		}
		s.addPending(r.tp, r.offset, t)
	}
	s.held = nil
	s.poll(env)
}

// addPending queues one record's acknowledgement. A partition's pending acknowledgements
// are keyed by offset, as Kafka's (Acknowledgements, a TreeMap): a record delivered again
// while the acknowledgement of its earlier delivery still waits (it cannot ride on the
// ShareFetch that opens a session, and its lock expired meanwhile) gets one
// acknowledgement, the latest, never two of one offset in a request. The batches stay in
// offset order, consecutive offsets of one type merged.
func (s *ShareConsumer) addPending(tp proto.TP, offset int64, t proto.AckType) {
	i, found := slices.BinarySearchFunc(s.pending, tp, func(pa proto.PartitionAcks, tp proto.TP) int { return proto.CompareTP(pa.TP, tp) })
	if !found {
		s.pending = slices.Insert(s.pending, i, proto.PartitionAcks{TP: tp})
	}
	pa := &s.pending[i]
	if n := len(pa.Batches); n > 0 && pa.Batches[n-1].Last < offset {
		// The common case: past every pending offset.
		if pa.Batches[n-1].Type == t && pa.Batches[n-1].Last+1 == offset {
			pa.Batches[n-1].Last = offset
			return
		}
		pa.Batches = append(pa.Batches, proto.AckBatch{First: offset, Last: offset, Type: t})
		return
	}
	type ack struct {
		off int64
		t   proto.AckType
	}
	var acks []ack
	for _, b := range pa.Batches {
		for o := b.First; o <= b.Last; o++ {
			if o != offset {
				acks = append(acks, ack{o, b.Type})
			}
		}
	}
	j, _ := slices.BinarySearchFunc(acks, offset, func(a ack, off int64) int { return cmp.Compare(a.off, off) })
	acks = slices.Insert(acks, j, ack{offset, t})
	pa.Batches = pa.Batches[:0]
	for _, a := range acks {
		if n := len(pa.Batches); n > 0 && pa.Batches[n-1].Type == a.t && pa.Batches[n-1].Last+1 == a.off {
			pa.Batches[n-1].Last = a.off
			continue
		}
		pa.Batches = append(pa.Batches, proto.AckBatch{First: a.off, Last: a.off, Type: a.t})
	}
}

func (s *ShareConsumer) onTimeout(env *sim.Env, corr int64) {
	switch corr {
	case 0:
		return
	case s.findCorr:
		s.findCorr = 0
		s.cl.rotate()
		s.backoff(env)
		return
	case s.hbCorr:
		s.hbCorr = 0
		s.coordinatorLost(env, "share heartbeat unanswered")
		return
	}
	i := slices.IndexFunc(s.reqs, func(r *shareReq) bool { return r.corr == corr })
	if i < 0 {
		return
	}
	r := s.reqs[i]
	s.reqs = slices.Delete(s.reqs, i, i+1)
	sim.Record(env, ShareSessionReset{Group: s.opt.Group, Leader: env.NameOf(r.to), Err: proto.RequestTimedOut})
	s.setSession(r.to, proto.ShareSessionOpen)
	s.cl.avoid(r.to)
	s.cl.refresh(env)
	s.ackOutcomes(env, r, nil, proto.None)
	if r.close {
		s.closeDone(env)
		return
	}
	// The leader may have acquired records for it that the consumer never saw (each
	// acquisition counts towards the delivery count limit): the poll's outcome is unknown.
	s.pollDone(env, r, nil, "no answer from the share-partition leader: it may have acquired records unseen")
	s.fetchDone(env)
}

// --- close ---

// close acknowledges what is pending, releases what the application still held, ends the
// share sessions (epoch -1) and then leaves the group.
func (s *ShareConsumer) close(env *sim.Env) {
	if s.stopped || s.closing {
		return
	}
	s.closing = true
	env.CancelTimer(s.pollT)
	env.CancelTimer(s.processT)
	env.CancelTimer(s.hbDue)
	s.pollT, s.processT, s.hbDue = 0, 0, 0
	// A poll still waiting for answers ends here: what it acquired is released.
	for _, r := range slices.Clone(s.reqs) {
		s.takeReq(env, r.corr)
		s.ackOutcomes(env, r, nil, proto.None)
		// Its ShareFetch was sent: the leader may have acquired records for it.
		s.pollDone(env, r, nil, "closed before the poll returned")
	}
	s.polling = false
	released := 0
	for _, r := range append(s.held, s.got...) {
		s.addPending(r.tp, r.offset, proto.AckRelease)
		released++
	}
	s.held, s.got = nil, nil
	sim.Record(env, ShareClosing{Group: s.opt.Group, Member: s.memberID, Released: released})
	plans := s.plan(env)
	for _, ss := range s.sessions {
		if !slices.ContainsFunc(plans, func(p fetchPlan) bool { return p.leader == ss.leader }) {
			plans = append(plans, fetchPlan{leader: ss.leader})
		}
	}
	for _, p := range plans {
		if s.sessionEpoch(p.leader) == proto.ShareSessionOpen && len(p.acks) == 0 {
			continue
		}
		r := s.send(env, p.leader, p.acks, true)
		env.Send(p.leader, proto.ShareAcknowledge{CorrelationID: r.corr, Group: s.opt.Group, MemberID: s.memberID,
			SessionEpoch: r.epoch, Acks: p.acks})
	}
	s.pending = nil
	s.sessions = nil
	s.closeDone(env)
}

func (s *ShareConsumer) onAcknowledge(env *sim.Env, r *shareReq, m proto.ShareAcknowledgeResponse) {
	for _, sa := range r.acks {
		e, answered := m.Error, m.Error != proto.None
		for _, p := range m.Partitions {
			if p.TP == sa.tp {
				e, answered = p.Error, true
			}
		}
		s.ackOutcome(env, sa, e, answered)
	}
	s.closeDone(env)
}

// closeDone leaves the group once every closing ShareAcknowledge is answered or timed out.
func (s *ShareConsumer) closeDone(env *sim.Env) {
	if !s.closing || s.stopped || len(s.reqs) > 0 {
		return
	}
	s.stopped = true
	env.CancelTimer(s.retry)
	env.CancelTimer(s.reqTimer)
	if s.memberID != "" && s.hasCoord {
		s.hbCorr = s.cl.newCorr()
		env.Send(s.coord, s.heartbeat(proto.LeaveEpoch))
	}
	sim.Record(env, Left{Group: s.opt.Group, Member: s.memberID, Why: "close"})
}
