package cluster_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// e2eMessages is the size of one end-to-end run: produced with acks=all, replicated to
// three replicas, consumed.
const e2eMessages = 20_000

// runEndToEnd builds a 3-broker cluster with a 6-partition, rf=3 topic, produces
// e2eMessages keyed records and consumes them all. It returns the kernel events executed.
// The invariant checks are off: the benchmark measures the system alone
// (BenchmarkInvariantOverhead measures them).
func runEndToEnd(tb testing.TB) uint64 { return runEndToEndWith(tb, e2eOptions{}).events }

// e2eRun is what one end-to-end run measured: kernel events executed, and the virtual
// time from the first send to the last record consumed.
type e2eRun struct {
	events  uint64
	virtual time.Duration
}

// e2eOptions switch on what runEndToEnd leaves out.
type e2eOptions struct {
	invariants bool // the invariant checks (on by default in cluster.New)
	history    bool // the clients' history recorder
	durable    bool // brokers fsync every batch (flush=every-batch) instead of never
	// txnEvery, when positive, makes the producer transactional, committing a transaction
	// every txnEvery messages, and the consumer read_committed.
	txnEvery int
}

func runEndToEndWith(tb testing.TB, o e2eOptions) e2eRun {
	cfg := proto.DefaultConfig()
	cfg.Topic = proto.TopicConfig{Name: "t", Partitions: 6, ReplicationFactor: 3, MinInsyncReplicas: 2}
	if o.durable {
		cfg.Broker.Log.Flush = wal.FlushEveryBatch
	}
	w := sim.NewWorld(sim.DefaultConfig(1))
	w.Trace().Mode = sim.TraceOff
	c, err := cluster.New(w, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	c.CheckInvariants(o.invariants)
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(cfg.Topic); err != nil {
		tb.Fatal(err)
	}
	if !o.history {
		c.History = nil // the benchmark measures the system, not the recorder
	}
	pcfg, ccfg := cfg.Producer, cfg.Consumer
	var p cluster.Client
	if o.txnEvery > 0 {
		pcfg.TransactionalID, ccfg.Isolation = "bench", proto.ReadCommitted
		p, err = c.AddTransactionalProducer("p1", pcfg)
	} else {
		p, err = c.AddProducer("p1", pcfg)
	}
	if err != nil {
		tb.Fatal(err)
	}
	cons, _ := c.AddConsumer("c1", ccfg)
	var tps []proto.TP
	for i := 0; i < cfg.Topic.Partitions; i++ {
		tps = append(tps, proto.TP{Topic: "t", Partition: int32(i)})
	}
	w.RunFor(0)
	w.Inject(cons.ID, client.Assign{Partitions: tps, FromBeginning: true}, 0)
	w.Inject(cons.ID, client.PollLoop{Every: time.Millisecond, Count: 1 << 30}, 0)
	start, began := w.Steps(), w.Now()
	for i := 0; i < e2eMessages; i++ {
		at := time.Duration(i) * 10 * time.Microsecond
		if o.txnEvery > 0 && i%o.txnEvery == 0 {
			w.Inject(p.ID, client.BeginTxn{}, at)
		}
		w.Inject(p.ID, client.Send{Topic: "t", Key: fmt.Sprintf("k%d", i%1000), Value: fmt.Sprintf("value-%d", i), Partition: -1}, at)
		if o.txnEvery > 0 && (i+1)%o.txnEvery == 0 {
			w.Inject(p.ID, client.CommitTxn{}, at)
		}
	}
	done := w.RunUntil(func(w *sim.World) bool {
		cs, _ := w.Node(cons.ID).(*client.Consumer)
		return cs != nil && cs.Consumed() >= e2eMessages
	}, 50_000_000)
	if !done {
		prod, _ := w.Node(p.ID).(*client.Producer)
		tb.Fatalf("not all consumed by %s: producer %+v", w.Now(), prod.Stats())
	}
	return e2eRun{events: w.Steps() - start, virtual: w.Now().Sub(began)}
}

// BenchmarkEndToEnd reports simulated messages per wall second (produce with acks=all,
// replicate to three replicas, consume), allocations per message, and an estimate of the
// kernel's share of the time: the run's kernel events times the per-event cost of the
// kernel's own loop, measured in the same benchmark.
func BenchmarkEndToEnd(b *testing.B) {
	b.ReportAllocs()
	var events uint64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := 0; i < b.N; i++ {
		events += runEndToEnd(b)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	kernelPerEvent := kernelEventCost()
	msgs := float64(b.N) * e2eMessages
	b.ReportMetric(msgs/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(events)/msgs, "events/msg")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/msgs, "allocs/msg")
	b.ReportMetric(float64(events)*kernelPerEvent.Seconds()/elapsed.Seconds(), "kernel-share")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkTransactional compares the end-to-end run with a transactional producer (one
// transaction per 100 messages, a read_committed consumer) against the same run with the
// idempotent producer, measured alternately in the same benchmark so that both see the
// same machine. Two throughputs each: simulated messages per wall second (what the
// simulator costs), and messages per virtual second from the first send to the last
// read (what the modelled cluster delivers, the same on every machine); txn-ratio is the
// transactional run's wall throughput over the idempotent one's.
func BenchmarkTransactional(b *testing.B) {
	var plain, txn time.Duration
	var plainRun, txnRun e2eRun
	for i := 0; i < b.N; i++ {
		start := time.Now()
		plainRun = runEndToEndWith(b, e2eOptions{})
		plain += time.Since(start)
		start = time.Now()
		txnRun = runEndToEndWith(b, e2eOptions{txnEvery: 100})
		txn += time.Since(start)
	}
	msgs := float64(b.N) * e2eMessages
	b.ReportMetric(msgs/plain.Seconds(), "idempotent-msgs/s")
	b.ReportMetric(msgs/txn.Seconds(), "txn-msgs/s")
	b.ReportMetric(plain.Seconds()/txn.Seconds(), "txn-ratio")
	b.ReportMetric(e2eMessages/plainRun.virtual.Seconds(), "idempotent-virtual-msgs/s")
	b.ReportMetric(e2eMessages/txnRun.virtual.Seconds(), "txn-virtual-msgs/s")
	b.ReportMetric(0, "ns/op")
}

// kernelEventCost times the kernel alone on timer events: what dispatching one event
// costs without any model work.
func kernelEventCost() time.Duration {
	w := sim.NewWorld(sim.DefaultConfig(1))
	w.Trace().Mode = sim.TraceOff
	for i := 0; i < 16; i++ {
		w.MustAddNode(fmt.Sprintf("n%d", i), func() sim.Node { return &idle{} })
	}
	const n = 500_000
	w.RunToStep(1000)
	start := time.Now()
	w.RunToStep(1000 + n)
	return time.Since(start) / n
}

// idle re-arms a timer forever and does nothing else.
type idle struct{}

func (idle) Start(env *sim.Env)                                { env.SetTimer(time.Millisecond, sim.TimerTag{}) }
func (idle) Recv(env *sim.Env, from sim.NodeID, m sim.Message) {}
func (idle) Timer(env *sim.Env, tag sim.TimerTag)              { env.SetTimer(time.Millisecond, sim.TimerTag{}) }

// TestEndToEndDeliversEverything keeps the benchmark's workload honest: it must complete,
// also with transactions (every message committed, so the read_committed consumer reads
// all of them).
func TestEndToEndDeliversEverything(t *testing.T) {
	if events := runEndToEnd(t); events == 0 {
		t.Fatal("no events")
	}
	if run := runEndToEndWith(t, e2eOptions{txnEvery: 100}); run.events == 0 {
		t.Fatal("no events with transactions")
	}
}
