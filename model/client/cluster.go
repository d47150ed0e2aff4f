package client

import (
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// Timer kinds shared by both clients. Each client numbers its own timers from
// firstOwnTimer on.
const (
	timerMetaTimeout = 1 + iota // a metadata request got no answer in time; Arg = correlation id
	timerMetaWait               // the backoff before the next metadata request is over
	firstOwnTimer
)

// RetryBackoffMax caps the client's growing backoff between metadata refreshes while a
// partition has no leader: Kafka's retry.backoff.max.ms (1s).
const RetryBackoffMax = time.Second

// cluster is what one client knows of the cluster: the brokers it may ask, the controller,
// and the newest metadata it was given. Both clients embed one.
//
// Metadata requests go to one broker at a time. The client moves on to the next broker
// when one does not answer within the request timeout, when one answers with metadata no
// newer than what the client already has (its cache may be stale: cut off from the
// controller, or just restarted), and when the client's own request to it timed out.
// Refreshes are spaced by a backoff that doubles from retry.backoff.ms to
// RetryBackoffMax, and starts again from the bottom once metadata served its purpose.
type cluster struct {
	brokerNames     []string
	controllerNames []string

	brokers     []sim.NodeID // resolved at Start, in the order given
	controllers []sim.NodeID
	// controller is the one to ask for producer ids: with a quorum, the active one as far
	// as the client knows (nextController).
	controller    sim.NodeID
	hasController bool

	md    proto.Metadata
	known bool // md holds a broker's answer

	next     int         // index into brokers of the broker to ask next
	askCorr  int64       // the metadata request in flight; 0 when none
	askTo    sim.NodeID  // where it went
	askTimer sim.TimerID // its timeout
	wait     sim.TimerID // backoff timer before the next request; 0 when none
	want     bool        // a refresh was asked for while a request was in flight
	lastAsk  sim.Time
	asked    bool     // a metadata request was ever sent
	answered sim.Time // when the last awaited metadata answer came (Kafka's lastSuccessfulRefreshMs)

	// unreachable are brokers a request to which just went unanswered. Kafka's client
	// closes such a connection and sends nothing more there for a while; here a
	// partition they lead has no leader as far as the client is concerned until the next
	// metadata answer. Without it a poll that times out on a dead leader sends its
	// next fetch to the same dead leader, and waits a whole request timeout again.
	unreachable []sim.NodeID

	backoff    time.Duration // spacing before the next request
	minBackoff time.Duration
	timeout    time.Duration

	corr int64 // last correlation id handed out (all requests of the client share it)
	// timerBase is added to the kind of every timer the client sets, so that two clients
	// can share one node (a pipeline's consumer and producer, pipeline.go); 0 otherwise.
	timerBase int
}

func newCluster(brokers []string, controllers []string, timeout, backoff time.Duration) cluster {
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	return cluster{
		brokerNames:     append([]string(nil), brokers...),
		controllerNames: append([]string(nil), controllers...),
		timeout:         timeout,
		minBackoff:      backoff,
		backoff:         backoff,
	}
}

// start resolves the node names. A name that does not resolve is reported once and left
// out; the client then talks to the others.
func (c *cluster) start(env *sim.Env) {
	// Each start numbers its requests apart from the earlier starts' (Kafka's new process
	// has new connections): an answer to a request of the node's previous life, still in
	// the network, must not pass for the answer to this life's request of the same number
	// (txn swarm seed 7821: a restarted pipeline took its previous life's InitProducerId
	// answer, an epoch already fenced, for its own). The first start keeps the numbers it
	// always had.
	c.corr += (env.Starts() - 1) << corrIncarnationShift
	c.brokers = c.brokers[:0]
	for _, name := range c.brokerNames {
		id, ok := env.Lookup(name)
		if !ok {
			sim.Record(env, NoBroker{Name: name})
			continue
		}
		c.brokers = append(c.brokers, id)
	}
	c.controllers = c.controllers[:0]
	for _, name := range c.controllerNames {
		id, ok := env.Lookup(name)
		if !ok {
			sim.Record(env, NoController{Name: name})
			continue
		}
		c.controllers = append(c.controllers, id)
	}
	if len(c.controllers) > 0 {
		c.controller, c.hasController = c.controllers[0], true
	}
	if len(c.brokers) > 0 {
		c.next = env.Rand().IntN(len(c.brokers))
	}
}

// corrIncarnationShift places a node's start count above the correlation ids one start
// hands out (and above pipelineProducerCorr, which splits a pipeline's two clients).
const corrIncarnationShift = 48

func (c *cluster) newCorr() int64 {
	c.corr++
	return c.corr
}

// refresh asks for new metadata now, or as soon as the backoff allows.
func (c *cluster) refresh(env *sim.Env) {
	if len(c.brokers) == 0 {
		return
	}
	if c.askCorr != 0 {
		c.want = true
		return
	}
	if c.wait != 0 {
		return
	}
	if c.asked {
		if due := c.lastAsk.Add(c.backoff); env.Now() < due {
			c.wait = env.SetTimer(due.Sub(env.Now()), sim.TimerTag{Kind: c.timerBase + timerMetaWait})
			return
		}
	}
	c.ask(env)
}

func (c *cluster) ask(env *sim.Env) {
	if c.asked {
		c.backoff = min(2*c.backoff, max(RetryBackoffMax, c.minBackoff))
	}
	c.asked = true
	c.want = false
	c.lastAsk = env.Now()
	c.askTo = c.brokers[c.next]
	c.askCorr = c.newCorr()
	env.Send(c.askTo, proto.MetadataRequest{CorrelationID: c.askCorr})
	c.askTimer = env.SetTimer(c.timeout, sim.TimerTag{Kind: c.timerBase + timerMetaTimeout, Arg: c.askCorr})
}

// refreshIfOlder asks for new metadata when the last answer is older than maxAge
// (metadata.max.age.ms; 0: never for age).
func (c *cluster) refreshIfOlder(env *sim.Env, maxAge time.Duration) {
	if maxAge > 0 && c.known && c.askCorr == 0 && env.Now().Sub(c.answered) >= maxAge {
		c.refresh(env)
	}
}

// settled says the metadata served its purpose: the next refresh need not wait long.
func (c *cluster) settled() { c.backoff = c.minBackoff }

// nextController moves producer id requests to the active controller a NOT_CONTROLLER
// answer named (hint), or else to the next controller in turn. It reports whether it
// followed a hint.
func (c *cluster) nextController(hint sim.NodeID) bool {
	if len(c.controllers) < 2 {
		return false
	}
	if hint != c.controller && slices.Contains(c.controllers, hint) {
		c.controller = hint
		return true
	}
	i := slices.Index(c.controllers, c.controller)
	c.controller = c.controllers[(i+1)%len(c.controllers)]
	return false
}

// rotate moves to the next broker for metadata.
func (c *cluster) rotate() {
	if len(c.brokers) > 0 {
		c.next = (c.next + 1) % len(c.brokers)
	}
}

// avoid moves metadata requests away from a broker that just failed a request, and marks
// it unreachable until the next metadata answer.
func (c *cluster) avoid(id sim.NodeID) {
	if len(c.brokers) > 1 && c.brokers[c.next] == id {
		c.rotate()
	}
	if !slices.Contains(c.unreachable, id) {
		c.unreachable = append(c.unreachable, id)
	}
}

// onTimer handles the cluster's own timers (tag.Kind without timerBase); it reports whether
// tag was one of them.
func (c *cluster) onTimer(env *sim.Env, tag sim.TimerTag) bool {
	switch tag.Kind {
	case timerMetaTimeout:
		if tag.Arg == c.askCorr {
			sim.Record(env, MetadataTimeout{From: env.NameOf(c.askTo)})
			c.askCorr = 0
			c.rotate()
			c.ask(env)
		}
		return true
	case timerMetaWait:
		c.wait = 0
		if c.askCorr == 0 {
			c.ask(env)
		}
		return true
	}
	return false
}

// onResponse takes a metadata answer. It reports whether the answer was the one awaited
// (a late answer to an abandoned request is dropped).
func (c *cluster) onResponse(env *sim.Env, from sim.NodeID, m proto.MetadataResponse) bool {
	if m.CorrelationID != c.askCorr || c.askCorr == 0 {
		return false
	}
	env.CancelTimer(c.askTimer)
	c.askCorr = 0
	c.answered = env.Now()
	// Whatever the answer, it is the cluster's word on who leads now: a broker it still
	// names is worth another try.
	c.unreachable = c.unreachable[:0]
	md := m.Metadata
	newer := !c.known || md.ControllerEpoch > c.md.ControllerEpoch ||
		(md.ControllerEpoch == c.md.ControllerEpoch && md.Version > c.md.Version)
	if newer {
		c.md = cloneMetadata(md)
		c.known = true
		sim.Record(env, MetadataLearned{Version: md.Version, From: env.NameOf(from)})
	} else {
		c.rotate()
	}
	if c.want {
		c.refresh(env)
	}
	return true
}

// cloneMetadata copies what the client keeps, so it holds no reference into a message.
func cloneMetadata(md proto.Metadata) proto.Metadata {
	out := md
	out.Partitions = make([]proto.PartitionState, len(md.Partitions))
	for i, p := range md.Partitions {
		out.Partitions[i] = p.Clone()
	}
	out.LiveBrokers = append([]sim.NodeID(nil), md.LiveBrokers...)
	out.Topics = append([]proto.TopicConfig(nil), md.Topics...)
	return out
}

// partitions is the topic's partition count, 0 while unknown.
func (c *cluster) partitions(topic string) int {
	if !c.known {
		return 0
	}
	for _, t := range c.md.Topics {
		if t.Name == topic {
			return t.Partitions
		}
	}
	n := 0
	for _, p := range c.md.Partitions {
		if p.TP.Topic == topic {
			n++
		}
	}
	return n
}

// available lists the topic's partitions that have a leader, in partition order.
func (c *cluster) available(topic string) []int32 {
	var out []int32
	for _, p := range c.md.Partitions {
		if p.TP.Topic == topic && p.Leader != proto.NoLeader {
			out = append(out, p.TP.Partition)
		}
	}
	return out
}

// leader is the partition's leader and its epoch, if the metadata names one that is not
// unreachable.
func (c *cluster) leader(tp proto.TP) (sim.NodeID, int32, bool) {
	if !c.known {
		return 0, 0, false
	}
	p, ok := c.md.Partition(tp)
	if !ok || p.Leader == proto.NoLeader || slices.Contains(c.unreachable, p.Leader) {
		return 0, 0, false
	}
	return p.Leader, p.LeaderEpoch, true
}

// leaderUnreachable reports whether the partition's leader is one a request just went
// unanswered to (see unreachable).
func (c *cluster) leaderUnreachable(tp proto.TP) bool {
	p, ok := c.md.Partition(tp)
	return ok && slices.Contains(c.unreachable, p.Leader)
}

// needsRefresh reports whether an error says the client's metadata is out of date.
func needsRefresh(e proto.Error) bool {
	switch e {
	case proto.NotLeaderOrFollower, proto.UnknownLeaderEpoch, proto.FencedLeaderEpoch,
		proto.LeaderNotAvailable, proto.UnknownTopicOrPartition, proto.NetworkException,
		proto.KafkaStorageError:
		return true
	}
	return false
}
