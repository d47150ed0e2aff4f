// Package compare runs one workload through several designs, with the same faults at the
// same moments, and tabulates what each delivered, duplicated, lost and reordered (mqsim
// compare): a Kafka consumer group over a log, a Kafka share group (KIP-932) over the same
// kind of log, RabbitMQ-style and SQS-style queues. The closing text is built from the
// table's figures, so it says only what the run showed.
package compare

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/group"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/queue"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// Workload is one comparison: the same orders, keys and faults for both designs.
type Workload struct {
	Name, What    string
	Orders, keys  int
	every         time.Duration
	poison        string        // the value whose processing always fails; "" for none
	consumerCrash time.Duration // when c1 crashes, after the first publish; 0: never
	brokerCrash   time.Duration // when the leader broker crashes; 0: never
	brokerBack    time.Duration // when it restarts
}

// Workloads are the comparisons mqsim compare offers.
var Workloads = []Workload{
	{Name: "orders", What: "orders with a poison message, a consumer crash and a broker crash",
		Orders: 40, keys: 8, every: 25 * time.Millisecond, poison: "order-13",
		consumerCrash: 400 * time.Millisecond, brokerCrash: 700 * time.Millisecond, brokerBack: 5 * time.Second},
	{Name: "calm", What: "the same orders without faults", Orders: 40, keys: 8, every: 25 * time.Millisecond},
	{Name: "poison", What: "the same orders with a poison message", Orders: 40, keys: 8, every: 25 * time.Millisecond, poison: "order-13"},
	{Name: "consumer-crash", What: "the same orders with a consumer crash", Orders: 40, keys: 8, every: 25 * time.Millisecond,
		consumerCrash: 400 * time.Millisecond},
	{Name: "broker-crash", What: "the same orders with a broker crash", Orders: 40, keys: 8, every: 25 * time.Millisecond,
		brokerCrash: 700 * time.Millisecond, brokerBack: 5 * time.Second},
}

// Find returns the workload named name.
func Find(name string) (Workload, error) {
	var names []string
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return Workload{}, fmt.Errorf("no Workload %q; want one of %s", name, strings.Join(names, ", "))
}

// Names lists the workloads with what each does, for help texts.
func Names() string {
	var names []string
	for _, w := range Workloads {
		names = append(names, w.Name+" ("+w.What+")")
	}
	return strings.Join(names, ", ")
}

// stepper runs scenario lines one at a time on one runner, keeping the transcript.
type stepper struct {
	r          *runner.Runner
	transcript strings.Builder
}

func (s *stepper) do(format string, args ...any) (string, error) {
	line := fmt.Sprintf(format, args...)
	script, err := script.Parse("compare", line+"\n----\n")
	if err != nil {
		return "", err
	}
	out, err := s.r.Exec(script.Steps[0])
	if err != nil {
		return "", err
	}
	s.transcript.WriteString(script.Steps[0].Format(out) + "\n")
	return out, nil
}

// outcome is what one design did with the Workload.
type outcome struct {
	design     string
	h          history.History
	dlq        string // the queue dead letters went to, "" for none
	needed     []string
	poison     string
	transcript string
	waits      string // why its slowest orders waited, when the run shows it
}

// keys maps each order's value to its customer key.
func (w Workload) keyOfValue() map[string]string {
	m := make(map[string]string, w.Orders)
	for i := 1; i <= w.Orders; i++ {
		key, value := w.value(i)
		m[value] = key
	}
	return m
}

func (w Workload) value(i int) (key, value string) {
	return fmt.Sprintf("customer-%d", (i-1)%w.keys+1), fmt.Sprintf("order-%d", i)
}

// publishAll publishes the orders one every w.every, applying the faults at their times,
// and returns when it started.
func (w Workload) publishAll(s *stepper, publish func(key, value string) error, crashConsumer, crashBroker func() error) (sim.Time, error) {
	start := s.r.World().Now()
	consumerDone, brokerDone := w.consumerCrash == 0, w.brokerCrash == 0
	for i := 1; i <= w.Orders; i++ {
		key, value := w.value(i)
		if err := publish(key, value); err != nil {
			return start, err
		}
		next := start.Add(time.Duration(i) * w.every)
		for _, f := range []struct {
			at   time.Duration
			done *bool
			do   func() error
		}{{w.consumerCrash, &consumerDone, crashConsumer}, {w.brokerCrash, &brokerDone, crashBroker}} {
			if !*f.done && start.Add(f.at) <= next {
				if _, err := s.do("run until=%s", start.Add(f.at)); err != nil {
					return start, err
				}
				if err := f.do(); err != nil {
					return start, err
				}
				*f.done = true
			}
		}
		if _, err := s.do("run until=%s", next); err != nil {
			return start, err
		}
	}
	return start, nil
}

// drive publishes the workload through publish (the line that publishes an order) with
// its faults: crashConsumer is the line that crashes consumer c1, leader names the node to
// crash at the broker crash (the leader of the first partition or the queue's acting
// node). It restarts that node at the workload's time and runs until every acknowledged
// order was processed, by h's reckoning, or limit passes.
func (w Workload) drive(s *stepper, publish func(key, value string) string, crashConsumer string, leader func() (string, bool),
	h func() history.History, limit time.Duration) error {
	crashed := ""
	start, err := w.publishAll(s,
		func(key, value string) error { _, err := s.do("%s", publish(key, value)); return err },
		func() error { _, err := s.do("%s", crashConsumer); return err },
		func() error {
			node, ok := leader()
			if !ok {
				return nil
			}
			crashed = node
			_, err := s.do("crash %s", node)
			return err
		})
	if err != nil {
		return err
	}
	if err := w.restartAt(s, start, crashed); err != nil {
		return err
	}
	return readAll(s, h, limit)
}

// leaderOf is the broker leading the first partition of the cluster's topic.
func leaderOf(c *cluster.Cluster) func() (string, bool) {
	return func() (string, bool) {
		i, ok := c.Leader(proto.TP{Topic: c.Cfg.Topic.Name, Partition: 0})
		if !ok {
			return "", false
		}
		return c.W.Name(c.Brokers[i]), true
	}
}

// actingNode is the queue broker node acting for the orders queue.
func actingNode(qc *queue.Cluster) func() (string, bool) {
	return func() (string, bool) {
		node, _, ok := qc.Acting("orders")
		return node, ok
	}
}

// restartAt restarts a crashed broker at start+w.brokerBack (now, if that has passed).
func (w Workload) restartAt(s *stepper, start sim.Time, node string) error {
	if node == "" {
		return nil
	}
	if at := start.Add(w.brokerBack); at > s.r.World().Now() {
		if _, err := s.do("run until=%s", at); err != nil {
			return err
		}
	}
	_, err := s.do("restart %s", node)
	return err
}

// readAll runs until every acknowledged value was processed or limit passes.
func readAll(s *stepper, h func() history.History, limit time.Duration) error {
	for end := s.r.World().Now().Add(limit); s.r.World().Now() < end; {
		if len(missing(h())) == 0 {
			return nil
		}
		if _, err := s.do("run for=500ms"); err != nil {
			return err
		}
	}
	return nil
}

func runLog(w Workload, seed uint64) (*outcome, error) {
	s := &stepper{r: runner.NewRunner(runner.Options{Seed: seed, SeedSet: true})}
	const partitions = 4
	if _, err := s.do("cluster brokers=3 partitions=%d rf=3 min-isr=2 acks=all idempotence=true flush=every-batch session-timeout=3s heartbeat=1s "+
		"auto-offset-reset=earliest group-session-timeout=6s group-heartbeat=2s commit=after request-timeout=3s", partitions); err != nil {
		return nil, err
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := s.do("join consumer=%s group=g poll-every=20ms processing=10ms", c); err != nil {
			return nil, err
		}
	}
	c := s.r.Cluster()
	publish := func(key, value string) string { return fmt.Sprintf("produce key=%s value=%s wait=false", key, value) }
	if err := w.drive(s, publish, "consumer-crash c1", leaderOf(c), c.History.History, time.Minute); err != nil {
		return nil, err
	}
	if _, err := s.do("show group g"); err != nil {
		return nil, err
	}
	h := c.History.History()
	rebalances, fetchTimeouts := 0, 0
	for _, e := range c.W.Trace().Events() {
		switch e.Data.(type) {
		case group.GroupStabilized:
			rebalances++
		case client.FetchTimeout:
			fetchTimeouts++
		}
	}
	commits := 0
	for _, op := range h {
		if op.F == history.Commit && op.Type == history.Ok {
			commits++
		}
	}
	o := &outcome{design: "log (Kafka-style)", h: h, transcript: s.transcript.String()}
	if fetchTimeouts > 0 {
		o.waits = fmt.Sprintf("The log design's consumers waited out request.timeout.ms (%s) on %d %s that got no answer.",
			c.Cfg.Consumer.RequestTimeout, fetchTimeouts, plural(fetchTimeouts, "fetch", "fetches"))
	}
	o.needed = []string{
		fmt.Sprintf("%d partitions; a key's orders share one, in order", partitions),
		fmt.Sprintf("group offsets: %d commits, after processing", commits),
		fmt.Sprintf("%d rebalances (generations)", rebalances),
	}
	if w.poison != "" {
		o.poison = "read like any record: no per-message nack (skip it, retry in place and block the partition, or produce it to a DLQ topic by hand)"
	}
	return o, nil
}

func runShare(w Workload, seed uint64) (*outcome, error) {
	s := &stepper{r: runner.NewRunner(runner.Options{Seed: seed, SeedSet: true})}
	const partitions = 4
	if _, err := s.do("cluster brokers=3 partitions=%d rf=3 min-isr=2 acks=all idempotence=true flush=every-batch session-timeout=3s heartbeat=1s "+
		"request-timeout=3s", partitions); err != nil {
		return nil, err
	}
	poison := ""
	if w.poison != "" {
		poison = fmt.Sprintf(" poison=(%s)", w.poison)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := s.do("share-consumer name=%s group=g topics=(t) ack=explicit max-poll-records=5 processing=10ms%s", c, poison); err != nil {
			return nil, err
		}
	}
	// share.auto.offset.reset is latest, Kafka's default: a share-partition starts where
	// the log ends when the group first fetches from it, so the orders wait until both
	// members fetch.
	if _, err := s.do("run for=2s"); err != nil {
		return nil, err
	}
	c := s.r.Cluster()
	publish := func(key, value string) string { return fmt.Sprintf("produce key=%s value=%s wait=false", key, value) }
	processed := func() history.History { return acceptedOnly(c.History.History()) }
	if err := w.drive(s, publish, "crash c1", leaderOf(c), processed, 2*time.Minute); err != nil {
		return nil, err
	}
	if _, err := s.do("show share-group g"); err != nil {
		return nil, err
	}
	h := c.History.History()
	acks := map[string]int{}
	redelivered, maxCount := 0, 0
	for _, op := range h {
		switch {
		case op.F == history.Ack && op.Type == history.Ok:
			for _, a := range op.Ack.Acks {
				acks[a.Type]++
			}
		case op.F == history.Poll && op.Type == history.Ok:
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					if r.DeliveryCount > 1 {
						redelivered++
					}
					if r.Value == w.poison {
						maxCount = max(maxCount, r.DeliveryCount)
					}
				}
			}
		}
	}
	o := &outcome{design: "share group (Kafka 4.2)", h: acceptedOnly(h), transcript: s.transcript.String()}
	for _, e := range c.W.Trace().Events() {
		if f, ok := e.Data.(group.ShareMemberFenced); ok && len(f.Partitions) > 0 {
			o.waits = fmt.Sprintf("The share group's member %s kept %s until group.share.session.timeout.ms (%s) removed it.",
				f.Member, proto.TPList(f.Partitions), c.Cfg.Share.SessionTimeout)
			break
		}
	}
	o.needed = []string{
		fmt.Sprintf("%d partitions shared by 2 members, per-record acks", partitions),
		fmt.Sprintf("%d accepts, %d releases, %d rejects", acks[history.AckAccept], acks[history.AckRelease], acks[history.AckReject]),
		fmt.Sprintf("%d redeliveries (lock %s, session timeout %s)", redelivered, c.Cfg.Share.RecordLockDuration, c.Cfg.Share.SessionTimeout),
	}
	if w.poison != "" {
		o.poison = fmt.Sprintf("released on each failure, archived after %d deliveries (delivery count limit %d); no DLQ before Kafka 4.4",
			maxCount, c.Cfg.Share.DeliveryCountLimit)
	}
	return o, nil
}

// acceptedOnly is a share group's history with only the deliveries its consumers
// processed: a share poll's record stays when the consumer's next acknowledgement of it
// accepted it (or was never learned), and goes when it released or rejected it (a
// failed processing, as a queue consumer's failed delivery is not a processing).
func acceptedOnly(h history.History) history.History {
	type delivery struct {
		process int
		tp      history.TopicPartition
		offset  int64
	}
	type record struct {
		tp     history.TopicPartition
		offset int64
	}
	failed := map[int]map[record]bool{} // poll op index -> its records whose processing failed
	open := map[delivery]int{}          // a delivery's poll op, until the consumer acknowledged it
	for i, op := range h {
		switch {
		case op.F == history.Poll && op.Type == history.Ok && op.Poll.Share:
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					open[delivery{op.Process, pr.TopicPartition, r.Offset}] = i
				}
			}
		case op.F == history.Ack && op.Type == history.Invoke:
			for _, a := range op.Ack.Acks {
				d := delivery{op.Process, op.Ack.TopicPartition, a.Offset}
				poll, ok := open[d]
				if !ok {
					continue
				}
				delete(open, d)
				if a.Type != history.AckAccept {
					if failed[poll] == nil {
						failed[poll] = map[record]bool{}
					}
					failed[poll][record{d.tp, d.offset}] = true
				}
			}
		}
	}
	out := slices.Clone(h)
	for i := range out {
		op := &out[i]
		if failed[i] == nil {
			continue
		}
		pv := *op.Poll
		pv.Reads = nil
		for _, pr := range op.Poll.Reads {
			kept := history.PartitionRecords{TopicPartition: pr.TopicPartition}
			for _, r := range pr.Records {
				if !failed[i][record{pr.TopicPartition, r.Offset}] {
					kept.Records = append(kept.Records, r)
				}
			}
			pv.Reads = append(pv.Reads, kept)
		}
		op.Poll = &pv
	}
	return out
}

func runQueue(w Workload, seed uint64) (*outcome, error) {
	s := &stepper{r: runner.NewRunner(runner.Options{Seed: seed, SeedSet: true})}
	const deliveryLimit, prefetch = 3, 10
	for _, line := range []string{
		fmt.Sprintf("queue-broker nodes=3 queue-type=quorum confirms=true prefetch=%d delivery-limit=%d", prefetch, deliveryLimit),
		"exchange name=dlx type=fanout",
		"queue name=orders-dlq",
		"bind exchange=dlx queue=orders-dlq",
		"queue name=orders dlx=dlx",
		"exchange name=shop type=topic",
		"bind exchange=shop queue=orders key=#",
		"subscribe consumer=inspector queue=orders-dlq",
	} {
		if _, err := s.do("%s", line); err != nil {
			return nil, err
		}
	}
	fail := ""
	if w.poison != "" {
		fail = fmt.Sprintf(" fail=(%s) on-fail=requeue", w.poison)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := s.do("subscribe consumer=%s queue=orders processing=10ms%s", c, fail); err != nil {
			return nil, err
		}
	}
	qc := s.r.QueueBroker()
	publish := func(key, value string) string {
		return fmt.Sprintf("publish exchange=shop key=%s value=%s wait=false", key, value)
	}
	if err := w.drive(s, publish, "crash c1", actingNode(qc), qc.History.History, time.Minute); err != nil {
		return nil, err
	}
	if _, err := s.do("drain limit=10s"); err != nil {
		return nil, err
	}
	if _, err := s.do("show queues"); err != nil {
		return nil, err
	}
	o := &outcome{design: "queue (RabbitMQ-style)", h: qc.History.History(), dlq: "orders-dlq", transcript: s.transcript.String()}
	_, v, ok := qc.Acting("orders")
	if ok {
		st := v.State.Stats()
		o.needed = []string{
			fmt.Sprintf("1 queue, 2 competing consumers, prefetch %d", prefetch),
			fmt.Sprintf("%d acks, %d requeues, %d redeliveries", st.Acked, st.Requeued, st.Redelivered),
			fmt.Sprintf("%d channels closed (crash, leader change)", st.ChannelsClosed),
		}
		if w.poison != "" {
			o.poison = fmt.Sprintf("dead-lettered after %d failed deliveries (delivery-limit %d), processed from %s", deliveryLimit+1, deliveryLimit, o.dlq)
		}
	}
	return o, nil
}

// missing lists the acknowledged values no ok poll read.
func missing(h history.History) []string {
	read := map[string]bool{}
	for _, op := range h {
		if op.F == history.Poll && op.Type == history.Ok {
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					read[r.Value] = true
				}
			}
		}
	}
	var out []string
	for _, op := range h {
		if op.F == history.Send && op.Type == history.Ok && !read[op.Send.Value] {
			out = append(out, op.Send.Value)
		}
	}
	return out
}

// metrics are the numbers of the comparison, from a history alone.
type metrics struct {
	published, acked, delivered, viaDLQ, duplicated, lost int
	lostValues                                            []string
	keys, reorderedKeys                                   int
	latencies                                             []time.Duration // send to first processing, per delivered value
}

// measure takes the figures of an outcome from its history alone; an order's key is the
// workload's (an SQS standard queue has none on the wire).
func measure(o *outcome, keyOf map[string]string) metrics {
	var m metrics
	type sent struct {
		key   string
		at    int64
		acked bool
	}
	sends := map[string]sent{}
	var order []string
	firstRead := map[string]int64{}
	firstTopic := map[string]string{}
	reads := map[string]int{}
	for _, op := range o.h {
		switch {
		case op.F == history.Send && op.Type == history.Invoke:
			m.published++
			sends[op.Send.Value] = sent{key: keyOf[op.Send.Value], at: op.Time}
			order = append(order, op.Send.Value)
		case op.F == history.Send && op.Type == history.Ok:
			s := sends[op.Send.Value]
			s.acked = true
			sends[op.Send.Value] = s
		case op.F == history.Poll && op.Type == history.Ok:
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					reads[r.Value]++
					if _, ok := firstRead[r.Value]; !ok {
						firstRead[r.Value], firstTopic[r.Value] = op.Time, pr.Topic
					}
				}
			}
		}
	}
	byKey := map[string][]string{}
	var keys []string
	for _, v := range order {
		s := sends[v]
		if !s.acked {
			continue
		}
		m.acked++
		if byKey[s.key] == nil {
			keys = append(keys, s.key)
		}
		byKey[s.key] = append(byKey[s.key], v)
		t, ok := firstRead[v]
		if !ok {
			m.lost++
			m.lostValues = append(m.lostValues, v)
			continue
		}
		m.delivered++
		if o.dlq != "" && firstTopic[v] == o.dlq {
			m.viaDLQ++
		}
		if reads[v] > 1 {
			m.duplicated++
		}
		m.latencies = append(m.latencies, time.Duration(t-s.at))
	}
	m.keys = len(keys)
	for _, k := range keys {
		var latest int64 = -1
		for _, v := range byKey[k] {
			t, ok := firstRead[v]
			if !ok {
				continue
			}
			if t < latest {
				m.reorderedKeys++
				break
			}
			latest = t
		}
	}
	slices.Sort(m.latencies)
	return m
}

// percentile is the nearest-rank percentile p (0..100) of sorted durations.
func percentile(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted)*p + 99) / 100
	i = min(max(i, 1), len(sorted))
	return roundDuration(sorted[i-1]).String()
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

func runSQS(w Workload, seed uint64) (*outcome, error) {
	s := &stepper{r: runner.NewRunner(runner.Options{Seed: seed, SeedSet: true})}
	const maxReceive = 3
	for _, line := range []string{
		fmt.Sprintf("queue-broker flavour=sqs nodes=3 max-receive=%d", maxReceive),
		"queue name=orders-dlq",
		"queue name=orders dlq=orders-dlq",
		"worker name=inspector queue=orders-dlq",
	} {
		if _, err := s.do("%s", line); err != nil {
			return nil, err
		}
	}
	fail := ""
	if w.poison != "" {
		fail = fmt.Sprintf(" fail=(%s)", w.poison)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := s.do("worker name=%s queue=orders processing=10ms poll-every=20ms%s", c, fail); err != nil {
			return nil, err
		}
	}
	qc := s.r.QueueBroker()
	publish := func(key, value string) string { return fmt.Sprintf("send queue=orders value=%s wait=false", value) }
	if err := w.drive(s, publish, "crash c1", actingNode(qc), qc.History.History, 2*time.Minute); err != nil {
		return nil, err
	}
	if _, err := s.do("show queues"); err != nil {
		return nil, err
	}
	o := &outcome{design: "queue (SQS-style)", h: qc.History.History(), dlq: "orders-dlq", transcript: s.transcript.String()}
	if _, v, ok := qc.Acting("orders"); ok {
		st := v.State.Stats()
		o.needed = []string{
			"1 standard queue, 2 polling workers, no keys",
			fmt.Sprintf("%d receives, %d deletes, %d stale deletes", st.Received, st.Deleted, st.Stale),
			"a visibility timeout (30s) instead of channels",
		}
		if w.poison != "" {
			o.poison = fmt.Sprintf("redriven to %s on its receive after %d failed ones (maxReceiveCount %d)", o.dlq, maxReceive, maxReceive)
		}
	}
	return o, nil
}

// designs are the designs a comparison runs, in the table's column order.
var designs = []func(Workload, uint64) (*outcome, error){runLog, runShare, runQueue, runSQS}

// Result is a comparison: each design's outcome and the figures measured from its history.
type Result struct {
	Workload Workload
	Seed     uint64
	outcomes []*outcome
	figures  []metrics
}

// Compare puts the workload through every design with the same seed.
func Compare(w Workload, seed uint64) (*Result, error) {
	r := &Result{Workload: w, Seed: seed}
	keys := w.keyOfValue()
	for _, run := range designs {
		o, err := run(w, seed)
		if err != nil {
			return nil, err
		}
		r.outcomes = append(r.outcomes, o)
		r.figures = append(r.figures, measure(o, keys))
	}
	return r, nil
}

// Run compares the designs and prints the comparison.
func Run(out io.Writer, w Workload, seed uint64, scripts bool) error {
	r, err := Compare(w, seed)
	if err != nil {
		return err
	}
	return r.Write(out, scripts)
}

// Write prints the table, the closing text drawn from it, and with scripts the scenario
// each design ran.
func (r *Result) Write(out io.Writer, scripts bool) error {
	w := r.Workload
	fmt.Fprintf(out, "Workload %s: %s\n", w.Name, w.What)
	fmt.Fprintf(out, "%d orders over %d customer keys, one every %s", w.Orders, w.keys, w.every)
	if w.poison != "" {
		fmt.Fprintf(out, "; %s always fails processing", w.poison)
	}
	if w.consumerCrash > 0 {
		fmt.Fprintf(out, "; consumer c1 crashes at +%s", w.consumerCrash)
	}
	if w.brokerCrash > 0 {
		fmt.Fprintf(out, "; the leader broker crashes at +%s, back at +%s", w.brokerCrash, w.brokerBack)
	}
	fmt.Fprintf(out, " (seed %d)\n\n", r.Seed)
	// One row per design, so the table stays narrow however many designs there are; what
	// each needed and did with the poison message follow as lines of their own.
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	width := len("design")
	for _, o := range r.outcomes {
		width = max(width, len(o.design))
	}
	// Names padded to one width read left-aligned in the right-aligned table.
	fmt.Fprintf(tw, "%-*s\tacknowledged\tprocessed\ttwice\tlost\treordered keys\tp50\tp90\tp99\tmax\t\n", width, "design")
	for i, o := range r.outcomes {
		m := r.figures[i]
		processed := fmt.Sprint(m.delivered)
		if m.viaDLQ > 0 {
			processed = fmt.Sprintf("%d (%d via DLQ)", m.delivered, m.viaDLQ)
		}
		fmt.Fprintf(tw, "%-*s\t%d / %d\t%s\t%d\t%d\t%d of %d\t%s\t%s\t%s\t%s\t\n", width, o.design, m.acked, m.published, processed,
			m.duplicated, m.lost, m.reorderedKeys, m.keys,
			percentile(m.latencies, 50), percentile(m.latencies, 90), percentile(m.latencies, 99), percentile(m.latencies, 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nacknowledged: confirmed sends of all published; processed: orders processed at least once;")
	fmt.Fprintln(out, "twice: processed more than once; lost: confirmed, never processed; latencies: send to first")
	fmt.Fprintln(out, "processing, in virtual time.")
	fmt.Fprintln(out, "\nWhat each design needed:")
	for _, o := range r.outcomes {
		fmt.Fprintf(out, "  %s: %s\n", o.design, strings.Join(o.needed, "; "))
	}
	if w.poison != "" {
		fmt.Fprintf(out, "\nThe poison message (%s):\n", w.poison)
		for _, o := range r.outcomes {
			fmt.Fprintf(out, "  %s: %s\n", o.design, o.poison)
		}
	}
	fmt.Fprintln(out)
	for _, line := range r.closing() {
		fmt.Fprintln(out, line)
	}
	if scripts {
		for _, o := range r.outcomes {
			fmt.Fprintf(out, "\n==== %s: the scenario it ran ====\n\n%s", o.design, o.transcript)
		}
	}
	return nil
}

// closing is the text under the table: each sentence restates figures of the table (and
// the mechanism behind them), so none can say what this run did not show.
func (r *Result) closing() []string {
	var lost, dup, kept, reordered []string
	for i, o := range r.outcomes {
		m := r.figures[i]
		if m.lost > 0 {
			note := ""
			if r.Workload.poison != "" && slices.Contains(m.lostValues, r.Workload.poison) {
				note = " (the poison message among them)"
			}
			lost = append(lost, fmt.Sprintf("%s %d%s", o.design, m.lost, note))
		}
		if m.duplicated > 0 {
			dup = append(dup, fmt.Sprintf("%s %d", o.design, m.duplicated))
		}
		if m.reorderedKeys == 0 {
			kept = append(kept, o.design)
		} else {
			reordered = append(reordered, fmt.Sprintf("%s %d of %d", o.design, m.reorderedKeys, m.keys))
		}
	}
	var out []string
	if len(lost) == 0 {
		out = append(out, "No design lost an acknowledged order.")
	} else {
		out = append(out, "Acknowledged orders never processed: "+strings.Join(lost, ", ")+".")
	}
	if len(dup) == 0 {
		out = append(out, "No design processed an order twice.")
	} else {
		out = append(out, "Processed twice: "+strings.Join(dup, ", ")+". That is at-least-once at work: an order",
			"processed whose commit, ack or delete did not take effect (a consumer crash, an expired lock or",
			"lease, a leader change) is delivered again.")
	}
	for _, o := range r.outcomes {
		if o.waits != "" {
			out = append(out, o.waits)
		}
	}
	if len(kept) > 0 {
		out = append(out, "Every key's orders were processed in order by: "+strings.Join(kept, ", ")+".")
	}
	if len(reordered) > 0 {
		out = append(out, "Keys with orders processed out of order: "+strings.Join(reordered, ", ")+".")
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
