package runner

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Transaction commands: a transactional producer's begin, commit and abort, and the
// consume-transform-produce pipeline. The producer command takes transactional-id= and
// transaction-timeout=, the consumer command isolation= (txnProducerSettings,
// isolationSetting); produce sends inside the open transaction of a transactional producer.

// txnProducerSettings are the producer command's transaction keys; not cluster defaults,
// since a transactional.id names one producer.
var txnProducerSettings = []setting{
	setting{"transactional-id", "transactional.id: the producer runs transactions (begin-txn, commit-txn, abort-txn)", func(a *Args, c *proto.Config) (err error) {
		c.Producer.TransactionalID, err = a.String("transactional-id", c.Producer.TransactionalID)
		return
	}},
}

// transactionTimeoutSetting is one of producerSettings, a cluster default too, so that a
// scenario's fix line can lower every transactional producer's timeout.
var transactionTimeoutSetting = durSetting("transaction-timeout", "transaction.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Producer.TransactionTimeout })

// isolationSetting is the consumer command's isolation.level.
var isolationSetting = setting{"isolation", "isolation.level: read_uncommitted (default) or read_committed", func(a *Args, c *proto.Config) error {
	s, err := a.String("isolation", c.Consumer.Isolation.String())
	switch {
	case err != nil:
		return err
	case s == "read_committed":
		c.Consumer.Isolation = proto.ReadCommitted
	case s == "read_uncommitted":
		c.Consumer.Isolation = proto.ReadUncommitted
	default:
		return fmt.Errorf("isolation=%s: want read_committed or read_uncommitted", s)
	}
	return nil
}}

var (
	producerCommandSettings = append(append([]setting(nil), producerSettings...), txnProducerSettings...)
	consumerCommandSettings = append(append([]setting(nil), consumerSettings...), isolationSetting)
)

func init() {
	for _, end := range []struct {
		name, help string
		cmd        sim.Message
	}{
		{"begin-txn", "begin a transaction of a transactional producer (KafkaProducer.beginTransaction); produce then sends inside it. " +
			"A producer without transactional.id has none to begin: its sends stand alone (an application that uses transactions when configured with an id)", client.BeginTxn{}},
		{"commit-txn", "commit the producer's transaction: flush its records, then EndTxn; waits until it ends (wait=false: does not). " +
			"A producer without transactional.id only flushes: it waits until its sends end", client.CommitTxn{}},
		{"abort-txn", "abort the producer's transaction: its unsent records fail, then EndTxn abort; waits until it ends (wait=false: does not)", client.AbortTxn{}},
	} {
		cmd := end.cmd
		register(&Command{
			Name:  end.name,
			Usage: end.name + " [producer=NAME] [wait=BOOL]",
			Help:  end.help,
			Keys:  []string{"producer", "wait"},
			Run:   func(r *Runner, a *Args) (string, error) { return cmdTxn(r, a, cmd) },
		})
	}
	register(&Command{
		Name:  "pipeline",
		Usage: "pipeline name=N group=G from=IN to=OUT [transactional=BOOL] [transactional-id=ID] [poll-every=D] [auto-offset-reset=earliest|latest|none]",
		Help: "add a consume-transform-produce application: a member of G reads IN and writes each record's value to OUT; " +
			"transactional (the default) with one transaction per poll and its offsets sent to the transaction " +
			"(transactional.id: ID, default N), otherwise produce then commit the offsets; auto-offset-reset= is where its " +
			"consumer starts in a partition its group has no offset for (default: the cluster's consumer setting)",
		Keys: []string{"name", "group", "from", "to", "transactional", "transactional-id", "poll-every", "auto-offset-reset"},
		Run:  cmdPipeline,
	})
	showSubjects["transactions"] = showTransactions
}

// addProducer adds a producer, transactional if its configuration has a transactional.id.
func addProducer(c *cluster.Cluster, name string, cfg proto.ProducerConfig) (cluster.Client, error) {
	if cfg.TransactionalID != "" {
		return c.AddTransactionalProducer(name, cfg)
	}
	return c.AddProducer(name, cfg)
}

// txnProducerText is what the producer command adds for a transactional producer.
func txnProducerText(p proto.ProducerConfig) string {
	if p.TransactionalID == "" {
		return ""
	}
	return fmt.Sprintf(" transactional.id=%s transaction.timeout=%s", p.TransactionalID, p.TransactionTimeout)
}

// isolationText is what the consumer command adds for a read_committed consumer.
func isolationText(c proto.ConsumerConfig) string {
	if c.Isolation == proto.ReadUncommitted {
		return ""
	}
	return " isolation.level=" + c.Isolation.String()
}

// txnProducer finds a transactional producer by name.
func txnProducer(c *cluster.Cluster, name string) (sim.NodeID, *client.Producer, error) {
	id, ok := c.W.Lookup(name)
	if !ok {
		return 0, nil, fmt.Errorf("no producer %q", name)
	}
	p, ok := c.W.Node(id).(*client.Producer)
	if !ok {
		return 0, nil, fmt.Errorf("%s is not a producer (or is down)", name)
	}
	if _, ok := p.Transaction(); !ok {
		return 0, nil, fmt.Errorf("%s has no transactional.id: add it with producer name=%s transactional-id=ID", name, name)
	}
	return id, p, nil
}

// cmdTxn hands a transaction command to a producer and, unless wait=false, runs until the
// producer has carried it out.
func cmdTxn(r *Runner, a *Args, cmd sim.Message) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, _ := a.String("producer", "p1")
	wait, err := a.Bool("wait", true)
	if err != nil {
		return "", err
	}
	if done, out, err := r.withoutTransactions(c, name, cmd, wait); done {
		return out, err
	}
	id, p, err := txnProducer(c, name)
	if err != nil {
		return "", err
	}
	before, _ := p.Transaction()
	c.W.Inject(id, cmd, 0)
	c.W.RunFor(0) // deliver the command, so the wait below sees the producer act on it
	if !wait {
		return fmt.Sprintf("%s: %s handed to the producer", name, cmd), nil
	}
	if err := r.waitTxn(c, name, id, before); err != nil {
		return "", err
	}
	return txnText(c, name), nil
}

// withoutTransactions carries out begin-txn and commit-txn on a producer without a
// transactional.id, as an application that runs transactions only when it is given an id
// does (Kafka Streams' at_least_once calls neither beginTransaction nor
// commitTransaction, and flushes): begin does nothing, commit waits for the sends. So a
// scenario shows the same story with and without transactions, its fix giving the
// producer an id. done is false for a transactional producer, and for abort-txn: what
// was sent without a transaction cannot be taken back.
func (r *Runner) withoutTransactions(c *cluster.Cluster, name string, cmd sim.Message, wait bool) (done bool, out string, err error) {
	id, ok := c.W.Lookup(name)
	if !ok {
		return false, "", nil
	}
	p, ok := c.W.Node(id).(*client.Producer)
	if !ok {
		return false, "", nil
	}
	if _, transactional := p.Transaction(); transactional {
		return false, "", nil
	}
	switch cmd.(type) {
	case client.BeginTxn:
		return true, fmt.Sprintf("%s: no transactional.id, so no transaction: each send stands alone", name), nil
	case client.CommitTxn:
		if !wait {
			return true, fmt.Sprintf("%s: no transactional.id, so nothing to commit", name), nil
		}
		limit := c.W.Now().Add(c.Cfg.Producer.DeliveryTimeout + time.Second)
		flushed := func(w *sim.World) bool {
			p, ok := w.Node(id).(*client.Producer)
			if !ok {
				return true
			}
			s := p.Stats()
			return w.Now() > limit || s.Queued+s.InFlight == 0
		}
		if _, err := r.wait(name+"'s sends", flushed, 10_000_000, sim.MaxTime); err != nil {
			return true, "", err
		}
		return true, fmt.Sprintf("%s: no transactional.id, so nothing to commit: its sends have ended", name), nil
	}
	return false, "", nil
}

// waitTxn runs until the producer is done with its commands: not initialising, committing
// or aborting, and no command waiting (a crash ends the wait too). It is bounded by the
// producer's delivery timeout, which bounds each of its coordinator requests.
func (r *Runner) waitTxn(c *cluster.Cluster, name string, id sim.NodeID, before client.TxnStatus) error {
	limit := c.W.Now().Add(4*c.Cfg.Producer.DeliveryTimeout + time.Second)
	settled := func(w *sim.World) bool {
		p, ok := w.Node(id).(*client.Producer)
		if !ok {
			return true
		}
		st, _ := p.Transaction()
		return w.Now() > limit || (!p.TxnBusy() && st.State != client.TxnInitializing && st.State != client.TxnCommitting && st.State != client.TxnAborting)
	}
	_, err := r.wait(name+"'s transaction", settled, 10_000_000, sim.MaxTime)
	return err
}

// txnText describes a transactional producer's state.
func txnText(c *cluster.Cluster, name string) string {
	p := c.Producer(name)
	if p == nil {
		return name + ": down"
	}
	st, _ := p.Transaction()
	s := fmt.Sprintf("%s: %s, producer id %d epoch %d, %d committed, %d aborted", name, st.State, st.PID, st.Epoch, st.Committed, st.Aborted)
	if len(st.Partitions) > 0 {
		s += ", partitions " + proto.TPList(st.Partitions)
	}
	if st.Why != "" {
		s += " (" + st.Why + ")"
	}
	return s
}

// produceInTxn runs until a transactional producer has sent every record it holds, and
// says where each went (as a plain produce does): their outcome is the transaction's.
func (r *Runner) produceInTxn(c *cluster.Cluster, name string, id sim.NodeID, values []string) (string, error) {
	limit := c.W.Now().Add(c.Cfg.Producer.DeliveryTimeout + time.Second)
	sent := func(w *sim.World) bool {
		p, ok := w.Node(id).(*client.Producer)
		if !ok {
			return true
		}
		s := p.Stats()
		return w.Now() > limit || (!p.TxnBusy() && s.Queued+s.InFlight == 0)
	}
	if _, err := r.wait(name+"'s sends", sent, 10_000_000, sim.MaxTime); err != nil {
		return "", err
	}
	return txnSendsText(c, name, values) + "\n" + txnText(c, name), nil
}

// txnSendsText says, for each value, where the open transaction's send of it went.
func txnSendsText(c *cluster.Cluster, name string, values []string) string {
	var sends []history.SendValue
	txnID := "?"
	if p := c.Producer(name); p != nil {
		sends = p.TxnSends()
		if st, ok := p.Transaction(); ok {
			txnID = st.ID
		}
	}
	lines := make([]string, 0, len(values))
	for _, v := range values {
		i := len(sends) - 1 // the last send of v: a value resent in this transaction is that one
		for i >= 0 && sends[i].Value != v {
			i--
		}
		switch {
		case i < 0:
			lines = append(lines, fmt.Sprintf("%s: not in a transaction", v))
		case sends[i].Offset == history.NoOffset:
			lines = append(lines, fmt.Sprintf("%s: not acknowledged, in the open transaction of %s", v, txnID))
		default:
			lines = append(lines, fmt.Sprintf("%s: %s@%d, in the open transaction of %s", v, tpName(sends[i].TopicPartition), sends[i].Offset, txnID))
		}
	}
	return strings.Join(lines, "\n")
}

func cmdPipeline(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var cfg client.PipelineConfig
	for _, k := range []struct {
		key string
		to  *string
	}{{"name", nil}, {"group", &cfg.Group}, {"from", &cfg.From}, {"to", &cfg.To}} {
		v, err := a.Required(k.key)
		if err != nil {
			return "", err
		}
		if k.to != nil {
			*k.to = v
		}
	}
	name, _ := a.Required("name")
	if cfg.From == cfg.To {
		return "", fmt.Errorf("from=%s to=%s: a pipeline reads one topic and writes another", cfg.From, cfg.To)
	}
	if cfg.Transactional, err = a.Bool("transactional", true); err != nil {
		return "", err
	}
	if cfg.PollEvery, err = a.Duration("poll-every", 100*time.Millisecond); err != nil {
		return "", err
	}
	pc := c.Cfg.Producer
	pc.TransactionalID, _ = a.String("transactional-id", name)
	if !cfg.Transactional {
		pc.TransactionalID = ""
	}
	cc := c.Cfg.Consumer
	if cc.AutoOffsetReset, err = a.String("auto-offset-reset", cc.AutoOffsetReset); err != nil {
		return "", err
	}
	check := c.Cfg
	check.Producer, check.Consumer = pc, cc
	if err := check.Validate(); err != nil {
		return "", invalidConfig(err)
	}
	if _, err := c.AddPipeline(name, cfg, cc, pc); err != nil {
		return "", err
	}
	mode := "produce, then commit offsets"
	if cfg.Transactional {
		mode = "transactional.id=" + pc.TransactionalID + ", read_committed"
	}
	return fmt.Sprintf("pipeline %s: group %s reads %s (auto.offset.reset=%s), writes %s (%s)", name, cfg.Group, cfg.From,
		cc.AutoOffsetReset, cfg.To, mode), nil
}

// showTransactions lists the transactional producers and the pipelines (state, producer
// id and epoch, the open transaction's partitions, and counts), then the coordinators'
// side: each transactional id as the broker coordinating it has it.
func showTransactions(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, cl := range c.Producers {
		if p := c.Producer(cl.Name); p != nil {
			if _, ok := p.Transaction(); ok {
				lines = append(lines, txnText(c, cl.Name))
			}
		}
	}
	for _, cl := range c.Pipelines {
		app := c.Pipeline(cl.Name)
		if app == nil {
			lines = append(lines, cl.Name+": "+c.W.Status(cl.ID).String())
			continue
		}
		s := app.Stats()
		line := fmt.Sprintf("%s: %s, %d polls, %d records processed, %d transactions committed, %d aborted", cl.Name, s.State,
			s.Polls, s.Processed, s.Committed, s.Aborted)
		if st, ok := app.Producer().Transaction(); ok {
			line += fmt.Sprintf("; producer %s epoch %d", st.State, st.Epoch)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		lines = append(lines, "no transactional clients")
	}
	return strings.Join(append(lines, coordinatorsText(c)...), "\n"), nil
}

// coordinatorsText is the transaction coordinators' side of show transactions: for each
// broker up and each transaction state partition it leads, every transactional id there
// with its state, producer id, epoch, the partitions of its transaction, and the markers
// still unanswered. Nothing when no broker coordinates any id.
func coordinatorsText(c *cluster.Cluster) []string {
	var lines []string
	parts := int32(c.Cfg.TransactionStateTopicConfig().Partitions)
	for bi, id := range c.Brokers {
		b := c.Broker(bi)
		if b == nil {
			continue
		}
		for p := range parts {
			co := b.TxnCoordinator(p)
			if co == nil {
				continue
			}
			for _, t := range co.Transactions() {
				s := fmt.Sprintf("coordinator %s (%s/%d): %s %s, producer id %d epoch %d", c.W.Name(id), proto.TransactionStateTopic, p,
					t.ID, t.State, t.ProducerID, t.Epoch)
				if t.Pending {
					s += fmt.Sprintf(", change to %s being replicated", t.Next)
				}
				if len(t.Partitions) > 0 {
					s += ", partitions " + proto.TPList(t.Partitions)
				}
				if len(t.Unacked) > 0 {
					s += ", markers pending " + proto.TPList(t.Unacked)
				}
				lines = append(lines, s)
			}
		}
	}
	return lines
}
