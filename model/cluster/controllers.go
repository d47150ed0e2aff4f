package cluster

import (
	"fmt"

	"mqsim/model/proto"
	"mqsim/sim"
)

// Invariants of a controller quorum (Cfg.Controllers > 1), checked after every event with
// the others.
const (
	// TwoActiveControllers: two controllers act as the active one in the same controller
	// epoch (Raft term). Raft elects at most one leader per term, and a controller acts
	// only as that leader.
	TwoActiveControllers = "two-active-controllers"
	// MetadataDivergence: two controllers that applied the metadata log up to the same
	// offset hold different metadata. Every controller must apply the same committed
	// records in the same way.
	MetadataDivergence = "metadata-divergence"
)

// controllerWatch is what the invariants remember of the quorum.
type controllerWatch struct {
	// hashes holds, per metadata offset seen, the hash of the metadata there and the
	// controller that first had it.
	hashes map[int64]hashSeen
}

type hashSeen struct {
	hash uint64
	who  sim.NodeID
}

func (inv *Invariants) checkControllers(w *sim.World) {
	c := inv.c
	if len(c.Controllers) < 2 {
		return
	}
	if inv.ctls.hashes == nil {
		inv.ctls.hashes = map[int64]hashSeen{}
	}
	active := sim.NodeID(-1)
	var epoch int32
	for _, id := range c.Controllers {
		ctl := c.controllerAt(id)
		if ctl == nil {
			continue
		}
		st := ctl.Status()
		if st.Active {
			if active >= 0 && epoch == st.ControllerEpoch {
				inv.report(w, TwoActiveControllers, proto.TP{}, epoch, fmt.Sprintf("%s and %s are both active in controller epoch %d",
					w.Name(active), w.Name(id), epoch))
			}
			active, epoch = id, st.ControllerEpoch
		}
		at, h, ok := ctl.MetadataHash()
		if !ok || at == 0 {
			continue
		}
		seen, found := inv.ctls.hashes[at]
		switch {
		case !found:
			inv.ctls.hashes[at] = hashSeen{h, id}
		case seen.hash != h:
			inv.report(w, MetadataDivergence, proto.TP{}, int32(at), fmt.Sprintf("%s and %s both applied the metadata log to offset %d but hold different metadata",
				w.Name(seen.who), w.Name(id), at))
		}
	}
}

// fromControllers counts the messages delivered to node id from the controllers.
func (c *Cluster) fromControllers(w *sim.World, id sim.NodeID) uint64 {
	var n uint64
	for _, ctl := range c.Controllers {
		n += w.LinkStats(ctl, id).Delivered
	}
	return n
}
