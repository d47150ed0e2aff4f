package gateway_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"mqsim/gateway"
)

// benchRecords is how many records one round of the produce benchmark writes.
const benchRecords = 2000

// produceRound writes benchRecords records of 100 bytes with cl (asynchronously, then a
// flush) and returns how long it took; any failed record fails the benchmark.
func produceRound(b *testing.B, cl *kgo.Client) time.Duration {
	ctx := context.Background()
	value := make([]byte, 100)
	errs := make(chan error, benchRecords)
	start := time.Now()
	for i := range benchRecords {
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%64)), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				errs <- err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
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
	srv, err := gateway.Listen(gateway.Options{Scenario: sc, Listen: "127.0.0.1:0", Speed: 1000, Log: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
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
	for range b.N {
		gwTime += produceRound(b, gw)
		kfTime += produceRound(b, kf)
	}
	gwRate := float64(b.N*benchRecords) / gwTime.Seconds()
	kfRate := float64(b.N*benchRecords) / kfTime.Seconds()
	b.ReportMetric(gwRate, "gateway-records/s")
	b.ReportMetric(kfRate, "kfake-records/s")
	b.ReportMetric(gwRate/kfRate, "ratio")
}
