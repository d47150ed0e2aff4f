package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/checker"
	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Client commands: producers and consumers, and what their history says.

func init() {
	register(&Command{
		Name:  "producer",
		Usage: "producer name=NAME [acks=0|1|all] [idempotence=BOOL] [max-in-flight=N] [retries=N] [linger=D] [transactional-id=ID] [transaction-timeout=D] ...",
		Help:  "add a producer; unset keys take the cluster's producer settings; transactional-id= makes it transactional (cmd_txn.go)",
		Keys:  append(settingKeys(producerCommandSettings), "name"),
		Run:   cmdProducer,
	})
	register(&Command{
		Name:  "consumer",
		Usage: "consumer name=NAME [auto-offset-reset=earliest|latest|none] [processing=D] [isolation=read_committed|read_uncommitted]",
		Help:  "add a consumer; unset keys take the cluster's consumer settings",
		Keys:  append(settingKeys(consumerCommandSettings), "name"),
		Run:   cmdConsumer,
	})
	register(&Command{
		Name:  "produce",
		Usage: "produce [producer=NAME] [topic=T] [partition=N] [key=K | keys=K [skew=zipf(s=X)]] [tags=(TAG, ...)] value=V | values=(V, ...) | count=N | rate=N/s for=D [size=SIZE] [wait=BOOL] [resend=BOOL] [tombstone=BOOL]",
		Help: "send records (count=N sends v1, v2, ...) and, unless wait=false, run until each is acknowledged, failed or unknown; " +
			"values are unique, except with resend=true: the application sends again values it sent before (after a crash, not knowing whether they were written); " +
			"tombstone=true sends each as a tombstone of key K (a nil value, named by V so the history can follow it); " +
			"keys=K gives the records keys k1..kK in turn, or with skew=zipf(s=X) drawn from a Zipf distribution (k1 the hottest) by the run's seed; " +
			"rate=N/s for=D paces a workload: N records a second for D of simulated time (cmd_measure.go), size= pads each value to that many bytes",
		Keys: []string{"producer", "topic", "partition", "key", "keys", "skew", "value", "values", "count", "wait", "tags", "resend", "tombstone", "rate", "for", "size"},
		Run:  cmdProduce,
	})
	register(&Command{
		Name:  "consume",
		Usage: "consume [consumer=NAME] [partitions=(T/N, ...)] [from=earliest|latest] [polls=N] [summary=BOOL]",
		Help:  "assign partitions (default: all of the cluster's topic) and poll until a poll brings nothing (or polls=N); summary=true counts each partition's records instead of listing them",
		Keys:  []string{"consumer", "partitions", "from", "polls", "summary"},
		Run:   cmdConsume,
	})
	register(&Command{
		Name:  "history",
		Usage: "history [last=N]",
		Help:  "print the clients' history: every operation's invocation and completion",
		Keys:  []string{"last"},
		Run:   cmdHistory,
	})
	register(&Command{
		Name:  "check",
		Usage: "check [linearizable=BOOL] [unseen-within=D] [live-within=D] [ack-within=D] [promise=at-least-once|at-most-once|exactly-once]",
		Help: "judge the history (queue anomalies; linearizability with linearizable=true; unseen-within=D: read within D " +
			"of max(ack, last fault); live-within=D: every reader reads within D of max(ack, last fault); ack-within=D: every send " +
			"invoked after the last fault is acknowledged within D; promise=: what every consumer group " +
			"must get, counted otherwise) and report the invariants broken so far",
		Keys: []string{"linearizable", "unseen-within", "live-within", "ack-within", "promise"},
		Run:  cmdCheck,
	})
	showSubjects["clients"] = showClients
}

// clientConfig reads a client command's name and settings over the cluster's
// configuration, validated.
func clientConfig(r *Runner, a *Args, settings []setting) (*cluster.Cluster, string, proto.Config, error) {
	c, err := r.needCluster()
	if err != nil {
		return nil, "", proto.Config{}, err
	}
	name, err := a.Required("name")
	if err != nil {
		return nil, "", proto.Config{}, err
	}
	cfg := c.Cfg
	if err := applySettings(a, &cfg, settings); err != nil {
		return nil, "", proto.Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", proto.Config{}, invalidConfig(err)
	}
	return c, name, cfg, nil
}

func cmdProducer(r *Runner, a *Args) (string, error) {
	c, name, cfg, err := clientConfig(r, a, producerCommandSettings)
	if err != nil {
		return "", err
	}
	if _, err := addProducer(c, name, cfg.Producer); err != nil {
		return "", err
	}
	p := cfg.Producer
	return fmt.Sprintf("producer %s: acks=%s idempotence=%t max-in-flight=%d retries=%d linger=%s%s%s", name, p.Acks,
		p.Idempotence, p.MaxInFlight, p.Retries, p.Linger, batchingText(c.Cfg.Producer, p), txnProducerText(p)), nil
}

// batchingText names batch.size and compression.type where the producer's differ from
// the cluster's producers' (the line stays as it was for a producer that sets neither).
func batchingText(cluster, p proto.ProducerConfig) string {
	s := ""
	if p.BatchSize != cluster.BatchSize {
		s += fmt.Sprintf(" batch-size=%d", p.BatchSize)
	}
	if p.Compression != cluster.Compression {
		s += " compression=" + p.Compression
	}
	return s
}

func cmdConsumer(r *Runner, a *Args) (string, error) {
	c, name, cfg, err := clientConfig(r, a, consumerCommandSettings)
	if err != nil {
		return "", err
	}
	if _, err := c.AddConsumer(name, cfg.Consumer); err != nil {
		return "", err
	}
	return fmt.Sprintf("consumer %s: auto.offset.reset=%s processing=%s%s", name, cfg.Consumer.AutoOffsetReset, cfg.Consumer.ProcessingTime,
		isolationText(cfg.Consumer)), nil
}

// client finds a client node by name, adding it with the cluster's settings if it does
// not exist yet, so a short scenario can just say produce and consume.
func (r *Runner) client(c *cluster.Cluster, name string, producer bool) (sim.NodeID, error) {
	if id, ok := c.W.Lookup(name); ok {
		return id, nil
	}
	var cl cluster.Client
	var err error
	if producer {
		cl, err = c.AddProducer(name, c.Cfg.Producer)
	} else {
		cl, err = c.AddConsumer(name, c.Cfg.Consumer)
	}
	if err != nil {
		return 0, err
	}
	c.W.RunFor(0)
	return cl.ID, nil
}

func cmdProduce(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, _ := a.String("producer", "p1")
	topic, _ := a.String("topic", c.Cfg.Topic.Name)
	key, _ := a.String("key", "")
	part, err := a.Int("partition", -1, -1, 1000)
	if err != nil {
		return "", err
	}
	if err := checkPartition(c, topic, part); err != nil {
		return "", err
	}
	wait, err := a.Bool("wait", true)
	if err != nil {
		return "", err
	}
	values := a.List("values")
	if v, _ := a.String("value", ""); v != "" {
		values = append(values, v)
	}
	count, err := a.Int("count", 0, 0, 100_000)
	if err != nil {
		return "", err
	}
	pc, err := readPace(a)
	if err != nil {
		return "", err
	}
	if pc.count > 0 && (count > 0 || len(values) > 0) {
		return "", fmt.Errorf("rate= and for= make the records: leave out count=, value= and values=")
	}
	for i := 0; i < max(count, pc.count); i++ {
		r.valueSeq++
		values = append(values, pc.value(fmt.Sprintf("v%d", r.valueSeq)))
	}
	if len(values) == 0 {
		return "", fmt.Errorf("nothing to send: give value=, values= or count=; usage: %s", a.cmd.Usage)
	}
	resend, err := a.Bool("resend", false)
	if err != nil {
		return "", err
	}
	tombstone, err := a.Bool("tombstone", false)
	if err != nil {
		return "", err
	}
	if tombstone && key == "" {
		return "", fmt.Errorf("tombstone=true deletes a key: give key=K")
	}
	var chooser *keyChooser
	if a.Has("keys") {
		if key != "" || tombstone {
			return "", fmt.Errorf("keys=K gives each record one of K keys: leave out key= and tombstone=")
		}
		k, err := a.Int("keys", 0, 1, maxKeys)
		if err != nil {
			return "", err
		}
		skew, _ := a.String("skew", "")
		if chooser, err = newKeyChooser(k, skew); err != nil {
			return "", err
		}
	} else if a.Has("skew") {
		return "", fmt.Errorf("skew= draws keys: give keys=K too")
	}
	again := 0
	for _, v := range values {
		if r.sent[v] && !resend {
			return "", fmt.Errorf("value %q was sent before; values must be unique so the checkers can follow each one "+
				"(resend=true sends it again on purpose)", v)
		}
		if r.sent[v] {
			again++
		}
	}
	if resend && again == 0 {
		return "", fmt.Errorf("resend=true: none of the values was sent before")
	}
	id, err := r.client(c, name, true)
	if err != nil {
		return "", err
	}
	p, ok := c.W.Node(id).(*client.Producer)
	if !ok {
		return "", fmt.Errorf("%s is not a producer (or is down)", name)
	}
	_, transactional := p.Transaction()
	for i, v := range values {
		k := key
		if chooser != nil {
			k = chooser.key(r.keyRand)
		}
		c.W.Inject(id, client.Send{Topic: topic, Key: k, Value: v, Partition: int32(part), Tags: a.List("tags"), Tombstone: tombstone}, pc.at(i))
		r.sent[v] = true
	}
	if !wait && pc.count > 0 {
		return paceSummary(name, pc, nil, values, false), nil
	}
	if !wait {
		return fmt.Sprintf("%s: %d records handed to the producer", name, len(values)), nil
	}
	if transactional {
		c.W.RunFor(0) // deliver the sends, so the wait sees them queued
		return r.produceInTxn(c, name, id, values)
	}
	limit := c.Cfg.Producer.DeliveryTimeout + time.Second + pc.span
	end := c.W.Now().Add(limit)
	completed := allCompleted(c.History, values)
	if _, err := r.wait(name+"'s sends", func(w *sim.World) bool { return w.Now() > end || completed() }, 10_000_000, sim.MaxTime); err != nil {
		return "", err
	}
	if pc.count > 0 {
		return paceSummary(name, pc, c.History.History(), values, true), nil
	}
	return sendOutcomes(c, values), nil
}

// allCompleted returns a test of whether every value's send has completed. It reads only
// the history recorded since its last call, so a wait that asks after every event costs
// the length of the history once, not once per event.
func allCompleted(rec *history.Recorder, values []string) func() bool {
	want := make(map[string]bool, len(values))
	for _, v := range values {
		want[v] = true
	}
	seen, done := 0, 0
	return func() bool {
		h := rec.History()
		for _, op := range h[seen:] {
			if op.F == history.Send && op.Type != history.Invoke && want[op.Send.Value] {
				done++
			}
		}
		seen = len(h)
		return done == len(want)
	}
}

// checkPartition refuses a partition= beyond the topic's partitions at once, rather than
// letting the producer retry until its delivery timeout.
func checkPartition(c *cluster.Cluster, topic string, part int) error {
	if part < 0 {
		return nil
	}
	n := 0
	for _, p := range c.Partitions() {
		if p.TP.Topic == topic {
			n++
		}
	}
	if n > 0 && part >= n {
		return fmt.Errorf("partition=%d: topic %s has partitions 0 to %d", part, topic, n-1)
	}
	return nil
}

// sendOutcomes renders how each value's send ended, from the history.
func sendOutcomes(c *cluster.Cluster, values []string) string {
	outcome := map[string]string{}
	want := make(map[string]bool, len(values))
	for _, v := range values {
		want[v] = true
	}
	for _, op := range c.History.History() {
		if op.F != history.Send || !want[op.Send.Value] {
			continue
		}
		switch op.Type {
		case history.Invoke:
			outcome[op.Send.Value] = "pending"
		case history.Ok:
			if op.Send.Offset == history.NoOffset {
				outcome[op.Send.Value] = fmt.Sprintf("ok %s (offset unknown: acks=0)", tpName(op.Send.TopicPartition))
			} else {
				outcome[op.Send.Value] = fmt.Sprintf("ok %s@%d", tpName(op.Send.TopicPartition), op.Send.Offset)
			}
		case history.Fail:
			outcome[op.Send.Value] = "failed: " + op.Error
		case history.Info:
			outcome[op.Send.Value] = "unknown: " + op.Error
		}
	}
	var lines []string
	for _, v := range values {
		o := outcome[v]
		if o == "" {
			o = "pending (no partition yet)"
		}
		lines = append(lines, v+": "+o)
	}
	return strings.Join(lines, "\n")
}

func tpName(tp history.TopicPartition) string {
	return proto.TP{Topic: tp.Topic, Partition: tp.Partition}.String()
}

func cmdConsume(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, _ := a.String("consumer", "c1")
	from, _ := a.String("from", "earliest")
	if from != "earliest" && from != "latest" {
		return "", fmt.Errorf("from=%s: want earliest or latest", from)
	}
	polls, err := a.Int("polls", 0, 0, 10_000)
	if err != nil {
		return "", err
	}
	summary, err := a.Bool("summary", false)
	if err != nil {
		return "", err
	}
	if id, ok := c.W.Lookup(name); ok {
		if cs, ok := c.W.Node(id).(*client.Consumer); ok {
			if _, member := cs.Member(); member {
				return consumeGroup(r, c, id, polls) // a group member polls what the group gave it
			}
		}
	}
	var tps []proto.TP
	for _, s := range a.List("partitions") {
		tp, err := proto.ParseTP(s)
		if err != nil {
			return "", err
		}
		tps = append(tps, tp)
	}
	if len(tps) == 0 {
		for _, p := range c.Partitions() {
			if p.TP.Topic == c.Cfg.Topic.Name {
				tps = append(tps, p.TP)
			}
		}
	}
	id, err := r.client(c, name, false)
	if err != nil {
		return "", err
	}
	cs, ok := c.W.Node(id).(*client.Consumer)
	if !ok {
		return "", fmt.Errorf("%s is not a consumer (or is down)", name)
	}
	if !slices.Equal(cs.Assignment(), tps) {
		c.W.Inject(id, client.Assign{Partitions: tps, FromBeginning: from == "earliest"}, 0)
	}
	mark := len(c.History.History())
	read, stopped, err := pollUntilQuiet(r, c, id, polls)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, tp := range tps {
		recs := "(nothing)"
		switch n := len(read[tp]); {
		case n > 0 && summary:
			recs = fmt.Sprintf("%d records, offsets %d to %d", n, read[tp][0].Offset, read[tp][n-1].Offset)
		case n > 0:
			recs = recordsText(read[tp])
		}
		lines = append(lines, fmt.Sprintf("%s: %s", tp, recs))
	}
	for _, op := range c.History.History()[mark:] {
		if op.F == history.Poll && op.Process == cs.Process() && (op.Type == history.Fail || op.Type == history.Info) {
			lines = append(lines, fmt.Sprintf("poll %s: %s", op.Type, op.Error))
		}
	}
	if stopped != "" {
		lines = append(lines, stopped)
	}
	return strings.Join(lines, "\n"), nil
}

// recordsText lists records as offset:value.
func recordsText(recs []history.Record) string {
	parts := make([]string, len(recs))
	for i, rec := range recs {
		parts[i] = fmt.Sprintf("%d:%s", rec.Offset, rec.Value)
	}
	return strings.Join(parts, " ")
}

// ConsumePolls bounds a consume without polls=: it polls until a poll brings nothing new,
// at most this many times.
const ConsumePolls = 10_000

// pollUntilQuiet has consumer id poll, polls times, or with polls=0 until a poll succeeds
// with nothing new (a poll that failed on one partition says nothing about it), at most
// ConsumePolls times. It stops if the consumer goes down, and says so (stopped) if it
// stops before reading to the end for another reason: the consumer is paused, or the
// bound. A poll that does not complete within its bound (see pollBound) is an error. It
// returns the records each partition gave.
func pollUntilQuiet(r *Runner, c *cluster.Cluster, id sim.NodeID, polls int) (read map[proto.TP][]history.Record, stopped string, err error) {
	read = map[proto.TP][]history.Record{}
	name := c.W.Name(id)
	if c.W.Status(id) == sim.Paused {
		return nil, "", fmt.Errorf("%s is paused: a paused consumer cannot poll (resume %s first)", name, name)
	}
	n := 0
	for ; polls == 0 || n < polls; n++ {
		if polls == 0 && n == ConsumePolls {
			return read, fmt.Sprintf("stopped after %d polls (the most one consume makes): the log may not be read to the end; consume again to read on", n), nil
		}
		cs, up := c.W.Node(id).(*client.Consumer)
		if !up {
			break
		}
		before, proc := len(c.History.History()), cs.Process()
		c.W.Inject(id, client.Poll{}, 0)
		if _, err := r.wait(fmt.Sprintf("%s's poll %d", name, n+1), func(w *sim.World) bool {
			return pollDone(c.History.History()[before:], proc) || w.Status(id) != sim.Up
		}, 10_000_000, c.W.Now().Add(pollBound(cs.Config()))); err != nil {
			return read, "", err
		}
		got, ok := 0, false
		for _, op := range c.History.History()[before:] {
			if op.F != history.Poll || op.Type == history.Invoke || op.Process != proc {
				continue
			}
			ok = op.Type == history.Ok
			for _, pr := range op.Poll.Reads {
				tp := proto.TP{Topic: pr.Topic, Partition: pr.Partition}
				for _, rec := range pr.Records {
					read[tp] = append(read[tp], rec)
					got++
				}
			}
		}
		if c.W.Status(id) == sim.Paused {
			return read, fmt.Sprintf("stopped after %d polls: %s was paused during a poll; resume it and consume again to read on", n+1, name), nil
		}
		if c.W.Status(id) == sim.Down || polls == 0 && ok && got == 0 {
			break
		}
	}
	return read, "", nil
}

// pollBound is the longest one poll may take before consume gives up on it: every wait a
// poll can contain (a rebalance, a session timing out, a request timing out, a fetch
// waiting for data, processing a full batch of records) and a minute on top.
func pollBound(cfg proto.ConsumerConfig) time.Duration {
	batch := 100 * sim.MaxDuration // longer than any run can simulate: no bound of its own
	if cfg.ProcessingTime == 0 || int64(cfg.MaxPollRecords) < int64(batch/cfg.ProcessingTime) {
		batch = cfg.ProcessingTime * time.Duration(cfg.MaxPollRecords)
	}
	// Each setting is at most sim.MaxDuration: the sum fits in the clock.
	return time.Minute + cfg.EffectiveRebalanceTimeout() + cfg.SessionTimeout + cfg.RequestTimeout + cfg.FetchMaxWait + batch
}

// pollDone reports whether the history since a poll was injected has the completion of
// a poll by process proc (other consumers poll meanwhile).
func pollDone(ops history.History, proc int) bool {
	for _, op := range ops {
		if op.F == history.Poll && op.Type != history.Invoke && op.Process == proc {
			return true
		}
	}
	return false
}

func cmdHistory(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	return printHistory(a, c.History.History(), formatOp)
}

// printHistory renders the last last= operations of a history, one line each.
func printHistory(a *Args, h history.History, format func(history.Op) string) (string, error) {
	last, err := a.Int("last", len(h), 1, 1<<30)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, op := range h[max(0, len(h)-last):] {
		lines = append(lines, format(op))
	}
	if len(lines) == 0 {
		return "empty", nil
	}
	return strings.Join(lines, "\n"), nil
}

func formatOp(op history.Op) string {
	head := fmt.Sprintf("%d %s p%d %s %s", op.Index, sim.Time(op.Time), op.Process, op.Type, op.F)
	var body string
	switch op.F {
	case history.Send:
		body = sendText(op.Send, op.Type == history.Ok)
	case history.Poll:
		body = pollText(op.Poll)
	case history.Assign, history.Subscribe:
		for _, tp := range op.Assign.Partitions {
			body += " " + tpName(tp)
		}
	case history.Seek:
		// Where each partition was moved; "?" while the target is still to be looked up.
		if op.Seek.Reset {
			body = " reset of group " + op.Seek.Group
		}
		for _, po := range op.Seek.Offsets {
			to := "?"
			if po.Offset != history.NoOffset {
				to = strconv.FormatInt(po.Offset, 10)
			}
			body += fmt.Sprintf(" %s@%s", tpName(po.TopicPartition), to)
		}
	case history.Txn:
		body = " " + op.Txn.ID
		// A completion lists what the transaction did: its sends (with the offsets
		// learnt), the polls inside it, and the offsets sent to it.
		for _, m := range op.Txn.Ops {
			switch m.F {
			case history.Send:
				body += " [send" + sendText(m.Send, true) + "]"
			case history.Poll:
				body += " [poll" + pollText(m.Poll) + "]"
			}
		}
		if o := op.Txn.Offsets; o != nil {
			var offs []string
			for _, po := range o.Offsets {
				offs = append(offs, fmt.Sprintf("%s@%d", tpName(po.TopicPartition), po.Offset))
			}
			body += fmt.Sprintf(" [offsets of %s: %s]", o.Group, strings.Join(offs, " "))
		}
	}
	if op.Error != "" {
		body += " (" + op.Error + ")"
	}
	return head + body
}

// sendText is a send's partition, key=value, and its offset when known and wanted.
func sendText(sv *history.SendValue, offset bool) string {
	body := fmt.Sprintf(" %s %s", tpName(sv.TopicPartition), sv.Value)
	if sv.Key != "" {
		body = fmt.Sprintf(" %s %s=%s", tpName(sv.TopicPartition), sv.Key, sv.Value)
	}
	if offset && sv.Offset != history.NoOffset {
		body += fmt.Sprintf(" @%d", sv.Offset)
	}
	return body
}

// pollText is what a poll read, partition by partition, as offset:value.
func pollText(pv *history.PollValue) string {
	var body string
	for _, pr := range pv.Reads {
		var recs []string
		for _, rec := range pr.Records {
			recs = append(recs, fmt.Sprintf("%d:%s", rec.Offset, rec.Value))
		}
		body += fmt.Sprintf(" %s [%s]", tpName(pr.TopicPartition), strings.Join(recs, " "))
	}
	return body
}

// linearizableBudget bounds the linearizability search of a check command. Scenario
// histories are small; the bound only keeps a runaway search from hanging a test.
const linearizableBudget = 10 * time.Second

// cmdCheck judges the run (Runner.Judge) with the command's arguments as settings; the
// run's verdict is its last check's.
func cmdCheck(r *Runner, a *Args) (string, error) {
	s, err := settingsOf(a)
	if err != nil {
		return "", err
	}
	v, err := r.Judge(s)
	if err != nil {
		return "", err
	}
	r.verdicts = append(r.verdicts, v)
	return strings.TrimRight(v.Report.String(), "\n"), nil
}

// InvariantReport turns what the cluster's invariant checks found into a checker report,
// so it merges with the history checkers' (checker "invariant").
func InvariantReport(c *cluster.Cluster) checker.Report {
	var vs []checker.Violation
	for _, v := range append(c.InvariantViolations(), c.Convergence()...) {
		tp := history.TopicPartition{Topic: v.TP.Topic, Partition: v.TP.Partition}
		vs = append(vs, checker.Violation{Checker: checker.InvariantChecker, Anomaly: checker.Anomaly(v.Anomaly),
			TopicPartition: tp, Time: int64(v.Time), Step: v.Step, Text: v.Text})
	}
	// A partition whose every replica was down at once lost, on every copy, whatever only
	// page caches held: no replication setting prevents that (only flush=every-batch
	// does), so it is named as what it is, not counted against the system.
	var notes []checker.Note
	for _, d := range c.AllReplicasDown() {
		if c.Cfg.Broker.Log.Flush == wal.FlushEveryBatch {
			break // every acknowledged record was on disk: nothing to excuse
		}
		notes = append(notes, checker.Note{Checker: checker.InvariantChecker, Text: fmt.Sprintf(
			"%s: every replica was down at once at step %d (%s): what only their page caches held is gone from every copy, a loss no replication setting prevents",
			d.TP, d.Step, d.Time)})
	}
	return checker.Collect(vs, notes)
}

// LastFault is when the run's faults ended: the latest fault the world applied so far, or
// the latest scheduled in its fault plan.
func LastFault(w *sim.World) sim.Time {
	last := w.LastFault()
	for _, act := range w.Plan() {
		last = max(last, act.At)
	}
	return last
}

func showClients(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, cl := range c.Producers {
		p := c.Producer(cl.Name)
		if p == nil {
			lines = append(lines, cl.Name+": "+c.W.Status(cl.ID).String())
			continue
		}
		s := p.Stats()
		lines = append(lines, fmt.Sprintf("%s: queued %d, in flight %d, acked %d, failed %d, unknown %d, requests %d, retries %d",
			cl.Name, s.Queued, s.InFlight, s.Acked, s.Failed, s.Unknown, s.Requests, s.Retries))
		lines = append(lines, bufferLines(p.Buffer(c.W.Now()))...) // cmd_quota.go
	}
	for _, cl := range c.Consumers {
		cs := c.Consumer(cl.Name)
		if cs == nil {
			lines = append(lines, cl.Name+": "+c.W.Status(cl.ID).String())
			continue
		}
		var pos []string
		for _, p := range cs.Positions() {
			pos = append(pos, fmt.Sprintf("%s@%d", p.TP, p.Offset))
		}
		lines = append(lines, fmt.Sprintf("%s: consumed %d in %d polls, positions %s", cl.Name, cs.Consumed(), cs.Polls(), strings.Join(pos, " ")))
	}
	if len(lines) == 0 {
		return "no clients", nil
	}
	return strings.Join(lines, "\n"), nil
}
