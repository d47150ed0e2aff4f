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
	Group    string    `json:"group"`
	Values   int       `json:"values"` // acknowledged sends to the group's topics
	Zero     int       `json:"zero"`   // never read by the group
	Once     int       `json:"once"`
	More     int       `json:"more"` // read twice or more
	Observed Semantics `json:"observed"`
}

func (d GroupDelivery) line() string {
	return fmt.Sprintf("group %s: %d acknowledged values read 0 times: %d, once: %d, more: %d; this run: %s",
		d.Group, d.Values, d.Zero, d.Once, d.More, d.Observed.inThisRun())
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
func CheckDelivery(h history.History, promise Promise) (Report, error) {
	a, err := analyze(h)
	if err != nil {
		return Report{}, err
	}
	return a.delivery(promise, nil), nil
}

// groupReads is what one group read: reads[p][v] counts ok-poll records of
// value v of partition p.
type groupReads struct {
	name   string
	topics map[string]bool
	reads  [][]int32
}

func (a *analysis) delivery(promise Promise, pipelines []Pipeline) Report {
	f := newFindings(DeliveryChecker, nil)
	for _, pl := range pipelines {
		a.exactlyOnce(f, pl)
	}
	for _, g := range a.groupReads() {
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
				switch n := g.count(pid, vid); {
				case n == 0:
					d.Zero++
					missed = append(missed, int32(vid))
				case n == 1:
					d.Once++
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

func (g *groupReads) count(pid, vid int) int32 {
	if pid >= len(g.reads) || vid >= len(g.reads[pid]) {
		return 0
	}
	return g.reads[pid][vid]
}

// groupReads gathers, per named group sorted by name, its topics and read
// counts.
func (a *analysis) groupReads() []*groupReads {
	groups := make([]*groupReads, len(a.groups))
	for i, name := range a.groups {
		groups[i] = &groupReads{name: name, topics: map[string]bool{}, reads: make([][]int32, len(a.parts))}
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
				if g.reads[r.part] == nil {
					g.reads[r.part] = make([]int32, len(a.parts[r.part].values))
				}
				for _, rec := range a.recordsOf(r) {
					g.reads[r.part][rec.vid]++
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
