package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Share-group commands (KIP-932): add a share consumer, close it, and look at a share
// group. A share consumer crashes and restarts as any node does (crash C, restart C): a
// crash sends nothing, so the records it held come back when their acquisition locks
// expire; a restart joins again as a new member.

// shareConsumerSettings are the share-consumer command's consumer keys: the processing
// time, max.poll.records and the poison rules of an ordinary consumer.
var shareConsumerSettings = pickSettings(append(slices.Clone(consumerSettings), patternConsumerSettings...), "processing", "max-poll-records", "poison")

// shareClusterSettings are the cluster command's share-group keys (proto.ShareConfig):
// the brokers' group.share.* settings and the group's share.auto.offset.reset. Their
// ranges are checked by the configuration's validation, which names Kafka's key.
var shareClusterSettings = []setting{
	durSetting("share-lock-duration", "group.share.record.lock.duration.ms: how long a share consumer holds a record it acquired (1s to 1h; default 30s)",
		func(c *proto.Config) *time.Duration { return &c.Share.RecordLockDuration }),
	intSetting("share-delivery-limit", "group.share.delivery.count.limit: a record delivered this many times is archived instead of made available again (2 to 10; default 5)",
		2, 10, func(c *proto.Config) *int { return &c.Share.DeliveryCountLimit }),
	intSetting("share-max-record-locks", "group.share.partition.max.record.locks: the in-flight window of a share-partition, SPSO to SPEO (1 to 10000; default 2000)",
		1, 10000, func(c *proto.Config) *int { return &c.Share.PartitionMaxRecordLocks }),
	durSetting("share-session-timeout", "group.share.session.timeout.ms: the group coordinator removes a share member it has not heard from for this long (default 45s)",
		func(c *proto.Config) *time.Duration { return &c.Share.SessionTimeout }),
	durSetting("share-heartbeat", "group.share.heartbeat.interval.ms (default 5s)",
		func(c *proto.Config) *time.Duration { return &c.Share.HeartbeatInterval }),
	setting{"share-auto-offset-reset", "share.auto.offset.reset: where a new share-partition starts, latest (the default) or earliest", func(a *Args, c *proto.Config) error {
		s, err := a.String("share-auto-offset-reset", c.Share.AutoOffsetReset)
		if err != nil {
			return err
		}
		if s != "latest" && s != "earliest" {
			return fmt.Errorf("share-auto-offset-reset=%s: want latest or earliest", s)
		}
		c.Share.AutoOffsetReset = s
		return nil
	}},
}

// shareLine is the cluster command's line for share-group settings, printed when they
// differ from Kafka's defaults.
func shareLine(s proto.ShareConfig) string {
	return fmt.Sprintf("share groups: record lock %s, delivery count limit %d, max record locks %d, session timeout %s, heartbeat %s, auto offset reset %s",
		sim.FormatDuration(s.RecordLockDuration), s.DeliveryCountLimit, s.PartitionMaxRecordLocks,
		sim.FormatDuration(s.SessionTimeout), sim.FormatDuration(s.HeartbeatInterval), s.AutoOffsetReset)
}

// pickSettings are the settings of ss named by keys, in keys' order.
func pickSettings(ss []setting, keys ...string) []setting {
	var out []setting
	for _, k := range keys {
		if i := slices.IndexFunc(ss, func(s setting) bool { return s.key == k }); i >= 0 {
			out = append(out, ss[i])
		}
	}
	return out
}

func init() {
	register(&Command{
		Name:  "share-consumer",
		Usage: "share-consumer name=C group=G topics=(T, ...) [ack=explicit|implicit] [poison=(V, key=PATTERN, ...)] [processing=D] [max-poll-records=N] [reject-poison=BOOL]",
		Help: "add a share consumer (KIP-932) of share group G and start it: it joins (ShareGroupHeartbeat), fetches from each assigned partition's leader (ShareFetch) " +
			"and acknowledges every record: ack=implicit (the default, Kafka's) accepts each poll's records at the next poll; ack=explicit accepts what it processed and " +
			"releases a record its poison rules make fail (reject-poison=true rejects it instead), so the delivery count limit archives a poison record",
		Keys: append(settingKeys(shareConsumerSettings), "name", "group", "topics", "ack", "reject-poison"),
		Run:  cmdShareConsumer,
	})
	register(&Command{
		Name:  "share-close",
		Usage: "share-close C [wait=BOOL]",
		Help: "close a share consumer gracefully: a ShareAcknowledge with session epoch -1 to each leader (its pending acknowledgements, and releases of what it still held), " +
			"then a leave heartbeat (epoch -1); unless wait=false, run until it has left (at most its request timeout)",
		Keys: []string{"wait"},
		Run:  cmdShareClose,
	})
	showSubjects["share-group"] = showShareGroup
	showSubjects["share-partition"] = showSharePartition
}

func cmdShareConsumer(r *Runner, a *Args) (string, error) {
	c, name, cfg, err := clientConfig(r, a, shareConsumerSettings)
	if err != nil {
		return "", err
	}
	group, err := a.Required("group")
	if err != nil {
		return "", err
	}
	topics := slices.DeleteFunc(a.List("topics"), func(t string) bool { return t == "" })
	if len(topics) == 0 {
		return "", fmt.Errorf("share-consumer %s: topics=(T, ...) is required: the topics share group %s consumes", name, group)
	}
	for _, t := range topics {
		// The topics asked for, not the active controller's view: a share consumer may
		// start while the controller is down.
		if _, ok := c.Topic(t); !ok {
			return "", fmt.Errorf("share-consumer %s: topics=(%s): no topic %q in the cluster", name, strings.Join(topics, ", "), t)
		}
	}
	ack, err := a.String("ack", proto.AckImplicit)
	if err != nil {
		return "", err
	}
	reject, err := a.Bool("reject-poison", false)
	if err != nil {
		return "", err
	}
	opt := client.ShareOptions{Group: group, Topics: topics, AckMode: ack, RejectPoison: reject}
	if err := opt.Validate(); err != nil {
		return "", fmt.Errorf("share-consumer %s: %v", name, err)
	}
	if reject && !opt.Explicit() {
		return "", fmt.Errorf("share-consumer %s: reject-poison=true needs ack=explicit: in implicit mode every record is accepted", name)
	}
	if _, ok := c.W.Lookup(name); ok {
		return "", fmt.Errorf("share-consumer %s: a node named %s exists already", name, name)
	}
	if _, err := c.AddShareConsumer(name, cfg.Consumer, opt); err != nil {
		return "", err
	}
	c.W.RunFor(0)
	s := fmt.Sprintf("share consumer %s: share group %s, topics %s, acknowledgement %s, processing=%s max-poll-records=%d",
		name, group, strings.Join(topics, ","), ack, cfg.Consumer.ProcessingTime, cfg.Consumer.MaxPollRecords)
	if rules := cfg.Consumer.Patterns.Poison; len(rules) > 0 {
		var rs []string
		for _, p := range rules {
			rs = append(rs, p.String())
		}
		verb := "released"
		if reject {
			verb = "rejected"
		} else if !opt.Explicit() {
			verb = "accepted all the same (implicit)"
		}
		s += fmt.Sprintf(", poison (%s) %s", strings.Join(rs, ", "), verb)
	}
	return s, nil
}

func (r *Runner) shareConsumerWord(a *Args) (*cluster.Cluster, cluster.Client, error) {
	c, err := r.needCluster()
	if err != nil {
		return nil, cluster.Client{}, err
	}
	words := a.Words()
	if len(words) != 1 {
		return nil, cluster.Client{}, fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	i := slices.IndexFunc(c.ShareConsumers, func(k cluster.ShareClient) bool { return k.Name == words[0] })
	if i < 0 {
		return nil, cluster.Client{}, fmt.Errorf("%s is not a share consumer", words[0])
	}
	return c, c.ShareConsumers[i].Client, nil
}

func cmdShareClose(r *Runner, a *Args) (string, error) {
	c, sc, err := r.shareConsumerWord(a)
	if err != nil {
		return "", err
	}
	wait, err := a.Bool("wait", true)
	if err != nil {
		return "", err
	}
	s := c.ShareConsumer(sc.Name)
	if s == nil {
		return "", fmt.Errorf("share consumer %s is down", sc.Name)
	}
	mark := c.W.Trace().Len()
	c.W.Inject(sc.ID, client.ShareClose{}, 0)
	if !wait {
		c.W.RunFor(0)
		return eventsOf(c, mark, sc.Name, "closing", "share-ack", "left"), nil
	}
	// Bounded: the closing ShareAcknowledges time out after request.timeout.ms.
	deadline := c.W.Now().Add(s.Config().RequestTimeout + time.Second)
	for c.W.Now() < deadline && !s.Closed() {
		c.W.RunFor(10 * time.Millisecond)
	}
	return eventsOf(c, mark, sc.Name, "closing", "share-ack", "left"), nil
}

// showShareGroup prints a share group's state at its coordinator and its share consumers.
func showShareGroup(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if len(words) != 1 {
		return "", fmt.Errorf("usage: show share-group NAME")
	}
	name := words[0]
	var lines []string
	sg, coord, ok := c.ShareGroup(name)
	switch {
	case ok:
		lines = append(lines, fmt.Sprintf("share group %s: %s, group epoch %d, target assignment epoch %d, assignor %s, %d target assignments; coordinator %s",
			name, sg.StateName(), sg.Epoch, sg.AssignmentEpoch, "simple", sg.Rebalances, coord))
		for _, m := range sg.Members() {
			lines = append(lines, fmt.Sprintf("  member %s (client %s): epoch %d, %s", m.ID, m.ClientID, m.Epoch, proto.TPList(m.Assigned)))
		}
	case coord != "":
		lines = append(lines, fmt.Sprintf("share group %s: unknown to its coordinator %s", name, coord))
	default:
		lines = append(lines, fmt.Sprintf("share group %s: no coordinator loaded", name))
	}
	for _, k := range c.ShareConsumers {
		if k.Group != name {
			continue
		}
		s := c.ShareConsumer(k.Name)
		if s == nil {
			lines = append(lines, fmt.Sprintf("  share consumer %s: %s", k.Name, c.W.Status(k.ID)))
			continue
		}
		state := "running"
		if s.Closed() {
			state = "closed"
		}
		lines = append(lines, fmt.Sprintf("  share consumer %s: %s, member %s, epoch %d, fetches from %s; %d polls, %d records acquired, acked %d accept / %d release / %d reject",
			k.Name, state, orNoneID(s.MemberID()), s.Epoch(), proto.TPList(s.Assignment()), s.Polls, s.Acquired,
			s.Acked[proto.AckAccept], s.Acked[proto.AckRelease], s.Acked[proto.AckReject]))
	}
	return strings.Join(lines, "\n"), nil
}

// showSharePartition prints the in-flight window a share-partition's leader keeps for a
// group: the SPSO and SPEO, and each record of the window with its state, delivery count
// and the member holding it.
func showSharePartition(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if len(words) != 2 {
		return "", fmt.Errorf("usage: show share-partition GROUP T/P")
	}
	tp, err := proto.ParseTP(words[1])
	if err != nil {
		return "", fmt.Errorf("show share-partition: %v", err)
	}
	key := proto.SharePartitionKey{Group: words[0], TP: tp}
	i, ok := c.Leader(tp)
	if !ok {
		return fmt.Sprintf("share-partition %s: %s has no leader", key, tp), nil
	}
	p := c.Broker(i).SharePartition(key)
	if p == nil {
		return fmt.Sprintf("share-partition %s: leader %s keeps no window for it (no share consumer fetched it yet, or its state is not read yet)", key, c.W.Name(c.Brokers[i])), nil
	}
	lines := []string{fmt.Sprintf("share-partition %s at leader %s: SPSO %d, SPEO %d, %d in flight", key, c.W.Name(c.Brokers[i]), p.Start(), p.End(), p.InFlight())}
	for off := p.Start(); off < p.Start()+int64(p.InFlight()); off++ {
		state, count, member := p.Record(off)
		line := fmt.Sprintf("  %d: %s, delivery count %d", off, state, count)
		if state == proto.Acquired {
			line += ", held by " + member
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), nil
}
