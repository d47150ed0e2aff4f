package broker

import (
	"slices"
	"time"

	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The partition side of Kafka's transactions (KIP-98, KIP-447, KIP-890): what a leader
// and its followers keep per partition so that read_committed consumers see only
// committed transactions, and what a leader does with transactional produces and with
// the coordinator's markers.
//
//   - Producer state (idempotence.go's producerStates, as Kafka's ProducerStateManager):
//     per producer id its epoch, the first offset of its open transaction here, and the
//     coordinator epoch of its last marker; the set of open transactions; the aborted
//     transaction index (Kafka's TxnIndex: producer id, first offset, marker offset).
//     Every append updates it, leader's or follower's; recovery, truncation and a reset
//     rebuild it from the log, so a new leader has it already.
//   - The last stable offset: min(first offset of the oldest open transaction, HW)
//     (UnifiedLog.lastStableOffset). read_committed fetches read below it and get the
//     aborted transactions of what they read; ListOffsets latest answers it.
//   - A transactional produce in the modern mode (KIP-890, Kafka 3.6+) whose producer has
//     no open transaction here is held while the leader asks the producer's coordinator
//     (AddPartitionsToTxn FromBroker) whether the partition is in the transaction;
//     txn-verification=off appends it unasked, the source of hanging transactions.
//   - WriteTxnMarkers appends the COMMIT or ABORT control batch and answers once the ISR
//     has it; a marker to an offsets partition also completes the group coordinator's
//     pending transactional offsets.
//
// mqsim simplifies: no producer state snapshots (the state is rebuilt by replaying the
// log from its start, so a transaction whose first batches retention deleted is not
// reopened by a rebuild), no transaction index files, no producer id expiration.

// abortedTxn is one entry of the aborted transaction index.
type abortedTxn struct {
	pid         int64
	first, last int64 // last is the ABORT marker's offset
}

// openTxn notes a transactional batch at offset: the producer's transaction here starts
// there unless it is already open (ProducerAppendInfo sets currentTxnFirstOffset once).
func (ps *producerStates) openTxn(p *producerState, offset int64) {
	if p.txnFirst < 0 {
		p.txnFirst = offset
		ps.open++
	}
}

// recordMarker applies a marker: the producer's transaction here ends (an ABORT of one
// that had records enters the aborted index), and the producer takes the marker's epoch.
// A marker for a producer with no open transaction here is still in the log (Kafka appends
// it: the coordinator writes markers to every partition it added), but closes nothing.
func (ps *producerStates) recordMarker(p *producerState, b wal.Batch) {
	m, err := wal.BatchMarker(&b)
	if err != nil {
		return // never written by a leader (writeMarker builds them); nothing to close
	}
	if p.txnFirst >= 0 {
		span := abortedTxn{pid: p.pid, first: p.txnFirst, last: b.BaseOffset}
		if m.Type == wal.ControlAbort {
			ps.aborted = append(ps.aborted, span)
		}
		ps.ended = append(ps.ended, span)
		p.txnFirst = -1
		ps.open--
	}
	if b.ProducerEpoch > p.epoch {
		p.epoch, p.batches = b.ProducerEpoch, nil
	}
	p.coordEpoch = m.CoordinatorEpoch
}

// firstUnstable is the first offset of the oldest transaction that is open, or ended by a
// marker at or above hw (Kafka's firstUnstableOffset: a transaction is stable once its
// marker is replicated, so a read_committed consumer never reads a transaction whose end
// a failover could still take back).
func (ps *producerStates) firstUnstable(hw int64) (int64, bool) {
	first, ok := int64(0), false
	for _, e := range ps.ended {
		if e.last >= hw && (!ok || e.first < first) {
			first, ok = e.first, true
		}
	}
	if ps.open == 0 {
		return first, ok
	}
	for _, p := range ps.list {
		if p.txnFirst >= 0 && (!ok || p.txnFirst < first) {
			first, ok = p.txnFirst, true
		}
	}
	return first, ok
}

// replicatedTo forgets the ended transactions whose marker is below hw.
func (ps *producerStates) replicatedTo(hw int64) {
	ps.ended = slices.DeleteFunc(ps.ended, func(e abortedTxn) bool { return e.last < hw })
}

// abortedIn lists the aborted transactions that overlap [from, to) (TxnIndex.collectAbortedTxns).
func (ps *producerStates) abortedIn(from, to int64) []proto.AbortedTxn {
	var out []proto.AbortedTxn
	for _, a := range ps.aborted {
		if a.last >= from && a.first < to {
			out = append(out, proto.AbortedTxn{ProducerID: a.pid, FirstOffset: a.first})
		}
	}
	return out
}

// dropAbortedBelow forgets the aborted transactions whose marker is below the log start:
// retention deleted them whole.
func (ps *producerStates) dropAbortedBelow(logStart int64) {
	ps.aborted = slices.DeleteFunc(ps.aborted, func(a abortedTxn) bool { return a.last < logStart })
}

// lastStableOffset is the partition's LSO: below it every transaction is decided. The
// oldest open transaction's first offset counts from the log start on
// (UnifiedLog.maybeIncrementFirstUnstableOffset). lso-from-hw answers the HW.
func (b *Broker) lastStableOffset(r *replica) int64 {
	lso := r.hw
	if b.cfg.Bugs.LSOFromHW {
		return lso
	}
	if first, ok := r.producers.firstUnstable(r.hw); ok {
		lso = min(lso, max(first, r.log.LogStartOffset()))
	}
	return lso
}

// withTxnFields adds what a fetch response says about transactions: the LSO, and for a
// consumer's read_committed fetch the aborted transactions its batches overlap.
func (b *Broker) withTxnFields(r *replica, m proto.FetchRequest, batches []wal.Batch, resp proto.FetchResponse) proto.FetchResponse {
	resp.LastStableOffset = b.lastStableOffset(r)
	if m.ReplicaID != proto.ConsumerReplica || m.Isolation != proto.ReadCommitted || len(batches) == 0 || b.cfg.Bugs.ReadCommittedKeepsAborted {
		return resp
	}
	resp.AbortedTransactions = r.producers.abortedIn(m.FetchOffset, batches[len(batches)-1].NextOffset())
	return resp
}

// Timer kinds of this file.
const (
	timerTxnVerify      = 130 // Arg: the held produce's key
	timerMarkersWrite   = 131 // Arg: the marker write's key
	timerTxnVerifyRetry = 132 // Arg: the held produce's key
)

// A leader that adds a partition for a produce and hears CONCURRENT_TRANSACTIONS (the
// coordinator is still writing the transaction's previous change, or its markers) asks
// again itself every addPartitionsRetryBackoff, for at most addPartitionsRetryMax from the
// first ask, before it answers the producer NOT_ENOUGH_REPLICAS: Kafka 4.0's
// add.partitions.to.txn.retry.backoff.ms (20) and .max.ms (100), KAFKA-18654, which
// spares the client's 100ms retry backoff for a lock that lasts a replication round.
const (
	addPartitionsRetryBackoff = 20 * time.Millisecond
	addPartitionsRetryMax     = 100 * time.Millisecond
)

// markerWriteTimeout bounds a marker write's wait for the ISR: the coordinator's
// request.timeout.ms (30s), which Kafka gives the markers' DelayedProduce.
const markerWriteTimeout = 30 * time.Second

// txnState is what the broker keeps for transactions beyond the partitions' state.
type txnState struct {
	held    []*heldProduce // produces waiting for their coordinator's verification
	markers []*markerWrite // WriteTxnMarkers waiting for the ISR
}

// heldProduce is a transactional produce the leader holds while it asks the coordinator.
type heldProduce struct {
	key   int64 // the produce's own key, for its timeout
	ask   int64 // the correlation id of the AddPartitionsToTxn that covers it; 0 while it waits for one
	from  sim.NodeID
	req   proto.ProduceRequest
	timer sim.TimerID
	coord sim.NodeID // the coordinator to ask
	asked sim.Time   // when a request first covered it
}

// sameTxn reports whether two held produces belong to one transaction at one coordinator.
func (h *heldProduce) sameTxn(o *heldProduce) bool {
	return h.coord == o.coord && h.req.TransactionalID == o.req.TransactionalID &&
		h.req.Batch.ProducerID == o.req.Batch.ProducerID && h.req.Batch.ProducerEpoch == o.req.Batch.ProducerEpoch
}

// markerWrite is one WriteTxnMarkers request, answered once every partition is decided.
type markerWrite struct {
	key     int64
	from    sim.NodeID
	req     proto.WriteTxnMarkers
	results []proto.MarkerResult
	waits   []markerWait
	timer   sim.TimerID
}

// markerWait is a marker appended and waiting for the HW to pass it.
type markerWait struct {
	i        int // index in results
	r        *replica
	required int64
}

// mustVerify reports a transactional batch the leader must have its coordinator confirm
// before appending: the modern mode, and no transaction of the producer at this epoch
// open here yet (UnifiedLog.hasOngoingTransaction(producerId, producerEpoch)).
func (b *Broker) mustVerify(r *replica, m proto.ProduceRequest) bool {
	if b.cfg.Legacy.NoTxnVerification || !m.Batch.IsTransactional() || m.Batch.IsControl() || isNoProducer(m.Batch) {
		return false
	}
	p := r.producers.find(m.Batch.ProducerID)
	if m.Batch.ProducerEpoch < p.epoch && !b.cfg.Legacy.NoProducerFencing {
		return false // fenced here already: the producer-state check refuses it
	}
	return p.txnFirst < 0 || p.epoch != m.Batch.ProducerEpoch
}

// transactionCoordinator is the leader of the transactional.id's __transaction_state
// partition in this broker's metadata (the same hash as for groups: Kafka's
// partitionFor is Utils.abs(id.hashCode) % partitions for both).
func (b *Broker) transactionCoordinator(transactionalID string) (sim.NodeID, bool) {
	for _, t := range b.meta.Topics {
		if t.Name != proto.TransactionStateTopic {
			continue
		}
		tp := proto.TP{Topic: proto.TransactionStateTopic, Partition: group.PartitionFor(transactionalID, t.Partitions)}
		if p, ok := b.meta.Partition(tp); ok && p.Leader != proto.NoLeader {
			return p.Leader, true
		}
	}
	return proto.NoLeader, false
}

// holdForVerification parks the produce until its coordinator adds the partition to the
// transaction, or its request timeout. Like Kafka's AddPartitionsToTxnManager, the leader
// keeps one AddPartitionsToTxn in flight per transaction: a produce for another partition
// of the same transaction waits and goes in the next request, with every partition that
// waited, so that the coordinator is not asked once per partition while it is busy.
func (b *Broker) holdForVerification(env *sim.Env, r *replica, from sim.NodeID, m proto.ProduceRequest) {
	coord, ok := b.transactionCoordinator(m.TransactionalID)
	if !ok {
		b.answerUnverified(env, r, from, m, proto.CoordinatorNotAvailable)
		return
	}
	h := &heldProduce{key: b.key(), from: from, req: m, coord: coord}
	h.timer = env.SetTimer(m.Timeout, sim.TimerTag{Kind: timerTxnVerify, Arg: h.key})
	b.txns.held = append(b.txns.held, h)
	sim.Record(env, TxnVerifying{TP: r.tp, TransactionalID: m.TransactionalID, ProducerID: m.Batch.ProducerID,
		Epoch: m.Batch.ProducerEpoch, Coordinator: env.NameOf(coord)})
	if !b.askInFlight(h) {
		b.askCoordinator(env, h, b.key())
	}
}

// askInFlight reports whether a request for h's transaction is in flight.
func (b *Broker) askInFlight(h *heldProduce) bool {
	return slices.ContainsFunc(b.txns.held, func(o *heldProduce) bool { return o.ask != 0 && o.sameTxn(h) })
}

// askCoordinator sends one AddPartitionsToTxn, correlation id ask, for the partitions of
// every produce of h's transaction that it covers already (a retry) or that waits.
func (b *Broker) askCoordinator(env *sim.Env, h *heldProduce, ask int64) {
	var parts []proto.TP
	for _, o := range b.txns.held {
		if o.sameTxn(h) && (o.ask == ask || o.ask == 0) {
			if o.ask == 0 {
				o.ask, o.asked = ask, env.Now()
			}
			if !slices.Contains(parts, o.req.TP) {
				parts = append(parts, o.req.TP)
			}
		}
	}
	m := h.req
	env.Send(h.coord, proto.AddPartitionsToTxn{CorrelationID: ask, TransactionalID: m.TransactionalID,
		ProducerID: m.Batch.ProducerID, ProducerEpoch: m.Batch.ProducerEpoch, Partitions: parts, FromBroker: true})
}

// retryVerification asks the coordinator again for the produces request ask covered, in a
// request of a new correlation id: the retry may cover more partitions (those that waited
// meanwhile), and a late answer to the first request, which a duplicated message can
// bring, must not be taken for the retry's.
func (b *Broker) retryVerification(env *sim.Env, ask int64) {
	i := slices.IndexFunc(b.txns.held, func(h *heldProduce) bool { return h.ask == ask })
	if i < 0 {
		return
	}
	retry := b.key()
	for _, h := range b.txns.held {
		if h.ask == ask {
			h.ask = retry
		}
	}
	b.askCoordinator(env, b.txns.held[i], retry)
}

// takeHeld removes and returns the held produces that match.
func (b *Broker) takeHeld(match func(*heldProduce) bool) []*heldProduce {
	var taken []*heldProduce
	b.txns.held = slices.DeleteFunc(b.txns.held, func(h *heldProduce) bool {
		if match(h) {
			taken = append(taken, h)
			return true
		}
		return false
	})
	return taken
}

// onVerified resumes the produces the answered request covers: appended through the
// ordinary path (which checks leadership and the producer state again) if the partitions
// are in the transaction, answered with the error otherwise. Then the produces of the same
// transaction that waited meanwhile go in a request of their own.
func (b *Broker) onVerified(env *sim.Env, m proto.AddPartitionsToTxnResponse) {
	covered := func(h *heldProduce) bool { return h.ask == m.CorrelationID }
	i := slices.IndexFunc(b.txns.held, covered)
	if i < 0 {
		return // every produce it covered timed out already
	}
	first := b.txns.held[i]
	if m.Error == proto.ConcurrentTransactions && env.Now().Sub(first.asked)+addPartitionsRetryBackoff <= addPartitionsRetryMax {
		env.SetTimer(addPartitionsRetryBackoff, sim.TimerTag{Kind: timerTxnVerifyRetry, Arg: m.CorrelationID})
		return
	}
	if m.Error == proto.None {
		// A produce that waited for a partition the answer just verified needs no question.
		var verified []proto.TP
		for _, h := range b.txns.held {
			if covered(h) {
				verified = append(verified, h.req.TP)
			}
		}
		covered = func(h *heldProduce) bool {
			return h.ask == m.CorrelationID || (h.ask == 0 && h.sameTxn(first) && slices.Contains(verified, h.req.TP))
		}
	}
	for _, h := range b.takeHeld(covered) {
		env.CancelTimer(h.timer)
		if m.Error == proto.None {
			b.produce(env, h.from, h.req, true)
		} else {
			b.answerUnverified(env, b.parts[h.req.TP], h.from, h.req, m.Error)
		}
	}
	if j := slices.IndexFunc(b.txns.held, func(h *heldProduce) bool { return h.ask == 0 && h.sameTxn(first) }); j >= 0 {
		b.askCoordinator(env, b.txns.held[j], b.key())
	}
}

// verifyTimedOut answers a held produce whose coordinator did not answer in time. A
// produce that waited behind it asks for itself.
func (b *Broker) verifyTimedOut(env *sim.Env, key int64) {
	for _, h := range b.takeHeld(func(h *heldProduce) bool { return h.key == key }) {
		b.answerUnverified(env, b.parts[h.req.TP], h.from, h.req, proto.RequestTimedOut)
		if j := slices.IndexFunc(b.txns.held, func(o *heldProduce) bool { return o.ask == 0 && o.sameTxn(h) }); j >= 0 && !b.askInFlight(h) {
			b.askCoordinator(env, b.txns.held[j], b.key())
		}
	}
}

// answerUnverified answers a produce its verification failed. Errors that only say the
// coordinator cannot answer now become NOT_ENOUGH_REPLICAS, which every producer retries
// (Kafka 3.6's ReplicaManager does the same for older clients); the coordinator's
// verdicts (a fenced epoch, a partition not in the transaction) go back as they are.
func (b *Broker) answerUnverified(env *sim.Env, r *replica, from sim.NodeID, m proto.ProduceRequest, e proto.Error) {
	answer := e
	switch e {
	case proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress,
		proto.ConcurrentTransactions, proto.RequestTimedOut, proto.NetworkException:
		answer = proto.NotEnoughReplicas
	}
	sim.Record(env, TxnVerifyFailed{TP: m.TP, TransactionalID: m.TransactionalID, ProducerID: m.Batch.ProducerID, Err: e, Answer: answer})
	if m.Acks != proto.AcksNone {
		b.sendProduceResponse(env, from, m, proto.ProduceResponse{CorrelationID: m.CorrelationID, TP: m.TP, Error: answer, BaseOffset: -1})
	}
}

// onWriteTxnMarkers appends the marker to every listed partition this broker leads and
// answers once each is decided.
func (b *Broker) onWriteTxnMarkers(env *sim.Env, from sim.NodeID, m proto.WriteTxnMarkers) {
	w := &markerWrite{key: b.key(), from: from, req: m, results: make([]proto.MarkerResult, len(m.Partitions))}
	for i, tp := range m.Partitions {
		w.results[i].TP = tp
		r, e := b.writeMarker(env, tp, m)
		if e != proto.None {
			w.results[i].Error = e
			continue
		}
		w.waits = append(w.waits, markerWait{i: i, r: r, required: r.log.LogEndOffset()})
	}
	if len(w.waits) > 0 {
		w.timer = env.SetTimer(markerWriteTimeout, sim.TimerTag{Kind: timerMarkersWrite, Arg: w.key})
	}
	b.txns.markers = append(b.txns.markers, w)
	for _, wt := range w.waits {
		b.maybeAdvanceHW(env, wt.r)
	}
	b.completeMarkers(env)
}

// writeMarker appends one partition's marker as its leader (Kafka's
// ProducerAppendInfo.appendEndTxnMarker checks the producer and coordinator epochs).
func (b *Broker) writeMarker(env *sim.Env, tp proto.TP, m proto.WriteTxnMarkers) (*replica, proto.Error) {
	r := b.parts[tp]
	marker := wal.Marker{Type: wal.ControlAbort, CoordinatorEpoch: m.CoordinatorEpoch}
	if m.Commit {
		marker.Type = wal.ControlCommit
	}
	reject := func(e proto.Error) (*replica, proto.Error) {
		sim.Record(env, MarkerRejected{TP: tp, ProducerID: m.ProducerID, Epoch: m.ProducerEpoch, Marker: marker.Type, Err: e})
		return nil, e
	}
	switch {
	case r == nil:
		return reject(proto.UnknownTopicOrPartition)
	case !r.isLeader:
		return reject(proto.NotLeaderOrFollower)
	case len(r.state.ISR) < r.topic.MinInsyncReplicas:
		return reject(proto.NotEnoughReplicas) // markers are written with acks=all
	}
	p := r.producers.find(m.ProducerID)
	switch {
	case m.ProducerEpoch < p.epoch:
		return reject(proto.InvalidProducerEpoch)
	case m.CoordinatorEpoch < p.coordEpoch:
		return reject(proto.TransactionCoordinatorFenced)
	}
	first := p.txnFirst
	batch := wal.MarkerBatch(m.ProducerID, m.ProducerEpoch, marker)
	batch.LeaderEpoch, batch.Timestamp = r.state.LeaderEpoch, env.Now()
	res, err := r.log.Append(batch)
	b.touch(r)
	if err != nil {
		sim.Record(env, StorageFailed{TP: r.tp, Op: OpAppend, Err: err})
		return nil, proto.KafkaStorageError
	}
	b.sync(env, res.Sync)
	batch.BaseOffset = res.BaseOffset
	r.producers.record(batch)
	sim.Record(env, MarkerAppended{TP: tp, ProducerID: m.ProducerID, Epoch: m.ProducerEpoch, Marker: marker.Type,
		CoordinatorEpoch: m.CoordinatorEpoch, Offset: res.BaseOffset, TxnFirst: first, LSO: b.lastStableOffset(r)})
	// The LSO may have moved without the HW: read_committed fetches parked below it wake.
	b.wakeFetches(env, r)
	return r, proto.None
}

// completeMarkers answers the marker writes whose every marker the HW has passed, or
// whose partition this broker no longer leads.
func (b *Broker) completeMarkers(env *sim.Env) {
	kept := b.txns.markers[:0]
	for _, w := range b.txns.markers {
		waits := w.waits[:0]
		for _, wt := range w.waits {
			switch {
			case !wt.r.isLeader:
				w.results[wt.i].Error = proto.NotLeaderOrFollower
			case wt.r.hw >= wt.required:
				b.markerCommitted(env, wt.r, w.req)
			default:
				waits = append(waits, wt)
				continue
			}
		}
		w.waits = waits
		if len(w.waits) > 0 {
			kept = append(kept, w)
			continue
		}
		env.CancelTimer(w.timer)
		b.answerMarkers(env, w)
	}
	b.txns.markers = kept
}

// markerCommitted runs once a marker is replicated: on an offsets partition the group
// coordinator completes the producer's pending offsets (GroupCoordinator.onTransactionCompleted).
func (b *Broker) markerCommitted(env *sim.Env, r *replica, m proto.WriteTxnMarkers) {
	if r.tp.Topic != proto.OffsetsTopic {
		return
	}
	if hc := b.groups.of(r.tp.Partition); hc != nil && hc.r == r {
		hc.coord.CompleteTxn(coordHost{b, env, r}, m.ProducerID, m.Commit)
	}
}

func (b *Broker) answerMarkers(env *sim.Env, w *markerWrite) {
	if env.Tracing() {
		sim.Record(env, MarkersAnswered{ProducerID: w.req.ProducerID, To: env.NameOf(w.from), Results: slices.Clone(w.results)})
	}
	env.Send(w.from, proto.WriteTxnMarkersResponse{CorrelationID: w.req.CorrelationID, ProducerID: w.req.ProducerID, Results: w.results})
}

// markersTimedOut answers a marker write the ISR did not complete in time.
func (b *Broker) markersTimedOut(env *sim.Env, key int64) {
	for i, w := range b.txns.markers {
		if w.key != key {
			continue
		}
		for _, wt := range w.waits {
			w.results[wt.i].Error = proto.RequestTimedOut
		}
		b.txns.markers = slices.Delete(b.txns.markers, i, i+1)
		b.answerMarkers(env, w)
		return
	}
}

// OpenTxn is one open transaction of a partition, for views and invariants.
type OpenTxn struct {
	ProducerID  int64
	Epoch       int16
	FirstOffset int64
}

// AbortedTxn is one entry of a partition's aborted transaction index.
type AbortedTxn struct {
	ProducerID        int64
	FirstOffset, Last int64 // Last is the ABORT marker's offset
}

// TxnView is a partition's transaction state, read-only.
type TxnView struct {
	LastStableOffset int64
	Open             []OpenTxn    // by producer id
	Aborted          []AbortedTxn // in marker order
}

// Txns returns the transaction state of a hosted partition.
func (b *Broker) Txns(tp proto.TP) (TxnView, bool) {
	r := b.parts[tp]
	if r == nil {
		return TxnView{}, false
	}
	v := TxnView{LastStableOffset: b.lastStableOffset(r)}
	for _, p := range r.producers.list {
		if p.txnFirst >= 0 {
			v.Open = append(v.Open, OpenTxn{ProducerID: p.pid, Epoch: p.epoch, FirstOffset: p.txnFirst})
		}
	}
	for _, a := range r.producers.aborted {
		v.Aborted = append(v.Aborted, AbortedTxn{ProducerID: a.pid, FirstOffset: a.first, Last: a.last})
	}
	return v, true
}

// appendTxnOffsets appends a TxnOffsetCommit's offsets as a transactional batch of the
// producer, checked against the partition's producer epoch as a produce is
// (producer-fencing=off skips the check), so that a fenced producer's offsets never land.
func (b *Broker) appendTxnOffsets(env *sim.Env, r *replica, pid int64, epoch int16, records []wal.Record) (int64, proto.Error) {
	if r.isLeader && !b.cfg.Legacy.NoProducerFencing && epoch < r.producers.find(pid).epoch {
		return -1, proto.InvalidProducerEpoch
	}
	return b.appendLocal(env, r, wal.Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: wal.NoSequence,
		Flags: wal.FlagTransactional, Records: records})
}
