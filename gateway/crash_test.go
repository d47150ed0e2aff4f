package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"mqsim/gateway"
)

// A broker crashes while a kgo producer (acks=all, idempotent) writes: its connections
// close, the client retries against the new leaders, and a group then reads every
// acknowledged record exactly once. The crash is in the session: the replay crashes the
// same broker at the same step and reaches the same hash.
func TestKgoSurvivesBrokerCrashAndReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	srv, stop, logs := serve(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var want []string
	for i := range 30 {
		if i == 10 {
			out, err := srv.Exec(ctx, "crash b1")
			if err != nil {
				t.Fatalf("crash b1: %v", err)
			}
			t.Logf("crash b1: %s", out)
		}
		v := fmt.Sprintf("v%02d", i)
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%5)), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v\nlog:\n%s", v, err, logs)
		}
		want = append(want, v)
	}
	prod.Close()
	if !strings.Contains(logs.String(), "to b1: closing: the broker is down") {
		t.Errorf("no connection to b1 was closed by its crash; log:\n%s", logs)
	}

	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()[1:]...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for len(got) < len(want) && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	cons.Close()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("read %v\nwant %v (each acknowledged record once)\nlog:\n%s", got, want, logs)
	}

	s := stop()
	if !slices.ContainsFunc(s.Arrivals, func(a gateway.Arrival) bool { return a.Command == "crash b1" }) {
		t.Fatal("the session did not record the crash")
	}
	w, err := gateway.Replay(s)
	if err != nil {
		t.Fatal(err)
	}
	if w.Hash() != s.Hash {
		t.Fatalf("replay hash %s, session hash %s", w.Hash(), s.Hash)
	}
}
