package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/history"
	"mqsim/model/queue"
	"mqsim/sim"
)

// Queue-mode commands: a RabbitMQ/SQS-style broker (model/queue) on the same world,
// faults and checkers as the Kafka-style cluster. queue-broker starts it; exchange,
// queue and bind declare the topology; publish and send publish, subscribe and worker
// consume; drain runs until everything settled. check, history and show clients judge
// and print the queue broker's history when the run has no Kafka cluster.

// queueRun is a run's queue broker and the defaults its commands fall back on.
type queueRun struct {
	c       *queue.Cluster
	flavour string
	d       queueDefaults
}

// queueDefaults are the settings of the queue-broker command that other commands use
// when they do not say otherwise, so a "# fix:" line can change them all at once.
type queueDefaults struct {
	queueType       queue.QueueType
	deliveryLimit   int // for quorum queues; classic queues have none
	consumerTimeout time.Duration
	visibility      time.Duration
	maxReceive      int
	dedupWindow     time.Duration
	prefetch        int
	autoAck         bool
	processing      time.Duration
	onFail          queue.FailAction
	confirms        bool
	mandatory       bool
	confirmTimeout  time.Duration
	batch           int
	extend          bool
}

// queueSetting is one key of the queue-broker command.
type queueSetting struct {
	key, help string
	apply     func(a *Args, d *queueDefaults, c *queue.Config) error
}

func qDur(key, help string, f func(*queueDefaults, *queue.Config) *time.Duration) queueSetting {
	return queueSetting{key, help, func(a *Args, d *queueDefaults, c *queue.Config) (err error) {
		p := f(d, c)
		*p, err = a.Duration(key, *p)
		return
	}}
}

func qInt(key, help string, lo, hi int, f func(*queueDefaults, *queue.Config) *int) queueSetting {
	return queueSetting{key, help, func(a *Args, d *queueDefaults, c *queue.Config) (err error) {
		p := f(d, c)
		*p, err = a.Int(key, *p, lo, hi)
		return
	}}
}

func qBool(key, help string, f func(*queueDefaults) *bool) queueSetting {
	return queueSetting{key, help, func(a *Args, d *queueDefaults, c *queue.Config) (err error) {
		p := f(d)
		*p, err = a.Bool(key, *p)
		return
	}}
}

var queueBrokerSettings = []queueSetting{
	qInt("nodes", "broker nodes q1..qN", 1, 9, func(d *queueDefaults, c *queue.Config) *int { return &c.Nodes }),
	qDur("heartbeat", "AMQP heartbeat interval; a peer silent for two is dead", func(d *queueDefaults, c *queue.Config) *time.Duration { return &c.Heartbeat }),
	{"queue-type", "default queue type: classic or quorum", func(a *Args, d *queueDefaults, c *queue.Config) error {
		s, err := a.String("queue-type", string(d.queueType))
		d.queueType = queue.QueueType(s)
		if err == nil && d.queueType != queue.Classic && d.queueType != queue.Quorum {
			err = fmt.Errorf("queue-type=%s: want classic or quorum", s)
		}
		return err
	}},
	qInt("delivery-limit", "quorum queues' delivery-limit (-1: unlimited)", -1, 1_000_000, func(d *queueDefaults, c *queue.Config) *int { return &d.deliveryLimit }),
	qDur("consumer-timeout", "consumer_timeout: longest a delivery may stay unacked (0: none)", func(d *queueDefaults, c *queue.Config) *time.Duration { return &d.consumerTimeout }),
	qInt("prefetch", "consumers' basic.qos prefetch count (0: unlimited)", 0, 1_000_000, func(d *queueDefaults, c *queue.Config) *int { return &d.prefetch }),
	qBool("auto-ack", "consumers settle on delivery (no acks)", func(d *queueDefaults) *bool { return &d.autoAck }),
	qDur("processing", "consumers' and workers' processing time per message", func(d *queueDefaults, c *queue.Config) *time.Duration { return &d.processing }),
	{"on-fail", "what consumers do with a message they fail on: reject (requeue=false), requeue (reject, requeue=true) or nack (nack, requeue=true)", func(a *Args, d *queueDefaults, c *queue.Config) error {
		s, err := a.String("on-fail", string(d.onFail))
		d.onFail = queue.FailAction(s)
		if err == nil && d.onFail != queue.FailReject && d.onFail != queue.FailRequeue && d.onFail != queue.FailNack {
			err = fmt.Errorf("on-fail=%s: want reject, requeue or nack", s)
		}
		return err
	}},
	qBool("confirms", "publishers use publisher confirms", func(d *queueDefaults) *bool { return &d.confirms }),
	qBool("mandatory", "publishes are mandatory (unroutable ones come back)", func(d *queueDefaults) *bool { return &d.mandatory }),
	qDur("confirm-timeout", "how long a publisher waits for a confirm", func(d *queueDefaults, c *queue.Config) *time.Duration { return &d.confirmTimeout }),
	qDur("visibility", "SQS default visibility timeout", func(d *queueDefaults, c *queue.Config) *time.Duration { return &d.visibility }),
	qInt("max-receive", "SQS redrive maxReceiveCount for queues with a dlq (0: no redrive)", 0, 1000, func(d *queueDefaults, c *queue.Config) *int { return &d.maxReceive }),
	qDur("dedup-window", "SQS FIFO deduplication interval", func(d *queueDefaults, c *queue.Config) *time.Duration { return &d.dedupWindow }),
	qInt("batch", "SQS workers' MaxNumberOfMessages", 1, 10, func(d *queueDefaults, c *queue.Config) *int { return &d.batch }),
	qBool("extend", "SQS workers extend the visibility timeout while processing (ChangeMessageVisibility heartbeat)", func(d *queueDefaults) *bool { return &d.extend }),
	{"bugs", "plant deliberate mistakes for the checkers to catch: bugs=(" + queueBugNames() + ")", func(a *Args, d *queueDefaults, c *queue.Config) error {
		for _, name := range a.List("bugs") {
			b, err := queue.ParseBug(name)
			if err != nil {
				return err
			}
			if !slices.Contains(c.Bugs, b) {
				c.Bugs = append(c.Bugs, b)
			}
		}
		return nil
	}},
}

func queueBugNames() string {
	var names []string
	for _, b := range queue.BugList {
		names = append(names, string(b.Name))
	}
	return strings.Join(names, ", ")
}

func init() {
	keys := []string{"flavour"}
	for _, s := range queueBrokerSettings {
		keys = append(keys, s.key)
	}
	keys = append(keys, costKeys()...)
	register(&Command{
		Name:  "queue-broker",
		Usage: "queue-broker [flavour=rabbit|sqs] [nodes=N] [queue-type=classic|quorum] [prefetch=N] [confirms=BOOL] [KEY=VALUE...]",
		Help: "start a RabbitMQ/SQS-style broker q1..qN (queue mode); its keys, defaults for the queue commands:\n" +
			strings.TrimRight(queueSettingsHelp("      "), "\n"),
		Keys: keys,
		Run:  cmdQueueBroker,
	})
	register(&Command{
		Name:  "exchange",
		Usage: "exchange name=X type=direct|topic|fanout|headers [alternate=AE]",
		Help:  "declare an exchange",
		Keys:  []string{"name", "type", "alternate"},
		Run:   cmdExchange,
	})
	register(&Command{
		Name: "queue",
		Usage: "queue name=Q [type=classic|quorum] [node=qN] [members=(qN, ...)] [dlx=X] [dlx-key=K] [delivery-limit=N] [ttl=D] " +
			"[max-length=N] [overflow=drop-head|reject-publish] [consumer-timeout=D] [visibility=D] [max-receive=N] [dlq=Q] " +
			"[fifo=BOOL] [content-dedup=BOOL] [dedup-window=D] [delay=D]",
		Help: "declare a queue (RabbitMQ arguments, SQS attributes) and run until a node acts for it",
		Keys: []string{"name", "type", "node", "members", "dlx", "dlx-key", "delivery-limit", "ttl", "max-length", "overflow",
			"consumer-timeout", "visibility", "max-receive", "dlq", "fifo", "content-dedup", "dedup-window", "delay"},
		Run: cmdQueue,
	})
	register(&Command{
		Name:  "bind",
		Usage: "bind exchange=X queue=Q [key=K] [match=all|any] [headers=(K:V, ...)]",
		Help:  "bind a queue to an exchange (key for direct and topic, match and headers for headers exchanges)",
		Keys:  []string{"exchange", "queue", "key", "match", "headers"},
		Run:   cmdBind,
	})
	register(&Command{
		Name:  "publisher",
		Usage: "publisher name=P [confirms=BOOL] [node=qN] [confirm-timeout=D]",
		Help:  "add a publisher connected to a node (default: the broker's settings, q1)",
		Keys:  []string{"name", "confirms", "node", "confirm-timeout"},
		Run:   cmdPublisher,
	})
	register(&Command{
		Name: "publish",
		Usage: "publish [publisher=P] [exchange=X] [key=K] [headers=(K:V, ...)] value=V | values=(V, ...) | count=N " +
			"[prefix=S] [mandatory=BOOL] [ttl=D] [wait=BOOL]",
		Help: "basic.publish (count=N publishes PREFIX1..PREFIXN, prefix m by default) and, unless wait=false, run until each is confirmed, nacked, returned or unknown",
		Keys: []string{"publisher", "exchange", "key", "headers", "value", "values", "count", "prefix", "mandatory", "ttl", "wait"},
		Run:  cmdPublish,
	})
	register(&Command{
		Name:  "send",
		Usage: "send [producer=P] queue=Q value=V | values=(V, ...) | count=N [prefix=S] [group=G] [dedup-id=ID] [delay=D] [wait=BOOL]",
		Help:  "SQS SendMessage (a publish to the queue that is always answered) and, unless wait=false, run until each is answered",
		Keys:  []string{"producer", "queue", "value", "values", "count", "prefix", "group", "dedup-id", "delay", "wait"},
		Run:   cmdSend,
	})
	register(&Command{
		Name:  "subscribe",
		Usage: "subscribe consumer=C queue=Q [prefetch=N] [auto-ack=BOOL] [processing=D] [fail=(V, ...)] [on-fail=reject|requeue|nack] [node=qN]",
		Help:  "add a push consumer (basic.qos + basic.consume) and run until it has a channel",
		Keys:  []string{"consumer", "queue", "prefetch", "auto-ack", "processing", "fail", "on-fail", "node"},
		Run:   cmdSubscribe,
	})
	register(&Command{
		Name:  "worker",
		Usage: "worker name=W queue=Q [batch=N] [visibility=D] [processing=D] [poll-every=D] [fail=(V, ...)] [extend=BOOL] [node=qN]",
		Help:  "add an SQS worker: ReceiveMessage, process, DeleteMessage, in a loop",
		Keys:  []string{"name", "queue", "batch", "visibility", "processing", "poll-every", "fail", "extend", "node"},
		Run:   cmdWorker,
	})
	register(&Command{
		Name:  "drain",
		Usage: "drain [limit=D]",
		Help:  "run until nothing is in motion (no publish unanswered, every consumed queue empty, consumers idle), or limit (default 1m) passes",
		Keys:  []string{"limit"},
		Run:   cmdDrain,
	})
	overlay("check", []string{"order"}, " In queue mode: order=key|queue (the order promised), promise=at-least-once|exactly-once. On a log cluster, order=key checks each key's order across a topic's partitions.", nil)
	overlay("history", nil, "", cmdQueueHistory)
	showSubjects["queues"] = showQueues
	showSubjects["queue"] = showQueue
	showSubjects["exchanges"] = showExchanges
	overlayShow("clients", showQueueClients)
}

// overlay makes a command registered by another file (check, history) serve queue mode
// too: it accepts keys and says help; when the run has a queue broker and no Kafka
// cluster, run (when not nil) replaces it.
func overlay(name string, keys []string, help string, run func(r *Runner, a *Args) (string, error)) {
	c := commands[name]
	if c == nil {
		panic("scenarios: cmd_queue.go extends " + name + ", which cmd_clients.go registers first")
	}
	prev := c.Run
	c.Keys = append(slices.Clone(c.Keys), keys...)
	c.Help += help
	if run == nil {
		return
	}
	c.Run = func(r *Runner, a *Args) (string, error) {
		if r.queue != nil && r.cluster == nil {
			return run(r, a)
		}
		return prev(r, a)
	}
}

func overlayShow(subject string, show func(r *Runner, a *Args, words []string) (string, error)) {
	prev := showSubjects[subject]
	showSubjects[subject] = func(r *Runner, a *Args, words []string) (string, error) {
		if r.queue != nil && r.cluster == nil || prev == nil {
			return show(r, a, words)
		}
		return prev(r, a, words)
	}
}

// QueueSettingsHelp lists the queue-broker command's keys, for the CLI's help.
func QueueSettingsHelp() string { return queueSettingsHelp("  ") + costsHelp("  ") }

func queueSettingsHelp(indent string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s%-17s %s\n", indent, "flavour", "rabbit or sqs: defaults and wording (sqs: quorum queues, confirms on)")
	for _, s := range queueBrokerSettings {
		fmt.Fprintf(&b, "%s%-17s %s\n", indent, s.key, s.help)
	}
	return b.String()
}

// QueueBroker is the run's queue broker, or nil before the queue-broker command.
func (r *Runner) QueueBroker() *queue.Cluster {
	if r.queue == nil {
		return nil
	}
	return r.queue.c
}

func (r *Runner) needQueue() (*queueRun, error) {
	if r.queue == nil {
		return nil, fmt.Errorf("no queue broker yet: start one with the queue-broker command")
	}
	return r.queue, nil
}

// newQueueDefaults are the queue-broker command's settings before its arguments.
func newQueueDefaults(flavour string) queueDefaults {
	d := queueDefaults{queueType: queue.Classic, deliveryLimit: 20, consumerTimeout: 30 * time.Minute, visibility: 30 * time.Second,
		dedupWindow: 5 * time.Minute, processing: 10 * time.Millisecond, onFail: queue.FailRequeue, confirmTimeout: 5 * time.Second, batch: 1}
	if flavour == "sqs" {
		d.queueType, d.confirms = queue.Quorum, true
	}
	return d
}

func cmdQueueBroker(r *Runner, a *Args) (string, error) {
	if r.queue != nil {
		return "", fmt.Errorf("there is already a queue broker")
	}
	flavour, _ := a.String("flavour", "rabbit")
	if flavour != "rabbit" && flavour != "sqs" {
		return "", fmt.Errorf("flavour=%s: want rabbit or sqs", flavour)
	}
	cfg := queue.DefaultConfig()
	d := newQueueDefaults(flavour)
	for _, s := range queueBrokerSettings {
		if err := s.apply(a, &d, &cfg); err != nil {
			return "", err
		}
	}
	if flavour == "sqs" && !d.confirms {
		return "", fmt.Errorf("confirms=false: SQS answers every SendMessage")
	}
	costLine, err := applyCosts(r, a)
	if err != nil {
		return "", err
	}
	c, err := queue.New(r.World(), cfg)
	if err != nil {
		return "", invalidConfig(err)
	}
	r.queue = &queueRun{c: c, flavour: flavour, d: d}
	lines := []string{fmt.Sprintf("%s broker: nodes %s, heartbeat %s", flavour, strings.Join(c.Names, " "), cfg.Heartbeat)}
	if costLine != "" {
		lines = append(lines, costLine)
	}
	if len(cfg.Bugs) > 0 {
		var names []string
		for _, b := range cfg.Bugs {
			names = append(names, string(b))
		}
		lines[0] += ", planted bugs: " + strings.Join(names, ", ")
	}
	if flavour == "rabbit" {
		lines = append(lines, fmt.Sprintf("defaults: queue-type=%s delivery-limit=%d (quorum) consumer-timeout=%s prefetch=%s auto-ack=%t confirms=%t mandatory=%t processing=%s on-fail=%s",
			d.queueType, d.deliveryLimit, d.consumerTimeout, prefetchName(d.prefetch), d.autoAck, d.confirms, d.mandatory, d.processing, d.onFail))
	} else {
		lines = append(lines, fmt.Sprintf("defaults: queue-type=%s visibility=%s max-receive=%d dedup-window=%s batch=%d processing=%s extend=%t",
			d.queueType, d.visibility, d.maxReceive, d.dedupWindow, d.batch, d.processing, d.extend))
	}
	return strings.Join(lines, "\n"), nil
}

func prefetchName(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

// declareLimit bounds how long a declaration waits for its queues to get a leader.
const declareLimit = 5 * time.Second

func cmdExchange(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	kind, err := a.Required("type")
	if err != nil {
		return "", err
	}
	alt, _ := a.String("alternate", "")
	x := queue.Exchange{Name: name, Kind: queue.ExchangeKind(kind), Alternate: alt}
	if err := q.c.Declare(func(t *queue.Topology) error { return t.AddExchange(x) }, 0); err != nil {
		return "", err
	}
	out := fmt.Sprintf("exchange %s (%s)", name, kind)
	if alt != "" {
		out += ", alternate " + alt
	}
	return out, nil
}

func cmdQueue(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	d := q.d
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	cfg := queue.DefaultQueueConfig(name)
	typ, _ := a.String("type", string(d.queueType))
	cfg.Type = queue.QueueType(typ)
	cfg.Home, _ = a.String("node", q.c.Names[0])
	cfg.Members = a.List("members")
	if len(cfg.Members) == 0 {
		cfg.Members = slices.Clone(q.c.Names)
	}
	if cfg.Type == queue.Quorum && q.flavour == "rabbit" {
		cfg.DeliveryLimit = d.deliveryLimit
	}
	cfg.ConsumerTimeout = d.consumerTimeout
	cfg.Visibility = d.visibility
	cfg.DedupWindow = d.dedupWindow
	cfg.DLX, _ = a.String("dlx", "")
	cfg.DLXKey, _ = a.String("dlx-key", "")
	cfg.DLQ, _ = a.String("dlq", "")
	if cfg.DLQ != "" {
		cfg.MaxReceive = d.maxReceive
	}
	ovf, _ := a.String("overflow", string(cfg.Overflow))
	cfg.Overflow = queue.Overflow(ovf)
	for _, f := range []func() error{
		func() (err error) {
			cfg.DeliveryLimit, err = a.Int("delivery-limit", cfg.DeliveryLimit, -1, 1_000_000)
			return
		},
		func() (err error) { cfg.MessageTTL, err = a.Duration("ttl", 0); return },
		func() (err error) { cfg.MaxLength, err = a.Int("max-length", 0, 0, 1_000_000); return },
		func() (err error) {
			cfg.ConsumerTimeout, err = a.Duration("consumer-timeout", cfg.ConsumerTimeout)
			return
		},
		func() (err error) { cfg.Visibility, err = a.Duration("visibility", cfg.Visibility); return },
		func() (err error) { cfg.MaxReceive, err = a.Int("max-receive", cfg.MaxReceive, 0, 1000); return },
		func() (err error) { cfg.FIFO, err = a.Bool("fifo", false); return },
		func() (err error) { cfg.ContentDedup, err = a.Bool("content-dedup", false); return },
		func() (err error) { cfg.DedupWindow, err = a.Duration("dedup-window", cfg.DedupWindow); return },
		func() (err error) { cfg.Delay, err = a.Duration("delay", 0); return },
	} {
		if err := f(); err != nil {
			return "", err
		}
	}
	if cfg.MaxReceive > 0 && cfg.DLQ == "" {
		cfg.MaxReceive = 0
	}
	if err := q.c.Declare(func(t *queue.Topology) error { return t.AddQueue(cfg, q.c.Names) }, declareLimit); err != nil {
		return "", err
	}
	got, _ := q.c.Topo.Queue(name)
	out := got.String()
	if q.flavour == "sqs" {
		out += " visibility=" + got.Visibility.String()
	}
	if node, v, ok := q.c.Acting(name); ok {
		if got.Type == queue.Quorum {
			out += fmt.Sprintf("\nleader %s (term %d)", node, v.Term)
		}
	} else {
		out += "\nno node acts for it yet"
	}
	return out, nil
}

func cmdBind(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	x, err := a.Required("exchange")
	if err != nil {
		return "", err
	}
	qn, err := a.Required("queue")
	if err != nil {
		return "", err
	}
	key, _ := a.String("key", "")
	match, _ := a.String("match", "")
	hs, err := parseHeaders(a.List("headers"))
	if err != nil {
		return "", err
	}
	b := queue.Binding{Exchange: x, Queue: qn, Key: key, Match: match, Headers: hs}
	if err := q.c.Declare(func(t *queue.Topology) error { return t.AddBinding(b) }, 0); err != nil {
		return "", err
	}
	last := q.c.Topo.Bindings[len(q.c.Topo.Bindings)-1]
	return "bound " + last.String(), nil
}

// parseHeaders reads ("format:pdf", "type:report").
func parseHeaders(list []string) ([]queue.Header, error) {
	var hs []queue.Header
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("header %q: want KEY:VALUE", kv)
		}
		hs = append(hs, queue.Header{Key: k, Value: v})
	}
	return hs, nil
}

func cmdPublisher(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	cfg, err := q.publisherConfig(a)
	if err != nil {
		return "", err
	}
	if _, err := q.c.AddPublisher(name, cfg); err != nil {
		return "", err
	}
	return fmt.Sprintf("publisher %s on %s: confirms=%t confirm-timeout=%s", name, cfg.Nodes[0], cfg.Confirms, cfg.ConfirmTimeout), nil
}

func (q *queueRun) publisherConfig(a *Args) (queue.PublisherConfig, error) {
	cfg := queue.PublisherConfig{Confirms: q.d.confirms, ConfirmTimeout: q.d.confirmTimeout}
	var err error
	if cfg.Confirms, err = a.Bool("confirms", cfg.Confirms); err != nil {
		return cfg, err
	}
	if cfg.ConfirmTimeout, err = a.Duration("confirm-timeout", cfg.ConfirmTimeout); err != nil {
		return cfg, err
	}
	node, _ := a.String("node", q.c.Names[0])
	cfg.Nodes, err = q.rotation(node)
	return cfg, err
}

// rotation lists the broker nodes starting with first: where a client connects first,
// then where it fails over to.
func (q *queueRun) rotation(first string) ([]string, error) {
	i := slices.Index(q.c.Names, first)
	if i < 0 {
		return nil, fmt.Errorf("node=%s is not a broker node (%s)", first, strings.Join(q.c.Names, " "))
	}
	return append(slices.Clone(q.c.Names[i:]), q.c.Names[:i]...), nil
}

// publishValues reads value=, values= and count= (with prefix=) into fresh values.
func (r *Runner) publishValues(a *Args) ([]string, error) {
	values := a.List("values")
	if v, _ := a.String("value", ""); v != "" {
		values = append(values, v)
	}
	count, err := a.Int("count", 0, 0, 100_000)
	if err != nil {
		return nil, err
	}
	prefix, _ := a.String("prefix", "m")
	for i := 0; i < count; i++ {
		r.valueSeq++
		values = append(values, fmt.Sprintf("%s%d", prefix, r.valueSeq))
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("nothing to publish: give value=, values= or count=; usage: %s", a.cmd.Usage)
	}
	for _, v := range values {
		if r.sent[v] {
			return nil, fmt.Errorf("value %q was sent before; values must be unique so the checkers can follow each one", v)
		}
	}
	for _, v := range values {
		r.sent[v] = true
	}
	return values, nil
}

func (q *queueRun) publisherNode(name string, confirms bool) (sim.NodeID, error) {
	if cl, ok := q.c.Client(name); ok {
		if cl.Kind != queue.KindPublisher {
			return 0, fmt.Errorf("%s is a %s, not a publisher", name, cl.Kind)
		}
		return cl.ID, nil
	}
	cfg := queue.PublisherConfig{Confirms: confirms, ConfirmTimeout: q.d.confirmTimeout, Nodes: q.c.Names}
	cl, err := q.c.AddPublisher(name, cfg)
	return cl.ID, err
}

func cmdPublish(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	name, _ := a.String("publisher", "p1")
	x, _ := a.String("exchange", queue.DefaultExchange)
	key, _ := a.String("key", "")
	hs, err := parseHeaders(a.List("headers"))
	if err != nil {
		return "", err
	}
	mandatory, err := a.Bool("mandatory", q.d.mandatory)
	if err != nil {
		return "", err
	}
	ttl, err := a.Duration("ttl", 0)
	if err != nil {
		return "", err
	}
	wait, err := a.Bool("wait", true)
	if err != nil {
		return "", err
	}
	if x == queue.DefaultExchange && key == "" {
		return "", fmt.Errorf("a publish to the default exchange needs key=QUEUE (or give exchange=)")
	}
	values, err := r.publishValues(a)
	if err != nil {
		return "", err
	}
	id, err := q.publisherNode(name, q.d.confirms)
	if err != nil {
		return "", err
	}
	for _, v := range values {
		q.c.W.Inject(id, queue.PublishCmd{Exchange: x, Key: key, Headers: hs, Value: v, Mandatory: mandatory, TTL: ttl}, 0)
	}
	return q.awaitSends(r, name, values, wait, id)
}

func cmdSend(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	name, _ := a.String("producer", "p1")
	qn, err := a.Required("queue")
	if err != nil {
		return "", err
	}
	group, _ := a.String("group", "")
	dedup, _ := a.String("dedup-id", "")
	delay, err := a.Duration("delay", 0)
	if err != nil {
		return "", err
	}
	wait, err := a.Bool("wait", true)
	if err != nil {
		return "", err
	}
	cfg, ok := q.c.Topo.Queue(qn)
	if !ok {
		return "", fmt.Errorf("no queue %q", qn)
	}
	if cfg.FIFO && group == "" {
		return "", fmt.Errorf("queue %s is FIFO: give group= (MessageGroupId)", qn)
	}
	values, err := r.publishValues(a)
	if err != nil {
		return "", err
	}
	id, err := q.publisherNode(name, true)
	if err != nil {
		return "", err
	}
	for _, v := range values {
		q.c.W.Inject(id, queue.PublishCmd{Key: qn, Value: v, Group: group, DedupID: dedup, Delay: delay}, 0)
	}
	return q.awaitSends(r, name, values, wait, id)
}

// awaitSends runs until each value's send completed (unless !wait) and prints outcomes.
func (q *queueRun) awaitSends(r *Runner, name string, values []string, wait bool, id sim.NodeID) (string, error) {
	c := q.c
	okLabel := "sent (no confirms: the publisher cannot know more)"
	if p, _ := c.W.Node(id).(*queue.Publisher); p != nil && p.Confirms() {
		okLabel = "confirmed"
	}
	if q.flavour == "sqs" {
		okLabel = "sent (SendMessage answered: stored)"
	}
	if !wait {
		c.W.RunFor(0)
		return fmt.Sprintf("%s: %d messages handed to the publisher", name, len(values)), nil
	}
	end := c.W.Now().Add(q.d.confirmTimeout + time.Second)
	completed := allCompleted(c.History, values)
	if _, err := r.wait(name+"'s publishes", func(w *sim.World) bool { return w.Now() > end || completed() }, 10_000_000, sim.MaxTime); err != nil {
		return "", err
	}
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
			outcome[op.Send.Value] = okLabel
		case history.Fail:
			outcome[op.Send.Value] = "failed: " + op.Error
		case history.Info:
			outcome[op.Send.Value] = "unknown: " + op.Error
		}
	}
	// One line per run of equal outcomes keeps long publishes short.
	var lines []string
	for i := 0; i < len(values); {
		j := i + 1
		for j < len(values) && outcome[values[j]] == outcome[values[i]] {
			j++
		}
		o := outcome[values[i]]
		if o == "" {
			o = "pending"
		}
		if j-i > 2 {
			lines = append(lines, fmt.Sprintf("%s..%s: %s", values[i], values[j-1], o))
		} else {
			for k := i; k < j; k++ {
				lines = append(lines, values[k]+": "+o)
			}
		}
		i = j
	}
	return strings.Join(lines, "\n"), nil
}

func cmdSubscribe(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	qn, err := a.Required("queue")
	if err != nil {
		return "", err
	}
	cfg := queue.DefaultConsumerConfig(qn)
	cfg.Heartbeat = q.c.Cfg.Heartbeat
	cfg.OnFail = q.d.onFail
	for _, f := range []func() error{
		func() (err error) { cfg.Prefetch, err = a.Int("prefetch", q.d.prefetch, 0, 1_000_000); return },
		func() (err error) { cfg.AutoAck, err = a.Bool("auto-ack", q.d.autoAck); return },
		func() (err error) { cfg.Processing, err = a.Duration("processing", q.d.processing); return },
	} {
		if err := f(); err != nil {
			return "", err
		}
	}
	cfg.Fail = a.List("fail")
	if s, _ := a.String("on-fail", ""); s != "" {
		cfg.OnFail = queue.FailAction(s)
		if cfg.OnFail != queue.FailReject && cfg.OnFail != queue.FailRequeue && cfg.OnFail != queue.FailNack {
			return "", fmt.Errorf("on-fail=%s: want reject, requeue or nack", s)
		}
	}
	node, _ := a.String("node", q.c.Names[0])
	if cfg.Nodes, err = q.rotation(node); err != nil {
		return "", err
	}
	cl, err := q.c.AddConsumer(name, cfg)
	if err != nil {
		return "", err
	}
	end := q.c.W.Now().Add(5 * time.Second)
	if _, err := r.wait(name+"'s channel", func(w *sim.World) bool {
		cs, _ := w.Node(cl.ID).(*queue.Consumer)
		return w.Now() > end || (cs != nil && cs.Channel() != 0)
	}, 1_000_000, sim.MaxTime); err != nil {
		return "", err
	}
	mode := "manual acks"
	if cfg.AutoAck {
		mode = "auto-ack"
	}
	fail := ""
	if len(cfg.Fail) > 0 {
		fail = fmt.Sprintf(", fails on %s (%s)", strings.Join(cfg.Fail, " "), cfg.OnFail)
	}
	head := fmt.Sprintf("%s consumes %s: prefetch %s, %s, %s per message%s", name, qn, prefetchName(cfg.Prefetch), mode, cfg.Processing, fail)
	cs, _ := q.c.W.Node(cl.ID).(*queue.Consumer)
	if cs == nil || cs.Channel() == 0 {
		return head + "\nno channel yet", nil
	}
	at, _, _ := q.c.Acting(qn)
	return fmt.Sprintf("%s\nchannel %d on %s", head, cs.Channel(), at), nil
}

func cmdWorker(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	name, err := a.Required("name")
	if err != nil {
		return "", err
	}
	qn, err := a.Required("queue")
	if err != nil {
		return "", err
	}
	cfg := queue.DefaultWorkerConfig(qn)
	for _, f := range []func() error{
		func() (err error) { cfg.Batch, err = a.Int("batch", q.d.batch, 1, 10); return },
		func() (err error) { cfg.Visibility, err = a.Duration("visibility", 0); return },
		func() (err error) { cfg.Processing, err = a.Duration("processing", q.d.processing); return },
		func() (err error) { cfg.PollEvery, err = a.Duration("poll-every", cfg.PollEvery); return },
		func() (err error) { cfg.Extend, err = a.Bool("extend", q.d.extend); return },
	} {
		if err := f(); err != nil {
			return "", err
		}
	}
	if cfg.Extend && cfg.Visibility == 0 {
		qc, _ := q.c.Topo.Queue(qn)
		cfg.Visibility = qc.Visibility
	}
	cfg.Fail = a.List("fail")
	node, _ := a.String("node", q.c.Names[0])
	if cfg.Nodes, err = q.rotation(node); err != nil {
		return "", err
	}
	if _, err := q.c.AddWorker(name, cfg); err != nil {
		return "", err
	}
	vis := "the queue's visibility timeout"
	if cfg.Visibility > 0 {
		vis = "visibility " + cfg.Visibility.String()
	}
	out := fmt.Sprintf("%s works on %s: batch %d, %s, %s per message, polls every %s when empty", name, qn, cfg.Batch, vis, cfg.Processing, cfg.PollEvery)
	if cfg.Extend {
		out += fmt.Sprintf(", extends visibility every %s", cfg.Visibility/2)
	}
	if len(cfg.Fail) > 0 {
		out += ", fails on " + strings.Join(cfg.Fail, " ")
	}
	return out, nil
}

func cmdDrain(r *Runner, a *Args) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	limit, err := a.Duration("limit", time.Minute)
	if err != nil {
		return "", err
	}
	if q.c.Drain(limit) {
		return fmt.Sprintf("settled at %s", q.c.W.Now()), nil
	}
	var busy []string
	for _, qc := range q.c.Topo.Queues {
		_, v, ok := q.c.Acting(qc.Name)
		switch {
		case !ok:
			busy = append(busy, qc.Name+": no node acts for it")
		case v.State.Len() > 0:
			busy = append(busy, fmt.Sprintf("%s: %d ready, %d unsettled", qc.Name, len(v.State.Ready()), len(v.State.Unsettled())))
		}
	}
	return fmt.Sprintf("not settled by %s: %s", q.c.W.Now(), strings.Join(busy, "; ")), nil
}

// ---- check, history, show ----

func cmdQueueHistory(r *Runner, a *Args) (string, error) {
	return printHistory(a, r.queue.c.History.History(), formatQueueOp)
}

func formatQueueOp(op history.Op) string {
	head := fmt.Sprintf("%d %s p%d %s %s", op.Index, sim.Time(op.Time), op.Process, op.Type, op.F)
	var body string
	switch op.F {
	case history.Send:
		body = " " + op.Send.Topic
		if op.Send.Key != "" && op.Send.Key != op.Send.Topic {
			body += " key=" + op.Send.Key
		}
		body += " " + op.Send.Value
	case history.Poll:
		body = " " + op.Poll.Group
		for _, pr := range op.Poll.Reads {
			for _, rec := range pr.Records {
				body += fmt.Sprintf(" m%d:%s", rec.Offset, rec.Value)
			}
		}
	}
	if op.Error != "" {
		body += " (" + op.Error + ")"
	}
	return head + body
}

func showQueues(r *Runner, a *Args, words []string) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, qc := range q.c.Topo.Queues {
		lines = append(lines, queueLine(q.c, qc))
	}
	if len(lines) == 0 {
		return "no queues", nil
	}
	return strings.Join(lines, "\n"), nil
}

func queueLine(c *queue.Cluster, qc queue.QueueConfig) string {
	where := qc.Home
	if qc.Type == queue.Quorum {
		where = strings.Join(qc.Members, " ")
	}
	node, v, ok := c.Acting(qc.Name)
	if !ok {
		return fmt.Sprintf("%s: %s on %s, no node acts for it", qc.Name, qc.Type, where)
	}
	st := v.State
	lead := ""
	if qc.Type == queue.Quorum {
		lead = fmt.Sprintf(", leader %s (term %d)", node, v.Term)
	}
	s := st.Stats()
	return fmt.Sprintf("%s: %s on %s%s: ready %d, unacked %d, consumers %d; enqueued %d, acked %d, dead-lettered %d, dropped %d",
		qc.Name, qc.Type, where, lead, len(st.Ready()), len(st.Unsettled()), len(st.Consumers()), s.Enqueued, s.Acked+s.Deleted, s.DeadLettered+s.Redriven, s.Dropped)
}

func showQueue(r *Runner, a *Args, words []string) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	if len(words) != 1 {
		return "", fmt.Errorf("usage: show queue NAME")
	}
	qc, ok := q.c.Topo.Queue(words[0])
	if !ok {
		return "", fmt.Errorf("no queue %q", words[0])
	}
	lines := []string{queueLine(q.c, qc)}
	_, v, ok := q.c.Acting(qc.Name)
	if !ok {
		return lines[0], nil
	}
	st := v.State
	if ready := st.Ready(); len(ready) > 0 {
		var ms []string
		for i, m := range ready {
			if i == 12 {
				ms = append(ms, fmt.Sprintf("... (%d in all)", len(ready)))
				break
			}
			s := m.Label()
			if m.AcquiredCount > 0 {
				s += fmt.Sprintf("(delivered %d, failed %d)", m.AcquiredCount, m.DeliveryCount)
			}
			ms = append(ms, s)
		}
		lines = append(lines, "  ready: "+strings.Join(ms, " "))
	}
	unsettled := st.Unsettled()
	for i, u := range unsettled {
		if i == 8 {
			lines = append(lines, fmt.Sprintf("  ... %d more unsettled", len(unsettled)-i))
			break
		}
		if u.Handle != "" {
			lines = append(lines, fmt.Sprintf("  in flight: %s as %s by %s, invisible until %s (receive %d)", u.Msg.Label(), u.Handle, u.Consumer, u.Msg.VisibleAt, u.Msg.AcquiredCount))
			continue
		}
		lines = append(lines, fmt.Sprintf("  unacked: %s -> %s ch%d tag %d since %s", u.Msg.Label(), u.Consumer, u.Channel, u.Tag, u.At))
	}
	for _, cv := range st.Consumers() {
		lines = append(lines, fmt.Sprintf("  consumer %s ch%d: prefetch %s, unacked %d", cv.Name, cv.Channel, prefetchName(cv.Prefetch), cv.Unacked))
	}
	s := st.Stats()
	sqs := s.Received+s.Deleted+s.Redriven+s.Deduplicated > 0
	if s.Delivered > 0 || !sqs {
		lines = append(lines, fmt.Sprintf("  counters: enqueued %d, delivered %d (redelivered %d), acked %d, requeued %d, dead-lettered %d, expired %d, dropped %d",
			s.Enqueued, s.Delivered, s.Redelivered, s.Acked, s.Requeued, s.DeadLettered, s.Expired, s.Dropped))
	}
	if sqs {
		lines = append(lines, fmt.Sprintf("  counters: sent %d, received %d, deleted %d, stale deletes %d, redriven %d, deduplicated %d",
			s.Enqueued, s.Received, s.Deleted, s.Stale, s.Redriven, s.Deduplicated))
	}
	return strings.Join(lines, "\n"), nil
}

func showExchanges(r *Runner, a *Args, words []string) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	t := q.c.Topo
	var lines []string
	for _, x := range t.Exchanges {
		line := fmt.Sprintf("%s (%s)", x.Name, x.Kind)
		if x.Alternate != "" {
			line += ", alternate " + x.Alternate
		}
		lines = append(lines, line)
		for _, b := range t.Bindings {
			if b.Exchange == x.Name {
				lines = append(lines, "  "+b.String())
			}
		}
	}
	if len(lines) == 0 {
		return "no exchanges but the default one", nil
	}
	return strings.Join(lines, "\n"), nil
}

func showQueueClients(r *Runner, a *Args, words []string) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	var lines []string
	for _, cl := range q.c.Clients {
		switch n := q.c.W.Node(cl.ID).(type) {
		case *queue.Publisher:
			s := n.Stats()
			lines = append(lines, fmt.Sprintf("%s: published %d, confirmed %d, nacked %d, returned %d, unknown %d, in flight %d",
				cl.Name, s.Published, s.Confirmed, s.Nacked, s.Returned, s.Unknown, n.InFlight()))
		case *queue.Consumer:
			s := n.Stats()
			lines = append(lines, fmt.Sprintf("%s: channel %d, delivered %d (redelivered %d), processed %d, failed %d, acks lost %d, buffered dropped %d; processed %s",
				cl.Name, n.Channel(), s.Delivered, s.Redelivered, s.Processed, s.Failed, s.AcksLost, s.Dropped, valueList(s.Values)))
		case *queue.Worker:
			s := n.Stats()
			lines = append(lines, fmt.Sprintf("%s: receives %d, received %d, processed %d, failed %d, deleted %d, stale deletes %d; processed %s",
				cl.Name, s.Receives, s.Received, s.Processed, s.Failed, s.Deleted, s.StaleDeletes, valueList(s.Values)))
		default:
			lines = append(lines, fmt.Sprintf("%s: %s", cl.Name, q.c.W.Status(cl.ID)))
		}
	}
	if len(lines) == 0 {
		return "no clients", nil
	}
	return strings.Join(lines, "\n"), nil
}

func valueList(vs []string) string {
	if len(vs) == 0 {
		return "nothing"
	}
	if len(vs) > 20 {
		return strings.Join(vs[:20], " ") + fmt.Sprintf(" ... (%d in all)", len(vs))
	}
	return strings.Join(vs, " ")
}
