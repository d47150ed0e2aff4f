package history

import (
	"fmt"
	stdbits "math/bits"
	"slices"
)

// Handle names an invocation recorded by a [Recorder]; the client keeps it
// until it learns the outcome and passes it to Ok, Fail or Info.
type Handle int

// Result is what a completion learned. Only the fields of the op's function
// may be set; the others must stay zero.
type Result struct {
	// Offset is an ok send's assigned offset (0 is offset 0); NoOffset when
	// the client did not learn it (acks=0). It must stay 0 for every other
	// op: fail and info sends never know their offset.
	Offset int64
	// Reads are the records a poll returned (any completion type).
	Reads []PartitionRecords
	// Partitions are the partitions a subscribe was given.
	Partitions []TopicPartition
	// TxnOps and TxnOffsets are what a transaction did (txn completions only).
	TxnOps     []MicroOp
	TxnOffsets *CommitValue
	// SeekOffsets are where an ok seek moved each partition, in the invocation's order;
	// nil repeats the invocation's offsets (all known already).
	SeekOffsets []PartitionOffset
	// Error says why an op failed or is indeterminate.
	Error string
}

// Recorder builds a history as clients act. All clients of a run share one
// recorder, so indexes are global and times come from the one virtual clock.
// Misuse (a stale handle, time going backwards, a result field that does not
// fit the function) is a programming error and panics: a broken history
// would make every checker's verdict meaningless.
type Recorder struct {
	// runs are what was recorded, in order (packed.go); whole the ops that
	// are not sends, blocks the records of the sends, tps and errs the
	// partitions and errors the sends name.
	runs   []run
	whole  []Op
	blocks []SendBlock
	tps    intern[TopicPartition]
	errs   intern[string]
	// flat are the ops History built so far.
	flat History
	// n is how many ops were recorded.
	n int
	// open has bit h set while invocation h has no completion yet (a map,
	// written and deleted twice per send, cost more than the ops themselves).
	open []uint64
	// sends is where History takes its send values from, a slab at a time.
	sends []SendValue
	// soFar is what each open transaction did so far (TxnProgress): a
	// transactional producer that crashes never completes its transaction,
	// and its sends must still be in the history the checkers judge (Final).
	soFar map[Handle]Result
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{soFar: make(map[Handle]Result)}
}

// History returns the ops recorded so far. The slice is shared with the
// recorder: read it, do not modify it. Each call builds the ops recorded
// since the last one; a loop that looks only for ops other than sends reads
// them with NextOp instead.
func (r *Recorder) History() History {
	if len(r.flat) == r.n {
		return r.flat
	}
	r.flat = slices.Grow(r.flat, r.n-len(r.flat))
	for k := r.runOf(len(r.flat)); k < len(r.runs); k++ { // runs are never split: flat ends at one's start
		r.build(&r.runs[k])
	}
	return r.flat
}

// build appends run u's ops to flat. A send's completion shares its invocation's
// value, built before it.
func (r *Recorder) build(u *run) {
	if u.whole >= 0 {
		r.flat = append(r.flat, r.whole[u.whole])
		return
	}
	op := Op{Time: u.time, Process: u.process, Type: types[u.typ], F: Send, Invoke: -1}
	if u.err >= 0 {
		op.Error = r.errs.all[u.err]
	}
	add := func(v SendValue) {
		if len(r.sends) == 0 {
			r.sends = make([]SendValue, 256)
		}
		op.Index, op.Send, r.sends = len(r.flat), &r.sends[0], r.sends[1:]
		*op.Send = v
		r.flat = append(r.flat, op)
	}
	if u.typ == 0 {
		tp := r.tps.all[u.tp]
		r.blocks[u.block].unpack(func(key, value string) {
			add(SendValue{TopicPartition: tp, Key: key, Value: value, Offset: NoOffset})
		})
		r.blocks[u.block] = SendBlock{} // built: the ops hold the values now
		return
	}
	for k := range u.n {
		op.Invoke = u.invoke + k
		v := *r.flat[op.Invoke].Send
		v.Offset = NoOffset
		if u.offset != NoOffset {
			v.Offset = u.offset + int64(k)
		}
		add(v)
	}
}

// Len is how many ops were recorded.
func (r *Recorder) Len() int { return r.n }

// Op returns op i (0 <= i < Len), shared with the recorder (read it, do not
// modify it), unless it is a send: a send is built by History only, and Op
// returns false.
func (r *Recorder) Op(i int) (*Op, bool) {
	if u := &r.runs[r.runOf(i)]; u.whole >= 0 {
		return &r.whole[u.whole], true
	}
	return nil, false
}

// NextOp returns the first op at or after i that is not a send, and its index, shared
// with the recorder as Op's; nil and Len when there is none. A loop looking for other
// ops passes over each run of sends at once.
func (r *Recorder) NextOp(i int) (int, *Op) {
	if i >= r.n {
		return r.n, nil
	}
	for k := r.runOf(i); k < len(r.runs); k++ {
		if u := &r.runs[k]; u.whole >= 0 {
			return max(i, u.first), &r.whole[u.whole]
		}
	}
	return r.n, nil
}

// Open reports whether h was invoked and has not completed yet.
func (r *Recorder) Open(h Handle) bool {
	return h >= 0 && int(h) < r.n && r.open[h/64]&(1<<(h%64)) != 0
}

// InvokeSend records a send of one record.
func (r *Recorder) InvokeSend(now int64, process int, tp TopicPartition, key, value string) Handle {
	return r.InvokeSends(now, process, tp, SendBlock{n: 1, b: appendSend(nil, key, value)})
}

// InvokeSends records a send of each record of block to tp (a producer's batch) and
// returns the first's handle: the i-th record's is that plus i.
func (r *Recorder) InvokeSends(now int64, process int, tp TopicPartition, block SendBlock) Handle {
	if tp.Topic == "" || tp.Partition < 0 {
		panic(fmt.Sprintf("history: op %d: send to invalid partition %q", r.n, tp))
	}
	if block.n == 0 {
		panic(fmt.Sprintf("history: op %d: a send of no record", r.n))
	}
	r.blocks = append(r.blocks, block)
	h := Handle(r.appendRun(run{n: block.n, time: now, process: process, whole: -1,
		tp: r.tps.of(tp), block: int32(len(r.blocks) - 1), invoke: -1, offset: NoOffset, err: -1}))
	for i := range block.n {
		r.setOpen(h + Handle(i))
	}
	return h
}

// InvokePoll records a poll by a consumer of group (empty: no group).
func (r *Recorder) InvokePoll(now int64, process int, group string) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Poll, Poll: &PollValue{Group: group}})
}

// InvokeReadCommittedPoll records a poll by a read_committed consumer of group.
func (r *Recorder) InvokeReadCommittedPoll(now int64, process int, group string) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Poll, Poll: &PollValue{Group: group, ReadCommitted: true}})
}

// InvokeSharePoll records a poll by a share consumer of share group group (KIP-932):
// its completion's records carry the delivery counts the share-partition leader gave
// (Record.DeliveryCount, 1 on the first delivery).
func (r *Recorder) InvokeSharePoll(now int64, process int, group string) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Poll, Poll: &PollValue{Group: group, Share: true}})
}

// InvokeAck records a share consumer's acknowledgement of records of tp it acquired; the
// completion learns nothing more (ok: applied and persisted, fail: refused, info: unknown).
func (r *Recorder) InvokeAck(now int64, process int, group string, tp TopicPartition, acks []RecordAck) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Ack, Ack: &AckValue{Group: group, TopicPartition: tp, Acks: clone(acks)}})
}

// InvokeCommit records a commit; offsets are next offsets to consume.
func (r *Recorder) InvokeCommit(now int64, process int, group string, offsets []PartitionOffset) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Commit,
		Commit: &CommitValue{Group: group, Offsets: clone(offsets)}})
}

// InvokeAssign records a manual assignment, or the outcome of a rebalance.
func (r *Recorder) InvokeAssign(now int64, process int, group string, partitions []TopicPartition, seekToBeginning bool) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Assign,
		Assign: &AssignValue{Group: group, Partitions: clone(partitions), SeekToBeginning: seekToBeginning}})
}

// InvokeSubscribe records a subscription to topics.
func (r *Recorder) InvokeSubscribe(now int64, process int, group string, topics []string) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Subscribe,
		Assign: &AssignValue{Group: group, Topics: clone(topics)}})
}

// InvokeSeek records a seek (see SeekValue): offsets hold NoOffset where the target is
// still to be looked up; reset says the group tool commits them for the group.
func (r *Recorder) InvokeSeek(now int64, process int, group string, offsets []PartitionOffset, reset bool) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Seek, Seek: &SeekValue{Group: group, Offsets: clone(offsets), Reset: reset}})
}

// InvokeTxn records the start of a transaction of the producer with transactional.id id.
func (r *Recorder) InvokeTxn(now int64, process int, id string) Handle {
	return r.invoke(Op{Time: now, Process: process, F: Txn, Txn: &TxnValue{ID: id}})
}

// TxnProgress records what the open transaction h did so far: its micro-ops
// and offsets, copied. Only Final reads it, for a transaction that never
// completes (its producer crashed, or the run ended inside it).
func (r *Recorder) TxnProgress(h Handle, res Result) {
	if op, ok := r.Op(int(h)); !r.Open(h) || !ok || op.F != Txn {
		panic(fmt.Sprintf("history: handle %d is not an open transaction", h))
	}
	r.soFar[h] = Result{TxnOps: cloneMicroOps(res.TxnOps), TxnOffsets: cloneCommit(res.TxnOffsets)}
}

// Final returns the history as checkers judge it at time now: the ops recorded
// so far and, for each transaction still open, an info completion at now
// listing what it did so far (as Jepsen ends a test: every open op becomes
// info). Other open invocations stay open, which checkers read as info. The
// recorder is not changed: a transaction may still complete later.
func (r *Recorder) Final(now int64) History {
	var txns []*Op // in the order they were invoked
	for w, bits := range r.open {
		for ; bits != 0; bits &= bits - 1 {
			if op, ok := r.Op(w*64 + stdbits.TrailingZeros64(bits)); ok && op.F == Txn {
				txns = append(txns, op)
			}
		}
	}
	if len(txns) == 0 {
		return r.History()
	}
	out := slices.Clone(r.History())
	if n := len(out); n > 0 && now < out[n-1].Time {
		now = out[n-1].Time
	}
	for _, inv := range txns {
		res := r.soFar[Handle(inv.Index)]
		res.Error = "no completion: the producer crashed or is still in its transaction"
		op := r.completion(now, inv, Info, res)
		op.Index = len(out)
		out = append(out, op)
	}
	return out
}

// Ok records that the op invoked as h took effect.
func (r *Recorder) Ok(now int64, h Handle, res Result) { r.complete(now, h, Ok, res) }

// Fail records that the op invoked as h certainly did not take effect.
func (r *Recorder) Fail(now int64, h Handle, res Result) { r.complete(now, h, Fail, res) }

// Info records that the outcome of the op invoked as h is unknown.
func (r *Recorder) Info(now int64, h Handle, res Result) { r.complete(now, h, Info, res) }

// CompleteSends records, as Ok, Fail or Info (t) would one by one, the outcome of n
// sends invoked together, from first on: with t Ok and res.Offset not NoOffset, the
// k-th was appended at res.Offset+k.
func (r *Recorder) CompleteSends(now int64, first Handle, n int, t Type, res Result) {
	if t == Invoke {
		panic(fmt.Sprintf("history: completing op %d as an invocation", first))
	}
	if err := checkResultFits(Send, t, res); err != nil {
		panic(fmt.Sprintf("history: completing op %d: %v", first, err))
	}
	if !r.Open(first) {
		panic(fmt.Sprintf("history: handle %d is not an open invocation", first))
	}
	inv := &r.runs[r.runOf(int(first))]
	if inv.whole >= 0 || inv.typ != 0 || int(first)+n > inv.first+inv.n || n <= 0 {
		panic(fmt.Sprintf("history: ops %d to %d are not sends invoked together", first, int(first)+n-1))
	}
	for i := 1; i < n; i++ {
		if !r.Open(first + Handle(i)) {
			panic(fmt.Sprintf("history: handle %d is not an open invocation", int(first)+i))
		}
	}
	u := run{n: n, time: now, process: inv.process, typ: typeIndex(t), whole: -1, invoke: int(first), offset: NoOffset, err: -1}
	if t == Ok {
		if res.Offset < NoOffset {
			panic(fmt.Sprintf("history: op %d: send offset %d is negative", r.n, res.Offset))
		}
		u.offset = res.Offset
	}
	if res.Error != "" {
		u.err = r.errs.of(res.Error)
	}
	r.appendRun(u)
	for i := range n {
		h := first + Handle(i)
		r.open[h/64] &^= 1 << (h % 64)
	}
}

func (r *Recorder) invoke(op Op) Handle {
	op.Type = Invoke
	op.Invoke = -1
	h := Handle(r.appendWhole(op))
	r.setOpen(h)
	return h
}

func (r *Recorder) setOpen(h Handle) {
	for int(h)/64 >= len(r.open) { // completions take indexes too
		r.open = append(r.open, 0)
	}
	r.open[h/64] |= 1 << (h % 64)
}

// appendWhole records an op that is not a send.
func (r *Recorder) appendWhole(op Op) int {
	op.Index = r.n
	if err := op.checkValueShape(); err != nil {
		panic(fmt.Sprintf("history: op %d: %v", op.Index, err))
	}
	r.whole = append(r.whole, op)
	return r.appendRun(run{n: 1, time: op.Time, whole: int32(len(r.whole) - 1)})
}

// appendRun records run u and returns the index of its first op.
func (r *Recorder) appendRun(u run) int {
	if k := len(r.runs); k > 0 && u.time < r.runs[k-1].time {
		panic(fmt.Sprintf("history: time %d is before the last recorded time %d", u.time, r.runs[k-1].time))
	}
	u.first = r.n
	r.runs = append(r.runs, u)
	r.n += u.n
	return u.first
}

func (r *Recorder) complete(now int64, h Handle, t Type, res Result) {
	if !r.Open(h) {
		panic(fmt.Sprintf("history: handle %d is not an open invocation", h))
	}
	op, whole := r.Op(int(h))
	if !whole {
		r.CompleteSends(now, h, 1, t, res)
		return
	}
	if err := checkResultFits(op.F, t, res); err != nil {
		panic(fmt.Sprintf("history: completing op %d: %v", h, err))
	}
	r.appendWhole(r.completion(now, op, t, res))
	r.open[h/64] &^= 1 << (h % 64)
	if len(r.soFar) > 0 {
		delete(r.soFar, h)
	}
}

// completion builds the completion of open invocation inv (not a send), its values copied.
func (r *Recorder) completion(now int64, inv *Op, t Type, res Result) Op {
	op := Op{Time: now, Process: inv.Process, Type: t, F: inv.F, Invoke: inv.Index, Error: res.Error}
	switch inv.F {
	case Poll:
		op.Poll = &PollValue{Group: inv.Poll.Group, Reads: cloneReads(res.Reads), ReadCommitted: inv.Poll.ReadCommitted, Share: inv.Poll.Share}
	case Commit:
		op.Commit = &CommitValue{Group: inv.Commit.Group, Offsets: clone(inv.Commit.Offsets)}
	case Assign, Subscribe:
		v := *inv.Assign
		v.Topics = clone(v.Topics)
		v.Partitions = clone(v.Partitions)
		if inv.F == Subscribe {
			v.Partitions = clone(res.Partitions)
		}
		op.Assign = &v
	case Txn:
		op.Txn = &TxnValue{ID: inv.Txn.ID, Ops: cloneMicroOps(res.TxnOps), Offsets: cloneCommit(res.TxnOffsets)}
	case Seek:
		v := SeekValue{Group: inv.Seek.Group, Offsets: clone(inv.Seek.Offsets), Reset: inv.Seek.Reset}
		if t == Ok && res.SeekOffsets != nil {
			v.Offsets = clone(res.SeekOffsets)
		}
		op.Seek = &v
	case Ack:
		op.Ack = &AckValue{Group: inv.Ack.Group, TopicPartition: inv.Ack.TopicPartition, Acks: clone(inv.Ack.Acks)}
	}
	return op
}

// cloneCommit deep-copies a transaction's offsets; nil stays nil.
func cloneCommit(c *CommitValue) *CommitValue {
	if c == nil {
		return nil
	}
	return &CommitValue{Group: c.Group, Offsets: clone(c.Offsets)}
}

func checkResultFits(f Func, t Type, res Result) error {
	switch {
	case res.Offset != 0 && (f != Send || t != Ok):
		return fmt.Errorf("offset %d given for a %s %s; only ok sends learn offsets", res.Offset, t, f)
	case len(res.Reads) > 0 && f != Poll:
		return fmt.Errorf("reads given for a %s", f)
	case len(res.Partitions) > 0 && (f != Subscribe || t != Ok):
		return fmt.Errorf("partitions given for a %s %s; only ok subscribes learn partitions", t, f)
	case (len(res.TxnOps) > 0 || res.TxnOffsets != nil) && f != Txn:
		return fmt.Errorf("transaction contents given for a %s", f)
	case res.SeekOffsets != nil && (f != Seek || t != Ok):
		return fmt.Errorf("seek offsets given for a %s %s; only ok seeks learn them", t, f)
	}
	return nil
}

// clone copies s so the caller may reuse its buffer; empty becomes nil, the
// one form of "none" that decoding also produces.
func clone[E any](s []E) []E {
	if len(s) == 0 {
		return nil
	}
	return append([]E(nil), s...)
}

// cloneReads deep-copies reads so the caller may reuse its buffers.
func cloneReads(reads []PartitionRecords) []PartitionRecords {
	if len(reads) == 0 {
		return nil
	}
	out := make([]PartitionRecords, len(reads))
	for i, pr := range reads {
		out[i] = PartitionRecords{TopicPartition: pr.TopicPartition, Records: clone(pr.Records)}
	}
	return out
}

// cloneMicroOps deep-copies a transaction's micro-ops so the caller may reuse them.
func cloneMicroOps(ops []MicroOp) []MicroOp {
	if len(ops) == 0 {
		return nil
	}
	out := make([]MicroOp, len(ops))
	for i, m := range ops {
		out[i].F = m.F
		if m.Send != nil {
			v := *m.Send
			out[i].Send = &v
		}
		if m.Poll != nil {
			out[i].Poll = &PollValue{Group: m.Poll.Group, Reads: cloneReads(m.Poll.Reads), ReadCommitted: m.Poll.ReadCommitted, Share: m.Poll.Share}
		}
	}
	return out
}
