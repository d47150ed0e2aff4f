package client

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Against a lossless broker, any sequence of sends under any producer settings ends with
// every send ok, and the offsets of each partition dense: 0..n-1, each exactly once.
func TestPropLosslessSendsAreDense(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		parts := rapid.IntRange(1, 4).Draw(rt, "partitions")
		brokers := rapid.IntRange(1, 3).Draw(rt, "brokers")
		h := newHarness(rt, rapid.Uint64().Draw(rt, "seed"), brokers, parts)
		cfg := producerConfig()
		cfg.Idempotence = rapid.Bool().Draw(rt, "idempotence")
		cfg.Acks = proto.AcksAll
		if !cfg.Idempotence && rapid.Bool().Draw(rt, "acks1") {
			cfg.Acks = proto.AcksLeader
		}
		cfg.BatchSize = rapid.IntRange(1, 64).Draw(rt, "batch")
		cfg.Linger = time.Duration(rapid.IntRange(0, 20).Draw(rt, "linger_ms")) * time.Millisecond
		cfg.MaxInFlight = rapid.IntRange(1, 5).Draw(rt, "inflight")
		cfg.Partitioner = rapid.SampledFrom([]string{"default", "round-robin"}).Draw(rt, "partitioner")
		p := h.addProducer("p1", cfg, 1)
		n := rapid.IntRange(1, 60).Draw(rt, "sends")
		at := time.Duration(0)
		for i := 0; i < n; i++ {
			at += time.Duration(rapid.IntRange(0, 3000).Draw(rt, "gap_us")) * time.Microsecond
			part := int32(-1)
			if rapid.IntRange(0, 3).Draw(rt, "explicit") == 0 {
				part = int32(rapid.IntRange(0, parts-1).Draw(rt, "partition"))
			}
			key := ""
			if rapid.Bool().Draw(rt, "keyed") {
				key = fmt.Sprint("k", rapid.IntRange(0, 9).Draw(rt, "key"))
			}
			h.w.Inject(p, Send{Topic: "t", Key: key, Value: fmt.Sprint("v", i), Partition: part}, at)
		}
		h.run(at + 5*time.Second)
		hist := h.validate()
		seen := map[history.TopicPartition]map[int64]bool{}
		sends := 0
		for v, o := range sendOutcomes(hist) {
			sends++
			if o.typ != history.Ok || o.offset < 0 {
				rt.Fatalf("send %s: %+v", v, o)
			}
			if seen[o.tp] == nil {
				seen[o.tp] = map[int64]bool{}
			}
			if seen[o.tp][o.offset] {
				rt.Fatalf("offset %s@%d acknowledged twice", o.tp, o.offset)
			}
			seen[o.tp][o.offset] = true
		}
		if sends != n {
			rt.Fatalf("%d sends completed, want %d", sends, n)
		}
		for tp, offs := range seen {
			for i := int64(0); i < int64(len(offs)); i++ {
				if !offs[i] {
					rt.Fatalf("%s: offsets not dense: %d missing of %d", tp, i, len(offs))
				}
			}
			if got := len(h.fc.part(proto.TP{Topic: tp.Topic, Partition: tp.Partition}).values()); got != len(offs) {
				rt.Fatalf("%s: log has %d records, %d acknowledged", tp, got, len(offs))
			}
		}
		if s := h.producer(p).Stats(); s.Acked != n || s.Queued+s.InFlight+s.Failed+s.Unknown != 0 || s.Retries != 0 {
			rt.Fatalf("stats %+v", s)
		}
	})
}

// The same seed gives the same run, event for event, with faults that exercise retries,
// disconnects, producer id resets and consumer truncation handling.
func TestSameSeedSameTrace(t *testing.T) {
	run := func(seed uint64) (string, uint64) {
		h := newHarness(t, seed, 3, 3)
		cfg := producerConfig()
		p := h.addProducer("p1", cfg, 1)
		cfg.Idempotence = false
		cfg.MaxInFlight = 5
		q := h.addProducer("p2", cfg, 2)
		ccfg := consumerConfig()
		ccfg.AutoOffsetReset = "earliest"
		c := h.addConsumer("c1", ccfg, 3)
		for _, b := range h.brokers {
			for _, n := range []sim.NodeID{p, q, c} {
				h.w.SetLink(b, n, sim.LinkConfig{Latency: time.Millisecond, Jitter: 2 * time.Millisecond, Drop: sim.Percent(10), Dup: sim.Percent(5)})
			}
		}
		for i := 0; i < 40; i++ {
			send(h.w, p, fmt.Sprint("k", i%4), fmt.Sprint("p", i), time.Duration(i)*5*time.Millisecond)
			send(h.w, q, "", fmt.Sprint("q", i), time.Duration(i)*5*time.Millisecond)
		}
		assign(h.w, c, true, 0, 1, 2)
		h.w.Inject(c, PollLoop{Every: 50 * time.Millisecond, Count: 40}, 0)
		h.run(time.Second)
		h.w.Crash(h.brokers[0])
		h.fc.setLeader(tp(0), h.brokers[1])
		h.run(10 * time.Second) // long enough for the poll loop to end: validate wants every op complete
		h.validate()
		return h.w.Trace().HashString(), h.w.StepHash()
	}
	a, sa := run(42)
	b, sb := run(42)
	if a != b || sa != sb {
		t.Errorf("seed 42 twice: trace %s vs %s, steps %x vs %x", a, b, sa, sb)
	}
	if c, _ := run(43); c == a {
		t.Errorf("seeds 42 and 43 gave the same trace %s", a)
	}
}
