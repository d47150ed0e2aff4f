package client

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Kafka's UtilsTest.testMurmur2 vectors.
func TestMurmur2KafkaVectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
		// Computed with Kafka's Java code: the empty key, and multi-byte UTF-8.
		{"", 275646681},
		{"été", -2101193575},
	} {
		if got := Murmur2([]byte(c.in)); got != c.want {
			t.Errorf("Murmur2(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// The partitions Kafka's default partitioner gives the keys "a".."z", computed with
// Kafka's Java murmur2 and toPositive(hash) % n.
func TestKeyPartitionMatchesKafka(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{3, "1,2,1,2,2,0,0,1,2,2,2,1,2,0,2,2,0,0,2,1,0,2,0,1,0,2"},
		{7, "5,6,0,1,4,4,5,0,3,3,1,4,3,5,2,4,0,1,1,3,3,3,5,4,0,6"},
	} {
		var got []string
		for k := 'a'; k <= 'z'; k++ {
			got = append(got, fmt.Sprint(KeyPartition([]byte(string(k)), c.n)))
		}
		if s := strings.Join(got, ","); s != c.want {
			t.Errorf("partitions of a..z over %d:\n got %s\nwant %s", c.n, s, c.want)
		}
	}
}

func send(w *sim.World, p sim.NodeID, key, value string, at time.Duration) {
	w.Inject(p, Send{Topic: "t", Key: key, Value: value, Partition: -1}, at)
}

func sendTo(w *sim.World, p sim.NodeID, part int32, value string, at time.Duration) {
	w.Inject(p, Send{Topic: "t", Value: value, Partition: part}, at)
}

// warm sends m0 to partition 0 and waits for it: metadata and producer id are known after.
func warm(h *harness, p sim.NodeID) {
	sendTo(h.w, p, 0, "m0", 0)
	h.run(100 * time.Millisecond)
	if o := sendOutcomes(h.rec.History())["m0"]; o.typ != history.Ok {
		h.t.Fatalf("warm-up send: %+v", o)
	}
}

func TestKeyedSendsGoToTheirHashPartition(t *testing.T) {
	h := newHarness(t, 1, 3, 3)
	p := h.addProducer("p1", producerConfig(), 1)
	for i, k := range []string{"a", "b", "c", "f", "z"} {
		send(h.w, p, k, fmt.Sprintf("v%d", i), 0)
	}
	h.run(time.Second)
	hist := h.validate()
	for i, k := range []string{"a", "b", "c", "f", "z"} {
		o := sendOutcomes(hist)[fmt.Sprintf("v%d", i)]
		if want := KeyPartition([]byte(k), 3); o.typ != history.Ok || o.tp.Partition != want {
			t.Errorf("key %s: %+v, want ok on partition %d", k, o, want)
		}
	}
}

// Unkeyed records stick to one partition until its batch is sent, then move to another.
func TestStickyPartitioner(t *testing.T) {
	h := newHarness(t, 7, 3, 3)
	cfg := producerConfig()
	cfg.Linger = 10 * time.Millisecond
	p := h.addProducer("p1", cfg, 1)
	for i := 0; i < 4; i++ {
		send(h.w, p, "", fmt.Sprintf("a%d", i), time.Duration(i)*time.Millisecond) // one batch
	}
	for i := 0; i < 4; i++ {
		send(h.w, p, "", fmt.Sprintf("b%d", i), 50*time.Millisecond+time.Duration(i)*time.Millisecond)
	}
	h.run(time.Second)
	out := sendOutcomes(h.validate())
	first, second := out["a0"].tp, out["b0"].tp
	for i := 0; i < 4; i++ {
		if got := out[fmt.Sprintf("a%d", i)].tp; got != first {
			t.Errorf("a%d on %s, want all of the first batch on %s", i, got, first)
		}
		if got := out[fmt.Sprintf("b%d", i)].tp; got != second {
			t.Errorf("b%d on %s, want all of the second batch on %s", i, got, second)
		}
	}
	if first == second {
		t.Errorf("both batches on %s: sticky partitioner did not move on after a send", first)
	}
	if n := len(h.fc.produced); n != 2 {
		t.Errorf("%d produce requests, want 2", n)
	}
}

func TestRoundRobinPartitioner(t *testing.T) {
	h := newHarness(t, 1, 3, 3)
	cfg := producerConfig()
	cfg.Partitioner = "round-robin"
	p := h.addProducer("p1", cfg, 1)
	for i := 0; i < 7; i++ {
		send(h.w, p, "same-key", fmt.Sprintf("v%d", i), 0)
	}
	h.run(time.Second)
	out := sendOutcomes(h.validate())
	var got []string
	for i := 0; i < 7; i++ {
		got = append(got, fmt.Sprint(out[fmt.Sprintf("v%d", i)].tp.Partition))
	}
	if s := strings.Join(got, ","); s != "0,1,2,0,1,2,0" {
		t.Errorf("round-robin partitions %s, want 0,1,2,0,1,2,0", s)
	}
}

func batchSizes(fc *fakeCluster) []int {
	var out []int
	for _, r := range fc.produced {
		out = append(out, len(r.Batch.Records))
	}
	return out
}

func TestBatchingBySize(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	cfg := producerConfig()
	cfg.Linger = time.Second // only size closes a batch early
	cfg.BatchSize = 10       // values are 2 bytes: five per batch
	p := h.addProducer("p1", cfg, 1)
	for i := 0; i < 12; i++ {
		sendTo(h.w, p, 0, fmt.Sprintf("v%c", 'a'+i), time.Duration(i)*time.Millisecond)
	}
	h.run(100 * time.Millisecond)
	if got := batchSizes(h.fc); !slices.Equal(got, []int{5, 5}) {
		t.Errorf("batches sent by 100ms: %v, want [5 5] (the last 2 records linger)", got)
	}
	if s := h.producer(p).Stats(); s.Queued != 2 || s.Acked != 10 {
		t.Errorf("stats %+v, want 2 queued and 10 acked", s)
	}
	h.run(2 * time.Second)
	if got := batchSizes(h.fc); !slices.Equal(got, []int{5, 5, 2}) {
		t.Errorf("batches: %v, want [5 5 2]", got)
	}
	h.validate()
}

func TestBatchingByLinger(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	cfg := producerConfig()
	cfg.Linger = 10 * time.Millisecond
	p := h.addProducer("p1", cfg, 1)
	for _, at := range []time.Duration{0, 2, 4, 30, 31} {
		sendTo(h.w, p, 0, fmt.Sprintf("v%d", at), at*time.Millisecond)
	}
	h.run(time.Second)
	if got := batchSizes(h.fc); !slices.Equal(got, []int{3, 2}) {
		t.Errorf("batches %v, want [3 2]", got)
	}
	var at []string
	for _, e := range h.w.Trace().Events() {
		if e.Kind == "batch" {
			at = append(at, e.Time.String())
		}
	}
	if s := strings.Join(at, " "); s != "10ms 40ms" {
		t.Errorf("batches sent at %s, want 10ms 40ms (linger after the first record)", s)
	}
	h.validate()
}

// With one request in flight per connection, records pile up in the open batch while the
// first request is out; with five, each goes on its own.
func TestMaxInFlightBatchesUnderBackpressure(t *testing.T) {
	for _, c := range []struct {
		inflight int
		want     []int
	}{{1, []int{1, 1, 4}}, {5, []int{1, 1, 1, 1, 1, 1}}} {
		t.Run(fmt.Sprint(c.inflight), func(t *testing.T) {
			h := newHarness(t, 1, 1, 1)
			cfg := producerConfig()
			cfg.Linger = 0
			cfg.Idempotence = false
			cfg.MaxInFlight = c.inflight
			p := h.addProducer("p1", cfg, 1)
			warm(h, p)
			for i := 0; i < 5; i++ {
				sendTo(h.w, p, 0, fmt.Sprint("v", i), time.Duration(i)*100*time.Microsecond)
			}
			h.run(time.Second)
			h.validate()
			if got := batchSizes(h.fc); !slices.Equal(got, c.want) {
				t.Errorf("batches %v, want %v", got, c.want)
			}
		})
	}
}

// OUT_OF_ORDER_SEQUENCE_NUMBER on the earliest unresolved batch (here: the broker lost the
// producer's state) is fatal for it: fail, since its only attempt was refused; the
// producer then gets a new id and goes on from sequence 0.
func TestOutOfOrderSequenceIsFatal(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	p := h.addProducer("p1", producerConfig(), 1)
	warm(h, p)
	h.fc.part(tp(0)).pids = nil
	sendTo(h.w, p, 0, "m1", 0)
	h.run(100 * time.Millisecond)
	sendTo(h.w, p, 0, "m2", 0)
	h.run(100 * time.Millisecond)
	out := sendOutcomes(h.validate())
	if out["m1"].typ != history.Fail || out["m1"].err != "OUT_OF_ORDER_SEQUENCE_NUMBER" {
		t.Errorf("m1 %+v, want fail OUT_OF_ORDER_SEQUENCE_NUMBER", out["m1"])
	}
	if out["m2"].typ != history.Ok || out["m2"].offset != 1 {
		t.Errorf("m2 %+v, want ok at 1", out["m2"])
	}
	// KIP-360: the same producer id in the next epoch, bumped by the producer itself.
	if id, epoch, ok := h.producer(p).ProducerID(); !ok || id != 1001 || epoch != 1 {
		t.Errorf("producer id %d epoch %d %t, want id 1001 kept with epoch 1", id, epoch, ok)
	}
}

// A lost response makes the producer retry. Without idempotence the record is written
// twice (P1); with it, the broker recognises the retry and answers with the first offset.
func TestRetryAfterLostResponse(t *testing.T) {
	for _, idem := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotence=%t", idem), func(t *testing.T) {
			h := newHarness(t, 3, 1, 1)
			cfg := producerConfig()
			cfg.Idempotence = idem
			p := h.addProducer("p1", cfg, 1)
			warm(h, p)
			h.w.DropNext(h.brokers[0], p, 1) // the produce response
			sendTo(h.w, p, 0, "m1", 0)
			h.run(2 * time.Second)
			hist := h.validate()
			log := h.fc.part(tp(0)).values()
			o := sendOutcomes(hist)["m1"]
			if idem {
				if !slices.Equal(log, []string{"m0", "m1"}) || o.typ != history.Ok || o.offset != 1 {
					t.Errorf("log %v, outcome %+v; want m1 once, ok at 1", log, o)
				}
			} else {
				if !slices.Equal(log, []string{"m0", "m1", "m1"}) || o.typ != history.Ok || o.offset != 2 {
					t.Errorf("log %v, outcome %+v; want m1 twice, ok at 2", log, o)
				}
			}
			if len(h.events("retry")) != 1 || len(h.events("disconnect")) != 1 {
				t.Errorf("retries %v, disconnects %v; want one of each", h.events("retry"), h.events("disconnect"))
			}
		})
	}
}

// Two batches in flight; the first is refused with a retriable error, the second lands;
// the retried first lands after it (P2). With idempotence the order is kept.
func TestReorderingAfterRetriableError(t *testing.T) {
	for _, idem := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotence=%t", idem), func(t *testing.T) {
			h := newHarness(t, 5, 1, 1)
			cfg := producerConfig()
			cfg.Idempotence = idem
			cfg.Linger = 0
			cfg.MaxInFlight = 5
			p := h.addProducer("p1", cfg, 1)
			warm(h, p)
			h.fc.produceFaults = []fakeFault{{err: proto.NotEnoughReplicas}}
			sendTo(h.w, p, 0, "m1", 0)
			sendTo(h.w, p, 0, "m2", 100*time.Microsecond)
			h.run(2 * time.Second)
			hist := h.validate()
			log := h.fc.part(tp(0)).values()
			out := sendOutcomes(hist)
			want := []string{"m0", "m2", "m1"}
			if idem {
				want = []string{"m0", "m1", "m2"}
			}
			if !slices.Equal(log, want) {
				t.Errorf("log %v, want %v", log, want)
			}
			if out["m1"].typ != history.Ok || out["m2"].typ != history.Ok {
				t.Errorf("outcomes %+v, want both ok", out)
			}
			if idem && !slices.Contains(h.events("retry"), "p1 t/0 1 records seq=2: OUT_OF_ORDER_SEQUENCE_NUMBER; again in 100ms") {
				t.Errorf("retries %q: want m2 re-sent after OUT_OF_ORDER_SEQUENCE_NUMBER", h.events("retry"))
			}
		})
	}
}

// Without answers, a send ends at delivery.timeout.ms: info once a request went out,
// fail when it never could (no leader).
func TestDeliveryTimeout(t *testing.T) {
	t.Run("sent", func(t *testing.T) {
		h := newHarness(t, 1, 1, 1)
		cfg := producerConfig()
		cfg.DeliveryTimeout = time.Second
		p := h.addProducer("p1", cfg, 1)
		warm(h, p)
		h.w.Cut(h.brokers[0], p) // requests arrive, answers do not
		sendTo(h.w, p, 0, "m1", 0)
		h.run(3 * time.Second)
		o := sendOutcomes(h.validate())["m1"]
		if o.typ != history.Info || !strings.Contains(o.err, "delivery timeout") {
			t.Errorf("outcome %+v, want info by delivery timeout", o)
		}
		if s := h.producer(p).Stats(); s.Unknown != 1 || s.Queued+s.InFlight != 0 {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("no leader", func(t *testing.T) {
		h := newHarness(t, 1, 1, 1)
		h.fc.setLeader(tp(0), proto.NoLeader)
		cfg := producerConfig()
		cfg.DeliveryTimeout = time.Second
		p := h.addProducer("p1", cfg, 1)
		sendTo(h.w, p, 0, "m1", 0)
		h.run(3 * time.Second)
		o := sendOutcomes(h.validate())["m1"]
		if o.typ != history.Fail {
			t.Errorf("outcome %+v, want fail: never sent", o)
		}
		if n := len(h.events("metadata")); n != 1 {
			t.Errorf("%d metadata updates", n)
		}
		// The refreshes back off: 100ms, 200ms, ... capped at 1s, not one per event.
		var asks int
		for _, e := range h.w.Trace().Events() {
			if e.Kind == "send" && strings.HasPrefix(e.Detail, "MetadataRequest") {
				asks++
			}
		}
		if asks < 3 || asks > 8 {
			t.Errorf("%d metadata requests in 3s without a leader, want a few (bounded backoff)", asks)
		}
	})
}

func TestErrorOutcomes(t *testing.T) {
	for _, c := range []struct {
		err  proto.Error
		want history.Type
		log  int
	}{
		{proto.NotEnoughReplicas, history.Fail, 0},
		{proto.NotEnoughReplicasAfterAppend, history.Info, 1},
		{proto.InvalidReplicationFactor, history.Fail, 0}, // not retriable
	} {
		t.Run(string(c.err), func(t *testing.T) {
			h := newHarness(t, 1, 1, 1)
			cfg := producerConfig()
			cfg.Retries = 0
			cfg.Idempotence = false
			p := h.addProducer("p1", cfg, 1)
			h.fc.produceFaults = []fakeFault{{err: c.err, afterAppend: c.err == proto.NotEnoughReplicasAfterAppend}}
			sendTo(h.w, p, 0, "m1", 0)
			h.run(time.Second)
			o := sendOutcomes(h.validate())["m1"]
			if o.typ != c.want || len(h.fc.part(tp(0)).values()) != c.log {
				t.Errorf("outcome %+v, log %v; want %s", o, h.fc.part(tp(0)).values(), c.want)
			}
		})
	}
}

func TestAcksZero(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	cfg := producerConfig()
	cfg.Acks = proto.AcksNone
	cfg.Idempotence = false
	p := h.addProducer("p1", cfg, 1)
	sendTo(h.w, p, 0, "m1", 0)
	h.w.RunUntil(func(*sim.World) bool { return len(h.rec.History()) == 2 }, 10_000)
	o := sendOutcomes(h.validate())["m1"]
	if o.typ != history.Ok || o.offset != history.NoOffset {
		t.Errorf("outcome %+v, want ok without offset", o)
	}
	if len(h.fc.produced) != 0 {
		t.Errorf("ok before the broker got the request: want it to be only handed to the network")
	}
	h.run(time.Second)
	if got := h.fc.part(tp(0)).values(); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("log %v", got)
	}
}

// After a leader change, the old leader refuses and the producer follows the new one.
func TestLeaderChange(t *testing.T) {
	h := newHarness(t, 1, 2, 1)
	cfg := producerConfig()
	p := h.addProducer("p1", cfg, 1)
	sendTo(h.w, p, 0, "m1", 0)
	h.run(100 * time.Millisecond)
	h.fc.setLeader(tp(0), h.brokers[1])
	sendTo(h.w, p, 0, "m2", 0)
	h.run(time.Second)
	out := sendOutcomes(h.validate())
	if out["m1"].offset != 0 || out["m2"].offset != 1 || out["m2"].typ != history.Ok {
		t.Errorf("outcomes %+v", out)
	}
	if got := h.events("retry"); len(got) != 1 || !strings.Contains(got[0], "NOT_LEADER_OR_FOLLOWER") {
		t.Errorf("retries %q", got)
	}
}

// A leader crashes after appending a batch but before its answer got out: the request
// times out, the batch is retried on the new leader, which has it (the fake log and the
// producer state are replicated) and recognises the sequence.
func TestCrashedLeaderWithIdempotence(t *testing.T) {
	h := newHarness(t, 1, 2, 1)
	p := h.addProducer("p1", producerConfig(), 1)
	warm(h, p)
	h.w.DropNext(h.brokers[0], p, 1)
	sendTo(h.w, p, 0, "m1", 0)
	h.w.RunUntil(func(w *sim.World) bool { return len(h.fc.produced) == 2 }, 10_000)
	h.w.Crash(h.brokers[0])
	h.fc.setLeader(tp(0), h.brokers[1])
	h.run(2 * time.Second)
	o := sendOutcomes(h.validate())["m1"]
	if o.typ != history.Ok || o.offset != 1 || len(h.fc.part(tp(0)).values()) != 2 {
		t.Errorf("outcome %+v, log %v: want the replicated batch recognised", o, h.fc.part(tp(0)).values())
	}
}

// A sequenced batch that expires forces an epoch bump: the same producer id in the next
// epoch (KIP-360), and later sends start at seq 0.
func TestIdempotentResetAfterExpiry(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	cfg := producerConfig()
	cfg.DeliveryTimeout = time.Second
	p := h.addProducer("p1", cfg, 1)
	warm(h, p)
	h.w.Cut(h.brokers[0], p)
	sendTo(h.w, p, 0, "m1", 0)
	h.run(1500 * time.Millisecond)
	h.w.HealLink(h.brokers[0], p)
	sendTo(h.w, p, 0, "m2", 0)
	h.run(time.Second)
	out := sendOutcomes(h.validate())
	if out["m1"].typ != history.Info || out["m2"].typ != history.Ok || out["m2"].offset != 2 {
		t.Errorf("outcomes %+v", out)
	}
	last := h.fc.produced[len(h.fc.produced)-1].Batch
	if last.ProducerID != 1001 || last.ProducerEpoch != 1 || last.BaseSequence != 0 {
		t.Errorf("last batch pid=%d epoch=%d seq=%d, want pid 1001 in epoch 1 starting at 0", last.ProducerID, last.ProducerEpoch, last.BaseSequence)
	}
	if len(h.events("reset")) != 1 {
		t.Errorf("resets %q", h.events("reset"))
	}
}

// A send before any metadata waits, then is placed and recorded.
func TestSendWaitsForMetadata(t *testing.T) {
	h := newHarness(t, 1, 1, 2)
	p := h.addProducer("p1", producerConfig(), 1)
	h.w.RunFor(time.Microsecond)
	h.w.Crash(h.brokers[0])
	send(h.w, p, "k", "m1", 0)
	h.run(100 * time.Millisecond)
	if len(h.rec.History()) != 0 || h.producer(p).Stats().Queued != 1 {
		t.Fatalf("recorded before a partition was known: %v", h.rec.History())
	}
	h.w.Restart(h.brokers[0])
	h.run(time.Second)
	o := sendOutcomes(h.validate())["m1"]
	if o.typ != history.Ok || o.tp.Partition != KeyPartition([]byte("k"), 2) {
		t.Errorf("outcome %+v", o)
	}
}

func TestProducerDeterministic(t *testing.T) {
	run := func() (string, uint64) {
		h := newHarness(t, 42, 3, 3)
		cfg := producerConfig()
		cfg.Idempotence = false
		p := h.addProducer("p1", cfg, 1)
		for _, b := range h.brokers {
			h.w.SetLink(b, p, sim.LinkConfig{Latency: time.Millisecond, Jitter: time.Millisecond, Drop: sim.Percent(20)})
		}
		for i := 0; i < 50; i++ {
			key := ""
			if i%3 == 0 {
				key = fmt.Sprint("k", i%7)
			}
			send(h.w, p, key, fmt.Sprint("v", i), time.Duration(i)*3*time.Millisecond)
		}
		h.run(10 * time.Second)
		h.validate()
		return h.w.Trace().HashString(), h.w.StepHash()
	}
	a, sa := run()
	b, sb := run()
	if a != b || sa != sb {
		t.Errorf("same seed, different runs: trace %s vs %s, steps %x vs %x", a, b, sa, sb)
	}
}

// An epoch bump renumbers only the partition whose batch ended without success. A batch
// another partition's leader appended, whose answer was lost, is re-sent with its old epoch
// and sequence and recognised; renumbered as the new epoch's sequence 0 it would be
// appended twice (swarm seed 2, epoch-bump-renumbered-a-sent-batch.txt).
func TestEpochBumpKeepsSentBatchesOfOtherPartitions(t *testing.T) {
	h := newHarness(t, 1, 2, 2)
	cfg := producerConfig()
	cfg.DeliveryTimeout = time.Second
	p := h.addProducer("p1", cfg, 1)
	warm(h, p)
	h.w.Cut(h.brokers[0], p) // t/0's answers are lost: m1 ends unknown, and the epoch is bumped
	h.w.Cut(h.brokers[1], p) // t/1's too, until m2 is appended and waits for a retry
	sendTo(h.w, p, 0, "m1", 0)
	sendTo(h.w, p, 1, "m2", 800*time.Millisecond)
	h.run(1300 * time.Millisecond)
	if len(h.events("reset")) != 1 || len(h.fc.part(tp(1)).values()) != 1 {
		t.Fatalf("resets %q, t/1 %v: want the bump to happen while m2 is appended and unanswered", h.events("reset"), h.fc.part(tp(1)).values())
	}
	h.w.HealLink(h.brokers[0], p)
	h.w.HealLink(h.brokers[1], p)
	h.run(time.Second)
	out := sendOutcomes(h.validate())
	if got := h.fc.part(tp(1)).values(); !slices.Equal(got, []string{"m2"}) || out["m2"].typ != history.Ok || out["m2"].offset != 0 {
		t.Errorf("t/1 holds %v, m2 %+v: want m2 once, ok at offset 0", got, out["m2"])
	}
	sendTo(h.w, p, 1, "m3", 0)
	h.run(500 * time.Millisecond)
	last := h.fc.produced[len(h.fc.produced)-1].Batch
	if last.ProducerEpoch != 1 || last.BaseSequence != 0 {
		t.Errorf("m3 sent with epoch %d seq %d, want t/1 to start the new epoch at 0 once m2 is resolved", last.ProducerEpoch, last.BaseSequence)
	}
}
