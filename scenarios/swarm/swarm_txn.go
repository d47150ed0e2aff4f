package swarm

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/sim"
)

// The transactional profile of the swarm (ProfileTxn): the safe cluster settings, two
// transactional producers that begin transactions, write to several partitions and
// commit or abort them at random, an idempotent producer beside them, read_committed and
// read_uncommitted consumers that poll along, and a consume-transform-produce pipeline
// (transactional) from t to out. Besides the safe profile's fault kinds, a seed may switch
// on "coordinator" (the broker that leads a transactional.id's __transaction_state
// partition crashes, restarts or bounces), "clients" (producers and the pipeline crash and
// restart, or a new instance with the same transactional.id takes over while the old one
// is paused, and must fence it when it wakes) and "txn-messages" (the next
// AddPartitionsToTxn, EndTxn, WriteTxnMarkers, TxnOffsetCommit... between a client, the
// coordinator and the partition leaders lost, delayed or duplicated).
//
// The liveness phase ends every fault, restarts every node, commits what each producer
// still has open (a transaction a crashed or fenced instance left open is aborted by the
// coordinator: by the new instance's InitProducerId, or at transaction.timeout.ms), gives
// the pipeline time to drain, then read_committed consumers read t and out to their ends,
// so that the checkers judge every transaction and hold the pipeline to exactly-once.
//
// Every draw comes from the stream "swarm/txn" (the bias towards a planted bug's moment
// from "swarm/txn-bias", swarm_txn_bias.go), so the log profiles' seeds are untouched.

// txnFaultKinds are the kinds a txn seed switches on or off: the safe profile's (but its
// consumer group's, whose part the pipeline plays) and the transactions' own.
var txnFaultKinds = []string{"crash", "power", "pause", "partition", "one-way", "clog", "loss", "duplicate", "torn", "controller",
	"coordinator", "clients", "txn-messages"}

// txnStatePartitions is the number of __transaction_state partitions (the default of
// proto.TxnConfig), which decides the coordinator of each transactional.id.
const txnStatePartitions = 3

// txnWriter is a transactional producer of the run: the instance the commands go to now
// (a new one after a takeover), its transactional.id, and whether the generator left a
// transaction open on it.
type txnWriter struct {
	name, id string
	open     bool
}

// txnRun is one transactional run being written.
type txnRun struct {
	r       *sim.Rand
	b       *genScript
	on      map[string]bool
	enabled []string
	tight   bool

	ctls, nodes, brokers []string
	parts, outParts      int
	writers              []*txnWriter
	pipelines            []string // the pipeline's instances, the first one first
	clients              []string // every client a fault may strike: producers and pipeline instances
	instances            int      // new instances started so far (their names are unique)
	crashed              []string // the clients the safety phase left crashed, so far
	paused, clogged      []string
	bias                 *txnBias
}

// generateTxn writes the scenario of one random transactional run.
func generateTxn(seed uint64, opts Options) string {
	r := sim.NewRand(seed, "swarm/txn")
	b, on, enabled := startScript(r, seed, opts, txnFaultKinds, nil, 30, 30_000)
	g := &txnRun{r: r, b: b, on: on, enabled: enabled, bias: newTxnBias(seed, opts.Bug)}
	g.cluster(opts)
	g.setup()
	g.tight = r.Chance(sim.Percent(50))
	g.safetyPhase()
	g.livenessPhase()
	return b.String()
}

// cluster writes the cluster line with the safe settings, and the output topic.
func (g *txnRun) cluster(opts Options) {
	g.parts, g.ctls, g.nodes, g.brokers = g.b.safeCluster(g.r, opts, func() []string {
		// The pipeline's group settings are the log profiles' group's (logRun.group): a
		// member whose JoinGroup went to a coordinator that crashed waits for the
		// rebalance timeout (max.poll.interval.ms) before it asks again, and Kafka's 5
		// minutes would outlast the liveness phase.
		return []string{clientSettings,
			"group-session-timeout=6s group-heartbeat=1s max-poll-interval=8s"}
	})
	g.outParts = 1 + g.r.IntN(3)
}

// setup writes the output topic, the transactional producers, the pipeline and the
// consumers that poll along.
func (g *txnRun) setup() {
	r, line := g.r, g.b.line
	line("topic name=out partitions=%d rf=3 min-isr=2", g.outParts)
	for i := 1; i <= 2; i++ {
		w := &txnWriter{name: fmt.Sprintf("tp%d", i), id: fmt.Sprintf("tx-%d", i)}
		g.writers = append(g.writers, w)
		g.clients = append(g.clients, w.name)
		line("producer name=%s transactional-id=%s transaction-timeout=%ds", w.name, w.id, 10+r.IntN(21))
	}
	g.pipelines = []string{"app"}
	g.clients = append(g.clients, "app")
	line("pipeline name=app group=g from=t to=out poll-every=%dms", 50+r.IntN(451))
	line("consumer name=rc isolation=read_committed")
	line("consumer name=ru isolation=read_uncommitted")
}

// runFor is as the log profiles' (logRun.runFor): a log scale on tight seeds.
func (g *txnRun) runFor() int { return drawRun(g.r, g.tight) }

func (g *txnRun) pick(from []string) string { return from[g.r.IntN(len(from))] }

// safetyPhase writes 10 to 39 steps, each a transaction command, a plain produce, a few
// polls or a fault of an enabled kind, each followed by a run.
func (g *txnRun) safetyPhase() {
	r := g.r
	steps := 10 + r.IntN(30)
	for i := 0; i < steps; i++ {
		switch k := r.IntN(100); {
		case k < 50 || len(g.enabled) == 0:
			g.txnStep(g.writers[r.IntN(len(g.writers))])
		case k < 60:
			g.b.line("produce producer=p1 count=%d wait=false", 1+r.IntN(4))
		case k < 70:
			g.b.line("consume consumer=%s polls=%d", g.pick([]string{"rc", "ru"}), 1+r.IntN(3))
		default:
			g.fault(g.pick(g.enabled))
		}
		if g.bias != nil {
			g.bias.moment(g)
		}
		g.b.line("run for=%dms", g.runFor())
	}
}

// txnStep moves one producer's transactions on: begins one and writes to a few
// partitions, writes more to the open one, or commits (most often) or aborts it. Every
// command is handed over without waiting (wait=false), so that faults land between them;
// the producer carries them out in order.
func (g *txnRun) txnStep(w *txnWriter) {
	r := g.r
	if g.isCrashed(w.name) {
		// A crashed producer takes no commands: it comes back first, and initialises
		// again, which aborts what its previous life left open.
		g.b.line("restart %s", w.name)
		g.crashed = slices.DeleteFunc(g.crashed, func(x string) bool { return x == w.name })
		w.open = false
	}
	if !w.open {
		g.b.line("begin-txn producer=%s wait=false", w.name)
		g.txnWrites(w)
		w.open = true
		return
	}
	switch k := r.IntN(10); {
	case k < 3:
		g.txnWrites(w)
	case k < 8:
		g.b.line("commit-txn producer=%s wait=false", w.name)
		w.open = false
	default:
		g.b.line("abort-txn producer=%s wait=false", w.name)
		w.open = false
	}
}

// txnWrites writes to one to three partitions of t inside w's transaction.
func (g *txnRun) txnWrites(w *txnWriter) {
	r := g.r
	for n := 1 + r.IntN(3); n > 0; n-- {
		g.b.line("produce producer=%s partition=%d count=%d wait=false", w.name, r.IntN(g.parts), 1+r.IntN(3))
	}
}

// fault writes one fault of kind k.
func (g *txnRun) fault(k string) {
	r := g.r
	if g.b.linkFault(r, k, g.nodes, g.brokers, &g.paused, &g.clogged) || g.b.serverFault(r, k, g.ctls, g.nodes, g.brokers, g.runFor) {
		return
	}
	switch k {
	case "coordinator":
		g.coordinatorFault()
	case "clients":
		g.clientFault()
	case "txn-messages":
		g.txnMessageFault()
	}
}

// coordinator is the role that names the broker coordinating one of the run's
// transactional.ids now: the leader of its __transaction_state partition.
func (g *txnRun) coordinator() string {
	ids := []string{"app"}
	for _, w := range g.writers {
		ids = append(ids, w.id)
	}
	id := g.pick(ids)
	return fmt.Sprintf("leader:%s/%d", proto.TransactionStateTopic, txn.PartitionFor(id, txnStatePartitions))
}

// coordinatorFault crashes the broker that coordinates a transactional.id (its successor
// must resume the markers from the replicated state), or bounces it quickly.
func (g *txnRun) coordinatorFault() {
	c := g.coordinator()
	switch g.r.IntN(3) {
	case 0, 1:
		g.b.line("crash %s", c)
	default:
		// A quick bounce: the state it recovers from its own log is all it has.
		g.b.line("crash %s", c)
		g.b.line("run for=%dms", 1+g.r.IntN(300))
		g.b.line("restart %s", strings.Join(g.brokers, " "))
	}
}

// clientFault crashes or restarts a producer or the pipeline (a restarted instance
// initialises again with its transactional.id, which aborts what its previous life left
// open), or starts a new instance with the same transactional.id while the old one is
// paused: when the old one wakes it must find itself fenced.
func (g *txnRun) clientFault() {
	r, line := g.r, g.b.line
	switch r.IntN(5) {
	case 0, 1:
		c := g.pick(g.clients)
		line("crash %s", c)
		g.crashed = append(g.crashed, c)
	case 2:
		c := g.pick(g.clients)
		line("restart %s", c)
		g.crashed = slices.DeleteFunc(g.crashed, func(x string) bool { return x == c })
	case 3:
		w := g.writers[r.IntN(len(g.writers))]
		g.instances++
		old := w.name
		w.name = fmt.Sprintf("%s-%d", strings.SplitN(old, "-", 2)[0], g.instances)
		g.clients = append(g.clients, w.name)
		line("pause %s", old)
		line("producer name=%s transactional-id=%s transaction-timeout=%ds", w.name, w.id, 10+r.IntN(21))
		w.open = false
		g.txnStep(w)
		line("run for=%dms", g.runFor())
		if r.Chance(sim.Percent(50)) {
			g.txnStep(w)
		}
		line("resume %s", old)
	default:
		g.instances++
		old := g.pipelines[len(g.pipelines)-1]
		name := fmt.Sprintf("app-%d", g.instances)
		g.pipelines = append(g.pipelines, name)
		g.clients = append(g.clients, name)
		line("pause %s", old)
		line("pipeline name=%s group=g from=t to=out transactional-id=app poll-every=%dms", name, 50+r.IntN(451))
		line("run for=%dms", g.runFor())
		line("resume %s", old)
	}
}

// The transactions' messages, by who sends them to whom (KIP-890's modern mode: the
// partition leader adds a partition to the transaction, the producer does not).
var (
	clientToCoordinator = []string{"InitProducerID", "AddOffsetsToTxn", "EndTxn", "EndTxn", "AddPartitionsToTxn"}
	coordinatorToClient = []string{"InitProducerIDResponse", "AddOffsetsToTxnResponse", "EndTxnResponse", "EndTxnResponse"}
	coordinatorToLeader = []string{"WriteTxnMarkers", "WriteTxnMarkers", "AddPartitionsToTxnResponse"}
	leaderToCoordinator = []string{"WriteTxnMarkersResponse", "AddPartitionsToTxn"}
)

// txnMessageFault loses, delays or duplicates the next few transaction messages of one
// kind: between a client and its coordinator, between the coordinator and a partition
// leader (markers, and KIP-890's verification), or a pipeline's TxnOffsetCommit to a
// broker (whichever coordinates its group).
func (g *txnRun) txnMessageFault() {
	r := g.r
	coord := g.coordinator()
	leader := fmt.Sprintf("leader:t/%d", r.IntN(g.parts))
	if r.Chance(sim.Percent(30)) {
		leader = fmt.Sprintf("leader:out/%d", r.IntN(g.outParts))
	}
	var from, to, kind string
	switch r.IntN(5) {
	case 0:
		from, to, kind = g.pick(g.clients), coord, g.pick(clientToCoordinator)
	case 1:
		from, to, kind = coord, g.pick(g.clients), g.pick(coordinatorToClient)
	case 2:
		from, to, kind = coord, leader, g.pick(coordinatorToLeader)
	case 3:
		from, to, kind = leader, coord, g.pick(leaderToCoordinator)
	default:
		from, to, kind = g.pick(g.pipelines), g.pick(g.brokers), "TxnOffsetCommit"
	}
	// An InitProducerId is lost only: a late or second one bumps the epoch again and
	// fences the instance that sent it, which then stops for good (TCP neither repeats a
	// request nor, once the client gave up on its connection, delivers it late to a new
	// one; Kafka's client would need a restart, as mqsim's).
	drops := 4
	if kind == "InitProducerID" {
		drops = 10
	}
	g.b.faultNextMessages(r, from, to, kind, drops)
}

// livenessPhase ends every fault and restarts every node, commits what each producer
// still has open, lets the coordinator abort what a dead or fenced instance left open
// (transaction.timeout.ms is at most 30s) and the pipeline drain its input, then reads
// t and out to their ends at read_committed.
func (g *txnRun) livenessPhase() {
	line := g.b.line
	g.b.WriteString("# Liveness phase: every fault ends, every transaction ends and the cluster converges.\n")
	g.b.endFaults(g.clogged, g.on["pause"] || g.on["clients"], g.brokers, g.nodes, g.clients)
	// Then the pipeline's instances are restarted, as an operator (or Kafka Streams,
	// which replaces a thread whose producer was fenced) restarts an application that
	// stopped: one fenced by a newer instance; by the coordinator when its transaction
	// outlived transaction.timeout.ms (mqsim's client treats that as fencing, not as
	// KIP-588's abortable error); or by its own previous life's InitProducerId, delayed
	// in the network past its restart. Otherwise its input would stay unprocessed for
	// good. The safety phase's messages are all delivered by now, and whichever instance
	// initialises last keeps the transactional.id.
	line("crash %s", strings.Join(g.pipelines, " "))
	line("restart %s", strings.Join(g.pipelines, " "))
	// Every instance, the ones a newer instance took over included: a zombie that has
	// nothing more to send learns it is fenced only when it asks something, and its
	// transaction ends (in the history too) only then. A producer whose send failed can
	// only abort: it refuses the commit, and the abort after it ends its transaction (an
	// instance that committed refuses the abort).
	for _, c := range g.clients {
		if !slices.Contains(g.pipelines, c) {
			line("commit-txn producer=%s", c)
			line("abort-txn producer=%s", c)
		}
	}
	line("run for=2m")
	g.b.WriteString("# The final read: read_committed consumers read every topic to its end.\n")
	line("consumer name=reader isolation=read_committed")
	line("consume consumer=reader")
	line("consumer name=reader-out isolation=read_committed")
	outs := make([]string, g.outParts)
	for i := range outs {
		outs[i] = fmt.Sprintf("out/%d", i)
	}
	line("consume consumer=reader-out partitions=(%s)", strings.Join(outs, ", "))
	line("check")
}

// isCrashed reports whether the safety phase so far left client c crashed.
func (g *txnRun) isCrashed(c string) bool { return slices.Contains(g.crashed, c) }
