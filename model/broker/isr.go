package broker

import (
	"fmt"
	"slices"

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
// earlier leader committed).
func (b *Broker) maybeExpandISR(env *sim.Env, r *replica, f *follower) {
	if r.alterPending || slices.Contains(r.state.ISR, f.id) || f.leo < r.hw || f.leo < r.epochStart {
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
		if r.isLeader && r.alterPending && env.Now().Sub(r.alterSent) >= b.cfg.Broker.ReplicaLagTimeMax/2 {
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
	r.alterPending, r.pendingISR = true, isr
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
	if r == nil || !r.alterPending {
		return
	}
	r.alterPending, r.pendingISR = false, nil
	if m.Error != proto.None {
		sim.Record(env, ISRRejected{TP: r.tp, Err: m.Error})
		return
	}
	if m.State.PartitionEpoch > r.state.PartitionEpoch {
		r.state = m.State.Clone()
		b.rolesChanged(r)
	}
	b.maybeAdvanceHW(env, r)
}
