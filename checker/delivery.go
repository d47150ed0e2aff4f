package checker

import (
	"cmp"
	"fmt"
	"slices"

	"mqsim/model/history"
)

// Promise is what a system promises about delivery to each consumer group.
// A broken promise is a violation; what is not promised is only counted.
type Promise uint8

// Promises; combine with |.
const (
	// NoLoss: every acknowledged send is read at least once by each group.
	NoLoss Promise = 1 << iota
	// NoDuplicates: no acknowledged send is read more than once by a group.
	NoDuplicates

	AtMostOnce  = NoDuplicates
	AtLeastOnce = NoLoss
	ExactlyOnce = NoLoss | NoDuplicates
)

// ParsePromise reads a promise by its name: at-least-once, at-most-once or exactly-once.
func ParsePromise(name string) (Promise, error) {
	for _, p := range []Promise{AtLeastOnce, AtMostOnce, ExactlyOnce} {
		if p.String() == name {
			return p, nil
		}
	}
	return 0, fmt.Errorf("promise %q: want at-least-once, at-most-once or exactly-once", name)
}

func (p Promise) String() string {
	switch p {
	case ExactlyOnce:
		return "exactly-once"
	case AtLeastOnce:
		return "at-least-once"
	case AtMostOnce:
		return "at-most-once"
	case 0:
		return "none"
	}
	return fmt.Sprintf("Promise(%d)", uint8(p))
}

// Semantics is the delivery a group was observed to get in one run: a
// description of the counts, never a promise (that is Promise).
type Semantics string

// Observed semantics.
const (
	ObservedExactlyOnce Semantics = "exactly-once"  // every value read once
	ObservedAtLeastOnce Semantics = "at-least-once" // none missed, some read twice or more
	ObservedAtMostOnce  Semantics = "at-most-once"  // none read twice, some missed
	ObservedNone        Semantics = "none"          // some missed and some read twice
)

// GroupDelivery counts, for one consumer group, how many times its ok polls
// read each acknowledged value of the topics the group consumes.
type GroupDelivery struct {
	Group  string `json:"group"`
	Values int    `json:"values"` // acknowledged sends to the group's topics
	Zero   int    `json:"zero"`   // never read by the group
	Once   int    `json:"once"`
	More   int    `json:"more"` // read twice or more
	// Replayed counts the values counted once that were read again after a seek or an
	// offset reset of the group moved its position back over them: declared re-reads.
	// Skipped counts the values never read that such a move jumped over: declared
	// skips, not counted in Zero.
	Replayed int       `json:"replayed,omitempty"`
	Skipped  int       `json:"skipped,omitempty"`
	Observed Semantics `json:"observed"`
}

func (d GroupDelivery) line() string {
	s := fmt.Sprintf("group %s: %d acknowledged values read 0 times: %d, once: %d, more: %d; this run: %s",
		d.Group, d.Values, d.Zero, d.Once, d.More, d.Observed.inThisRun())
	if d.Replayed > 0 || d.Skipped > 0 {
		s += fmt.Sprintf("; declared by a seek or offset reset: %d read again, %d skipped", d.Replayed, d.Skipped)
	}
	return s
}

// inThisRun says what the counts show about this run only, in words that
// cannot be read as a promise: a run where each value was read once says
// nothing about the next run (see notes/delivery-semantics.md).
func (s Semantics) inThisRun() string {
	switch s {
	case ObservedExactlyOnce:
		return "each value read once"
	case ObservedAtLeastOnce:
		return "none missed, some read more than once"
	case ObservedAtMostOnce:
		return "none read more than once, some missed"
	}
	return "some missed, some read more than once"
}

// CheckDelivery counts, per consumer group, how many times the group's ok
// polls read each acknowledged (ok) send to the topics the group consumes
// (those it subscribed to, was assigned, or read). Polls without a group
// are not counted. A value read zero times breaks NoLoss, one read twice or
// more breaks NoDuplicates; findings outside the promise are only counted
// and noted.
//
// An ok seek of the group (a member's seek, or the group tool's offset reset)
// is the application's word: it starts a new pass over the offsets at and
// after its target, so a value read once before it and once after is read
// once per pass, a declared re-read (Replayed), not a duplicate; a value below
// its target the group had not read yet is a declared skip (Skipped), not a
// loss. A value read twice within one pass is still a duplicate.
func CheckDelivery(h history.History, promise Promise) (Report, error) {
	a, err := analyze(h)
	if err != nil {
		return Report{}, err
	}
	return a.delivery(promise, nil), nil
}

// groupReads is what one group read: reads[p][v] counts ok-poll records of
// value v of partition p; pass[p][v] those since the last seek of the group that
// moved back over v, most[p][v] the most in one pass before it; skipped[p][v] says a
// seek jumped over v before the group read it.
type groupReads struct {
	name              string
	topics            map[string]bool
	reads, pass, most [][]int32
	skipped           [][]bool
}

// seek starts a new pass at offset at of partition part: the values at or after it
// may be read again; those before it not read yet are skipped on purpose.
func (g *groupReads) seek(p *partition, part int32, at int64) {
	g.ensure(part, len(p.values))
	for vid := range p.values {
		v := &p.values[vid]
		switch {
		case v.minIdx < 0:
		case v.offset >= at:
			g.most[part][vid] = max(g.most[part][vid], g.pass[part][vid])
			g.pass[part][vid] = 0
		case g.reads[part][vid] == 0:
			g.skipped[part][vid] = true
		}
	}
}

func (g *groupReads) ensure(part int32, n int) {
	if g.reads[part] == nil {
		g.reads[part], g.pass[part], g.most[part] = make([]int32, n), make([]int32, n), make([]int32, n)
		g.skipped[part] = make([]bool, n)
	}
}

func (a *analysis) delivery(promise Promise, pipelines []Pipeline) Report {
	f := newFindings(DeliveryChecker, nil)
	for _, pl := range pipelines {
		a.exactlyOnce(f, pl)
	}
	for _, g := range a.groupReads() {
		if a.shareGroup[a.groupOf[g.name]] {
			continue // its members share its records: the share checker counts and judges them
		}
		d := GroupDelivery{Group: g.name}
		for pid, p := range a.parts {
			if !g.topics[p.tp.Topic] {
				continue
			}
			var missed, repeated []int32
			for vid := range p.values {
				if !a.acknowledged(&p.values[vid]) {
					continue
				}
				d.Values++
				switch n, most := g.count(pid, vid); {
				case n == 0 && g.skippedOver(pid, vid):
					d.Skipped++
				case n == 0:
					d.Zero++
					missed = append(missed, int32(vid))
				case most == 1:
					d.Once++
					if n > 1 {
						d.Replayed++
					}
				default:
					d.More++
					repeated = append(repeated, int32(vid))
				}
			}
			if promise&NoLoss != 0 && len(missed) > 0 {
				a.deliveryViolation(f, g, p, Undelivered, missed, "never read by the group")
			}
			if promise&NoDuplicates != 0 && len(repeated) > 0 {
				a.deliveryViolation(f, g, p, Redelivered, repeated, "read more than once by the group")
			}
		}
		d.Observed = observed(d)
		if promise&NoLoss == 0 && d.Zero > 0 {
			f.note("group %s: %s never read (allowed: promise %s)", g.name, plural(d.Zero, "acknowledged value"), promise)
		}
		if promise&NoDuplicates == 0 && d.More > 0 {
			f.note("group %s: %s read more than once (allowed: promise %s)", g.name, plural(d.More, "acknowledged value"), promise)
		}
		f.report.Delivery = append(f.report.Delivery, d)
	}
	return f.done()
}

func observed(d GroupDelivery) Semantics {
	switch {
	case d.Zero == 0 && d.More == 0:
		return ObservedExactlyOnce
	case d.Zero == 0:
		return ObservedAtLeastOnce
	case d.More == 0:
		return ObservedAtMostOnce
	}
	return ObservedNone
}

// count is how many times the group read value vid of partition pid, and the most in
// one pass.
func (g *groupReads) count(pid, vid int) (n, most int32) {
	if pid >= len(g.reads) || vid >= len(g.reads[pid]) {
		return 0, 0
	}
	return g.reads[pid][vid], max(g.most[pid][vid], g.pass[pid][vid])
}

func (g *groupReads) skippedOver(pid, vid int) bool {
	return pid < len(g.skipped) && vid < len(g.skipped[pid]) && g.skipped[pid][vid]
}

// groupReads gathers, per named group sorted by name, its topics and read
// counts.
func (a *analysis) groupReads() []*groupReads {
	groups := make([]*groupReads, len(a.groups))
	for i, name := range a.groups {
		n := len(a.parts)
		groups[i] = &groupReads{name: name, topics: map[string]bool{}, reads: make([][]int32, n), pass: make([][]int32, n),
			most: make([][]int32, n), skipped: make([][]bool, n)}
	}
	for k := range a.ops {
		o := &a.ops[k]
		if o.group < 0 {
			continue
		}
		g := groups[o.group]
		switch o.f {
		case history.Assign, history.Subscribe:
			assign := a.value(o).Assign
			for _, t := range assign.Topics {
				g.topics[t] = true
			}
			for _, tp := range assign.Partitions {
				g.topics[tp.Topic] = true
			}
		case history.Poll:
			for _, r := range a.readsOf(o) {
				g.topics[a.parts[r.part].tp.Topic] = true
				if !o.ok() || r.n == 0 {
					continue
				}
				g.ensure(r.part, len(a.parts[r.part].values))
				for _, rec := range a.recordsOf(r) {
					g.reads[r.part][rec.vid]++
					g.pass[r.part][rec.vid]++
				}
			}
		case history.Seek:
			if !o.ok() {
				continue // a seek of unknown outcome declares nothing
			}
			for _, po := range a.value(o).Seek.Offsets {
				g.topics[po.Topic] = true
				if pid, ok := a.partOf[po.TopicPartition]; ok {
					g.seek(a.parts[pid], pid, po.Offset)
				}
			}
		}
	}
	slices.SortFunc(groups, func(x, y *groupReads) int { return cmp.Compare(x.name, y.name) })
	return groups
}

func (a *analysis) deliveryViolation(f *findings, g *groupReads, p *partition, anomaly Anomaly, vids []int32, what string) {
	values, offsets, writers := a.listValues(p, vids)
	f.add(Violation{Anomaly: anomaly, TopicPartition: p.tp, Group: g.name, Offsets: offsets, Values: values,
		Ops:  a.refs(writers...),
		Text: fmt.Sprintf("%s %s: %s", plural(len(vids), "acknowledged value"), what, quoteList(values, len(vids)))})
}
