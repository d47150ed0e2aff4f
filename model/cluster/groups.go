package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Consumer groups: the offsets topic, the consumers' subscriptions (which survive their
// restarts: the application subscribes again when it starts), views of the coordinators'
// state and the consumers' lag, and the group invariants checked after every event.

// Group invariants.
const (
	// DoubleOwnership: two consumers of one group, in the same generation, both hold a
	// partition. Generations are what make a rebalance safe: a zombie of an older
	// generation may still hold what a newer one was given (its commits are fenced), but
	// within a generation a partition has one owner (under the cooperative protocol, only
	// because of the revoke-first rule). Under the consumer protocol (KIP-848) members
	// hold partitions under their own member epochs, so the rule is stronger: two
	// consumers that are both members at the coordinator never hold the same partition
	// (the coordinator hands a partition on only once its owner stopped reporting it); a
	// fenced member may, until it learns it is fenced.
	DoubleOwnership = "double-ownership"
	// StaleCommitAccepted: a coordinator accepted an offset commit from a member that was
	// not in the group's current generation.
	StaleCommitAccepted = "stale-commit-accepted"
)

// groups is the cluster's consumer-group wiring.
type groups struct {
	defined []GroupDefaults
	subs    []subscription // by consumer name, sorted
	// ownership accounting, per group and partition, for views
	owner   []ownerWatch
	held    []holder                   // scratch: who holds what, this step
	checked map[*group.Coordinator]int // stale commits already reported, per coordinator
}

// GroupDefaults are a group's settings for the consumers that join it.
type GroupDefaults struct {
	Name     string
	Consumer proto.ConsumerConfig
}

type subscription struct {
	consumer string
	id       sim.NodeID // the consumer's node, looked up once
	sub      client.Subscribe
}

// ownerWatch is how long a partition of a group's topics has had no owner (after it had
// one), and how often it lost its owner.
type ownerWatch struct {
	group   string
	tp      proto.TP
	owned   bool // at the last step
	cur     bool // at this step
	ever    bool
	since   sim.Time
	unowned time.Duration
	gaps    int
}

func (c *Cluster) groupState() *groups {
	if c.groups == nil {
		c.groups = &groups{checked: map[*group.Coordinator]int{}}
	}
	return c.groups
}

// EnsureOffsetsTopic creates the offsets topic the first time a group needs it (Kafka
// creates __consumer_offsets at the first FindCoordinator), and waits until every
// partition has a leader.
func (c *Cluster) EnsureOffsetsTopic() error {
	if slices.ContainsFunc(c.topics, func(t proto.TopicConfig) bool { return t.Name == proto.OffsetsTopic }) {
		return nil
	}
	return c.CreateTopic(c.Cfg.OffsetsTopicConfig())
}

// DefineGroup records a group's defaults for the consumers that join it later.
func (c *Cluster) DefineGroup(name string, cfg proto.ConsumerConfig) error {
	if err := cfg.ValidateGroup(c.Cfg.Group); err != nil {
		return err
	}
	if _, err := group.AssignorByName(cfg.Assignor); err != nil {
		return err
	}
	g := c.groupState()
	i := slices.IndexFunc(g.defined, func(d GroupDefaults) bool { return d.Name == name })
	if i < 0 {
		g.defined = append(g.defined, GroupDefaults{Name: name})
		i = len(g.defined) - 1
	}
	g.defined[i].Consumer = cfg
	return c.EnsureOffsetsTopic()
}

// GroupDefaults returns a group's defaults, if it was defined.
func (c *Cluster) GroupDefaults(name string) (proto.ConsumerConfig, bool) {
	if c.groups != nil {
		for _, d := range c.groups.defined {
			if d.Name == name {
				return d.Consumer, true
			}
		}
	}
	return proto.ConsumerConfig{}, false
}

// Subscribe makes a consumer join a group. The subscription is remembered: when the
// consumer restarts, it subscribes again. The offsets topic is created if needed.
func (c *Cluster) Subscribe(name string, s client.Subscribe) error {
	id, ok := c.W.Lookup(name)
	if !ok || !slices.ContainsFunc(c.Consumers, func(k Client) bool { return k.Name == name }) {
		return fmt.Errorf("no consumer %q", name)
	}
	cfg := c.Cfg.Consumer
	if s.Config != nil {
		cfg = *s.Config
	}
	if err := cfg.ValidateGroup(c.Cfg.Group); err != nil {
		return err
	}
	if _, err := group.AssignorByName(cfg.Assignor); err != nil {
		return err
	}
	if err := c.EnsureOffsetsTopic(); err != nil {
		return err
	}
	s.Bugs = c.Cfg.Bugs
	g := c.groupState()
	i, found := slices.BinarySearchFunc(g.subs, name, func(x subscription, n string) int { return strings.Compare(x.consumer, n) })
	if found {
		g.subs[i].sub = s
	} else {
		g.subs = slices.Insert(g.subs, i, subscription{consumer: name, id: id, sub: s})
	}
	if !slices.ContainsFunc(g.defined, func(d GroupDefaults) bool { return d.Name == s.Group }) {
		g.defined = append(g.defined, GroupDefaults{Name: s.Group, Consumer: cfg})
	}
	c.W.Inject(id, s, 0)
	return nil
}

// resubscribe hands a consumer built for a restart its remembered subscription.
func (c *Cluster) resubscribe(name string, cs *client.Consumer) {
	if c.groups == nil {
		return
	}
	for _, s := range c.groups.subs {
		if s.consumer == name {
			cs.Resubscribe(s.sub)
			return
		}
	}
}

// Subscription is the group a consumer subscribed to, if any.
func (c *Cluster) Subscription(name string) (client.Subscribe, bool) {
	if c.groups != nil {
		for _, s := range c.groups.subs {
			if s.consumer == name {
				return s.sub, true
			}
		}
	}
	return client.Subscribe{}, false
}

// Groups lists the groups defined or joined, in the order they first appeared.
func (c *Cluster) Groups() []string {
	if c.groups == nil {
		return nil
	}
	var names []string
	for _, d := range c.groups.defined {
		names = append(names, d.Name)
	}
	return names
}

// GroupInfo is a group as its coordinator and its consumers see it.
type GroupInfo struct {
	Name        string
	Partition   int32  // of the offsets topic
	Coordinator string // the broker that coordinates it ("" if none is loaded)
	Loaded      bool
	State       string
	Generation  int32
	Leader      string
	Assignor    string
	Rebalances  int
	Members     []GroupMemberInfo
	Offsets     []PartitionLag
	// Consumers are the consumers subscribed to the group, as they see themselves.
	Consumers []ConsumerInfo
	// Unowned is, per partition, how long it had no owner after it first had one.
	Unowned []Unowned
	// StaleAccepted counts the commits accepted from stale members (no-generation-fencing).
	StaleAccepted int
	// ConsumerProtocol: the group's members speak the consumer protocol (KIP-848);
	// Generation is then the group epoch, AssignmentEpoch the target assignment's,
	// Assignor the server-side assignor, Rebalances the target assignments computed.
	ConsumerProtocol bool
	AssignmentEpoch  int32
}

// GroupMemberInfo is one member at the coordinator.
type GroupMemberInfo struct {
	ID, InstanceID, ClientID string
	Assignment               []proto.TP
	// Under the consumer protocol: the member's epoch, reconciliation state, and the
	// partitions it must still revoke.
	Epoch     int32
	Reconcile string
	Revoking  []proto.TP
}

// ConsumerInfo is one subscribed consumer's view of its membership.
type ConsumerInfo struct {
	Name   string
	Status string // up, down, paused
	client.MemberStatus
}

// PartitionLag is a partition's committed offset, high watermark and lag.
type PartitionLag struct {
	TP        proto.TP
	Committed int64 // -1: nothing committed
	HW        int64 // -1: no leader
	Lag       int64 // HW - committed (HW - log start if nothing committed); -1 if unknown
}

// Unowned is how long a partition went without an owner, in how many gaps.
type Unowned struct {
	TP   proto.TP
	Time time.Duration
	Gaps int
}

// Group reports a group's state: the coordinator's (the broker leading the group's offsets
// partition in the highest epoch), the lag of every partition of the topics its members
// subscribe to, and the consumers' own view.
func (c *Cluster) Group(name string) GroupInfo {
	n := c.Cfg.Group.OffsetsTopicPartitions
	info := GroupInfo{Name: name, Partition: group.PartitionFor(name, n), Generation: -1}
	var topics []string
	if coord, b := c.coordinatorFor(name); coord != nil {
		info.Coordinator, info.Loaded = c.W.Name(c.Brokers[b]), true
		if g := coord.Group(name); g != nil && g.Consumer != nil {
			topics = consumerGroupInfo(&info, g.Consumer)
			for _, o := range g.Offsets() {
				if !slices.Contains(topics, o.TP.Topic) {
					topics = append(topics, o.TP.Topic)
				}
			}
		} else if g != nil {
			info.State, info.Generation, info.Leader, info.Assignor, info.Rebalances = g.State.String(), g.Generation, g.Leader, g.Assignor, g.Rebalances
			for _, m := range g.Members() {
				info.Members = append(info.Members, GroupMemberInfo{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID, Assignment: slices.Clone(m.Assignment)})
				for _, t := range m.Subscription.Topics {
					if !slices.Contains(topics, t) {
						topics = append(topics, t)
					}
				}
			}
			for _, o := range g.Offsets() {
				if !slices.Contains(topics, o.TP.Topic) {
					topics = append(topics, o.TP.Topic)
				}
			}
		} else {
			info.State = "unknown to the coordinator"
		}
		for _, s := range coord.Stale {
			if s.Group == name {
				info.StaleAccepted++
			}
		}
	}
	if c.groups != nil {
		for _, s := range c.groups.subs {
			if s.sub.Group != name {
				continue
			}
			for _, t := range s.sub.Topics {
				if !slices.Contains(topics, t) {
					topics = append(topics, t)
				}
			}
			ci := ConsumerInfo{Name: s.consumer}
			if id, ok := c.W.Lookup(s.consumer); ok {
				ci.Status = c.W.Status(id).String()
			}
			if cs := c.Consumer(s.consumer); cs != nil {
				if st, ok := cs.Member(); ok && st.Group == name {
					ci.MemberStatus = st
				}
			}
			info.Consumers = append(info.Consumers, ci)
		}
		for _, o := range c.groups.owner {
			if o.group == name && o.ever {
				u := o.unowned
				if !o.owned {
					u += c.W.Now().Sub(o.since)
				}
				info.Unowned = append(info.Unowned, Unowned{TP: o.tp, Time: u, Gaps: o.gaps})
			}
		}
	}
	slices.Sort(topics)
	coord, _ := c.coordinatorFor(name)
	for _, p := range c.Partitions() {
		if !slices.Contains(topics, p.TP.Topic) {
			continue
		}
		l := PartitionLag{TP: p.TP, Committed: -1, HW: -1, Lag: -1}
		if coord != nil {
			if g := coord.Group(name); g != nil {
				l.Committed = g.Offset(p.TP)
			}
		}
		if b, ok := c.Leader(p.TP); ok {
			if r, ok := c.Broker(b).Replica(p.TP); ok {
				l.HW = r.HighWatermark
				from := l.Committed
				if from < 0 {
					from = r.LogStart
				}
				l.Lag = max(0, r.HighWatermark-from)
			}
		}
		info.Offsets = append(info.Offsets, l)
	}
	return info
}

// consumerGroupInfo fills a consumer-protocol group's state in; it returns the topics its
// members subscribe to.
func consumerGroupInfo(info *GroupInfo, cg *group.ConsumerGroup) []string {
	info.ConsumerProtocol = true
	info.State, info.Generation, info.AssignmentEpoch = cg.StateName(), cg.Epoch, cg.AssignmentEpoch
	info.Assignor, info.Rebalances = cg.Assignor, cg.Rebalances
	var topics []string
	for _, m := range cg.Members() {
		info.Members = append(info.Members, GroupMemberInfo{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			Assignment: slices.Clone(m.Assigned), Epoch: m.Epoch, Reconcile: m.State.String(), Revoking: slices.Clone(m.Revoking)})
		for _, t := range m.Subscribed {
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	return topics
}

// TotalLag is the sum of the group's known partition lags.
func (g GroupInfo) TotalLag() int64 {
	var n int64
	for _, o := range g.Offsets {
		if o.Lag > 0 {
			n += o.Lag
		}
	}
	return n
}

// coordinatorFor finds the loaded coordinator of a group: on the broker that leads its
// offsets partition in the highest leader epoch.
func (c *Cluster) coordinatorFor(name string) (*group.Coordinator, int) {
	tp := proto.TP{Topic: proto.OffsetsTopic, Partition: group.PartitionFor(name, c.Cfg.Group.OffsetsTopicPartitions)}
	b, ok := c.Leader(tp)
	if !ok {
		return nil, -1
	}
	if coord := c.Broker(b).Coordinator(tp.Partition); coord != nil {
		return coord, b
	}
	return nil, -1
}

// afterStep checks the group invariants and keeps the ownership accounting.
func (g *groups) afterStep(inv *Invariants, w *sim.World) {
	c := inv.c
	g.held = g.held[:0]
	for i := range g.owner {
		g.owner[i].cur = false
	}
	for _, s := range g.subs {
		cs, _ := w.Node(s.id).(*client.Consumer)
		if cs == nil {
			continue
		}
		name, gen, owned, ok := cs.Ownership()
		if !ok {
			continue
		}
		for _, tp := range owned {
			g.watch(name, tp).cur = true
			if gen < 0 {
				continue
			}
			for _, h := range g.held {
				if h.tp != tp || h.group != name {
					continue
				}
				if h.gen == gen {
					inv.report(w, DoubleOwnership, tp, gen, fmt.Sprintf("%s and %s of group %s both hold %s in generation %d",
						h.consumer, s.consumer, name, tp, gen))
				} else if c.bothConsumerMembers(name, h.member, cs.MemberID()) {
					inv.report(w, DoubleOwnership, tp, gen, fmt.Sprintf("%s (epoch %d) and %s (epoch %d) of group %s both hold %s, both members at the coordinator",
						h.consumer, h.gen, s.consumer, gen, name, tp))
				}
			}
			g.held = append(g.held, holder{tp: tp, consumer: s.consumer, group: name, gen: gen, member: cs.MemberID()})
		}
	}
	now := w.Now()
	for i := range g.owner {
		o := &g.owner[i]
		switch {
		case o.cur && !o.ever:
			o.ever = true
		case o.owned && !o.cur:
			o.since = now
			o.gaps++
		case !o.owned && o.cur:
			o.unowned += now.Sub(o.since)
		}
		o.owned = o.cur
	}
	for bi, id := range c.Brokers {
		b, _ := w.Node(id).(*broker.Broker)
		if b == nil {
			continue
		}
		for p := int32(0); p < int32(c.Cfg.Group.OffsetsTopicPartitions); p++ {
			coord := b.Coordinator(p)
			if coord == nil || len(coord.Stale) == g.checked[coord] {
				continue
			}
			for _, s := range coord.Stale[g.checked[coord]:] {
				var tp proto.TP
				if len(s.Offsets) > 0 {
					tp = s.Offsets[0].TP
				}
				inv.report(w, StaleCommitAccepted, tp, s.Generation, fmt.Sprintf("%s accepted a commit of %s by %s of group %s in generation %d while the group is in generation %d",
					w.Name(c.Brokers[bi]), offsetsText(s.Offsets), s.Member, s.Group, s.Generation, s.Current))
			}
			g.checked[coord] = len(coord.Stale)
		}
	}
}

type holder struct {
	tp       proto.TP
	consumer string
	group    string
	gen      int32
	member   string
}

// bothConsumerMembers reports whether a and b are both members of a consumer-protocol
// group at its coordinator.
func (c *Cluster) bothConsumerMembers(name, a, b string) bool {
	coord, _ := c.coordinatorFor(name)
	if coord == nil || a == "" || b == "" {
		return false
	}
	g := coord.Group(name)
	if g == nil || g.Consumer == nil {
		return false
	}
	return g.Consumer.Member(a) != nil && g.Consumer.Member(b) != nil
}

// watch finds (or starts) the ownership record of a group's partition.
func (g *groups) watch(name string, tp proto.TP) *ownerWatch {
	for i := range g.owner {
		if g.owner[i].group == name && g.owner[i].tp == tp {
			return &g.owner[i]
		}
	}
	g.owner = append(g.owner, ownerWatch{group: name, tp: tp})
	slices.SortFunc(g.owner, func(a, b ownerWatch) int {
		if a.group != b.group {
			return strings.Compare(a.group, b.group)
		}
		switch {
		case a.tp.Less(b.tp):
			return -1
		case b.tp.Less(a.tp):
			return 1
		}
		return 0
	})
	for i := range g.owner {
		if g.owner[i].group == name && g.owner[i].tp == tp {
			return &g.owner[i]
		}
	}
	panic("unreachable")
}

func offsetsText(os []proto.PartitionOffset) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
	}
	return strings.Join(s, " ")
}
