package group

import (
	"slices"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Transactional offset commits (KIP-98, KIP-447): a transactional producer's
// sendOffsetsToTransaction arrives as TxnOffsetCommit. The coordinator fences it like an
// offset commit (generation, member id, instance id: a consume-transform-produce
// application whose group moved on must not commit), appends the offsets to its
// partition as a transactional batch of the producer (so a fenced producer epoch is
// refused by the partition, as for any produce), and keeps them pending, per producer
// id: neither OffsetFetch nor Group.Offsets sees them until the transaction's marker
// reaches the partition. A COMMIT makes them the group's committed offsets, an ABORT
// drops them (Kafka's GroupMetadata pendingTransactionalOffsetCommits).
//
// An OffsetFetch that requires stable offsets (a read_committed consumer's, KIP-447) is
// answered UNSTABLE_OFFSET_COMMIT while one of its partitions has a pending offset, and
// the consumer asks again after a backoff: otherwise a new instance of a
// consume-transform-produce application would start from the offset before a transaction
// that is committing, and process its input again (GroupMetadata.hasPendingOffsetCommitsForTopicPartition).
//
// mqsim simplifies: a committed transaction's offset replaces the group's committed one
// whatever was committed in between (Kafka keeps the later record by log position), and
// UNSTABLE_OFFSET_COMMIT answers the whole request (Kafka answers it per partition).

// pendingTxnOffset is one offset a transaction committed, waiting for its marker.
type pendingTxnOffset struct {
	pid   int64
	group string
	c     Committed
	at    int64 // the end offset of its append: the offsets one request appended share it
}

// PendingTxnOffset is a pending transactional offset, for views.
type PendingTxnOffset struct {
	ProducerID int64
	Group      string
	Offset     Committed
}

// PendingTxnOffsets lists the transactional offsets waiting for their marker, in the
// order they were appended.
func (c *Coordinator) PendingTxnOffsets() []PendingTxnOffset {
	out := make([]PendingTxnOffset, len(c.txnOffsets))
	for i, p := range c.txnOffsets {
		out[i] = PendingTxnOffset{ProducerID: p.pid, Group: p.group, Offset: p.c}
	}
	return out
}

// validateTxnCommit checks a transactional commit's group metadata (KIP-447): a producer
// that sends none is not checked; otherwise the member must be in the group as a plain
// commit's must (a classic group's member, instance id and generation; a consumer-protocol
// group's member and member epoch), except that one during CompletingRebalance is taken.
func (c *Coordinator) validateTxnCommit(g *Group, m proto.TxnOffsetCommit) proto.Error {
	switch {
	case m.Generation < 0 && m.MemberID == "" && m.InstanceID == "":
		return proto.None
	case g == nil:
		return proto.UnknownMemberID
	case g.Consumer != nil:
		return validateConsumerCommit(g.Consumer, proto.OffsetCommit{Group: m.Group, Generation: m.Generation, MemberID: m.MemberID})
	}
	return g.checkMember(m.MemberID, m.InstanceID, m.Generation)
}

func (c *Coordinator) onTxnCommit(h Host, from sim.NodeID, m proto.TxnOffsetCommit) {
	reply := func(e proto.Error) {
		h.Send(from, proto.TxnOffsetCommitResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
	}
	g := c.group(m.Group, false)
	if e := c.validateTxnCommit(g, m); e != proto.None {
		if !c.bugs.NoTxnOffsetFencing {
			if h.Tracing() {
				h.Record(TxnCommitRejected{Group: m.Group, Member: m.MemberID, Generation: m.Generation, ProducerID: m.ProducerID,
					Offsets: slices.Clone(m.Offsets), Err: e})
			}
			reply(e)
			return
		}
		if h.Tracing() {
			h.Record(TxnCommitUnfenced{Group: m.Group, Member: m.MemberID, Generation: m.Generation, ProducerID: m.ProducerID,
				Offsets: slices.Clone(m.Offsets), Err: e})
		}
	}
	records := make([]wal.Record, len(m.Offsets))
	for i, o := range m.Offsets {
		records[i] = encodeOffset(m.Group, o, m.MemberID, m.Generation)
	}
	next, err := h.AppendTransactional(m.ProducerID, m.ProducerEpoch, records)
	if err != proto.None {
		e := storeError(err)
		if err == proto.InvalidProducerEpoch || err == proto.ProducerFenced {
			e = err // the partition's producer state fenced the producer: say so
		}
		record(h, TxnCommitFailed{Group: m.Group, Member: m.MemberID, ProducerID: m.ProducerID, Offsets: slices.Clone(m.Offsets), Err: e})
		reply(e)
		return
	}
	for _, o := range m.Offsets {
		c.txnOffsets = append(c.txnOffsets, pendingTxnOffset{pid: m.ProducerID, group: m.Group, at: next,
			c: Committed{TP: o.TP, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Member: m.MemberID, Generation: m.Generation}})
	}
	offsets := slices.Clone(m.Offsets)
	c.await(h, next, func(h Host, e proto.Error) {
		if e != proto.None {
			// Kafka's failedTxnOffsetCommit: what was not stored is no longer pending.
			c.txnOffsets = slices.DeleteFunc(c.txnOffsets, func(p pendingTxnOffset) bool { return p.pid == m.ProducerID && p.at == next })
			record(h, TxnCommitFailed{Group: m.Group, Member: m.MemberID, ProducerID: m.ProducerID, Offsets: offsets, Err: e})
			reply(e)
			return
		}
		record(h, TxnOffsetsPending{Group: m.Group, Member: m.MemberID, Generation: m.Generation, ProducerID: m.ProducerID, Offsets: offsets})
		reply(proto.None)
	})
}

// CompleteTxn applies a transaction's marker, replicated to the coordinator's partition:
// the producer's pending offsets become committed (commit) or are dropped (abort).
func (c *Coordinator) CompleteTxn(h Host, pid int64, commit bool) {
	done := c.completeTxn(pid, commit)
	if h.Tracing() {
		e := TxnOffsetsCompleted{ProducerID: pid, Commit: commit}
		for _, p := range done {
			e.Offsets = append(e.Offsets, TxnOffset{Group: p.group, TP: p.c.TP, Offset: p.c.Offset})
		}
		h.Record(e)
	}
}

// completeTxn takes the producer's pending offsets out and, for a commit, makes them the
// groups' committed offsets, in the order they were appended.
func (c *Coordinator) completeTxn(pid int64, commit bool) []pendingTxnOffset {
	var done []pendingTxnOffset
	c.txnOffsets = slices.DeleteFunc(c.txnOffsets, func(p pendingTxnOffset) bool {
		if p.pid == pid {
			done = append(done, p)
			return true
		}
		return false
	})
	if commit {
		for _, p := range done {
			c.group(p.group, true).setOffset(p.c)
		}
	}
	return done
}

// loadTxnBatch applies a transactional batch of the log while loading: offsets pending
// for their producer, or a marker that completes them.
func (c *Coordinator) loadTxnBatch(b *wal.Batch, from int64) (records, bad int) {
	if b.IsControl() {
		m, err := wal.BatchMarker(b)
		if err != nil {
			return 1, 1
		}
		c.completeTxn(b.ProducerID, m.Type == wal.ControlCommit)
		return 1, 0
	}
	for i, r := range b.Records {
		if b.BaseOffset+int64(i) < from {
			continue
		}
		records++
		d, err := decode(r)
		if err != nil || d.offset == nil {
			bad++
			continue
		}
		c.txnOffsets = append(c.txnOffsets, pendingTxnOffset{pid: b.ProducerID, group: d.group, at: b.NextOffset(),
			c: Committed{TP: d.tp, Offset: d.offset.Offset, LeaderEpoch: d.offset.LeaderEpoch, Member: d.offset.Member, Generation: d.offset.Generation}})
	}
	return records, bad
}

// pendingOffsetFor reports whether a transaction's offset for one of tps in group waits
// for its marker.
func (c *Coordinator) pendingOffsetFor(group string, tps []proto.TP) bool {
	return slices.ContainsFunc(c.txnOffsets, func(p pendingTxnOffset) bool {
		return p.group == group && slices.Contains(tps, p.c.TP)
	})
}
