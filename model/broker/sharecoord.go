package broker

import (
	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The share coordinator, hosted (hosting.go, as the group and transaction coordinators
// are): a broker keeps the share-partition states of every partition of the share-group
// state topic it leads (Kafka's ShareCoordinatorService and ShareCoordinatorShard). On
// becoming leader it replays the partition's records into a share.Store; on losing the
// leadership it drops it, answering what waits NOT_COORDINATOR, and the persisters find
// the new leader in their metadata. A write appends one record with the key's whole
// state; a read by a new share-partition leader appends one with its leader epoch (so the
// old leader is fenced); either is answered once the high watermark passes its record and
// the log end the coordinator loaded (as model/txn waits for its load).

// shareCoord is one hosted share coordinator.
type shareCoord struct {
	store   share.Store
	loadEnd int64
	waiting []shareAnswer // in arrival order
}

// shareAnswer is an answer sent once the high watermark reaches at.
type shareAnswer struct {
	at  int64
	to  sim.NodeID
	msg sim.Message
	ev  ShareStatePersisted
}

// shareCoordLife loads, unloads and advances the share coordinators (hosting.go).
var shareCoordLife = coordinatorLife[*shareCoord]{
	topic: proto.ShareGroupStateTopic,
	load: func(b *Broker, env *sim.Env, r *replica) *shareCoord {
		c := &shareCoord{loadEnd: r.log.LogEndOffset()}
		var records []wal.Record
		for off := r.log.LogStartOffset(); off < r.log.LogEndOffset(); {
			batches, err := r.log.Read(off, 1<<20)
			if err != nil || len(batches) == 0 {
				break
			}
			for _, bt := range batches {
				for i, rec := range bt.Records {
					if bt.BaseOffset+int64(i) >= off {
						records = append(records, rec)
					}
				}
				off = bt.NextOffset()
			}
		}
		c.store.Replay(records)
		sim.Record(env, ShareCoordinatorLoaded{Partition: r.tp.Partition, Epoch: r.state.LeaderEpoch, Records: len(records), Keys: len(c.store.Entries())})
		return c
	},
	unload: func(b *Broker, env *sim.Env, hc *hosted[*shareCoord], why string) {
		for _, a := range hc.coord.waiting {
			env.Send(a.to, withShareError(a.msg, proto.NotCoordinator))
		}
		hc.coord.waiting = nil
	},
	committed: func(b *Broker, env *sim.Env, hc *hosted[*shareCoord]) { hc.coord.answer(env, hc.r.hw) },
}

// tendShareCoordinators runs after every message and timer (hosting.go). A cluster
// without the share-group state topic has nothing here.
func (b *Broker) tendShareCoordinators(env *sim.Env) {
	tendHosted(b, env, &b.shareCoords, &shareCoordLife)
}

// answer sends every answer whose record the high watermark passed.
func (c *shareCoord) answer(env *sim.Env, hw int64) {
	n := 0
	for _, a := range c.waiting {
		if a.at > hw {
			c.waiting[n] = a
			n++
			continue
		}
		sim.Record(env, a.ev)
		env.Send(a.to, a.msg)
	}
	clear(c.waiting[n:])
	c.waiting = c.waiting[:n]
}

// onShareStateRequest serves a persister's ReadShareGroupState or WriteShareGroupState
// as the coordinator of the key's partition, or answers NOT_COORDINATOR.
func (b *Broker) onShareStateRequest(env *sim.Env, from sim.NodeID, msg sim.Message) {
	var key proto.SharePartitionKey
	var epoch int32
	switch m := msg.(type) {
	case proto.ReadShareGroupState:
		key, epoch = m.Key, m.LeaderEpoch
	case proto.WriteShareGroupState:
		key, epoch = m.Key, m.LeaderEpoch
	}
	var hc *hosted[*shareCoord]
	for _, t := range b.meta.Topics {
		if t.Name == proto.ShareGroupStateTopic {
			hc = b.shareCoords.of(share.PartitionFor(key, t.Partitions))
		}
	}
	if hc == nil || !hc.r.isLeader {
		env.Send(from, shareRefusal(msg, proto.NotCoordinator))
		return
	}
	c := hc.coord
	ev := ShareStatePersisted{Partition: hc.r.tp.Partition, Key: key, LeaderEpoch: epoch}
	var answer sim.Message
	var entry share.Entry
	appendIt := false
	switch m := msg.(type) {
	case proto.ReadShareGroupState:
		ev.Read = true
		var resp proto.ReadShareGroupStateResponse
		resp, entry, appendIt = c.store.Read(m)
		if resp.Error != proto.None {
			ev.Err = resp.Error
			sim.Record(env, ev)
			env.Send(from, resp)
			return
		}
		answer = resp
	case proto.WriteShareGroupState:
		var err proto.Error
		var dup bool
		if entry, dup, err = c.store.Write(m); err != proto.None {
			ev.Err = err
			sim.Record(env, ev)
			env.Send(from, shareRefusal(msg, err))
			return
		}
		answer, appendIt = proto.WriteShareGroupStateResponse{CorrelationID: m.CorrelationID, Key: m.Key}, !dup
	}
	if appendIt {
		if _, err := b.appendLocal(env, hc.r, internalBatch([]wal.Record{share.Encode(entry)})); err != proto.None {
			ev.Err = err
			sim.Record(env, ev)
			env.Send(from, shareRefusal(msg, err))
			return
		}
		c.store.Put(entry)
	}
	// The answer waits for everything appended so far, its own record included.
	c.waiting = append(c.waiting, shareAnswer{at: max(c.loadEnd, hc.r.log.LogEndOffset()), to: from, msg: answer, ev: ev})
	c.answer(env, hc.r.hw)
}

// shareRefusal is the error answer to a share-state request.
func shareRefusal(msg sim.Message, err proto.Error) sim.Message {
	switch m := msg.(type) {
	case proto.ReadShareGroupState:
		return proto.ReadShareGroupStateResponse{CorrelationID: m.CorrelationID, Key: m.Key, Error: err}
	case proto.WriteShareGroupState:
		return proto.WriteShareGroupStateResponse{CorrelationID: m.CorrelationID, Key: m.Key, Error: err}
	}
	return nil
}

// withShareError turns a waiting answer into an error.
func withShareError(msg sim.Message, err proto.Error) sim.Message {
	switch m := msg.(type) {
	case proto.ReadShareGroupStateResponse:
		return proto.ReadShareGroupStateResponse{CorrelationID: m.CorrelationID, Key: m.Key, Error: err}
	case proto.WriteShareGroupStateResponse:
		m.Error = err
		return m
	}
	return msg
}

// ShareStates lists the share-partition states of the share coordinator this broker runs
// for a partition of the share-group state topic, for views; nil if it runs none.
func (b *Broker) ShareStates(partition int32) []share.Entry {
	if hc := b.shareCoords.of(partition); hc != nil {
		return hc.coord.store.Entries()
	}
	return nil
}
