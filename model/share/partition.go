package share

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// Limits are the broker settings a share-partition obeys (proto.ShareConfig).
type Limits struct {
	LockDuration       time.Duration // group.share.record.lock.duration.ms
	DeliveryCountLimit int           // group.share.delivery.count.limit
	MaxInFlight        int           // group.share.partition.max.record.locks: SPEO-SPSO+1
}

// LimitsOf takes the limits from the broker configuration.
func LimitsOf(c proto.ShareConfig) Limits {
	return Limits{LockDuration: c.RecordLockDuration, DeliveryCountLimit: c.DeliveryCountLimit, MaxInFlight: c.PartitionMaxRecordLocks}
}

// record is one offset of the window.
type record struct {
	state    proto.RecordState
	count    int16  // delivery count
	member   string // Acquired: who holds it
	deadline sim.Time
	// ticket is the staged acknowledgement or release that will move this Acquired
	// record once it is persisted (0: none). While it is set the record is "in
	// transition": no other acknowledgement, release or lock expiry touches it (Kafka's
	// InFlightState.stateTransitionInProgress, acknowledged with INVALID_RECORD_STATE).
	ticket int64
	to     proto.RecordState // the staged target state
}

// Transition is one record's change of state, for the trace and for tests.
type Transition struct {
	Offset        int64
	Member        string
	From, To      proto.RecordState
	DeliveryCount int16
}

// staged is an acknowledgement or release waiting for its write.
type staged struct {
	ticket  int64
	offsets []int64
}

// Write is the state a share-partition asks its persister to write: the whole state with
// the staged changes of Tickets applied. Exactly one write is in flight at a time, so that
// every write holds every change an earlier successful write persisted.
type Write struct {
	ID      int64
	State   proto.ShareState
	Tickets []int64 // the acknowledgements and releases it carries, in the order staged
}

// Partition is one share-partition's in-flight window, kept by the leader of the topic
// partition for one share group (Kafka's SharePartition). It is a pure state machine: the
// caller supplies the time and the log's offsets, and carries out the writes it asks for.
type Partition struct {
	Key    proto.SharePartitionKey
	limits Limits
	epoch  int32 // the state epoch, persisted with every write
	start  int64 // SPSO: every offset below is done for the group
	next   int64 // one past SPEO: the window is [start, next)
	recs   []record
	// archiveBelow is the log start offset last seen: an Acquired record below it is
	// archived, not made available, when its lock ends.
	archiveBelow int64
	staged       []staged
	inflight     *Write
	lastTicket   int64
	lastWrite    int64
	dirty        bool // lock expiries or log-start archiving not yet carried by a write
}

// Initial is where a share-partition with no persisted state starts
// (share.auto.offset.reset, applied by the leader: SharePartition.startOffsetDuringInitialization).
func Initial(reset string, logStart, logEnd int64) int64 {
	if reset == "earliest" {
		return logStart
	}
	return logEnd
}

// NewPartition is a share-partition whose window starts empty at start. Its start is not
// persisted yet: its first NextWrite writes it, so that a failover keeps it (Kafka's group
// coordinator initializes the state for the same reason, InitializeShareGroupState).
func NewPartition(key proto.SharePartitionKey, limits Limits, start int64) *Partition {
	return &Partition{Key: key, limits: limits, start: start, next: start, archiveBelow: start, dirty: true}
}

func newLoaded(key proto.SharePartitionKey, limits Limits, start int64) *Partition {
	return &Partition{Key: key, limits: limits, start: start, next: start, archiveBelow: start}
}

// maxLoadSpan bounds how far past its SPSO a persisted state may reach: a window is never
// wider than the in-flight limit (10000 at most), so anything wider is bad input.
const maxLoadSpan = 1 << 16

// Load is a share-partition rebuilt from its persisted state (the new leader's
// ReadShareGroupState answer). Offsets the batches skip between the SPSO and their end
// are plain Available records; a batch that would not fit the window is refused.
func Load(key proto.SharePartitionKey, limits Limits, st proto.ShareState) (*Partition, error) {
	p := newLoaded(key, limits, st.StartOffset)
	p.epoch = st.StateEpoch
	at := st.StartOffset
	for _, b := range st.Batches {
		switch {
		case b.First < at || b.Last < b.First:
			return nil, fmt.Errorf("share state of %s: batch %d-%d out of order after %d", key, b.First, b.Last, at)
		case b.State == proto.Acquired || (b.State != proto.Available && b.State != proto.Acknowledged && b.State != proto.Archived):
			return nil, fmt.Errorf("share state of %s: batch %d-%d has state %s, want available, acknowledged or archived", key, b.First, b.Last, b.State)
		case b.Last-st.StartOffset >= maxLoadSpan:
			return nil, fmt.Errorf("share state of %s: batch %d-%d is more than %d offsets past the start %d", key, b.First, b.Last, maxLoadSpan, st.StartOffset)
		}
		state := b.State
		if state == proto.Available && int(b.DeliveryCount) >= limits.DeliveryCountLimit {
			state = proto.Archived // written under a higher limit: never deliver it again
		}
		for ; at < b.First; at++ {
			p.recs = append(p.recs, record{state: proto.Available})
		}
		for ; at <= b.Last; at++ {
			p.recs = append(p.recs, record{state: state, count: b.DeliveryCount})
		}
	}
	p.next = at
	p.advance()
	return p, nil
}

// Start is the SPSO; End is the SPEO (the last offset in the window, Start when it is empty).
func (p *Partition) Start() int64 { return p.start }
func (p *Partition) End() int64   { return max(p.start, p.next-1) }

// InFlight is the window's span, the figure the in-flight limit bounds
// (SharePartition.numInFlightRecords).
func (p *Partition) InFlight() int { return int(p.next - p.start) }

// Record is the state of one offset: below the SPSO it is done (Archived stands for
// "acknowledged or archived, forgotten"); past the window, Available with count 0.
func (p *Partition) Record(off int64) (state proto.RecordState, count int16, member string) {
	switch {
	case off < p.start:
		return proto.Archived, 0, ""
	case off >= p.next:
		return proto.Available, 0, ""
	}
	r := p.recs[off-p.start]
	return r.state, r.count, r.member
}

func (p *Partition) at(off int64) *record { return &p.recs[off-p.start] }

// Acquire gives member up to maxRecords records, Available ones of the window first
// (lowest offset first), then new offsets from the window's end up to hw (exclusive)
// while the window's span stays within the in-flight limit. Each acquired record's
// delivery count goes up by one and its lock ends at now + the lock duration. Nothing is
// persisted: acquisition writes nothing (SharePartition.acquire).
func (p *Partition) Acquire(member string, hw int64, maxRecords int, now sim.Time) []proto.AcquiredRange {
	var out []proto.AcquiredRange
	deadline := now.Add(p.limits.LockDuration)
	take := func(off int64, r *record) {
		r.state, r.member, r.deadline = proto.Acquired, member, deadline
		r.count++
		maxRecords--
		if n := len(out); n > 0 && out[n-1].Last == off-1 && out[n-1].DeliveryCount == r.count {
			out[n-1].Last = off
			return
		}
		out = append(out, proto.AcquiredRange{First: off, Last: off, DeliveryCount: r.count})
	}
	for i := range p.recs {
		if maxRecords <= 0 {
			return out
		}
		if r := &p.recs[i]; r.state == proto.Available && int(r.count) < p.limits.DeliveryCountLimit {
			take(p.start+int64(i), r)
		}
	}
	for maxRecords > 0 && p.next < hw && p.InFlight() < p.limits.MaxInFlight {
		p.recs = append(p.recs, record{state: proto.Available})
		p.next++
		take(p.next-1, &p.recs[len(p.recs)-1])
	}
	return out
}

// Acknowledge validates one request's acknowledgements of this partition by member, all
// or none (KafkaShareConsumer: a partition's acknowledgements in one request are atomic):
// every offset must be in the window, Acquired by member and not already in transition,
// else INVALID_RECORD_STATE and nothing changes; a malformed batch is INVALID_REQUEST.
// Valid ones are staged under the returned ticket: they take effect when a write carrying
// it succeeds (Apply) and are undone if it fails (Rollback).
func (p *Partition) Acknowledge(member string, batches []proto.AckBatch) (int64, proto.Error) {
	for _, b := range batches {
		if b.Last < b.First || b.Type < proto.AckGap || b.Type > proto.AckReject {
			return 0, proto.InvalidRequest
		}
		for off := b.First; off <= b.Last; off++ {
			if off < p.start || off >= p.next {
				return 0, proto.InvalidRecordState
			}
			if r := p.at(off); r.state != proto.Acquired || r.member != member || r.ticket != 0 {
				return 0, proto.InvalidRecordState
			}
		}
	}
	// A batch list may name an offset twice; the check above passed both, so refuse it
	// here before anything is staged.
	var offs []int64
	for _, b := range batches {
		for off := b.First; off <= b.Last; off++ {
			offs = append(offs, off)
		}
	}
	sorted := slices.Clone(offs)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(offs) {
		return 0, proto.InvalidRequest
	}
	if len(offs) == 0 {
		return 0, proto.None
	}
	p.lastTicket++
	for _, b := range batches {
		for off := b.First; off <= b.Last; off++ {
			r := p.at(off)
			r.ticket, r.to = p.lastTicket, p.ackTarget(b.Type, off, r.count)
		}
	}
	p.staged = append(p.staged, staged{ticket: p.lastTicket, offsets: offs})
	return p.lastTicket, proto.None
}

// ackTarget is where an acknowledgement moves an Acquired record (RecordState.java,
// InFlightState.tryUpdateState): accept to Acknowledged, reject and gap to Archived,
// release to Available unless the delivery count reached the limit.
func (p *Partition) ackTarget(t proto.AckType, off int64, count int16) proto.RecordState {
	switch t {
	case proto.AckAccept:
		return proto.Acknowledged
	case proto.AckRelease:
		return p.availableOrArchived(off, count)
	}
	return proto.Archived
}

// availableOrArchived is where a record that goes back to the group goes: Available, or
// Archived at the delivery count limit or below the log start offset.
func (p *Partition) availableOrArchived(off int64, count int16) proto.RecordState {
	if int(count) >= p.limits.DeliveryCountLimit || off < p.archiveBelow {
		return proto.Archived
	}
	return proto.Available
}

// ReleaseMember stages the release of every record member holds that is not already in
// transition: its share session ended (SharePartitionManager.releaseSession). Ticket 0:
// it held none.
func (p *Partition) ReleaseMember(member string) int64 {
	var offs []int64
	for i := range p.recs {
		if r := &p.recs[i]; r.state == proto.Acquired && r.member == member && r.ticket == 0 {
			offs = append(offs, p.start+int64(i))
		}
	}
	if len(offs) == 0 {
		return 0
	}
	p.lastTicket++
	for _, off := range offs {
		r := p.at(off)
		r.ticket, r.to = p.lastTicket, p.availableOrArchived(off, r.count)
	}
	p.staged = append(p.staged, staged{ticket: p.lastTicket, offsets: offs})
	return p.lastTicket
}

// NextDeadline is the earliest lock deadline of a record that may expire (Acquired, not
// in transition), if any.
func (p *Partition) NextDeadline() (sim.Time, bool) {
	var t sim.Time
	found := false
	for i := range p.recs {
		if r := &p.recs[i]; r.state == proto.Acquired && r.ticket == 0 && (!found || r.deadline < t) {
			t, found = r.deadline, true
		}
	}
	return t, found
}

// Expire ends every lock whose deadline is not after now: the record is Available again,
// or Archived at the delivery count limit or below the log start. Unlike acknowledgements
// these apply at once, whether or not the write that records them succeeds
// (SharePartition.rollbackOrProcessStateUpdates applies expiries regardless). A record
// in transition keeps its lock until its write is answered; if that write fails and its
// deadline has passed, the next Expire ends it.
func (p *Partition) Expire(now sim.Time) []Transition {
	var out []Transition
	for i := range p.recs {
		r := &p.recs[i]
		if r.state != proto.Acquired || r.ticket != 0 || r.deadline > now {
			continue
		}
		off := p.start + int64(i)
		to := p.availableOrArchived(off, r.count)
		out = append(out, Transition{Offset: off, Member: r.member, From: proto.Acquired, To: to, DeliveryCount: r.count})
		r.state, r.member, r.deadline = to, "", 0
	}
	if len(out) > 0 {
		p.dirty = true
		p.advance()
	}
	return out
}

// LogStartMoved archives the Available records below the log's new start offset
// (retention or DeleteRecords removed them); Acquired ones are archived when their lock
// ends (SharePartition.updateCacheAndOffsets). Like expiries it applies at once.
func (p *Partition) LogStartMoved(logStart int64) []Transition {
	if logStart <= p.archiveBelow {
		return nil
	}
	p.archiveBelow = logStart
	var out []Transition
	for i := range p.recs {
		off := p.start + int64(i)
		if off >= logStart {
			break
		}
		r := &p.recs[i]
		switch {
		case r.state == proto.Available:
			out = append(out, Transition{Offset: off, From: proto.Available, To: proto.Archived, DeliveryCount: r.count})
			r.state = proto.Archived
		case r.ticket != 0 && r.to == proto.Available: // a staged release lands archived
			r.to = proto.Archived
		}
	}
	p.advance()
	if p.next < logStart { // offsets never fetched into the window are gone from the log
		if len(p.recs) == 0 {
			p.start = logStart
		}
		for ; p.next < logStart; p.next++ {
			if p.next >= p.start {
				p.recs = append(p.recs, record{state: proto.Archived})
			}
		}
		p.advance()
		p.dirty = true
	}
	if len(out) > 0 {
		p.dirty = true
	}
	return out
}

// advance moves the SPSO past the window's prefix of terminal records
// (SharePartition.maybeUpdateCachedStateAndOffsets) and forgets them.
func (p *Partition) advance() {
	k := 0
	for k < len(p.recs) && (p.recs[k].state == proto.Acknowledged || p.recs[k].state == proto.Archived) {
		k++
	}
	if k > 0 {
		p.recs = append(p.recs[:0], p.recs[k:]...)
		p.start += int64(k)
	}
}

// NextWrite returns the write to send when none is in flight and something waits for
// one: staged acknowledgements and releases, or expiries not yet persisted. The write
// holds the whole state with every staged change applied.
func (p *Partition) NextWrite() (Write, bool) {
	if p.inflight != nil || (len(p.staged) == 0 && !p.dirty) {
		return Write{}, false
	}
	p.lastWrite++
	w := Write{ID: p.lastWrite, State: p.state(true)}
	for _, s := range p.staged {
		w.Tickets = append(w.Tickets, s.ticket)
	}
	p.inflight = &w
	p.dirty = false
	return w, true
}

// Staged says whether acknowledgements or releases wait for a write.
func (p *Partition) Staged() bool { return len(p.staged) > 0 }

// ApplyUnpersisted applies the staged changes no write in flight carries at once, without
// waiting for their write: what the share-ack-before-persist bug does (proto.Bugs). They
// are written with the next write; a failover before it lands forgets them.
func (p *Partition) ApplyUnpersisted() []Transition {
	if len(p.staged) == 0 || (p.inflight != nil && len(p.inflight.Tickets) == len(p.staged)) {
		return nil
	}
	var tickets []int64
	for _, s := range p.staged {
		if p.inflight == nil || !slices.Contains(p.inflight.Tickets, s.ticket) {
			tickets = append(tickets, s.ticket)
		}
	}
	saved := p.inflight
	p.inflight = &Write{ID: -1, Tickets: tickets}
	out := p.finish(-1, true)
	p.inflight = saved
	p.dirty = true
	return out
}

// Writing says whether a write is in flight.
func (p *Partition) Writing() bool { return p.inflight != nil }

// Apply completes the write in flight, which succeeded: its staged changes take effect
// and the SPSO advances. It returns the changes, in the order staged.
func (p *Partition) Apply(id int64) []Transition { return p.finish(id, true) }

// Rollback ends the write in flight, which failed: its staged changes are undone, the
// records stay Acquired by their members with their locks running (and expire at once if
// their deadline has passed), and the tickets fail. Expiries it carried stay applied and
// are written again with the next write.
func (p *Partition) Rollback(id int64) []Transition { return p.finish(id, false) }

func (p *Partition) finish(id int64, ok bool) []Transition {
	if p.inflight == nil || p.inflight.ID != id {
		return nil
	}
	tickets := p.inflight.Tickets
	p.inflight = nil
	var out []Transition
	n := 0
	for _, s := range p.staged {
		if !slices.Contains(tickets, s.ticket) {
			p.staged[n] = s
			n++
			continue
		}
		for _, off := range s.offsets {
			if off < p.start || off >= p.next {
				continue // cannot happen: a record in transition holds the SPSO
			}
			r := p.at(off)
			if r.ticket != s.ticket {
				continue
			}
			t := Transition{Offset: off, Member: r.member, From: proto.Acquired, To: r.to, DeliveryCount: r.count}
			r.ticket = 0
			if ok {
				r.state, r.member, r.deadline = r.to, "", 0
			} else {
				t.To = proto.Acquired
			}
			out = append(out, t)
		}
	}
	p.staged = p.staged[:n]
	if !ok {
		p.dirty = true // the expiries it carried are not persisted
	}
	p.advance()
	return out
}

// State is the state to persist now, without the staged changes: Acquired records as
// they were before their acquisition (Available, one delivery fewer), since acquisition is
// never persisted.
func (p *Partition) State() proto.ShareState { return p.state(false) }

// state is the persisted form of the window; withStaged applies the staged changes.
func (p *Partition) state(withStaged bool) proto.ShareState {
	type view struct {
		state proto.RecordState
		count int16
	}
	views := make([]view, len(p.recs))
	for i := range p.recs {
		r := &p.recs[i]
		v := view{r.state, r.count}
		switch {
		case r.state == proto.Acquired && r.ticket != 0 && withStaged:
			v.state = r.to
		case r.state == proto.Acquired:
			v = view{proto.Available, r.count - 1}
		}
		views[i] = v
	}
	k := 0 // the terminal prefix the SPSO moves past
	for k < len(views) && (views[k].state == proto.Acknowledged || views[k].state == proto.Archived) {
		k++
	}
	st := proto.ShareState{StateEpoch: p.epoch, StartOffset: p.start + int64(k)}
	for i := k; i < len(views); i++ {
		v := views[i]
		if v.state == proto.Available && v.count == 0 {
			continue
		}
		off := p.start + int64(i)
		if n := len(st.Batches); n > 0 && st.Batches[n-1].Last == off-1 && st.Batches[n-1].State == v.state && st.Batches[n-1].DeliveryCount == v.count {
			st.Batches[n-1].Last = off
			continue
		}
		st.Batches = append(st.Batches, proto.PersistedBatch{First: off, Last: off, State: v.state, DeliveryCount: v.count})
	}
	return st
}

// Held lists the offsets member holds (Acquired, in transition or not), lowest first.
func (p *Partition) Held(member string) []int64 {
	var out []int64
	for i := range p.recs {
		if r := &p.recs[i]; r.state == proto.Acquired && r.member == member {
			out = append(out, p.start+int64(i))
		}
	}
	return out
}

// HeldCount is how many records are Acquired, by anyone.
func (p *Partition) HeldCount() int {
	n := 0
	for i := range p.recs {
		if p.recs[i].state == proto.Acquired {
			n++
		}
	}
	return n
}
