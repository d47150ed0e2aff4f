package broker

import (
	"fmt"

	"mqsim/sim"
)

// The coordinators a broker hosts (the group coordinators of the offsets topic, the
// transaction coordinators of the transaction state topic) live the same life: one per
// partition of their internal topic that the broker leads, loaded from the partition's log
// when it becomes the leader (or leads in a new epoch), dropped when it stops, and told how
// far the high watermark has come. hostedCoordinators is that life, once for both.

// hosted is one coordinator, loaded for r in leader epoch epoch.
type hosted[C any] struct {
	r     *replica
	epoch int32
	coord C
}

// hostedCoordinators are the coordinators of one internal topic that a broker runs.
type hostedCoordinators[C any] struct {
	scanned  int          // how many of byIdx were checked for the topic's partitions
	parts    []*replica   // the hosted replicas of the topic, in the order found
	lastSeen []int64      // per replica of parts: the HW last passed to its coordinator
	coords   []*hosted[C] // sorted by partition
}

// coordinatorLife is what tendHosted does with a coordinator of type C.
type coordinatorLife[C any] struct {
	topic     string
	load      func(b *Broker, env *sim.Env, r *replica) C
	unload    func(b *Broker, env *sim.Env, c *hosted[C], why string)
	committed func(b *Broker, env *sim.Env, c *hosted[C])
}

// tendHosted runs after every message and timer: it loads a coordinator for each partition
// of the topic this broker has come to lead, unloads those it no longer leads (or leads in
// another epoch), and passes each a high watermark that moved.
func tendHosted[C any](b *Broker, env *sim.Env, hs *hostedCoordinators[C], life *coordinatorLife[C]) {
	for ; hs.scanned < len(b.byIdx); hs.scanned++ {
		if r := b.byIdx[hs.scanned]; r.tp.Topic == life.topic {
			hs.parts = append(hs.parts, r)
			hs.lastSeen = append(hs.lastSeen, -1)
		}
	}
	for i, r := range hs.parts {
		hc := hs.of(r.tp.Partition)
		if hc != nil && (!r.isLeader || hc.epoch != r.state.LeaderEpoch) {
			why := "no longer the leader"
			if r.isLeader {
				why = fmt.Sprintf("new leader epoch %d", r.state.LeaderEpoch)
			}
			life.unload(b, env, hc, why)
			hs.drop(hc)
			hc = nil
		}
		if hc == nil && r.isLeader {
			hc = &hosted[C]{r: r, epoch: r.state.LeaderEpoch, coord: life.load(b, env, r)}
			hs.add(hc)
			hs.lastSeen[i] = -1
		}
		if hc != nil && r.hw != hs.lastSeen[i] {
			hs.lastSeen[i] = r.hw
			life.committed(b, env, hc)
		}
	}
}

// of is the coordinator of a partition, or nil.
func (hs *hostedCoordinators[C]) of(partition int32) *hosted[C] {
	for _, hc := range hs.coords {
		if hc.r.tp.Partition == partition {
			return hc
		}
	}
	return nil
}

func (hs *hostedCoordinators[C]) add(hc *hosted[C]) {
	i := 0
	for i < len(hs.coords) && hs.coords[i].r.tp.Partition < hc.r.tp.Partition {
		i++
	}
	hs.coords = append(hs.coords[:i], append([]*hosted[C]{hc}, hs.coords[i:]...)...)
}

func (hs *hostedCoordinators[C]) drop(hc *hosted[C]) {
	for i, x := range hs.coords {
		if x == hc {
			hs.coords = append(hs.coords[:i], hs.coords[i+1:]...)
			return
		}
	}
}
