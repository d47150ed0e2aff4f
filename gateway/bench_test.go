package gateway_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
)

// benchRecords is how many records one round of the produce benchmark writes.
const benchRecords = 2000

// produceRound writes benchRecords records of 100 bytes with cl (asynchronously, then a
// flush) and returns how long it took; any failed record fails the benchmark, and so
// does a round that has not ended after a minute (kgo retries without end). The keys are
// made before the clock starts: formatting one per record was client work that both
// servers' rounds paid, which pulled their ratio towards 1.
func produceRound(b *testing.B, cl *kgo.Client) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	value := make([]byte, 100)
	var keys [64][]byte
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%d", i))
	}
	errs := make(chan error, benchRecords)
	start := time.Now()
	for i := range benchRecords {
		cl.Produce(ctx, &kgo.Record{Key: keys[i%64], Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				errs <- err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatalf("flush: %v", err)
	}
	d := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return d
}

// BenchmarkProduceGatewayVsKfake writes the same records with the same kgo client
// (acks=all, idempotent: kgo's defaults) to mqsim serve's default cluster (three
// brokers, topic t with three partitions replicated three times, min-isr 2, at speed
// 1000: a virtual millisecond of network latency per wall microsecond, so that the
// simulator's work is timed, not the modelled latencies) and to franz-go's kfake (three brokers, three partitions, no replication), in
// alternate rounds of the same run, and reports both rates and their ratio (goal: the
// gateway at least half of kfake's). ns/op is one round of both.
func BenchmarkProduceGatewayVsKfake(b *testing.B) {
	sc, err := gateway.LoadScenario("", 1)
	if err != nil {
		b.Fatal(err)
	}
	srv, _ := serveWith(b, gateway.Options{Scenario: sc, Speed: 1000, Log: io.Discard})
	fake, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, "t"))
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	client := func(addrs []string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("t"))
		if err != nil {
			b.Fatal(err)
		}
		// Connections, producer id, metadata and the world's and client's buffers grown
		// before the clock runs: the first rounds are several times slower than the rest.
		for range 20 {
			produceRound(b, cl)
		}
		return cl
	}
	gw, kf := client(srv.Addrs()), client(fake.ListenAddrs())
	defer gw.Close()
	defer kf.Close()
	b.ResetTimer()
	var gwTime, kfTime time.Duration
	var gwRounds, kfRounds []time.Duration
	var gwCPU, kfCPU time.Duration // the process's CPU time in each kind of round
	for range b.N {
		c0 := cpuTime()
		d := produceRound(b, gw)
		c1 := cpuTime()
		gwTime, gwRounds = gwTime+d, append(gwRounds, d)
		d = produceRound(b, kf)
		kfTime, kfRounds = kfTime+d, append(kfRounds, d)
		gwCPU, kfCPU = gwCPU+c1-c0, kfCPU+cpuTime()-c1
	}
	gwRate := float64(b.N*benchRecords) / gwTime.Seconds()
	kfRate := float64(b.N*benchRecords) / kfTime.Seconds()
	b.ReportMetric(gwRate, "gateway-records/s")
	b.ReportMetric(kfRate, "kfake-records/s")
	b.ReportMetric(gwRate/kfRate, "ratio")
	// On a shared machine a few rounds stall for milliseconds (another process had the
	// cores) and move the totals' ratio by a third; the median rounds' ratio moves less.
	b.ReportMetric(float64(median(kfRounds))/float64(median(gwRounds)), "median-round-ratio")
	// The CPU the process spent in kfake's rounds over the CPU it spent in the gateway's
	// (the client's work, plus the server's: the world also runs its timers in kfake's
	// rounds): what another process on the cores moves least.
	b.ReportMetric(float64(kfCPU)/float64(gwCPU), "cpu-ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkReplayProduceSession times the world's side of the produce benchmark alone,
// without sockets, clients or wall-time pacing: a session of kgo rounds (as
// BenchmarkProduceGatewayVsKfake writes them) is replayed per operation, which is the same
// simulated work (the gateway node decoding each produce, three replicas appending,
// replication, the answers, and the cluster's own timers over the session's virtual
// time) at full speed, and must end with the session's hash. The baseline in the same
// run is building the same world with no request at all. A live session differs from
// run to run; to compare two versions of the code on the same one, set
// MQSIM_BENCH_SESSION to a file: recorded there when it does not exist, replayed after.
func BenchmarkReplayProduceSession(b *testing.B) {
	session := benchSession(b)
	records := 0
	for _, a := range session.Arrivals {
		if _, req, err := gateway.ParseRequest(a.Frame); err == nil {
			if p, ok := req.(*kmsg.ProduceRequest); ok {
				for _, t := range p.Topics {
					for _, part := range t.Partitions {
						var kb kmsg.RecordBatch
						if kb.ReadFrom(part.Records) == nil {
							records += int(kb.NumRecords)
						}
					}
				}
			}
		}
	}
	replay := func() time.Duration {
		start := time.Now()
		w, err := gateway.Replay(session)
		if err != nil {
			b.Fatal(err)
		}
		if w.Hash() != session.Hash {
			b.Fatalf("replay hash %s, session %s", w.Hash(), session.Hash)
		}
		return time.Since(start)
	}
	build := func() time.Duration {
		start := time.Now()
		if _, err := gateway.Build(session.Scenario, func(int) ([]gateway.Addr, error) { return session.Addrs, nil }); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	b.ResetTimer()
	var full, base time.Duration
	cpu0 := cpuTime()
	for range b.N {
		full += replay()
	}
	cpu := cpuTime() - cpu0
	for range b.N {
		base += build()
	}
	b.ReportMetric(float64(b.N*records)/(full-base).Seconds(), "world-records/s")
	b.ReportMetric(float64(full.Nanoseconds())/float64(b.N), "ns/replay")
	// The process's CPU time (the replay's goroutine and the collector) moves less than
	// the wall time when the machine is shared.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/replay")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSession is the session BenchmarkReplayProduceSession replays: 30 rounds of the
// produce benchmark's kgo client against mqsim serve's default cluster at speed 1000.
func benchSession(b *testing.B) *gateway.Session {
	path := os.Getenv("MQSIM_BENCH_SESSION")
	if path != "" {
		if s, err := gateway.LoadSession(path); err == nil {
			return s
		}
	}
	sc, err := gateway.LoadScenario("", 1)
	if err != nil {
		b.Fatal(err)
	}
	srv, stop := serveWith(b, gateway.Options{Scenario: sc, Speed: 1000, Log: io.Discard})
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		b.Fatal(err)
	}
	for range 30 {
		produceRound(b, cl)
	}
	cl.Close()
	session := stop()
	if path != "" {
		if err := session.Save(path); err != nil {
			b.Fatal(err)
		}
	}
	return session
}
