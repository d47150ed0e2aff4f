package export

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"mqsim/model/history"
)

// WriteJepsen writes a client history as Jepsen operations in EDN, one map per line, in
// the shape jepsen.tests.kafka reads (the mapping is in the package documentation).
func WriteJepsen(w io.Writer, h history.History) error {
	partitions := topicPartitions(h)
	bw := bufio.NewWriter(w)
	index := 0
	for i := range h {
		op := &h[i]
		if op.F == history.Commit || op.F == history.Seek {
			// Jepsen's Kafka workload has neither: its checker would take a declared
			// re-read after a seek for an anomaly, as a reader of this file should know.
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "{:index %d, :time %d, :process %d, :type :%s, :f :%s, :value %s", index, op.Time, op.Process, op.Type, op.F, jepsenValue(op, partitions))
		if op.F == history.Assign && op.Assign != nil && op.Assign.SeekToBeginning {
			b.WriteString(", :seek-to-beginning? true")
		}
		if op.Error != "" {
			fmt.Fprintf(&b, ", :error %s", ednString(op.Error))
		}
		if g := opGroup(op); g != "" {
			fmt.Fprintf(&b, ", :group %s", ednString(g))
		}
		if op.Poll != nil && op.Poll.ReadCommitted {
			b.WriteString(", :read-committed? true")
		}
		if op.Txn != nil {
			fmt.Fprintf(&b, ", :transactional-id %s", ednString(op.Txn.ID))
		}
		fmt.Fprintf(&b, ", :mqsim-index %d}\n", op.Index)
		bw.WriteString(b.String())
		index++
	}
	return bw.Flush()
}

func opGroup(op *history.Op) string {
	switch {
	case op.Poll != nil:
		return op.Poll.Group
	case op.Assign != nil:
		return op.Assign.Group
	}
	return ""
}

// jepsenKey is a topic-partition as a Jepsen key: "t-0".
func jepsenKey(tp history.TopicPartition) string { return ednString(tp.String()) }

func jepsenValue(op *history.Op, partitions map[string][]history.TopicPartition) string {
	switch op.F {
	case history.Send:
		return "[" + sendMop(op.Send, op.Type != history.Invoke) + "]"
	case history.Poll:
		return "[" + pollMop(op.Poll, op.Type != history.Invoke) + "]"
	case history.Txn:
		// Jepsen's invocation lists the micro-ops its generator chose; mqsim's
		// clients choose theirs while they run, so the invocation has none.
		mops := make([]string, len(op.Txn.Ops))
		for k, m := range op.Txn.Ops {
			if m.Send != nil {
				mops[k] = sendMop(m.Send, true)
			} else {
				mops[k] = pollMop(m.Poll, true)
			}
		}
		return "[" + strings.Join(mops, " ") + "]"
	case history.Assign, history.Subscribe:
		a := op.Assign
		var keys []history.TopicPartition
		if len(a.Partitions) > 0 {
			keys = a.Partitions
		} else {
			for _, t := range a.Topics {
				keys = append(keys, partitions[t]...)
			}
		}
		parts := make([]string, len(keys))
		for k, tp := range keys {
			parts[k] = jepsenKey(tp)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return "nil"
}

// sendMop is a send micro-op: [:send k v] as invoked, [:send k [offset v]]
// once completed (offset nil when the client did not learn it).
func sendMop(s *history.SendValue, completed bool) string {
	if !completed {
		return fmt.Sprintf("[:send %s %s]", jepsenKey(s.TopicPartition), ednString(s.Value))
	}
	off := "nil"
	if s.Offset != history.NoOffset {
		off = strconv.FormatInt(s.Offset, 10)
	}
	return fmt.Sprintf("[:send %s [%s %s]]", jepsenKey(s.TopicPartition), off, ednString(s.Value))
}

// pollMop is a poll micro-op: [:poll] as invoked, [:poll {k [[offset v] ...]}]
// once completed.
func pollMop(p *history.PollValue, completed bool) string {
	if !completed {
		return "[:poll]"
	}
	var b strings.Builder
	b.WriteString("[:poll {")
	for k, pr := range p.Reads {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jepsenKey(pr.TopicPartition) + " [")
		for j, rec := range pr.Records {
			if j > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "[%d %s]", rec.Offset, ednString(rec.Value))
		}
		b.WriteString("]")
	}
	b.WriteString("}]")
	return b.String()
}

// topicPartitions lists, per topic, every partition of it the history mentions, sorted.
func topicPartitions(h history.History) map[string][]history.TopicPartition {
	out := map[string][]history.TopicPartition{}
	add := func(tp history.TopicPartition) {
		if !slices.Contains(out[tp.Topic], tp) {
			out[tp.Topic] = append(out[tp.Topic], tp)
		}
	}
	for i := range h {
		op := &h[i]
		switch {
		case op.Send != nil:
			add(op.Send.TopicPartition)
		case op.Poll != nil:
			for _, pr := range op.Poll.Reads {
				add(pr.TopicPartition)
			}
		case op.Assign != nil:
			for _, tp := range op.Assign.Partitions {
				add(tp)
			}
		case op.Commit != nil:
			for _, o := range op.Commit.Offsets {
				add(o.TopicPartition)
			}
		case op.Txn != nil:
			for _, m := range op.Txn.Ops {
				if m.Send != nil {
					add(m.Send.TopicPartition)
				} else {
					for _, pr := range m.Poll.Reads {
						add(pr.TopicPartition)
					}
				}
			}
		}
	}
	for t := range out {
		slices.SortFunc(out[t], history.TopicPartition.Compare)
	}
	return out
}

// ednString quotes s as an EDN string.
func ednString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
