package client

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Send is the scenario's command to a Producer: produce one record.
type Send struct {
	Topic string
	Key   string // "" is no key (Kafka's null key)
	Value string
	// Partition is the target partition, or -1 for the partitioner's choice.
	Partition int32
	// Tags go with the record as its HeaderTags header; Delay asks the leader to hold it
	// that long before it enters the partition (delay.go).
	Tags  []string
	Delay time.Duration
	// Tombstone sends a tombstone for Key: a record with a nil value, which deletes the
	// key from a compacted topic. Value names it (in a HeaderTombstone header), so that
	// the history can follow it like any value.
	Tombstone bool
}

func (s Send) String() string {
	where := s.Topic
	if s.Partition >= 0 {
		where = fmt.Sprintf("%s/%d", s.Topic, s.Partition)
	}
	return fmt.Sprintf("send %s to %s%s", kv(s.Key, s.Value), where, sendExtras(s))
}

func kv(key, value string) string {
	if key == "" {
		return value
	}
	return key + "=" + value
}

// ProducerStats are a producer's counters, for views. Records are counted one by one.
type ProducerStats struct {
	Queued   int // accepted, not in a request: in the accumulator or waiting for metadata
	InFlight int // in requests that await an answer
	Acked    int // completed ok
	Failed   int // completed fail: certainly not written
	Unknown  int // completed info: may or may not be written
	Requests int // produce requests sent, retries included
	Retries  int // requests that re-sent a batch
}

// Producer timers.
const (
	ptLinger   = firstOwnTimer + iota // linger.ms is over for a batch; Arg = batch id
	ptDelivery                        // delivery.timeout.ms is over for a batch; Arg = batch id
	ptRetry                           // retry.backoff.ms is over for a batch; Arg = batch id
	ptRequest                         // request.timeout.ms is over for a request; Arg = correlation id
	ptPID                             // InitProducerId got no answer; Arg = correlation id
	ptWaiting                         // delivery.timeout.ms is over for a send still waiting for metadata; Arg = record number
	ptPIDRetry                        // retry.backoff.ms after a NOT_CONTROLLER answer without a hint is over
)

// record is one send, from its command to its completion.
type record struct {
	n     int64
	h     history.Handle
	tp    proto.TP // Partition is -1 while the record waits for metadata
	key   string
	value string
	timer sim.TimerID // while waiting for metadata: its delivery timeout
	tags  []string
	delay time.Duration
	// tombstone: the record goes out with a nil value, value in its HeaderTombstone header.
	tombstone bool
	invoked   bool // the send is in the history (a blocked send is, before it is accepted)
}

// batch is what Kafka's RecordAccumulator calls a ProducerBatch: records for one
// partition that travel in one request, are retried together and complete together.
type batch struct {
	id      int64
	tp      proto.TP
	recs    []*record
	bytes   int
	created sim.Time
	// full closes the batch to appends: batch.size reached, or sent once.
	full     bool
	lingered bool // linger.ms has passed since the first record
	attempts int
	seq      int32 // base sequence (idempotence); wal.NoSequence until first sent
	// pid and epoch are the producer id and epoch seq belongs to: every attempt of the
	// batch carries them, even after the producer bumped its epoch.
	pid     int64
	epoch   int16
	retryAt sim.Time
	// maybe is set once an attempt may have been appended: no answer, or an ambiguous
	// error. A batch that ends without success is then info, not fail.
	maybe    bool
	inflight bool
	done     bool
	lingerT  sim.TimerID
	delivT   sim.TimerID
	delay    time.Duration // a delayed batch: one record, held by the leader (delay.go)
	memory   int64         // the buffer.memory it holds until it completes (backpressure.go)
}

func (b *batch) open() bool { return !b.full && !b.done }

// request is one produce request awaiting its answer.
type request struct {
	corr  int64
	b     *batch
	to    sim.NodeID
	timer sim.TimerID
}

// partState is the producer's state for one partition.
type partState struct {
	tp proto.TP
	// queue holds batches waiting to be sent, in sending order: re-queued batches first
	// (in sequence order with idempotence, most recent first without: Kafka's
	// reenqueue), then new ones; only the last may be open for appends.
	queue []*batch
	// inflight holds batches in requests that await an answer, in sending order.
	inflight []*batch
	nextSeq  int32
	// ackedSeq is the last sequence acknowledged under the current producer id (-1:
	// none). The broker takes a producer's sequences in order only, so every batch below
	// it is in the log, whatever became of its answer.
	ackedSeq int32
	// pid and epoch are the producer id and epoch nextSeq and ackedSeq count under. After
	// an epoch bump they stay behind while a batch numbered under them is unresolved.
	pid   int64
	epoch int16
	// rewrite marks a partition whose batch ended without success: the epoch bump
	// renumbers its waiting batches at once (Kafka's partitionsToRewriteSequences).
	rewrite bool
}

// sequenced reports whether a batch numbered under the partition's producer epoch has
// not completed yet.
func (ps *partState) sequenced() bool {
	for _, list := range [][]*batch{ps.inflight, ps.queue} {
		for _, b := range list {
			if !b.done && b.seq != wal.NoSequence {
				return true
			}
		}
	}
	return false
}

// restartSequences numbers the partition's batches from 0 under the producer's current
// id and epoch; a batch that was numbered before is numbered again when next sent.
func (p *Producer) restartSequences(ps *partState) {
	ps.nextSeq, ps.ackedSeq = 0, -1
	ps.pid, ps.epoch, ps.rewrite = p.pid, p.pidEpoch, false
	for _, b := range ps.queue {
		b.seq = wal.NoSequence
	}
}

// sticky is the default partitioner's choice for unkeyed records of one topic.
type sticky struct {
	cur  int32 // -1: choose a new partition at the next record
	prev int32
}

// Producer is a Kafka-style producer node: an accumulator of per-partition batches, a
// sender that respects max.in.flight.requests.per.connection per broker, retries with
// backoff, delivery timeouts and, with idempotence, producer ids and sequence numbers.
// Every send is recorded in the history and completes exactly once.
type Producer struct {
	// onDone, when set, hears every send's outcome (the mirror's offset syncs).
	onDone     func(env *sim.Env, tp proto.TP, t history.Type, offset int64)
	cfg        proto.ProducerConfig
	process    int
	rec        *history.Recorder
	cl         cluster
	idempotent bool
	started    bool

	pid       int64
	pidEpoch  int16
	pidReady  bool
	pidCorr   int64
	pidTimer  sim.TimerID
	pidWait   sim.TimerID // backoff before asking another controller (quorum); 0 when none
	resetting bool        // waiting for in-flight requests to end before asking for a new id

	parts     map[proto.TP]*partState
	partOrder []proto.TP // the keys of parts, sorted
	waiting   []*record  // sends whose topic's partition count is not known yet
	batches   map[int64]*batch
	reqs      map[int64]*request
	conns     map[sim.NodeID]int // requests in flight per broker: one connection each
	sticky    map[string]*sticky
	rr        map[string]int
	nextBatch int64
	nextRec   int64

	stats ProducerStats
	// delays are the delayed sends and their cancellations (delay.go).
	delays delayState
	// tx runs the transactions of a producer with a transactional.id (transactional.go);
	// nil otherwise.
	tx *txnManager
	// bp is buffer.memory and the application blocked in a send (backpressure.go).
	bp backPressure
	// throttled holds the brokers whose quota throttles this producer (throttle.go).
	throttled throttles
}

// NewProducer builds a producer that records its sends as process in rec (nil records
// nothing). brokers are the names of the brokers to ask for metadata; controllers are the
// nodes that grant producer ids: the single controller, or a quorum, whose active member
// the producer finds by following NOT_CONTROLLER answers and trying each in turn.
// Idempotence takes effect only with acks=all, as proto.Config.Validate demands.
func NewProducer(cfg proto.ProducerConfig, process int, brokers []string, controllers []string, rec *history.Recorder) *Producer {
	return &Producer{
		cfg:        cfg,
		process:    process,
		rec:        rec,
		cl:         newCluster(brokers, controllers, cfg.RequestTimeout, cfg.RetryBackoff),
		idempotent: cfg.Idempotence && cfg.Acks == proto.AcksAll,
		pid:        wal.NoProducerID,
		pidEpoch:   wal.NoProducerEpoch,
		parts:      map[proto.TP]*partState{},
		batches:    map[int64]*batch{},
		reqs:       map[int64]*request{},
		conns:      map[sim.NodeID]int{},
		sticky:     map[string]*sticky{},
		rr:         map[string]int{},
		tx:         newTxnManager(cfg),
	}
}

// Stats returns the producer's counters.
func (p *Producer) Stats() ProducerStats {
	s := p.stats
	s.Queued = len(p.waiting)
	for _, tp := range p.partOrder {
		ps := p.parts[tp]
		for _, b := range ps.queue {
			s.Queued += len(b.recs)
		}
		for _, b := range ps.inflight {
			if !b.done {
				s.InFlight += len(b.recs)
			}
		}
	}
	return s
}

// ProducerID is the producer id and epoch in use, and false while the producer has none
// (not idempotent, or waiting for InitProducerId).
func (p *Producer) ProducerID() (int64, int16, bool) { return p.pid, p.pidEpoch, p.pidReady }

// Config is the producer's configuration.
func (p *Producer) Config() proto.ProducerConfig { return p.cfg }

// Process is the history process the producer records as.
func (p *Producer) Process() int { return p.process }

// Start resolves the broker and controller names. Metadata and a producer id are asked
// for at the first send, as Kafka's producer does.
func (p *Producer) Start(env *sim.Env) {
	p.cl.start(env)
	if p.tx != nil {
		p.txnStart(env)
	}
}

// Recv takes Send commands and the answers of brokers and controller.
func (p *Producer) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if p.tx != nil {
		defer p.txnRun(env)
		if p.txnRecv(env, from, msg) {
			return
		}
	}
	switch m := msg.(type) {
	case Send:
		p.onSend(env, m)
	case CancelDelay:
		p.cancelDelay(env, m)
	case proto.MetadataResponse:
		if p.cl.onResponse(env, from, m) {
			p.onMetadata(env)
		}
	case proto.InitProducerIDResponse:
		p.onPID(env, m)
	case proto.ProduceResponse:
		p.noteThrottle(env, from, m.ThrottleTime)
		if !p.onCancelAnswer(env, m) {
			p.onProduce(env, m)
		}
	}
}

// Timer handles linger, retry backoff and the timeouts.
func (p *Producer) Timer(env *sim.Env, tag sim.TimerTag) {
	tag.Kind -= p.cl.timerBase
	if p.tx != nil {
		defer p.txnRun(env)
		if p.txnTimer(env, tag) {
			return
		}
	}
	if p.cl.onTimer(env, tag) {
		return
	}
	switch tag.Kind {
	case ptLinger:
		if b := p.batches[tag.Arg]; b != nil {
			b.lingered = true
			b.lingerT = 0
			p.drain(env)
		}
	case ptDelivery:
		if b := p.batches[tag.Arg]; b != nil {
			b.delivT = 0
			if b.inflight {
				b.maybe = true
			}
			p.finish(env, b, fmt.Sprintf("delivery timeout %s", p.cfg.DeliveryTimeout))
			p.drain(env)
		}
	case ptRetry:
		p.drain(env)
	case ptRequest:
		if r := p.reqs[tag.Arg]; r != nil {
			sim.Record(env, RequestTimeout{TP: r.b.tp, To: env.NameOf(r.to), After: p.cfg.RequestTimeout})
			r.timer = 0
			p.disconnect(env, r.to)
		}
	case ptPID:
		if tag.Arg == p.pidCorr && p.pidCorr != 0 {
			sim.Record(env, PIDTimeout{From: env.NameOf(p.cl.controller)})
			p.pidCorr = 0
			p.cl.nextController(proto.NoController)
			p.maybeInitPID(env)
		}
	case ptPIDRetry:
		p.pidWait = 0
		p.maybeInitPID(env)
	case ptThrottle:
		p.drain(env)
	case ptBlock:
		p.onBlockTimeout(env, tag.Arg)
	case ptCancelTimeout, ptCancelRetry:
		p.delayTimer(env, tag)
	case ptWaiting:
		for i, r := range p.waiting {
			if r.n == tag.Arg {
				p.waiting = slices.Delete(p.waiting, i, i+1)
				p.stats.Failed++
				sim.Record(env, NoMetadata{Key: r.key, Value: r.value, Topic: r.tp.Topic, Within: p.cfg.DeliveryTimeout})
				break
			}
		}
	}
}

func (p *Producer) now(env *sim.Env) int64 { return int64(env.Now()) }

// begin asks for metadata and a producer id at the first send.
func (p *Producer) begin(env *sim.Env) {
	if p.started {
		return
	}
	p.started = true
	p.cl.refresh(env)
	p.maybeInitPID(env)
}

func (p *Producer) onSend(env *sim.Env, m Send) {
	if !p.appBusy(m) {
		p.makeSend(env, m)
	}
}

// makeSend is the application's send: placed, then accepted or blocked for memory.
func (p *Producer) makeSend(env *sim.Env, m Send) {
	if m.Topic == "" || m.Partition < -1 {
		sim.Record(env, BadCommand{Cmd: m})
		return
	}
	p.begin(env)
	p.cl.refreshIfOlder(env, p.cfg.MetadataMaxAge)
	p.nextRec++
	r := &record{n: p.nextRec, tp: proto.TP{Topic: m.Topic, Partition: m.Partition}, key: m.Key, value: m.Value,
		tags: m.Tags, delay: m.Delay, tombstone: m.Tombstone}
	if r.tp.Partition < 0 {
		n := p.cl.partitions(m.Topic)
		if n == 0 {
			r.timer = env.SetTimer(p.cfg.DeliveryTimeout, sim.TimerTag{Kind: p.cl.timerBase + ptWaiting, Arg: r.n})
			p.waiting = append(p.waiting, r)
			sim.Record(env, Sending{Key: r.key, Value: r.value, TP: r.tp, Waiting: true})
			p.cl.refresh(env)
			return
		}
		r.tp.Partition = p.partition(env, m.Topic, m.Key, n)
	}
	if p.mustBlock(env, r) {
		return
	}
	p.accept(env, r)
	p.drain(env)
}

// accept records the send and puts it in the accumulator.
func (p *Producer) accept(env *sim.Env, r *record) {
	if !r.invoked {
		p.invoke(env, r)
	}
	sim.Record(env, Sending{Key: r.key, Value: r.value, TP: r.tp})
	if n := p.cl.partitions(r.tp.Topic); n > 0 && int(r.tp.Partition) >= n {
		p.stats.Failed++
		p.sendDone(env, r, history.Fail, history.Result{Error: fmt.Sprintf("partition %d of a %d-partition topic", r.tp.Partition, n)})
		sim.Record(env, NoSuchPartition{TP: r.tp, Partitions: n})
		return
	}
	p.append(env, r)
}

// invoke records the application's send in the history.
func (p *Producer) invoke(env *sim.Env, r *record) {
	r.invoked = true
	if p.tx != nil {
		p.txnSending(r)
	} else if p.rec != nil {
		r.h = p.rec.InvokeSend(p.now(env), p.processFor(r), htp(r.tp), r.key, r.value)
	}
}

// partition is the partitioner: round-robin over the partitions with a leader, or Kafka's
// default (murmur2 of the key; sticky for unkeyed records).
func (p *Producer) partition(env *sim.Env, topic, key string, n int) int32 {
	if p.cfg.Partitioner == "round-robin" {
		i := p.rr[topic]
		p.rr[topic] = i + 1
		if av := p.cl.available(topic); len(av) > 0 {
			return av[i%len(av)]
		}
		return int32(i % n)
	}
	if key != "" {
		return KeyPartition([]byte(key), n)
	}
	s := p.sticky[topic]
	if s == nil {
		s = &sticky{cur: -1, prev: -1}
		p.sticky[topic] = s
	}
	if s.cur >= 0 && int(s.cur) < n {
		return s.cur
	}
	cands := p.cl.available(topic)
	if len(cands) == 0 {
		for i := 0; i < n; i++ {
			cands = append(cands, int32(i))
		}
	}
	if len(cands) > 1 {
		if i := slices.Index(cands, s.prev); i >= 0 {
			cands = slices.Delete(cands, i, i+1)
		}
	}
	s.cur = cands[env.Rand().IntN(len(cands))]
	return s.cur
}

// part returns the partition's state, making it on first use.
func (p *Producer) part(tp proto.TP) *partState {
	ps := p.parts[tp]
	if ps == nil {
		ps = &partState{tp: tp, ackedSeq: -1, pid: wal.NoProducerID, epoch: wal.NoProducerEpoch}
		p.parts[tp] = ps
		i, _ := slices.BinarySearchFunc(p.partOrder, tp, proto.CompareTP)
		p.partOrder = slices.Insert(p.partOrder, i, tp)
	}
	return ps
}

// append adds a record to its partition's open batch, closing that batch first if the
// record does not fit (batch.size counts key and value bytes).
func (p *Producer) append(env *sim.Env, r *record) {
	if r.delay > 0 {
		p.appendDelayed(env, r)
		return
	}
	ps := p.part(r.tp)
	size := len(r.key) + len(r.value)
	var b *batch
	if n := len(ps.queue); n > 0 && ps.queue[n-1].open() {
		b = ps.queue[n-1]
	}
	if b != nil && len(b.recs) > 0 && b.bytes+size > p.cfg.BatchSize {
		p.close(env, b)
		b = nil
	}
	if b == nil {
		b = p.newBatch(env, ps, size)
	}
	b.recs = append(b.recs, r)
	b.bytes += size
	if b.bytes >= p.cfg.BatchSize {
		p.close(env, b)
	}
}

func (p *Producer) newBatch(env *sim.Env, ps *partState, firstRecord int) *batch {
	p.nextBatch++
	b := &batch{id: p.nextBatch, tp: ps.tp, created: env.Now(), seq: wal.NoSequence}
	p.reserve(b, firstRecord)
	if p.cfg.Linger > 0 {
		b.lingerT = env.SetTimer(p.cfg.Linger, sim.TimerTag{Kind: p.cl.timerBase + ptLinger, Arg: b.id})
	} else {
		b.lingered = true
	}
	b.delivT = env.SetTimer(p.cfg.DeliveryTimeout, sim.TimerTag{Kind: p.cl.timerBase + ptDelivery, Arg: b.id})
	p.batches[b.id] = b
	ps.queue = append(ps.queue, b)
	return b
}

// close ends appends to a batch; the sticky partitioner then moves on (KIP-480).
func (p *Producer) close(env *sim.Env, b *batch) {
	if b.full {
		return
	}
	b.full = true
	if b.lingerT != 0 {
		env.CancelTimer(b.lingerT)
		b.lingerT = 0
	}
	if s := p.sticky[b.tp.Topic]; s != nil && s.cur == b.tp.Partition {
		s.prev, s.cur = s.cur, -1
	}
}

func (p *Producer) maxInFlight() int { return max(1, p.cfg.MaxInFlight) }

// drain sends every batch that may go now, one per partition per round, in partition
// order, until nothing more may.
func (p *Producer) drain(env *sim.Env) {
	p.maybeUnblock(env)
	if p.idempotent && !p.pidReady {
		p.maybeInitPID(env)
		return
	}
	missing := false
	for progress := true; progress; {
		progress = false
		for _, tp := range p.partOrder {
			ps := p.parts[tp]
			if len(ps.queue) == 0 || !p.sendable(env, ps, ps.queue[0]) {
				continue
			}
			leader, _, ok := p.cl.leader(tp)
			if !ok {
				missing = true
				continue
			}
			if p.cfg.Acks != proto.AcksNone && p.conns[leader] >= p.maxInFlight() || p.throttled.active(env, leader) {
				continue
			}
			p.sendBatch(env, ps, leader)
			progress = true
		}
	}
	if missing {
		p.cl.refresh(env)
	} else {
		p.cl.settled()
	}
}

// sendable reports whether the partition's first waiting batch may be sent now.
func (p *Producer) sendable(env *sim.Env, ps *partState, b *batch) bool {
	if b.retryAt > env.Now() {
		return false
	}
	if !b.full && !b.lingered && len(ps.queue) == 1 {
		return false
	}
	if p.tx != nil && !p.txnMaySend(ps.tp) {
		return false
	}
	if p.idempotent && b.seq == wal.NoSequence && (ps.pid != p.pid || ps.epoch != p.pidEpoch) && ps.sequenced() {
		// After an epoch bump, a partition's first batch under the new epoch (sequence 0)
		// waits until every batch numbered under the old one is resolved: re-sent with its
		// old epoch and sequence, the broker recognises a retry of a batch it has; a
		// renumbered one it would append again. Kafka's
		// RecordAccumulator.shouldStopDrainBatchesForPartition: "Don't drain any new
		// batches while the partition has in-flight batches with a different epoch".
		return false
	}
	if p.idempotent && b.seq != wal.NoSequence {
		// A re-sent batch goes only when no batch before it is unresolved (Kafka's
		// RecordAccumulator.drain): in flight to one request at a time until it clears.
		for _, f := range ps.inflight {
			if !f.done && f.seq != wal.NoSequence && f.seq < b.seq {
				return false
			}
		}
	}
	return true
}

func (p *Producer) sendBatch(env *sim.Env, ps *partState, to sim.NodeID) {
	b := ps.queue[0]
	ps.queue = ps.queue[1:]
	p.close(env, b)
	wb := wal.Batch{
		LeaderEpoch:   wal.UndefinedEpoch,
		ProducerID:    wal.NoProducerID,
		ProducerEpoch: wal.NoProducerEpoch,
		BaseSequence:  wal.NoSequence,
		Records:       make([]wal.Record, len(b.recs)),
	}
	if p.idempotent {
		if b.seq == wal.NoSequence {
			if ps.pid != p.pid || ps.epoch != p.pidEpoch {
				// Nothing numbered under the old epoch is left (sendable): start at 0,
				// as Kafka's TransactionManager.maybeUpdateProducerIdAndEpoch.
				p.restartSequences(ps)
			}
			b.seq, b.pid, b.epoch = ps.nextSeq, p.pid, p.pidEpoch
			ps.nextSeq += int32(len(b.recs))
		}
		wb.ProducerID, wb.ProducerEpoch, wb.BaseSequence = b.pid, b.epoch, b.seq
	}
	if p.tx != nil {
		wb.Flags |= wal.FlagTransactional
		p.txnBatchSent()
	}
	for i, r := range b.recs {
		if r.key != "" {
			wb.Records[i].Key = []byte(r.key)
		}
		wb.Records[i].Value = []byte(r.value)
		wb.Records[i].Headers = tagHeaders(r.tags)
		if r.tombstone {
			wb.Records[i].Value = nil
			wb.Records[i].Headers = append(wb.Records[i].Headers, wal.Header{Key: proto.HeaderTombstone, Value: []byte(r.value)})
			wal.SortHeaders(wb.Records[i].Headers)
		}
	}
	p.compress(env, &wb, b.attempts == 0)
	b.attempts++
	p.stats.Requests++
	if b.attempts > 1 {
		p.stats.Retries++
	}
	corr := p.cl.newCorr()
	env.Send(to, proto.ProduceRequest{CorrelationID: corr, TP: b.tp, Acks: p.cfg.Acks, Timeout: p.cfg.RequestTimeout, Batch: wb, Delay: b.delay,
		TransactionalID: p.txnID()})
	sim.Record(env, p.batchSent(env, b, &wb, to))
	if p.cfg.Acks == proto.AcksNone {
		p.ack(env, b, history.NoOffset)
		return
	}
	p.reqs[corr] = &request{corr: corr, b: b, to: to,
		timer: env.SetTimer(p.cfg.RequestTimeout, sim.TimerTag{Kind: p.cl.timerBase + ptRequest, Arg: corr})}
	p.conns[to]++
	b.inflight = true
	ps.inflight = append(ps.inflight, b)
}

// endRequest forgets a request: answered, timed out or disconnected.
func (p *Producer) endRequest(env *sim.Env, r *request) {
	env.CancelTimer(r.timer)
	delete(p.reqs, r.corr)
	p.conns[r.to]--
	if p.conns[r.to] == 0 {
		delete(p.conns, r.to)
	}
	ps := p.parts[r.b.tp]
	if i := slices.Index(ps.inflight, r.b); i >= 0 {
		ps.inflight = slices.Delete(ps.inflight, i, i+1)
	}
	r.b.inflight = false
}

func (p *Producer) onProduce(env *sim.Env, m proto.ProduceResponse) {
	r := p.reqs[m.CorrelationID]
	if r == nil {
		sim.Record(env, LateAnswer{TP: m.TP, Err: m.Error})
		return
	}
	p.endRequest(env, r)
	b := r.b
	switch {
	case b.done:
		sim.Record(env, LateAnswer{TP: m.TP, Err: m.Error, Completed: true})
	case m.Error == proto.None:
		p.ack(env, b, max(m.BaseOffset, history.NoOffset))
	case m.Error == proto.DuplicateSequenceNumberExists:
		// The broker knows the batch but no longer its offset (Kafka's Sender treats it
		// as success without an offset).
		p.ack(env, b, history.NoOffset)
	default:
		p.attemptFailed(env, b, m.Error, m.Error.String())
	}
	p.afterRequests(env)
}

// attemptFailed decides what an error answer (or no answer) means for a batch: retry,
// or complete it as fail or info.
func (p *Producer) attemptFailed(env *sim.Env, b *batch, e proto.Error, why string) {
	if e.Ambiguous() || e == proto.KafkaStorageError {
		b.maybe = true
	}
	if p.tx != nil && fencedError(e) {
		// A newer instance took the transactional.id: fatal (TransactionManager fails with
		// ProducerFencedException). INVALID_PRODUCER_EPOCH is not fatal (fencedError).
		p.txnFence(env, e)
		p.finish(env, b, why)
		return
	}
	if needsRefresh(e) {
		p.cl.refresh(env)
	}
	if ps := p.parts[b.tp]; p.idempotent && e == proto.OutOfOrderSequence && b.seq != wal.NoSequence && b.seq <= ps.ackedSeq {
		// A later sequence was acknowledged, so this batch is in the log and only its
		// answer was lost (a crash took the connection). Sending it again under a new
		// producer id would append it twice; Kafka's producer keeps retrying it until
		// the delivery timeout. It is ok, at an offset the client never learnt.
		sim.Record(env, InLog{TP: b.tp, Seq: b.seq, Acked: ps.ackedSeq, Err: e})
		p.ack(env, b, history.NoOffset)
		return
	}
	retriable := e.Retriable()
	if p.idempotent && e == proto.OutOfOrderSequence && p.earlierUnresolved(b) {
		// An earlier batch did not land (yet): this one is re-sent after it, in order.
		retriable = true
	}
	switch {
	case !retriable:
		p.finish(env, b, why)
	case b.attempts > p.cfg.Retries:
		p.finish(env, b, fmt.Sprintf("%s after %d attempts", why, b.attempts))
	case env.Now() >= b.created.Add(p.cfg.DeliveryTimeout):
		p.finish(env, b, fmt.Sprintf("%s, delivery timeout %s", why, p.cfg.DeliveryTimeout))
	default:
		b.retryAt = env.Now().Add(p.cfg.RetryBackoff)
		p.requeue(b)
		env.SetTimer(p.cfg.RetryBackoff, sim.TimerTag{Kind: p.cl.timerBase + ptRetry, Arg: b.id})
		sim.Record(env, Retrying{TP: b.tp, Records: len(b.recs), Seq: b.seq, Why: why, Backoff: p.cfg.RetryBackoff})
	}
}

// earlierUnresolved reports whether a batch of b's partition with a lower sequence has
// not completed yet.
func (p *Producer) earlierUnresolved(b *batch) bool {
	ps := p.parts[b.tp]
	for _, list := range [][]*batch{ps.inflight, ps.queue} {
		for _, o := range list {
			if o != b && !o.done && o.seq != wal.NoSequence && o.seq < b.seq {
				return true
			}
		}
	}
	return false
}

// requeue puts a batch back to be sent again: in sequence order with idempotence, first
// in line without (Kafka's RecordAccumulator.reenqueue), which is how two failed batches
// swap places.
func (p *Producer) requeue(b *batch) {
	ps := p.parts[b.tp]
	i := 0
	if p.idempotent {
		for i < len(ps.queue) && ps.queue[i].seq != wal.NoSequence && ps.queue[i].seq < b.seq {
			i++
		}
	}
	ps.queue = slices.Insert(ps.queue, i, b)
}

// disconnect abandons every request in flight to a broker, as Kafka closes a connection
// when one of its requests times out. Each abandoned batch may have been appended.
func (p *Producer) disconnect(env *sim.Env, to sim.NodeID) {
	var gone []*request
	for _, r := range p.reqs {
		if r.to == to {
			gone = append(gone, r)
		}
	}
	slices.SortFunc(gone, func(a, b *request) int { return cmp.Compare(a.corr, b.corr) })
	sim.Record(env, Disconnected{From: env.NameOf(to), Abandoned: len(gone)})
	p.cl.avoid(to)
	for _, r := range gone {
		p.endRequest(env, r)
		r.b.maybe = true
		if !r.b.done {
			p.attemptFailed(env, r.b, proto.NetworkException, "no answer")
		}
	}
	p.afterRequests(env)
}

// afterRequests runs whenever requests ended: a pending producer id reset may start, and
// freed connections may take more batches.
func (p *Producer) afterRequests(env *sim.Env) {
	p.maybeInitPID(env)
	p.drain(env)
}

// ack completes a batch as ok.
func (p *Producer) ack(env *sim.Env, b *batch, base int64) {
	if ps := p.parts[b.tp]; b.seq != wal.NoSequence {
		ps.ackedSeq = max(ps.ackedSeq, b.seq+int32(len(b.recs))-1)
	}
	if b.delay > 0 {
		p.ackDelayed(env, b, base)
		return
	}
	p.complete(env, b)
	for i, r := range b.recs {
		off := history.NoOffset
		if base >= 0 {
			off = base + int64(i)
		}
		p.sendDone(env, r, history.Ok, history.Result{Offset: off})
	}
	p.stats.Acked += len(b.recs)
	sim.Record(env, Acked{TP: b.tp, Base: base, Records: len(b.recs)})
}

// finish completes a batch without success: info if an attempt may have been appended,
// fail otherwise. With idempotence, a batch that had a sequence leaves a gap the broker
// would refuse forever, so the producer starts over with a new producer id.
func (p *Producer) finish(env *sim.Env, b *batch, why string) {
	p.complete(env, b)
	count := &p.stats.Failed
	if b.maybe {
		count = &p.stats.Unknown
	}
	for _, r := range b.recs {
		if b.maybe {
			p.sendDone(env, r, history.Info, history.Result{Error: why})
		} else {
			p.sendDone(env, r, history.Fail, history.Result{Error: why})
		}
	}
	*count += len(b.recs)
	sim.Record(env, BatchEnded{TP: b.tp, Records: len(b.recs), Why: why, Unknown: b.maybe})
	if p.idempotent && b.seq != wal.NoSequence {
		if p.tx != nil {
			p.tx.bumpNeeded = true // the transaction's end bumps the epoch
			return
		}
		p.startReset(env, b)
	}
}

// complete marks a batch done and drops what refers to it, except a request still in
// flight, whose answer will be ignored.
func (p *Producer) complete(env *sim.Env, b *batch) {
	b.done = true
	p.release(b)
	for _, t := range []*sim.TimerID{&b.lingerT, &b.delivT} {
		if *t != 0 {
			env.CancelTimer(*t)
			*t = 0
		}
	}
	delete(p.batches, b.id)
	ps := p.parts[b.tp]
	if i := slices.Index(ps.queue, b); i >= 0 {
		p.close(env, b)
		ps.queue = slices.Delete(ps.queue, i, i+1)
	}
}

// startReset begins an epoch bump (KIP-360): sending stops until every request in flight
// has ended and every batch of a partition to renumber that was numbered under the old
// epoch has completed (unresolvedRewrite), then the producer keeps its producer id with the next epoch and numbers the
// batches of lost's partition from sequence 0 again (a broker takes a new epoch only from
// sequence 0); every other partition moves to the new epoch once nothing it sent under the
// old one is unresolved (adoptPID). As Kafka's TransactionManager.bumpIdempotentProducerEpoch, the bump is
// local: only an exhausted epoch (Short.MAX_VALUE) asks for a new producer id.
func (p *Producer) startReset(env *sim.Env, lost *batch) {
	p.parts[lost.tp].rewrite = true
	if p.resetting || !p.pidReady {
		return
	}
	p.resetting = true
	p.pidReady = false
	sim.Record(env, PIDReset{PID: p.pid, TP: lost.tp, Seq: lost.seq, InFlight: len(p.reqs)})
	p.maybeInitPID(env)
}

// unresolvedRewrite reports whether a partition that the pending epoch bump will renumber
// still holds a batch numbered under the old epoch that has not completed: sent, perhaps
// appended, and waiting to be re-sent. Renumbering it would let the broker append it a
// second time (a new epoch at sequence 0 is a new batch to it), so the bump waits until
// every such batch has completed, ended by its own delivery timeout at the latest. Kafka's
// TransactionManager.maybeResolveSequences likewise bumps the epoch for a partition only
// once !hasInflightBatches(topicPartition): inflightBatchesBySequence holds every batch
// with a sequence that has not completed, re-enqueued ones included.
func (p *Producer) unresolvedRewrite() bool {
	for _, tp := range p.partOrder {
		if ps := p.parts[tp]; ps.rewrite && ps.sequenced() {
			return true
		}
	}
	return false
}

func (p *Producer) maybeInitPID(env *sim.Env) {
	if p.tx != nil {
		return // the transaction coordinator grants a transactional producer its id
	}
	if p.resetting && p.unresolvedRewrite() {
		return
	}
	if p.resetting && p.idempotent && p.started && !p.pidReady && len(p.reqs) == 0 && p.pid != wal.NoProducerID && p.pidEpoch < math.MaxInt16 {
		p.adoptPID(env, p.pid, p.pidEpoch+1)
		return
	}
	if !p.idempotent || !p.started || p.pidReady || p.pidCorr != 0 || p.pidWait != 0 || len(p.reqs) > 0 || !p.cl.hasController {
		return
	}
	p.pidCorr = p.cl.newCorr()
	env.Send(p.cl.controller, proto.InitProducerID{CorrelationID: p.pidCorr})
	p.pidTimer = env.SetTimer(p.cfg.RequestTimeout, sim.TimerTag{Kind: p.cl.timerBase + ptPID, Arg: p.pidCorr})
}

func (p *Producer) onPID(env *sim.Env, m proto.InitProducerIDResponse) {
	if p.pidCorr == 0 || m.CorrelationID != p.pidCorr {
		return
	}
	env.CancelTimer(p.pidTimer)
	p.pidCorr = 0
	if m.Error != proto.None {
		from := p.cl.controller
		if p.cl.nextController(m.ActiveController) {
			sim.Record(env, NotController{Asked: env.NameOf(from), Next: env.NameOf(p.cl.controller)})
			p.maybeInitPID(env)
		} else {
			sim.Record(env, DiscoverRetry{Asked: env.NameOf(from), Err: m.Error, Next: env.NameOf(p.cl.controller), After: p.cfg.RetryBackoff})
			p.pidWait = env.SetTimer(p.cfg.RetryBackoff, sim.TimerTag{Kind: p.cl.timerBase + ptPIDRetry})
		}
		return
	}
	p.adoptPID(env, m.ProducerID, m.ProducerEpoch)
}

// adoptPID starts sending as producer id pid in epoch: one InitProducerId granted, or the
// producer's own epoch bump.
func (p *Producer) adoptPID(env *sim.Env, pid int64, epoch int16) {
	bumped := p.resetting && pid == p.pid
	p.pid, p.pidEpoch, p.pidReady = pid, epoch, true
	if p.resetting {
		p.resetting = false
		// Only the partitions whose batch ended without success start again from 0 now,
		// with their waiting batches (nothing is in flight). Any other partition keeps its
		// old epoch while a batch numbered under it is unresolved, and moves to the new
		// one when its next new batch is sent (sendBatch): as Kafka's
		// TransactionManager.bumpIdempotentProducerEpoch rewrites only
		// partitionsToRewriteSequences. Renumbering a batch that was sent under the old
		// epoch, and perhaps appended, would let the broker append it again: its check
		// takes a new epoch at sequence 0 as a new batch.
		for _, tp := range p.partOrder {
			if ps := p.parts[tp]; ps.rewrite || !ps.sequenced() {
				p.restartSequences(ps)
			}
		}
	}
	sim.Record(env, PIDAssigned{PID: p.pid, Epoch: p.pidEpoch, Bumped: bumped})
	p.drain(env)
}

// onMetadata places the sends that waited for their topic's partition count, then sends
// what may go.
func (p *Producer) onMetadata(env *sim.Env) {
	var still []*record
	for _, r := range p.waiting {
		n := p.cl.partitions(r.tp.Topic)
		if n == 0 {
			still = append(still, r)
			continue
		}
		env.CancelTimer(r.timer)
		r.tp.Partition = p.partition(env, r.tp.Topic, r.key, n)
		p.acceptOrBlock(env, r)
	}
	p.waiting = still
	if len(still) > 0 {
		p.cl.refresh(env) // the topic is not in the metadata yet: keep asking, with backoff
	}
	p.drain(env)
}

func htp(tp proto.TP) history.TopicPartition {
	return history.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
}
