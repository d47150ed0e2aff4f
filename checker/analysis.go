package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"mqsim/model/history"
)

// op is one operation: an invocation paired with its completion, if any,
// with what the checkers need copied out of the history once, so later
// passes read compact arrays instead of chasing the history's pointers.
type op struct {
	inv, comp  int32 // history indexes; comp is -1 if it never completed
	at         int32 // the completion's index (the invocation's if none): it carries the value
	f          history.Func
	typ        history.Type // completion type; Info if it never completed
	process    int
	start, end int64 // end is math.MaxInt64 if it never completed
	// A send's partition and value ids, and the offset it learned.
	part, vid int32
	offset    int64
	// A poll's reads are analysis.reads[firstRead : firstRead+nreads].
	firstRead, nreads int32
	// group is the interned group of a poll, assign, subscribe or seek; -1 if none.
	group int32
	// A transaction's micro-ops follow it in analysis.ops as ops of their own
	// (f send or poll, with the transaction's type, times and history index):
	// txn is, on a micro-op, the index of its transaction in analysis.ops, -1
	// elsewhere; micro is its position in the transaction's ops. On the
	// transaction, nmicro counts its micro-ops.
	txn, micro, nmicro int32
	// rc: a poll at isolation.level=read_committed.
	rc bool
	// share: a share consumer's poll (KIP-932), judged by the share checker, not by
	// the order checks of a consumer's position.
	share bool
	// proven: an info transaction that surely committed (a read_committed poll
	// read one of its sends).
	proven bool
}

func (o *op) ok() bool { return o.typ == history.Ok }

// read is what one poll returned for one partition:
// analysis.records[first : first+n].
type read struct {
	part, first, n int32
}

// record is one polled record.
type record struct {
	offset int64
	vid    int32
}

// observation is one claim that offset holds value vid, made by op.
type observation struct {
	offset int64
	vid    int32
	op     int32
}

// value is what the history says about one value of one partition.
type value struct {
	s       string
	writer  int32 // first op that sent it; -1 if none did
	writers int32 // ops that sent it (values should be unique: 1)
	okReads int32 // records of ok polls that returned it
	// firstRead is the ok poll that read it and completed first; -1 if none.
	// firstRCRead is the same among read_committed polls.
	firstRead, firstRCRead int32
	// minIdx, maxIdx are its first and last dense index in the version
	// order; -1 when no observation placed it.
	minIdx, maxIdx int32
	offset         int64 // its lowest observed offset, when placed
	nOffsets       int32 // distinct offsets observed
}

// partition holds the version order of one topic-partition.
type partition struct {
	tp     history.TopicPartition
	ids    map[string]int32 // value -> index in values
	values []value
	// obs are the deduplicated observations sorted by (offset, value, op):
	// all poll records (any completion type) and the offsets of sends that
	// surely committed, as Jepsen infers version orders.
	obs []observation
	// offsets are the distinct observed offsets, ascending; offsets[i] has
	// dense index i (gaps dropped, as Jepsen does).
	offsets []int64
	// multi lists the observations of values seen at two or more offsets.
	multi map[int32][]observation
	// rcIdx is, per dense index, its index among the offsets a read_committed
	// poll may return (-1 where every value observed is a send of a
	// transaction not known to have committed); rcFull maps it back.
	rcIdx, rcFull []int32
}

func (p *partition) intern(s string) int32 {
	if id, ok := p.ids[s]; ok {
		return id
	}
	id := int32(len(p.values))
	p.ids[s] = id
	p.values = append(p.values, value{s: s, writer: -1, firstRead: -1, firstRCRead: -1, minIdx: -1, maxIdx: -1})
	return id
}

// indexOf is the dense index of an observed offset, -1 if never observed.
func (p *partition) indexOf(offset int64) int32 {
	i, found := slices.BinarySearch(p.offsets, offset)
	if !found {
		return -1
	}
	return int32(i)
}

// offsetsOf lists every offset v was observed at.
func (p *partition) offsetsOf(vid int32) []int64 {
	v := &p.values[vid]
	if v.nOffsets <= 1 {
		if v.minIdx < 0 {
			return nil
		}
		return []int64{v.offset}
	}
	out := make([]int64, len(p.multi[vid]))
	for i, o := range p.multi[vid] {
		out[i] = o.offset
	}
	return out
}

// analysis is the index every checker shares: operations paired and put in
// invocation order, partitions in first-seen order, each with its values and
// inferred version order. Building it is O(n log n) in the history size.
type analysis struct {
	h       history.History
	ops     []op    // in invocation order
	opOf    []int32 // history index -> index in ops
	reads   []read
	records []record
	parts   []*partition
	partOf  map[history.TopicPartition]int32
	// lastPart is the partition partition returned last, -1 before the first.
	lastPart int32
	// positions is readPositions' buffer, reused from read to read.
	positions []position
	groups    []string // in first-seen order
	groupOf   map[string]int32
	// shareGroup says, per group, that it is a share group: one of its polls is a
	// share poll, or it acknowledged records (an ack op).
	shareGroup []bool
	end        int64 // time of the last op
	// compacted is LogOptions.Compacted, for the log analysis; lastWrites caches
	// lastWriteOfKey.
	compacted  bool
	lastWrites map[*partition]map[string]keyWrite
}

func analyze(h history.History) (*analysis, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if len(h) >= math.MaxInt32 {
		return nil, fmt.Errorf("checker: %d ops are more than the analysis indexes", len(h))
	}
	invocations := 0
	for i := range h {
		if h[i].Type == history.Invoke {
			invocations++
		}
	}
	a := &analysis{h: h, opOf: make([]int32, len(h)),
		partOf: map[history.TopicPartition]int32{}, groupOf: map[string]int32{}, lastPart: -1}
	paired := make([]op, 0, invocations)
	pairedOf := a.opOf // the same until transactions are expanded
	for i := range h {
		o := &h[i]
		if o.Type == history.Invoke {
			pairedOf[i] = int32(len(paired))
			paired = append(paired, op{inv: int32(i), comp: -1, at: int32(i), f: o.F, typ: history.Info,
				process: o.Process, start: o.Time, end: math.MaxInt64, group: -1, txn: -1, micro: -1})
			continue
		}
		k := pairedOf[o.Invoke]
		pairedOf[i] = k
		p := &paired[k]
		p.comp, p.at, p.typ, p.end = int32(i), int32(i), o.Type, o.Time
	}
	if a.ops = a.expandTxns(paired); len(a.ops) != len(paired) {
		for k := range a.ops {
			if o := &a.ops[k]; o.txn < 0 {
				a.opOf[o.inv] = int32(k)
				if o.comp >= 0 {
					a.opOf[o.comp] = int32(k)
				}
			}
		}
	}
	if len(h) > 0 {
		a.end = h[len(h)-1].Time
	}
	a.collect()
	a.proveTxns()
	claimed := a.uncommittedOffsets()
	for pid, p := range a.parts {
		a.addCommittedSends(p)
		p.order()
		a.visibleToReadCommitted(int32(pid), p, claimed)
	}
	return a, nil
}

// uncommittedOffsets are, by partition, the offsets learned by sends of
// transactions not known to have committed.
func (a *analysis) uncommittedOffsets() map[int32]map[int64]bool {
	out := map[int32]map[int64]bool{}
	for k := range a.ops {
		o := &a.ops[k]
		if o.f != history.Send || o.txn < 0 || o.offset == history.NoOffset || a.txnCommitted(o.txn) {
			continue
		}
		if out[o.part] == nil {
			out[o.part] = map[int64]bool{}
		}
		out[o.part][o.offset] = true
	}
	return out
}

// expandTxns puts each transaction's micro-ops right after it, as ops of their
// own, so that every check of sends and polls sees them (in invocation order,
// the order processAnomalies walks).
func (a *analysis) expandTxns(paired []op) []op {
	out := paired
	for k := range paired {
		if paired[k].f == history.Txn && paired[k].comp >= 0 {
			out = nil
			break
		}
	}
	if out != nil {
		return out // no completed transaction: nothing to expand
	}
	out = make([]op, 0, len(paired))
	for _, o := range paired {
		t := int32(len(out))
		out = append(out, o)
		if o.f != history.Txn || o.comp < 0 {
			continue
		}
		micros := a.h[o.comp].Txn.Ops
		out[t].nmicro = int32(len(micros))
		for i, m := range micros {
			sub := o
			sub.f, sub.txn, sub.micro = m.F, t, int32(i)
			out = append(out, sub)
		}
	}
	return out
}

// rank orders what a send's completion says about its effect: a value sent
// by several ops is judged by its surest send.
func rank(t history.Type) int {
	switch t {
	case history.Ok:
		return 3
	case history.Info:
		return 2
	}
	return 1
}

// proveTxns marks the info transactions that surely committed: a
// read_committed poll read one of their sends (Jepsen's must-have-committed?,
// with only read_committed reads as proof: a read_uncommitted poll also
// returns the writes of open and aborted transactions).
func (a *analysis) proveTxns() {
	for _, p := range a.parts {
		for vid := range p.values {
			v := &p.values[vid]
			if v.firstRCRead < 0 || v.writer < 0 {
				continue
			}
			if t := a.ops[v.writer].txn; t >= 0 && a.ops[t].typ == history.Info {
				a.ops[t].proven = true
			}
		}
	}
}

// visibleToReadCommitted numbers the dense indexes a read_committed poll may
// return: those holding a value that is not the send of a transaction not
// known to have committed. An offset that such a send learned is its, whatever
// the value's other sends: a value retried after an abort sits twice in the
// log, and only the committed copy is visible.
func (a *analysis) visibleToReadCommitted(pid int32, p *partition, claimed map[int32]map[int64]bool) {
	p.rcIdx = make([]int32, len(p.offsets))
	for i := range p.rcIdx {
		p.rcIdx[i] = -1
	}
	uncommitted := func(w int32) bool { return w >= 0 && a.ops[w].txn >= 0 && !a.txnCommitted(a.ops[w].txn) }
	for _, o := range p.obs {
		idx := p.indexOf(o.offset)
		if p.rcIdx[idx] >= 0 || claimed[pid][o.offset] || uncommitted(p.values[o.vid].writer) {
			continue
		}
		p.rcIdx[idx] = 0
	}
	for i, v := range p.rcIdx {
		if v >= 0 {
			p.rcIdx[i] = int32(len(p.rcFull))
			p.rcFull = append(p.rcFull, int32(i))
		}
	}
}

// txnCommitted reports whether transaction t surely committed.
func (a *analysis) txnCommitted(t int32) bool {
	return a.ops[t].ok() || a.ops[t].proven
}

func (a *analysis) partition(tp history.TopicPartition) (*partition, int32) {
	if id := a.lastPart; id >= 0 && a.parts[id].tp == tp { // ops of one partition come in runs
		return a.parts[id], id
	}
	if id, ok := a.partOf[tp]; ok {
		a.lastPart = id
		return a.parts[id], id
	}
	id := int32(len(a.parts))
	a.partOf[tp] = id
	a.lastPart = id
	a.parts = append(a.parts, &partition{tp: tp, ids: map[string]int32{}})
	return a.parts[id], id
}

func (a *analysis) group(name string) int32 {
	if name == "" {
		return -1
	}
	if id, ok := a.groupOf[name]; ok {
		return id
	}
	id := int32(len(a.groups))
	a.groupOf[name] = id
	a.groups = append(a.groups, name)
	a.shareGroup = append(a.shareGroup, false)
	return id
}

// collect copies sends and polls out of the history: every sent value with
// its writer, every polled record as an observation.
func (a *analysis) collect() {
	for k := range a.ops {
		o := &a.ops[k]
		switch o.f {
		case history.Send:
			send := a.sendOf(o)
			p, pid := a.partition(send.TopicPartition)
			o.part, o.vid, o.offset = pid, p.intern(send.Value), send.Offset
			v := &p.values[o.vid]
			v.writers++
			if v.writer < 0 || rank(o.typ) > rank(a.ops[v.writer].typ) {
				v.writer = int32(k)
			}
		case history.Poll:
			poll := a.pollOf(o)
			o.group, o.rc, o.share = a.group(poll.Group), poll.ReadCommitted, poll.Share
			if o.share {
				a.shareGroup[o.group] = true
			}
			o.firstRead, o.nreads = int32(len(a.reads)), int32(len(poll.Reads))
			for _, pr := range poll.Reads {
				p, pid := a.partition(pr.TopicPartition)
				a.reads = append(a.reads, read{part: pid, first: int32(len(a.records)), n: int32(len(pr.Records))})
				for _, r := range pr.Records {
					vid := p.intern(r.Value)
					a.records = append(a.records, record{offset: r.Offset, vid: vid})
					p.obs = append(p.obs, observation{offset: r.Offset, vid: vid, op: int32(k)})
					if o.ok() {
						a.okRead(&p.values[vid], int32(k))
					}
				}
			}
		case history.Assign, history.Subscribe:
			o.group = a.group(a.value(o).Assign.Group)
		case history.Seek:
			o.group = a.group(a.value(o).Seek.Group)
		case history.Ack:
			o.group = a.group(a.value(o).Ack.Group)
			a.shareGroup[o.group] = true
		}
	}
}

// sendOf is the value of send o, alone or inside a transaction.
func (a *analysis) sendOf(o *op) *history.SendValue {
	if o.txn >= 0 {
		return a.value(o).Txn.Ops[o.micro].Send
	}
	return a.value(o).Send
}

// pollOf is the value of poll o, alone or inside a transaction.
func (a *analysis) pollOf(o *op) *history.PollValue {
	if o.txn >= 0 {
		return a.value(o).Txn.Ops[o.micro].Poll
	}
	return a.value(o).Poll
}

func (a *analysis) okRead(v *value, k int32) {
	v.okReads++
	if v.firstRead < 0 || a.ops[k].end < a.ops[v.firstRead].end {
		v.firstRead = k
	}
	if a.ops[k].rc && (v.firstRCRead < 0 || a.ops[k].end < a.ops[v.firstRCRead].end) {
		v.firstRCRead = k
	}
}

// readsOf lists what poll o returned, partition by partition.
func (a *analysis) readsOf(o *op) []read { return a.reads[o.firstRead : o.firstRead+o.nreads] }

func (a *analysis) recordsOf(r read) []record { return a.records[r.first : r.first+r.n] }

// committed reports whether the send of v surely took effect: it was ok, or
// it was indeterminate and an ok poll read its value (Jepsen's
// must-have-committed?).
func (a *analysis) committed(v *value) bool {
	if v.writer < 0 {
		return false
	}
	w := &a.ops[v.writer]
	if w.txn >= 0 {
		return a.txnCommitted(w.txn)
	}
	return w.ok() || (w.typ == history.Info && v.okReads > 0)
}

// acknowledged reports whether the send of v completed ok, or belongs to a
// transaction of unknown outcome that a read_committed poll proved committed
// (Jepsen's lost-write counts the writes of a transaction that
// must-have-committed? the same way): a committed transaction's writes are
// all visible or none is.
func (a *analysis) acknowledged(v *value) bool {
	if v.writer < 0 {
		return false
	}
	w := &a.ops[v.writer]
	return w.ok() || w.txn >= 0 && a.ops[w.txn].proven
}

func (a *analysis) addCommittedSends(p *partition) {
	for vid := range p.values {
		v := &p.values[vid]
		if !a.committed(v) {
			continue
		}
		if off := a.ops[v.writer].offset; off != history.NoOffset {
			p.obs = append(p.obs, observation{offset: off, vid: int32(vid), op: v.writer})
		}
	}
}

// order sorts the observations and derives the dense version order.
func (p *partition) order() {
	slices.SortFunc(p.obs, func(x, y observation) int {
		return cmp.Or(cmp.Compare(x.offset, y.offset), cmp.Compare(x.vid, y.vid), cmp.Compare(x.op, y.op))
	})
	// Keep the first op to claim each (offset, value): it names the claim.
	p.obs = slices.CompactFunc(p.obs, func(x, y observation) bool { return x.offset == y.offset && x.vid == y.vid })
	for _, o := range p.obs {
		if n := len(p.offsets); n == 0 || p.offsets[n-1] != o.offset {
			p.offsets = append(p.offsets, o.offset)
		}
		idx := int32(len(p.offsets) - 1)
		v := &p.values[o.vid]
		if v.minIdx < 0 {
			v.minIdx, v.offset = idx, o.offset
		}
		v.maxIdx = idx
		v.nOffsets++
	}
	for _, o := range p.obs {
		if p.values[o.vid].nOffsets > 1 {
			if p.multi == nil {
				p.multi = map[int32][]observation{}
			}
			p.multi[o.vid] = append(p.multi[o.vid], o)
		}
	}
}

// value is the history entry carrying o's value.
func (a *analysis) value(o *op) *history.Op { return &a.h[o.at] }

// ref names op k for a report; a micro-op is named by its transaction.
func (a *analysis) ref(k int32) OpRef {
	o := &a.ops[k]
	if o.txn >= 0 {
		o = &a.ops[o.txn]
	}
	r := OpRef{Index: int(o.at), Process: o.process, F: o.f, Type: o.typ, Start: o.start, End: o.end}
	if o.comp < 0 {
		r.Type, r.End = history.Invoke, -1
	}
	return r
}

func (a *analysis) refs(ks ...int32) []OpRef {
	out := make([]OpRef, 0, len(ks))
	for _, k := range ks {
		if k >= 0 {
			out = append(out, a.ref(k))
		}
	}
	return out
}

// listValues gives, for at most listMax of a partition's values, the values, the offsets
// their sends learnt (where they learnt one) and the sends: what a violation names.
func (a *analysis) listValues(p *partition, vids []int32) (values []string, offsets []int64, writers []int32) {
	for _, vid := range vids[:min(len(vids), listMax)] {
		v := &p.values[vid]
		values = append(values, v.s)
		writers = append(writers, v.writer)
		if off := a.ops[v.writer].offset; off != history.NoOffset {
			offsets = append(offsets, off)
		}
	}
	return values, offsets, writers
}
