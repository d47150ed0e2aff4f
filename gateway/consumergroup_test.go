package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
)

// A kgo consumer on the consumer group protocol (KIP-848: ServerSideBalancer) reads
// every record produced and commits: it joined with ConsumerGroupHeartbeat, never
// JoinGroup, and the committed offsets add up to the records read. The session replays
// to the same hash.
func TestKgoConsumerGroupHeartbeat(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	srv, stop, logs := serve(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var want []string
	for i := range 12 {
		v := fmt.Sprintf("v%02d", i)
		want = append(want, v)
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	prod.Close()

	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.ConsumerGroup("g848"), kgo.ConsumeTopics("t"),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	consumeAll(t, ctx, cons, "g848", want, logs)
	cons.Close()

	s := stop()
	heartbeats, joins := 0, 0
	for _, a := range s.Arrivals {
		if a.Frame == nil {
			continue
		}
		h, _, err := gateway.ParseRequest(a.Frame)
		if err != nil {
			t.Fatal(err)
		}
		switch kmsg.Key(h.Key) {
		case kmsg.ConsumerGroupHeartbeat:
			heartbeats++
		case kmsg.JoinGroup:
			joins++
		}
	}
	if heartbeats == 0 || joins != 0 {
		t.Errorf("%d ConsumerGroupHeartbeat and %d JoinGroup requests: want the consumer protocol only", heartbeats, joins)
	}
	w, err := gateway.Replay(s)
	if err != nil {
		t.Fatal(err)
	}
	if w.Hash() != s.Hash {
		t.Fatalf("replay hash %s, session hash %s", w.Hash(), s.Hash)
	}
}
