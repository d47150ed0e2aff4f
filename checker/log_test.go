package checker

import (
	"testing"

	"mqsim/model/history"
)

// Each case builds the smallest history showing one anomaly (or none) and
// lists exactly the findings expected; anything else fails the test.
func TestQueueAnomalies(t *testing.T) {
	const ok, info, fail = history.Ok, history.Info, history.Fail
	tests := []struct {
		name  string
		build func(b *builder)
		opts  LogOptions
		want  []want
	}{
		{name: "clean: every acknowledged value read in order", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.ok(1, t1, "x", 0)
			b.poll(2, "g", ok, rd(t0, at(0, "a"), at(1, "b")), rd(t1, at(0, "x")))
			b.read(2, t0) // an empty poll changes nothing
		}},
		{name: "clean: failed, indeterminate and pending sends need not be read", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.send(1, t0, "f", fail, 0)
			b.send(1, t0, "i", info, 0)
			b.r.InvokeSend(b.tick(), 1, t0, "", "pending")
			b.read(2, t0, at(0, "a"))
		}},
		{name: "clean: an indeterminate send that was read committed, in order", build: func(b *builder) {
			b.send(1, t0, "i", info, 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(0, "i"), at(1, "b"))
		}},
		{name: "clean: concurrent commits may land in either order", build: func(b *builder) {
			c1 := b.r.InvokeCommit(b.tick(), 1, "g", []history.PartitionOffset{{TopicPartition: t0, Offset: 5}})
			c2 := b.r.InvokeCommit(b.tick(), 2, "g", []history.PartitionOffset{{TopicPartition: t0, Offset: 3}})
			b.r.Ok(b.tick(), c1, history.Result{})
			b.r.Ok(b.tick(), c2, history.Result{})
			b.commit(1, "other", t0, 1) // another group has its own offsets
		}},
		{name: "clean: reassignment restarts tracking", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(0, "a"), at(1, "b"))
			b.assign(2, ok, false, t1) // drops t-0
			b.assign(2, ok, false, t0)
			b.read(2, t0, at(0, "a"))
			b.assign(2, ok, true, t0) // seek to beginning
			b.read(2, t0, at(0, "a"))
		}},
		{name: "inconsistent-offsets", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.send(4, t0, "b", info, 0) // another producer: not a nonmonotonic-send
			b.read(2, t0, at(0, "a"))
			b.read(3, t0, at(0, "b"))
		}, want: []want{{anomaly: InconsistentOffsets, tp: t0, offsets: []int64{0}, values: []string{"a", "b"}}}},
		{name: "duplicate", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(0, "a"), at(1, "b"), at(2, "a"))
		}, want: []want{{anomaly: Duplicate, tp: t0, offsets: []int64{0, 2}, values: []string{"a"}}}},
		{name: "lost-write in the prefix", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(1, "b"))
		}, want: []want{{anomaly: LostWrite, tp: t0, offsets: []int64{0}, values: []string{"a"}, where: "prefix"}}},
		{name: "lost-write in the middle", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.ok(1, t0, "c", 2)
			b.read(2, t0, at(0, "a"))
			b.read(3, t0, at(2, "c"))
		}, want: []want{{anomaly: LostWrite, tp: t0, offsets: []int64{1}, values: []string{"b"}, where: "middle"}}},
		{name: "lost-write seen only by a failed poll", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.poll(2, "", fail, rd(t0, at(0, "a")))
			b.read(3, t0, at(1, "b"))
		}, want: []want{{anomaly: LostWrite, tp: t0, offsets: []int64{0}, values: []string{"a"}, where: "prefix"}}},
		{name: "unseen suffix", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(0, "a"))
		}, want: []want{{anomaly: Unseen, tp: t0, offsets: []int64{1}, values: []string{"b"}}}},
		{name: "unseen without an offset (acks=0)", build: func(b *builder) {
			b.ok(1, t0, "a", history.NoOffset)
		}, want: []want{{anomaly: Unseen, tp: t0, values: []string{"a"}}}},
		{name: "unseen: read too late after the heal", build: func(b *builder) {
			b.ok(1, t0, "a", 0) // acknowledged at t=20
			b.now = 1000
			b.read(2, t0, at(0, "a")) // read at t=1020
		}, opts: LogOptions{Unseen: UnseenRule{After: 500, Within: 100}},
			want: []want{{anomaly: Unseen, tp: t0, offsets: []int64{0}, values: []string{"a"}}}},
		{name: "poll-skip", build: func(b *builder) {
			for i, v := range []string{"a", "b", "c"} {
				b.ok(1, t0, v, int64(i))
			}
			b.read(2, t0, at(0, "a"))
			b.read(2, t0, at(2, "c"))
			b.read(3, t0, at(1, "b"))
		}, want: []want{{anomaly: PollSkip, tp: t0, offsets: []int64{0, 2}, values: []string{"b"}}}},
		{name: "info poll can be a poll-skip but does not advance", build: func(b *builder) {
			for i, v := range []string{"a", "b", "c"} {
				b.ok(1, t0, v, int64(i))
			}
			b.read(2, t0, at(0, "a"))
			b.poll(2, "", info, rd(t0, at(2, "c")))
			b.read(2, t0, at(1, "b"), at(2, "c"))
		}, want: []want{{anomaly: PollSkip, tp: t0, offsets: []int64{0, 2}, values: []string{"b"}}}},
		{name: "nonmonotonic-poll", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(0, "a"), at(1, "b"))
			b.read(2, t0, at(1, "b"))
		}, want: []want{{anomaly: NonmonotonicPoll, tp: t0, offsets: []int64{1, 1}, values: []string{"b", "b"}}}},
		{name: "a failed assign does not reset tracking", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.read(2, t0, at(0, "a"))
			b.assign(2, fail, true, t0)
			b.read(2, t0, at(0, "a"))
		}, want: []want{{anomaly: NonmonotonicPoll, tp: t0, offsets: []int64{0, 0}, values: []string{"a", "a"}}}},
		{name: "int-poll-skip", build: func(b *builder) {
			for i, v := range []string{"a", "b", "c"} {
				b.ok(1, t0, v, int64(i))
			}
			b.read(2, t0, at(0, "a"), at(2, "c"))
			b.read(3, t0, at(1, "b"))
		}, want: []want{{anomaly: IntPollSkip, tp: t0, offsets: []int64{0, 2}, values: []string{"b"}}}},
		{name: "int-nonmonotonic-poll", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(1, "b"), at(0, "a"))
		}, want: []want{{anomaly: IntNonmonotonicPoll, tp: t0, offsets: []int64{1, 0}, values: []string{"b", "a"}}}},
		{name: "nonmonotonic-send", build: func(b *builder) {
			b.ok(1, t0, "a", 1)
			b.ok(1, t0, "b", 0)
			b.read(2, t0, at(0, "b"), at(1, "a"))
		}, want: []want{{anomaly: NonmonotonicSend, tp: t0, offsets: []int64{1, 0}, values: []string{"a", "b"}}}},
		{name: "G1a aborted read", build: func(b *builder) {
			b.send(1, t0, "a", fail, 0)
			b.read(2, t0, at(0, "a"))
		}, want: []want{{anomaly: G1a, tp: t0, offsets: []int64{0}, values: []string{"a"}}}},
		{name: "unexpected value", build: func(b *builder) {
			b.read(2, t0, at(0, "ghost"))
		}, want: []want{{anomaly: Unexpected, tp: t0, offsets: []int64{0}, values: []string{"ghost"}}}},
		{name: "nonmonotonic-commit", build: func(b *builder) {
			b.commit(1, "g", t0, 5)
			b.commit(2, "g", t0, 3)
		}, want: []want{{anomaly: NonmonotonicCommit, tp: t0, group: "g", offsets: []int64{5, 3}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			r, err := CheckLog(b.history(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			expectExactly(t, r.Violations, tt.want)
			if len(r.Allowed) > 0 {
				t.Errorf("nothing was allowed, yet %d allowed findings", len(r.Allowed))
			}
			wantResult := Valid
			if len(tt.want) > 0 {
				wantResult = Invalid
			}
			if r.Result != wantResult {
				t.Errorf("result %s, want %s", r.Result, wantResult)
			}
			if t.Failed() {
				t.Log("\n" + r.String())
			}
		})
	}
}

// Allowed anomalies are reported and counted, but the verdict stays valid.
func TestAllowedAnomalies(t *testing.T) {
	b := newBuilder()
	for i, v := range []string{"a", "b", "c"} {
		b.ok(1, t0, v, int64(i))
	}
	b.read(2, t0, at(0, "a"))
	b.read(2, t0, at(2, "c")) // a rebalance moved the consumer forward
	b.read(3, t0, at(1, "b"))
	r, err := CheckLog(b.history(), LogOptions{Allow: []Anomaly{PollSkip, NonmonotonicPoll}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Result != Valid || len(r.Violations) != 0 {
		t.Fatalf("allowed poll-skip failed the check:\n%s", r)
	}
	expectExactly(t, r.Allowed, []want{{anomaly: PollSkip, tp: t0, values: []string{"b"}}})
	if r.Counts[PollSkip] != 1 {
		t.Fatalf("counts %v, want poll-skip 1", r.Counts)
	}
}

// A read deadline after the end of the history decides nothing.
func TestUnseenUndecided(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	r, err := CheckLog(b.history(), LogOptions{Unseen: UnseenRule{After: 0, Within: 1_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) != 0 || !noteContaining(r, "undecided") {
		t.Fatalf("want an undecided note and no violation:\n%s", r)
	}
}

// Never-read acknowledged values are classified by place, in a note.
func TestLostWriteClassificationNote(t *testing.T) {
	b := newBuilder()
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		b.ok(1, t0, v, int64(i))
	}
	b.ok(1, t0, "z", history.NoOffset)
	b.read(2, t0, at(1, "b"))
	b.read(3, t0, at(3, "d"))
	r, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !noteContaining(r, "t-0: acknowledged values never read by an ok poll, by place in the write order: prefix 1, middle 1 (lost-write), suffix 1, unplaced 1") {
		t.Fatalf("classification note missing:\n%s", r)
	}
}

func TestRepeatedValuesAreNoted(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(2, t0, "a", 1)
	b.read(3, t0, at(0, "a"), at(1, "a"))
	r, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !noteContaining(r, `t-0: 1 value sent by more than one op`) {
		t.Fatalf("no uniqueness note:\n%s", r)
	}
}

func TestInvalidHistoryIsAnError(t *testing.T) {
	h := history.History{{Index: 3, Type: history.Invoke, F: history.Poll, Invoke: -1, Poll: &history.PollValue{}}}
	if _, err := CheckLog(h, LogOptions{}); err == nil {
		t.Fatal("an invalid history was checked")
	}
}

// A rebalance inside a poll (the group consumer took part in it while fetching) may move
// the position back to the committed offset: like Jepsen's :rebalance-log, it is not a
// nonmonotonic poll.
func TestRebalanceDuringAPollIsNotNonmonotonic(t *testing.T) {
	tp := history.TopicPartition{Topic: "t", Partition: 0}
	r := history.NewRecorder()
	s := r.InvokeSend(1, 9, tp, "", "v1")
	r.Ok(2, s, history.Result{Offset: 0})
	p1 := r.InvokePoll(3, 1, "g")
	r.Ok(4, p1, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: []history.Record{{Offset: 0, Value: "v1"}}}}})
	p2 := r.InvokePoll(5, 1, "g")
	a1 := r.InvokeAssign(6, 1, "g", nil, false)
	r.Ok(6, a1, history.Result{})
	a2 := r.InvokeAssign(7, 1, "g", []history.TopicPartition{tp}, false)
	r.Ok(7, a2, history.Result{})
	r.Ok(8, p2, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: []history.Record{{Offset: 0, Value: "v1"}}}}})
	rep, err := CheckLog(r.History(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 0 {
		t.Errorf("violations: %s", rep)
	}
	// Without the rebalance the same re-read is nonmonotonic.
	r = history.NewRecorder()
	s = r.InvokeSend(1, 9, tp, "", "v1")
	r.Ok(2, s, history.Result{Offset: 0})
	p1 = r.InvokePoll(3, 1, "g")
	r.Ok(4, p1, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: []history.Record{{Offset: 0, Value: "v1"}}}}})
	p2 = r.InvokePoll(5, 1, "g")
	r.Ok(8, p2, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: []history.Record{{Offset: 0, Value: "v1"}}}}})
	rep, _ = CheckLog(r.History(), LogOptions{})
	if rep.Counts[NonmonotonicPoll] != 1 {
		t.Errorf("the plain re-read was not reported: %s", rep)
	}
}
