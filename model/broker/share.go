package broker

import (
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The share-partition leader (KIP-932): the leader of a topic partition keeps, for each
// share group that fetches it, the partition's in-flight window (model/share.Partition)
// and serves ShareFetch and ShareAcknowledge for it (Kafka's SharePartitionManager and
// KafkaApis.handleShareFetchRequest / handleShareAcknowledgeRequest).
//
//   - A window is built when the first ShareFetch names the partition: the persister reads
//     the state from the share coordinator (ReadShareGroupState), or the window starts at
//     share.auto.offset.reset when none was persisted (and that start is written at
//     once, so a failover keeps it). Fetches wait for the read, bounded by the
//     persister's timeout.
//   - Acknowledgements piggybacked on a ShareFetch are processed before its fetch; those
//     of a ShareAcknowledge the same way. Valid ones are staged, the window's next state
//     is written (WriteShareGroupState) and the request is answered only once the write
//     succeeded (applied) or failed (rolled back, the partition's error says why).
//   - Acquisition locks end by a timer per window at its earliest deadline.
//   - A window is dropped when the broker stops leading the partition or leads it in a
//     new epoch (SharePartitionManager's onBecomingFollower); the new leader reads the state.
//
// Share sessions (ShareSessionCache) are per (group, member) on this broker: epoch 0
// opens one, each request after it carries the next epoch, -1 closes it and releases
// what the member still holds. A request whose correlation id is not above the last one
// the session took is a copy the network duplicated or a request a later one overtook:
// it is dropped unanswered. Kafka needs no such rule, its requests travelling in order
// over TCP; here a duplicated ShareFetch would otherwise be answered
// INVALID_SHARE_SESSION_EPOCH under the original's correlation id, before the original's
// acknowledgements were persisted, and the member would take them for refused.

// timerShareLock is a window's lock timer; Arg is the window's id.
const timerShareLock = 140

// shareLeader is the broker's share-partition leader side.
type shareLeader struct {
	parts    []*sharePart // sorted by key
	sessions []shareSession
	replies  []*shareReply // waiting, in arrival order
	persists []*persistReq // the persister's requests in flight (persister.go)
	lastID   int64
}

// sharePart is one window this broker keeps.
type sharePart struct {
	id      int64
	key     proto.SharePartitionKey
	r       *replica
	epoch   int32            // the leader epoch it was built in
	p       *share.Partition // nil until the state is read
	reading bool             // a ReadShareGroupState is in flight
	readErr proto.Error      // the last read's failure, for the fetches that waited for it
	write   *persistReq      // the write in flight
	lock    sim.TimerID
	lockAt  sim.Time
	locked  bool // lock is set
}

type shareSession struct {
	group, member string
	epoch         int32
	lastCorr      int64 // the correlation id of the last request taken
	closed        bool  // closed by epoch -1: kept to recognise copies of the closing request
}

// shareReply is a ShareFetch or ShareAcknowledge waiting for its acknowledgements' write
// or its partitions' state reads.
type shareReply struct {
	to     sim.NodeID
	fetch  proto.ShareFetch // a ShareFetch's request, or a ShareAcknowledge's fields in it
	isAck  bool
	closes bool // session epoch -1: acknowledge only, then release
	acks   []ackWait
}

// ackWait is one partition's acknowledgements in a reply.
type ackWait struct {
	tp      proto.TP
	part    *sharePart
	ticket  int64 // 0: nothing staged (refused, or applied at once)
	batches []proto.AckBatch
	err     proto.Error
}

func (b *Broker) onShareFetch(env *sim.Env, from sim.NodeID, m proto.ShareFetch) {
	if err, stale := b.shares.session(m.Group, m.MemberID, m.SessionEpoch, m.CorrelationID, true); stale {
		return
	} else if err != proto.None {
		env.Send(from, proto.ShareFetchResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: err})
		return
	}
	rep := &shareReply{to: from, fetch: m, closes: m.SessionEpoch == proto.ShareSessionClose}
	b.startShareRequest(env, rep, m.Acks)
	if !rep.closes {
		for _, tp := range m.Partitions {
			if r := b.parts[tp]; r != nil && r.isLeader && !r.removed {
				b.shareWindow(env, r, proto.SharePartitionKey{Group: m.Group, TP: tp})
			}
		}
	}
	b.shares.replies = append(b.shares.replies, rep)
	b.answerShareReplies(env)
}

func (b *Broker) onShareAcknowledge(env *sim.Env, from sim.NodeID, m proto.ShareAcknowledge) {
	err, stale := b.shares.session(m.Group, m.MemberID, m.SessionEpoch, m.CorrelationID, false)
	if stale {
		return
	}
	if err != proto.None {
		env.Send(from, proto.ShareAcknowledgeResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: err})
		return
	}
	rep := &shareReply{to: from, isAck: true, closes: m.SessionEpoch == proto.ShareSessionClose,
		fetch: proto.ShareFetch{CorrelationID: m.CorrelationID, Group: m.Group, MemberID: m.MemberID, SessionEpoch: m.SessionEpoch}}
	b.startShareRequest(env, rep, m.Acks)
	b.shares.replies = append(b.shares.replies, rep)
	b.answerShareReplies(env)
}

// startShareRequest stages a request's acknowledgements, partition by partition (each
// all or none), starts their writes, and on a closing request releases what the member
// still holds here.
func (b *Broker) startShareRequest(env *sim.Env, rep *shareReply, acks []proto.PartitionAcks) {
	m := rep.fetch
	for _, pa := range acks {
		w := ackWait{tp: pa.TP, batches: slices.Clone(pa.Batches)}
		key := proto.SharePartitionKey{Group: m.Group, TP: pa.TP}
		sp := b.shares.find(key)
		switch r := b.parts[pa.TP]; {
		case r == nil || !r.isLeader || r.removed:
			w.err = proto.NotLeaderOrFollower
		case sp == nil || sp.p == nil:
			w.err = proto.InvalidRecordState // no window here yet: the member holds nothing of it
		default:
			w.part = sp
			w.ticket, w.err = sp.p.Acknowledge(m.MemberID, w.batches)
		}
		switch {
		case w.err != proto.None:
			if env.Tracing() {
				sim.Record(env, ShareAckRefused{Group: m.Group, TP: pa.TP, Member: m.MemberID, Batches: slices.Clone(w.batches), Err: w.err})
			}
		case w.ticket != 0 && b.cfg.Bugs.ShareAckBeforePersist:
			// The planted bug: applied and answered now; the write that persists it comes
			// later, and a failover before it lands forgets it.
			w.ticket = 0
			b.recordApplied(env, w.part, w.part.p.ApplyUnpersisted(), true)
			b.flushShareWrite(env, w.part)
			b.armShareLock(env, w.part)
		case w.ticket != 0:
			if env.Tracing() {
				sim.Record(env, ShareAckStaged{Group: m.Group, TP: pa.TP, Member: m.MemberID, Batches: slices.Clone(w.batches)})
			}
			b.flushShareWrite(env, w.part)
		}
		rep.acks = append(rep.acks, w)
	}
	if rep.closes {
		b.shares.endSession(m.Group, m.MemberID)
		for _, sp := range b.shares.parts {
			if sp.key.Group == m.Group && sp.p != nil && sp.p.ReleaseMember(m.MemberID) != 0 {
				b.flushShareWrite(env, sp)
			}
		}
	}
}

// session checks and advances a member's share session (ShareSessionCache): epoch 0
// opens (only a ShareFetch may), -1 closes, anything else must be the next epoch. stale
// says the request is a copy of one the session took, or was overtaken by a later one:
// drop it unanswered.
func (s *shareLeader) session(group, member string, epoch int32, corr int64, fetch bool) (err proto.Error, stale bool) {
	i := slices.IndexFunc(s.sessions, func(x shareSession) bool { return x.group == group && x.member == member })
	if i >= 0 && corr <= s.sessions[i].lastCorr {
		return proto.None, true
	}
	switch {
	case epoch == proto.ShareSessionOpen:
		if !fetch {
			return proto.InvalidShareSessionEpoch, false
		}
		if i < 0 {
			s.sessions = append(s.sessions, shareSession{group: group, member: member})
			i = len(s.sessions) - 1
		}
		s.sessions[i].epoch, s.sessions[i].closed = 0, false
	case i < 0 || s.sessions[i].closed:
		return proto.ShareSessionNotFound, false
	case epoch == proto.ShareSessionClose:
		// endSession closes it once its acknowledgements are staged.
	case epoch != s.sessions[i].epoch+1:
		return proto.InvalidShareSessionEpoch, false
	default:
		s.sessions[i].epoch = epoch
	}
	s.sessions[i].lastCorr = corr
	return proto.None, false
}

// endSession closes a member's session; it stays, closed, so that a copy of the closing
// request is recognised (one entry per member that closed, which a new member id never
// reuses).
func (s *shareLeader) endSession(group, member string) {
	if i := slices.IndexFunc(s.sessions, func(x shareSession) bool { return x.group == group && x.member == member }); i >= 0 {
		s.sessions[i].closed = true
	}
}

func compareShareKeys(a, b proto.SharePartitionKey) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	return proto.CompareTP(a.TP, b.TP)
}

func (s *shareLeader) find(key proto.SharePartitionKey) *sharePart {
	i, ok := slices.BinarySearchFunc(s.parts, key, func(sp *sharePart, k proto.SharePartitionKey) int { return compareShareKeys(sp.key, k) })
	if !ok {
		return nil
	}
	return s.parts[i]
}

func (s *shareLeader) byID(id int64) *sharePart {
	for _, sp := range s.parts {
		if sp.id == id {
			return sp
		}
	}
	return nil
}

// shareWindow returns the window of key, starting its state read if it has none.
func (b *Broker) shareWindow(env *sim.Env, r *replica, key proto.SharePartitionKey) *sharePart {
	sp := b.shares.find(key)
	if sp == nil {
		b.shares.lastID++
		sp = &sharePart{id: b.shares.lastID, key: key, r: r, epoch: r.state.LeaderEpoch}
		i, _ := slices.BinarySearchFunc(b.shares.parts, key, func(x *sharePart, k proto.SharePartitionKey) int { return compareShareKeys(x.key, k) })
		b.shares.parts = slices.Insert(b.shares.parts, i, sp)
	}
	if sp.p == nil && !sp.reading {
		sp.reading, sp.readErr = true, proto.None
		b.persist(env, sp, nil)
	}
	return sp
}

// onShareStateRead builds the window from the share coordinator's answer.
func (b *Broker) onShareStateRead(env *sim.Env, sp *sharePart, m proto.ReadShareGroupStateResponse, err proto.Error) {
	sp.reading = false
	ev := ShareStateRead{Group: sp.key.Group, TP: sp.key.TP, LeaderEpoch: sp.epoch, Found: m.Found, Err: err}
	limits := share.LimitsOf(b.cfg.Share)
	if err == proto.None {
		if m.Found {
			p, lerr := share.Load(sp.key, limits, m.State)
			if lerr != nil {
				err = proto.InvalidRequest
				ev.Err = err
			}
			sp.p = p
		} else {
			sp.p = share.NewPartition(sp.key, limits, share.Initial(b.cfg.Share.AutoOffsetReset, sp.r.log.LogStartOffset(), sp.r.hw))
		}
	}
	sp.readErr = err
	if sp.p != nil {
		ev.Start = sp.p.Start()
		b.logStartMoved(env, sp)
		b.flushShareWrite(env, sp) // a new window's start, so that a failover keeps it
	}
	sim.Record(env, ev)
	b.answerShareReplies(env)
}

// logStartMoved archives what retention removed below the log start.
func (b *Broker) logStartMoved(env *sim.Env, sp *sharePart) {
	if ts := sp.p.LogStartMoved(sp.r.log.LogStartOffset()); len(ts) > 0 && env.Tracing() {
		sim.Record(env, ShareArchived{Group: sp.key.Group, TP: sp.key.TP, Offsets: offsetsOf(ts), Reason: ArchiveLogStart})
	}
}

// flushShareWrite sends the window's next write if none is in flight and something waits.
func (b *Broker) flushShareWrite(env *sim.Env, sp *sharePart) {
	if w, ok := sp.p.NextWrite(); ok {
		b.persist(env, sp, &w)
	}
}

// onShareStateWritten applies or rolls back what the write carried and answers the
// requests waiting for it.
func (b *Broker) onShareStateWritten(env *sim.Env, sp *sharePart, w *share.Write, err proto.Error) {
	sp.write = nil
	sim.Record(env, ShareStateWritten{Group: sp.key.Group, TP: sp.key.TP, LeaderEpoch: sp.epoch, Start: w.State.StartOffset, Batches: len(w.State.Batches), Err: err})
	if err == proto.None {
		b.recordApplied(env, sp, sp.p.Apply(w.ID), false)
	} else {
		sp.p.Rollback(w.ID)
	}
	for _, rep := range b.shares.replies {
		for i := range rep.acks {
			a := &rep.acks[i]
			if a.part == sp && a.ticket != 0 && slices.Contains(w.Tickets, a.ticket) {
				a.ticket, a.err = 0, err
				if err != proto.None && env.Tracing() {
					sim.Record(env, ShareAckRefused{Group: sp.key.Group, TP: sp.key.TP, Member: rep.fetch.MemberID, Batches: slices.Clone(a.batches), Err: err, Rolled: true})
				}
			}
		}
	}
	// After a failure only what is still staged is written again: expiries alone wait
	// for the next write, so that an unreachable coordinator is not retried without end.
	if err == proto.None || sp.p.Staged() {
		b.flushShareWrite(env, sp)
	}
	b.expireShareLocks(env, sp) // a rolled-back record whose lock ran out meanwhile
	b.answerShareReplies(env)
}

// recordApplied traces applied acknowledgements and the archives among them.
func (b *Broker) recordApplied(env *sim.Env, sp *sharePart, ts []share.Transition, unpersisted bool) {
	if len(ts) == 0 || !env.Tracing() {
		return
	}
	sim.Record(env, ShareAckApplied{Group: sp.key.Group, TP: sp.key.TP, Changes: ts, Start: sp.p.Start(), Unpersisted: unpersisted})
	b.recordArchived(env, sp, ts)
}

// recordArchived traces the records ts archived, by reason.
func (b *Broker) recordArchived(env *sim.Env, sp *sharePart, ts []share.Transition) {
	var limit, rejected []int64
	for _, t := range ts {
		switch {
		case t.To != proto.Archived:
		case int(t.DeliveryCount) >= b.cfg.Share.DeliveryCountLimit && t.From == proto.Acquired:
			limit = append(limit, t.Offset)
		default:
			rejected = append(rejected, t.Offset)
		}
	}
	if len(rejected) > 0 {
		sim.Record(env, ShareArchived{Group: sp.key.Group, TP: sp.key.TP, Offsets: rejected, Reason: ArchiveRejected})
	}
	if len(limit) > 0 {
		sim.Record(env, ShareArchived{Group: sp.key.Group, TP: sp.key.TP, Offsets: limit, Reason: ArchiveDeliveryLimit})
	}
}

func offsetsOf(ts []share.Transition) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		out[i] = t.Offset
	}
	return out
}

// armShareLock sets the window's lock timer at its earliest deadline.
func (b *Broker) armShareLock(env *sim.Env, sp *sharePart) {
	at, ok := sp.p.NextDeadline()
	if b.cfg.Bugs.ShareLockNeverExpires {
		ok = false // the planted bug: no lock ever ends (expireShareLocks too)
	}
	if sp.locked && (!ok || at != sp.lockAt) {
		env.CancelTimer(sp.lock)
		sp.locked = false
	}
	if ok && !sp.locked {
		sp.lock, sp.lockAt, sp.locked = env.SetTimer(max(0, at.Sub(env.Now())), sim.TimerTag{Kind: timerShareLock, Arg: sp.id}), at, true
	}
}

// onShareLockTimer ends the locks whose deadline came.
func (b *Broker) onShareLockTimer(env *sim.Env, id int64) {
	if sp := b.shares.byID(id); sp != nil && sp.p != nil {
		sp.locked = false
		b.expireShareLocks(env, sp)
	}
}

func (b *Broker) expireShareLocks(env *sim.Env, sp *sharePart) {
	if b.cfg.Bugs.ShareLockNeverExpires {
		return // the planted bug: acquisition locks never end (armShareLock sets no timer)
	}
	ts := sp.p.Expire(env.Now())
	if len(ts) > 0 {
		if env.Tracing() {
			sim.Record(env, ShareLockExpired{Group: sp.key.Group, TP: sp.key.TP, Changes: ts})
			var archived []int64
			for _, t := range ts {
				if t.To == proto.Archived {
					archived = append(archived, t.Offset)
				}
			}
			if len(archived) > 0 {
				reason := ArchiveDeliveryLimit
				if archived[0] < sp.r.log.LogStartOffset() {
					reason = ArchiveLogStart
				}
				sim.Record(env, ShareArchived{Group: sp.key.Group, TP: sp.key.TP, Offsets: archived, Reason: reason})
			}
		}
		b.flushShareWrite(env, sp)
	}
	b.armShareLock(env, sp)
}

// answerShareReplies answers, in arrival order, every request whose acknowledgements are
// settled and whose partitions' windows are read (or failed to be).
func (b *Broker) answerShareReplies(env *sim.Env) {
	kept := b.shares.replies[:0]
	for _, rep := range b.shares.replies {
		if !b.shareReplyReady(rep) {
			kept = append(kept, rep)
			continue
		}
		if rep.isAck {
			b.sendShareAcknowledgeResponse(env, rep)
		} else {
			b.sendShareFetchResponse(env, rep)
		}
	}
	clear(b.shares.replies[len(kept):])
	b.shares.replies = kept
}

func (b *Broker) shareReplyReady(rep *shareReply) bool {
	for _, a := range rep.acks {
		if a.ticket != 0 {
			return false
		}
	}
	if rep.isAck || rep.closes {
		return true
	}
	for _, tp := range rep.fetch.Partitions {
		if sp := b.shares.find(proto.SharePartitionKey{Group: rep.fetch.Group, TP: tp}); sp != nil && sp.reading {
			return false
		}
	}
	return true
}

func (b *Broker) sendShareAcknowledgeResponse(env *sim.Env, rep *shareReply) {
	resp := proto.ShareAcknowledgeResponse{CorrelationID: rep.fetch.CorrelationID, Group: rep.fetch.Group}
	for _, a := range rep.acks {
		resp.Partitions = append(resp.Partitions, proto.PartitionAckResult{TP: a.tp, Error: a.err})
	}
	env.Send(rep.to, resp)
}

// defaultShareMaxRecords caps a ShareFetch that names no maximum (max.poll.records' default).
const defaultShareMaxRecords = 500

// sendShareFetchResponse acquires records for the member, partition by partition in the
// request's order, and answers with them and the acknowledgements' outcome.
func (b *Broker) sendShareFetchResponse(env *sim.Env, rep *shareReply) {
	m := rep.fetch
	resp := proto.ShareFetchResponse{CorrelationID: m.CorrelationID, Group: m.Group}
	room := m.MaxRecords
	if room <= 0 {
		room = defaultShareMaxRecords
	}
	data := func(tp proto.TP) *proto.SharePartitionData {
		for i := range resp.Partitions {
			if resp.Partitions[i].TP == tp {
				return &resp.Partitions[i]
			}
		}
		resp.Partitions = append(resp.Partitions, proto.SharePartitionData{TP: tp})
		return &resp.Partitions[len(resp.Partitions)-1]
	}
	if !rep.closes {
		for _, tp := range m.Partitions {
			d := data(tp)
			r := b.parts[tp]
			sp := b.shares.find(proto.SharePartitionKey{Group: m.Group, TP: tp})
			switch {
			case r == nil:
				d.Error = proto.UnknownTopicOrPartition
			case !r.isLeader || r.removed || sp == nil:
				d.Error = proto.NotLeaderOrFollower
			case sp.p == nil:
				d.Error = sp.readErr
			default:
				b.logStartMoved(env, sp)
				d.Acquired = sp.p.Acquire(m.MemberID, r.hw, room, env.Now())
				if len(d.Acquired) == 0 {
					break
				}
				for _, a := range d.Acquired {
					room -= int(a.Last - a.First + 1)
				}
				if env.Tracing() {
					sim.Record(env, ShareAcquired{Group: m.Group, TP: tp, Member: m.MemberID, Ranges: slices.Clone(d.Acquired), Until: env.Now().Add(b.cfg.Share.RecordLockDuration)})
				}
				d.Batches, d.Error = readAcquired(r.log, d.Acquired)
				b.armShareLock(env, sp)
			}
		}
	}
	for _, a := range rep.acks {
		data(a.tp).AckError = a.err
	}
	env.Send(rep.to, resp)
}

// readAcquired reads the batches that hold the acquired offsets.
func readAcquired(log *wal.Log, ranges []proto.AcquiredRange) ([]wal.Batch, proto.Error) {
	var out []wal.Batch
	for _, a := range ranges {
		for off := a.First; off <= a.Last; {
			if n := len(out); n > 0 && out[n-1].NextOffset() > off {
				off = out[n-1].NextOffset()
				continue
			}
			bs, err := log.Read(off, 1<<20)
			if err != nil || len(bs) == 0 {
				return out, proto.KafkaStorageError
			}
			for _, bt := range bs {
				if bt.BaseOffset > a.Last {
					break
				}
				out = append(out, bt)
				off = bt.NextOffset()
			}
		}
	}
	return out, proto.None
}

// tendShares runs after every message and timer: it drops the windows of partitions this
// broker no longer leads, or leads in a new epoch. With no window it does nothing.
func (b *Broker) tendShares(env *sim.Env) {
	if len(b.shares.parts) == 0 {
		return
	}
	kept := b.shares.parts[:0]
	var dropped []*sharePart
	for _, sp := range b.shares.parts {
		r := sp.r
		if r.isLeader && !r.removed && r.state.LeaderEpoch == sp.epoch && b.parts[sp.key.TP] == r {
			kept = append(kept, sp)
			continue
		}
		dropped = append(dropped, sp)
	}
	if len(dropped) == 0 {
		return
	}
	clear(b.shares.parts[len(kept):])
	b.shares.parts = kept
	for _, sp := range dropped {
		b.dropShareWindow(env, sp)
	}
	b.answerShareReplies(env)
}

func (b *Broker) dropShareWindow(env *sim.Env, sp *sharePart) {
	why := "no longer the leader"
	if sp.r.isLeader {
		why = "new leader epoch"
	}
	held := 0
	if sp.p != nil {
		held = sp.p.HeldCount()
	}
	sim.Record(env, ShareWindowDropped{Group: sp.key.Group, TP: sp.key.TP, Held: held, Why: why})
	if sp.locked {
		env.CancelTimer(sp.lock)
		sp.locked = false
	}
	// The acknowledgements of the write in flight may be persisted all the same (the
	// share coordinator may have taken the write before a new leader's read fenced this
	// one): their outcome is unknown, REQUEST_TIMED_OUT as when the write's time runs
	// out. The others were never written: refused.
	var writing []int64
	if sp.write != nil {
		writing = sp.write.write.Tickets
	}
	b.dropPersists(env, sp)
	sp.reading = false
	sp.readErr = proto.NotLeaderOrFollower
	for _, rep := range b.shares.replies {
		for i := range rep.acks {
			if a := &rep.acks[i]; a.part == sp && a.ticket != 0 {
				a.err = proto.NotLeaderOrFollower
				if slices.Contains(writing, a.ticket) {
					a.err = proto.RequestTimedOut
				}
				a.ticket = 0
			}
		}
	}
}

// SharePartition is a read-only view of the share-partition window this broker keeps for
// key, or nil (not led here, or its state not read yet).
func (b *Broker) SharePartition(key proto.SharePartitionKey) *share.Partition {
	if sp := b.shares.find(key); sp != nil {
		return sp.p
	}
	return nil
}
