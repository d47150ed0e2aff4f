package runner

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
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
	durSetting("transaction-timeout", "transaction.timeout.ms", func(c *proto.Config) *time.Duration { return &c.Producer.TransactionTimeout }),
}

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
		{"begin-txn", "begin a transaction of a transactional producer (KafkaProducer.beginTransaction); produce then sends inside it", client.BeginTxn{}},
		{"commit-txn", "commit the producer's transaction: flush its records, then EndTxn; waits until it ends (wait=false: does not)", client.CommitTxn{}},
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
		Usage: "pipeline name=N group=G from=IN to=OUT [transactional=BOOL] [transactional-id=ID] [poll-every=D]",
		Help: "add a consume-transform-produce application: a member of G reads IN and writes each record's value to OUT; " +
			"transactional (the default) with one transaction per poll and its offsets sent to the transaction " +
			"(transactional.id: ID, default N), otherwise produce then commit the offsets",
		Keys: []string{"name", "group", "from", "to", "transactional", "transactional-id", "poll-every"},
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
// says where they went: their outcome is the transaction's.
func (r *Runner) produceInTxn(c *cluster.Cluster, name string, id sim.NodeID, n int) (string, error) {
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
	return fmt.Sprintf("%d records handed to %s's transaction\n%s", n, name, txnText(c, name)), nil
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
	check := c.Cfg
	check.Producer = pc
	if err := check.Validate(); err != nil {
		return "", invalidConfig(err)
	}
	if _, err := c.AddPipeline(name, cfg, c.Cfg.Consumer, pc); err != nil {
		return "", err
	}
	mode := "produce, then commit offsets"
	if cfg.Transactional {
		mode = "transactional.id=" + pc.TransactionalID + ", read_committed"
	}
	return fmt.Sprintf("pipeline %s: group %s reads %s, writes %s (%s)", name, cfg.Group, cfg.From, cfg.To, mode), nil
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
