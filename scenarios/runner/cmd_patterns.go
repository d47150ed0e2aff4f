package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/checker"
	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Delivery-pattern commands: delayed messages (delay), tag filters (tags), and the views
// the patterns need (show consumers, show delayed, lag-timeline). The settings below join
// the consumer settings (cluster, consumer and join commands) and the cluster settings.

// patternConsumerSettings are a consumer's pattern settings.
var patternConsumerSettings = []setting{
	{"poison", "records whose processing fails: a value, key=PATTERN, with :N only the first N attempts; e.g. poison=(v3, v5:1)", func(a *Args, c *proto.Config) error {
		if !a.Has("poison") {
			return nil
		}
		var rules []proto.PoisonRule
		for _, s := range a.List("poison") {
			if s == "" {
				continue
			}
			r, err := proto.ParsePoisonRule(s)
			if err != nil {
				return err
			}
			rules = append(rules, r)
		}
		c.Consumer.Patterns.Poison = rules
		return nil
	}},
	{"retry-delays", "non-blocking retries: delays of the retry topics T.retry.1, T.retry.2, ...; e.g. retry-delays=(1s, 5s)", func(a *Args, c *proto.Config) error {
		if !a.Has("retry-delays") {
			return nil
		}
		var ds []time.Duration
		for _, s := range a.List("retry-delays") {
			if s == "" {
				continue
			}
			d, err := sim.ParseDuration(s)
			if err != nil {
				return fmt.Errorf("retry-delays=: %v", err)
			}
			ds = append(ds, d)
		}
		c.Consumer.Patterns.RetryDelays = ds
		return nil
	}},
	boolSetting("dlq", "send a record that failed every attempt to the dead-letter topic T.dlq", func(c *proto.Config) *bool { return &c.Consumer.Patterns.DeadLetter }),
	{"tags", "tag filter: deliver only records with one of these tags, e.g. tags=(red, blue)", func(a *Args, c *proto.Config) error {
		if !a.Has("tags") {
			return nil
		}
		c.Consumer.Patterns.Tags = slices.DeleteFunc(slices.Clone(a.List("tags")), func(s string) bool { return s == "" })
		return nil
	}},
	{"tag-filter", "where the tag filter runs: broker (fetches return matching records only) or client", func(a *Args, c *proto.Config) (err error) {
		c.Consumer.Patterns.FilterAt, err = a.String("tag-filter", c.Consumer.Patterns.FilterAt)
		return
	}},
}

// patternBrokerSettings are the log's retention settings, for the cluster command.
var patternBrokerSettings = []setting{
	{"retention-ms", "retention.ms: delete rolled segments whose newest record is older (-1: keep forever, the default)", func(a *Args, c *proto.Config) error {
		s, err := a.String("retention-ms", "")
		switch {
		case err != nil || s == "":
			return err
		case s == "-1" || s == "unlimited":
			c.Broker.Log.RetentionAge = -1
			return nil
		}
		d, err := sim.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("retention-ms=: %v (or -1 for no limit)", err)
		}
		c.Broker.Log.RetentionAge = d
		return nil
	}},
	{"retention-bytes", "retention.bytes: delete the oldest rolled segments while the rest holds this many bytes (-1: no limit)", func(a *Args, c *proto.Config) error {
		n, err := a.Int("retention-bytes", int(c.Broker.Log.RetentionBytes), -1, 1<<40)
		c.Broker.Log.RetentionBytes = int64(n)
		return err
	}},
	{"segment-bytes", "segment.bytes: roll the active segment at this size (mqsim: 4096)", func(a *Args, c *proto.Config) error {
		n, err := a.Int("segment-bytes", int(c.Broker.Log.SegmentBytes), 64, 1<<30)
		c.Broker.Log.SegmentBytes = int64(n)
		return err
	}},
	durSetting("segment-ms", "segment.ms: roll the active segment when its first record is this old (mqsim: 10s)", func(c *proto.Config) *time.Duration { return &c.Broker.Log.SegmentAge }),
	durSetting("retention-check", "log.retention.check.interval.ms (5m)", func(c *proto.Config) *time.Duration { return &c.Broker.RetentionCheckInterval }),
	{"cleanup-policy", "cleanup.policy of the cluster's topics: delete (the default), compact, or compact,delete", func(a *Args, c *proto.Config) error {
		s, err := a.String("cleanup-policy", "")
		if err != nil || s == "" {
			return err
		}
		c.Broker.Log.Compaction.Policy, err = wal.ParseCleanupPolicy(s)
		return err
	}},
	{"min-cleanable-dirty-ratio", "min.cleanable.dirty.ratio: clean a log when its dirty bytes are more than this share (0.5), in percent: 50", func(a *Args, c *proto.Config) error {
		n, err := a.Int("min-cleanable-dirty-ratio", int(c.Broker.Log.Compaction.MinCleanableDirtyRatio*100), 0, 100)
		c.Broker.Log.Compaction.MinCleanableDirtyRatio = float64(n) / 100
		return err
	}},
	durSetting("min-compaction-lag", "min.compaction.lag.ms: a record stays uncompacted at least this long (0)", func(c *proto.Config) *time.Duration { return &c.Broker.Log.Compaction.MinCompactionLag }),
	durSetting("delete-retention", "delete.retention.ms: a tombstone survives this long after its first cleaning (1d)", func(c *proto.Config) *time.Duration { return &c.Broker.Log.Compaction.DeleteRetention }),
	durSetting("cleaner-backoff", "log.cleaner.backoff.ms: how often the log cleaner runs (15s)", func(c *proto.Config) *time.Duration { return &c.Broker.CleanerBackoff }),
}

func init() {
	register(&Command{
		Name:  "delay",
		Usage: "delay [producer=P] [topic=T] [partition=N] [key=K] [tags=(..)] value=V after=D | delay [producer=P] cancel=T/N@OFFSET",
		Help:  "send a delayed message (the leader holds it in a timing wheel and appends it when due) and run until the leader answers; or cancel one by its id",
		Keys:  []string{"producer", "topic", "partition", "key", "tags", "value", "after", "cancel"},
		Run:   cmdDelay,
	})
	register(&Command{
		Name:  "tags",
		Usage: "tags consumer=C match=(TAG, ...) [at=broker|client]",
		Help:  "set a consumer's tag filter now (match=() removes it): at the broker, fetches return only matching records; at the client, it drops the others",
		Keys:  []string{"consumer", "match", "at"},
		Run:   cmdTags,
	})
	register(&Command{
		Name:  "lag-timeline",
		Usage: "lag-timeline group=G every=D for=D",
		Help:  "run for D, sampling the group's lag every D: how a backlog builds up and drains",
		Keys:  []string{"group", "every", "for"},
		Run:   cmdLagTimeline,
	})
	showSubjects["consumers"] = showConsumers
	showSubjects["delayed"] = showDelayed
}

// patternAllowances are the queue anomalies a run's patterns make expected: a consumer
// that filters by tag skips offsets on purpose, so poll-skip is what it promises.
func patternAllowances(c *cluster.Cluster) []checker.Anomaly {
	filtering := func(cfg proto.ConsumerConfig) bool { _, ok := cfg.Patterns.Filtering(); return ok }
	found := filtering(c.Cfg.Consumer)
	for _, cl := range c.Consumers {
		if cs := c.Consumer(cl.Name); cs != nil && filtering(cs.Config()) {
			found = true
		}
		if s, ok := c.Subscription(cl.Name); ok && s.Config != nil && filtering(*s.Config) {
			found = true
		}
	}
	if !found {
		return nil
	}
	return []checker.Anomaly{checker.PollSkip, checker.IntPollSkip}
}

// recordNote annotates a record of show log with what its headers say.
func recordNote(rec wal.Record) string {
	var notes []string
	for _, h := range rec.Headers {
		v := string(h.Value)
		switch h.Key {
		case proto.HeaderTags:
			notes = append(notes, "tags="+v)
		case proto.HeaderDeliverAt:
			if ns, err := strconv.ParseInt(v, 10, 64); err == nil {
				v = sim.Time(ns).String()
			}
			notes = append(notes, "scheduled until "+v+", hidden from consumers")
		case proto.HeaderDelayCancel:
			notes = append(notes, "cancels the delayed message at offset "+v+", hidden from consumers")
		case proto.HeaderDelayedFrom:
			notes = append(notes, "released from offset "+v)
		case proto.HeaderRetryAttempt:
			notes = append(notes, "failed "+v+" times")
		case proto.HeaderRetryOrigin:
			notes = append(notes, "from "+v)
		case proto.HeaderRetryDue:
			if ns, err := strconv.ParseInt(v, 10, 64); err == nil {
				v = sim.Time(ns).String()
			}
			notes = append(notes, "due "+v)
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// ParseDelayID reads a delayed message's id, "t/0@3".
func ParseDelayID(s string) (proto.TP, int64, error) {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return proto.TP{}, 0, fmt.Errorf("delay id %q: want TOPIC/PARTITION@OFFSET, e.g. t/0@3", s)
	}
	tp, err := proto.ParseTP(s[:at])
	if err != nil {
		return proto.TP{}, 0, err
	}
	off, err := strconv.ParseInt(s[at+1:], 10, 64)
	if err != nil || off < 0 {
		return proto.TP{}, 0, fmt.Errorf("delay id %q: bad offset", s)
	}
	return tp, off, nil
}

func cmdDelay(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, _ := a.String("producer", "p1")
	if id, _ := a.String("cancel", ""); id != "" {
		tp, off, err := ParseDelayID(id)
		if err != nil {
			return "", err
		}
		return delayCancel(r, c, name, tp, off)
	}
	value, err := a.Required("value")
	if err != nil {
		return "", err
	}
	after, err := a.Duration("after", 0)
	if err != nil {
		return "", err
	}
	if after <= 0 {
		return "", fmt.Errorf("after=D: want a positive delay; usage: %s", a.cmd.Usage)
	}
	topic, _ := a.String("topic", c.Cfg.Topic.Name)
	key, _ := a.String("key", "")
	part, err := a.Int("partition", -1, -1, 1000)
	if err != nil {
		return "", err
	}
	if err := checkPartition(c, topic, part); err != nil {
		return "", err
	}
	tags := a.List("tags")
	if r.sent[value] {
		return "", fmt.Errorf("value %q was sent before; values must be unique so the checkers can follow each one", value)
	}
	id, err := r.client(c, name, true)
	if err != nil {
		return "", err
	}
	if _, ok := c.W.Node(id).(*client.Producer); !ok {
		return "", fmt.Errorf("%s is not a producer (or is down)", name)
	}
	mark := c.W.Trace().Len()
	c.W.Inject(id, client.Send{Topic: topic, Key: key, Value: value, Partition: int32(part), Tags: tags, Delay: after}, 0)
	r.sent[value] = true
	end := c.W.Now().Add(c.Cfg.Producer.DeliveryTimeout + time.Second)
	completed := allCompleted(c.History, []string{value})
	if _, err := r.wait(name+"'s send", func(w *sim.World) bool { return w.Now() > end || completed() }, 10_000_000, sim.MaxTime); err != nil {
		return "", err
	}
	lines := []string{delayOutcome(c, value)}
	for _, e := range c.W.Trace().Since(mark) {
		if e.Kind == "schedule" || e.Kind == "reject" {
			lines = append(lines, e.String())
		}
	}
	return strings.Join(lines, "\n"), nil
}

// delayOutcome renders how a delayed send ended, from the history.
func delayOutcome(c *cluster.Cluster, value string) string {
	for _, op := range slices.Backward(c.History.History()) {
		if op.F != history.Send || op.Send.Value != value || op.Type == history.Invoke {
			continue
		}
		switch op.Type {
		case history.Info:
			if strings.HasPrefix(op.Error, "scheduled") {
				return fmt.Sprintf("%s: %s", value, op.Error)
			}
			return fmt.Sprintf("%s: unknown: %s", value, op.Error)
		case history.Fail:
			return fmt.Sprintf("%s: failed: %s", value, op.Error)
		default:
			return fmt.Sprintf("%s: ok", value)
		}
	}
	return value + ": pending"
}

func delayCancel(r *Runner, c *cluster.Cluster, name string, tp proto.TP, off int64) (string, error) {
	id, err := r.node(name)
	if err != nil {
		return "", err
	}
	if _, ok := c.W.Node(id).(*client.Producer); !ok {
		return "", fmt.Errorf("%s is not a running producer", name)
	}
	mark := c.W.Trace().Len()
	c.W.Inject(id, client.CancelDelay{TP: tp, Offset: off}, 0)
	done := func() bool {
		for _, e := range c.W.Trace().Since(mark) {
			if r, ok := e.Data.(client.CancelResult); ok && e.Node == name && r.TP == tp && r.Offset == off {
				return true
			}
		}
		return false
	}
	end := c.W.Now().Add(time.Minute)
	if _, err := r.wait("the cancel", func(w *sim.World) bool { return w.Now() > end || done() }, 10_000_000, sim.MaxTime); err != nil {
		return "", err
	}
	var keep []sim.Event
	for _, e := range c.W.Trace().Since(mark) {
		switch e.Kind {
		case "delay-cancel", "cancel-result", "delay-reject":
			keep = append(keep, e)
		}
	}
	if len(keep) == 0 {
		return "no answer yet", nil
	}
	return formatEvents(keep), nil
}

func cmdTags(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	at, _ := a.String("at", proto.FilterAtBroker)
	tags := slices.DeleteFunc(slices.Clone(a.List("match")), func(s string) bool { return s == "" })
	p := proto.ConsumerPatterns{Tags: tags, FilterAt: at}
	if err := p.Validate(); err != nil {
		return "", err
	}
	id, err := r.client(c, name, false)
	if err != nil {
		return "", err
	}
	if _, ok := c.W.Node(id).(*client.Consumer); !ok {
		return "", fmt.Errorf("%s is not a consumer (or is down)", name)
	}
	mark := c.W.Trace().Len()
	c.W.Inject(id, client.SetTags{Tags: tags, At: at}, 0)
	c.W.RunFor(0)
	return eventsOf(c, mark, name, "tags"), nil
}

func cmdLagTimeline(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("group")
	if err != nil {
		return "", err
	}
	every, err := a.Duration("every", time.Second)
	if err != nil {
		return "", err
	}
	total, err := a.Duration("for", 0)
	if err != nil {
		return "", err
	}
	if every <= 0 || total < every {
		return "", fmt.Errorf("want every=D > 0 and for=D at least every; usage: %s", a.cmd.Usage)
	}
	if total/every > 200 {
		return "", fmt.Errorf("for=%s every=%s is %d samples: at most 200", total, every, total/every)
	}
	const width = 40
	var samples []int64
	var times []sim.Time
	peak := int64(1)
	for t := time.Duration(0); t < total; t += every {
		if err := r.runUntilTime("lag-timeline", c.W.Now().Add(every)); err != nil {
			return "", err
		}
		lag := c.Group(name).TotalLag()
		samples, times = append(samples, lag), append(times, c.W.Now())
		peak = max(peak, lag)
	}
	var lines []string
	for i, lag := range samples {
		bar := strings.Repeat("#", int((lag*width+peak-1)/peak))
		lines = append(lines, fmt.Sprintf("%12s lag %4d %s", times[i], lag, bar))
	}
	return strings.Join(lines, "\n"), nil
}

// showConsumers prints what each consumer got: records, polls, bytes fetched, the tag
// filter, and what its processing failures became.
func showConsumers(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, cl := range c.Consumers {
		cs := c.Consumer(cl.Name)
		if cs == nil {
			lines = append(lines, cl.Name+": "+c.W.Status(cl.ID).String())
			continue
		}
		who := cl.Name
		if st, ok := cs.Member(); ok {
			who += " (group " + st.Group + ")"
		}
		st := cs.PatternStats()
		line := fmt.Sprintf("%s: consumed %d in %d polls; fetched %d records, %d bytes", who, cs.Consumed(), cs.Polls(), st.FetchedRecords, st.FetchedBytes)
		if at, ok := cs.Patterns().Filtering(); ok {
			line += fmt.Sprintf("; tags (%s) at the %s", strings.Join(cs.Patterns().Tags, ","), at)
			if st.Filtered > 0 {
				line += fmt.Sprintf(", %d dropped by the client", st.Filtered)
			}
		}
		if st.Failures > 0 {
			line += fmt.Sprintf("; %d failed attempts (%d in place), %d to retry topics, %d dead-lettered, %d dropped",
				st.Failures, st.InPlace, st.Retried, st.DeadLettered, st.Dropped)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "no consumers", nil
	}
	return strings.Join(lines, "\n"), nil
}

// showDelayed prints the delayed messages each leader holds in its timing wheel.
func showDelayed(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var lines []string
	for i, id := range c.Brokers {
		b := c.Broker(i)
		if b == nil {
			continue
		}
		for _, m := range b.Scheduled() {
			lines = append(lines, delayedLine(c.W.Name(id), m))
		}
	}
	if len(lines) == 0 {
		return "no delayed messages pending", nil
	}
	return strings.Join(lines, "\n"), nil
}

func delayedLine(node string, m broker.ScheduledMessage) string {
	return fmt.Sprintf("%s holds %s@%d %s, due %s", node, m.TP, m.Offset, m.Value, m.Due)
}
