package client

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
)

// txnOps renders the history's completed txn ops, one line each: type, micro-ops, offsets.
func txnOps(hist history.History) []string {
	var out []string
	for _, op := range hist {
		if op.F != history.Txn || op.Type == history.Invoke {
			continue
		}
		var parts []string
		for _, m := range op.Txn.Ops {
			switch m.F {
			case history.Send:
				parts = append(parts, fmt.Sprintf("send %s %s@%d", m.Send.TopicPartition, m.Send.Value, m.Send.Offset))
			case history.Poll:
				var rs []string
				for _, pr := range m.Poll.Reads {
					for _, r := range pr.Records {
						rs = append(rs, fmt.Sprintf("%s@%d:%s", pr.TopicPartition, r.Offset, r.Value))
					}
				}
				parts = append(parts, "poll "+strings.Join(rs, ","))
			}
		}
		if op.Txn.Offsets != nil {
			for _, o := range op.Txn.Offsets.Offsets {
				parts = append(parts, fmt.Sprintf("offset %s %s@%d", op.Txn.Offsets.Group, o.TopicPartition, o.Offset))
			}
		}
		out = append(out, fmt.Sprintf("%s %s [%s]", op.Type, op.Txn.ID, strings.Join(parts, "; ")))
	}
	return out
}

func sendOpCount(hist history.History) int {
	n := 0
	for _, op := range hist {
		if op.F == history.Send {
			n++
		}
	}
	return n
}

func wantLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func txSend(p int32, v string) Send { return Send{Topic: "t", Partition: p, Value: v} }

func TestTransactionalInitAtTheCoordinator(t *testing.T) {
	h := newTxnHarness(t, true, 2)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	st, ok := h.producer(id).Transaction()
	if !ok || st.State != TxnReady || st.PID != 4001 || st.Epoch != 0 {
		t.Fatalf("status %+v (transactional %t), want ready with 4001/0", st, ok)
	}
	if h.txnLog() != "InitProducerId tx1 timeout=1m0s -> 4001/0" {
		t.Errorf("coordinator log:\n%s", h.txnLog())
	}
	if h.fc.nextPID != 0 {
		t.Errorf("the controller granted %d producer ids; a transactional producer asks its coordinator", h.fc.nextPID)
	}
}

func TestTransactionCommitModernBumpsEpochFromEndTxn(t *testing.T) {
	h := newTxnHarness(t, true, 2)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	h.inject(id, BeginTxn{}, txSend(0, "v1"), txSend(1, "v2"), CommitTxn{})
	h.run(time.Second)
	h.inject(id, BeginTxn{}, txSend(0, "v3"), CommitTxn{})
	h.run(time.Second)
	hist := h.validate()
	wantLines(t, "txn ops", txnOps(hist),
		"ok tx1 [send t-0 v1@0; send t-1 v2@0]",
		"ok tx1 [send t-0 v3@1]")
	if n := sendOpCount(hist); n != 0 {
		t.Errorf("%d send ops; sends inside a transaction are its micro-ops only", n)
	}
	wantLines(t, "produce requests", h.producedTxn(),
		"t/0 4001/0 seq=0 id=tx1 flags=1",
		"t/1 4001/0 seq=0 id=tx1 flags=1",
		"t/0 4001/1 seq=0 id=tx1 flags=1") // the epoch EndTxn returned, sequences from 0
	if h.txnLog() != "InitProducerId tx1 timeout=1m0s -> 4001/0\nEndTxn COMMIT epoch=0 NONE\nEndTxn COMMIT epoch=1 NONE" {
		t.Errorf("coordinator log (no AddPartitionsToTxn in the modern mode):\n%s", h.txnLog())
	}
}

func TestTransactionCommitLegacyAddsPartitionsAndKeepsEpoch(t *testing.T) {
	h := newTxnHarness(t, false, 2)
	id := h.addTxnProducer("p", "tx1", true)
	h.run(time.Second)
	h.inject(id, BeginTxn{}, txSend(0, "v1"), txSend(1, "v2"), CommitTxn{})
	h.run(time.Second)
	h.inject(id, BeginTxn{}, txSend(0, "v3"), CommitTxn{})
	h.run(time.Second)
	hist := h.validate()
	wantLines(t, "txn ops", txnOps(hist),
		"ok tx1 [send t-0 v1@0; send t-1 v2@0]",
		"ok tx1 [send t-0 v3@1]")
	wantLines(t, "produce requests", h.producedTxn(),
		"t/0 4001/0 seq=0 id=tx1 flags=1",
		"t/1 4001/0 seq=0 id=tx1 flags=1",
		"t/0 4001/0 seq=1 id=tx1 flags=1") // same epoch: the sequence goes on
	want := strings.Join([]string{
		"InitProducerId tx1 timeout=1m0s -> 4001/0",
		"AddPartitionsToTxn [t/0] epoch=0 NONE",
		"AddPartitionsToTxn [t/1] epoch=0 NONE",
		"EndTxn COMMIT epoch=0 NONE",
		"AddPartitionsToTxn [t/0] epoch=0 NONE",
		"EndTxn COMMIT epoch=0 NONE",
	}, "\n")
	if h.txnLog() != want {
		t.Errorf("coordinator log:\n%s\nwant\n%s", h.txnLog(), want)
	}
}

func TestTransactionAbortDropsUnsentBatches(t *testing.T) {
	h := newTxnHarness(t, false, 1)
	id := h.addTxnProducer("p", "tx1", true)
	h.run(time.Second)
	// Legacy mode: the batch waits for AddPartitionsToTxn, so the abort finds it unsent.
	h.inject(id, BeginTxn{}, txSend(0, "v1"), AbortTxn{})
	h.run(time.Second)
	hist := h.validate()
	wantLines(t, "txn ops", txnOps(hist), "fail tx1 [send t-0 v1@-1]")
	if len(h.fc.produced) != 0 {
		t.Errorf("produced %v; the aborted transaction's batch was never to be sent", h.producedTxn())
	}
	if !strings.HasSuffix(h.txnLog(), "EndTxn ABORT epoch=0 NONE") {
		t.Errorf("coordinator log:\n%s", h.txnLog())
	}
	if st, _ := h.producer(id).Transaction(); st.State != TxnReady || st.Aborted != 1 {
		t.Errorf("status %+v, want ready with one abort", st)
	}
}

func TestTransactionAbortAfterSends(t *testing.T) {
	h := newTxnHarness(t, true, 1)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	h.inject(id, BeginTxn{}, txSend(0, "v1"))
	h.run(time.Second)
	h.inject(id, AbortTxn{})
	h.run(time.Second)
	wantLines(t, "txn ops", txnOps(h.validate()), "fail tx1 [send t-0 v1@0]")
	if !strings.HasSuffix(h.txnLog(), "EndTxn ABORT epoch=0 NONE") {
		t.Errorf("coordinator log:\n%s", h.txnLog())
	}
}

func TestTransactionalProducerFencedByNewInstance(t *testing.T) {
	h := newTxnHarness(t, true, 1)
	old := h.addTxnProducer("p1", "tx1", false)
	h.run(time.Second)
	h.inject(old, BeginTxn{}, txSend(0, "v1"))
	h.run(time.Second)
	h.addTxnProducer("p2", "tx1", false) // a new instance: epoch 1 fences epoch 0
	h.run(time.Second)
	h.inject(old, CommitTxn{})
	h.run(time.Second)
	h.inject(old, BeginTxn{})
	h.run(time.Second)
	wantLines(t, "txn ops", txnOps(h.rec.History()), "info tx1 [send t-0 v1@0]") // fenced mid-commit: unknown
	st, _ := h.producer(old).Transaction()
	if st.State != TxnFenced {
		t.Errorf("old instance %+v, want fenced", st)
	}
	if refused := h.events("error"); len(refused) != 1 || !strings.Contains(refused[0], "begin transaction refused while fenced") {
		t.Errorf("refusals %q, want the begin after the fence refused", refused)
	}
}

// A produce refused with PRODUCER_FENCED fences the producer; one refused with
// INVALID_PRODUCER_EPOCH only makes the transaction abortable, as Kafka's client does
// since KIP-588: the fence comes when the coordinator refuses the abort.
func TestTransactionFencedOnProduce(t *testing.T) {
	for _, tc := range []struct {
		err   proto.Error
		state TxnState
	}{{proto.ProducerFenced, TxnFenced}, {proto.InvalidProducerEpoch, TxnAbortable}} {
		h := newTxnHarness(t, true, 1)
		id := h.addTxnProducer("p", "tx1", false)
		h.run(time.Second)
		h.inject(id, BeginTxn{}, txSend(0, "v1"))
		h.fc.produceFaults = []fakeFault{{err: tc.err}}
		h.run(time.Second)
		st, _ := h.producer(id).Transaction()
		if st.State != tc.state || !strings.Contains(st.Why, tc.err.String()) {
			t.Errorf("%s: status %+v, want %s because of it", tc.err, st, tc.state)
		}
		if tc.state == TxnFenced {
			wantLines(t, "txn ops", txnOps(h.rec.History()), "fail tx1 [send t-0 v1@-1]") // never committed
		}
	}
}

func TestTransactionConcurrentTransactionsRetried(t *testing.T) {
	h := newTxnHarness(t, true, 1)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	h.fc.txn.faults["EndTxn"] = []proto.Error{proto.ConcurrentTransactions, proto.ConcurrentTransactions}
	h.inject(id, BeginTxn{}, txSend(0, "v1"), CommitTxn{})
	h.run(time.Second)
	wantLines(t, "txn ops", txnOps(h.validate()), "ok tx1 [send t-0 v1@0]")
	want := strings.Join([]string{
		"InitProducerId tx1 timeout=1m0s -> 4001/0",
		"EndTxn COMMIT epoch=0 CONCURRENT_TRANSACTIONS",
		"EndTxn COMMIT epoch=0 CONCURRENT_TRANSACTIONS",
		"EndTxn COMMIT epoch=0 NONE",
	}, "\n")
	if h.txnLog() != want {
		t.Errorf("coordinator log:\n%s\nwant\n%s", h.txnLog(), want)
	}
	if n := len(h.events("txn-retry")); n != 2 {
		t.Errorf("%d retries, want 2", n)
	}
}

func TestTransactionCommitWithoutAnswerIsUnknown(t *testing.T) {
	h := newTxnHarness(t, true, 1)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	h.fc.txn.silent["EndTxn"] = 1000
	h.inject(id, BeginTxn{}, txSend(0, "v1"), CommitTxn{})
	h.run(10 * time.Second) // delivery.timeout.ms is 5s: every wait is bounded
	wantLines(t, "txn ops", txnOps(h.validate()), "info tx1 [send t-0 v1@0]")
	if st, _ := h.producer(id).Transaction(); st.State != TxnUninitialized {
		t.Errorf("status %+v, want uninitialized (the next begin initialises again)", st)
	}
	// The next begin re-initialises with its producer id (KIP-360), then runs.
	h.fc.txn.silent["EndTxn"] = 0
	h.inject(id, BeginTxn{}, txSend(0, "v2"), CommitTxn{})
	h.run(time.Second)
	got := txnOps(h.validate())
	if len(got) != 2 || got[1] != "ok tx1 [send t-0 v2@1]" {
		t.Errorf("txn ops %q", got)
	}
}

func TestSendOffsetsToTransaction(t *testing.T) {
	h := newTxnHarness(t, true, 1)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	h.inject(id, BeginTxn{}, txSend(0, "v1"),
		SendOffsets{Group: "g", Offsets: []proto.PartitionOffset{{TP: proto.TP{Topic: "in", Partition: 0}, Offset: 7}}, Generation: 3, MemberID: "m-1"},
		CommitTxn{})
	h.run(time.Second)
	wantLines(t, "txn ops", txnOps(h.validate()), "ok tx1 [send t-0 v1@0; offset g in-0@7]")
	want := strings.Join([]string{
		"InitProducerId tx1 timeout=1m0s -> 4001/0",
		"AddOffsetsToTxn g NONE",
		"TxnOffsetCommit g gen=3 member=m-1 in/0@7 NONE",
		"EndTxn COMMIT epoch=0 NONE",
	}, "\n")
	if h.txnLog() != want {
		t.Errorf("coordinator log:\n%s\nwant\n%s", h.txnLog(), want)
	}
	wantLines(t, "committed offsets", h.fc.txn.committed, "g in/0@7")
}

func TestTxnOffsetCommitStaleGenerationMustAbort(t *testing.T) {
	h := newTxnHarness(t, true, 1)
	id := h.addTxnProducer("p", "tx1", false)
	h.run(time.Second)
	h.fc.txn.faults["TxnOffsetCommit"] = []proto.Error{proto.IllegalGeneration}
	h.inject(id, BeginTxn{}, txSend(0, "v1"),
		SendOffsets{Group: "g", Offsets: []proto.PartitionOffset{{TP: proto.TP{Topic: "in", Partition: 0}, Offset: 7}}, Generation: 3, MemberID: "m-1"},
		CommitTxn{})
	h.run(time.Second)
	if st, _ := h.producer(id).Transaction(); st.State != TxnAbortable {
		t.Fatalf("status %+v, want must abort", st)
	}
	h.inject(id, AbortTxn{})
	h.run(time.Second)
	wantLines(t, "txn ops", txnOps(h.validate()), "fail tx1 [send t-0 v1@0]")
	if len(h.fc.txn.committed) != 0 {
		t.Errorf("committed %q after an abort", h.fc.txn.committed)
	}
}
