package client

import (
	"time"

	"mqsim/sim"
)

// Client-side throttling (KIP-219): a response with a throttle time means the broker has
// muted this client's channel for that long, so the client sends that broker nothing
// until it is over (Kafka's NetworkClient.maybeThrottle; canSendRequest waits for the
// throttle delay). Requests already in flight wait at the broker.

// throttles holds, per broker, when the client may send to it again.
type throttles map[sim.NodeID]sim.Time

// note takes a response's throttle time and reports whether it throttles the broker.
func (t *throttles) note(env *sim.Env, from sim.NodeID, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	if *t == nil {
		*t = throttles{}
	}
	until := env.Now().Add(d)
	if until <= (*t)[from] {
		return false
	}
	(*t)[from] = until
	sim.Record(env, ThrottledBy{Broker: env.NameOf(from), For: d})
	return true
}

// active reports whether the client must not send to the broker now.
func (t throttles) active(env *sim.Env, to sim.NodeID) bool {
	until, ok := t[to]
	return ok && env.Now() < until
}

// Producer timer: a broker's throttle time is over; the accumulator drains again.
const ptThrottle = firstOwnTimer + 61

// noteThrottle backs off from a broker whose answer carries a throttle time.
func (p *Producer) noteThrottle(env *sim.Env, from sim.NodeID, d time.Duration) {
	if p.throttled.note(env, from, d) {
		env.SetTimer(d, sim.TimerTag{Kind: p.cl.timerBase + ptThrottle})
	}
}
