package checker

import (
	"cmp"
	"fmt"
	"slices"

	"mqsim/model/history"
)

// Pipeline names a consume-transform-produce application the system promises
// exactly-once to: it reads topic Input and writes, for each input record, one
// record of the same value to topic Output.
type Pipeline struct {
	Input, Output string
}

// exactlyOnce holds each pipeline to its promise: every input value that
// surely took effect (its send, alone or in a transaction, committed: ok, or
// info and read) appears in the output exactly once, counted as the distinct
// output offsets where ok read_committed polls read it (missing-output,
// duplicate-output). Copies only a read_uncommitted poll saw, such as the
// output of an aborted attempt, do not count: read_committed consumers never
// see them. The history must read the output to its end at read_committed
// (final polls, as in Jepsen), or unread values count as missing.
func (a *analysis) exactlyOnce(f *findings, pl Pipeline) {
	copies := map[string][]place{} // output value -> where read_committed polls read it
	readers := map[place]int32{}   // the first poll to read each place
	for k := range a.ops {
		o := &a.ops[k]
		if o.f != history.Poll || !o.rc || !o.ok() {
			continue
		}
		for _, r := range a.readsOf(o) {
			p := a.parts[r.part]
			if p.tp.Topic != pl.Output {
				continue
			}
			for _, rec := range a.recordsOf(r) {
				at := place{r.part, rec.offset}
				s := p.values[rec.vid].s
				if _, ok := readers[at]; !ok {
					readers[at] = int32(k)
					copies[s] = append(copies[s], at)
				}
			}
		}
	}
	for _, p := range a.parts {
		if p.tp.Topic != pl.Input {
			continue
		}
		var missing []int32
		for vid := range p.values {
			v := &p.values[vid]
			if !a.committed(v) {
				continue
			}
			at := copies[v.s]
			switch {
			case len(at) == 0:
				missing = append(missing, int32(vid))
			case len(at) > 1:
				slices.SortFunc(at, func(x, y place) int { return cmp.Or(cmp.Compare(x.part, y.part), cmp.Compare(x.offset, y.offset)) })
				ops := []int32{v.writer}
				var offsets []int64
				for _, c := range at {
					ops = append(ops, readers[c])
					offsets = append(offsets, c.offset)
				}
				f.add(Violation{Anomaly: DuplicateOutput, TopicPartition: a.parts[at[0].part].tp, Offsets: offsets,
					Values: []string{v.s}, Ops: a.refs(ops...),
					Text: fmt.Sprintf("pipeline %s -> %s: input value %q appears %d times in the output, at %s, as read_committed polls read it",
						pl.Input, pl.Output, v.s, len(at), a.places(at))})
			}
		}
		if len(missing) > 0 {
			values, offsets, writers := a.listValues(p, missing)
			f.add(Violation{Anomaly: MissingOutput, TopicPartition: p.tp, Offsets: offsets, Values: values,
				Ops: a.refs(writers...),
				Text: fmt.Sprintf("pipeline %s -> %s: %s of %s never read in the output by a read_committed poll: %s",
					pl.Input, pl.Output, plural(len(missing), "committed input value"), p.tp, quoteList(values, len(missing)))})
		}
	}
}

// place is an offset of a partition.
type place struct {
	part   int32
	offset int64
}

// places renders output places as "out-0@3, out-1@7".
func (a *analysis) places(at []place) string {
	s := ""
	for i, c := range at {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s@%d", a.parts[c.part].tp, c.offset)
	}
	return s
}
