package history

import "testing"

// A transaction whose producer crashed never completes; Final still shows its sends, as
// an info completion, without changing the recorder (a live transaction may complete later).
func TestFinalCompletesOpenTransactionsAsInfo(t *testing.T) {
	r := NewRecorder()
	tp := TopicPartition{Topic: "t", Partition: 0}
	crashed := r.InvokeTxn(10, 1, "T1")
	send := SendValue{TopicPartition: tp, Value: "a", Offset: NoOffset}
	ops := []MicroOp{{F: Send, Send: &send}}
	r.TxnProgress(crashed, Result{TxnOps: ops})
	send.Offset = 4 // the producer learns the offset later: the recorder kept its own copy
	r.TxnProgress(crashed, Result{TxnOps: ops})
	send.Value = "changed after the last progress"
	plain := r.InvokeSend(20, 2, tp, "", "b")

	h := r.Final(15) // before the last op: the completion takes the last op's time
	if len(h) != 3 || len(r.History()) != 2 {
		t.Fatalf("final has %d ops, recorder %d; want 3 and 2", len(h), len(r.History()))
	}
	done := h[2]
	if done.Type != Info || done.Invoke != int(crashed) || done.Index != 2 || done.Time != 20 {
		t.Fatalf("completion %+v; want info of op %d at index 2, time 20", done, crashed)
	}
	if got := done.Txn.Ops; len(got) != 1 || got[0].Send.Value != "a" || got[0].Send.Offset != 4 {
		t.Fatalf("completion's ops %+v; want the send of a at offset 4", got)
	}
	if h[1].Type != Invoke || !r.Open(plain) {
		t.Fatal("the open send must stay open in the final history")
	}

	r.Ok(30, crashed, Result{TxnOps: ops})
	if got := r.Final(40); len(got) != 3 || got[2].Type != Ok {
		t.Fatalf("after the transaction completed, final has %d ops; want 3, the last ok", len(got))
	}
}
