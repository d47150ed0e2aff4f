package lab

import (
	"slices"

	"mqsim/sim"
)

// The controller names the leader of each epoch. It sends every replica a Heartbeat
// (the epoch and its leader) every HeartbeatEvery, and each replica answers Alive. When
// it has heard nothing from the leader for LeaderTimeout, it names the next replica (in
// name order) that it heard from within that time, in a new epoch. It does not look at
// the logs: any live replica may become the leader, so an acknowledged entry must be on
// every replica. It keeps nothing on disk; the lab never crashes it (a partition can cut
// it off: then no new leader is named until it heals).

// controllerTick is the controller's heartbeat timer.
const controllerTick = 1

// Controller is the lab's controller node.
type Controller struct {
	replicas []string // sorted
	epoch    int64
	leader   string
	heard    map[string]sim.Time // when each replica last answered
}

// NewController is the controller of replicas.
func NewController(replicas []string) *Controller {
	return &Controller{replicas: slices.Sorted(slices.Values(replicas)), heard: map[string]sim.Time{}}
}

func (c *Controller) Start(env *sim.Env) { c.beat(env) }

func (c *Controller) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if _, ok := msg.(Alive); ok {
		c.heard[env.NameOf(from)] = env.Now()
	}
}

func (c *Controller) Timer(env *sim.Env, tag sim.TimerTag) {
	if tag.Kind == controllerTick {
		c.elect(env)
		c.beat(env)
	}
}

// alive reports whether replica r answered within LeaderTimeout.
func (c *Controller) alive(env *sim.Env, r string) bool {
	t, ok := c.heard[r]
	return ok && env.Now().Sub(t) <= LeaderTimeout
}

// elect names a new leader when the current one is silent and another replica is not.
func (c *Controller) elect(env *sim.Env) {
	if c.leader != "" && c.alive(env, c.leader) {
		return
	}
	start := slices.Index(c.replicas, c.leader) + 1 // -1 + 1 = 0 when there is none
	for i := range c.replicas {
		r := c.replicas[(start+i)%len(c.replicas)]
		if r != c.leader && c.alive(env, r) {
			c.epoch, c.leader = c.epoch+1, r
			sim.Record(env, LeaderNamed{Epoch: c.epoch, Leader: r})
			return
		}
	}
}

// beat tells every replica the epoch and its leader (epoch 0, before the first leader:
// only who is alive), and arms the next beat.
func (c *Controller) beat(env *sim.Env) {
	for _, r := range c.replicas {
		if id, ok := env.Lookup(r); ok {
			env.Send(id, Heartbeat{Epoch: c.epoch, Leader: c.leader})
		}
	}
	env.SetTimer(HeartbeatEvery, sim.TimerTag{Kind: controllerTick})
}
