package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"mqsim/checker"
	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Geo-replication commands (MirrorMaker 2, KIP-382): a second cluster in the same world,
// a mirror that replicates a topic of the first to it over a wide-area link, a consumer
// group's failover to the second cluster from the mirror's translated checkpoint, and
// what the group lost or read twice.

type geoRun struct {
	remotes map[string]*cluster.Cluster
	mirrors []mirrorRun
	// failovers are the groups moved, in order: the verdict says what each lost and
	// read twice.
	failovers []failoverRun
}

type failoverRun struct{ group, mirror string }

// notes judge every failover of the run (checker.Failover), for the verdict.
func (g *geoRun) notes(h history.History) []checker.Note {
	var notes []checker.Note
	for _, f := range g.failovers {
		i := slices.IndexFunc(g.mirrors, func(m mirrorRun) bool { return m.name == f.mirror })
		mr := g.mirrors[i]
		remote := client.RemoteTopic(mr.alias, mr.topic)
		notes = append(notes, checker.Failover(h, f.group, mr.topic, remote).Note(f.group, remote))
	}
	return notes
}

type mirrorRun struct {
	name   string
	id     sim.NodeID
	alias  string // the source cluster's alias
	topic  string // the source topic
	target *cluster.Cluster
}

// role is what id is in a remote cluster (its controller, brokers and clients) or a
// mirror (a client: it consumes and produces), else RoleNode.
func (g *geoRun) role(id sim.NodeID) Role {
	for _, m := range g.mirrors {
		if m.id == id {
			return RoleConsumer
		}
	}
	sites := slices.Sorted(maps.Keys(g.remotes))
	for _, site := range sites {
		if role := (logSystem{c: g.remotes[site]}).Role(id); role != RoleNode {
			return role
		}
	}
	return RoleNode
}

func init() {
	register(&Command{
		Name:  "remote-cluster",
		Usage: "remote-cluster name=SITE [brokers=N]",
		Help:  "add a second cluster to the world, with the first one's settings: controller SITE.ctl, brokers SITE.b1 ...",
		Keys:  []string{"name", "brokers"},
		Run:   cmdRemoteCluster,
	})
	register(&Command{
		Name: "mirror",
		Usage: "mirror name=M source=ALIAS to=SITE [topic=T] [groups=(G, ...)] [checkpoint-interval=D] [flush-interval=D] " +
			"[offset-lag-max=N] [poll-every=D] [request-timeout=D] [wan-latency=D] [wan-drop=P] [wan-bandwidth=RATE]",
		Help: "start a MirrorMaker 2 replicator at SITE: it replicates topic T of this cluster (alias ALIAS) to ALIAS.T on SITE over " +
			"a wide-area link, emits offset syncs, and checkpoints the groups' committed offsets",
		Keys: []string{"name", "source", "to", "topic", "groups", "checkpoint-interval", "flush-interval", "offset-lag-max", "poll-every",
			"request-timeout", "wan-latency", "wan-drop", "wan-bandwidth"},
		Run: cmdMirror,
	})
	register(&Command{
		Name:  "failover",
		Usage: "failover group=G consumer=C mirror=M [poll-every=D]",
		Help: "move group G to the mirror's target cluster: commit its checkpoints there (RemoteClusterUtils.translateOffsets) and " +
			"start consumer C in the group on the remote topic",
		Keys: []string{"group", "consumer", "mirror", "poll-every"},
		Run:  cmdFailover,
	})
	register(&Command{
		Name:  "check-failover",
		Usage: "check-failover group=G mirror=M",
		Help:  "say what group G lost and read twice across its failover: records related by value on the source topic and the remote topic",
		Keys:  []string{"group", "mirror"},
		Run:   cmdCheckFailover,
	})
	showSubjects["mirror"] = showMirror
}

func cmdRemoteCluster(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	site, err := a.Required("name")
	if err != nil {
		return "", err
	}
	if r.geo.remotes[site] != nil {
		return "", fmt.Errorf("remote-cluster: %s exists already", site)
	}
	cfg := c.Cfg
	if cfg.Brokers, err = a.Int("brokers", cfg.Brokers, 1, 100); err != nil {
		return "", err
	}
	rc, err := c.Remote(site, cfg)
	if err != nil {
		return "", err
	}
	if r.geo.remotes == nil {
		r.geo.remotes = map[string]*cluster.Cluster{}
	}
	r.geo.remotes[site] = rc
	rc.Settle(100 * time.Millisecond)
	var names []string
	for _, b := range rc.Brokers {
		names = append(names, c.W.Name(b))
	}
	return fmt.Sprintf("controller %s, brokers %s", c.W.Name(rc.Controller), strings.Join(names, " ")), nil
}

func (r *Runner) remote(site string) (*cluster.Cluster, error) {
	rc := r.geo.remotes[site]
	if rc == nil {
		return nil, fmt.Errorf("no remote cluster %q: add one with remote-cluster name=%s", site, site)
	}
	return rc, nil
}

func cmdMirror(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	alias, err := a.Required("source")
	if err != nil {
		return "", err
	}
	site, err := a.Required("to")
	if err != nil {
		return "", err
	}
	target, err := r.remote(site)
	if err != nil {
		return "", err
	}
	topic, _ := a.String("topic", c.Cfg.Topic.Name)
	mc := client.DefaultMirrorConfig(alias)
	mc.Groups = a.List("groups")
	for _, tp := range c.Partitions() {
		if tp.TP.Topic == topic {
			mc.Partitions = append(mc.Partitions, tp.TP)
		}
	}
	if len(mc.Partitions) == 0 {
		return "", fmt.Errorf("mirror: the source cluster has no topic %q", topic)
	}
	lag, err := a.Int("offset-lag-max", int(mc.OffsetLagMax), 1, 1<<30)
	if err != nil {
		return "", err
	}
	mc.OffsetLagMax = int64(lag)
	for _, d := range []struct {
		key string
		to  *time.Duration
	}{{"checkpoint-interval", &mc.CheckpointEvery}, {"flush-interval", &mc.FlushEvery}, {"poll-every", &mc.PollEvery}} {
		if *d.to, err = a.Duration(d.key, *d.to); err != nil {
			return "", err
		}
		if *d.to < sim.MinTimerPeriod {
			return "", fmt.Errorf("mirror: %s must be at least %s", d.key, sim.MinTimerPeriod)
		}
	}
	wan := sim.DefaultLink()
	if wan.Latency, err = a.Duration("wan-latency", 40*time.Millisecond); err != nil {
		return "", err
	}
	if wan.Drop, err = a.Prob("wan-drop", 0); err != nil {
		return "", err
	}
	if err := byteCost(a, "wan-bandwidth", sim.ParseRate, &wan.Bandwidth); err != nil {
		return "", err
	}
	remoteTopic := c.Cfg.Topic
	remoteTopic.Name = client.RemoteTopic(alias, topic)
	remoteTopic.Partitions = len(mc.Partitions)
	remoteTopic.ReplicationFactor = min(remoteTopic.ReplicationFactor, target.Cfg.Brokers)
	remoteTopic.MinInsyncReplicas = min(remoteTopic.MinInsyncReplicas, remoteTopic.ReplicationFactor)
	if err := target.CreateTopic(remoteTopic); err != nil {
		return "", err
	}
	// The target's offsets topic exists before any failover, as the group offsets that
	// MM2 syncs (sync.group.offsets.enabled) or a failed-over group commit need it: a
	// group tool's commit sent while it is brand new may meet a broker whose metadata
	// does not know it yet (NOT_COORDINATOR).
	if len(mc.Groups) > 0 {
		if err := target.EnsureOffsetsTopic(); err != nil {
			return "", err
		}
	}
	// The mirror's consumer talks over the wide-area link: a message lost there costs it
	// a request timeout (request.timeout.ms, 30s by default) before it asks again.
	cc := c.Cfg.Consumer
	if cc.RequestTimeout, err = a.Duration("request-timeout", cc.RequestTimeout); err != nil {
		return "", err
	}
	if cc.RequestTimeout < sim.MinTimerPeriod {
		return "", fmt.Errorf("mirror: request-timeout must be at least %s", sim.MinTimerPeriod)
	}
	m, err := target.AddMirror(name, c, mc, cc, target.Cfg.Producer)
	if err != nil {
		return "", err
	}
	// The mirror runs at the target: its links to the source cluster are the wide-area link.
	for _, id := range slices.Concat(c.Controllers, c.Brokers) {
		c.W.SetLink(m.ID, id, wan)
		c.W.SetLink(id, m.ID, wan)
	}
	r.geo.mirrors = append(r.geo.mirrors, mirrorRun{name: name, id: m.ID, alias: alias, topic: topic, target: target})
	c.W.RunFor(0)
	return fmt.Sprintf("%s replicates %s to %s on %s (checkpoints of %s every %s, delayed offset syncs every %s, offset.lag.max=%d)\n"+
		"wide-area link %s <-> %s cluster: latency %s, drop %dppm%s; the mirror's request.timeout.ms %s",
		name, topic, remoteTopic.Name, site, strings.Join(mc.Groups, ","), mc.CheckpointEvery, mc.FlushEvery, mc.OffsetLagMax,
		name, alias, wan.Latency, wan.Drop, wanBandwidth(wan), cc.RequestTimeout), nil
}

func wanBandwidth(l sim.LinkConfig) string {
	if l.Bandwidth == 0 {
		return ""
	}
	return ", bandwidth " + sim.FormatRate(l.Bandwidth)
}

func (r *Runner) mirrorRun(name string) (mirrorRun, *client.Mirror, error) {
	i := slices.IndexFunc(r.geo.mirrors, func(m mirrorRun) bool { return m.name == name })
	if i < 0 {
		return mirrorRun{}, nil, fmt.Errorf("no mirror %q: start one with the mirror command", name)
	}
	mr := r.geo.mirrors[i]
	m := mr.target.Mirror(name)
	if m == nil {
		return mr, nil, fmt.Errorf("mirror %s is down", name)
	}
	return mr, m, nil
}

// showMirror prints each replicated partition's replication lag (the source's high
// watermark less what the target acknowledged), its offset syncs and the checkpoints.
func showMirror(r *Runner, a *Args, words []string) (string, error) {
	if len(words) != 1 {
		return "", fmt.Errorf("usage: show mirror NAME")
	}
	_, m, err := r.mirrorRun(words[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range m.Partitions() {
		fmt.Fprintf(&b, "%s: replicated below %d, ", p.TP, p.Replicated)
		if hw, ok := sourceHW(r.cluster, p.TP); ok {
			fmt.Fprintf(&b, "source HW %d, replication lag %d records", hw, hw-p.Replicated)
		} else {
			b.WriteString("source unavailable (no replica of the source cluster is up)")
		}
		fmt.Fprintf(&b, "; %d offset syncs", len(p.Syncs))
		if n := len(p.Syncs); n > 0 {
			fmt.Fprintf(&b, ", last %d -> %d", p.Syncs[n-1].Upstream, p.Syncs[n-1].Downstream)
		}
		b.WriteString("\n")
	}
	cps := m.Checkpoints()
	if len(cps) == 0 {
		b.WriteString("no checkpoints yet")
	}
	for i, cp := range cps {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "checkpoint at %s: group %s %s committed %d -> %d", cp.At, cp.Group, cp.TP, cp.Upstream, cp.Downstream)
	}
	return b.String(), nil
}

// sourceHW is the highest high watermark of tp among the source cluster's live replicas.
func sourceHW(c *cluster.Cluster, tp proto.TP) (int64, bool) {
	hw, ok := int64(0), false
	for i := range c.Brokers {
		if b := c.Broker(i); b != nil {
			if rep, has := b.Replica(tp); has {
				hw, ok = max(hw, rep.HighWatermark), true
			}
		}
	}
	return hw, ok
}

func cmdFailover(r *Runner, a *Args) (string, error) {
	gname, err := a.Required("group")
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	mname, err := a.Required("mirror")
	if err != nil {
		return "", err
	}
	every, err := a.Duration("poll-every", 100*time.Millisecond)
	if err != nil {
		return "", err
	}
	mr, m, err := r.mirrorRun(mname)
	if err != nil {
		return "", err
	}
	target := mr.target
	var offsets []proto.PartitionOffset
	var lines []string
	for _, cp := range m.Checkpoints() {
		if cp.Group != gname {
			continue
		}
		tp := proto.TP{Topic: client.RemoteTopic(mr.alias, cp.TP.Topic), Partition: cp.TP.Partition}
		offsets = append(offsets, proto.PartitionOffset{TP: tp, Offset: cp.Downstream, LeaderEpoch: -1})
		lines = append(lines, fmt.Sprintf("%s: checkpoint of %s: committed %d on the source -> %d", tp, cp.At, cp.Upstream, cp.Downstream))
	}
	if len(offsets) == 0 {
		lines = append(lines, "no checkpoint of group "+gname+": it starts where auto.offset.reset says")
	} else {
		if err := target.EnsureOffsetsTopic(); err != nil {
			return "", err
		}
		loaded := func(*sim.World) bool { return target.Group(gname).Loaded }
		if ok, err := r.wait("the target's group coordinator", loaded, 1_000_000, target.W.Now().Add(30*time.Second)); err != nil || !ok {
			return "", fmt.Errorf("failover: no coordinator of group %s loaded on the target cluster within 30s (%v)", gname, err)
		}
		if err := commitAsAdmin(r, target, target.Group(gname), offsets); err != nil {
			return "", err
		}
		// Starting the remote topic from the checkpoint is a declared move, as the group
		// tool's reset is: the history records it as a seek, so that the checkers do not
		// take the remote topic's records before it for lost writes.
		hist := make([]history.PartitionOffset, len(offsets))
		for i, o := range offsets {
			hist[i] = history.PartitionOffset{TopicPartition: history.TopicPartition{Topic: o.TP.Topic, Partition: o.TP.Partition}, Offset: o.Offset}
		}
		now := int64(target.W.Now())
		target.History.Ok(now, target.History.InvokeSeek(now, target.NewProcess(), gname, hist, true), history.Result{})
	}
	if _, err := target.AddConsumer(name, target.Cfg.Consumer); err != nil {
		return "", err
	}
	cc := target.Cfg.Consumer
	sub := client.Subscribe{Group: gname, Topics: []string{client.RemoteTopic(mr.alias, mr.topic)}, Config: &cc, PollEvery: every}
	if err := target.Subscribe(name, sub); err != nil {
		return "", err
	}
	target.W.RunFor(0)
	r.geo.failovers = append(r.geo.failovers, failoverRun{group: gname, mirror: mname})
	lines = append(lines, fmt.Sprintf("%s joins group %s on the target cluster, reading %s", name, gname, sub.Topics[0]))
	return strings.Join(lines, "\n"), nil
}

func cmdCheckFailover(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	gname, err := a.Required("group")
	if err != nil {
		return "", err
	}
	mname, err := a.Required("mirror")
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(r.geo.mirrors, func(m mirrorRun) bool { return m.name == mname })
	if i < 0 {
		return "", fmt.Errorf("no mirror %q", mname)
	}
	mr := r.geo.mirrors[i]
	rep := checker.Failover(c.History.History(), gname, mr.topic, client.RemoteTopic(mr.alias, mr.topic))
	return rep.String(), nil
}
