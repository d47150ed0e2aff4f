package broker

import (
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// parkedProduce is a write waiting in the purgatory: for the ISR (acks=all) or for the
// leader's own fsync (acks=1 under a flush-every-batch policy).
type parkedProduce struct {
	key      int64
	from     sim.NodeID
	req      proto.ProduceRequest
	base     int64
	required int64 // the HW (or synced offset) that completes it
	timer    sim.TimerID
}

// onProduce appends a producer's batch as the leader and answers per acks.
func (b *Broker) onProduce(env *sim.Env, from sim.NodeID, m proto.ProduceRequest) {
	b.produce(env, from, m, false)
}

// produce is onProduce; verified says the transaction coordinator has confirmed that the
// partition is in the producer's transaction (txn.go).
func (b *Broker) produce(env *sim.Env, from sim.NodeID, m proto.ProduceRequest, verified bool) {
	reply := func(e proto.Error, offset int64) {
		if m.Acks != proto.AcksNone {
			b.sendProduceResponse(env, from, m, proto.ProduceResponse{CorrelationID: m.CorrelationID, TP: m.TP, Error: e, BaseOffset: offset})
		}
	}
	r := b.parts[m.TP]
	switch {
	case r == nil:
		reply(proto.UnknownTopicOrPartition, -1)
		return
	case !r.isLeader:
		reply(proto.NotLeaderOrFollower, -1)
		return
	case m.Acks == proto.AcksAll && len(r.state.ISR) < r.topic.MinInsyncReplicas:
		if env.Tracing() {
			sim.Record(env, BelowMinISR{TP: r.tp, ISR: b.names(env, r.state.ISR), MinISR: r.topic.MinInsyncReplicas})
		}
		reply(proto.NotEnoughReplicas, -1)
		return
	}
	// The coordinator's word comes before the producer-state checks, as in Kafka's
	// ReplicaManager.appendRecords: batches that wait for it together are then appended
	// in the order they were sent.
	if !verified && b.mustVerify(r, m) {
		b.holdForVerification(env, r, from, m)
		return
	}
	batch := m.Batch
	if dup, e := r.producers.check(batch, b.cfg.Bugs.NoIdempotentDedup, b.cfg.Legacy.NoProducerFencing); e != proto.None {
		sim.Record(env, SequenceRejected{TP: r.tp, ProducerID: batch.ProducerID, Seq: batch.BaseSequence, Err: e})
		reply(e, -1)
		return
	} else if dup >= 0 {
		// A retry of a batch already in the log: answer with its first offset.
		sim.Record(env, Deduplicated{TP: r.tp, ProducerID: batch.ProducerID, Seq: batch.BaseSequence, Offset: dup})
		b.respondWhenCommitted(env, r, from, m, dup, dup+int64(len(batch.Records)))
		return
	}
	if e := b.prepareDelayed(env, r, m, &batch); e != proto.None {
		reply(e, -1)
		return
	}
	batch.LeaderEpoch = r.state.LeaderEpoch
	batch.Timestamp = env.Now()
	res, err := r.log.Append(batch)
	b.touch(r)
	if err != nil {
		sim.Record(env, StorageFailed{TP: r.tp, Op: OpAppend, Err: err})
		reply(proto.KafkaStorageError, -1)
		return
	}
	b.sync(env, res.Sync)
	batch.BaseOffset = res.BaseOffset
	r.producers.record(batch)
	sim.Record(env, Appended{TP: r.tp, First: res.BaseOffset, Last: res.NextOffset - 1, Epoch: batch.LeaderEpoch,
		Acks: m.Acks, From: env.NameOf(from), LEO: res.NextOffset, Bytes: int(res.Stored)})
	b.afterDelayedAppend(env, r, m, batch, res.BaseOffset)
	b.respondWhenCommitted(env, r, from, m, res.BaseOffset, res.NextOffset)
	b.wakeFetches(env, r)
	b.maybeAdvanceHW(env, r)
}

// respondWhenCommitted answers a produce now or parks it until what its acks promise
// holds.
func (b *Broker) respondWhenCommitted(env *sim.Env, r *replica, from sim.NodeID, m proto.ProduceRequest, base, next int64) {
	switch {
	case m.Acks == proto.AcksNone:
		return
	case m.Acks == proto.AcksLeader && (!b.durable || b.cfg.Bugs.AckBeforeFsync):
		b.ack(env, r, from, m, base)
		return
	}
	p := &parkedProduce{key: b.key(), from: from, req: m, base: base, required: next}
	p.timer = env.SetTimer(m.Timeout, sim.TimerTag{Kind: timerProduceTimeout, Arg: p.key})
	r.produces = append(r.produces, p)
	b.completeProduces(env, r)
}

// completeProduces answers every parked produce whose condition now holds.
func (b *Broker) completeProduces(env *sim.Env, r *replica) {
	kept := r.produces[:0]
	for _, p := range r.produces {
		reached := r.hw
		if p.req.Acks == proto.AcksLeader {
			reached = r.log.SyncedOffset()
		}
		if reached >= p.required {
			env.CancelTimer(p.timer)
			if p.req.Acks == proto.AcksAll && len(r.state.ISR) < r.topic.MinInsyncReplicas {
				// Only under hw-min-isr=ignore can the HW pass a batch while the ISR is
				// below min.insync.replicas; Kafka before 3.7 then answered
				// NOT_ENOUGH_REPLICAS_AFTER_APPEND (Partition.checkEnoughReplicasReachOffset),
				// though consumers could already read the batch.
				b.answerProduce(env, r, p, proto.NotEnoughReplicasAfterAppend, p.base)
				continue
			}
			b.ack(env, r, p.from, p.req, p.base)
			continue
		}
		kept = append(kept, p)
	}
	r.produces = kept
}

func (b *Broker) ack(env *sim.Env, r *replica, to sim.NodeID, m proto.ProduceRequest, base int64) {
	sim.Record(env, Acked{TP: r.tp, Offset: base, To: env.NameOf(to), Acks: m.Acks, HW: r.hw})
	b.sendProduceResponse(env, to, m, proto.ProduceResponse{CorrelationID: m.CorrelationID, TP: m.TP, BaseOffset: base})
}

func (b *Broker) answerProduce(env *sim.Env, r *replica, p *parkedProduce, e proto.Error, offset int64) {
	sim.Record(env, ProduceFailed{TP: r.tp, Offset: p.base, To: env.NameOf(p.from), Err: e})
	b.sendProduceResponse(env, p.from, p.req, proto.ProduceResponse{CorrelationID: p.req.CorrelationID, TP: p.req.TP, Error: e, BaseOffset: offset})
}

// expireProduce times out a parked produce: the record stays in the log and may yet be
// committed, which is why the producer must treat the outcome as unknown.
func (b *Broker) expireProduce(env *sim.Env, key int64) {
	for _, tp := range b.order {
		r := b.parts[tp]
		for i, p := range r.produces {
			if p.key == key {
				r.produces = append(r.produces[:i], r.produces[i+1:]...)
				b.answerProduce(env, r, p, proto.RequestTimedOut, -1)
				return
			}
		}
	}
}

// isNoProducer reports a batch without idempotence.
func isNoProducer(b wal.Batch) bool { return b.ProducerID == wal.NoProducerID }
