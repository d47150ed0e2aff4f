package broker

import (
	"slices"

	"mqsim/model/proto"
	"mqsim/sim"
)

// What operators do to a broker: a controlled shutdown, and the arrival or departure of
// a replica in a partition reassignment.

// shutdownState is a controlled shutdown. The operator's signal (ShutdownBroker) sets
// wanted: every heartbeat from then on asks the controller to shut down (KRaft's
// BrokerLifecycleManager sends WantShutDown until the answer says ShouldShutDown). The
// controller moves this broker's leaderships away and takes it out of every ISR, and
// once the other brokers know, grants it; the broker then flushes its logs (Kafka's
// LogManager.shutdown flushes every log and writes a clean-shutdown marker) and may stop.
type shutdownState struct {
	wanted, granted bool
}

func (b *Broker) onShutdownAsked(env *sim.Env) {
	if b.shutdown.wanted {
		return
	}
	b.shutdown.wanted = true
	sim.Record(env, ShutdownAsked{})
	env.CancelTimer(b.find.timer)
	b.heartbeat(env)
}

func (b *Broker) onShutdownGranted(env *sim.Env) {
	if !b.shutdown.wanted || b.shutdown.granted {
		return
	}
	b.shutdown.granted = true
	var files []string
	for _, tp := range b.order {
		files = append(files, b.parts[tp].log.Flush()...)
	}
	b.sync(env, files)
	sim.Record(env, ShutdownFlushing{Files: len(files)})
}

// ShutdownGranted reports whether the controller let this broker stop: its process may
// exit once its flush is on disk.
func (b *Broker) ShutdownGranted() bool { return b.shutdown.granted }

// removeReplica stops a replica a reassignment took away from this broker: it stops
// fetching or leading, and keeps its files (Kafka deletes them; nothing reads them here
// unless the replica is assigned back, when the follower truncates as any follower does).
func (b *Broker) removeReplica(env *sim.Env, r *replica, st proto.PartitionState) {
	if r.isLeader {
		b.stepDown(env, r, proto.NotLeaderOrFollower)
	}
	b.stopFetching(env, r)
	r.state, r.removed = st.Clone(), true
	b.rolesChanged(r)
	sim.Record(env, ReplicaRemoved{TP: r.tp})
}

// trackReplicas keeps a leader's followers the partition's replicas when the replica set
// changes within its leadership (a reassignment adds replicas, then removes some). A new
// follower starts as a new leader's followers do: not yet fetched, a fresh lag allowance.
func (b *Broker) trackReplicas(env *sim.Env, r *replica) {
	r.followers = slices.DeleteFunc(r.followers, func(f *follower) bool { return !slices.Contains(r.state.Replicas, f.id) })
	for _, id := range r.state.Replicas {
		if id != env.Self() && r.follower(id) == nil {
			r.followers = append(r.followers, &follower{id: id, leo: -1, lastCaughtUp: env.Now(), lastFetchTime: env.Now()})
		}
	}
}
