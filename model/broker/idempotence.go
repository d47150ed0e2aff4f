package broker

import (
	"slices"

	"mqsim/model/proto"
	"mqsim/model/wal"
)

// batchesRetained is how many recent batches a broker remembers per producer to
// recognise retries (Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN).
const batchesRetained = 5

type batchMeta struct {
	firstSeq, lastSeq int32
	offset            int64
}

type producerState struct {
	pid     int64
	epoch   int16
	batches []batchMeta // newest last, at most batchesRetained
	// txnFirst is the first offset of the producer's open transaction on this partition,
	// -1 when none (Kafka's ProducerStateEntry.currentTxnFirstOffset); coordEpoch is the
	// coordinator epoch of its last marker, -1 before any (txn.go).
	txnFirst   int64
	coordEpoch int32
}

// producerStates is the idempotence and transaction state of one partition. It is
// rebuilt from the log after every recovery and truncation, and kept up to date by every
// append, leader's or follower's, so a new leader has it already.
type producerStates struct {
	list []*producerState // sorted by producer id
	// open counts the producers with an open transaction; aborted is the aborted
	// transaction index, in the order of the markers (txn.go).
	open    int
	aborted []abortedTxn
	// ended are the transactions whose marker the high watermark has not passed yet, in
	// marker order: they still hold the LSO (ProducerStateManager.unreplicatedTxns).
	ended []abortedTxn
}

func (ps *producerStates) find(pid int64) *producerState {
	i, ok := slices.BinarySearchFunc(ps.list, pid, func(p *producerState, pid int64) int {
		switch {
		case p.pid < pid:
			return -1
		case p.pid > pid:
			return 1
		}
		return 0
	})
	if ok {
		return ps.list[i]
	}
	p := &producerState{pid: pid, epoch: -1, txnFirst: -1, coordEpoch: -1}
	ps.list = slices.Insert(ps.list, i, p)
	return p
}

// check decides what to do with a produced batch: dup >= 0 is the offset of the same
// batch already in the log; otherwise an error, or (-1, None) to append it. noFencing
// (producer-fencing=off) lets a transactional batch of an older epoch in.
func (ps *producerStates) check(b wal.Batch, noDedup, noFencing bool) (dup int64, e proto.Error) {
	if isNoProducer(b) {
		return -1, proto.None
	}
	p := ps.find(b.ProducerID)
	switch {
	case b.ProducerEpoch < p.epoch && b.IsTransactional() && noFencing:
		return -1, proto.None
	case b.ProducerEpoch < p.epoch:
		// Kafka 2.7+ answers a produce with an old epoch INVALID_PRODUCER_EPOCH, not
		// PRODUCER_FENCED (ProducerAppendInfo.checkProducerEpoch): the client aborts and
		// asks its coordinator, which says whether it is fenced.
		return -1, proto.InvalidProducerEpoch
	case !b.IsTransactional() && p.txnFirst >= 0 && b.ProducerEpoch == p.epoch:
		// ProducerAppendInfo: a plain batch from a producer inside a transaction here.
		return -1, proto.InvalidTxnState
	case b.ProducerEpoch > p.epoch || len(p.batches) == 0:
		// A producer (or producer epoch) this log has no batch of must start at sequence
		// 0: a later batch that overtook a lost first one is refused, and the producer
		// re-sends it after the first. (Kafka 2.5+ also accepts a later start, for
		// producers whose batches retention deleted; mqsim's logs keep them.)
		if b.BaseSequence != 0 {
			return -1, proto.OutOfOrderSequence
		}
		return -1, proto.None
	}
	last := int32(b.NextOffset()-b.BaseOffset) - 1 // a compacted batch keeps its span of sequences
	if !noDedup {
		for _, m := range p.batches {
			if m.firstSeq == b.BaseSequence && m.lastSeq == b.BaseSequence+last {
				return m.offset, proto.None
			}
		}
	}
	if want := p.batches[len(p.batches)-1].lastSeq + 1; b.BaseSequence != want && !noDedup {
		return -1, proto.OutOfOrderSequence
	}
	return -1, proto.None
}

// record notes an appended batch.
func (ps *producerStates) record(b wal.Batch) {
	if isNoProducer(b) {
		return
	}
	p := ps.find(b.ProducerID)
	switch {
	case b.IsControl():
		ps.recordMarker(p, b)
		return
	case b.IsTransactional() && b.ProducerEpoch < p.epoch:
		// A fenced instance's batch, let in by producer-fencing=off: it joins whatever
		// transaction of the producer id is open here, and leaves the sequences alone.
		ps.openTxn(p, b.BaseOffset)
		return
	}
	if b.ProducerEpoch > p.epoch {
		p.epoch, p.batches = b.ProducerEpoch, nil
	}
	p.batches = append(p.batches, batchMeta{firstSeq: b.BaseSequence, lastSeq: b.BaseSequence + int32(b.NextOffset()-b.BaseOffset) - 1, offset: b.BaseOffset})
	if len(p.batches) > batchesRetained {
		p.batches = p.batches[1:]
	}
	if b.IsTransactional() {
		ps.openTxn(p, b.BaseOffset)
	}
}

// rebuild replays the log's batches.
func (ps *producerStates) rebuild(log *wal.Log) {
	*ps = producerStates{}
	for off := log.LogStartOffset(); off < log.LogEndOffset(); {
		batches, err := log.Read(off, 1<<20)
		if err != nil || len(batches) == 0 {
			return
		}
		for _, b := range batches {
			ps.record(b)
			off = b.NextOffset()
		}
	}
}
