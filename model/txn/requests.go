package txn

import (
	"math"
	"slices"

	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// --- InitProducerId ---

// onInitProducerID grants the transactional id its producer id with a bumped epoch
// (handleInitProducerId, prepareInitProducerIdTransit).
func (c *Coordinator) onInitProducerID(h Host, from sim.NodeID, m proto.InitProducerID) {
	reply := func(h Host, err proto.Error, pid int64, epoch int16) {
		if err != proto.None {
			pid, epoch = wal.NoProducerID, wal.NoProducerEpoch
		}
		h.Send(from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: pid, ProducerEpoch: epoch, Error: err,
			ActiveController: proto.NoController})
	}
	refuse := func(e *entry, err proto.Error) {
		c.refused(h, ReqInitProducerID, m.TransactionalID, e, m.ProducerID, m.ProducerEpoch, err)
		reply(h, err, 0, 0)
	}
	if m.TransactionTimeout <= 0 || m.TransactionTimeout > c.cfg.MaxTimeout {
		refuse(nil, proto.InvalidTransactionTimeout)
		return
	}
	e := c.entry(m.TransactionalID, false)
	fresh := e == nil
	if fresh {
		e = c.entry(m.TransactionalID, true)
		e.pid = c.newProducerID()
		e.timeout = m.TransactionTimeout
	}
	if e.pending != nil {
		refuse(e, proto.ConcurrentTransactions)
		return
	}
	// KIP-360: a caller that names its producer id and epoch must be the id's current
	// instance (or the one a coordinator timeout fenced, KIP-588).
	if m.ProducerID != wal.NoProducerID && e.epoch != wal.NoProducerEpoch {
		current := m.ProducerID == e.pid && (m.ProducerEpoch == e.epoch || m.ProducerEpoch == e.lastEpoch)
		if !current && !c.unfenced(h, ReqInitProducerID, e, m.ProducerID, m.ProducerEpoch) {
			refuse(e, proto.ProducerFenced)
			return
		}
	}
	switch e.state {
	case PrepareCommit, PrepareAbort:
		refuse(e, proto.ConcurrentTransactions)
	case Ongoing:
		// The older instance's transaction is aborted with a bumped epoch; the new instance
		// is answered CONCURRENT_TRANSACTIONS and its retry, once the abort completes,
		// bumps the epoch again (Kafka never returns the fencing epoch to a client).
		c.fence(h, e, ReqInitProducerID, wal.NoProducerEpoch, func(h Host, err proto.Error) {
			if err == proto.None {
				err = proto.ConcurrentTransactions
			}
			reply(h, err, 0, 0)
		})
	default: // Empty, CompleteCommit, CompleteAbort, or a new id
		to := e.clone()
		rotated := false
		switch {
		case fresh:
			to.epoch = 0
		case to.epoch >= math.MaxInt16-1:
			// The epoch is exhausted: a new producer id (prepareProducerIdRotation).
			to.pid, to.epoch, rotated = c.newProducerID(), 0, true
		default:
			to.epoch++
		}
		to.state, to.partitions, to.timeout, to.lastEpoch = Empty, nil, m.TransactionTimeout, wal.NoProducerEpoch
		c.write(h, e, to, Empty, nil, func(h Host, err proto.Error) {
			if err != proto.None {
				if fresh {
					c.dropEntry(e)
				}
				reply(h, err, 0, 0)
				return
			}
			record(h, Initialized{ID: e.id, ProducerID: e.pid, Epoch: e.epoch, New: fresh, Rotated: rotated})
			reply(h, proto.None, e.pid, e.epoch)
		})
	}
}

// fence aborts e's open transaction with a bumped epoch (prepareFenceProducerEpoch, then
// endTransaction with ABORT from the coordinator itself): the PrepareAbort record carries
// the new epoch, so every older instance is fenced at the coordinator and, through the
// markers, at the partitions. lastEpoch is kept for a producer that may recover (a
// timeout, KIP-588); done, if not nil, hears how the write went.
func (c *Coordinator) fence(h Host, e *entry, by Request, lastEpoch int16, done func(h Host, err proto.Error)) {
	to := e.clone()
	to.epoch++
	to.state, to.lastEpoch = PrepareAbort, lastEpoch
	if h.Tracing() {
		h.Record(Fenced{ID: e.id, ProducerID: e.pid, Epoch: e.epoch, NewEpoch: to.epoch, By: by, Partitions: slices.Clone(e.partitions)})
	}
	c.prepare(h, e, to, PrepareEpochFence, done)
}

// prepare writes a PrepareCommit or PrepareAbort record; once it is replicated the change
// is the transaction's outcome, done hears it, and the markers go out. Under the
// markers-before-prepare bug they go out as soon as the record is appended.
func (c *Coordinator) prepare(h Host, e *entry, to txnMeta, shown State, done func(h Host, err proto.Error)) {
	var appended func(h Host)
	if c.bugs.MarkersBeforePrepare {
		appended = func(h Host) { c.startMarkers(h, e, to, markersEarly) }
	}
	c.write(h, e, to, shown, appended, func(h Host, err proto.Error) {
		if err != proto.None {
			c.stopMarkers(h, e)
			if done != nil {
				done(h, err)
			}
			return
		}
		if done != nil {
			done(h, proto.None)
		}
		switch {
		case e.markers == nil:
			c.startMarkers(h, e, e.txnMeta, markersAfterPrepare)
		case e.markers.finished:
			c.complete(h, e)
		}
	})
}

// --- AddPartitionsToTxn, AddOffsetsToTxn ---

func (c *Coordinator) onAddPartitions(h Host, from sim.NodeID, m proto.AddPartitionsToTxn) {
	c.addPartitions(h, ReqAddPartitions, m.TransactionalID, m.ProducerID, m.ProducerEpoch, m.Partitions, m.FromBroker, "",
		func(h Host, err proto.Error) {
			h.Send(from, proto.AddPartitionsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: err})
		})
}

// onAddOffsets adds the group's partition of the offsets topic, where its TxnOffsetCommit
// will wait for the marker (handleAddOffsetsToTransaction is an AddPartitions of it).
func (c *Coordinator) onAddOffsets(h Host, from sim.NodeID, m proto.AddOffsetsToTxn) {
	tp := proto.TP{Topic: proto.OffsetsTopic, Partition: group.PartitionFor(m.Group, c.offsets)}
	c.addPartitions(h, ReqAddOffsets, m.TransactionalID, m.ProducerID, m.ProducerEpoch, []proto.TP{tp}, false, m.Group,
		func(h Host, err proto.Error) {
			h.Send(from, proto.AddOffsetsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: err})
		})
}

// addPartitions records partitions in the id's transaction, beginning one if none is open
// (handleAddPartitionsToTransaction, prepareAddPartitions).
func (c *Coordinator) addPartitions(h Host, req Request, id string, pid int64, epoch int16, tps []proto.TP, fromBroker bool, grp string, reply func(Host, proto.Error)) {
	e, err := c.lookup(id, pid)
	refuse := func(err proto.Error) {
		c.refused(h, req, id, e, pid, epoch, err)
		reply(h, err)
	}
	switch {
	case err != proto.None:
		refuse(err)
		return
	case epoch != e.epoch && !c.unfenced(h, req, e, pid, epoch):
		refuse(proto.ProducerFenced)
		return
	case e.pending != nil, e.state == PrepareCommit, e.state == PrepareAbort:
		refuse(proto.ConcurrentTransactions)
		return
	}
	all, added := addPartitions(e.partitions, tps)
	if e.state == Ongoing && len(added) == 0 {
		reply(h, proto.None) // already in the transaction: nothing to write
		return
	}
	to := e.clone()
	began := e.state != Ongoing
	if began {
		to.start = h.Now()
	}
	to.state, to.partitions = Ongoing, all
	c.write(h, e, to, Ongoing, nil, func(h Host, err proto.Error) {
		if err == proto.None {
			if h.Tracing() {
				h.Record(PartitionsAdded{ID: id, ProducerID: e.pid, Epoch: e.epoch, By: req, Partitions: added, Began: began, FromBroker: fromBroker, Group: grp})
			}
			c.armCleanup(h)
		}
		reply(h, err)
	})
}

// lookup finds a transactional id that has the producer id pid.
func (c *Coordinator) lookup(id string, pid int64) (*entry, proto.Error) {
	e := c.entry(id, false)
	if e == nil || e.pid != pid || e.epoch == wal.NoProducerEpoch {
		return e, proto.InvalidProducerIDMapping
	}
	return e, proto.None
}

// unfenced reports whether a request whose epoch is not the id's goes on anyway: only
// with producer-fencing=off, and then the trace says so.
func (c *Coordinator) unfenced(h Host, req Request, e *entry, pid int64, epoch int16) bool {
	if !c.legacy.NoProducerFencing {
		return false
	}
	record(h, Unfenced{ID: e.id, By: req, ProducerID: pid, Epoch: epoch, Current: e.epoch})
	return true
}

// refused puts a refused request in the trace.
func (c *Coordinator) refused(h Host, req Request, id string, e *entry, pid int64, epoch int16, err proto.Error) {
	if !h.Tracing() {
		return
	}
	ev := Refused{ID: id, By: req, ProducerID: pid, Epoch: epoch, Err: err, Known: e != nil && e.epoch != wal.NoProducerEpoch}
	if ev.Known {
		ev.State, ev.Current = e.state, e.epoch
		if e.pending != nil {
			ev.State = e.shown
		}
	}
	h.Record(ev)
}

// --- EndTxn ---

// onEndTxn commits or aborts the open transaction (handleEndTransaction, endTransaction).
func (c *Coordinator) onEndTxn(h Host, from sim.NodeID, m proto.EndTxn) {
	reply := func(h Host, err proto.Error, pid int64, epoch int16) {
		if err != proto.None {
			pid, epoch = wal.NoProducerID, wal.NoProducerEpoch
		}
		h.Send(from, proto.EndTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: err, ProducerID: pid, ProducerEpoch: epoch})
	}
	e, err := c.lookup(m.TransactionalID, m.ProducerID)
	refuse := func(err proto.Error) {
		c.refused(h, ReqEndTxn, m.TransactionalID, e, m.ProducerID, m.ProducerEpoch, err)
		reply(h, err, 0, 0)
	}
	if err != proto.None {
		refuse(err)
		return
	}
	if !c.validEndTxnEpoch(e, m.ProducerEpoch) && !c.unfenced(h, ReqEndTxn, e, m.ProducerID, m.ProducerEpoch) {
		refuse(proto.ProducerFenced)
		return
	}
	if e.pending != nil {
		refuse(proto.ConcurrentTransactions)
		return
	}
	same := m.Commit == (e.state == PrepareCommit || e.state == CompleteCommit)
	switch e.state {
	case Ongoing:
		to := e.clone()
		to.state = PrepareAbort
		if m.Commit {
			to.state = PrepareCommit
		}
		if c.modern() {
			to.epoch++ // KIP-890 part 2: every transaction ends with an epoch bump
		}
		to.lastEpoch = wal.NoProducerEpoch
		c.prepare(h, e, to, to.state, func(h Host, err proto.Error) { reply(h, err, e.pid, e.epoch) })
	case CompleteCommit, CompleteAbort:
		if same {
			reply(h, proto.None, e.pid, e.epoch) // a retry of the EndTxn that completed it
		} else {
			refuse(proto.InvalidTxnState)
		}
	case PrepareCommit, PrepareAbort:
		if same {
			refuse(proto.ConcurrentTransactions)
		} else {
			refuse(proto.InvalidTxnState)
		}
	default: // Empty
		refuse(proto.InvalidTxnState)
	}
}

// modern is KIP-890 part 2 (transaction version 2): the epoch is bumped at every EndTxn.
func (c *Coordinator) modern() bool { return !c.legacy.NoTxnVerification }

// validEndTxnEpoch is endTransaction's epoch check. Before KIP-890 the epoch must be the
// id's. With the bump at every EndTxn, a retry of an EndTxn the coordinator already took
// carries the epoch before the bump: while Prepare* or Complete* only such a retry is
// valid, and in Ongoing or Empty only the current epoch (endTxnEpochBumped).
func (c *Coordinator) validEndTxnEpoch(e *entry, epoch int16) bool {
	if !c.modern() {
		return epoch == e.epoch
	}
	retry := e.epoch == epoch+1
	switch e.state {
	case PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort:
		return retry
	}
	return epoch == e.epoch
}
