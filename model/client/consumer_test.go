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

func assign(w *sim.World, c sim.NodeID, fromBeginning bool, parts ...int32) {
	var tps []proto.TP
	for _, p := range parts {
		tps = append(tps, tp(p))
	}
	w.Inject(c, Assign{Partitions: tps, FromBeginning: fromBeginning}, 0)
}

func values(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
	}
	return out
}

// reads renders a poll: its type and "partition@offset:value" per record.
func reads(op history.Op) string {
	return string(op.Type) + " " + strings.Join(readValues(op), " ")
}

func TestConsumerReadsInOrder(t *testing.T) {
	h := newHarness(t, 1, 2, 2)
	h.fill(0, values("a", 0, 5)...)
	h.fill(0, values("a", 5, 10)...)
	h.fill(1, values("b", 0, 3)...)
	cfg := consumerConfig()
	cfg.MaxPollRecords = 4
	c := h.addConsumer("c1", cfg, 1)
	assign(h.w, c, true, 1, 0)
	for i := 0; i < 4; i++ {
		h.w.Inject(c, Poll{}, 0)
	}
	h.run(time.Second)
	hist := h.validate()
	var got []string
	for _, op := range polls(hist) {
		got = append(got, reads(op))
	}
	want := []string{
		"ok t-0@0:a0 t-0@1:a1 t-0@2:a2 t-0@3:a3",
		"ok t-0@4:a4 t-0@5:a5 t-0@6:a6 t-0@7:a7", // the fetch from 4 returns a0..a4 too: skipped
		"ok t-0@8:a8 t-0@9:a9 t-1@0:b0 t-1@1:b1",
		"ok t-1@2:b2",
	}
	if !slices.Equal(got, want) {
		t.Errorf("polls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	cn := h.consumer(c)
	if off, ok := cn.Position(tp(0)); !ok || off != 10 || cn.Consumed() != 13 || cn.Polls() != 4 {
		t.Errorf("position %d %t, consumed %d, polls %d", off, ok, cn.Consumed(), cn.Polls())
	}
	if ps := cn.Positions(); len(ps) != 2 || ps[0].TP != tp(0) || ps[0].Epoch != 1 || ps[1].Offset != 3 {
		t.Errorf("positions %+v", ps)
	}
}

// With auto.offset.reset=latest (Kafka's default) a new consumer sees only new records.
func TestConsumerStartsAtLatest(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	h.fill(0, "old")
	c := h.addConsumer("c1", consumerConfig(), 1)
	assign(h.w, c, false, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(100 * time.Millisecond)
	h.fill(0, "new")
	h.w.Inject(c, Poll{}, 0)
	h.run(100 * time.Millisecond)
	var got []string
	for _, op := range polls(h.validate()) {
		got = append(got, reads(op))
	}
	if want := []string{"ok ", "ok t-0@1:new"}; !slices.Equal(got, want) {
		t.Errorf("polls %q, want %q", got, want)
	}
}

func TestConsumerProcessingTimeAndPollLoop(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	h.fill(0, values("a", 0, 3)...)
	cfg := consumerConfig()
	cfg.ProcessingTime = 10 * time.Millisecond
	c := h.addConsumer("c1", cfg, 1)
	assign(h.w, c, true, 0)
	h.w.Inject(c, PollLoop{Every: 50 * time.Millisecond, Count: 3}, 0)
	h.run(time.Second)
	hist := h.validate()
	ps := polls(hist)
	if len(ps) != 3 {
		t.Fatalf("%d polls, want 3", len(ps))
	}
	first := hist[ps[0].Invoke]
	if d := ps[0].Time - first.Time; d < int64(30*time.Millisecond) {
		t.Errorf("first poll took %s, want at least 3 records x 10ms", time.Duration(d))
	}
	for i, op := range ps[1:] {
		inv := hist[op.Invoke]
		if want := first.Time + int64(i+1)*int64(50*time.Millisecond); inv.Time != want {
			t.Errorf("poll %d began at %s, want %s", i+2, sim.Time(inv.Time), sim.Time(want))
		}
	}
	if got := reads(ps[0]); got != "ok t-0@0:a0 t-0@1:a1 t-0@2:a2" {
		t.Errorf("first poll %s", got)
	}
}

// OFFSET_OUT_OF_RANGE after retention moved the log start past the position.
func TestConsumerOffsetOutOfRange(t *testing.T) {
	for _, c := range []struct {
		reset string
		want  []string
	}{
		{"earliest", []string{"ok t-0@0:a0 t-0@1:a1 t-0@2:a2", "ok ", "ok t-0@5:c5 t-0@6:c6"}},
		{"latest", []string{"ok t-0@0:a0 t-0@1:a1 t-0@2:a2", "ok ", "ok ", "ok t-0@7:c7"}},
		{"none", []string{"ok t-0@0:a0 t-0@1:a1 t-0@2:a2", "fail ", "fail "}},
	} {
		t.Run(c.reset, func(t *testing.T) {
			h := newHarness(t, 1, 1, 1)
			h.fill(0, values("a", 0, 3)...)
			cfg := consumerConfig()
			cfg.AutoOffsetReset = c.reset
			cn := h.addConsumer("c1", cfg, 1)
			assign(h.w, cn, true, 0)
			h.w.Inject(cn, Poll{}, 0)
			h.run(100 * time.Millisecond)
			// Retention deletes everything; the log goes on at 5.
			p := h.fc.part(tp(0))
			p.batches, p.logStart = nil, 5
			h.fill(0, "c5", "c6")
			for i := 0; i < len(c.want)-1; i++ {
				if i == 2 {
					h.fill(0, "c7")
				}
				h.w.Inject(cn, Poll{}, 0)
				h.run(100 * time.Millisecond)
			}
			var got []string
			for _, op := range polls(h.validate()) {
				got = append(got, reads(op))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("polls %q, want %q", got, c.want)
			}
			if c.reset == "none" {
				if off, _ := h.consumer(cn).Position(tp(0)); off != 3 {
					t.Errorf("position %d after failed polls, want 3 (unchanged)", off)
				}
			}
		})
	}
}

func TestConsumerNoResetPolicyFailsFirstPoll(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	cfg := consumerConfig()
	cfg.AutoOffsetReset = "none"
	c := h.addConsumer("c1", cfg, 1)
	assign(h.w, c, false, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(100 * time.Millisecond)
	ps := polls(h.validate())
	if len(ps) != 1 || ps[0].Type != history.Fail || !strings.Contains(ps[0].Error, "auto.offset.reset=none") {
		t.Errorf("polls %+v", ps)
	}
}

// An unclean election truncates the log under the consumer: the new leader answers the
// consumer's last fetched epoch with DivergingEpoch, and the consumer goes back.
func TestConsumerDetectsTruncation(t *testing.T) {
	for _, reset := range []string{"earliest", "none"} {
		t.Run(reset, func(t *testing.T) {
			h := newHarness(t, 1, 2, 1)
			h.fill(0, values("a", 0, 5)...) // epoch 1
			cfg := consumerConfig()
			cfg.AutoOffsetReset = reset
			c := h.addConsumer("c1", cfg, 1)
			assign(h.w, c, true, 0)
			h.w.Inject(c, Poll{}, 0)
			h.run(100 * time.Millisecond)
			p := h.fc.part(tp(0))
			p.truncate(3) // the new leader had only a0..a2
			h.fc.setLeader(tp(0), h.brokers[1])
			h.fill(0, "x3", "x4", "x5") // epoch 2
			for i := 0; i < 3; i++ {
				h.w.Inject(c, Poll{}, 0)
				h.run(500 * time.Millisecond)
			}
			var got []string
			for _, op := range polls(h.validate()) {
				got = append(got, reads(op))
			}
			want := []string{
				"ok t-0@0:a0 t-0@1:a1 t-0@2:a2 t-0@3:a3 t-0@4:a4",
				"info ", // old leader: NOT_LEADER_OR_FOLLOWER, metadata refreshed
				"ok ",   // truncation detected, position 5 -> 3
				"ok t-0@3:x3 t-0@4:x4 t-0@5:x5",
			}
			if reset == "none" {
				want = []string{want[0], want[1], "fail ", "fail "}
			}
			if !slices.Equal(got, want) {
				t.Errorf("polls %q, want %q", got, want)
			}
			tr := h.events("truncation")
			if len(tr) == 0 || !strings.Contains(tr[0], "truncation detected on t/0: epoch 1 ends at 3, below position 5") {
				t.Errorf("truncation events %q", tr)
			}
		})
	}
}

// A fetch with a stale leader epoch is fenced; the consumer refreshes and carries on.
func TestConsumerFencedLeaderEpoch(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	h.fill(0, "a0")
	c := h.addConsumer("c1", consumerConfig(), 1)
	assign(h.w, c, true, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(100 * time.Millisecond)
	h.fc.setLeader(tp(0), h.brokers[0]) // same leader, new epoch
	h.fill(0, "a1")
	for i := 0; i < 2; i++ {
		h.w.Inject(c, Poll{}, 0)
		h.run(500 * time.Millisecond)
	}
	ps := polls(h.validate())
	var got []string
	for _, op := range ps {
		got = append(got, reads(op))
	}
	if want := []string{"ok t-0@0:a0", "info ", "ok t-0@1:a1"}; !slices.Equal(got, want) {
		t.Errorf("polls %q, want %q", got, want)
	}
	if !strings.Contains(ps[1].Error, "FENCED_LEADER_EPOCH") {
		t.Errorf("second poll error %q", ps[1].Error)
	}
}

// A crashed leader: the fetch times out, and the poll is ok with what the other partitions
// returned (the application has those records and the consumer is past them; a poll that
// returned nothing would be info). Recorded as info, the checker would take the next poll
// for a poll-skip over records the history says may not have been seen.
func TestConsumerFetchTimeout(t *testing.T) {
	h := newHarness(t, 1, 2, 2)
	h.fill(0, "a0")
	h.fill(1, "b0")
	c := h.addConsumer("c1", consumerConfig(), 1)
	assign(h.w, c, true, 0, 1)
	h.w.Inject(c, Poll{}, 0)
	h.run(100 * time.Millisecond)
	h.fill(0, "a1")
	h.fill(1, "b1")
	h.w.Crash(h.brokers[1])
	h.w.Inject(c, Poll{}, 0)
	h.run(time.Second)
	ps := polls(h.validate())
	if len(ps) != 2 || reads(ps[1]) != "ok t-0@1:a1" {
		t.Errorf("polls %+v", ps)
	}
}

// After a fetch to a dead leader times out, the client does not ask the same broker again
// on stale metadata: the next poll waits for a metadata answer, which names the new
// leader, and reads there. (Asking the dead leader again costs a whole request timeout per
// poll, and a group member can spend its session doing it.)
func TestConsumerWaitsForMetadataAfterADeadLeader(t *testing.T) {
	h := newHarness(t, 1, 2, 1)
	h.fill(0, "a0")
	c := h.addConsumer("c1", consumerConfig(), 1)
	for _, b := range h.brokers {
		h.w.SetLink(b, c, sim.LinkConfig{Latency: time.Millisecond}) // the metadata answer takes time
	}
	assign(h.w, c, true, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(100 * time.Millisecond)
	h.fill(0, "a1")
	dead := h.fc.part(tp(0)).leader
	h.w.Crash(dead)
	timedOut := h.w.Trace().Len()
	h.w.Inject(c, PollLoop{Every: 10 * time.Millisecond, Count: 3}, 0)
	// The new leader is elected while the poll waits on the dead one, after the client's
	// last metadata answer: its metadata is stale when the fetch times out.
	h.run(100 * time.Millisecond)
	h.fc.setLeader(tp(0), h.brokers[0]+h.brokers[1]-dead)
	h.run(2 * time.Second)
	ps := polls(h.validate())
	if len(ps) != 4 || ps[1].Type != history.Info || reads(ps[2]) != "ok t-0@1:a1" {
		t.Fatalf("polls %+v", ps)
	}
	fetches := 0
	for _, e := range h.w.Trace().Since(timedOut) {
		if e.Node == "c1" && e.Kind == "send" && e.Peer == h.w.Name(dead) && strings.HasPrefix(e.Detail, "Fetch") {
			fetches++
		}
	}
	if fetches != 1 {
		t.Errorf("%d requests to the dead leader %s, want only the one that timed out", fetches, h.w.Name(dead))
	}
}

// A producer and a consumer over the fake brokers: what is acknowledged is read, in order.
func TestProduceThenConsume(t *testing.T) {
	h := newHarness(t, 9, 3, 3)
	p := h.addProducer("p1", producerConfig(), 1)
	c := h.addConsumer("c1", consumerConfig(), 2)
	for i := 0; i < 30; i++ {
		send(h.w, p, fmt.Sprint("k", i%5), fmt.Sprint("v", i), time.Duration(i)*time.Millisecond)
	}
	assign(h.w, c, true, 0, 1, 2)
	h.w.Inject(c, PollLoop{Every: 20 * time.Millisecond, Count: 20}, 0)
	h.run(2 * time.Second)
	hist := h.validate()
	acked := map[string]string{}
	for v, o := range sendOutcomes(hist) {
		if o.typ != history.Ok {
			t.Errorf("send %s: %+v", v, o)
		}
		acked[fmt.Sprintf("%s@%d", o.tp, o.offset)] = v
	}
	read := map[string]string{}
	for _, op := range polls(hist) {
		for _, pr := range op.Poll.Reads {
			for _, r := range pr.Records {
				read[fmt.Sprintf("%s@%d", pr.TopicPartition, r.Offset)] = r.Value
			}
		}
	}
	if len(read) != 30 || fmt.Sprint(read) != fmt.Sprint(acked) {
		t.Errorf("read %v\nacked %v", read, acked)
	}
}
