package metrics

import (
	"slices"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/sim"
)

// part is what the figures need of one partition.
type part struct {
	replicas int
	isr      int
	minISR   int
	leader   string // the broker leading it, as its own "leader" event said; "" when none does
	offline  bool   // the controller found no leader for it
	hw       int64  // the leader's high watermark
}

// consumerPos is where a consumer stands in one partition.
type consumerPos struct {
	consumer string
	tp       proto.TP
}

// fold reads the trace event by event and records the figures' changes in the timeline.
type fold struct {
	t      *Timeline
	topics map[string]proto.TopicConfig
	parts  map[proto.TP]*part
	tps    []proto.TP // the partitions, in the order first seen
	// brokers, controllers and consumers, in the order first seen.
	brokers, controllers, consumers []string
	active                          map[string]bool
	pos                             map[consumerPos]int64
}

func newFold(t *Timeline) *fold {
	return &fold{t: t, topics: map[string]proto.TopicConfig{}, parts: map[proto.TP]*part{}, active: map[string]bool{}, pos: map[consumerPos]int64{}}
}

func addName(names []string, n string) []string {
	if slices.Contains(names, n) {
		return names
	}
	return append(names, n)
}

func (f *fold) part(tp proto.TP) *part {
	if p, ok := f.parts[tp]; ok {
		return p
	}
	cfg, ok := f.topics[tp.Topic]
	p := &part{minISR: 1}
	if ok {
		p.replicas, p.isr, p.minISR = cfg.ReplicationFactor, cfg.ReplicationFactor, cfg.MinInsyncReplicas
	}
	f.parts[tp] = p
	f.tps = append(f.tps, tp)
	return p
}

func (f *fold) observe(i int, e sim.Event) {
	switch d := e.Data.(type) {
	case sim.NodeCrashed, sim.NodeKilled:
		f.nodeDown(i, e.Node)
	case sim.Received:
		if _, ok := d.Msg.(proto.FetchRequest); ok {
			f.t.mark(i, Key{Broker, e.Node, TotalFetchRequestsPerSec})
		}
	case controller.SingleActive, controller.Activated:
		f.setActive(i, e.Node, true)
	case controller.Resigned:
		f.setActive(i, e.Node, false)
	case controller.TopicCreated:
		f.topics[d.Config.Name] = d.Config
	case controller.LeaderElected:
		f.t.mark(i, Key{Cluster, "cluster", LeaderElectionRate})
		if d.Via == controller.ViaUnclean || d.Via == controller.ViaLastKnownLeader {
			f.t.mark(i, Key{Cluster, "cluster", UncleanLeaderElectionsPerSec})
		}
		p := f.part(d.TP)
		p.isr, p.offline = len(d.ISR), false
		f.partitionsChanged(i)
	case controller.PartitionOffline:
		p := f.part(d.TP)
		p.isr, p.offline = len(d.ISR), true
		f.partitionsChanged(i)
	case controller.ISRChanged:
		p := f.part(d.TP)
		if p.leader != "" && len(d.After) < len(d.Before) {
			f.t.mark(i, Key{Broker, p.leader, IsrShrinksPerSec})
		}
		if p.leader != "" && len(d.After) > len(d.Before) {
			f.t.mark(i, Key{Broker, p.leader, IsrExpandsPerSec})
		}
		p.isr = len(d.After)
		f.partitionsChanged(i)
	case controller.ISRShrunk:
		f.part(d.TP).isr = len(d.ISR)
		f.partitionsChanged(i)
	case controller.UncleanShutdown:
		f.part(d.TP).isr = len(d.ISR)
		f.partitionsChanged(i)
	case controller.ReassignmentStarted:
		p := f.part(d.TP)
		p.replicas = len(d.Target)
		for _, r := range d.Removing {
			if !slices.Contains(d.Target, r) {
				p.replicas++
			}
		}
		f.partitionsChanged(i)
	case controller.ReassignmentDone:
		p := f.part(d.TP)
		p.replicas, p.isr = len(d.Replicas), len(d.ISR)
		f.partitionsChanged(i)
	default:
		f.observeBroker(i, e)
		f.observeClient(i, e)
	}
}

// observeBroker reads a broker's own events: its leaderships, its high watermarks and
// the producer batches it took or refused.
func (f *fold) observeBroker(i int, e sim.Event) {
	produce := func(failed bool) {
		f.t.mark(i, Key{Broker, e.Node, TotalProduceRequestsPerSec})
		if failed {
			f.t.mark(i, Key{Broker, e.Node, FailedProduceRequestsPerSec})
		}
	}
	switch d := e.Data.(type) {
	case broker.Started:
		f.brokers = addName(f.brokers, e.Node)
		f.partitionsChanged(i)
	case broker.Leading:
		p := f.part(d.TP)
		p.leader, p.isr, p.offline = e.Node, len(d.ISR), false
		f.setHW(i, d.TP, d.HW)
		f.partitionsChanged(i)
	case broker.Following:
		if p := f.part(d.TP); p.leader == e.Node {
			p.leader = ""
			f.partitionsChanged(i)
		}
	case broker.Offline:
		if p := f.part(d.TP); p.leader == e.Node {
			p.leader = ""
			f.partitionsChanged(i)
		}
	case broker.HWAdvanced:
		if d.Leader == "" {
			f.setHW(i, d.TP, d.To)
		}
	case broker.Appended:
		if !d.Coordinator {
			produce(false)
		}
	case broker.Deduplicated:
		produce(false)
	case broker.BelowMinISR:
		if !d.Coordinator {
			produce(true)
		}
	case broker.SequenceRejected:
		produce(true)
	case broker.StorageFailed:
		if d.Op == broker.OpAppend {
			produce(true)
		}
	}
}

// observeClient reads a consumer's events: where it stands, and the generations it
// joined.
func (f *fold) observeClient(i int, e sim.Event) {
	switch d := e.Data.(type) {
	case client.Polled:
		f.consumers = addName(f.consumers, e.Node)
		for _, s := range d.Spans {
			f.pos[consumerPos{e.Node, s.TP}] = s.Last + 1
		}
		f.lagChanged(i, e.Node)
	case client.PositionFound:
		f.consumers = addName(f.consumers, e.Node)
		f.pos[consumerPos{e.Node, d.TP}] = d.Offset
		f.lagChanged(i, e.Node)
	case client.TruncationDetected:
		if d.Resumed {
			f.pos[consumerPos{e.Node, d.TP}] = d.EndOffset
			f.lagChanged(i, e.Node)
		}
	case client.Joined:
		f.consumers = addName(f.consumers, e.Node)
		f.t.mark(i, Key{Consumer, e.Node, RebalanceRatePerHour})
	}
}

// nodeDown is a crashed or killed node: a controller no longer active, a broker that
// leads nothing, a consumer with no position.
func (f *fold) nodeDown(i int, node string) {
	if f.active[node] {
		f.setActive(i, node, false)
	}
	changed := false
	for _, tp := range f.tps {
		if p := f.parts[tp]; p.leader == node {
			p.leader, changed = "", true
		}
	}
	if changed {
		f.partitionsChanged(i)
	}
	if slices.Contains(f.consumers, node) {
		for k := range f.pos {
			if k.consumer == node {
				delete(f.pos, k) // deleting from a map in any order leaves the same map
			}
		}
		f.lagChanged(i, node)
	}
}

func (f *fold) setActive(i int, ctl string, on bool) {
	f.controllers = addName(f.controllers, ctl)
	f.active[ctl] = on
	sum := 0
	for _, c := range f.controllers {
		v := 0.0
		if f.active[c] {
			v, sum = 1, sum+1
		}
		f.t.setGauge(i, Key{Controller, c, ActiveControllerCount}, v)
	}
	f.t.setGauge(i, Key{Cluster, "cluster", ActiveControllerCount}, float64(sum))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// partitionsChanged sets every partition and broker gauge again (the partitions are few;
// a gauge records only a change).
func (f *fold) partitionsChanged(i int) {
	under := map[string]int{}
	underMin := map[string]int{}
	offline := 0
	for _, tp := range f.tps {
		p := f.parts[tp]
		name := tp.String()
		ur, um := p.replicas > 0 && p.isr < p.replicas, p.isr < p.minISR
		f.t.setGauge(i, Key{Partition, name, InSyncReplicasCount}, float64(p.isr))
		f.t.setGauge(i, Key{Partition, name, UnderReplicated}, b2f(ur))
		f.t.setGauge(i, Key{Partition, name, UnderMinIsr}, b2f(um))
		if p.offline {
			offline++
		}
		if p.leader != "" && ur {
			under[p.leader]++
		}
		if p.leader != "" && um {
			underMin[p.leader]++
		}
	}
	for _, b := range f.brokers {
		f.t.setGauge(i, Key{Broker, b, UnderReplicatedPartitions}, float64(under[b]))
		f.t.setGauge(i, Key{Broker, b, UnderMinIsrPartitionCount}, float64(underMin[b]))
	}
	if len(f.tps) > 0 {
		f.t.setGauge(i, Key{Cluster, "cluster", OfflinePartitionsCount}, float64(offline))
	}
}

func (f *fold) setHW(i int, tp proto.TP, hw int64) {
	p := f.part(tp)
	if p.hw == hw {
		return
	}
	p.hw = hw
	for _, c := range f.consumers {
		if _, ok := f.pos[consumerPos{c, tp}]; ok {
			f.lagChanged(i, c)
		}
	}
}

// lagChanged sets a consumer's records-lag-max again: the most any of its partitions'
// leader HW is above its position (a partition no leader event named yet counts 0).
func (f *fold) lagChanged(i int, c string) {
	lag := int64(0)
	for _, tp := range f.tps {
		pos, ok := f.pos[consumerPos{c, tp}]
		if ok {
			lag = max(lag, f.parts[tp].hw-pos)
		}
	}
	f.t.setGauge(i, Key{Consumer, c, RecordsLagMax}, float64(lag))
}
