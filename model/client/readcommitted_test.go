package client

import (
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
)

// fillTxn appends a transactional batch of producer pid, or (control) its marker.
func (h *harness) fillTxn(p int32, pid int64, control bool, values ...string) {
	flags := wal.FlagTransactional
	if control {
		flags |= wal.FlagControl
		values = []string{""}
	}
	var recs []wal.Record
	for _, v := range values {
		recs = append(recs, wal.Record{Value: []byte(v)})
	}
	h.fc.part(tp(p)).append(wal.Batch{ProducerID: pid, ProducerEpoch: 0, BaseSequence: 0, Flags: flags, Records: recs})
}

// The log: a0 a1 | pid 7 x0 x1 | pid 8 c0 | a2 | ABORT 7 | COMMIT 8 | a3, with 7's
// transaction aborted from offset 2.
func txnLog(h *harness) {
	h.fill(0, "a0", "a1")              // 0, 1
	h.fillTxn(0, 7, false, "x0", "x1") // 2, 3
	h.fillTxn(0, 8, false, "c0")       // 4
	h.fill(0, "a2")                    // 5
	h.fillTxn(0, 7, true)              // 6: ABORT
	h.fillTxn(0, 8, true)              // 7: COMMIT
	h.fillTxn(0, 7, false, "y0")       // 8: pid 7's next transaction, committed
	h.fillTxn(0, 7, true)              // 9: COMMIT
	h.fc.part(tp(0)).aborted = []proto.AbortedTxn{{ProducerID: 7, FirstOffset: 2}}
}

func TestReadCommittedDropsAbortedRangeAndControlBatches(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	txnLog(h)
	cfg := consumerConfig()
	cfg.Isolation = proto.ReadCommitted
	c := h.addConsumer("c1", cfg, 1)
	assign(h.w, c, true, 0)
	h.w.Inject(c, Poll{}, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(time.Second)
	hist := h.validate()
	ps := polls(hist)
	if len(ps) != 2 || reads(ps[0]) != "ok t-0@0:a0 t-0@1:a1 t-0@4:c0 t-0@5:a2 t-0@8:y0" || reads(ps[1]) != "ok " {
		t.Fatalf("polls %v", ps)
	}
	if !ps[0].Poll.ReadCommitted || hist[ps[0].Invoke].Poll == nil || !hist[ps[0].Invoke].Poll.ReadCommitted {
		t.Errorf("the poll is not recorded as read_committed: %+v", ps[0].Poll)
	}
	if pos, _ := h.consumer(c).Position(tp(0)); pos != 10 {
		t.Errorf("position %d, want 10: past the last control batch", pos)
	}
	if got := h.events("skip"); len(got) != 1 || got[0] != "c1 t/0: 2 aborted records, 3 control records left out" {
		t.Errorf("skip events %q", got)
	}
}

func TestReadUncommittedKeepsAbortedButNeverControl(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	txnLog(h)
	c := h.addConsumer("c1", consumerConfig(), 1)
	assign(h.w, c, true, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(time.Second)
	ps := polls(h.validate())
	if len(ps) != 1 || reads(ps[0]) != "ok t-0@0:a0 t-0@1:a1 t-0@2:x0 t-0@3:x1 t-0@4:c0 t-0@5:a2 t-0@8:y0" {
		t.Fatalf("polls %v", ps)
	}
	if ps[0].Poll.ReadCommitted {
		t.Errorf("a read_uncommitted poll recorded as read_committed")
	}
	if pos, _ := h.consumer(c).Position(tp(0)); pos != 10 {
		t.Errorf("position %d, want 10", pos)
	}
}

func TestReadCommittedStopsAtLSOAndListsLatestThere(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	h.fill(0, "a0")
	h.fillTxn(0, 7, false, "x0") // open transaction at 1
	h.fill(0, "a1")
	p := h.fc.part(tp(0))
	p.lso, p.hasLSO = 1, true
	cfg := consumerConfig()
	cfg.Isolation = proto.ReadCommitted
	cfg.AutoOffsetReset = "latest"
	late := h.addConsumer("late", cfg, 2)
	assign(h.w, late, false, 0)
	h.w.Inject(late, Poll{}, 0)
	c := h.addConsumer("c1", cfg, 1)
	assign(h.w, c, true, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(time.Second)
	if pos, _ := h.consumer(late).Position(tp(0)); pos != 1 {
		t.Errorf("latest for read_committed is %d, want the LSO 1", pos)
	}
	var got []string
	for _, op := range polls(h.validate()) {
		if op.Process == 1 {
			got = append(got, reads(op))
		}
	}
	wantLines(t, "c1 polls", got, "ok t-0@0:a0")
	_ = history.NoOffset
}

// A compacted log: the cleaner left k1's last value at offset 1, a tombstone at 3, and
// emptied the batch [4,6) whose records a later write superseded. The consumer reads each
// record at its own offset, names the tombstone by its header, and moves past the empty
// batch at the end.
func TestConsumerReadsCompactedBatches(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	plain := wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence, Flags: wal.FlagCompacted}
	first := plain
	first.Span, first.OffsetDeltas = 4, []int32{1, 3}
	first.Records = []wal.Record{{Key: []byte("k1"), Value: []byte("v2")},
		{Key: []byte("k2"), Headers: []wal.Header{{Key: proto.HeaderTombstone, Value: []byte("del-k2")}}}}
	emptied := plain
	emptied.Span, emptied.OffsetDeltas = 2, []int32{}
	h.fc.part(tp(0)).append(first)
	h.fc.part(tp(0)).append(emptied)
	c := h.addConsumer("c1", consumerConfig(), 1)
	assign(h.w, c, true, 0)
	h.w.Inject(c, Poll{}, 0)
	h.run(time.Second)
	ps := polls(h.validate())
	if len(ps) != 1 || reads(ps[0]) != "ok t-0@1:v2 t-0@3:del-k2" {
		t.Fatalf("polls %v", ps)
	}
	if pos, _ := h.consumer(c).Position(tp(0)); pos != 6 {
		t.Errorf("position %d, want 6: past the emptied batch", pos)
	}
}
