package client

import (
	"cmp"
	"slices"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Isolation (isolation.level): what a consumer lets its application see of a fetch.
// Control batches (transaction markers) are never handed over, whatever the isolation.
// A read_committed consumer fetches up to the last stable offset only, and drops the
// records of aborted transactions using the aborted transactions the leader lists: a
// producer's transactional batches are dropped from its listed first offset until its
// next marker, its ABORT. This is Kafka's CompletedFetch.nextFetchedRecord with
// consumeAbortedTransactionsUpTo and isBatchAborted (clients/.../consumer/internals).
// Kafka checks that the marker that ends the range is an ABORT; a transaction ends with
// exactly one marker, so here any marker of the producer ends it.

// readable turns a fetch's batches into the records the application may see, from the
// fetch offset on. skipTo, when positive, is the offset after the last batch it left out
// (epoch its leader epoch): the position moves there once the records before it are
// consumed.
func (c *Consumer) readable(env *sim.Env, r *consumerReq, m proto.FetchResponse) (got []fetched, skipTo int64, skipEpoch int32) {
	// Sized at once: a fetch may bring a mebibyte of records, and growing the slice by
	// doubling costs more than the records themselves.
	n := 0
	for _, b := range m.Batches {
		n += len(b.Records)
	}
	got = make([]fetched, 0, n)
	next := r.offset
	readCommitted := c.cfg.Isolation == proto.ReadCommitted
	var pending []proto.AbortedTxn // aborted transactions not reached yet, by first offset
	var abortedPIDs []int64        // producers inside an aborted transaction
	if readCommitted && len(m.AbortedTransactions) > 0 {
		pending = slices.Clone(m.AbortedTransactions)
		slices.SortStableFunc(pending, func(a, b proto.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	}
	aborted, control := 0, 0
	for _, b := range m.Batches {
		if b.Flags != 0 {
			for readCommitted && len(pending) > 0 && pending[0].FirstOffset <= b.LastOffset() {
				abortedPIDs = append(abortedPIDs, pending[0].ProducerID)
				pending = pending[1:]
			}
			isControl := b.Flags&wal.FlagControl != 0
			drop := isControl || (readCommitted && slices.Contains(abortedPIDs, b.ProducerID))
			if isControl {
				abortedPIDs = slices.DeleteFunc(abortedPIDs, func(pid int64) bool { return pid == b.ProducerID })
			}
			if drop {
				if end := b.NextOffset(); end > next {
					k := int(end - max(next, b.BaseOffset))
					if isControl {
						control += k
					} else {
						aborted += k
					}
					next, skipTo, skipEpoch = end, end, b.LeaderEpoch
				}
				continue
			}
		}
		for i, rec := range b.Records {
			off := b.OffsetOf(i)
			if off < next {
				continue
			}
			value := string(rec.Value)
			if label, ok := proto.TombstoneLabel(&rec); ok {
				value = label // the history follows a tombstone by the name it carries
			}
			got = append(got, fetched{offset: off, value: value, epoch: b.LeaderEpoch, key: string(rec.Key), headers: rec.Headers})
			next = off + 1
		}
		if end := b.NextOffset(); b.Compacted() && end > next {
			// The cleaner removed the batch's last records: the position moves past the
			// gap (a removed offset reads as the next surviving one).
			next, skipTo, skipEpoch = end, end, b.LeaderEpoch
		}
	}
	if aborted+control > 0 {
		sim.Record(env, ReadCommittedSkipped{TP: r.tp, Aborted: aborted, Control: control})
	}
	return got, skipTo, skipEpoch
}
