package checker

import (
	"slices"
	"strings"
	"testing"

	"mqsim/model/history"
)

var (
	in0  = history.TopicPartition{Topic: "in", Partition: 0}
	out0 = history.TopicPartition{Topic: "out", Partition: 0}
	out1 = history.TopicPartition{Topic: "out", Partition: 1}
)

// txn records a whole transaction of process proc with transactional.id id,
// completing with typ (ok: committed, fail: aborted, info: unknown).
func (b *builder) txn(proc int, id string, typ history.Type, ops ...history.MicroOp) {
	h := b.r.InvokeTxn(b.tick(), proc, id)
	b.complete(h, typ, history.Result{TxnOps: ops})
}

// rcRead is an ok read_committed poll of one partition by a group-less consumer.
func (b *builder) rcRead(proc int, tp history.TopicPartition, recs ...history.Record) {
	h := b.r.InvokeReadCommittedPoll(b.tick(), proc, "")
	b.r.Ok(b.tick(), h, history.Result{Reads: []history.PartitionRecords{rd(tp, recs...)}})
}

// mSend is a send inside a transaction that learned its offset.
func mSend(tp history.TopicPartition, value string, offset int64) history.MicroOp {
	return history.MicroOp{F: history.Send, Send: &history.SendValue{TopicPartition: tp, Value: value, Offset: offset}}
}

// mPoll is a poll inside a transaction; rc says read_committed.
func mPoll(rc bool, reads ...history.PartitionRecords) history.MicroOp {
	return history.MicroOp{F: history.Poll, Poll: &history.PollValue{ReadCommitted: rc, Reads: reads}}
}

// Each case builds the smallest history showing one transaction anomaly (or a
// tricky case that is none) and lists exactly the violations and the allowed
// findings expected; anything else fails the test.
func TestTxnAnomalies(t *testing.T) {
	const ok, info, fail = history.Ok, history.Info, history.Fail
	tests := []struct {
		name             string
		build            func(b *builder)
		violations, allo []want
	}{
		{name: "clean: a committed transaction read at read_committed", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mSend(t0, "b", 1), mSend(t1, "x", 0))
			b.rcRead(2, t0, at(0, "a"), at(1, "b"))
			b.rcRead(2, t1, at(0, "x"))
		}},
		{name: "lost-write: a committed transaction's send is a write that must be read", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mSend(t0, "b", 1))
			b.rcRead(2, t0, at(1, "b"))
		}, violations: []want{{anomaly: LostWrite, tp: t0, values: []string{"a"}, where: "prefix"}}},
		{name: "unseen: an unknown transaction read committed in one partition is missing from another", build: func(b *builder) {
			// It committed whole or not at all: one write read at read_committed proves
			// the other committed (markers-before-prepare breaks this).
			b.txn(1, "T1", info, mSend(t0, "a", history.NoOffset), mSend(t1, "b", history.NoOffset))
			b.rcRead(2, t0, at(0, "a"))
			b.rcRead(2, t1)
		}, violations: []want{{anomaly: Unseen, tp: t1, values: []string{"b"}}}},
		{name: "unseen-not-unproven: an unknown transaction that nobody read committed may have aborted", build: func(b *builder) {
			b.txn(1, "T1", info, mSend(t0, "a", history.NoOffset), mSend(t1, "b", history.NoOffset))
			b.rcRead(2, t0)
			b.rcRead(2, t1)
		}},
		{name: "G1a: a read_committed poll returns an aborted transaction's write", build: func(b *builder) {
			b.txn(1, "T1", fail, mSend(t0, "a", 0))
			b.rcRead(2, t0, at(0, "a"))
		}, violations: []want{{anomaly: G1a, tp: t0, values: []string{"a"}}}},
		{name: "G1a allowed: a read_uncommitted poll may return an aborted write", build: func(b *builder) {
			b.txn(1, "T1", fail, mSend(t0, "a", 0))
			b.ok(3, t0, "b", 1)
			b.read(2, t0, at(0, "a"), at(1, "b"))
			b.rcRead(4, t0, at(1, "b")) // skips the aborted write: no int-poll-skip, no poll-skip
		}, allo: []want{{anomaly: G1a, tp: t0, values: []string{"a"}}}},
		{name: "clean: a process that changes isolation level is a new consumer", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.txn(1, "T1", fail, mSend(t0, "x", 1))
			b.ok(1, t0, "c", 2)
			b.read(2, t0, at(0, "a"))
			b.rcRead(2, t0) // passed over x, returned nothing
			b.read(2, t0, at(2, "c"))
			b.read(3, t0, at(1, "x"))
		}, allo: []want{{anomaly: G1a, tp: t0, values: []string{"x"}}}},
		{name: "poll-skip: the same read_uncommitted consumer may not pass over an aborted write", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.txn(1, "T1", fail, mSend(t0, "x", 1))
			b.ok(1, t0, "c", 2)
			b.read(2, t0, at(0, "a"))
			b.read(2, t0, at(2, "c"))
			b.read(3, t0, at(1, "x"))
		}, violations: []want{{anomaly: PollSkip, tp: t0, values: []string{"x"}}},
			allo: []want{{anomaly: G1a, tp: t0, values: []string{"x"}}}},
		{name: "clean: an unknown transaction read at read_committed committed", build: func(b *builder) {
			b.txn(1, "T1", info, mSend(t0, "a", 0), mSend(t1, "x", 0))
			b.rcRead(2, t0, at(0, "a"))
			b.rcRead(2, t1, at(0, "x"))
		}},
		{name: "lost-write: an unknown transaction proven committed on one partition lost its write on another", build: func(b *builder) {
			// A coordinator that sent COMMIT to t0 and later aborted t1 (markers-before-prepare).
			b.txn(1, "T1", info, mSend(t0, "a", 0), mSend(t1, "x", 0))
			b.ok(3, t1, "y", 2)
			b.rcRead(2, t0, at(0, "a"))
			b.rcRead(2, t1, at(2, "y"))
		}, violations: []want{{anomaly: LostWrite, tp: t1, values: []string{"x"}, where: "prefix"}}},
		{name: "clean: an unknown transaction nobody proved committed may have aborted", build: func(b *builder) {
			b.txn(1, "T1", info, mSend(t0, "a", 0), mSend(t1, "x", 0))
			b.ok(3, t1, "y", 2)
			b.rcRead(2, t1, at(2, "y"))
		}},
		{name: "clean: a value retried after an abort is judged by its committed send", build: func(b *builder) {
			b.txn(1, "T1", fail, mSend(t0, "a", 0))
			b.txn(1, "T1", ok, mSend(t0, "a", 2))
			b.rcRead(2, t0, at(2, "a"))
		}},
		{name: "G1b: a read_committed poll reads past a transaction's later write without it", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mSend(t0, "b", 2))
			b.ok(3, t0, "c", 1)
			b.ok(3, t0, "d", 3)
			b.rcRead(2, t0, at(0, "a"), at(1, "c"), at(3, "d"))
			b.rcRead(4, t0, at(0, "a"), at(1, "c"), at(2, "b"), at(3, "d"))
		}, violations: []want{
			{anomaly: G1b, tp: t0, values: []string{"a", "b"}, offsets: []int64{0, 2}},
			{anomaly: IntPollSkip, tp: t0, values: []string{"b"}},
		}, allo: []want{
			// c landed between T1's writes: Jepsen's own reading, a write cycle and a send skip, both allowed.
			{anomaly: IntSendSkip, tp: t0, values: []string{"c"}},
			{anomaly: G0, tp: t0, values: []string{"c", "b"}},
		}},
		{name: "G1b-not-stopped-before: a poll may stop inside a transaction's writes", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mSend(t0, "b", 1))
			b.rcRead(2, t0, at(0, "a"))
			b.rcRead(2, t0, at(1, "b"))
		}},
		{name: "G1b-not-other-partition: the later write went to another partition", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mSend(t1, "b", 0))
			b.ok(3, t1, "c", 1)
			b.rcRead(2, t0, at(0, "a"))
			b.rcRead(4, t1, at(0, "b"), at(1, "c"))
		}},
		{name: "int-poll-skip: two polls of one transaction skip a value between them", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.ok(1, t0, "c", 2)
			b.txn(2, "T2", ok, mPoll(true, rd(t0, at(0, "a"))), mPoll(true, rd(t0, at(2, "c"))))
			b.rcRead(3, t0, at(0, "a"), at(1, "b"), at(2, "c"))
		}, violations: []want{{anomaly: IntPollSkip, tp: t0, values: []string{"b"}}}},
		{name: "int-nonmonotonic-poll: a transaction's second poll goes back", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.txn(2, "T2", ok, mPoll(true, rd(t0, at(0, "a"), at(1, "b"))), mPoll(true, rd(t0, at(1, "b"))))
		}, violations: []want{{anomaly: IntNonmonotonicPoll, tp: t0, values: []string{"b", "b"}}}},
		{name: "int-poll-skip-not-after-abort: an aborted transaction's polls are rewound, a committed one's are not", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.txn(2, "T2", fail, mPoll(true, rd(t0, at(0, "a"))))
			b.txn(2, "T2", ok, mPoll(true, rd(t0, at(0, "a"))))
			b.txn(2, "T2", ok, mPoll(true, rd(t0, at(1, "b"))))
		}},
		{name: "int-nonmonotonic-send: a transaction's later send lands before its earlier one", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 1), mSend(t0, "b", 0))
			b.rcRead(2, t0, at(0, "b"), at(1, "a"))
		}, violations: []want{{anomaly: IntNonmonotonicSend, tp: t0, values: []string{"a", "b"}, offsets: []int64{1, 0}}}},
		{name: "int-nonmonotonic-send-not-retried: an unknown transaction's sends are not placed by another op's copies", build: func(b *builder) {
			// A pipeline's transaction that crashed sent b then a; its retries sent a, then
			// b, and committed them. Where a and b were read says where the retries' copies
			// are, not the crashed attempt's (txn swarm seed 375).
			b.txn(1, "T1", info, mSend(t0, "b", history.NoOffset), mSend(t0, "a", history.NoOffset))
			b.txn(2, "T1", ok, mSend(t0, "a", 0))
			b.txn(2, "T1", ok, mSend(t0, "b", 2))
			b.rcRead(3, t0, at(0, "a"), at(2, "b"))
		}},
		{name: "int-nonmonotonic-send placed by reads: an unknown transaction's only copies landed out of order", build: func(b *builder) {
			b.txn(1, "T1", info, mSend(t0, "b", history.NoOffset), mSend(t0, "a", history.NoOffset))
			b.rcRead(3, t0, at(0, "a"), at(1, "b"))
		}, violations: []want{{anomaly: IntNonmonotonicSend, tp: t0, values: []string{"b", "a"}, offsets: []int64{1, 0}}}},
		{name: "int-send-skip allowed: another producer's write lands between a transaction's", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mSend(t0, "b", 2))
			b.ok(3, t0, "c", 1)
			b.rcRead(2, t0, at(0, "a"), at(1, "c"), at(2, "b"))
		}, allo: []want{{anomaly: IntSendSkip, tp: t0, values: []string{"c"}}, {anomaly: G0, tp: t0, values: []string{"c", "b"}}}},
		{name: "G0 allowed: two transactions' writes interleave in opposite orders", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a1", 0), mSend(t1, "a2", 1))
			b.txn(2, "T2", ok, mSend(t0, "b1", 1), mSend(t1, "b2", 0))
			b.rcRead(3, t0, at(0, "a1"), at(1, "b1"))
			b.rcRead(3, t1, at(0, "b2"), at(1, "a2"))
		}, allo: []want{{anomaly: G0, tp: t0, values: []string{"b1", "a2"}}}},
		{name: "G1c: two read_committed transactions each read the other's write", build: func(b *builder) {
			b.txn(1, "T1", ok, mPoll(true, rd(t1, at(0, "y"))), mSend(t0, "x", 0))
			b.txn(2, "T2", ok, mPoll(true, rd(t0, at(0, "x"))), mSend(t1, "y", 0))
		}, violations: []want{{anomaly: G1c, tp: t0, values: []string{"x", "y"}}}},
		{name: "G1c-not-read-uncommitted: the same cycle through read_uncommitted polls is allowed", build: func(b *builder) {
			b.txn(1, "T1", ok, mPoll(false, rd(t1, at(0, "y"))), mSend(t0, "x", 0))
			b.txn(2, "T2", ok, mPoll(false, rd(t0, at(0, "x"))), mSend(t1, "y", 0))
		}, allo: []want{{anomaly: G1c, tp: t0, values: []string{"x", "y"}}}},
		{name: "G1c-not-with-ww: a cycle a ww edge closes is allowed", build: func(b *builder) {
			b.txn(1, "T1", ok, mSend(t0, "a", 0), mPoll(true, rd(t1, at(0, "y"))))
			b.txn(2, "T2", ok, mSend(t0, "b", 1), mSend(t1, "y", 0))
			b.rcRead(3, t0, at(0, "a"), at(1, "b"))
		}, allo: []want{{anomaly: G1c, tp: t1, values: []string{"y", "b"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			rep, err := CheckLog(b.history(), LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			expectExactly(t, rep.Violations, tt.violations)
			expectExactly(t, rep.Allowed, tt.allo)
		})
	}
}

// A cycle names its ops and dependencies, in order, so a view can jump to them.
func TestG1cCycleNamesItsDependencies(t *testing.T) {
	b := newBuilder()
	b.txn(1, "T1", history.Ok, mPoll(true, rd(t1, at(0, "y"))), mSend(t0, "x", 0)) // ops 0, 1
	b.txn(2, "T2", history.Ok, mPoll(true, rd(t0, at(0, "x"))), mSend(t1, "y", 0)) // ops 2, 3
	rep, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 1 {
		t.Fatalf("want one G1c, got %s", rep)
	}
	v := rep.Violations[0]
	want := []Dependency{
		{Kind: WR, From: 1, To: 3, TopicPartition: t0, Value: "x", ReadCommitted: true},
		{Kind: WR, From: 3, To: 1, TopicPartition: t1, Value: "y", ReadCommitted: true},
	}
	if !slices.Equal(v.Cycle, want) {
		t.Fatalf("cycle %+v, want %+v", v.Cycle, want)
	}
	if got := []int{v.Ops[0].Index, v.Ops[1].Index}; !slices.Equal(got, []int{1, 3}) || v.Ops[0].F != history.Txn {
		t.Fatalf("ops %+v", v.Ops)
	}
	wantText := `cyclic information flow over 2 ops: txn T1 (op 1) sent "x" to t-0, which txn T2 (op 3) polled at read_committed (wr); txn T2 (op 3) sent "y" to t-1, which txn T1 (op 1) polled at read_committed (wr)`
	if v.Text != wantText {
		t.Fatalf("text %q", v.Text)
	}
}

// A pipeline reads in and writes each value to out once: exactly-once holds
// even when an aborted attempt wrote a copy that only a read_uncommitted poll saw.
func TestExactlyOncePipeline(t *testing.T) {
	pipeline := []Pipeline{{Input: "in", Output: "out"}}
	base := func(b *builder) {
		b.ok(1, in0, "a", 0)
		b.ok(1, in0, "b", 1)
		b.send(1, in0, "c", history.Info, 0) // unknown and never read: not promised
	}
	tests := []struct {
		name  string
		build func(b *builder)
		want  []want
	}{
		{name: "holds", build: func(b *builder) {
			base(b)
			b.txn(2, "P", history.Fail, mPoll(true, rd(in0, at(0, "a"))), mSend(out0, "a", 0))
			b.txn(2, "P", history.Ok, mPoll(true, rd(in0, at(0, "a"), at(1, "b"))), mSend(out0, "a", 2), mSend(out1, "b", 0))
			b.read(3, out0, at(0, "a"), at(2, "a")) // read_uncommitted sees the aborted copy
			b.rcRead(4, out0, at(2, "a"))
			b.rcRead(4, out1, at(0, "b"))
		}},
		{name: "a duplicate breaks it", build: func(b *builder) {
			base(b)
			b.txn(2, "P", history.Ok, mPoll(true, rd(in0, at(0, "a"))), mSend(out0, "a", 0))
			b.txn(5, "P", history.Ok, mPoll(true, rd(in0, at(0, "a"), at(1, "b"))), mSend(out0, "a", 2), mSend(out1, "b", 0)) // a restarted instance
			b.rcRead(4, out0, at(0, "a"), at(2, "a"))
			b.rcRead(4, out1, at(0, "b"))
		}, want: []want{{anomaly: DuplicateOutput, tp: out0, values: []string{"a"}, offsets: []int64{0, 2}}}},
		{name: "a missing output breaks it", build: func(b *builder) {
			base(b)
			b.txn(2, "P", history.Ok, mPoll(true, rd(in0, at(0, "a"), at(1, "b"))), mSend(out0, "a", 0))
			b.rcRead(4, out0, at(0, "a"))
		}, want: []want{{anomaly: MissingOutput, tp: in0, values: []string{"b"}, offsets: []int64{1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			rep, err := Check(b.history(), Options{Pipelines: pipeline})
			if err != nil {
				t.Fatal(err)
			}
			var delivery []Violation
			for _, v := range rep.Violations {
				if v.Checker == DeliveryChecker {
					delivery = append(delivery, v)
				}
			}
			expectExactly(t, delivery, tt.want)
			if tt.want == nil && len(rep.Violations) > 0 {
				// The aborted copy is neither a duplicate nor an aborted read to the log checker.
				t.Fatalf("exactly-once holds, yet: %s", rep)
			}
			// Without the promise, nothing is held against the pipeline.
			rep, _ = Check(b.history(), Options{})
			if slices.ContainsFunc(rep.Violations, func(v Violation) bool { return v.Checker == DeliveryChecker }) {
				t.Fatalf("no promise, yet: %s", rep)
			}
		})
	}
}

// Committed transactional sends count once in delivery, like sends alone.
func TestTxnSendsCountOnceInDelivery(t *testing.T) {
	b := newBuilder()
	b.txn(1, "T1", history.Ok, mSend(t0, "a", 0), mSend(t0, "b", 1))
	b.txn(1, "T1", history.Fail, mSend(t0, "c", 2))
	b.poll(2, "g", history.Ok, rd(t0, at(0, "a"), at(1, "b")))
	rep, err := CheckDelivery(b.history(), ExactlyOnce)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Delivery) != 1 || rep.Delivery[0].Values != 2 || rep.Delivery[0].Once != 2 || len(rep.Violations) != 0 {
		t.Fatalf("%s", rep)
	}
	if !strings.Contains(rep.String(), "read 0 times: 0, once: 2") {
		t.Fatalf("%s", rep)
	}
}
