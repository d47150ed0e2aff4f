package checker

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"mqsim/model/history"
)

// logInput is a porcupine input: a send of value, or a poll, on partition
// part (an index in first-seen order; name is for people). A send's offset
// is the offset its record must sit at: the acknowledged one, or else the
// one an ok poll read the value at (values are unique per partition), or
// NoOffset when nobody learned it.
type logInput struct {
	part   int
	name   string
	send   bool
	value  string
	offset int64
	rank   int64 // offset's place among the partition's known send offsets, 0, 1, ...
}

// logOutput is a porcupine output. unknown marks an info or never-completed
// op: the model accepts any outcome. For a send, offset is the assigned
// offset (NoOffset: acknowledged without one, acks=0); for a poll, records
// is the run of consecutive records it returned.
type logOutput struct {
	unknown bool
	offset  int64
	records []history.Record
}

// logNode is one record of a persistent, immutable log. Offsets are sparse,
// as in Kafka (transaction markers, compaction and retention leave gaps):
// only their order matters. pos is the record's position (0, 1, 2, ...);
// offset is its offset, or NoOffset when no one learned it. Branches of
// porcupine's search share prefixes; jump pointers (Myers' skew-binary
// scheme) find a record in O(log n) steps, so state stays small however
// long the log.
type logNode struct {
	value        string
	offset       int64
	pos          int64
	maxOffset    int64 // the highest known offset up to here; -1: none
	rank         int64 // maxOffset's rank (logInput.rank); -1: none
	unplaced     int64 // records without a known offset after the one at maxOffset
	parent, jump *logNode
}

// logRoot is the empty log: position -1, jumping to itself.
var logRoot = func() *logNode {
	n := &logNode{offset: history.NoOffset, pos: -1, maxOffset: -1, rank: -1}
	n.parent, n.jump = n, n
	return n
}()

func (n *logNode) push(value string, offset, rank int64) *logNode {
	next := &logNode{value: value, offset: offset, pos: n.pos + 1, maxOffset: n.maxOffset, rank: n.rank,
		unplaced: n.unplaced + 1, parent: n, jump: n}
	if offset != history.NoOffset {
		next.maxOffset, next.rank, next.unplaced = offset, rank, 0
	}
	if j := n.jump; n.pos-j.pos == j.pos-j.jump.pos {
		next.jump = j.jump
	}
	return next
}

// find returns the record at offset, or nil. Known offsets increase along
// the log (stepLog keeps it so), so the record is the first whose
// maxOffset reaches offset.
func (n *logNode) find(offset int64) *logNode {
	if n.maxOffset < offset {
		return nil
	}
	for n.pos >= 0 && n.parent.maxOffset >= offset {
		if n.jump.maxOffset >= offset {
			n = n.jump
		} else {
			n = n.parent
		}
	}
	if n.pos < 0 || n.offset != offset {
		return nil
	}
	return n
}

// logState is the model state: the log's last node and a chained hash of
// its values and offsets, so Equal and Hash never walk the whole log when
// states differ. It is a comparable struct, but porcupine must use Equal:
// two equal logs built by different search branches have different
// pointers.
type logState struct {
	tail *logNode
	hash uint64
}

// push appends a record, chaining its FNV-1a hash into the log's hash.
func (s logState) push(value string, offset, rank int64) logState {
	h := s.hash ^ 0x9e3779b97f4a7c15 // separates values: ["ab"] differs from ["a","b"]
	for i := 0; i < len(value); i++ {
		h = (h ^ uint64(value[i])) * 0x100000001b3
	}
	h = (h ^ uint64(offset)) * 0x100000001b3
	return logState{tail: s.tail.push(value, offset, rank), hash: h}
}

func (s logState) equal(o logState) bool {
	if s.hash != o.hash || s.tail.pos != o.tail.pos {
		return false
	}
	for x, y := s.tail, o.tail; x != y; x, y = x.parent, y.parent {
		if x.value != y.value || x.offset != y.offset {
			return false
		}
	}
	return true
}

// logModel is the porcupine model of one partition's log, starting from
// start: a send appends its record, whose known offset must be the next of
// the partition's known send offsets (every one of them is in the log in
// the end, in offset order), with room below it for the records of unknown
// offset since the last known one;
// a poll returns consecutive records of the log, each at its offset (any
// run: Kafka fetches start anywhere and return any prefix). Offsets are
// sparse: their order matters, never their density.
func logModel(start logState) porcupine.Model {
	return porcupine.Model{
		Partition: partitionByTopicPartition,
		Init:      func() any { return start },
		Step:      stepLog,
		Equal:     func(a, b any) bool { return a.(logState).equal(b.(logState)) },
		Hash:      func(s any) uint64 { return s.(logState).hash },
		DescribeOperation: func(in, out any) string {
			return describeLogOp(*in.(*logInput), *out.(*logOutput))
		},
		DescribeState: describeLog,
		DescribeOperationMetadata: func(m any) string {
			if m == nil {
				return ""
			}
			r := m.(*OpRef)
			return fmt.Sprintf("process %d, op %d", r.Process, r.Index)
		},
	}
}

// emptyLog is the state before the first record.
var emptyLog = logState{tail: logRoot}

func stepLog(state, input, output any) (bool, any) {
	s, in, out := state.(logState), input.(*logInput), output.(*logOutput)
	if in.send {
		if in.offset != history.NoOffset && (in.rank != s.tail.rank+1 || in.offset-s.tail.maxOffset-1 < s.tail.unplaced) {
			return false, s
		}
		return true, s.push(in.value, in.offset, in.rank)
	}
	if out.unknown {
		return true, s
	}
	last := len(out.records) - 1
	n := s.tail.find(out.records[last].Offset)
	for i := last; i >= 0; i-- {
		r := out.records[i]
		if n == nil || n.pos < 0 || n.offset != r.Offset || n.value != r.Value {
			return false, s
		}
		n = n.parent
	}
	return true, s
}

// partitionByTopicPartition splits a history by partition, in first-seen
// order (never map order: the visualisation and reports must be stable).
func partitionByTopicPartition(ops []porcupine.Operation) [][]porcupine.Operation {
	var sizes []int
	for _, o := range ops {
		p := o.Input.(*logInput).part
		for len(sizes) <= p {
			sizes = append(sizes, 0)
		}
		sizes[p]++
	}
	parts := make([][]porcupine.Operation, len(sizes))
	for p, n := range sizes {
		parts[p] = make([]porcupine.Operation, 0, n)
	}
	for _, o := range ops {
		p := o.Input.(*logInput).part
		parts[p] = append(parts[p], o)
	}
	return parts
}

func describeLogOp(in logInput, out logOutput) string {
	var b strings.Builder
	b.WriteString(in.name + ": ")
	switch {
	case in.send && out.unknown:
		fmt.Fprintf(&b, "send %q -> ?", in.value)
	case in.send && out.offset == history.NoOffset:
		fmt.Fprintf(&b, "send %q -> ok, offset unknown", in.value)
	case in.send:
		fmt.Fprintf(&b, "send %q -> %d", in.value, out.offset)
	case out.unknown:
		b.WriteString("poll -> ?")
	default:
		b.WriteString("poll ->")
		for i, r := range out.records {
			if i == 8 {
				fmt.Fprintf(&b, " ... (%d records)", len(out.records))
				break
			}
			fmt.Fprintf(&b, " %d:%q", r.Offset, r.Value)
		}
	}
	return b.String()
}

// describeLog shows the length and the last few values: describing the
// whole log at every step would make the page quadratic in its length.
func describeLog(state any) string {
	s := state.(logState)
	var tail []string
	for n := s.tail; n.pos >= 0 && len(tail) < 3; n = n.parent {
		off := "?"
		if n.offset != history.NoOffset {
			off = strconv.FormatInt(n.offset, 10)
		}
		tail = append(tail, off+":"+strconv.Quote(n.value))
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	prefix := ""
	if s.tail.pos >= 3 {
		prefix = "... "
	}
	return fmt.Sprintf("%d records [%s%s]", s.tail.pos+1, prefix, strings.Join(tail, " "))
}

// porcupineOps converts a valid history: sends and polls, one operation
// per partition a poll read (a multi-partition poll is checked per
// partition, since Kafka promises no cross-partition snapshot). Client ids
// are dense, in first-seen process order; ops are in invocation order.
//
// Three simplifications keep the search small without changing its
// verdict, given that values are unique per partition:
//   - Fail ops are left out: they did not happen.
//   - A poll with an unknown outcome (info, never completed) changes
//     nothing and is accepted whatever it returns: left out.
//   - A send with an unknown outcome may take effect at any later point or
//     never. If no ok poll read its value, taking effect last (or never)
//     explains everything else as well as any other place: left out. If
//     one did, it took effect before the first such poll returned: that is
//     its return time, and the offset it was read at is its offset.
func porcupineOps(h history.History) (ops []porcupine.Operation, tps []history.TopicPartition, skipped []history.TopicPartition) {
	partOf := map[history.TopicPartition]int{}
	var names []string // tps[i].String()
	clientOf := map[int]int{}
	part := func(tp history.TopicPartition) int {
		if p, ok := partOf[tp]; ok {
			return p
		}
		partOf[tp] = len(tps)
		tps = append(tps, tp)
		names = append(names, tp.String())
		return len(tps) - 1
	}
	type key struct {
		tp    history.TopicPartition
		value string
	}
	type firstRead struct {
		offset int64
		end    int64 // the earliest return of an ok poll that read the value
	}
	skipped = transactionalPartitions(h)
	var invokes []int // in invocation order
	completion := make([]int, len(h))
	for i := range h {
		completion[i] = -1
		if op := &h[i]; op.Type == history.Invoke {
			invokes = append(invokes, i)
		} else {
			completion[op.Invoke] = i
		}
	}
	// Only a send whose outcome or offset the client did not learn needs
	// the first read of its value; the polls are searched for those alone
	// (a map of every value read costs more than the rest of this function).
	reads := map[key]firstRead{}
	ops = make([]porcupine.Operation, 0, len(invokes))
	ins, outs, refs := make([]logInput, 0, len(invokes)), make([]logOutput, 0, len(invokes)), make([]OpRef, 0, len(invokes))
	for _, inv := range invokes {
		if c := &h[inv]; c.F == history.Send {
			if j := completion[inv]; j < 0 || h[j].Type != history.Ok || h[j].Send.Offset == history.NoOffset {
				reads[key{c.Send.TopicPartition, c.Send.Value}] = firstRead{offset: history.NoOffset}
			}
		}
	}
	for i := range h {
		op := &h[i]
		if len(reads) == 0 || op.F != history.Poll || op.Type != history.Ok {
			continue
		}
		for _, pr := range op.Poll.Reads {
			for _, r := range pr.Records {
				k := key{pr.TopicPartition, r.Value}
				if read, wanted := reads[k]; wanted && read.offset == history.NoOffset {
					reads[k] = firstRead{offset: r.Offset, end: op.Time} // h is in time order
				}
			}
		}
	}
	for _, inv := range invokes {
		c, start := &h[inv], h[inv].Time
		ret, typ := int64(math.MaxInt64), history.Info
		ref := OpRef{Index: inv, Process: c.Process, F: c.F, Type: history.Invoke, Start: start, End: -1}
		if j := completion[inv]; j >= 0 {
			c, typ, ret = &h[j], h[j].Type, h[j].Time
			ref.Index, ref.Type, ref.End = j, typ, ret
		}
		unknown := typ != history.Ok
		if typ == history.Fail || (c.F != history.Send && c.F != history.Poll) || (c.F == history.Poll && unknown) {
			continue
		}
		in, out := logInput{send: c.F == history.Send}, logOutput{unknown: unknown}
		if in.send {
			in.value, in.offset, out.offset = c.Send.Value, c.Send.Offset, c.Send.Offset
			read, wasRead := firstRead{offset: history.NoOffset}, false
			if unknown || in.offset == history.NoOffset {
				read = reads[key{c.Send.TopicPartition, c.Send.Value}]
				wasRead = read.offset != history.NoOffset
			}
			switch {
			case unknown && !wasRead:
				continue
			case unknown:
				ret = max(start, read.end)
			}
			if in.offset == history.NoOffset && wasRead {
				in.offset = read.offset
			}
		}
		if _, ok := clientOf[c.Process]; !ok {
			clientOf[c.Process] = len(clientOf)
		}
		add := func(tp history.TopicPartition, in logInput, out logOutput) {
			in.part = part(tp)
			in.name = names[in.part]
			ins, outs, refs = append(ins, in), append(outs, out), append(refs, ref)
			ops = append(ops, porcupine.Operation{ClientId: clientOf[c.Process], Call: start, Return: ret})
		}
		if in.send {
			if !slices.Contains(skipped, c.Send.TopicPartition) {
				add(c.Send.TopicPartition, in, out)
			}
			continue
		}
		for _, pr := range c.Poll.Reads {
			if len(pr.Records) > 0 && !slices.Contains(skipped, pr.TopicPartition) {
				add(pr.TopicPartition, in, logOutput{records: pr.Records})
			}
		}
	}
	rankOffsets(ins, len(tps))
	// Each op points into one array per field: boxing a pointer allocates
	// nothing, boxing the values allocated three times per op.
	for i := range ops {
		ops[i].Input, ops[i].Output, ops[i].Metadata = &ins[i], &outs[i], &refs[i]
	}
	return ops, tps, skipped
}

// transactionalPartitions lists, sorted, the partitions a transaction sent to
// or polled. The sequential log model has no transactions: a transaction's
// sends take effect together at its commit, or never, so those partitions are
// left to the transaction checks (CheckLog) and not judged here.
func transactionalPartitions(h history.History) []history.TopicPartition {
	var out []history.TopicPartition
	for i := range h {
		if h[i].F != history.Txn || h[i].Type == history.Invoke {
			continue
		}
		for _, m := range h[i].Txn.Ops {
			switch {
			case m.Send != nil:
				out = append(out, m.Send.TopicPartition)
			case m.Poll != nil:
				for _, pr := range m.Poll.Reads {
					out = append(out, pr.TopicPartition)
				}
			}
		}
	}
	slices.SortFunc(out, history.TopicPartition.Compare)
	return slices.Compact(out)
}

// rankOffsets sets each send's rank: the place of its offset among the
// distinct known send offsets of its partition.
func rankOffsets(ins []logInput, parts int) {
	offsets := make([][]int64, parts)
	for _, in := range ins {
		if in.send && in.offset != history.NoOffset {
			offsets[in.part] = append(offsets[in.part], in.offset)
		}
	}
	for i := range offsets {
		slices.Sort(offsets[i])
		offsets[i] = slices.Compact(offsets[i])
	}
	for i := range ins {
		in := &ins[i]
		if !in.send {
			continue
		}
		in.rank = -1
		if in.offset != history.NoOffset {
			r, _ := slices.BinarySearch(offsets[in.part], in.offset)
			in.rank = int64(r)
		}
	}
}
