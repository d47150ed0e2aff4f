package client

import (
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

func pipelineHarness(t *testing.T, transactional bool) (*harness, sim.NodeID) {
	h := newTxnHarness(t, true, 1)
	h.addTopic("in", 1)
	h.addTopic("out", 1)
	var recs []wal.Record
	for _, v := range []string{"i0", "i1", "i2"} {
		recs = append(recs, wal.Record{Value: []byte(v)})
	}
	h.fc.part(proto.TP{Topic: "in"}).append(wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch,
		BaseSequence: wal.NoSequence, Records: recs})
	cc := consumerConfig()
	cc.AutoOffsetReset = "earliest"
	pc := producerConfig()
	pc.TransactionalID = "app-1"
	names, rec := h.names, h.rec
	cfg := PipelineConfig{Group: "g", From: "in", To: "out", Transactional: transactional, PollEvery: 50 * time.Millisecond}
	id := h.w.MustAddNode("app", func() sim.Node { return NewPipeline(cfg, cc, pc, 1, names, []string{"ctl"}, rec) })
	return h, id
}

func TestPipelineTransactionCarriesPollSendsAndOffsets(t *testing.T) {
	h, id := pipelineHarness(t, true)
	h.run(5 * time.Second)
	hist := h.validate()
	got := txnOps(hist)
	if len(got) != 1 || got[0] != "ok app-1 [poll in-0@0:i0,in-0@1:i1,in-0@2:i2; send out-0 i0@0; send out-0 i1@1; send out-0 i2@2; offset g in-0@3]" {
		t.Fatalf("txn ops %q", got)
	}
	for _, op := range hist {
		if op.F == history.Poll || op.F == history.Send || op.F == history.Commit {
			t.Errorf("op %d is a %s outside the transaction", op.Index, op.F)
		}
	}
	if off := h.fc.txn.offsets[proto.TP{Topic: "in"}]; off != 3 {
		t.Errorf("group offset %d, want 3 committed with the transaction", off)
	}
	if st := h.w.Node(id).(*Pipeline).Stats(); st.Committed != 1 || st.Processed != 3 {
		t.Errorf("stats %+v", st)
	}
	// The transaction's end counts its sends, not its poll.
	if ends := h.events("txn-end"); len(ends) != 1 || !strings.Contains(ends[0], "committed, 3 sends") {
		t.Errorf("txn-end events %q, want one of 3 sends committed", ends)
	}
	if got := h.fc.txn.log; len(got) < 2 || got[len(got)-3] != "AddOffsetsToTxn g NONE" || got[len(got)-2] != "TxnOffsetCommit g gen=1 member=m-1 in/0@3 NONE" {
		t.Errorf("coordinator log %q: want the member's generation and id in TxnOffsetCommit", got)
	}
}

func TestPipelineAbortRewindsToCommittedOffsets(t *testing.T) {
	h, _ := pipelineHarness(t, true)
	h.fc.txn.faults["TxnOffsetCommit"] = []proto.Error{proto.IllegalGeneration} // a stale generation: must abort
	h.run(5 * time.Second)
	got := txnOps(h.validate())
	want := []string{
		// The refusal came while the output still lingered: the abort dropped it unsent.
		"fail app-1 [poll in-0@0:i0,in-0@1:i1,in-0@2:i2; send out-0 i0@-1; send out-0 i1@-1; send out-0 i2@-1]",
		// Back to the committed offsets (none: earliest), the same input again.
		"ok app-1 [poll in-0@0:i0,in-0@1:i1,in-0@2:i2; send out-0 i0@0; send out-0 i1@1; send out-0 i2@2; offset g in-0@3]",
	}
	wantLines(t, "txn ops", got, want...)
}

func TestPipelineWithoutTransactionsProducesThenCommits(t *testing.T) {
	h, _ := pipelineHarness(t, false)
	h.run(5 * time.Second)
	hist := h.validate()
	if n := len(txnOps(hist)); n != 0 {
		t.Errorf("%d txn ops without transactions", n)
	}
	var fs []string
	for _, op := range hist {
		if op.Type != history.Invoke && op.F != history.Subscribe && op.F != history.Assign {
			fs = append(fs, string(op.Type)+" "+string(op.F))
		}
	}
	wantLines(t, "ops", fs[:5], "ok poll", "ok send", "ok send", "ok send", "ok commit")
	if off := h.fc.txn.offsets[proto.TP{Topic: "in"}]; off != 3 {
		t.Errorf("group offset %d, want 3", off)
	}
}
