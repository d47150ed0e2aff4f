package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"mqsim/model/history"
)

// Share groups (KIP-932): the members of a share group share the records of its
// partitions. Each record is acquired by one member at a time and acknowledged on its
// own (accept, release, reject); a record released, or whose acquisition lock expired,
// is delivered again with its delivery count one higher, and archived once released at
// the group's delivery count limit. The history says it in share polls (each record
// with the count the share-partition leader gave) and ack ops (see model/history).

// ShareChecker names CheckShare's findings.
const ShareChecker = "share"

// Share-group anomalies (CheckShare).
const (
	// ShareLost: an acknowledged record of a topic the share group subscribed to was
	// never settled for the group: no ok accept or reject of it, no delivery at the
	// delivery count limit (where the broker archives it), within the UnseenRule.
	ShareLost Anomaly = "share-lost"
	// ShareBeyondLimit: a record was delivered with a delivery count above the limit.
	ShareBeyondLimit Anomaly = "share-beyond-limit"
	// ShareRedeliveredAfterAccept: a record was delivered again to the group by a poll
	// invoked after an ok accept of it completed.
	ShareRedeliveredAfterAccept Anomaly = "share-redelivered-after-accept"
)

// ShareOptions configures CheckShare: the share-group settings the run had
// (proto.ShareConfig) and the deadline rule of unseen.
type ShareOptions struct {
	// DeliveryCountLimit is group.share.delivery.count.limit: a record is archived
	// when released (or its lock expires) at this count; none is delivered above it.
	DeliveryCountLimit int
	// FromEarliest is share.auto.offset.reset=earliest: a share-partition starts at
	// the log's start, so every acknowledged record must be settled. Otherwise
	// (latest, Kafka's default) it starts at the log end when it is initialized, a
	// moment the history does not show: only records at or after the lowest offset
	// the group was delivered from the partition are judged.
	FromEarliest bool
	// Unseen bounds how soon a record must be settled, as it bounds how soon a value
	// must be read (UnseenRule): by the end of the history, or within Within after
	// max(its send's ack, After); a deadline past the end is undecided.
	Unseen UnseenRule
}

// DefaultShareOptions are Kafka 4.2's defaults (limit 5, share.auto.offset.reset
// latest), for a history whose run's settings are not known.
func DefaultShareOptions() ShareOptions { return ShareOptions{DeliveryCountLimit: 5} }

// CheckShare judges the share groups of a log's history (see the anomalies above and
// the package documentation). A history without share polls or ack ops gets an
// empty report.
func CheckShare(h history.History, opts ShareOptions) (Report, error) {
	a, err := analyze(h)
	if err != nil {
		return Report{}, err
	}
	return a.share(opts), nil
}

// shareDelivery is one record of one share poll: op k delivered it with count.
type shareDelivery struct {
	k     int32
	count int
}

// shareAck is one record of one ack op: op k acknowledged it as typ.
type shareAck struct {
	k   int32
	typ string
}

// shareRecord is what the history says about one offset of one partition for one group.
type shareRecord struct {
	deliveries []shareDelivery // in invocation order
	acks       []shareAck      // in invocation order
}

// shareGroup is what the history says about one share group.
type shareGroup struct {
	name    string
	topics  map[string]bool
	records map[int32]map[int64]*shareRecord // partition -> offset -> record
	polls   []int32                          // its share polls, in invocation order
}

func (g *shareGroup) record(part int32, offset int64) *shareRecord {
	m := g.records[part]
	if m == nil {
		m = map[int64]*shareRecord{}
		g.records[part] = m
	}
	r := m[offset]
	if r == nil {
		r = &shareRecord{}
		m[offset] = r
	}
	return r
}

// shareGroups gathers every share group's subscriptions, deliveries and
// acknowledgements, sorted by name.
func (a *analysis) shareGroups() []*shareGroup {
	byID := map[int32]*shareGroup{}
	get := func(id int32) *shareGroup {
		g := byID[id]
		if g == nil {
			g = &shareGroup{name: a.groups[id], topics: map[string]bool{}, records: map[int32]map[int64]*shareRecord{}}
			byID[id] = g
		}
		return g
	}
	for k := range a.ops {
		o := &a.ops[k]
		if o.group < 0 || !a.shareGroup[o.group] {
			continue
		}
		switch o.f {
		case history.Subscribe:
			if o.typ != history.Fail {
				for _, t := range a.value(o).Assign.Topics {
					get(o.group).topics[t] = true
				}
			}
		case history.Poll:
			if !o.share {
				continue
			}
			g := get(o.group)
			g.polls = append(g.polls, int32(k))
			if o.comp < 0 {
				continue
			}
			for _, pr := range a.pollOf(o).Reads {
				g.topics[pr.Topic] = true // a delivery proves the subscription
				pid := a.partOf[pr.TopicPartition]
				for _, rec := range pr.Records {
					r := g.record(pid, rec.Offset)
					r.deliveries = append(r.deliveries, shareDelivery{k: int32(k), count: rec.DeliveryCount})
				}
			}
		case history.Ack:
			ack := a.value(o).Ack
			pid, ok := a.partOf[ack.TopicPartition]
			if !ok {
				continue // never sent to nor read: nothing there to settle
			}
			g := get(o.group)
			for _, ra := range ack.Acks {
				r := g.record(pid, ra.Offset)
				r.acks = append(r.acks, shareAck{k: int32(k), typ: ra.Type})
			}
		}
	}
	out := make([]*shareGroup, 0, len(byID))
	for _, g := range byID {
		out = append(out, g)
	}
	slices.SortFunc(out, func(x, y *shareGroup) int { return cmp.Compare(x.name, y.name) })
	return out
}

func (a *analysis) share(opts ShareOptions) Report {
	f := newFindings(ShareChecker, nil)
	parts := make([]int32, len(a.parts))
	for i := range parts {
		parts[i] = int32(i)
	}
	slices.SortFunc(parts, func(x, y int32) int { return a.parts[x].tp.Compare(a.parts[y].tp) })
	for _, g := range a.shareGroups() {
		d := GroupDelivery{Group: g.name}
		for _, pid := range parts {
			records := g.records[pid]
			for _, off := range sortedOffsets(records) {
				a.shareRecordAnomalies(f, g, pid, off, records[off], opts.DeliveryCountLimit)
			}
			if g.topics[a.parts[pid].tp.Topic] {
				a.shareLoss(f, g, pid, opts, &d)
			}
		}
		d.Observed = observed(d)
		f.report.Delivery = append(f.report.Delivery, d)
	}
	return f.done()
}

func sortedOffsets(m map[int64]*shareRecord) []int64 {
	out := make([]int64, 0, len(m))
	for off := range m {
		out = append(out, off)
	}
	slices.Sort(out)
	return out
}

// shareRecordAnomalies judges one record's deliveries against the limit and its
// acknowledgements.
func (a *analysis) shareRecordAnomalies(f *findings, g *shareGroup, pid int32, off int64, r *shareRecord, limit int) {
	p := a.parts[pid]
	for _, d := range r.deliveries {
		if d.count > limit {
			f.add(Violation{Anomaly: ShareBeyondLimit, TopicPartition: p.tp, Group: g.name, Offsets: []int64{off},
				Ops: a.refs(d.k), Text: fmt.Sprintf("offset %d was delivered to share group %s with delivery count %d (op %d), above the delivery count limit %d",
					off, g.name, d.count, a.ref(d.k).Index, limit)})
			break
		}
	}
	accepted := int32(-1) // the ok accept that completed first
	for _, ack := range r.acks {
		o := &a.ops[ack.k]
		if ack.typ == history.AckAccept && o.ok() && (accepted < 0 || o.end < a.ops[accepted].end) {
			accepted = ack.k
		}
	}
	if accepted < 0 {
		return
	}
	for _, d := range r.deliveries {
		if a.ops[d.k].start > a.ops[accepted].end {
			f.add(Violation{Anomaly: ShareRedeliveredAfterAccept, TopicPartition: p.tp, Group: g.name, Offsets: []int64{off},
				Ops: a.refs(accepted, d.k), Text: fmt.Sprintf("offset %d was delivered to share group %s again (op %d, delivery count %d) after its accept was acknowledged (op %d): an acknowledged record is never delivered again",
					off, g.name, a.ref(d.k).Index, d.count, a.ref(accepted).Index)})
			return
		}
	}
}

// shareLoss judges the acknowledged records of one partition the group subscribed to:
// each must be settled for the group (ShareLost) in time (opts.Unseen). It counts the
// group's deliveries of them into d.
func (a *analysis) shareLoss(f *findings, g *shareGroup, pid int32, opts ShareOptions, d *GroupDelivery) {
	p := a.parts[pid]
	records := g.records[pid]
	from := int64(0)
	if !opts.FromEarliest {
		from = math.MaxInt64
		for off, r := range records { // a minimum: order does not matter
			if len(r.deliveries) > 0 {
				from = min(from, off)
			}
		}
	}
	var lost []int32
	late, undecided, maybeAcked, maybeArchived, before := 0, 0, 0, 0, 0
	for vid := range p.values {
		v := &p.values[vid]
		if !a.acknowledged(v) {
			continue
		}
		off := a.ops[v.writer].offset
		if off == history.NoOffset {
			continue // acks=0: no offset to follow
		}
		if off < from {
			before++
			continue
		}
		r := records[off]
		if r == nil {
			r = &shareRecord{}
		}
		d.Values++
		switch len(r.deliveries) {
		case 0:
			d.Zero++
		case 1:
			d.Once++
		default:
			d.More++
		}
		deadline := opts.Unseen.deadline(a.ops[v.writer].end, a.end)
		settledAt, maybe := a.settled(r, opts.DeliveryCountLimit)
		switch {
		case settledAt <= deadline:
			continue
		case settledAt != math.MaxInt64:
			late++
		case maybe:
			maybeAcked++
			continue
		case a.mayHaveArchived(g, r, opts.DeliveryCountLimit):
			maybeArchived++
			continue
		case deadline > a.end:
			undecided++
			continue
		}
		lost = append(lost, int32(vid))
	}
	if before > 0 && from != math.MaxInt64 {
		f.note("group %s, %s: %s below offset %d, the lowest the group was delivered, not judged: with share.auto.offset.reset=latest the share-partition may have started after them",
			g.name, p.tp, plural(before, "acknowledged record"), from)
	}
	if before > 0 && from == math.MaxInt64 {
		f.note("group %s, %s: %s not judged: the group was delivered nothing from the partition, and with share.auto.offset.reset=latest it may have started after them",
			g.name, p.tp, plural(before, "acknowledged record"))
	}
	if maybeAcked > 0 {
		f.note("group %s, %s: %s not settled, but acknowledged (accept or reject) by an ack of unknown outcome, which may have taken effect",
			g.name, p.tp, plural(maybeAcked, "acknowledged record"))
	}
	if maybeArchived > 0 {
		f.note("group %s, %s: %s not settled, but enough of the group's polls of unknown outcome may have acquired them unseen to reach the delivery count limit %d, where the broker archives them",
			g.name, p.tp, plural(maybeArchived, "acknowledged record"), opts.DeliveryCountLimit)
	}
	if undecided > 0 {
		f.note("group %s, %s: %s not settled yet, with a deadline after the end of the history (t=%s): undecided",
			g.name, p.tp, plural(undecided, "acknowledged record"), time.Duration(a.end))
	}
	if len(lost) == 0 {
		return
	}
	values, offsets, writers := a.listValues(p, lost)
	within := "by the end of the history"
	if opts.Unseen.Within > 0 {
		within = fmt.Sprintf("within %s of max(ack, t=%s)", time.Duration(opts.Unseen.Within), time.Duration(opts.Unseen.After))
	}
	if late > 0 {
		within += fmt.Sprintf(" (%d settled late)", late)
	}
	f.add(Violation{Anomaly: ShareLost, TopicPartition: p.tp, Group: g.name, Offsets: offsets, Values: values, Ops: a.refs(writers...),
		Text: fmt.Sprintf("%s never settled for share group %s (accepted or rejected by an ok ack, or delivered at the delivery count limit %d) %s: %s",
			plural(len(lost), "acknowledged record"), g.name, opts.DeliveryCountLimit, within, quoteList(values, len(lost)))})
}

// settled is when the record was settled for the group, math.MaxInt64 if never: the
// completion of an ok accept or reject, or of a delivery at the limit (the broker
// archives it when that delivery ends). maybe says an ack of unknown outcome accepted
// or rejected it.
func (a *analysis) settled(r *shareRecord, limit int) (at int64, maybe bool) {
	at = math.MaxInt64
	for _, ack := range r.acks {
		if ack.typ == history.AckRelease {
			continue
		}
		switch o := &a.ops[ack.k]; o.typ {
		case history.Ok:
			at = min(at, o.end)
		case history.Info:
			maybe = true
		}
	}
	for _, d := range r.deliveries {
		if d.count >= limit {
			at = min(at, a.ops[d.k].end)
		}
	}
	return at, maybe
}

// mayHaveArchived reports whether the broker may have archived the record at the limit
// through deliveries no member saw: a poll of unknown outcome (info, or never
// completed) may have acquired it without the client learning so, and each
// acquisition counts. After its last seen delivery (count c), limit-c of the group's
// such polls must be able to follow.
func (a *analysis) mayHaveArchived(g *shareGroup, r *shareRecord, limit int) bool {
	last, since := 0, int64(math.MinInt64)
	for _, d := range r.deliveries {
		if d.count >= last {
			last, since = d.count, a.ops[d.k].start
		}
	}
	unseen := 0
	for _, k := range g.polls {
		if o := &a.ops[k]; o.typ == history.Info && o.end >= since {
			unseen++
		}
	}
	return last+unseen >= limit
}
