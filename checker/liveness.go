package checker

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"mqsim/model/history"
)

// LivenessOptions configures CheckLiveness.
type LivenessOptions struct {
	// HealedAt is when the faults ended, in virtual nanoseconds: the time of
	// the fault plan's last action (the final heal or restart).
	HealedAt int64
	// Within is the bound for readers, in virtual nanoseconds: every reader
	// must read every acknowledged value it is expected to read within Within
	// after max(the value's ack, HealedAt). It includes the quiet period the
	// system needs to recover after the heal (fencing, elections, ISR
	// changes), so in practice it is at least a session timeout. 0: readers
	// are not judged.
	Within int64
	// AckWithin is the bound for writers: every send invoked at or after
	// HealedAt must complete ok within AckWithin of its invocation (failed,
	// unknown or still waiting is Unavailable). "Healed" may leave faults in
	// force that the configuration tolerates (one lagging follower, one
	// crashed broker under rf=3, min.insync.replicas=2): that is how a stuck
	// ISR shows. 0: writers are not judged. Within or AckWithin must be > 0.
	AckWithin int64
	// Unrecoverable lists partitions that cannot serve again without an
	// operator (all replicas gone, or offline with its in-sync replicas gone
	// for good): judged by the caller, who knows the system (see
	// model/cluster's Unrecoverable). Their values are not judged; a note
	// says why.
	Unrecoverable []Unrecoverable
}

// Unrecoverable is a partition that cannot recover by itself, and why.
type Unrecoverable struct {
	history.TopicPartition
	Why string
}

// CheckLiveness judges recovery: once the faults have healed and the
// quiet period has passed, every reader must read every acknowledged value
// it is expected to read within a bound (Jepsen's unseen cannot tell a lost
// value from a late one; a deterministic simulator knows when the faults
// ended, so it can ask for bounded recency).
//
// A reader is a consumer group, or a group-less consumer process. Only
// readers that invoked a poll at or after HealedAt are judged. A reader is
// expected to read the acknowledged values of the partitions it consumes
// (its latest assignment, or subscribed topics; else those it read): all of
// them after an assignment that seeks to the beginning, otherwise those at
// or after the first offset it read there, and those acknowledged after its
// first ok poll (when its position was surely set).
//
// A value read after its deadline is reported as read late; a value whose
// deadline lies after the end of the history is undecided and only noted.
// Values of an Unrecoverable partition are noted, never violations: a
// cluster that lost every copy of a partition is unavailable, not slow.
func CheckLiveness(h history.History, opts LivenessOptions) (Report, error) {
	a, err := analyze(h)
	if err != nil {
		return Report{}, err
	}
	return a.liveness(opts)
}

// reader is one consumer group or group-less process, as liveness sees it.
type reader struct {
	name   string // "group g" or "process 3"
	group  string
	active bool // invoked a poll at or after HealedAt
	// assign is a process's latest ok or info assignment; nil if none.
	assign *history.AssignValue
	// topics are a group's topics (subscribed, assigned or read).
	topics map[string]bool
	// firstOkEnd is when its first ok poll completed (MaxInt64 if none).
	firstOkEnd int64
	// Per partition: the lowest offset an ok poll read (MaxInt64 if none),
	// and per value the completion of the first ok poll that read it.
	minRead []int64
	readAt  [][]int64
}

func newReader(name, group string, parts int) *reader {
	r := &reader{name: name, group: group, firstOkEnd: math.MaxInt64, minRead: make([]int64, parts),
		readAt: make([][]int64, parts)}
	for i := range r.minRead {
		r.minRead[i] = math.MaxInt64
	}
	return r
}

func (r *reader) covers(p *partition, pid int) bool {
	switch {
	case r.topics != nil:
		return r.topics[p.tp.Topic]
	case r.assign != nil:
		return r.assign.Covers(p.tp)
	}
	return r.minRead[pid] != math.MaxInt64
}

func (r *reader) firstRead(pid int, vid int32) int64 {
	if r.readAt[pid] == nil {
		return math.MaxInt64
	}
	return r.readAt[pid][vid]
}

func (a *analysis) liveness(opts LivenessOptions) (Report, error) {
	if opts.Within < 0 || opts.AckWithin < 0 || opts.Within == 0 && opts.AckWithin == 0 {
		return Report{}, errors.New("checker: liveness needs a bound: Within or AckWithin must be positive, neither negative")
	}
	f := newFindings(LivenessChecker, nil)
	if opts.AckWithin > 0 {
		a.writeLiveness(f, opts)
	}
	if opts.Within == 0 {
		return f.done(), nil
	}
	readers := a.readers(opts.HealedAt)
	var active []*reader
	for _, r := range readers {
		// A share group reads each record once for all its members, and may never read
		// one it archived at the delivery count limit through deliveries nobody saw:
		// share-lost, under the same deadline, judges it instead.
		if r.active && !(r.group != "" && a.shareGroup[a.groupOf[r.group]]) {
			active = append(active, r)
		}
	}
	heal := fmt.Sprintf("t=%s", time.Duration(opts.HealedAt))
	if len(active) == 0 {
		f.note("no reader polled at or after the heal at %s: nothing to judge", heal)
		return f.done(), nil
	}
	unrecoverable := map[history.TopicPartition]string{}
	for _, u := range opts.Unrecoverable {
		unrecoverable[u.TopicPartition] = u.Why
	}
	for pid, p := range a.parts {
		if why, ok := unrecoverable[p.tp]; ok {
			n := 0
			for vid := range p.values {
				if a.acknowledged(&p.values[vid]) {
					n++
				}
			}
			f.note("%s is unrecoverable (%s): its %s not judged", p.tp, why, plural(n, "acknowledged value"))
			continue
		}
		for _, r := range active {
			if r.covers(p, pid) {
				a.readerLiveness(f, r, p, pid, opts)
			}
		}
	}
	return f.done(), nil
}

// readers builds every reader from the history, groups sorted by name
// first, then processes by number.
func (a *analysis) readers(healedAt int64) []*reader {
	groups := make([]*reader, len(a.groups))
	for i, name := range a.groups {
		groups[i] = newReader("group "+name, name, len(a.parts))
		groups[i].topics = map[string]bool{}
	}
	procs := map[int]*reader{}
	var procIDs []int
	get := func(o *op) *reader {
		if o.group >= 0 {
			return groups[o.group]
		}
		r := procs[o.process]
		if r == nil {
			r = newReader(fmt.Sprintf("process %d", o.process), "", len(a.parts))
			procs[o.process] = r
			procIDs = append(procIDs, o.process)
		}
		return r
	}
	for k := range a.ops {
		o := &a.ops[k]
		switch o.f {
		case history.Assign, history.Subscribe:
			if o.comp < 0 || o.typ == history.Fail {
				continue // changed nothing
			}
			r, assign := get(o), a.value(o).Assign
			if r.topics == nil {
				r.assign = assign
				continue
			}
			for _, t := range assign.Topics {
				r.topics[t] = true
			}
			for _, tp := range assign.Partitions {
				r.topics[tp.Topic] = true
			}
		case history.Poll:
			r := get(o)
			if o.start >= healedAt {
				r.active = true
			}
			if !o.ok() {
				continue
			}
			r.firstOkEnd = min(r.firstOkEnd, o.end)
			for _, rd := range a.readsOf(o) {
				if r.topics != nil {
					r.topics[a.parts[rd.part].tp.Topic] = true
				}
				for _, rec := range a.recordsOf(rd) {
					r.minRead[rd.part] = min(r.minRead[rd.part], rec.offset)
					if r.readAt[rd.part] == nil {
						r.readAt[rd.part] = make([]int64, len(a.parts[rd.part].values))
						for i := range r.readAt[rd.part] {
							r.readAt[rd.part][i] = math.MaxInt64
						}
					}
					r.readAt[rd.part][rec.vid] = min(r.readAt[rd.part][rec.vid], o.end)
				}
			}
		}
	}
	slices.SortFunc(groups, func(x, y *reader) int { return cmp.Compare(x.group, y.group) })
	slices.Sort(procIDs)
	for _, id := range procIDs {
		groups = append(groups, procs[id])
	}
	return groups
}

// readerLiveness judges one reader on one partition.
func (a *analysis) readerLiveness(f *findings, r *reader, p *partition, pid int, opts LivenessOptions) {
	seek := r.assign != nil && r.assign.SeekToBeginning
	var missed []int32
	late, undecided := 0, 0
	first := int64(math.MaxInt64) // the earliest deadline missed
	for vid := range p.values {
		v := &p.values[vid]
		if !a.acknowledged(v) {
			continue
		}
		w := &a.ops[v.writer]
		if !seek && !(w.offset != history.NoOffset && w.offset >= r.minRead[pid]) && w.end < r.firstOkEnd {
			continue // before where this reader started
		}
		deadline := max(w.end, opts.HealedAt)
		if deadline > math.MaxInt64-opts.Within {
			deadline = math.MaxInt64
		} else {
			deadline += opts.Within
		}
		readAt := r.firstRead(pid, int32(vid))
		switch {
		case readAt <= deadline:
			continue
		case deadline > a.end:
			undecided++
			continue
		case readAt != math.MaxInt64:
			late++
		}
		missed = append(missed, int32(vid))
		first = min(first, deadline)
	}
	if undecided > 0 {
		f.note("%s on %s: %s not read yet, with a deadline after the end of the history (t=%s): undecided",
			r.name, p.tp, plural(undecided, "acknowledged value"), time.Duration(a.end))
	}
	if len(missed) == 0 {
		return
	}
	slices.SortFunc(missed, func(x, y int32) int {
		ox, oy := a.ops[p.values[x].writer].offset, a.ops[p.values[y].writer].offset
		return cmp.Or(cmp.Compare(uint64(ox), uint64(oy)), cmp.Compare(p.values[x].s, p.values[y].s))
	})
	values, offsets, writers := a.listValues(p, missed)
	var how strings.Builder
	fmt.Fprintf(&how, "%s did not read %s within %s of max(ack, heal at t=%s)", r.name,
		plural(len(missed), "acknowledged value"), time.Duration(opts.Within), time.Duration(opts.HealedAt))
	if late > 0 {
		fmt.Fprintf(&how, " (%d read late)", late)
	}
	f.addAt(Violation{Anomaly: Unconsumed, TopicPartition: p.tp, Group: r.group, Offsets: offsets, Values: values,
		Ops: a.refs(writers...), Time: first, Text: how.String() + ": " + quoteList(values, len(missed))})
}

// writeLiveness judges the sends invoked at or after the heal: each must be acknowledged
// within AckWithin. One violation per partition names the sends that were not.
func (a *analysis) writeLiveness(f *findings, opts LivenessOptions) {
	undecided := 0
	type miss struct {
		ops   []int32
		first int64
	}
	missed := map[int32]*miss{}
	var parts []int32
	for k := range a.ops {
		o := &a.ops[k]
		// A transaction's sends are acknowledged by its commit, which the
		// application may abort by choice: availability asks about sends alone.
		if o.f != history.Send || o.txn >= 0 || o.start < opts.HealedAt {
			continue
		}
		deadline := o.start + opts.AckWithin
		switch {
		case o.ok() && o.end <= deadline:
			continue
		case !o.ok() && o.comp < 0 && deadline > a.end:
			undecided++ // still waiting when the history ends, and not yet late
			continue
		}
		m := missed[o.part]
		if m == nil {
			m = &miss{first: deadline}
			missed[o.part] = m
			parts = append(parts, o.part)
		}
		m.ops = append(m.ops, int32(k))
		m.first = min(m.first, deadline)
	}
	if undecided > 0 {
		f.note("%s invoked after the heal at t=%s still waiting at the end of the history, not yet past %s: undecided",
			plural(undecided, "send"), time.Duration(opts.HealedAt), time.Duration(opts.AckWithin))
	}
	slices.Sort(parts)
	for _, pid := range parts {
		m := missed[pid]
		var values []string
		var why []string
		for _, k := range m.ops[:min(len(m.ops), listMax)] {
			o := &a.ops[k]
			values = append(values, a.parts[o.part].values[o.vid].s)
			switch {
			case o.comp < 0:
				why = append(why, "no answer")
			case o.ok():
				why = append(why, fmt.Sprintf("ok after %s", time.Duration(o.end-o.start)))
			case o.typ == history.Fail:
				why = append(why, fmt.Sprintf("failed after %s", time.Duration(o.end-o.start)))
			default:
				why = append(why, fmt.Sprintf("unknown after %s", time.Duration(o.end-o.start)))
			}
		}
		f.addAt(Violation{Anomaly: Unavailable, TopicPartition: a.parts[pid].tp, Values: values, Ops: a.refs(m.ops...), Time: m.first,
			Text: fmt.Sprintf("%s invoked after the heal at t=%s not acknowledged within %s: %s (%s)", plural(len(m.ops), "send"),
				time.Duration(opts.HealedAt), time.Duration(opts.AckWithin), quoteList(values, len(m.ops)), strings.Join(why, ", "))})
	}
}
