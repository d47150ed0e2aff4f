package gateway_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
)

// serve starts a session of the default cluster on free loopback ports.
func serve(t *testing.T, speed float64) (*gateway.Server, func() *gateway.Session, *safeBuffer) {
	t.Helper()
	sc, err := gateway.LoadScenario("", 1)
	if err != nil {
		t.Fatal(err)
	}
	return serveScenario(t, speed, sc)
}

// serveScenario starts a session of a scenario's cluster on free loopback ports, saved
// in a temporary file and logged to the returned buffer.
func serveScenario(t *testing.T, speed float64, sc gateway.Scenario) (*gateway.Server, func() *gateway.Session, *safeBuffer) {
	t.Helper()
	var logs safeBuffer
	srv, stop := serveWith(t, gateway.Options{Scenario: sc, Speed: speed, SessionPath: filepath.Join(t.TempDir(), "session.json"), Log: &logs})
	return srv, stop, &logs
}

// serveWith starts a session with opts on free loopback ports. The function it returns
// stops the server (once) and returns the session; the test's cleanup calls it too.
func serveWith(tb testing.TB, opts gateway.Options) (*gateway.Server, func() *gateway.Session) {
	tb.Helper()
	opts.Listen = "127.0.0.1:0"
	srv, err := gateway.Listen(opts)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *gateway.Session, 1)
	go func() {
		s, err := srv.Serve(ctx)
		if err != nil {
			tb.Error(err)
		}
		done <- s
	}()
	var once sync.Once
	var session *gateway.Session
	stop := func() *gateway.Session {
		once.Do(func() {
			cancel()
			select {
			case session = <-done:
			case <-time.After(10 * time.Second):
				tb.Error("the server did not stop within 10s")
			}
		})
		return session
	}
	tb.Cleanup(func() { stop() })
	return srv, stop
}

// consumeAll polls cons (of group) until it has read every value of want, in any order,
// or ctx ends, then commits, and checks that the group's committed offsets add up to
// the number of values: the client read and committed each partition to its end.
func consumeAll(t *testing.T, ctx context.Context, cons *kgo.Client, group string, want []string, logs *safeBuffer) {
	t.Helper()
	var got []string
	for len(got) < len(want) && ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		for _, e := range fs.Errors() {
			if e.Err != context.DeadlineExceeded {
				t.Logf("fetch error %s/%d: %v", e.Topic, e.Partition, e.Err)
			}
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Fatalf("consumed %v, want %v\nlog:\n%s", got, want, logs)
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	resp, err := req.RequestWith(ctx, cons)
	if err != nil {
		t.Fatal(err)
	}
	var committed int64
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			committed += max(p.Offset, 0)
		}
	}
	if committed != int64(len(want)) {
		t.Fatalf("committed offsets add up to %d, want %d: %+v", committed, len(want), resp.Topics)
	}
}

// A kgo client produces with acks=all and idempotence, consumes in a group and commits,
// through the gateway; the session then replays to the same hash without any client.
func TestKgoProduceConsumeCommitReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	srv, stop, logs := serve(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	prod, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RequiredAcks(kgo.AllISRAcks()), // and kgo's default compression, snappy
		kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var want []string
	for i := range 12 {
		v := fmt.Sprintf("v%d", i)
		want = append(want, v)
		r := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%4)), Value: []byte(v)}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v\nlog:\n%s", v, err, logs)
		}
		if r.ProducerID < 0 {
			t.Fatalf("record %s has no producer id: the producer is not idempotent", v)
		}
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(500*time.Millisecond), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	consumeAll(t, ctx, cons, "g", want, logs)
	cons.Close()
	prod.Close()

	s := stop()
	if len(s.Arrivals) == 0 || s.Hash == "" {
		t.Fatalf("session recorded %d requests, hash %q", len(s.Arrivals), s.Hash)
	}
	w, err := gateway.Replay(s)
	if err != nil {
		t.Fatal(err)
	}
	if w.Hash() != s.Hash {
		t.Fatalf("replay hash %s, session hash %s", w.Hash(), s.Hash)
	}
}
