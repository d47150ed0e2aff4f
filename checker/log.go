package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"mqsim/model/history"
)

// UnseenRule makes Jepsen's unseen precise: an acknowledged value must be
// read by an ok poll within Within nanoseconds after max(its ack, After),
// for example After = the final heal. Within <= 0 means Jepsen's rule: read
// at all before the history ends.
//
// With a bound, a value read after its deadline is unseen too (read late),
// and a value whose deadline lies after the end of the history is undecided:
// noted, never a violation, since the history cannot tell.
type UnseenRule struct {
	After  int64 // virtual nanoseconds
	Within int64 // virtual nanoseconds
}

func (u UnseenRule) deadline(ack, end int64) int64 {
	if u.Within <= 0 {
		return end
	}
	from := max(ack, u.After)
	if from > math.MaxInt64-u.Within {
		return math.MaxInt64
	}
	return from + u.Within
}

// LogOptions configures CheckLog.
type LogOptions struct {
	Unseen UnseenRule
	// Allow lists anomalies the system under test does not promise to
	// avoid: they are reported as Allowed, not as violations. Jepsen allows
	// poll-skip and nonmonotonic-poll when consumers subscribe, since a
	// rebalance moves partitions between consumers.
	Allow []Anomaly
	// Compacted says the partitions' logs are compacted (cleanup.policy=compact): the log
	// cleaner removes a value once a later record of the same key is in the log, so a
	// lost-write whose key has a later acknowledged write at a higher offset of the same
	// partition is what compaction promises, and is reported as allowed. A lost value
	// with no later write of its key is still a violation.
	Compacted bool
}

// CheckLog runs Jepsen's queue analysis over h: it infers each
// partition's version order from all polls and from the sends that surely
// committed, then looks for every queue anomaly (see the Anomaly constants).
// Cost is O(n log n) in the size of h. It fails only on an invalid history.
func CheckLog(h history.History, opts LogOptions) (Report, error) {
	a, err := analyze(h)
	if err != nil {
		return Report{}, err
	}
	return a.log(opts), nil
}

func (a *analysis) log(opts LogOptions) Report {
	f := newFindings(LogChecker, opts.Allow)
	a.compacted = opts.Compacted
	starts := a.declaredStarts()
	for _, p := range a.parts {
		a.uniquenessNote(f, p)
		a.offsetAnomalies(f, p)
		a.readAnomalies(f, p)
		a.lossAnomalies(f, p, opts.Unseen, starts)
	}
	a.processAnomalies(f)
	a.commitAnomalies(f)
	a.txnAnomalies(f)
	return f.done()
}

// uniquenessNote warns when values were sent more than once to a
// partition: every rule here assumes the workload keeps them unique, and
// judges such a value by its surest send (ok, else info, else fail; the
// first among equals). A transaction retried after an abort sends its values
// again: the committed attempt is the one judged.
func (a *analysis) uniquenessNote(f *findings, p *partition) {
	var repeated []string
	for vid := range p.values {
		if p.values[vid].writers > 1 {
			repeated = append(repeated, p.values[vid].s)
		}
	}
	if len(repeated) > 0 {
		f.note("%s: %s sent by more than one op; values must be unique per partition, so these are judged by their surest send (ok, else info, else fail): %s",
			p.tp, plural(len(repeated), "value"), quoteList(repeated, len(repeated)))
	}
}

// offsetAnomalies finds inconsistent-offsets (an offset holding several
// values) and duplicates (a value at several offsets).
func (a *analysis) offsetAnomalies(f *findings, p *partition) {
	for i := 0; i < len(p.obs); {
		j := i + 1
		for j < len(p.obs) && p.obs[j].offset == p.obs[i].offset {
			j++
		}
		if j-i > 1 {
			group := p.obs[i:j]
			values := make([]string, len(group))
			ops := make([]int32, len(group))
			for n, o := range group {
				values[n], ops[n] = p.values[o.vid].s, o.op
			}
			f.add(Violation{Anomaly: InconsistentOffsets, TopicPartition: p.tp, Offsets: []int64{group[0].offset},
				Values: values, Ops: a.refs(ops...),
				Text: fmt.Sprintf("offset %d (index %d) holds %d values: %s", group[0].offset,
					p.indexOf(group[0].offset), len(group), quoteList(values, len(values)))})
		}
		i = j
	}
	for vid := range p.values {
		v := &p.values[vid]
		if v.nOffsets < 2 {
			continue
		}
		// A copy an uncommitted transaction wrote (an attempt that aborted
		// before the value was sent again) is not a duplicate: no
		// read_committed poll may return it.
		obs := slices.DeleteFunc(slices.Clone(p.multi[int32(vid)]), func(o observation) bool {
			return p.rcIdx[p.indexOf(o.offset)] < 0
		})
		if len(obs) < 2 {
			continue
		}
		ops := make([]int32, len(obs))
		for n, o := range obs {
			ops[n] = o.op
		}
		offsets := make([]int64, len(obs))
		for n, o := range obs {
			offsets[n] = o.offset
		}
		f.add(Violation{Anomaly: Duplicate, TopicPartition: p.tp, Offsets: offsets, Values: []string{v.s},
			Ops:  a.refs(ops...),
			Text: fmt.Sprintf("value %q appears at %d offsets: %s", v.s, len(offsets), joinInts(offsets))})
	}
}

// readAnomalies finds values read by an ok poll that were never sent
// (unexpected) or whose send failed (G1a). One violation per value, naming
// the first ok poll that read it.
func (a *analysis) readAnomalies(f *findings, p *partition) {
	for vid := range p.values {
		v := &p.values[vid]
		if v.okReads == 0 {
			continue
		}
		switch {
		case v.writer < 0:
			f.add(Violation{Anomaly: Unexpected, TopicPartition: p.tp, Offsets: p.offsetsOf(int32(vid)),
				Values: []string{v.s}, Ops: a.refs(v.firstRead),
				Text: fmt.Sprintf("value %q at offset %d was read by an ok poll (op %d) but never sent",
					v.s, v.offset, a.ref(v.firstRead).Index)})
		case a.ops[v.writer].typ == history.Fail:
			a.abortedRead(f, p, int32(vid))
		}
	}
}

// abortedRead reports G1a for a value whose every send failed and that an ok
// poll read. A read_uncommitted poll may return the writes of an aborted
// transaction (Kafka's isolation.level=read_uncommitted): that is reported as
// allowed, since the level allows it. A read_committed poll must not, and no
// poll may return a failed send outside a transaction: those are violations.
func (a *analysis) abortedRead(f *findings, p *partition, vid int32) {
	v := &p.values[vid]
	reader, what, how := v.firstRead, "its send failed", "an ok poll"
	if w := &a.ops[v.writer]; w.txn >= 0 {
		what = "its transaction aborted"
		if v.firstRCRead >= 0 {
			reader, how = v.firstRCRead, "an ok read_committed poll"
		} else {
			how = "an ok read_uncommitted poll, which may read aborted writes"
			defer f.allowing(G1a)()
		}
	}
	f.add(Violation{Anomaly: G1a, TopicPartition: p.tp, Offsets: p.offsetsOf(vid),
		Values: []string{v.s}, Ops: a.refs(v.writer, reader),
		Text: fmt.Sprintf("aborted read: value %q at offset %d was read by %s (op %d) although %s (op %d)",
			v.s, v.offset, how, a.ref(reader).Index, what, a.ref(v.writer).Index)})
}

// declaredStarts is, per topic-partition, the lowest offset an ok seek or group reset
// moved a reader to.
func (a *analysis) declaredStarts() map[history.TopicPartition]int64 {
	starts := map[history.TopicPartition]int64{}
	for k := range a.ops {
		o := &a.ops[k]
		if o.f != history.Seek || !o.ok() {
			continue
		}
		for _, po := range a.value(o).Seek.Offsets {
			if cur, ok := starts[po.TopicPartition]; po.Offset >= 0 && (!ok || po.Offset < cur) {
				starts[po.TopicPartition] = po.Offset
			}
		}
	}
	return starts
}

// passedOver is the offset below which nothing in p was meant to be read: the lowest
// offset a seek or group reset declared in p (starts), when no ok poll read anything
// below it (a consumer group that failed over to a replicated topic starts at its
// translated checkpoint, and nobody reads the replica's older records). A value never
// read below it is no lost write: no poll read from before it, so none read past it.
// -1 when there is no such declared start.
func (a *analysis) passedOver(p *partition, starts map[history.TopicPartition]int64) int64 {
	floor, ok := starts[p.tp]
	if !ok || floor == 0 {
		return -1
	}
	for vid := range p.values {
		if v := &p.values[vid]; v.okReads > 0 && v.minIdx >= 0 && v.offset < floor {
			return -1
		}
	}
	return floor
}

// lossAnomalies finds acknowledged values that ok polls did not read:
// lost-write when an ok poll read past them (Jepsen's rule, robust to
// duplicates and conflicts because it compares the lost value's last index
// with the read values' first indexes), unseen otherwise. It notes where
// never-read values fall in the write order: prefix (before every read
// value), middle (between read values), suffix (after them) or unplaced (no
// offset known).
func (a *analysis) lossAnomalies(f *findings, p *partition, rule UnseenRule, starts map[history.TopicPartition]int64) {
	bound, first, boundVid := int32(-1), int32(-1), int32(-1)
	for vid := range p.values {
		v := &p.values[vid]
		if v.okReads == 0 || v.minIdx < 0 {
			continue
		}
		if v.minIdx > bound {
			bound, boundVid = v.minIdx, int32(vid)
		}
		if first < 0 || v.minIdx < first {
			first = v.minIdx
		}
	}
	var unseen []int32
	var late, undecided int
	where := map[string]int{}
	floor := a.passedOver(p, starts)
	for vid := range p.values {
		v := &p.values[vid]
		if v.okReads == 0 && v.minIdx >= 0 && v.offset < floor {
			continue // passed over on purpose: no poll read from before it
		}
		// Acknowledged, as Jepsen has it, or the write of a transaction of unknown
		// outcome that a read_committed poll proved committed (proveTxns): a transaction
		// commits whole, so its every write must be read (markers-before-prepare commits
		// it in some partitions and aborts it in others).
		if !a.acknowledged(v) && !a.provenTxnWrite(v) {
			continue
		}
		if v.okReads == 0 {
			switch {
			case v.minIdx < 0:
				where["unplaced"]++
			case v.maxIdx > bound:
				where["suffix"]++
			case v.maxIdx < first:
				where["prefix"]++
			default:
				where["middle"]++
			}
		}
		if v.okReads == 0 && v.minIdx >= 0 && v.maxIdx <= bound {
			a.lostWrite(f, p, int32(vid), bound, first, boundVid)
			continue
		}
		deadline := rule.deadline(a.ops[v.writer].end, a.end)
		switch {
		case v.okReads > 0 && a.ops[v.firstRead].end <= deadline:
			continue // seen in time
		case v.okReads == 0 && deadline > a.end:
			undecided++
			continue
		case v.okReads > 0:
			late++
		}
		unseen = append(unseen, int32(vid))
	}
	if len(where) > 0 {
		f.note("%s: acknowledged values never read by an ok poll, by place in the write order: prefix %d, middle %d (lost-write), suffix %d, unplaced %d",
			p.tp, where["prefix"], where["middle"], where["suffix"], where["unplaced"])
	}
	if undecided > 0 {
		f.note("%s: %s not read yet, with a read deadline after the end of the history (t=%s): undecided",
			p.tp, plural(undecided, "acknowledged value"), time.Duration(a.end))
	}
	if len(unseen) > 0 {
		a.unseen(f, p, unseen, late, rule)
	}
}

// provenTxnWrite reports whether v is the write of an unknown transaction that surely
// committed.
func (a *analysis) provenTxnWrite(v *value) bool {
	if v.writer < 0 {
		return false
	}
	t := a.ops[v.writer].txn
	return t >= 0 && a.ops[t].proven
}

func (a *analysis) lostWrite(f *findings, p *partition, vid, bound, first, boundVid int32) {
	v := &p.values[vid]
	where := "middle"
	if v.maxIdx < first {
		where = "prefix"
	}
	reader := p.values[boundVid].firstRead
	text := fmt.Sprintf("acknowledged value %q at offset %d (index %d, %s) was never read by an ok poll, yet op %d read %q at index %d",
		v.s, v.offset, v.maxIdx, where, a.ref(reader).Index, p.values[boundVid].s, bound)
	if key, later, ok := a.supersededBy(p, v); ok {
		restore := f.allowing(LostWrite)
		defer restore()
		text += fmt.Sprintf(": superseded by %q, a later write of its key %q, so the log cleaner may remove it (cleanup.policy=compact)", later, key)
	}
	f.add(Violation{Anomaly: LostWrite, TopicPartition: p.tp, Offsets: p.offsetsOf(vid), Values: []string{v.s},
		Ops: a.refs(v.writer, reader), Where: where, Text: text})
}

// supersededBy finds, when the logs are compacted, the last acknowledged write of v's key
// at a higher offset of the same partition: the value that lets the cleaner remove v.
func (a *analysis) supersededBy(p *partition, v *value) (key, later string, ok bool) {
	if !a.compacted || v.writer < 0 || v.offset == history.NoOffset {
		return "", "", false
	}
	key = a.sendOf(&a.ops[v.writer]).Key
	if key == "" {
		return "", "", false // a record without a key is never compacted away
	}
	last, found := a.lastWriteOfKey(p)[key]
	if !found || last.offset <= v.offset {
		return key, "", false
	}
	return key, last.value, true
}

// keyWrite is the last acknowledged write of a key: its offset and value.
type keyWrite struct {
	offset int64
	value  string
}

// lastWriteOfKey maps each key of p to its acknowledged write at the highest offset,
// computed once per partition.
func (a *analysis) lastWriteOfKey(p *partition) map[string]keyWrite {
	if a.lastWrites == nil {
		a.lastWrites = map[*partition]map[string]keyWrite{}
	}
	if m, ok := a.lastWrites[p]; ok {
		return m
	}
	m := map[string]keyWrite{}
	for k := range a.ops {
		o := &a.ops[k]
		if o.f != history.Send || o.typ != history.Ok || o.offset == history.NoOffset {
			continue
		}
		s := a.sendOf(o)
		if s.Key == "" || s.TopicPartition != p.tp {
			continue
		}
		if w, seen := m[s.Key]; !seen || o.offset > w.offset {
			m[s.Key] = keyWrite{offset: o.offset, value: s.Value}
		}
	}
	a.lastWrites[p] = m
	return m
}

func (a *analysis) unseen(f *findings, p *partition, vids []int32, late int, rule UnseenRule) {
	// Write order: placed values by index, then unplaced ones by value.
	slices.SortFunc(vids, func(x, y int32) int {
		vx, vy := &p.values[x], &p.values[y]
		return cmp.Or(cmp.Compare(uint32(vx.minIdx), uint32(vy.minIdx)), cmp.Compare(vx.s, vy.s))
	})
	values, offsets, writers := a.listValues(p, vids)
	within := "by the end of the history"
	if rule.Within > 0 {
		within = fmt.Sprintf("within %s of max(ack, t=%s)", time.Duration(rule.Within), time.Duration(rule.After))
	}
	if late > 0 {
		within += fmt.Sprintf(" (%d read late)", late)
	}
	f.add(Violation{Anomaly: Unseen, TopicPartition: p.tp, Offsets: offsets, Values: values, Ops: a.refs(writers...),
		Text: fmt.Sprintf("%s not read by an ok poll %s: %s",
			plural(len(vids), "acknowledged value"), within, quoteList(values, len(vids)))})
}

// position is where a process last read or sent in one partition.
type position struct {
	idx    int32 // dense index
	rcIdx  int32 // index among what read_committed polls may return; -1 if none
	rc     bool  // read by a read_committed poll, which passed over the rest
	offset int64
	vid    int32
	op     int32
}

// process is the per-process state of the poll and send order checks.
type process struct {
	lastRead map[int32]position // by partition: the last record of the last ok poll
	lastSend map[int32]position // by partition: the last ok or info send placed in the order
	// subscribed: the process's latest assignment was a subscribe, so the
	// group may move its partitions at any rebalance (see pollOrder).
	subscribed bool
	// polled, rc: the process has polled, the last time at read_committed.
	polled, rc bool
	// sought is, by partition, where an ok seek moved the process: its next poll of
	// the partition must start there (see seekStep).
	sought map[int32]int64
}

// txnPositions are where the transaction being walked last read and sent, by
// partition: the internal checks compare its micro-ops with these.
type txnPositions struct {
	read, sent map[int32]position
}

// processAnomalies walks each process's ops in invocation order, comparing
// every poll with the process's last ok poll of the same partition
// (poll-skip, nonmonotonic-poll), consecutive records inside each poll
// (int-poll-skip, int-nonmonotonic-poll), and each send with the last send
// (nonmonotonic-send). Inside a transaction, a micro-op is compared with the
// transaction's earlier micro-ops first (int-poll-skip, int-nonmonotonic-poll,
// int-send-skip, int-nonmonotonic-send), as Jepsen compares the reads and the
// writes of one :txn op; its first read and send of a partition are compared
// with the process's history as a poll or send alone would be.
// Deltas compare the dense indexes of the offsets actually read, which equals
// Jepsen's value-based delta when every value sits at one offset, and does
// not blame a duplicate's second copy twice. A read_committed poll is judged
// on the offsets it may return: the writes of transactions not known to have
// committed are not there for it to skip.
func (a *analysis) processAnomalies(f *findings) {
	procs := map[int]*process{}
	get := func(id int) *process {
		pr := procs[id]
		if pr == nil {
			pr = &process{lastRead: map[int32]position{}, lastSend: map[int32]position{}, sought: map[int32]int64{}}
			procs[id] = pr
		}
		return pr
	}
	for k := range a.ops {
		o := &a.ops[k]
		if o.txn >= 0 {
			continue // walked with its transaction
		}
		switch o.f {
		case history.Assign, history.Subscribe:
			// Failed and never-completed assignments change nothing; ok and
			// info ones keep tracking only what they still cover.
			if o.comp < 0 || o.typ == history.Fail {
				continue
			}
			assign := a.value(o).Assign
			pr := get(o.process)
			pr.subscribed = o.f == history.Subscribe
			for pid := range pr.lastRead { // deleting only: order does not matter
				if assign.SeekToBeginning || !assign.Covers(a.parts[pid].tp) {
					delete(pr.lastRead, pid)
				}
			}
			for pid := range pr.sought { // deleting only: order does not matter
				if !assign.Covers(a.parts[pid].tp) {
					delete(pr.sought, pid)
				}
			}
		case history.Seek:
			a.seekMoves(get(o.process), o)
		case history.Poll:
			if o.share {
				// A share consumer has no position: it gets what the share-partition
				// leader hands it, out of order and again after a release (the share
				// checker judges that).
				continue
			}
			a.pollOrder(f, get(o.process), int32(k), nil)
		case history.Send:
			if o.typ == history.Fail {
				continue
			}
			a.sendOrder(f, get(o.process), int32(k), nil)
		case history.Txn:
			a.txnOrder(f, get(o.process), int32(k))
		}
	}
}

// seekMoves applies a seek to the process: where it read last no longer says where it
// reads next. An ok seek says where instead; a seek of unknown outcome says nothing, so
// the next poll is compared with nothing. (A reset by the group tool is made by a
// process that does not poll: it moves no process, only the group's commits.)
func (a *analysis) seekMoves(pr *process, o *op) {
	if o.typ == history.Fail {
		return
	}
	for _, po := range a.value(o).Seek.Offsets {
		pid, ok := a.partOf[po.TopicPartition]
		if !ok {
			continue // never sent to nor read: no poll to compare
		}
		delete(pr.lastRead, pid)
		delete(pr.sought, pid)
		if o.ok() {
			pr.sought[pid] = po.Offset
		}
	}
}

// txnOrder walks the micro-ops of transaction t. A committed transaction
// leaves the process where its polls ended; an aborted or unknown one does
// not (the application rewinds to the committed offsets), and an aborted
// one's sends are not the process's sends.
func (a *analysis) txnOrder(f *findings, pr *process, t int32) {
	in := &txnPositions{read: map[int32]position{}, sent: map[int32]position{}}
	for k := t + 1; k <= t+a.ops[t].nmicro; k++ {
		switch a.ops[k].f {
		case history.Poll:
			a.pollOrder(f, pr, k, in)
		case history.Send:
			a.sendOrder(f, pr, k, in)
		}
	}
	if a.ops[t].ok() {
		for part, pos := range in.read { // assignment only: order does not matter
			pr.lastRead[part] = pos
		}
	}
}

// pollOrder checks poll k (a micro-op of a transaction when in is set), partition by partition.
func (a *analysis) pollOrder(f *findings, pr *process, k int32, in *txnPositions) {
	o := &a.ops[k]
	if pr.polled && pr.rc != o.rc {
		// A consumer's isolation level is fixed when it is made: a poll at
		// another level is another consumer's, and where the process read
		// before says nothing of where this one starts.
		clear(pr.lastRead)
		if in != nil {
			clear(in.read)
		}
	}
	pr.polled, pr.rc = true, o.rc
	for _, r := range a.readsOf(o) {
		if r.n == 0 {
			continue
		}
		if a.rebalancedDuring(k, o, r.part) {
			// A rebalance inside the poll took the partition away and gave it
			// back (Jepsen's :rebalance-log): the poll may restart from the
			// committed offset, so only its own records are compared.
			delete(pr.lastRead, r.part)
			if in != nil {
				delete(in.read, r.part)
			}
		}
		a.partitionPollOrder(f, pr, k, r, in)
	}
}

// rebalancedDuring reports whether an assignment of the poll's process, invoked while the
// poll (or its transaction) was running, dropped partition part.
func (a *analysis) rebalancedDuring(k int32, poll *op, part int32) bool {
	if poll.comp < 0 {
		return false
	}
	if poll.txn >= 0 {
		k = poll.txn
	}
	// a.ops is in invocation order: walk those invoked before the poll completed.
	for j := int(k) + 1; j < len(a.ops) && a.ops[j].inv < poll.comp; j++ {
		o := &a.ops[j]
		if o.process != poll.process || (o.f != history.Assign && o.f != history.Subscribe) || o.comp < 0 || o.typ == history.Fail {
			continue
		}
		if assign := a.value(o).Assign; assign.SeekToBeginning || !assign.Covers(a.parts[part].tp) {
			return true
		}
	}
	return false
}

// readPositions are the records of r as positions; a read_committed poll
// keeps only those at offsets it may return (the rest are G1a). The slice is
// valid until the next call.
func (a *analysis) readPositions(k int32, r read) []position {
	p := a.parts[r.part]
	recs := a.recordsOf(r)
	out := a.positions[:0]
	defer func() { a.positions = out[:0] }()
	for _, rec := range recs {
		idx := p.indexOf(rec.offset)
		pos := position{idx: idx, rcIdx: p.rcIdx[idx], rc: a.ops[k].rc, offset: rec.offset, vid: rec.vid, op: k}
		if a.ops[k].rc && pos.rcIdx < 0 {
			continue
		}
		out = append(out, pos)
	}
	return out
}

// orderContext says what an order step compares.
type orderContext int

const (
	samePoll     orderContext = iota // consecutive records of one poll
	sameTxn                          // a micro-op and the transaction's earlier ones
	previousPoll                     // a poll and the process's previous ok poll
)

func (a *analysis) partitionPollOrder(f *findings, pr *process, k int32, r read, in *txnPositions) {
	p := a.parts[r.part]
	pos := a.readPositions(k, r)
	if len(pos) == 0 {
		return
	}
	// Consecutive records are offset+1 almost always: both observed, so
	// their dense indexes differ by one and no search is needed.
	for i := 1; i < len(pos); i++ {
		if pos[i].offset != pos[i-1].offset+1 {
			a.orderStep(f, p, pos[i-1], pos[i], IntPollSkip, IntNonmonotonicPoll, samePoll)
		}
	}
	if last, ok := in.lastRead(r.part); ok {
		a.orderStep(f, p, last, pos[0], IntPollSkip, IntNonmonotonicPoll, sameTxn)
	} else if last, ok := pr.lastRead[r.part]; ok {
		restore := func() {}
		if pr.subscribed {
			// Jepsen allows poll-skip and nonmonotonic-poll under subscribe:
			// a rebalance may hand the partition to another consumer and back,
			// and the consumer resumes from the group's committed offset,
			// before or after where it stopped. They are reported, as allowed.
			restore = f.allowing(PollSkip, NonmonotonicPoll)
		}
		a.orderStep(f, p, last, pos[0], PollSkip, NonmonotonicPoll, previousPoll)
		restore()
	} else if at, ok := pr.sought[r.part]; ok {
		restore := func() {}
		if pr.subscribed {
			restore = f.allowing(PollSkip, NonmonotonicPoll)
		}
		a.seekStep(f, p, at, pos[0])
		restore()
	}
	if in == nil && a.ops[k].ok() {
		delete(pr.sought, r.part)
	}
	switch {
	case in != nil:
		in.read[r.part] = pos[len(pos)-1]
	case a.ops[k].ok():
		pr.lastRead[r.part] = pos[len(pos)-1]
	}
}

func (in *txnPositions) lastRead(part int32) (position, bool) {
	if in == nil {
		return position{}, false
	}
	pos, ok := in.read[part]
	return pos, ok
}

// seekStep checks the first record a process read after a seek moved it to offset at:
// it must be the first record at or after at that the poll's isolation level may
// return. Earlier is nonmonotonic-poll; later, with records between, poll-skip. What
// the seek itself moved over, back or forward, is declared, so never reported.
func (a *analysis) seekStep(f *findings, p *partition, at int64, next position) {
	idx, _ := slices.BinarySearch(p.offsets, at)
	for next.rc && idx < len(p.rcIdx) && p.rcIdx[idx] < 0 {
		idx++
	}
	nextIdx := next.idx
	if nextIdx == int32(idx) {
		return
	}
	nextValue := p.values[next.vid].s
	v := Violation{TopicPartition: p.tp, Offsets: []int64{at, next.offset}, Ops: a.refs(next.op)}
	moved := fmt.Sprintf("read %q at offset %d first after a seek to offset %d", nextValue, next.offset, at)
	if next.offset < at {
		v.Anomaly, v.Values = NonmonotonicPoll, []string{nextValue}
		v.Text = moved + ": went back before where the seek put it"
		f.add(v)
		return
	}
	var skipped []string
	n := 0
	for i := int32(idx); i < nextIdx; i++ {
		if next.rc && p.rcIdx[i] < 0 {
			continue
		}
		n++
		if len(skipped) < listMax {
			skipped = append(skipped, p.values[p.obsAt(i)].s)
		}
	}
	v.Anomaly, v.Values = PollSkip, skipped
	v.Text = fmt.Sprintf("%s: skipped %s: %s", moved, plural(n, "value"), quoteList(skipped, n))
	f.add(v)
}

// orderStep checks that next follows prev immediately in the version order,
// both read at one isolation level: at read_committed, among the offsets such
// a poll may return.
func (a *analysis) orderStep(f *findings, p *partition, prev, next position, skip, back Anomaly, ctx orderContext) {
	prevIdx, nextIdx := prev.idx, next.idx
	rc := next.rc
	if rc {
		if prev.rcIdx < 0 || next.rcIdx < 0 {
			return // a read of a write no read_committed poll may return: G1a says it
		}
		prevIdx, nextIdx = prev.rcIdx, next.rcIdx
	}
	delta := nextIdx - prevIdx
	if delta == 1 {
		return
	}
	prevValue, nextValue := p.values[prev.vid].s, p.values[next.vid].s
	v := Violation{TopicPartition: p.tp, Offsets: []int64{prev.offset, next.offset}, Ops: a.refs(prev.op, next.op)}
	var context string
	switch ctx {
	case samePoll:
		v.Ops = a.refs(prev.op)
		context = fmt.Sprintf("after %q at offset %d in the same poll", prevValue, prev.offset)
	case sameTxn:
		v.Ops = a.refs(prev.op)
		context = fmt.Sprintf("though an earlier poll of the same transaction ended at %q, offset %d", prevValue, prev.offset)
	case previousPoll:
		context = fmt.Sprintf("though the process's previous ok poll (op %d) ended at %q, offset %d",
			a.ref(prev.op).Index, prevValue, prev.offset)
	}
	moved := fmt.Sprintf("read %q at offset %d %s (index %d to %d)", nextValue, next.offset, context, prevIdx, nextIdx)
	if delta > 1 {
		v.Anomaly = skip
		skipped := make([]string, 0, min(int(delta-1), listMax))
		for i := prevIdx + 1; i < nextIdx && len(skipped) < listMax; i++ {
			full := i
			if rc {
				full = p.rcFull[i]
			}
			skipped = append(skipped, p.values[p.obsAt(full)].s)
		}
		v.Values = skipped
		v.Text = fmt.Sprintf("%s: skipped %s: %s", moved, plural(int(delta-1), "value"), quoteList(skipped, int(delta-1)))
		if a.allSuperseded(p, prevIdx, nextIdx, rc) {
			// A compacted log removes superseded values: reading past them is its promise.
			restore := f.allowing(skip)
			defer restore()
			v.Text += ": each superseded by a later write of its key (cleanup.policy=compact)"
		}
	} else {
		v.Anomaly = back
		v.Values = []string{prevValue, nextValue}
		v.Text = moved + ": went back or repeated"
	}
	f.add(v)
}

// allSuperseded reports whether the logs are compacted and every value strictly between
// the dense indexes from and to has a later acknowledged write of its key.
func (a *analysis) allSuperseded(p *partition, from, to int32, rc bool) bool {
	if !a.compacted {
		return false
	}
	for i := from + 1; i < to; i++ {
		full := i
		if rc {
			full = p.rcFull[i]
		}
		if _, _, ok := a.supersededBy(p, &p.values[p.obsAt(full)]); !ok {
			return false
		}
	}
	return true
}

// obsAt is a value at dense index idx (the lowest value id if several).
func (p *partition) obsAt(idx int32) int32 {
	off := p.offsets[idx]
	i, _ := slices.BinarySearchFunc(p.obs, off, func(o observation, t int64) int { return cmp.Compare(o.offset, t) })
	return p.obs[i].vid
}

// sendOrder checks send k (a micro-op of a transaction when in is set)
// against the transaction's earlier sends to the partition (int-send-skip,
// int-nonmonotonic-send) or else the process's previous send there
// (nonmonotonic-send). Sends of other producers interleave with a
// transaction's, so int-send-skip is always allowed, as in Jepsen.
func (a *analysis) sendOrder(f *findings, pr *process, k int32, in *txnPositions) {
	o := &a.ops[k]
	p := a.parts[o.part]
	v := &p.values[o.vid]
	pos := position{idx: -1, offset: o.offset, vid: o.vid, op: k}
	switch {
	case o.offset != history.NoOffset:
		pos.idx = p.indexOf(o.offset)
	case v.minIdx >= 0 && v.writers == 1:
		// Placed where it was read. Not when another op sent the value too (a
		// pipeline's retried transaction): the copy read may be the other op's.
		pos.idx, pos.offset = v.minIdx, v.offset
	}
	if pos.idx < 0 {
		return // nowhere in the version order: nothing to compare
	}
	if in != nil {
		last, ok := in.sent[o.part]
		in.sent[o.part] = pos
		if ok {
			a.intSendStep(f, p, last, pos)
		}
		if o.typ == history.Fail {
			return // an aborted transaction's write is not one the process made
		}
		if ok {
			pr.lastSend[o.part] = pos
			return
		}
	}
	if last, ok := pr.lastSend[o.part]; ok && pos.idx <= last.idx {
		lastValue := p.values[last.vid].s
		f.add(Violation{Anomaly: NonmonotonicSend, TopicPartition: p.tp, Offsets: []int64{last.offset, pos.offset},
			Values: []string{lastValue, v.s}, Ops: a.refs(last.op, k),
			Text: fmt.Sprintf("send of %q landed at offset %d, at or before the process's previous send %q at offset %d",
				v.s, pos.offset, lastValue, last.offset)})
	}
	pr.lastSend[o.part] = pos
}

// intSendStep compares two sends of one transaction to one partition.
func (a *analysis) intSendStep(f *findings, p *partition, prev, next position) {
	delta := next.idx - prev.idx
	if delta == 1 {
		return
	}
	prevValue, nextValue := p.values[prev.vid].s, p.values[next.vid].s
	v := Violation{TopicPartition: p.tp, Offsets: []int64{prev.offset, next.offset}, Ops: a.refs(next.op)}
	if delta > 1 {
		defer f.allowing(IntSendSkip)()
		v.Anomaly = IntSendSkip
		skipped := make([]string, 0, min(int(delta-1), listMax))
		for i := prev.idx + 1; i < next.idx && len(skipped) < listMax; i++ {
			skipped = append(skipped, p.values[p.obsAt(i)].s)
		}
		v.Values = skipped
		v.Text = fmt.Sprintf("the transaction sent %q to offset %d after %q at offset %d: %s of other writers between (index %d to %d): %s",
			nextValue, next.offset, prevValue, prev.offset, plural(int(delta-1), "value"), prev.idx, next.idx, quoteList(skipped, int(delta-1)))
	} else {
		v.Anomaly = IntNonmonotonicSend
		v.Values = []string{prevValue, nextValue}
		v.Text = fmt.Sprintf("the transaction sent %q after %q, yet it landed at offset %d, at or before offset %d (index %d to %d)",
			nextValue, prevValue, next.offset, prev.offset, prev.idx, next.idx)
	}
	f.add(v)
}

// commitAnomalies finds committed offsets going backwards per group and
// partition. Commits race, so only real-time order counts: an ok commit
// must not commit less than an ok commit that completed before it was
// invoked.
func (a *analysis) commitAnomalies(f *findings) {
	type key struct {
		group string
		tp    history.TopicPartition
	}
	type mark struct {
		offset int64
		op     int32
	}
	best := map[key]mark{}     // highest offset of the ok commits completed so far
	seen := map[int32][]mark{} // per open commit, per offset: best when invoked (op -1: none)
	for i := range a.h {
		hop := &a.h[i]
		if hop.F == history.Seek && hop.Type == history.Ok && hop.Seek.Group != "" {
			// A declared move of the group's position (a member's seek, the group
			// tool's reset): the next commits start from it, back or forward.
			for _, po := range hop.Seek.Offsets {
				best[key{hop.Seek.Group, po.TopicPartition}] = mark{po.Offset, a.opOf[i]}
			}
			continue
		}
		if hop.F != history.Commit {
			continue
		}
		k := a.opOf[i]
		c := hop.Commit
		if hop.Type == history.Invoke {
			snap := make([]mark, len(c.Offsets))
			for j, po := range c.Offsets {
				m, ok := best[key{c.Group, po.TopicPartition}]
				if !ok {
					m.op = -1
				}
				snap[j] = m
			}
			seen[k] = snap
			continue
		}
		snap := seen[k]
		delete(seen, k)
		if hop.Type != history.Ok {
			continue
		}
		for j, po := range c.Offsets {
			kk := key{c.Group, po.TopicPartition}
			if m := snap[j]; m.op >= 0 && po.Offset < m.offset {
				f.add(Violation{Anomaly: NonmonotonicCommit, TopicPartition: po.TopicPartition, Group: c.Group,
					Offsets: []int64{m.offset, po.Offset}, Ops: a.refs(m.op, k),
					Text: fmt.Sprintf("group %s committed offset %d after an earlier commit of offset %d had completed",
						c.Group, po.Offset, m.offset)})
			}
			if m, ok := best[kk]; !ok || po.Offset > m.offset {
				best[kk] = mark{po.Offset, k}
			}
		}
	}
}

// plural renders "1 value", "2 values".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func joinInts(xs []int64) string {
	b := make([]byte, 0, 8*len(xs))
	for i, x := range xs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return string(b)
}
