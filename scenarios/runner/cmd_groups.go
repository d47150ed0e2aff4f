package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Consumer-group commands: define a group, join and leave it, crash and pause members,
// commit, and look at groups and their lag.

// memberSettings are the group-membership settings of a consumer: for the group and join
// commands under their short names, for the cluster command (the defaults of every
// consumer) with session and heartbeat prefixed "group-", which there name the brokers'.
func memberSettings(cluster bool) []setting {
	session, heartbeat := "session-timeout", "heartbeat"
	if cluster {
		session, heartbeat = "group-session-timeout", "group-heartbeat"
	}
	str := func(key, help string, field func(*proto.Config) *string) setting {
		return setting{key, help, func(a *Args, c *proto.Config) (err error) {
			p := field(c)
			*p, err = a.String(key, *p)
			return
		}}
	}
	return []setting{
		str("assignor", "partition.assignment.strategy: range, roundrobin, sticky, cooperative-sticky", func(c *proto.Config) *string { return &c.Consumer.Assignor }),
		str("protocol", "rebalance protocol: eager or cooperative", func(c *proto.Config) *string { return &c.Consumer.Protocol }),
		str("group-protocol", "group.protocol: classic or consumer (KIP-848)", func(c *proto.Config) *string { return &c.Consumer.GroupProtocol }),
		str("remote-assignor", "group.remote.assignor under group-protocol=consumer: uniform or range", func(c *proto.Config) *string { return &c.Consumer.RemoteAssignor }),
		durSetting(session, "consumer session.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Consumer.SessionTimeout }),
		durSetting(heartbeat, "consumer heartbeat.interval.ms", func(c *proto.Config) *time.Duration { return &c.Consumer.HeartbeatInterval }),
		durSetting("max-poll-interval", "max.poll.interval.ms", func(c *proto.Config) *time.Duration { return &c.Consumer.MaxPollInterval }),
		durSetting("rebalance-timeout", "rebalance timeout (0: max.poll.interval.ms)", func(c *proto.Config) *time.Duration { return &c.Consumer.RebalanceTimeout }),
		setting{"commit", "when consumers commit: auto (enable.auto.commit), after or before processing, manual", func(a *Args, c *proto.Config) error {
			s, err := a.String("commit", string(c.Consumer.Commit))
			c.Consumer.Commit = proto.CommitMode(s)
			return err
		}},
		durSetting("auto-commit-interval", "auto.commit.interval.ms", func(c *proto.Config) *time.Duration { return &c.Consumer.AutoCommitInterval }),
	}
}

// groupClusterSettings are the cluster command's group keys: member defaults and the
// coordinator's settings.
var groupClusterSettings = append(memberSettings(true),
	durSetting("initial-rebalance-delay", "group.initial.rebalance.delay.ms", func(c *proto.Config) *time.Duration { return &c.Group.InitialRebalanceDelay }),
	intSetting("offsets-partitions", "offsets.topic.num.partitions", 1, 1000, func(c *proto.Config) *int { return &c.Group.OffsetsTopicPartitions }),
	intSetting("offsets-rf", "offsets.topic.replication.factor", 1, 64, func(c *proto.Config) *int { return &c.Group.OffsetsTopicReplicationFactor }),
	durSetting("offsets-commit-timeout", "offsets.commit.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Group.OffsetCommitTimeout }),
	durSetting("consumer-session-timeout", "group.consumer.session.timeout.ms (KIP-848 members; default 45s)", func(c *proto.Config) *time.Duration { return &c.Group.ConsumerSessionTimeout }),
	durSetting("consumer-heartbeat", "group.consumer.heartbeat.interval.ms (KIP-848 members; default 5s)", func(c *proto.Config) *time.Duration { return &c.Group.ConsumerHeartbeatInterval }),
)

// joinSettings are the join command's keys besides consumer, group, topics, instance-id.
var joinSettings = append(memberSettings(false), consumerSettings...)

func init() {
	register(&Command{
		Name:  "group",
		Usage: "group name=G [assignor=range|roundrobin|sticky|cooperative-sticky] [protocol=eager|cooperative] [group-protocol=classic|consumer] [remote-assignor=uniform|range] [session-timeout=D] [heartbeat=D] [max-poll-interval=D] [rebalance-timeout=D] [commit=auto|after|before|manual] [auto-commit-interval=D]",
		Help:  "define a consumer group: the settings its members join with (unset keys: the cluster's); creates the offsets topic",
		Keys:  append(settingKeys(memberSettings(false)), "name"),
		Run:   cmdGroup,
	})
	register(&Command{
		Name:  "join",
		Usage: "join consumer=C group=G [topics=(T, ...)] [instance-id=ID] [commit=auto|after|before|manual] [processing=D] [poll-every=D] [wait=BOOL] [KEY=VALUE...]",
		Help:  "subscribe a consumer (added if new) to a group (poll-every=D: the application polls in a loop) and, unless wait=false, run until the group is stable",
		Keys:  append(settingKeys(joinSettings), "consumer", "group", "topics", "instance-id", "wait", "poll-every"),
		Run:   cmdJoin,
	})
	register(&Command{
		Name:  "leave",
		Usage: "leave consumer=C",
		Help:  "close a group consumer gracefully: commit (auto-commit), LeaveGroup (dynamic members), stop consuming",
		Keys:  []string{"consumer"},
		Run:   cmdLeave,
	})
	register(&Command{
		Name:  "consumer-crash",
		Usage: "consumer-crash C [after=D]",
		Help:  "crash a consumer now (or D from now): no LeaveGroup, no commit; the coordinator notices after session.timeout.ms",
		Keys:  []string{"after"},
		Run:   cmdConsumerCrash,
	})
	register(&Command{
		Name:  "consumer-pause",
		Usage: "consumer-pause C for=D [after=D]",
		Help:  "freeze a consumer for D (a long GC pause), now or after=D from now: no heartbeats, no processing; then it resumes where it was",
		Keys:  []string{"for", "after"},
		Run:   cmdConsumerPause,
	})
	register(&Command{
		Name:  "consumer-restart",
		Usage: "consumer-restart C [down=D]",
		Help:  "restart a group consumer gracefully: close it (commit, LeaveGroup unless static), start it again D later (default 5s); it subscribes again",
		Keys:  []string{"down"},
		Run:   cmdConsumerRestart,
	})
	register(&Command{
		Name:  "commit",
		Usage: "commit consumer=C",
		Help:  "commitSync a group consumer's positions and run until it is answered",
		Keys:  []string{"consumer"},
		Run:   cmdCommit,
	})
	showSubjects["group"] = showGroup
	showSubjects["lag"] = showLag
}

// memberFields copies the group-membership settings.
func memberFields(dst *proto.ConsumerConfig, src proto.ConsumerConfig) {
	dst.Assignor, dst.Protocol = src.Assignor, src.Protocol
	dst.GroupProtocol, dst.RemoteAssignor = src.GroupProtocol, src.RemoteAssignor
	dst.SessionTimeout, dst.HeartbeatInterval = src.SessionTimeout, src.HeartbeatInterval
	dst.MaxPollInterval, dst.RebalanceTimeout = src.MaxPollInterval, src.RebalanceTimeout
	dst.Commit, dst.AutoCommitInterval = src.Commit, src.AutoCommitInterval
}

func memberText(c proto.ConsumerConfig) string {
	if c.ConsumerProtocol() {
		// Under KIP-848 the coordinator assigns and sets the session and heartbeat.
		return fmt.Sprintf("group.protocol=consumer group.remote.assignor=%s commit=%s max.poll.interval.ms=%s",
			orDefault(c.RemoteAssignor, "uniform"), c.Commit, c.MaxPollInterval)
	}
	s := fmt.Sprintf("assignor=%s protocol=%s commit=%s session.timeout.ms=%s heartbeat.interval.ms=%s max.poll.interval.ms=%s",
		c.Assignor, c.Protocol, c.Commit, c.SessionTimeout, c.HeartbeatInterval, c.MaxPollInterval)
	if p := c.Patterns.String(); p != "" {
		s += " " + p // cmd_patterns.go
	}
	return s
}

func cmdGroup(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	cfg := c.Cfg
	if d, ok := c.GroupDefaults(name); ok {
		memberFields(&cfg.Consumer, d)
	}
	if err := applySettings(a, &cfg, memberSettings(false)); err != nil {
		return "", err
	}
	if err := c.DefineGroup(name, cfg.Consumer); err != nil {
		return "", invalidConfig(err)
	}
	g := c.Group(name)
	coord := "none yet"
	if g.Coordinator != "" {
		coord = g.Coordinator
	}
	return fmt.Sprintf("group %s: coordinator %s (leader of %s/%d)\nmembers join with %s", name, coord, proto.OffsetsTopic, g.Partition,
		memberText(cfg.Consumer)), nil
}

func cmdJoin(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	gname, err := a.Required("group")
	if err != nil {
		return "", err
	}
	topics := a.List("topics")
	if len(topics) == 0 {
		topics = []string{c.Cfg.Topic.Name}
	}
	inst, _ := a.String("instance-id", "")
	wait, err := a.Bool("wait", true)
	if err != nil {
		return "", err
	}
	every, err := a.Duration("poll-every", 0)
	if err != nil {
		return "", err
	}
	id, err := r.client(c, name, false)
	if err != nil {
		return "", err
	}
	cs, ok := c.W.Node(id).(*client.Consumer)
	if !ok {
		return "", fmt.Errorf("%s is not a consumer (or is down)", name)
	}
	cfg := c.Cfg
	cfg.Consumer = cs.Config()
	if d, ok := c.GroupDefaults(gname); ok {
		memberFields(&cfg.Consumer, d)
	}
	if err := applySettings(a, &cfg, joinSettings); err != nil {
		return "", err
	}
	if err := cfg.Validate(); err != nil {
		return "", invalidConfig(err)
	}
	cc := cfg.Consumer
	if err := c.Subscribe(name, client.Subscribe{Group: gname, Topics: topics, InstanceID: inst, Config: &cc, PollEvery: every}); err != nil {
		return "", err
	}
	static := ""
	if inst != "" {
		static = ", group.instance.id=" + inst
	}
	if every > 0 {
		static += fmt.Sprintf("; polls every %s", every)
	}
	head := fmt.Sprintf("%s subscribes to %s in group %s (%s%s)", name, strings.Join(topics, ","), gname, memberText(cc), static)
	if !wait {
		c.W.RunFor(0)
		return head, nil
	}
	settled, err := waitSettled(r, c, gname, 2*time.Minute+cc.EffectiveRebalanceTimeout())
	if err != nil {
		return "", err
	}
	return head + "\n" + settled, nil
}

// waitSettled runs until the group is stable and every running subscribed consumer holds
// its assignment in the group's generation, or limit passes. It reports the outcome.
func waitSettled(r *Runner, c *cluster.Cluster, name string, limit time.Duration) (string, error) {
	end := c.W.Now().Add(limit)
	ok, err := r.wait("group "+name, func(w *sim.World) bool { return w.Now() > end || groupSettled(c, name) }, 50_000_000, sim.MaxTime)
	if err != nil {
		return "", err
	}
	if !ok || !groupSettled(c, name) {
		return fmt.Sprintf("not settled by %s: %s", c.W.Now(), groupLine(c.Group(name))), nil
	}
	return fmt.Sprintf("%s %s", c.W.Now(), groupLine(c.Group(name))), nil
}

// groupSettled: the coordinator has the group Stable, and every running consumer
// subscribed to it is a settled member of that generation.
func groupSettled(c *cluster.Cluster, name string) bool {
	g := c.Group(name)
	if g.State != "Stable" {
		return false
	}
	for _, m := range g.Consumers {
		if m.Status != sim.Up.String() || m.State == "left" {
			continue // down, paused, closed or refused: it will not settle by itself
		}
		if !m.Settled || m.Generation != g.Generation {
			return false
		}
		if g.ConsumerProtocol && !holdsItsAssignment(g, m) {
			return false
		}
	}
	return true
}

// holdsItsAssignment: a consumer-protocol member holds what the coordinator assigned it
// (a member learns of an assignment only at its next heartbeat, so the coordinator may
// be Stable before its members are).
func holdsItsAssignment(g cluster.GroupInfo, c cluster.ConsumerInfo) bool {
	for _, m := range g.Members {
		if m.ID == c.MemberID {
			return slices.Equal(m.Assignment, c.Owned)
		}
	}
	return false
}

func groupLine(g cluster.GroupInfo) string {
	gen := "generation"
	if g.ConsumerProtocol {
		gen = "group epoch"
	}
	s := fmt.Sprintf("group %s %s, %s %d", g.Name, orDash(g.State), gen, g.Generation)
	var parts []string
	for _, m := range g.Consumers {
		if m.Status != sim.Up.String() {
			parts = append(parts, fmt.Sprintf("%s %s", m.Name, m.Status))
			continue
		}
		if m.Fenced != "" {
			parts = append(parts, fmt.Sprintf("%s refused (%s)", m.Name, m.Fenced))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s", m.Name, proto.TPList(m.Owned)))
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, " ")
	}
	return s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "(no coordinator)"
	}
	return s
}

// groupConsumer finds a consumer node that is subscribed to a group.
func (r *Runner) groupConsumer(c *cluster.Cluster, name string) (sim.NodeID, *client.Consumer, error) {
	id, err := r.node(name)
	if err != nil {
		return 0, nil, err
	}
	cs, ok := c.W.Node(id).(*client.Consumer)
	if !ok {
		return 0, nil, fmt.Errorf("%s is not a running consumer (%s)", name, c.W.Status(id))
	}
	if _, ok := cs.Member(); !ok {
		return 0, nil, fmt.Errorf("%s has not joined a group", name)
	}
	return id, cs, nil
}

func cmdLeave(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	id, cs, err := r.groupConsumer(c, name)
	if err != nil {
		return "", err
	}
	mark := c.W.Trace().Len()
	if err := leaveGroup(r, c, id, cs, "the application closes the consumer"); err != nil {
		return "", err
	}
	return eventsOf(c, mark, name, "leave", "commit", "commit-failed"), nil
}

// leaveGroup has a member leave its group (commit, LeaveGroup) and runs until it has, or
// until a request timeout has passed.
func leaveGroup(r *Runner, c *cluster.Cluster, id sim.NodeID, cs *client.Consumer, why string) error {
	c.W.Inject(id, client.Leave{Reason: why}, 0)
	end := c.W.Now().Add(c.Cfg.Consumer.RequestTimeout)
	_, err := r.wait(c.W.Name(id)+"'s leave", func(w *sim.World) bool {
		st, _ := cs.Member()
		return w.Now() > end || st.State == "left"
	}, 10_000_000, sim.MaxTime)
	return err
}

// eventsOf renders the trace events of one node and kinds since mark.
func eventsOf(c *cluster.Cluster, mark int, node string, kinds ...string) string {
	var keep []sim.Event
	for _, e := range c.W.Trace().Since(mark) {
		if e.Node == node && slices.Contains(kinds, e.Kind) {
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		return "no events"
	}
	return formatEvents(keep)
}

func cmdConsumerCrash(r *Runner, a *Args) (string, error) {
	c, name, err := r.consumerWord(a)
	if err != nil {
		return "", err
	}
	after, err := a.Duration("after", 0)
	if err != nil {
		return "", err
	}
	crash, err := sim.After(0, sim.VerbCrash, name)
	if err != nil {
		return "", err
	}
	return r.faultNowOrLater(c, crash, after)
}

// faultNowOrLater applies a fault now, or schedules it after d.
func (r *Runner) faultNowOrLater(c *cluster.Cluster, act sim.Action, d time.Duration) (string, error) {
	if d > 0 {
		act.At = c.W.Now().Add(d)
		if err := c.W.SchedulePlan(sim.Plan{act}); err != nil {
			return "", err
		}
		return fmt.Sprintf("scheduled: %s", act), nil
	}
	mark := c.W.Trace().Len()
	if err := c.W.Apply(act); err != nil {
		return "", err
	}
	return formatEvents(c.W.Trace().Since(mark)), nil
}

// consumerWord reads the consumer named by the command's only word.
func (r *Runner) consumerWord(a *Args) (*cluster.Cluster, string, error) {
	c, err := r.needCluster()
	if err != nil {
		return nil, "", err
	}
	words := a.Words()
	if len(words) != 1 {
		return nil, "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	if !slices.ContainsFunc(c.Consumers, func(k cluster.Client) bool { return k.Name == words[0] }) {
		return nil, "", fmt.Errorf("%s is not a consumer", words[0])
	}
	return c, words[0], nil
}

func cmdConsumerPause(r *Runner, a *Args) (string, error) {
	c, name, err := r.consumerWord(a)
	if err != nil {
		return "", err
	}
	d, err := a.Duration("for", 0)
	if err != nil {
		return "", err
	}
	if d <= 0 {
		return "", fmt.Errorf("missing for=D; usage: %s", a.cmd.Usage)
	}
	after, err := a.Duration("after", 0)
	if err != nil {
		return "", err
	}
	pause, err := sim.After(0, sim.VerbPause, name)
	if err != nil {
		return "", err
	}
	resume, err := sim.After(0, sim.VerbResume, name)
	if err != nil {
		return "", err
	}
	resume.At = c.W.Now().Add(after + d)
	if err := c.W.SchedulePlan(sim.Plan{resume}); err != nil {
		return "", err
	}
	out, err := r.faultNowOrLater(c, pause, after)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s\nscheduled: %s", out, resume), nil
}

func cmdConsumerRestart(r *Runner, a *Args) (string, error) {
	c, name, err := r.consumerWord(a)
	if err != nil {
		return "", err
	}
	down, err := a.Duration("down", 5*time.Second)
	if err != nil {
		return "", err
	}
	id, cs, err := r.groupConsumer(c, name)
	if err != nil {
		return "", err
	}
	mark := c.W.Trace().Len()
	if err := leaveGroup(r, c, id, cs, "rolling restart"); err != nil {
		return "", err
	}
	c.W.Crash(id)
	restart, err := sim.After(0, sim.VerbRestart, name)
	if err != nil {
		return "", err
	}
	restart.At = c.W.Now().Add(down)
	if err := c.W.SchedulePlan(sim.Plan{restart}); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s\nscheduled: %s", eventsOf(c, mark, name, "leave", "commit", "commit-failed", "crash"), restart), nil
}

func cmdCommit(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	id, _, err := r.groupConsumer(c, name)
	if err != nil {
		return "", err
	}
	before := len(c.History.History())
	c.W.Inject(id, client.Commit{}, 0)
	c.W.RunFor(0)
	if !commitInvoked(c.History.History()[before:]) {
		return "no commit sent: the positions did not move since the last commit (or the consumer is busy)", nil
	}
	end := c.W.Now().Add(c.Cfg.Consumer.RequestTimeout + time.Second)
	if _, err := r.wait(name+"'s commit", func(w *sim.World) bool {
		return w.Now() > end || commitDone(c.History.History()[before:])
	}, 10_000_000, sim.MaxTime); err != nil {
		return "", err
	}
	var lines []string
	for _, op := range c.History.History()[before:] {
		if op.F == history.Commit && op.Type != history.Invoke {
			lines = append(lines, commitLine(op))
		}
	}
	if len(lines) == 0 {
		return "commit sent, no answer yet", nil
	}
	return strings.Join(lines, "\n"), nil
}

func commitInvoked(ops history.History) bool {
	return slices.ContainsFunc(ops, func(op history.Op) bool { return op.F == history.Commit })
}

func commitDone(ops history.History) bool {
	return slices.ContainsFunc(ops, func(op history.Op) bool { return op.F == history.Commit && op.Type != history.Invoke })
}

func commitLine(op history.Op) string {
	var os []string
	for _, o := range op.Commit.Offsets {
		os = append(os, fmt.Sprintf("%s@%d", tpName(o.TopicPartition), o.Offset))
	}
	s := fmt.Sprintf("commit %s %s", strings.Join(os, " "), op.Type)
	if op.Error != "" {
		s += ": " + op.Error
	}
	return s
}

// consumeGroup is consume for a group member: poll until a poll brings nothing new.
func consumeGroup(r *Runner, c *cluster.Cluster, id sim.NodeID, polls int) (string, error) {
	mark := len(c.History.History())
	read, stopped, err := pollUntilQuiet(r, c, id, polls)
	if err != nil {
		return "", err
	}
	order := slices.Collect(maps.Keys(read))
	slices.SortFunc(order, proto.CompareTP)
	var lines []string
	for _, tp := range order {
		lines = append(lines, fmt.Sprintf("%s: %s", tp, recordsText(read[tp])))
	}
	if len(lines) == 0 {
		lines = append(lines, "(nothing)")
	}
	for _, op := range c.History.History()[mark:] {
		switch {
		case op.F == history.Poll && (op.Type == history.Fail || op.Type == history.Info):
			lines = append(lines, fmt.Sprintf("poll %s: %s", op.Type, op.Error))
		case op.F == history.Commit && op.Type != history.Invoke && op.Type != history.Ok:
			lines = append(lines, commitLine(op))
		}
	}
	if stopped != "" {
		lines = append(lines, stopped)
	}
	return strings.Join(lines, "\n"), nil
}

func showGroup(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if len(words) != 1 {
		return "", fmt.Errorf("usage: show group NAME")
	}
	g := c.Group(words[0])
	var lines []string
	coord := "no coordinator loaded"
	if g.Loaded {
		coord = "coordinator " + g.Coordinator
	}
	if g.ConsumerProtocol {
		lines = append(lines, consumerGroupLines(g, coord)...)
	} else {
		lines = append(lines, fmt.Sprintf("group %s: %s, generation %d, leader %s, assignor %s, %d rebalances; %s (%s/%d)",
			g.Name, orDash(g.State), g.Generation, orNoneID(g.Leader), orNoneID(g.Assignor), g.Rebalances, coord, proto.OffsetsTopic, g.Partition))
	}
	for _, m := range g.Members {
		if g.ConsumerProtocol {
			break
		}
		inst := ""
		if m.InstanceID != "" {
			inst = ", instance " + m.InstanceID
		}
		lines = append(lines, fmt.Sprintf("  member %s (client %s%s): %s", m.ID, m.ClientID, inst, proto.TPList(m.Assignment)))
	}
	for _, m := range g.Consumers {
		if m.Status != sim.Up.String() && m.Status != sim.Paused.String() {
			lines = append(lines, fmt.Sprintf("  consumer %s: %s", m.Name, m.Status))
			continue
		}
		gen := "generation"
		if g.ConsumerProtocol {
			gen = "epoch"
		}
		lines = append(lines, fmt.Sprintf("  consumer %s: %s, %s, member %s, %s %d, holds %s", m.Name, m.Status, m.State,
			orNoneID(m.MemberID), gen, m.Generation, proto.TPList(m.Owned)))
	}
	lines = append(lines, lagLines(g)...)
	if len(g.Unowned) > 0 {
		var us []string
		for _, u := range g.Unowned {
			if u.Gaps > 0 {
				us = append(us, fmt.Sprintf("%s %s in %d", u.TP, u.Time, u.Gaps))
			}
		}
		if len(us) == 0 {
			us = append(us, "none")
		}
		lines = append(lines, "  partitions left without an owner (time, in how many gaps): "+strings.Join(us, ", "))
	}
	if g.StaleAccepted > 0 {
		lines = append(lines, fmt.Sprintf("  commits accepted from stale members: %d", g.StaleAccepted))
	}
	return strings.Join(lines, "\n"), nil
}

// consumerGroupLines are a consumer-protocol group's state and members at the coordinator.
func consumerGroupLines(g cluster.GroupInfo, coord string) []string {
	lines := []string{fmt.Sprintf("group %s: %s, group epoch %d, target assignment epoch %d, server assignor %s, %d target assignments; %s (%s/%d)",
		g.Name, g.State, g.Generation, g.AssignmentEpoch, g.Assignor, g.Rebalances, coord, proto.OffsetsTopic, g.Partition)}
	for _, m := range g.Members {
		inst := ""
		if m.InstanceID != "" {
			inst = ", instance " + m.InstanceID
		}
		s := fmt.Sprintf("  member %s (client %s%s): epoch %d, %s, %s", m.ID, m.ClientID, inst, m.Epoch, m.Reconcile, proto.TPList(m.Assignment))
		if len(m.Revoking) > 0 {
			s += ", revoking " + proto.TPList(m.Revoking)
		}
		lines = append(lines, s)
	}
	return lines
}

func orNoneID(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func lagLines(g cluster.GroupInfo) []string {
	var lines []string
	for _, o := range g.Offsets {
		committed, hw, lag := "none", "?", "?"
		if o.Committed >= 0 {
			committed = fmt.Sprint(o.Committed)
		}
		if o.HW >= 0 {
			hw = fmt.Sprint(o.HW)
		}
		if o.Lag >= 0 {
			lag = fmt.Sprint(o.Lag)
		}
		lines = append(lines, fmt.Sprintf("  %s: committed %s, HW %s, lag %s", o.TP, committed, hw, lag))
	}
	lines = append(lines, fmt.Sprintf("  lag %d", g.TotalLag()))
	return lines
}

func showLag(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	names := words
	if len(names) == 0 {
		names = c.Groups()
	}
	if len(names) == 0 {
		return "no groups", nil
	}
	var lines []string
	for _, n := range names {
		g := c.Group(n)
		lines = append(lines, fmt.Sprintf("group %s: lag %d", n, g.TotalLag()))
		lines = append(lines, lagLines(g)[:len(g.Offsets)]...)
	}
	return strings.Join(lines, "\n"), nil
}
