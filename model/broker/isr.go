package broker

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// noteFollowerFetch updates the leader's view of a follower from its fetch offset
// (Kafka's Replica.updateFetchState) and lets the ISR and HW follow.
func (b *Broker) noteFollowerFetch(env *sim.Env, r *replica, id sim.NodeID, offset int64) {
	f := r.follower(id)
	now, leo := env.Now(), r.log.LogEndOffset()
	switch {
	case offset >= leo:
		f.lastCaughtUp = max(f.lastCaughtUp, now)
	case offset >= f.lastFetchLeaderLE:
		f.lastCaughtUp = max(f.lastCaughtUp, f.lastFetchTime)
	}
	f.lastFetchLeaderLE, f.lastFetchTime = max(leo, f.lastFetchLeaderLE), now
	f.leo = offset
	b.maybeExpandISR(env, r, f)
	b.maybeAdvanceHW(env, r)
}

// caughtUp is Kafka's Replica.isCaughtUp.
func (b *Broker) caughtUp(r *replica, f *follower, now sim.Time) bool {
	return f.leo >= r.log.LogEndOffset() || now.Sub(f.lastCaughtUp) <= b.cfg.Broker.ReplicaLagTimeMax
}

// maybeExpandISR proposes adding a follower that has caught up to the HW and to the
// start of this leader's epoch (KAFKA-7128: below the epoch start it may lack records an
// earlier leader committed; before Kafka 2.1, isr-expand=hw, the HW alone counted).
func (b *Broker) maybeExpandISR(env *sim.Env, r *replica, f *follower) {
	belowEpochStart := f.leo < r.epochStart && !b.cfg.Legacy.ISRExpandAtHW
	if r.alterPending || slices.Contains(r.state.ISR, f.id) || f.leo < r.hw || belowEpochStart {
		return
	}
	isr := append(slices.Clone(r.state.ISR), f.id)
	b.alterISR(env, r, isr, fmt.Sprintf("%s caught up to %d", env.NameOf(f.id), f.leo))
}

// checkISR is the periodic shrink: followers that have not caught up for
// replica.lag.time.max.ms leave the ISR.
func (b *Broker) checkISR(env *sim.Env) {
	if b.cfg.Bugs.NeverShrinkISR {
		return
	}
	for _, tp := range b.order {
		r := b.parts[tp]
		if r.isLeader && r.alterPending && !r.alterAnswered && env.Now().Sub(r.alterSent) >= b.cfg.Broker.ReplicaLagTimeMax/2 {
			// No answer: the request or its response was lost, or the controller was
			// down. Until one comes the ISR cannot change, so ask again.
			r.alterSent = env.Now()
			if env.Tracing() {
				sim.Record(env, ISRRetried{TP: r.tp, ISR: b.names(env, r.pendingISR)})
			}
			env.Send(b.ctl, r.alterReq)
		}
		if !r.isLeader || r.alterPending {
			continue
		}
		var keep, out []sim.NodeID
		for _, id := range r.state.ISR {
			if f := r.follower(id); f != nil && !b.caughtUp(r, f, env.Now()) {
				out = append(out, id)
				continue
			}
			keep = append(keep, id)
		}
		if len(out) > 0 {
			b.alterISR(env, r, keep, fmt.Sprintf("%s lagging for more than %s", bracket(b.names(env, out)), b.cfg.Broker.ReplicaLagTimeMax))
		}
	}
}

func (b *Broker) alterISR(env *sim.Env, r *replica, isr []sim.NodeID, why string) {
	r.alterPending, r.pendingISR, r.alterAnswered = true, isr, false
	r.alterReq = proto.AlterPartition{Broker: env.Self(), TP: r.tp, LeaderEpoch: r.state.LeaderEpoch,
		PartitionEpoch: r.state.PartitionEpoch, NewISR: isr, Reason: why}
	r.alterSent = env.Now()
	if env.Tracing() {
		sim.Record(env, ISRProposed{TP: r.tp, From: b.names(env, r.state.ISR), To: b.names(env, isr), Why: why})
	}
	env.Send(b.ctl, r.alterReq)
}

func (b *Broker) onAlterPartitionResponse(env *sim.Env, m proto.AlterPartitionResponse) {
	r := b.parts[m.TP]
	if r == nil || !r.alterPending || r.alterAnswered || !sameRequest(m.For, r.alterReq) {
		return // nothing pending, or the answer to an earlier request (Kafka ignores it too)
	}
	if m.Error != proto.None {
		sim.Record(env, ISRRejected{TP: r.tp, Err: m.Error})
		b.onAlterPartitionError(env, r, m.Error)
		return
	}
	r.clearPending()
	if m.State.PartitionEpoch > r.state.PartitionEpoch {
		r.state = m.State.Clone()
		b.rolesChanged(r)
	}
	b.maybeAdvanceHW(env, r)
}

// sameRequest reports whether two AlterPartition requests propose the same change from
// the same state (a resend is the same request).
func sameRequest(a, b proto.AlterPartition) bool {
	return a.LeaderEpoch == b.LeaderEpoch && a.PartitionEpoch == b.PartitionEpoch && slices.Equal(a.NewISR, b.NewISR)
}

// alterRetryBackoff is how long a leader waits before resending an AlterPartition the
// controller answered with an unexpected error (Kafka's AlterPartitionManager: 50ms).
const alterRetryBackoff = 50 * time.Millisecond

// timerAlterRetry resends a partition's pending AlterPartition; Arg is its index.
const timerAlterRetry = 120

// onAlterPartitionError is Kafka's Partition.handleAlterPartitionError (core/src/main/
// scala/kafka/cluster/Partition.scala, 3.3 and later). A leader whose request failed does
// not know, in general, whether the controller applied it: the answer may come from a
// controller that applied it and lost its lead, or may answer a resend of a request that
// was applied while its first answer was lost. So it goes back to its last committed ISR
// only when the controller says explicitly that nothing was applied and its partition
// epoch is current (OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA). On INVALID_UPDATE_VERSION,
// FENCED_LEADER_EPOCH, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST and NEW_LEADER_ELECTED
// it stays pending, with the maximal ISR counting for the high watermark, and proposes
// nothing more until new metadata arrives; it does not resend. Any other error (here
// NOT_CONTROLLER) is unexpected: it resends after a backoff.
//
// Going back on every error (the bug alter-partition-forgets-pending) loses acknowledged
// writes: if the controller committed an expansion whose answer was lost, the leader
// counts the high watermark on the smaller ISR while the controller may elect the
// replica it added, which lacks what the leader then acknowledges.
func (b *Broker) onAlterPartitionError(env *sim.Env, r *replica, err proto.Error) {
	if b.cfg.Bugs.AlterPartitionForgetsPending {
		r.clearPending()
		return
	}
	switch err {
	case proto.OperationNotAttempted, proto.IneligibleReplica:
		r.clearPending()
	case proto.UnknownTopicOrPartition, proto.FencedLeaderEpoch, proto.InvalidUpdateVersion,
		proto.InvalidRequest, proto.NewLeaderElected:
		r.alterAnswered = true // await the metadata
	default:
		r.alterAnswered, r.alterErr = true, err // until the backoff ends
		env.SetTimer(alterRetryBackoff, sim.TimerTag{Kind: timerAlterRetry, Arg: int64(r.idx)})
	}
}

// resendAlter sends a partition's pending AlterPartition again after an unexpected error,
// if it is still pending (new metadata may have settled it meanwhile).
func (b *Broker) resendAlter(env *sim.Env, idx int64) {
	if idx < 0 || int(idx) >= len(b.byIdx) {
		return
	}
	r := b.byIdx[idx]
	if !r.isLeader || !r.alterPending || !r.alterAnswered {
		return
	}
	r.alterAnswered, r.alterSent = false, env.Now()
	if env.Tracing() {
		sim.Record(env, ISRRetried{TP: r.tp, ISR: b.names(env, r.pendingISR), After: r.alterErr})
	}
	env.Send(b.ctl, r.alterReq)
}
