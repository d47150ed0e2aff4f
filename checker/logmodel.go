package checker

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"mqsim/model/history"
)

// logInput is a porcupine input: a send of value, or a poll, on partition
// part (an index in first-seen order; name is for people).
type logInput struct {
	part  int
	name  string
	send  bool
	value string
}

// logOutput is a porcupine output. unknown marks an info or never-completed
// op: the model accepts any outcome. For a send, offset is the assigned
// offset (NoOffset: acknowledged without one, acks=0); for a poll, records
// is the contiguous run it returned.
type logOutput struct {
	unknown bool
	offset  int64
	records []history.Record
}

// logNode is one record of a persistent, immutable log. Branches of
// porcupine's search share prefixes; jump pointers (Myers' skew-binary
// scheme) find the record at any offset in O(log n) steps, so state stays
// small however long the log.
type logNode struct {
	value        string
	offset       int64
	parent, jump *logNode
}

// logRoot is the empty log: offset -1, jumping to itself.
var logRoot = func() *logNode {
	n := &logNode{offset: -1}
	n.parent, n.jump = n, n
	return n
}()

func (n *logNode) push(value string) *logNode {
	next := &logNode{value: value, offset: n.offset + 1, parent: n, jump: n}
	if j := n.jump; n.offset-j.offset == j.offset-j.jump.offset {
		next.jump = j.jump
	}
	return next
}

// at returns the node at offset (0 <= offset <= n.offset).
func (n *logNode) at(offset int64) *logNode {
	for n.offset > offset {
		if n.jump.offset >= offset {
			n = n.jump
		} else {
			n = n.parent
		}
	}
	return n
}

// logState is the model state: the log's last node and a chained hash of
// its values, so Equal and Hash never walk the whole log when states differ.
// It is a comparable struct, but porcupine must use Equal: two equal logs
// built by different search branches have different pointers.
type logState struct {
	tail *logNode
	hash uint64
}

// push appends value, chaining its FNV-1a hash into the log's hash.
func (s logState) push(value string) logState {
	h := s.hash ^ 0x9e3779b97f4a7c15 // separates values: ["ab"] differs from ["a","b"]
	for i := 0; i < len(value); i++ {
		h = (h ^ uint64(value[i])) * 0x100000001b3
	}
	return logState{tail: s.tail.push(value), hash: h}
}

func (s logState) equal(o logState) bool {
	if s.hash != o.hash || s.tail.offset != o.tail.offset {
		return false
	}
	for x, y := s.tail, o.tail; x != y; x, y = x.parent, y.parent {
		if x.value != y.value {
			return false
		}
	}
	return true
}

// logModel is the porcupine model of one partition's log: a send appends
// its value and, when acknowledged with an offset, must get exactly the
// next offset; a poll returns a contiguous run of the log starting at the
// offset of its first record (possibly shorter than the log: Kafka fetches
// return any prefix). It assumes dense offsets from 0 (no transaction
// markers, no compaction) and a history that holds every write.
func logModel() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByTopicPartition,
		Init:      func() any { return logState{tail: logRoot} },
		Step:      stepLog,
		Equal:     func(a, b any) bool { return a.(logState).equal(b.(logState)) },
		Hash:      func(s any) uint64 { return s.(logState).hash },
		DescribeOperation: func(in, out any) string {
			return describeLogOp(in.(logInput), out.(logOutput))
		},
		DescribeState: describeLog,
		DescribeOperationMetadata: func(m any) string {
			if m == nil {
				return ""
			}
			r := m.(OpRef)
			return fmt.Sprintf("process %d, op %d", r.Process, r.Index)
		},
	}
}

func stepLog(state, input, output any) (bool, any) {
	s, in, out := state.(logState), input.(logInput), output.(logOutput)
	if in.send {
		if !out.unknown && out.offset != history.NoOffset && out.offset != s.tail.offset+1 {
			return false, s
		}
		return true, s.push(in.value)
	}
	if out.unknown {
		return true, s
	}
	for i, r := range out.records {
		want := out.records[0].Offset + int64(i)
		if r.Offset != want || want > s.tail.offset || s.tail.at(want).value != r.Value {
			return false, s
		}
	}
	return true, s
}

// partitionByTopicPartition splits a history by partition, in first-seen
// order (never map order: the visualisation and reports must be stable).
func partitionByTopicPartition(ops []porcupine.Operation) [][]porcupine.Operation {
	var parts [][]porcupine.Operation
	for _, o := range ops {
		p := o.Input.(logInput).part
		for len(parts) <= p {
			parts = append(parts, nil)
		}
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
	for n := s.tail; n.offset >= 0 && len(tail) < 3; n = n.parent {
		tail = append(tail, strconv.FormatInt(n.offset, 10)+":"+strconv.Quote(n.value))
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	prefix := ""
	if s.tail.offset >= 3 {
		prefix = "... "
	}
	return fmt.Sprintf("%d records [%s%s]", s.tail.offset+1, prefix, strings.Join(tail, " "))
}

// porcupineOps converts a valid history: sends and polls, one operation
// per partition a poll read (a multi-partition poll is checked per
// partition, since Kafka promises no cross-partition snapshot). Client ids
// are dense, in first-seen process order.
func porcupineOps(h history.History) (ops []porcupine.Operation, parts [][]porcupine.Operation, tps []history.TopicPartition) {
	partOf := map[history.TopicPartition]int{}
	clientOf := map[int]int{}
	part := func(tp history.TopicPartition) int {
		if p, ok := partOf[tp]; ok {
			return p
		}
		partOf[tp] = len(tps)
		tps = append(tps, tp)
		return len(tps) - 1
	}
	var invokes []int // in invocation order
	completion := make([]int, len(h))
	for i := range h {
		completion[i] = -1
		if h[i].Type == history.Invoke {
			invokes = append(invokes, i)
		} else {
			completion[h[i].Invoke] = i
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
		if typ == history.Fail || (c.F != history.Send && c.F != history.Poll) {
			continue
		}
		if _, ok := clientOf[c.Process]; !ok {
			clientOf[c.Process] = len(clientOf)
		}
		unknown := typ != history.Ok
		if unknown {
			ret = math.MaxInt64
		}
		add := func(tp history.TopicPartition, in logInput, out logOutput) {
			in.part, in.name, out.unknown = part(tp), tp.String(), unknown
			ops = append(ops, porcupine.Operation{ClientId: clientOf[c.Process], Input: in, Call: start,
				Output: out, Return: ret, Metadata: ref})
		}
		if c.F == history.Send {
			add(c.Send.TopicPartition, logInput{send: true, value: c.Send.Value}, logOutput{offset: c.Send.Offset})
			continue
		}
		for _, pr := range c.Poll.Reads {
			if len(pr.Records) > 0 {
				add(pr.TopicPartition, logInput{}, logOutput{records: pr.Records})
			}
		}
	}
	return ops, partitionByTopicPartition(ops), tps
}
