package checker

import (
	"fmt"
	"slices"

	"mqsim/model/history"
)

// KeyOrderChecker names CheckKeyOrder's findings.
const KeyOrderChecker = "key-order"

// CheckKeyOrder judges a log history against per-key order across a topic: what an
// application assumes when it relies on the default partitioner sending every record of
// a key to one partition. Kafka promises order per partition only; a key keeps its order
// as long as it stays in one partition, and adding partitions moves keys (murmur2 of the
// key modulo the new count). For each reader (a consumer group, or a process polling
// without one) and each producer process, the values of one key that the reader read
// must come in the order the producer invoked their sends: a value read (its first ok
// read, in poll completion order, then in the poll's order) before a value of the same
// key the same producer sent earlier is reordered. Only ok sends count, and only values
// the reader read: loss and duplicates are the log checker's findings.
func CheckKeyOrder(h history.History) Report {
	f := newFindings(KeyOrderChecker, nil)
	type sent struct {
		process int
		key     string
		tp      history.TopicPartition
		offset  int64
		ref     OpRef
	}
	sends := map[string]sent{} // by value: values are unique in a history
	var invokes []int          // the invocation index of each ok send in order
	var order []string         // ok sends' values, in completion order until sorted below
	for _, op := range h {
		if op.F != history.Send || op.Type != history.Ok || op.Send == nil || op.Send.Key == "" {
			continue
		}
		if _, dup := sends[op.Send.Value]; dup {
			continue
		}
		sends[op.Send.Value] = sent{process: op.Process, key: op.Send.Key, tp: op.Send.TopicPartition, offset: op.Send.Offset,
			ref: OpRef{Index: op.Index, Process: op.Process, F: op.F, Type: op.Type, Start: h[op.Invoke].Time, End: op.Time}}
		invokes = append(invokes, op.Invoke)
		order = append(order, op.Send.Value)
	}
	// Sort the ok sends by invocation: the order the producers asked for.
	idx := make([]int, len(order))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return invokes[a] - invokes[b] })

	// Each reader's first ok read of each value, as a rank in its reading order.
	type read struct {
		rank int
		tp   history.TopicPartition
		ref  OpRef
	}
	var readers []string
	reads := map[string]map[string]read{}
	for _, op := range h {
		if op.F != history.Poll || op.Type != history.Ok || op.Poll == nil {
			continue
		}
		reader := op.Poll.Group
		if reader == "" {
			reader = fmt.Sprintf("process %d", op.Process)
		} else {
			reader = "group " + reader
		}
		rs := reads[reader]
		if rs == nil {
			rs = map[string]read{}
			reads[reader] = rs
			readers = append(readers, reader)
		}
		ref := OpRef{Index: op.Index, Process: op.Process, F: op.F, Type: op.Type, Start: h[op.Invoke].Time, End: op.Time}
		for _, pr := range op.Poll.Reads {
			for _, r := range pr.Records {
				if _, seen := rs[r.Value]; !seen {
					rs[r.Value] = read{rank: len(rs), tp: pr.TopicPartition, ref: ref}
				}
			}
		}
	}
	for _, reader := range readers {
		rs := reads[reader]
		// latest is, per producer and key, the value read latest among those sent so far.
		type stream struct {
			process int
			key     string
		}
		latest := map[stream]string{}
		for _, i := range idx {
			v := order[i]
			r, ok := rs[v]
			if !ok {
				continue
			}
			s := sends[v]
			k := stream{s.process, s.key}
			prev, has := latest[k]
			if has && rs[prev].rank > r.rank {
				p, ps := rs[prev], sends[prev]
				// It began when the later value was read, ahead of its turn.
				f.addAt(Violation{Anomaly: Reordered, TopicPartition: s.tp, Values: []string{v, prev}, Time: r.ref.End,
					Offsets: []int64{s.offset, ps.offset}, Ops: []OpRef{ps.ref, s.ref, r.ref, p.ref},
					Text: fmt.Sprintf("%s read %q (%s@%d) before %q (%s@%d), which producer process %d sent earlier with the same key %q",
						reader, v, tpString(s.tp), s.offset, prev, tpString(ps.tp), ps.offset, s.process, s.key)})
				continue
			}
			latest[k] = v
		}
	}
	return f.done()
}

func tpString(tp history.TopicPartition) string { return fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) }
