package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/broker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// Cluster commands: build a Kafka-style cluster, make topics, look at partitions.

// setting is one configuration key a scenario may give to cluster (and, for topic keys,
// to topic).
type setting struct {
	key   string
	help  string
	apply func(a *Args, c *proto.Config) error
}

func durSetting(key, help string, field func(*proto.Config) *time.Duration) setting {
	return setting{key, help, func(a *Args, c *proto.Config) (err error) {
		p := field(c)
		*p, err = a.Duration(key, *p)
		return
	}}
}

func intSetting(key, help string, lo, hi int, field func(*proto.Config) *int) setting {
	return setting{key, help, func(a *Args, c *proto.Config) (err error) {
		p := field(c)
		*p, err = a.Int(key, *p, lo, hi)
		return
	}}
}

func boolSetting(key, help string, field func(*proto.Config) *bool) setting {
	return setting{key, help, func(a *Args, c *proto.Config) (err error) {
		p := field(c)
		*p, err = a.Bool(key, *p)
		return
	}}
}

// topicSettings apply to the cluster's default topic and to the topic command.
var topicSettings = []setting{
	intSetting("partitions", "partitions per topic", 0, 1000, func(c *proto.Config) *int { return &c.Topic.Partitions }),
	intSetting("rf", "replication factor", 0, 64, func(c *proto.Config) *int { return &c.Topic.ReplicationFactor }),
	intSetting("min-isr", "min.insync.replicas", 0, 64, func(c *proto.Config) *int { return &c.Topic.MinInsyncReplicas }),
	boolSetting("unclean", "unclean.leader.election.enable", func(c *proto.Config) *bool { return &c.Topic.UncleanLeaderElection }),
}

// producerSettings apply to the cluster's default producer config and to the producer
// command.
var producerSettings = []setting{
	setting{"acks", "producer acks: 0, 1 or all", func(a *Args, c *proto.Config) error {
		s, err := a.String("acks", "")
		switch {
		case err != nil || s == "":
			return err
		case s == "all" || s == "-1":
			c.Producer.Acks = proto.AcksAll
		case s == "1":
			c.Producer.Acks = proto.AcksLeader
		case s == "0":
			c.Producer.Acks = proto.AcksNone
		default:
			return fmt.Errorf("acks=%s: want 0, 1 or all", s)
		}
		return nil
	}},
	boolSetting("idempotence", "enable.idempotence", func(c *proto.Config) *bool { return &c.Producer.Idempotence }),
	intSetting("max-in-flight", "max.in.flight.requests.per.connection", 1, 100, func(c *proto.Config) *int { return &c.Producer.MaxInFlight }),
	intSetting("retries", "producer retries", 0, 1_000_000, func(c *proto.Config) *int { return &c.Producer.Retries }),
	intSetting("batch-size", "batch.size in bytes", 1, 1<<24, func(c *proto.Config) *int { return &c.Producer.BatchSize }),
	durSetting("linger", "linger.ms", func(c *proto.Config) *time.Duration { return &c.Producer.Linger }),
	durSetting("retry-backoff", "retry.backoff.ms", func(c *proto.Config) *time.Duration { return &c.Producer.RetryBackoff }),
	durSetting("request-timeout", "request.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Producer.RequestTimeout }),
	durSetting("delivery-timeout", "delivery.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Producer.DeliveryTimeout }),
	transactionTimeoutSetting, // cmd_txn.go
}

// consumerSettings apply to the cluster's default consumer config and to the consumer
// command.
var consumerSettings = append([]setting{
	setting{"auto-offset-reset", "consumer auto.offset.reset: earliest, latest, none", func(a *Args, c *proto.Config) (err error) {
		c.Consumer.AutoOffsetReset, err = a.String("auto-offset-reset", c.Consumer.AutoOffsetReset)
		return
	}},
	durSetting("processing", "consumer processing time per record", func(c *proto.Config) *time.Duration { return &c.Consumer.ProcessingTime }),
	intSetting("max-poll-records", "max.poll.records", 1, 1_000_000, func(c *proto.Config) *int { return &c.Consumer.MaxPollRecords }),
}, patternConsumerSettings...) // cmd_patterns.go

var clusterSettings = append(append(append(append(append(append(slices.Clone(topicSettings), producerSettings...), consumerSettings...), groupClusterSettings...), patternBrokerSettings...), shareClusterSettings...),
	intSetting("brokers", "number of brokers", 1, 64, func(c *proto.Config) *int { return &c.Brokers }),
	intSetting("controllers", "controller nodes: 1 is the single controller ctl; 3 (or more) a KRaft-style Raft quorum c1..cN (name consumers otherwise)", 1, 9, func(c *proto.Config) *int { return &c.Controllers }),
	durSetting("quorum-election-timeout", "controller.quorum.election.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Quorum.ElectionTimeout }),
	durSetting("lag-max", "replica.lag.time.max.ms", func(c *proto.Config) *time.Duration { return &c.Broker.ReplicaLagTimeMax }),
	durSetting("session-timeout", "broker.session.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Broker.SessionTimeout }),
	boolSetting("elr", "eligible leader replicas (KIP-966; on by default as from Kafka 4.1)", func(c *proto.Config) *bool { return &c.Broker.EligibleLeaderReplicas }),
	durSetting("unclean-interval", "unclean.leader.election.interval.ms (the KRaft controller's periodic unclean election)", func(c *proto.Config) *time.Duration { return &c.Broker.UncleanElectionInterval }),
	durSetting("heartbeat", "broker.heartbeat.interval.ms", func(c *proto.Config) *time.Duration { return &c.Broker.HeartbeatInterval }),
	durSetting("fetch-wait", "replica.fetch.wait.max.ms", func(c *proto.Config) *time.Duration { return &c.Broker.ReplicaFetchWaitMax }),
	durSetting("auto-leader-rebalance", "auto.leader.rebalance.enable with leader.imbalance.check.interval: every D the controller elects each partition's preferred replica where it can (0: off, the default)", func(c *proto.Config) *time.Duration { return &c.Broker.LeaderImbalanceCheck }),
	setting{"flush", "flush policy: never, every-batch, or a duration (flush.ms)", func(a *Args, c *proto.Config) error {
		s, err := a.String("flush", "")
		if err != nil || s == "" {
			return err
		}
		switch s {
		case "never":
			c.Broker.Log.Flush = wal.FlushNever
		case "every-batch":
			c.Broker.Log.Flush = wal.FlushEveryBatch
		default:
			d, err := sim.ParseDuration(s)
			if err != nil || d == 0 {
				return fmt.Errorf("flush=%s: want never, every-batch or a duration such as 100ms", s)
			}
			c.Broker.Log.Flush = wal.FlushInterval(d)
		}
		return nil
	}},
	setting{"bugs", "planted bugs, e.g. bugs=(hw-from-leader-only); see mqsim bugs", func(a *Args, c *proto.Config) error {
		for _, name := range a.List("bugs") {
			if name == "" {
				continue // bugs=() plants none
			}
			if err := c.Bugs.Set(name); err != nil {
				return err
			}
		}
		return nil
	}},
)

func init() {
	clusterSettings = append(clusterSettings, legacySettings()...) // kept last: see legacySettings
}

// legacySettings are the preset kafka-version= and one switch per replication fix
// (proto.LegacyFixes). The preset sets every switch as that release had it; a switch
// written after it on the line overrides it, one written before it is overridden by it
// (so `mqsim run --set kafka-version=3.7` replays a legacy scenario as 3.7 runs it).
func legacySettings() []setting {
	ss := []setting{{"kafka-version", "replication as this Kafka release had it, " + proto.KafkaVersionHelp() +
		": sets every switch below", func(a *Args, c *proto.Config) error {
		v, err := a.String("kafka-version", "")
		if err != nil || v == "" {
			return err
		}
		return proto.ApplyKafkaVersion(c, v)
	}}}
	for _, f := range proto.LegacyFixes {
		ss = append(ss, setting{f.Key, f.Describe(), func(a *Args, c *proto.Config) error {
			v, err := a.String(f.Key, "")
			if err != nil || v == "" {
				return err
			}
			if p := a.position("kafka-version"); p >= 0 && a.position(f.Key) < p {
				return nil // the preset, later on the line, decides
			}
			return f.Set(c, v)
		}})
	}
	return ss
}

// CheckClusterSettings reports what is wrong with settings (KEY=VALUE) given to every
// cluster command, as mqsim swarm --set gives them: an unknown key, a bad value, or a
// configuration Validate refuses.
func CheckClusterSettings(set []string) error {
	st, err := override(script.Step{Cmd: "cluster"}, set)
	if err != nil {
		return fmt.Errorf("--set: %v", err)
	}
	cfg := proto.DefaultConfig()
	a := &Args{step: st, cmd: commands["cluster"]}
	if err := applySettings(a, &cfg, clusterSettings); err != nil {
		return fmt.Errorf("--set: %v", err)
	}
	if err := readCosts(a, &sim.Costs{}); err != nil {
		return fmt.Errorf("--set: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("--set: %v", invalidConfig(err))
	}
	return nil
}

// position is the index of key= among the step's arguments, -1 when absent.
func (a *Args) position(key string) int {
	for i, arg := range a.step.Args {
		if arg.Key == key && arg.Vals != nil {
			return i
		}
	}
	return -1
}

func settingKeys(ss []setting) []string {
	var keys []string
	for _, s := range ss {
		keys = append(keys, s.key)
	}
	return keys
}

func applySettings(a *Args, c *proto.Config, ss []setting) error {
	for _, s := range ss {
		if err := s.apply(a, c); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	register(&Command{
		Name:  "cluster",
		Usage: "cluster [brokers=N] [partitions=N] [rf=N] [min-isr=N] [unclean=BOOL] [acks=0|1|all] [KEY=VALUE...]",
		Help:  "start a controller and brokers with topic t; keys are Kafka's settings (listed by mqsim commands)",
		Keys:  append(append(settingKeys(clusterSettings), "topic"), costKeys()...),
		Run:   cmdCluster,
	})
	register(&Command{
		Name:  "topic",
		Usage: "topic name=NAME [partitions=N] [rf=N] [min-isr=N] [unclean=BOOL]",
		Help:  "create another topic",
		Keys:  append(settingKeys(topicSettings), "name"),
		Run:   cmdTopic,
	})
	showSubjects["partitions"] = showPartitions
	showSubjects["partition"] = showPartitions
	showSubjects["isr"] = showISR
	showSubjects["log"] = showLog
}

// ClusterSettingsHelp lists the cluster command's keys, for the CLI's help.
func ClusterSettingsHelp() string {
	var b strings.Builder
	for _, s := range clusterSettings {
		fmt.Fprintf(&b, "  %-18s %s\n", s.key, s.help)
	}
	b.WriteString(costsHelp("  "))
	return b.String()
}

func (r *Runner) needCluster() (*cluster.Cluster, error) {
	if r.cluster == nil {
		return nil, fmt.Errorf("no cluster yet: start one with the cluster command")
	}
	return r.cluster, nil
}

func cmdCluster(r *Runner, a *Args) (string, error) {
	if r.cluster != nil {
		return "", fmt.Errorf("there is already a cluster")
	}
	cfg := proto.DefaultConfig()
	if err := applySettings(a, &cfg, clusterSettings); err != nil {
		return "", err
	}
	name, err := a.String("topic", "t")
	if err != nil {
		return "", err
	}
	cfg.Topic.Name = name
	costLine, err := applyCosts(r, a)
	if err != nil {
		return "", err
	}
	c, err := cluster.New(r.World(), cfg)
	if err != nil {
		return "", invalidConfig(err)
	}
	r.cluster = c
	if err := r.runUntilTime("the new cluster", c.W.Now().Add(50*time.Millisecond)); err != nil {
		return "", err
	}
	if err := c.CreateTopic(cfg.Topic); err != nil {
		return "", err
	}
	ctlLine := "controller ctl"
	if len(c.Controllers) > 1 {
		ctlLine = quorumLine(c)
	}
	lines := []string{fmt.Sprintf("%s, brokers %s", ctlLine, strings.Join(brokerNames(c), " ")),
		fmt.Sprintf("topic %s", cfg.Topic),
		fmt.Sprintf("producers: acks=%s idempotence=%t max-in-flight=%d; flush=%s; truncation=%s",
			cfg.Producer.Acks, cfg.Producer.Idempotence, cfg.Producer.MaxInFlight, cfg.Broker.Log.Flush, cfg.Broker.Truncation)}
	if comp := cfg.Broker.Log.Compaction; comp.Policy.Compacts() {
		lines = append(lines, fmt.Sprintf("log %s; cleaner every %s", comp, sim.FormatDuration(cfg.Broker.CleanerBackoff)))
	}
	if !cfg.Broker.EligibleLeaderReplicas {
		lines = append(lines, "eligible leader replicas off (as before Kafka 4.1)")
	}
	if legacy := cfg.LegacyNames(); len(legacy) > 0 {
		lines = append(lines, "legacy replication: "+strings.Join(legacy, " "))
	}
	if bugs := cfg.Bugs.Names(); len(bugs) > 0 {
		lines = append(lines, "planted bugs: "+strings.Join(bugs, ", "))
	}
	if costLine != "" {
		lines = append(lines, costLine)
	}
	for _, p := range c.Partitions() {
		lines = append(lines, partitionLine(c, p))
	}
	return strings.Join(lines, "\n"), nil
}

// invalidConfig turns Validate's joined errors into one line per value.
func invalidConfig(err error) error {
	return fmt.Errorf("invalid configuration:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
}

func brokerNames(c *cluster.Cluster) []string {
	var names []string
	for _, id := range c.Brokers {
		names = append(names, c.W.Name(id))
	}
	return names
}

func cmdTopic(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	cfg := c.Cfg
	if err := applySettings(a, &cfg, topicSettings); err != nil {
		return "", err
	}
	if cfg.Topic.Name, err = a.Required("name"); err != nil {
		return "", err
	}
	if err := c.CreateTopic(cfg.Topic); err != nil {
		return "", err
	}
	return "created " + cfg.Topic.String(), nil
}

func idNames(w *sim.World, ids []sim.NodeID) string {
	var s []string
	for _, id := range ids {
		s = append(s, w.Name(id))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// showPartitions prints the controller's view and each replica's offsets.
func showPartitions(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if c.ControllerView() == nil {
		return "", fmt.Errorf("the controller is down")
	}
	var lines []string
	for _, p := range c.Partitions() {
		if len(words) > 0 && !slices.Contains(words, p.TP.String()) {
			continue
		}
		lines = append(lines, partitionLine(c, p))
		for _, id := range p.Replicas {
			lines = append(lines, "  "+replicaLine(c, id, p.TP))
		}
	}
	return strings.Join(lines, "\n"), nil
}

// showISR prints each partition's leader and ISR as the controller has them.
func showISR(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if c.ControllerView() == nil {
		return "", fmt.Errorf("the controller is down")
	}
	var lines []string
	for _, p := range c.Partitions() {
		lines = append(lines, partitionLine(c, p))
	}
	return strings.Join(lines, "\n"), nil
}

func partitionLine(c *cluster.Cluster, p proto.PartitionState) string {
	leader := "none (offline)"
	if p.Leader != proto.NoLeader {
		leader = c.W.Name(p.Leader)
	}
	return fmt.Sprintf("%s: leader %s, epoch %d, isr %s", p.TP, leader, p.LeaderEpoch, idNames(c.W, p.ISR))
}

func replicaLine(c *cluster.Cluster, id sim.NodeID, tp proto.TP) string {
	name := c.W.Name(id)
	if st := c.W.Status(id); st != sim.Up {
		return fmt.Sprintf("%s: %s", name, st)
	}
	for i, bid := range c.Brokers {
		if bid != id {
			continue
		}
		rep, ok := c.Broker(i).Replica(tp)
		if !ok {
			return name + ": no replica yet"
		}
		role := "follower"
		if rep.Leader {
			role = "leader"
		}
		return fmt.Sprintf("%s: %s epoch %d, LEO %d, HW %d%s, on disk below %d", name, role, rep.LeaderEpoch,
			rep.LogEndOffset, rep.HighWatermark, lsoText(rep), rep.SyncedOffset)
	}
	return name + ": not a broker"
}

// lsoText names the last stable offset when an open transaction holds it below the HW
// (read_committed consumers stop there); otherwise it equals the HW and is not shown.
func lsoText(rep broker.Replica) string {
	if rep.LastStableOffset == rep.HighWatermark {
		return ""
	}
	return fmt.Sprintf(", LSO %d", rep.LastStableOffset)
}

// recordText is how show log names a record: its key and value; a transaction's record
// says whose; a control batch's record is the COMMIT or ABORT marker it is.
func recordText(bt *wal.Batch, rec wal.Record) string {
	if bt.IsControl() {
		if m, err := wal.BatchMarker(bt); err == nil {
			return fmt.Sprintf("%s marker (control batch of pid %d, producer epoch %d, coordinator epoch %d)", m.Type, bt.ProducerID, bt.ProducerEpoch, m.CoordinatorEpoch)
		}
		return "unreadable control batch"
	}
	key := ""
	if rec.Key != nil {
		key = "key=" + string(rec.Key) + " "
	}
	if bt.IsTransactional() {
		return fmt.Sprintf("%s%s (transactional, pid %d)", key, rec.Value, bt.ProducerID)
	}
	if label, ok := proto.TombstoneLabel(&rec); ok {
		return key + "tombstone (" + label + ")"
	}
	return key + string(rec.Value)
}

// showLog prints a replica's records: offset, epoch, key, value, and whether durable.
func showLog(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	if len(words) < 1 || len(words) > 2 {
		return "", fmt.Errorf("usage: show log BROKER [TOPIC/PARTITION]")
	}
	tp := proto.TP{Topic: c.Cfg.Topic.Name}
	if len(words) == 2 {
		if tp, err = proto.ParseTP(words[1]); err != nil {
			return "", err
		}
	}
	id, err := r.node(words[0])
	if err != nil {
		return "", err
	}
	i := slices.Index(c.Brokers, id)
	if i < 0 {
		return "", fmt.Errorf("%s is not a broker", words[0])
	}
	b := c.Broker(i)
	if b == nil {
		return fmt.Sprintf("%s is %s", words[0], c.W.Status(id)), nil
	}
	rep, ok := b.Replica(tp)
	if !ok {
		return fmt.Sprintf("%s has no replica of %s", words[0], tp), nil
	}
	batches, err := rep.Log.Read(rep.LogStart, 1<<30)
	if err != nil && rep.LogEndOffset > rep.LogStart {
		return "", err
	}
	// The LSO is shown where transactions are: a log with a transactional batch, or an
	// LSO below the HW (a transaction open at a leader whose log this replica lags).
	lso := rep.LastStableOffset != rep.HighWatermark
	for _, bt := range batches {
		lso = lso || bt.IsTransactional()
	}
	head := fmt.Sprintf("%s %s: log [%d,%d), HW %d", words[0], tp, rep.LogStart, rep.LogEndOffset, rep.HighWatermark)
	if lso {
		head += fmt.Sprintf(", LSO %d", rep.LastStableOffset)
	}
	lines := []string{head + fmt.Sprintf(", on disk below %d", rep.SyncedOffset)}
	for _, bt := range batches {
		for k, rec := range bt.Records {
			off := bt.OffsetOf(k)
			mark := ""
			if off >= rep.HighWatermark {
				mark += " (above HW)"
			} else if lso && off >= rep.LastStableOffset {
				mark += " (above LSO)"
			}
			if off >= rep.SyncedOffset {
				mark += " (not on disk)"
			}
			lines = append(lines, fmt.Sprintf("  %d: %s epoch %d%s%s", off, recordText(&bt, rec), bt.LeaderEpoch, mark, recordNote(rec)))
		}
	}
	return strings.Join(lines, "\n"), nil
}
