package broker

import (
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/sim"
)

// The persister (Kafka's DefaultStatePersister, PersisterStateManager): the
// share-partition leader's client of the share coordinators. It sends a window's
// ReadShareGroupState or WriteShareGroupState to the leader of the key's partition of
// the share-group state topic, as the broker's metadata has it; when there is none yet,
// or the coordinator answers that it is not (NOT_COORDINATOR, load in progress, below
// min ISR), or does not answer, it tries again after a backoff, until
// share.coordinator.write.timeout.ms has passed since the first try: then the request
// fails with REQUEST_TIMED_OUT. Fencing errors end it at once.

// timerSharePersist is a persister request's retry timer; Arg is its correlation id.
const timerSharePersist = 141

// persistRetry is how long the persister waits for an answer, or after a retriable error,
// before it sends again (Kafka's PersisterStateManager backs off from 100ms; mqsim keeps
// one step so a scenario can count the tries).
const persistRetry = 500 * time.Millisecond

// persistReq is one read or write in flight.
type persistReq struct {
	corr     int64
	part     *sharePart
	write    *share.Write // nil: a read
	deadline sim.Time
	timer    sim.TimerID
	tries    int
}

// persist starts a read (w nil) or a write of a window's state.
func (b *Broker) persist(env *sim.Env, sp *sharePart, w *share.Write) {
	req := &persistReq{corr: b.key(), part: sp, write: w, deadline: env.Now().Add(b.cfg.Share.WriteTimeout)}
	if w != nil {
		sp.write = req
	}
	b.shares.persists = append(b.shares.persists, req)
	b.sendPersist(env, req)
}

// sendPersist sends the request to the share coordinator, if the metadata names one, and
// sets the timer that sends it again.
func (b *Broker) sendPersist(env *sim.Env, req *persistReq) {
	req.tries++
	if to, ok := b.shareCoordinatorFor(req.part.key); ok {
		if req.write != nil {
			env.Send(to, proto.WriteShareGroupState{CorrelationID: req.corr, Key: req.part.key, LeaderEpoch: req.part.epoch, Seq: req.write.ID, State: req.write.State})
		} else {
			env.Send(to, proto.ReadShareGroupState{CorrelationID: req.corr, Key: req.part.key, LeaderEpoch: req.part.epoch})
		}
	}
	req.timer = env.SetTimer(min(persistRetry, max(0, req.deadline.Sub(env.Now()))), sim.TimerTag{Kind: timerSharePersist, Arg: req.corr})
}

// shareCoordinatorFor is the leader of key's share-group state partition in the metadata.
func (b *Broker) shareCoordinatorFor(key proto.SharePartitionKey) (sim.NodeID, bool) {
	for _, t := range b.meta.Topics {
		if t.Name != proto.ShareGroupStateTopic {
			continue
		}
		p, ok := b.meta.Partition(proto.TP{Topic: proto.ShareGroupStateTopic, Partition: share.PartitionFor(key, t.Partitions)})
		return p.Leader, ok && p.Leader != proto.NoLeader
	}
	return proto.NoLeader, false
}

// onPersistTimer sends a request again, or fails it once its time is up.
func (b *Broker) onPersistTimer(env *sim.Env, corr int64) {
	req := b.shares.persist(corr)
	if req == nil {
		return
	}
	if env.Now() >= req.deadline {
		b.finishPersist(env, req, proto.RequestTimedOut, proto.ReadShareGroupStateResponse{})
		return
	}
	b.sendPersist(env, req)
}

// onShareStateResponse is a share coordinator's answer to the persister.
func (b *Broker) onShareStateResponse(env *sim.Env, msg sim.Message) {
	var corr int64
	var err proto.Error
	var read proto.ReadShareGroupStateResponse
	isRead := false
	switch m := msg.(type) {
	case proto.WriteShareGroupStateResponse:
		corr, err = m.CorrelationID, m.Error
	case proto.ReadShareGroupStateResponse:
		corr, err, read, isRead = m.CorrelationID, m.Error, m, true
	}
	req := b.shares.persist(corr)
	if req == nil || (req.write == nil) != isRead {
		return // a late answer to a request already finished
	}
	switch err {
	case proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress, proto.NotLeaderOrFollower,
		proto.NotEnoughReplicas, proto.RequestTimedOut, proto.KafkaStorageError:
		env.CancelTimer(req.timer)
		req.timer = env.SetTimer(min(persistRetry, max(0, req.deadline.Sub(env.Now()))), sim.TimerTag{Kind: timerSharePersist, Arg: req.corr})
		return
	}
	env.CancelTimer(req.timer)
	b.finishPersist(env, req, err, read)
}

func (b *Broker) finishPersist(env *sim.Env, req *persistReq, err proto.Error, read proto.ReadShareGroupStateResponse) {
	b.shares.persists = slices.DeleteFunc(b.shares.persists, func(x *persistReq) bool { return x == req })
	if req.write != nil {
		b.onShareStateWritten(env, req.part, req.write, err)
	} else {
		b.onShareStateRead(env, req.part, read, err)
	}
}

func (s *shareLeader) persist(corr int64) *persistReq {
	for _, req := range s.persists {
		if req.corr == corr {
			return req
		}
	}
	return nil
}

// dropPersists forgets the requests of a dropped window: their answers no longer matter.
func (b *Broker) dropPersists(env *sim.Env, sp *sharePart) {
	b.shares.persists = slices.DeleteFunc(b.shares.persists, func(req *persistReq) bool {
		if req.part == sp {
			env.CancelTimer(req.timer)
			return true
		}
		return false
	})
	sp.write = nil
}
