package cluster

import (
	"fmt"

	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/sim"
)

// ISRBehindHW: a member of the controller's ISR lacks records below the HW its leader
// reached. Kafka's ISR contract is that every member of the committed ISR holds every
// committed record: that is what makes any of them a safe (clean) leader. A broken
// contract loses acknowledged writes as soon as the controller elects that member; the
// invariant shows the break at once, before any election. Checked where leader
// completeness is (every batch fsynced, no unclean election, epoch truncation), when a
// leader's HW rises, and only against the controller that decides (the active one of a
// quorum), in the leader's own epoch.
const ISRBehindHW = "isr-behind-hw"

// checkISRContract compares the log end of every live member of the controller's ISR of
// p with the HW its leader l just reached.
func (inv *Invariants) checkISRContract(w *sim.World, p *watch, l *leaderView) {
	ctl := inv.decidingController()
	if ctl == nil {
		return
	}
	st, ok := ctl.Partition(p.tp)
	if !ok || st.Leader != l.brokerID || st.LeaderEpoch != l.epoch {
		return // the leader is deposed, or the controller has not told it yet
	}
	for _, id := range st.ISR {
		if id == l.brokerID {
			continue
		}
		if leo, ok := inv.logEnd(w, id, p.tp); ok && leo < l.hw {
			inv.report(w, ISRBehindHW, p.tp, l.epoch, fmt.Sprintf("%s leads %s in epoch %d with HW %d, but %s, in the controller's ISR %s, has its durable log ending at %d: a clean election of %s would lose committed records",
				w.Name(l.brokerID), p.tp, l.epoch, l.hw, w.Name(id), names(w, st.ISR), leo, w.Name(id)))
		}
	}
}

// memberLogEnd is where the durable part of a live broker's log of tp ends: the contract
// is checked where every batch is fsynced before it counts, and a follower reports (and
// so a leader counts) only what it has on disk. False if the broker is down (it keeps
// what it synced, and is judged when it is back) or does not host tp.
func memberLogEnd(w *sim.World, id sim.NodeID, tp proto.TP) (int64, bool) {
	b, _ := w.Node(id).(*broker.Broker)
	if b == nil {
		return 0, false
	}
	r, ok := b.Replica(tp)
	return r.SyncedOffset, ok
}

// decidingController is the controller whose committed state the brokers obey: the
// single controller, or the active one of a quorum; nil if there is none now.
func (inv *Invariants) decidingController() *controller.Controller {
	c := inv.c
	if len(c.Controllers) == 1 {
		return c.controllerAt(c.Controller)
	}
	if id, ok := c.ActiveController(); ok {
		return c.controllerAt(id)
	}
	return nil
}
