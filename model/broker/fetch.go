package broker

import (
	"slices"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// parkedFetch is a fetch that found nothing new and waits for data or its MaxWait.
type parkedFetch struct {
	key   int64
	from  sim.NodeID
	req   proto.FetchRequest
	timer sim.TimerID
}

// onFetch serves a follower or a consumer as the leader.
func (b *Broker) onFetch(env *sim.Env, from sim.NodeID, m proto.FetchRequest) {
	fail := func(e proto.Error, r *replica) {
		resp := proto.FetchResponse{CorrelationID: m.CorrelationID, TP: m.TP, Error: e}
		if r != nil {
			resp.LogStartOffset, resp.HighWatermark, resp.LeaderEpoch = r.log.LogStartOffset(), r.hw, r.state.LeaderEpoch
			resp.LastStableOffset = b.lastStableOffset(r)
		}
		env.Send(from, resp)
	}
	r := b.parts[m.TP]
	// A fetch without a current leader epoch (before KIP-320, fetch-fencing=off) is
	// served whatever epoch the fetcher lives in.
	unfenced := m.CurrentLeaderEpoch == wal.UndefinedEpoch
	switch {
	case r == nil:
		fail(proto.UnknownTopicOrPartition, nil)
		return
	case !r.isLeader:
		fail(proto.NotLeaderOrFollower, r)
		return
	case !unfenced && m.CurrentLeaderEpoch < r.state.LeaderEpoch:
		fail(proto.FencedLeaderEpoch, r)
		return
	case !unfenced && m.CurrentLeaderEpoch > r.state.LeaderEpoch:
		fail(proto.UnknownLeaderEpoch, r)
		return
	}
	follower := m.ReplicaID != proto.ConsumerReplica
	if follower && r.follower(m.ReplicaID) == nil {
		fail(proto.NotLeaderOrFollower, r) // not a replica of this partition
		return
	}
	if div, ok := b.divergence(r, m); ok {
		env.Send(from, proto.FetchResponse{CorrelationID: m.CorrelationID, TP: m.TP, HighWatermark: r.hw,
			LogStartOffset: r.log.LogStartOffset(), LeaderEpoch: r.state.LeaderEpoch, DivergingEpoch: &div,
			LastStableOffset: b.lastStableOffset(r)})
		return
	}
	if m.FetchOffset < r.log.LogStartOffset() || m.FetchOffset > r.log.LogEndOffset() {
		fail(proto.OffsetOutOfRange, r)
		return
	}
	if follower {
		b.noteFollowerFetch(env, r, m.ReplicaID, m.FetchOffset)
	}
	if b.answerFetch(env, r, from, m) {
		return
	}
	if m.MaxWait <= 0 {
		b.sendFetch(env, r, from, m, nil)
		return
	}
	p := &parkedFetch{key: b.key(), from: from, req: m}
	p.timer = env.SetTimer(m.MaxWait, sim.TimerTag{Kind: timerFetchWait, Arg: p.key})
	r.fetches = append(r.fetches, p)
	b.fetchWaits[p.key] = r
}

// divergence checks the fetcher's last fetched epoch against this leader's epoch cache:
// if the leader's log ends that epoch earlier, or never had it, the fetcher must
// truncate (KIP-101/279; the diverging-epoch field of KAFKA-10554).
func (b *Broker) divergence(r *replica, m proto.FetchRequest) (proto.EpochEnd, bool) {
	if m.LastFetchedEpoch == wal.UndefinedEpoch || m.FetchOffset == 0 {
		return proto.EpochEnd{}, false
	}
	epoch, end := r.log.EndOffsetFor(m.LastFetchedEpoch)
	if end == wal.UndefinedOffset {
		return proto.EpochEnd{Epoch: wal.UndefinedEpoch, EndOffset: r.log.LogStartOffset()}, true
	}
	if epoch < m.LastFetchedEpoch || end < m.FetchOffset {
		return proto.EpochEnd{Epoch: epoch, EndOffset: end}, true
	}
	return proto.EpochEnd{}, false
}

// readLimit is the offset a fetch may read up to: the log end for followers, the HW for
// consumers, the last stable offset for read_committed consumers.
func (b *Broker) readLimit(r *replica, m proto.FetchRequest) int64 {
	if m.ReplicaID != proto.ConsumerReplica || b.cfg.Bugs.ReadsBeyondHW {
		return r.log.LogEndOffset()
	}
	if m.Isolation == proto.ReadCommitted {
		return b.lastStableOffset(r)
	}
	return r.hw
}

// answerFetch sends the fetch its records if there are any, and reports whether it did.
func (b *Broker) answerFetch(env *sim.Env, r *replica, to sim.NodeID, m proto.FetchRequest) bool {
	limit := b.readLimit(r, m)
	if limit <= m.FetchOffset {
		return false
	}
	batches, err := r.log.Read(m.FetchOffset, m.MaxBytes)
	if err != nil {
		env.Send(to, proto.FetchResponse{CorrelationID: m.CorrelationID, TP: m.TP, Error: proto.KafkaStorageError})
		return true
	}
	n := 0
	for n < len(batches) && batches[n].BaseOffset < limit {
		n++
	}
	if m.ReplicaID == proto.ConsumerReplica && n > 0 {
		b.sendConsumerFetch(env, r, to, m, batches[:n]) // delayed.go: what consumers see
		return true
	}
	b.sendFetch(env, r, to, m, batches[:n])
	return true
}

func (b *Broker) sendFetch(env *sim.Env, r *replica, to sim.NodeID, m proto.FetchRequest, batches []wal.Batch) {
	b.sendFetchResponse(env, to, m, b.withTxnFields(r, m, batches, proto.FetchResponse{CorrelationID: m.CorrelationID, TP: m.TP, HighWatermark: r.hw,
		LogStartOffset: r.log.LogStartOffset(), LeaderEpoch: r.state.LeaderEpoch, Batches: batches}))
}

// wakeFetches answers parked fetches that now have something to read.
func (b *Broker) wakeFetches(env *sim.Env, r *replica) {
	kept := r.fetches[:0]
	for _, p := range r.fetches {
		if b.answerFetch(env, r, p.from, p.req) {
			env.CancelTimer(p.timer)
			delete(b.fetchWaits, p.key)
			continue
		}
		kept = append(kept, p)
	}
	r.fetches = kept
}

// expireFetch answers a parked fetch empty when its MaxWait is over.
func (b *Broker) expireFetch(env *sim.Env, key int64) {
	r := b.fetchWaits[key]
	if r == nil {
		return
	}
	delete(b.fetchWaits, key)
	for i, p := range r.fetches {
		if p.key == key {
			r.fetches = slices.Delete(r.fetches, i, i+1)
			b.sendFetch(env, r, p.from, p.req, nil)
			return
		}
	}
}

// onListOffsets answers the earliest (log start) or latest (HW; LSO for read_committed)
// offset, or the first offset at or after a time.
func (b *Broker) onListOffsets(env *sim.Env, from sim.NodeID, m proto.ListOffsets) {
	env.Send(from, b.ListOffsetsAnswer(m))
}

// ListOffsetsAnswer is the broker's answer to m, as onListOffsets sends it: the scenario
// runner's group tool (reset-offsets) asks the leader this way.
func (b *Broker) ListOffsetsAnswer(m proto.ListOffsets) proto.ListOffsetsResponse {
	r := b.parts[m.TP]
	resp := proto.ListOffsetsResponse{CorrelationID: m.CorrelationID, TP: m.TP}
	switch {
	case r == nil:
		resp.Error = proto.UnknownTopicOrPartition
	case !r.isLeader:
		resp.Error = proto.NotLeaderOrFollower
	case m.ByTime:
		resp.Offset, resp.Timestamp, resp.Error = b.offsetForTime(r, m)
		resp.LeaderEpoch = r.state.LeaderEpoch
	case m.Latest && m.Isolation == proto.ReadCommitted:
		resp.Offset, resp.LeaderEpoch = b.lastStableOffset(r), r.state.LeaderEpoch
	case m.Latest:
		resp.Offset, resp.LeaderEpoch = r.hw, r.state.LeaderEpoch
	default:
		resp.Offset, resp.LeaderEpoch = r.log.LogStartOffset(), r.state.LeaderEpoch
	}
	return resp
}

// offsetForTime answers a ListOffsets by time: the first offset whose batch timestamp is
// at or after m.Time, if a consumer may read it. As Kafka's ReplicaManager.fetchOffsets
// does, a record found at or past the last fetchable offset (the HW, or the LSO for
// read_committed) is not answered: the offset is UnknownOffset, with no error.
func (b *Broker) offsetForTime(r *replica, m proto.ListOffsets) (int64, sim.Time, proto.Error) {
	offset, ts, found, err := r.log.OffsetForTime(m.Time)
	if err != nil {
		return proto.UnknownOffset, 0, proto.KafkaStorageError
	}
	fetchable := r.hw
	if m.Isolation == proto.ReadCommitted {
		fetchable = b.lastStableOffset(r)
	}
	if !found || offset >= fetchable {
		return proto.UnknownOffset, 0, proto.None
	}
	return offset, ts, proto.None
}
