package broker

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/model/timewheel"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Delayed (scheduled) messages, and what consumers see of a log.
//
// A produce with a Delay is appended like any other batch, with each record stamped with
// the time it is due (proto.HeaderDeliverAt): a scheduled entry. It is replicated and
// acknowledged as its acks say, so the log of scheduled messages is the partition itself.
// The leader keeps the entries that are not released yet in a hierarchical timing wheel
// (Kafka's purgatory timer, model/timewheel) driven by one sim timer set to the wheel's
// NextDue; when one comes due the leader appends the record again, as an ordinary record
// marked with the entry's offset (proto.HeaderDelayedFrom): the release. Consumers never
// see entries, nor cancellation markers (proto.HeaderDelayCancel), which are produces too.
//
// Why in the partition's own log rather than a delay topic: a release is an append to the
// same log as its entry, after it, so no failure can keep one without the other in the
// wrong order. A truncation that removes an entry removes its release too; one that removes
// only the release leaves the entry, and the new leader, which rebuilds its wheel from its
// log (entries minus releases minus cancellations), releases it again: each scheduled
// message enters the log once, whatever fails. A separate delay topic would need a
// transaction (or a producer id and dedup) between two partitions led by different brokers.
//
// Simplifications, one line each: an entry holds an offset of the partition (a gap for
// consumers, as Kafka's transaction markers are) and its bytes twice; retention may delete
// an entry before it is due (Kafka's delay-topic designs share that); a new leader scans its
// whole log to rebuild the wheel, where a real broker would keep a snapshot; releases are
// due-time order per broker, one batch each; internal topics ("__...") are never delayed.

// Timer kinds of the patterns (the coordinators use timerGroup = 100).
const (
	timerDelayed   = 110
	timerRetention = 111
	timerCleaner   = 112
)

// The wheel's shape: Kafka's purgatory timer (tickMs=1, wheelSize=20).
const (
	delayTick      = time.Millisecond
	delayWheelSize = 20
)

// patternState is the broker's state for delayed messages and retention.
type patternState struct {
	wheel   *timewheel.Wheel[delayRef]
	nextID  uint64
	timer   sim.TimerID
	armedAt sim.Time
	armed   bool
	// parts is, by replica index, the scheduled entries of the partitions this broker leads
	// (nil: not loaded).
	parts []*delayedPart
	// changed lists (by replica index, each once: replica.roleChanged) the replicas whose
	// leadership or leader epoch may have changed since tendPatterns last looked; every
	// other one still matches parts, so tendPatterns looks only at these.
	changed []int

	retentionArmed bool
	cleanerArmed   bool
}

// delayRef is a wheel item: which entry of which partition.
type delayRef struct {
	idx    int // replica index
	offset int64
}

// delayedPart is one led partition's pending entries.
type delayedPart struct {
	epoch   int32 // the leader epoch they were loaded in
	pending []scheduledEntry
}

// scheduledEntry is one pending entry, by offset.
type scheduledEntry struct {
	offset int64
	due    sim.Time
	id     uint64 // wheel id
}

// ScheduledMessage is a pending delayed message, for views.
type ScheduledMessage struct {
	TP     proto.TP
	Offset int64
	Due    sim.Time
	Value  string
}

// Scheduled lists the delayed messages this broker holds as leader, by partition and
// offset.
func (b *Broker) Scheduled() []ScheduledMessage {
	var out []ScheduledMessage
	for _, tp := range b.order {
		r := b.parts[tp]
		dp := b.delayedOf(r)
		if dp == nil {
			continue
		}
		for _, e := range dp.pending {
			v := ""
			if rec, ok := recordAt(r.log, e.offset); ok {
				v = string(rec.Value)
			}
			out = append(out, ScheduledMessage{TP: tp, Offset: e.offset, Due: e.due, Value: v})
		}
	}
	return out
}

func (b *Broker) delayedOf(r *replica) *delayedPart {
	if r.idx < len(b.patterns.parts) {
		return b.patterns.parts[r.idx]
	}
	return nil
}

func internalTopic(name string) bool { return strings.HasPrefix(name, "__") }

// header returns the value of a record's header.
func header(rec *wal.Record, key string) (string, bool) {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// tendPatterns runs after every message and timer: it loads the scheduled entries of the
// partitions this broker has come to lead and drops those of the partitions it no longer
// leads, keeps the wheel's timer at its NextDue, and keeps the retention check armed.
// Only the partitions whose role changed since it last looked (rolesChanged) can need
// either; every other one still matches what was loaded.
func (b *Broker) tendPatterns(env *sim.Env) {
	ps := &b.patterns
	for len(ps.parts) < len(b.byIdx) {
		ps.parts = append(ps.parts, nil)
	}
	if len(ps.changed) > 0 {
		b.loadLeadersPatterns(env)
	}
	b.armDelayTimer(env)
	b.armRetention(env)
	b.armCleaner(env)
}

// rolesChanged notes that r's leadership or controller state (r.isLeader, r.state) may
// have changed: the next tendPatterns looks at r, and observers read r again
// (TakeTouched).
func (b *Broker) rolesChanged(r *replica) {
	if !r.roleChanged {
		r.roleChanged = true
		b.patterns.changed = append(b.patterns.changed, r.idx)
	}
	b.touch(r)
}

// loadLeadersPatterns loads or drops the scheduled entries of each partition whose role
// changed, to match its role, in partition order.
func (b *Broker) loadLeadersPatterns(env *sim.Env) {
	ps := &b.patterns
	changed := ps.changed
	ps.changed = nil
	slices.SortFunc(changed, func(i, j int) int { return proto.CompareTP(b.byIdx[i].tp, b.byIdx[j].tp) })
	for _, i := range changed {
		b.byIdx[i].roleChanged = false
	}
	for _, i := range changed {
		r := b.byIdx[i]
		if internalTopic(r.tp.Topic) {
			continue
		}
		dp := ps.parts[r.idx]
		switch {
		case r.isLeader && (dp == nil || dp.epoch != r.state.LeaderEpoch):
			b.unloadDelayed(env, r)
			b.loadDelayed(env, r)
		case !r.isLeader && dp != nil:
			b.unloadDelayed(env, r)
		}
	}
}

// loadDelayed rebuilds a new leader's pending entries from its log: every entry without a
// release or a cancellation after it.
func (b *Broker) loadDelayed(env *sim.Env, r *replica) {
	dp := &delayedPart{epoch: r.state.LeaderEpoch}
	b.patterns.parts[r.idx] = dp
	var entries []scheduledEntry
	var done []int64
	for off := r.log.LogStartOffset(); off < r.log.LogEndOffset(); {
		batches, err := r.log.Read(off, 1<<20)
		if err != nil || len(batches) == 0 {
			break
		}
		for _, bt := range batches {
			for i := range bt.Records {
				rec := &bt.Records[i]
				if len(rec.Headers) == 0 {
					continue
				}
				if v, ok := header(rec, proto.HeaderDeliverAt); ok {
					if due, err := strconv.ParseInt(v, 10, 64); err == nil {
						entries = append(entries, scheduledEntry{offset: bt.BaseOffset + int64(i), due: sim.Time(due)})
					}
				}
				for _, k := range []string{proto.HeaderDelayedFrom, proto.HeaderDelayCancel} {
					if v, ok := header(rec, k); ok {
						if o, err := strconv.ParseInt(v, 10, 64); err == nil {
							done = append(done, o)
						}
					}
				}
			}
			off = bt.NextOffset()
		}
	}
	loaded := 0
	var trace []ScheduledAt // only when tracing
	for _, e := range entries {
		if slices.Contains(done, e.offset) {
			continue
		}
		b.addScheduled(env, r, dp, e.offset, e.due)
		loaded++
		if env.Tracing() {
			trace = append(trace, ScheduledAt{Offset: e.offset, Due: e.due})
		}
	}
	if loaded > 0 {
		sim.Record(env, DelayLoaded{TP: r.tp, Epoch: dp.epoch, Entries: trace})
	}
}

// unloadDelayed drops a partition's pending entries from the wheel: a broker that no longer
// leads, or leads in a new epoch, does not release what it loaded before.
func (b *Broker) unloadDelayed(env *sim.Env, r *replica) {
	dp := b.delayedOf(r)
	if dp == nil {
		return
	}
	for _, e := range dp.pending {
		b.patterns.wheel.Cancel(e.id)
	}
	if len(dp.pending) > 0 {
		sim.Record(env, DelayUnloaded{TP: r.tp, StillLeads: r.isLeader, NewEpoch: r.state.LeaderEpoch, Pending: len(dp.pending)})
	}
	b.patterns.parts[r.idx] = nil
}

// addScheduled puts an entry in the wheel.
func (b *Broker) addScheduled(env *sim.Env, r *replica, dp *delayedPart, offset int64, due sim.Time) {
	ps := &b.patterns
	if ps.wheel == nil {
		ps.wheel = timewheel.New[delayRef](delayTick, delayWheelSize, env.Now())
	}
	ps.nextID++
	ps.wheel.Add(ps.nextID, due, delayRef{idx: r.idx, offset: offset})
	i, _ := slices.BinarySearchFunc(dp.pending, offset, func(e scheduledEntry, o int64) int { return cmp.Compare(e.offset, o) })
	dp.pending = slices.Insert(dp.pending, i, scheduledEntry{offset: offset, due: due, id: ps.nextID})
}

func (dp *delayedPart) find(offset int64) int {
	if dp == nil {
		return -1
	}
	return slices.IndexFunc(dp.pending, func(e scheduledEntry) bool { return e.offset == offset })
}

// cancelTarget is the entry a cancellation batch names, or -1 if the batch is none.
func cancelTarget(bt *wal.Batch) (int64, bool) {
	for i := range bt.Records {
		if v, ok := header(&bt.Records[i], proto.HeaderDelayCancel); ok {
			o, err := strconv.ParseInt(v, 10, 64)
			return o, err == nil
		}
	}
	return -1, false
}

// prepareDelayed checks a produce for the patterns before it is appended: a delayed
// batch gets its records stamped with their due time (on copies: the request is the
// sender's), a cancellation must name a pending entry of this leader.
func (b *Broker) prepareDelayed(env *sim.Env, r *replica, m proto.ProduceRequest, batch *wal.Batch) proto.Error {
	if target, ok := cancelTarget(batch); ok {
		if len(batch.Records) != 1 || b.delayedOf(r).find(target) < 0 {
			sim.Record(env, DelayRejected{TP: r.tp, Target: target, Err: proto.DelayNotPending})
			return proto.DelayNotPending
		}
		return proto.None
	}
	if m.Delay <= 0 {
		return proto.None
	}
	if internalTopic(r.tp.Topic) {
		return proto.UnknownTopicOrPartition
	}
	due := strconv.FormatInt(int64(env.Now().Add(m.Delay)), 10)
	recs := make([]wal.Record, len(batch.Records))
	for i, rec := range batch.Records {
		rec.Headers = append(slices.Clone(rec.Headers), wal.Header{Key: proto.HeaderDeliverAt, Value: []byte(due)})
		wal.SortHeaders(rec.Headers)
		recs[i] = rec
	}
	batch.Records = recs
	return proto.None
}

// afterDelayedAppend schedules the entries of a delayed batch just appended, or applies a
// cancellation.
func (b *Broker) afterDelayedAppend(env *sim.Env, r *replica, m proto.ProduceRequest, batch wal.Batch, base int64) {
	if _, cancel := cancelTarget(&batch); !cancel && m.Delay <= 0 {
		return
	}
	dp := b.delayedOf(r)
	if dp == nil {
		// Not loaded yet (tendPatterns runs after every event, so this is only a guard):
		// loading reads the log, which already has this batch.
		b.tendPatterns(env)
		return
	}
	if target, ok := cancelTarget(&batch); ok {
		if i := dp.find(target); i >= 0 {
			e := dp.pending[i]
			b.patterns.wheel.Cancel(e.id)
			dp.pending = slices.Delete(dp.pending, i, i+1)
			sim.Record(env, DelayCancelled{TP: r.tp, Target: target, Due: e.due, Marker: base})
		}
		return
	}
	if m.Delay <= 0 {
		return
	}
	for i := range batch.Records {
		v, _ := header(&batch.Records[i], proto.HeaderDeliverAt)
		due, _ := strconv.ParseInt(v, 10, 64)
		off := base + int64(i)
		b.addScheduled(env, r, dp, off, sim.Time(due))
		if env.Tracing() {
			sim.Record(env, Scheduled{TP: r.tp, Value: string(batch.Records[i].Value), Offset: off, Due: sim.Time(due), Delay: m.Delay})
		}
	}
}

// armDelayTimer keeps the one sim timer of the wheel at its NextDue.
func (b *Broker) armDelayTimer(env *sim.Env) {
	ps := &b.patterns
	if ps.wheel == nil || ps.wheel.Len() == 0 {
		if ps.armed {
			env.CancelTimer(ps.timer)
			ps.armed = false
		}
		return
	}
	next, _ := ps.wheel.NextDue()
	if ps.armed && ps.armedAt == next {
		return
	}
	if ps.armed {
		env.CancelTimer(ps.timer)
	}
	ps.timer = env.SetTimer(max(0, next.Sub(env.Now())), sim.TimerTag{Kind: timerDelayed})
	ps.armedAt, ps.armed = next, true
}

// onDelayTimer advances the wheel and releases what came due, in due order (ties in the
// order they were scheduled).
func (b *Broker) onDelayTimer(env *sim.Env) {
	ps := &b.patterns
	ps.armed = false
	if ps.wheel == nil {
		return
	}
	for _, e := range ps.wheel.Advance(env.Now()) {
		b.release(env, e.ID, e.Payload)
	}
}

// release appends a due entry's record to its partition, marked with the entry's offset.
func (b *Broker) release(env *sim.Env, id uint64, ref delayRef) {
	if ref.idx >= len(b.byIdx) {
		return
	}
	r := b.byIdx[ref.idx]
	dp := b.delayedOf(r)
	i := dp.find(ref.offset)
	if i < 0 || dp.pending[i].id != id || !r.isLeader {
		return
	}
	e := dp.pending[i]
	dp.pending = slices.Delete(dp.pending, i, i+1)
	rec, ok := recordAt(r.log, e.offset)
	if !ok {
		sim.Record(env, ReleaseMissing{TP: r.tp, Offset: e.offset})
		return
	}
	var hs []wal.Header
	for _, h := range rec.Headers {
		if h.Key != proto.HeaderDeliverAt {
			hs = append(hs, h)
		}
	}
	hs = append(hs, wal.Header{Key: proto.HeaderDelayedFrom, Value: []byte(strconv.FormatInt(e.offset, 10))})
	wal.SortHeaders(hs)
	rel := wal.Record{Key: rec.Key, Value: rec.Value, Headers: hs}
	batch := wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence,
		LeaderEpoch: r.state.LeaderEpoch, Timestamp: env.Now(), Records: []wal.Record{rel}}
	res, err := r.log.Append(batch)
	b.touch(r)
	if err != nil {
		sim.Record(env, StorageFailed{TP: r.tp, Op: OpRelease, Offset: e.offset, Err: err})
		return
	}
	b.sync(env, res.Sync)
	if env.Tracing() {
		sim.Record(env, Released{TP: r.tp, Value: string(rec.Value), From: e.offset, Due: e.due, Offset: res.BaseOffset,
			Late: max(env.Now().Sub(e.due), 0), LEO: res.NextOffset})
	}
	b.wakeFetches(env, r)
	b.maybeAdvanceHW(env, r)
}

// recordAt reads the record at offset.
func recordAt(log *wal.Log, offset int64) (wal.Record, bool) {
	if offset < log.LogStartOffset() || offset >= log.LogEndOffset() {
		return wal.Record{}, false
	}
	batches, err := log.Read(offset, 1)
	if err != nil || len(batches) == 0 || !batches[0].Contains(offset) {
		return wal.Record{}, false
	}
	return batches[0].Records[offset-batches[0].BaseOffset], true
}

// --- what consumers see ---

// hiddenFromConsumers reports whether a record is the leader's business only: a scheduled
// entry or a cancellation marker.
func hiddenFromConsumers(rec *wal.Record) bool {
	if len(rec.Headers) == 0 {
		return false
	}
	_, entry := header(rec, proto.HeaderDeliverAt)
	_, cancel := header(rec, proto.HeaderDelayCancel)
	return entry || cancel
}

func recordTags(rec *wal.Record) []string {
	v, _ := header(rec, proto.HeaderTags)
	return proto.ParseTags(v)
}

// sendConsumerFetch answers a consumer's fetch with the records it may see: scheduled
// entries and cancellation markers left out, and, when the fetch names tags, the records
// without one of them (broker-side tag filtering). What is left out becomes gaps: the
// batches are cut into runs of consecutive records, and SkippedTo tells the consumer it
// may move past the end of what was read. A fetch with nothing left out is answered as is.
func (b *Broker) sendConsumerFetch(env *sim.Env, r *replica, to sim.NodeID, m proto.FetchRequest, batches []wal.Batch) {
	visible := func(rec *wal.Record) bool {
		return !hiddenFromConsumers(rec) && proto.MatchTags(m.Tags, recordTags(rec))
	}
	all := true
	for bi := range batches {
		for i := range batches[bi].Records {
			// A transaction marker goes to every consumer: read_committed ones need it to
			// know where an aborted transaction ends.
			if !batches[bi].IsControl() && !visible(&batches[bi].Records[i]) {
				all = false
			}
		}
	}
	if all {
		b.sendFetch(env, r, to, m, batches)
		return
	}
	var out []wal.Batch
	for _, bt := range batches {
		start := -1
		for i := 0; i <= len(bt.Records); i++ {
			if i < len(bt.Records) && (bt.IsControl() || visible(&bt.Records[i])) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 {
				run := bt
				run.BaseOffset = bt.BaseOffset + int64(start)
				run.Records = bt.Records[start:i]
				out = append(out, run)
				start = -1
			}
		}
	}
	last := batches[len(batches)-1]
	b.sendFetchResponse(env, to, m, b.withTxnFields(r, m, batches, proto.FetchResponse{CorrelationID: m.CorrelationID, TP: m.TP, HighWatermark: r.hw,
		LogStartOffset: r.log.LogStartOffset(), LeaderEpoch: r.state.LeaderEpoch, Batches: out,
		SkippedTo: last.NextOffset(), SkippedEpoch: last.LeaderEpoch}))
}
