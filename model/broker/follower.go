package broker

import (
	"errors"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// fetchFromLeader sends the next replica fetch, unless one is outstanding or this
// replica has nobody to follow.
func (b *Broker) fetchFromLeader(env *sim.Env, r *replica) {
	if r.isLeader || r.removed || r.state.Leader == proto.NoLeader || r.state.Leader == env.Self() || r.fetchCorr != 0 || r.waitFsync || r.stuck {
		return
	}
	if b.durable && !b.cfg.Bugs.AckBeforeFsync && r.log.SyncedOffset() < r.log.LogEndOffset() {
		// The fetch offset tells the leader what this replica has on disk: wait for the
		// fsync (onFsyncDone fetches then). That holds for the first fetch from a new
		// leader too, which may follow records replicated a moment earlier.
		r.waitFsync = true
		return
	}
	lastEpoch := wal.UndefinedEpoch
	if b.cfg.Broker.Truncation == proto.TruncateByEpoch && r.log.LogEndOffset() > 0 && !r.epochChecked {
		lastEpoch = r.log.LatestEpoch()
	}
	// Before KIP-320 (Kafka 2.1) a replica fetch carried no current leader epoch, so no
	// leader could fence it (epoch-less requests skip the check in onFetch).
	current := r.state.LeaderEpoch
	if b.cfg.Legacy.NoFetchFencing {
		current = wal.UndefinedEpoch
	}
	r.fetchCorr = b.key()
	env.Send(r.state.Leader, proto.FetchRequest{
		CorrelationID: r.fetchCorr, ReplicaID: env.Self(), TP: r.tp,
		FetchOffset: r.log.LogEndOffset(), LastFetchedEpoch: lastEpoch,
		CurrentLeaderEpoch: current, MaxBytes: b.cfg.Broker.ReplicaFetchMaxBytes,
		MaxWait: b.cfg.Broker.ReplicaFetchWaitMax,
	})
	r.fetchTimer = env.SetTimer(b.cfg.Broker.ReplicaFetchWaitMax+b.cfg.Broker.ReplicaSocketTimeout,
		sim.TimerTag{Kind: timerFetchTimeout, Arg: r.fetchCorr})
}

// stopFetching forgets the outstanding fetch; its response, if any, will be ignored.
func (b *Broker) stopFetching(env *sim.Env, r *replica) {
	if r.fetchCorr != 0 {
		env.CancelTimer(r.fetchTimer)
		r.fetchCorr = 0
	}
	r.waitFsync = false
}

func (b *Broker) fetchTimedOut(env *sim.Env, corr int64) {
	for _, tp := range b.order {
		if r := b.parts[tp]; r.fetchCorr == corr {
			r.fetchCorr = 0
			sim.Record(env, FetchTimedOut{TP: r.tp, Leader: env.NameOf(r.state.Leader)})
			b.fetchFromLeader(env, r)
			return
		}
	}
}

// onFetchResponse applies the leader's answer to this follower's fetch.
func (b *Broker) onFetchResponse(env *sim.Env, m proto.FetchResponse) {
	r := b.parts[m.TP]
	if r == nil || r.fetchCorr != m.CorrelationID || r.fetchCorr == 0 {
		return // stale: from an earlier term or a fetch we gave up on
	}
	env.CancelTimer(r.fetchTimer)
	r.fetchCorr = 0
	switch {
	case m.Error == proto.OffsetOutOfRange && r.log.LogEndOffset() < m.LogStartOffset:
		// The leader deleted what this follower would fetch next: start over at its start.
		if t, err := r.log.Reset(m.LogStartOffset); err == nil {
			b.sync(env, t.Sync)
			r.hw = m.LogStartOffset
			r.producers.rebuild(r.log)
			sim.Record(env, LogReset{TP: r.tp, Offset: m.LogStartOffset})
		}
		b.fetchFromLeader(env, r)
		return
	case m.Error == proto.OffsetOutOfRange && r.log.LogEndOffset() > m.HighWatermark:
		// The fetch offset is past the leader's log end: this log holds records the
		// leader never had (an unclean election, or, before KIP-101, an own HW beyond the
		// new leader's end). The epoch rule never gets here; it reports a diverging epoch
		// first. Kafka's follower truncates to the leader's log end and fetches on
		// (ReplicaFetcherThread.handleOffsetOutOfRange); the response names only the
		// leader's HW, which is at or below its end, so truncate to that and refetch the
		// rest.
		b.truncate(env, r, max(m.HighWatermark, r.log.LogStartOffset()),
			TruncateCause{Rule: PastLeaderEnd, Offset: r.log.LogEndOffset(), HW: m.HighWatermark})
		b.fetchFromLeader(env, r)
		return
	case m.Error != proto.None:
		env.SetTimer(b.cfg.Broker.ReplicaFetchBackoff, sim.TimerTag{Kind: timerFollowerFetch, Arg: int64(r.idx)})
		return
	case m.DivergingEpoch != nil:
		b.truncateToDivergence(env, r, *m.DivergingEpoch)
		b.fetchFromLeader(env, r)
		return
	}
	// Before truncate-on-fetch (KIP-595's diverging epoch, 2.7) the follower looked its
	// epoch up in a truncation phase after each leader change (AbstractFetcherThread) and
	// then fetched without the epoch: this answer, with no divergence, ends that phase
	// (epoch-lookup=kip101, and fetch-fencing=off, whose fetch had no epoch fields).
	r.epochChecked = b.cfg.Legacy.EpochLookupKIP101 || b.cfg.Legacy.NoFetchFencing
	appended := 0
	first := r.log.LogEndOffset()
	for _, batch := range m.Batches {
		if batch.BaseOffset < r.log.LogEndOffset() {
			if batch.NextOffset() > r.log.LogEndOffset() {
				// The leader's batch straddles our log end: our tail is not the leader's,
				// though the epochs said it was (KAFKA-6361's short case, before KIP-279).
				b.straddled(env, r, batch)
				return
			}
			continue
		}
		res, err := r.log.AppendReplica(batch)
		if errors.Is(err, wal.ErrUnexpectedOffset) {
			break // a gap: the next fetch from our log end sorts it out
		} else if err != nil {
			sim.Record(env, StorageFailed{TP: r.tp, Op: OpReplicaAppend, Err: err})
			break
		}
		b.sync(env, res.Sync)
		r.producers.record(batch)
		appended += len(batch.Records)
	}
	if appended > 0 {
		sim.Record(env, Replicated{TP: r.tp, First: first, Last: r.log.LogEndOffset() - 1,
			Leader: env.NameOf(r.state.Leader), LEO: r.log.LogEndOffset()})
	}
	if hw := min(m.HighWatermark, r.log.LogEndOffset()); hw > r.hw {
		sim.Record(env, HWAdvanced{TP: r.tp, From: r.hw, To: hw, Leader: env.NameOf(r.state.Leader)})
		r.hw = hw
		r.producers.replicatedTo(hw)
	}
	b.fetchFromLeader(env, r)
}

// straddled handles a leader batch that begins below this follower's log end and ends
// above it. Kafka's follower fails the append (UnexpectedAppendOffsetException from
// UnifiedLog.append as follower) and stops replicating the partition until a new
// LeaderAndIsr: the "stuck follower" of KAFKA-6361. mqsim's older follower cut its log
// back to the batch and fetched it whole, which heals the divergence but hides the bug:
// that repair is the switch straddle-repair=on.
func (b *Broker) straddled(env *sim.Env, r *replica, batch wal.Batch) {
	if b.cfg.Legacy.StraddleRepair {
		b.truncate(env, r, batch.BaseOffset, TruncateCause{Rule: BatchOverlap, Offset: batch.BaseOffset})
		b.fetchFromLeader(env, r)
		return
	}
	r.stuck = true
	sim.Record(env, AppendRejected{TP: r.tp, Base: batch.BaseOffset, Next: batch.NextOffset(), LEO: r.log.LogEndOffset(),
		Leader: env.NameOf(r.state.Leader)})
}

// truncateToDivergence cuts the log where the leader's stops agreeing: the end of the
// diverging epoch, or, if this log does not have that epoch, the end of its own largest
// earlier epoch (then the next fetch asks again: KIP-279).
func (b *Broker) truncateToDivergence(env *sim.Env, r *replica, div proto.EpochEnd) {
	target := div.EndOffset
	why := TruncateCause{Rule: LeaderEpochEnds, Epoch: div.Epoch, Offset: div.EndOffset}
	// KIP-101 alone (Kafka 0.11 to 1.1): the follower truncates to the leader's end
	// offset for its latest epoch, whatever epoch that end belongs to on the leader, and
	// does not ask again (KAFKA-6361; KIP-279 added the epoch to the answer).
	r.epochChecked = b.cfg.Legacy.EpochLookupKIP101
	if div.Epoch != wal.UndefinedEpoch && !b.cfg.Legacy.EpochLookupKIP101 {
		myEpoch, myEnd := r.log.EndOffsetFor(div.Epoch)
		switch {
		case myEnd == wal.UndefinedOffset:
			target = r.log.LogStartOffset()
		case myEpoch == div.Epoch:
			target = min(myEnd, div.EndOffset)
		default:
			target = myEnd
			why = TruncateCause{Rule: NoSuchEpoch, Epoch: div.Epoch, OwnEpoch: myEpoch, Offset: myEnd}
		}
	}
	target = min(target, r.log.LogEndOffset())
	if target < r.log.LogStartOffset() {
		if t, err := r.log.Reset(div.EndOffset); err == nil {
			b.sync(env, t.Sync)
			r.hw, r.producers = div.EndOffset, producerStates{}
			sim.Record(env, LogReset{TP: r.tp, Offset: div.EndOffset, Diverged: true})
		}
		return
	}
	b.truncate(env, r, target, why)
}
