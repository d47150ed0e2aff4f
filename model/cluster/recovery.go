package cluster

import (
	"fmt"
	"slices"

	"mqsim/model/broker"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Stuck is a partition that cannot serve again by itself, and why.
type Stuck struct {
	TP  proto.TP
	Why string
}

// Unrecoverable lists, as of now, the partitions that cannot serve again without an
// operator: no broker the controller may elect is running. Without unclean election
// those are the in-sync replicas (without ELR the controller keeps the last one in the
// ISR while the partition is offline), the eligible leader replicas and the last known
// leader (with ELR, KIP-966); with it, any replica. A crashed broker counts as gone for good
// (at the end of a run, it is); a paused one does not. While the controller itself is
// down (a quorum's majority), a partition without a live leader is stuck too: nobody
// can elect one.
//
// A liveness check passes the result on (checker.LivenessOptions.Unrecoverable): a
// partition whose every eligible copy is gone is unavailable, not slow, and that is a
// finding of its own, not a liveness violation.
func (c *Cluster) Unrecoverable() []Stuck {
	var out []Stuck
	ctl := c.ControllerView()
	if ctl == nil || !c.controllerMajorityUp() {
		for _, t := range c.topics {
			for p := 0; p < t.Partitions; p++ {
				tp := proto.TP{Topic: t.Name, Partition: int32(p)}
				if _, ok := c.liveLeader(tp); !ok {
					out = append(out, Stuck{TP: tp, Why: "no live leader, and the controller that could elect one is down"})
				}
			}
		}
		return out
	}
	for _, st := range ctl.Partitions() {
		eligible, what := st.ISR, "in-sync replicas"
		if len(st.ELR)+len(st.LastKnownELR) > 0 {
			// With ELR the ISR may be empty: an eligible leader replica, or failing that
			// the last known leader, is elected when it returns.
			eligible, what = slices.Clone(st.ISR), "in-sync and eligible replicas"
			for _, id := range append(slices.Clone(st.ELR), st.LastKnownELR...) {
				if !slices.Contains(eligible, id) {
					eligible = append(eligible, id)
				}
			}
		}
		if c.unclean(st.TP.Topic) {
			eligible, what = st.Replicas, "replicas"
		}
		if slices.ContainsFunc(eligible, func(id sim.NodeID) bool { return c.W.Status(id) != sim.Down }) {
			continue
		}
		out = append(out, Stuck{TP: st.TP, Why: fmt.Sprintf("every broker the controller may elect is down: %s %s", what, names(c.W, eligible))})
	}
	return out
}

// controllerMajorityUp reports whether a majority of the controllers is up (the single
// controller: whether it is).
func (c *Cluster) controllerMajorityUp() bool {
	up := 0
	for _, id := range c.Controllers {
		if c.W.Status(id) != sim.Down {
			up++
		}
	}
	return up > len(c.Controllers)/2
}

// liveLeader is a running broker that leads tp, if any.
func (c *Cluster) liveLeader(tp proto.TP) (int, bool) {
	for i, id := range c.Brokers {
		b, _ := c.W.Node(id).(*broker.Broker)
		if b == nil {
			continue
		}
		if r, ok := b.Replica(tp); ok && r.Leader {
			return i, true
		}
	}
	return -1, false
}

// unclean reports whether the named topic allows unclean leader election.
func (c *Cluster) unclean(topic string) bool {
	for _, t := range c.topics {
		if t.Name == topic {
			return t.UncleanLeaderElection
		}
	}
	return c.Cfg.Topic.UncleanLeaderElection
}
