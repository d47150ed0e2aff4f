package txn

import (
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The markers of a decided transaction (TransactionMarkerChannelManager): one
// WriteTxnMarkers per partition leader, retried until every partition has taken its
// marker, then the Complete* record.

const (
	// markerRequestTimeout is how long a WriteTxnMarkers may go unanswered before its
	// partitions are sent again (the channel's request.timeout.ms, 30s).
	markerRequestTimeout = 30 * time.Second
	// markerAttempts bounds the sends in a row for one transaction: after that many, the
	// transaction waits for the next cleanup tick (MarkersDeferred), which starts a new
	// series. Kafka retries without end; the bound keeps a cluster whose partition has no
	// leader for good from sending every MarkerRetryBackoff forever.
	markerAttempts = 50
)

// markerStart says why a transaction's markers go out.
type markerStart uint8

const (
	markersAfterPrepare markerStart = iota // the prepare record is replicated
	markersEarly                           // appended only (markers-before-prepare bug)
	markersResumed                         // found Prepare* at load (failover)
)

// markerRound is the markers of one transaction being written.
type markerRound struct {
	commit    bool
	pid       int64
	epoch     int16
	remaining []proto.TP // sorted: partitions without their marker yet
	inflight  []markerSend
	attempts  int
	timer     sim.TimerID
	timerKey  int64
	armed     bool
	deferred  bool // waiting for the cleanup tick
	early     bool // sent before the prepare record was replicated
	finished  bool // every partition took its marker; Complete* is (to be) written
}

// markerSend is one WriteTxnMarkers in flight.
type markerSend struct {
	corr       int64
	leader     sim.NodeID
	partitions []proto.TP
	at         sim.Time
}

// startMarkers sends the markers of m, e's Prepare* metadata.
func (c *Coordinator) startMarkers(h Host, e *entry, m txnMeta, why markerStart) {
	r := &markerRound{commit: m.state == PrepareCommit, pid: m.pid, epoch: m.epoch, remaining: slices.Clone(m.partitions), early: why == markersEarly}
	e.markers = r
	if why == markersResumed && h.Tracing() {
		h.Record(MarkersResumed{ID: e.id, ProducerID: r.pid, Epoch: r.epoch, Commit: r.commit, Partitions: slices.Clone(r.remaining)})
	}
	if len(r.remaining) == 0 {
		c.markersFinished(h, e)
		return
	}
	c.sendMarkers(h, e)
}

// stopMarkers forgets e's markers (its prepare record was not written after all).
func (c *Coordinator) stopMarkers(h Host, e *entry) {
	r := e.markers
	if r == nil {
		return
	}
	c.disarm(h, r)
	for _, s := range r.inflight {
		delete(c.sent, s.corr)
	}
	e.markers = nil
}

// sendMarkers sends every partition without its marker and not in flight, one request per
// leader, in partition order.
func (c *Coordinator) sendMarkers(h Host, e *entry) {
	r := e.markers
	r.attempts++
	type batch struct {
		leader sim.NodeID
		tps    []proto.TP
	}
	var batches []batch
	var noLeader []proto.TP
	for _, tp := range r.remaining {
		if r.inFlight(tp) {
			continue
		}
		leader, ok := h.Leader(tp)
		if !ok {
			noLeader = append(noLeader, tp)
			continue
		}
		i := slices.IndexFunc(batches, func(b batch) bool { return b.leader == leader })
		if i < 0 {
			batches = append(batches, batch{leader: leader})
			i = len(batches) - 1
		}
		batches[i].tps = append(batches[i].tps, tp)
	}
	for _, b := range batches {
		corr := h.NewKey()
		c.sent[corr] = e.id
		r.inflight = append(r.inflight, markerSend{corr: corr, leader: b.leader, partitions: b.tps, at: h.Now()})
		if h.Tracing() {
			h.Record(MarkersSent{ID: e.id, ProducerID: r.pid, Epoch: r.epoch, Commit: r.commit, Leader: h.NameOf(b.leader),
				Partitions: slices.Clone(b.tps), Attempt: r.attempts, Early: r.early})
		}
		h.Send(b.leader, proto.WriteTxnMarkers{CorrelationID: corr, ProducerID: r.pid, ProducerEpoch: r.epoch, Commit: r.commit,
			CoordinatorEpoch: c.Epoch, Partitions: b.tps})
	}
	if len(noLeader) > 0 {
		record(h, MarkersNoLeader{ID: e.id, Partitions: noLeader})
		c.arm(h, e, c.cfg.MarkerRetryBackoff)
		return
	}
	c.arm(h, e, markerRequestTimeout)
}

func (r *markerRound) inFlight(tp proto.TP) bool {
	for _, s := range r.inflight {
		if slices.Contains(s.partitions, tp) {
			return true
		}
	}
	return false
}

// arm sets e's marker timer to d from now, replacing an earlier setting.
func (c *Coordinator) arm(h Host, e *entry, d time.Duration) {
	r := e.markers
	c.disarm(h, r)
	r.timer, r.timerKey = c.setTimer(h, d, timerRef{kind: tkMarkers, id: e.id})
	r.armed = true
}

func (c *Coordinator) disarm(h Host, r *markerRound) {
	if r.armed {
		c.cancel(h, r.timer, r.timerKey)
		r.armed = false
	}
}

// onMarkersResponse takes a leader's answer: acknowledged partitions are done, the others
// are sent again after MarkerRetryBackoff.
func (c *Coordinator) onMarkersResponse(h Host, m proto.WriteTxnMarkersResponse) bool {
	id, ok := c.sent[m.CorrelationID]
	if !ok {
		return false
	}
	delete(c.sent, m.CorrelationID)
	e := c.entry(id, false)
	if e == nil || e.markers == nil {
		return true
	}
	r := e.markers
	i := slices.IndexFunc(r.inflight, func(s markerSend) bool { return s.corr == m.CorrelationID })
	if i < 0 {
		return true
	}
	send := r.inflight[i]
	r.inflight = slices.Delete(r.inflight, i, i+1)
	retry := false
	for _, tp := range send.partitions {
		err, answered := proto.None, false
		for _, res := range m.Results {
			if res.TP == tp {
				err, answered = res.Error, true
			}
		}
		switch {
		case answered && err == proto.None:
			r.done(tp)
		case answered && (err == proto.InvalidProducerEpoch || err == proto.ProducerFenced):
			// A newer epoch already ended a transaction there: this marker is not needed
			// (TransactionMarkerRequestCompletionHandler drops the partition).
			record(h, MarkerFailed{ID: id, TP: tp, Leader: h.NameOf(send.leader), Err: err, Dropped: true})
			r.done(tp)
		default:
			if !answered {
				err = proto.UnknownTopicOrPartition
			}
			record(h, MarkerFailed{ID: id, TP: tp, Leader: h.NameOf(send.leader), Err: err})
			retry = true
		}
	}
	switch {
	case len(r.remaining) == 0:
		c.markersFinished(h, e)
	case retry && !r.deferred:
		c.arm(h, e, c.cfg.MarkerRetryBackoff)
	}
	return true
}

func (r *markerRound) done(tp proto.TP) {
	r.remaining = slices.DeleteFunc(r.remaining, func(x proto.TP) bool { return x == tp })
}

// markersDue runs when e's marker timer fires: unanswered requests are given up, and what
// is left is sent again, or deferred to the cleanup tick after markerAttempts sends.
func (c *Coordinator) markersDue(h Host, e *entry) {
	r := e.markers
	if r.finished {
		if e.pending == nil {
			c.complete(h, e)
		}
		return
	}
	now := h.Now()
	kept := r.inflight[:0]
	for _, s := range r.inflight {
		if now.Sub(s.at) >= markerRequestTimeout {
			delete(c.sent, s.corr)
			record(h, MarkersUnanswered{ID: e.id, Leader: h.NameOf(s.leader), Partitions: s.partitions, After: markerRequestTimeout})
			continue
		}
		kept = append(kept, s)
	}
	r.inflight = kept
	if !slices.ContainsFunc(r.remaining, func(tp proto.TP) bool { return !r.inFlight(tp) }) {
		c.arm(h, e, r.inflight[0].at.Add(markerRequestTimeout).Sub(now))
		return
	}
	if r.attempts >= markerAttempts {
		c.deferMarkers(h, e)
		return
	}
	c.sendMarkers(h, e)
}

// deferMarkers leaves e's markers (or its Complete record) to the next cleanup tick.
func (c *Coordinator) deferMarkers(h Host, e *entry) {
	r := e.markers
	r.deferred = true
	c.disarm(h, r)
	if h.Tracing() {
		h.Record(MarkersDeferred{ID: e.id, Partitions: slices.Clone(r.remaining), Attempts: r.attempts, Interval: c.cfg.AbortTimedOutInterval})
	}
	c.armCleanup(h)
}

// markersFinished: every partition has its marker. Complete* is written unless the
// prepare record is still being replicated (markers-before-prepare), in which case its
// commit writes it.
func (c *Coordinator) markersFinished(h Host, e *entry) {
	r := e.markers
	r.finished, r.attempts = true, 0 // from now on attempts count Complete writes
	c.disarm(h, r)
	if h.Tracing() {
		h.Record(MarkersWritten{ID: e.id, ProducerID: r.pid, Epoch: r.epoch, Commit: r.commit, Early: r.early && e.pending != nil})
	}
	if e.pending == nil {
		c.complete(h, e)
	}
}

// complete writes CompleteCommit or CompleteAbort (prepareComplete: the partitions are
// cleared). A failed write is tried again after MarkerRetryBackoff, markerAttempts times
// in a row, then at the cleanup tick (TransactionMarkerChannelManager retries the append
// of a COORDINATOR_NOT_AVAILABLE).
func (c *Coordinator) complete(h Host, e *entry) {
	to := e.clone()
	to.state, to.partitions = CompleteAbort, nil
	if e.state == PrepareCommit {
		to.state = CompleteCommit
	}
	c.write(h, e, to, to.state, nil, func(h Host, err proto.Error) {
		if err == proto.None {
			c.stopMarkers(h, e)
			return
		}
		r := e.markers
		if err == proto.NotCoordinator || r == nil {
			return // unloaded, or about to be: the partition's new leader completes it
		}
		r.attempts++
		if r.attempts >= markerAttempts {
			c.deferMarkers(h, e)
			return
		}
		c.arm(h, e, c.cfg.MarkerRetryBackoff)
	})
}

// --- the cleanup tick ---

// armCleanup sets the cleanup tick if something needs it: an Ongoing transaction (its
// timeout) or markers deferred. Nothing else sets it, so a coordinator with no
// transaction keeps no timer.
func (c *Coordinator) armCleanup(h Host) {
	if c.cleanupArmed {
		return
	}
	need := slices.ContainsFunc(c.entries, func(e *entry) bool {
		return e.state == Ongoing || e.markers != nil && e.markers.deferred
	})
	if !need {
		return
	}
	c.cleanup, c.cleanupKey = c.setTimer(h, c.cfg.AbortTimedOutInterval, timerRef{kind: tkCleanup})
	c.cleanupArmed = true
}

// onCleanup resumes deferred markers and aborts every Ongoing transaction open longer
// than its transaction.timeout.ms (abortTimedOutTransactions, timedOutTransactions).
func (c *Coordinator) onCleanup(h Host) {
	now := h.Now()
	for _, e := range slices.Clone(c.entries) {
		if r := e.markers; r != nil && r.deferred {
			r.deferred, r.attempts = false, 0
			if h.Tracing() {
				h.Record(MarkersResumed{ID: e.id, ProducerID: r.pid, Epoch: r.epoch, Commit: r.commit, Partitions: slices.Clone(r.remaining), Deferred: true})
			}
			if r.finished {
				c.complete(h, e)
			} else {
				c.sendMarkers(h, e)
			}
		}
		if e.state == Ongoing && e.pending == nil && now.Sub(e.start) > e.timeout {
			record(h, TimedOut{ID: e.id, ProducerID: e.pid, Epoch: e.epoch, Open: now.Sub(e.start), Timeout: e.timeout})
			c.fence(h, e, ReqTimeout, e.epoch, nil)
		}
	}
	c.armCleanup(h)
}
