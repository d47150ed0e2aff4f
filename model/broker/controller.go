package broker

import (
	"mqsim/model/proto"
	"mqsim/sim"
)

// Finding the active controller of a quorum (KRaft): the broker heartbeats to one
// controller at a time. The active one answers (once what the heartbeat changed is
// committed); any other answers NOT_CONTROLLER, naming the active controller when it
// knows it. The broker follows a hint at once (at most once per heartbeat interval, so
// two controllers with stale hints cannot bounce it around), and moves to the next
// controller in turn when the one it asked did not answer within a heartbeat interval,
// or knew no active controller. AlterPartition goes to the same controller.
//
// With a single controller there is nothing to find: the broker heartbeats to it and
// takes its pushes as the answer, as before.

// controllerSearch is the broker's side of finding the active controller.
type controllerSearch struct {
	idx      int         // index in Broker.ctls of the controller asked
	awaiting bool        // a heartbeat to it is unanswered
	followed bool        // a hint was followed since the last heartbeat timer
	timer    sim.TimerID // the next heartbeat
}

// resolveControllers looks up the controller names; it reports false when one is
// missing.
func (b *Broker) resolveControllers(env *sim.Env) bool {
	for _, name := range b.controllers {
		id, ok := env.Lookup(name)
		if !ok {
			sim.Record(env, ControllerMissing{Name: name})
			return false
		}
		b.ctls = append(b.ctls, id)
	}
	if len(b.ctls) == 0 {
		sim.Record(env, ControllerMissing{})
		return false
	}
	b.ctl = b.ctls[0]
	return true
}

func (b *Broker) quorum() bool { return len(b.ctls) > 1 }

// beforeHeartbeat runs before each heartbeat: a controller that did not answer the last
// one is given up for the next.
func (b *Broker) beforeHeartbeat(env *sim.Env) {
	if !b.quorum() {
		return
	}
	f := &b.find
	f.followed = false
	if f.awaiting {
		old := b.ctl
		b.switchTo((f.idx + 1) % len(b.ctls))
		sim.Record(env, ControllerSilent{Silent: env.NameOf(old), Within: b.cfg.Broker.HeartbeatInterval, Next: env.NameOf(b.ctl)})
	}
	f.awaiting = true
}

func (b *Broker) switchTo(i int) {
	b.find.idx = i
	b.ctl = b.ctls[i]
}

func (b *Broker) onHeartbeatResponse(env *sim.Env, from sim.NodeID, m proto.BrokerHeartbeatResponse) {
	f := &b.find
	if !b.quorum() || from != b.ctl {
		return // a late answer from a controller given up on
	}
	f.awaiting = false
	if m.Error == proto.None {
		return
	}
	hint := -1
	for i, id := range b.ctls {
		if id == m.ActiveController {
			hint = i
		}
	}
	switch {
	case hint >= 0 && b.ctls[hint] != from && !f.followed:
		f.followed = true
		b.switchTo(hint)
		sim.Record(env, ControllerRedirected{Asked: env.NameOf(from), Active: env.NameOf(b.ctl)})
		env.CancelTimer(f.timer)
		f.awaiting = true
		b.sendHeartbeat(env)
	case hint >= 0 && b.ctls[hint] == from:
		// It leads the quorum but has not caught up yet: ask it again next time.
	default:
		b.switchTo((f.idx + 1) % len(b.ctls))
		sim.Record(env, ControllerUnknown{Asked: env.NameOf(from), Next: env.NameOf(b.ctl)})
	}
}
