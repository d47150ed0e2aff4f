package history

import (
	"bytes"
	"testing"
)

// The package documentation's transaction example must stay exactly what the
// encoder writes: a read_committed poll inside a pipeline's transaction, its
// output send, and the input offsets it commits with the transaction.
func TestDocTxnExample(t *testing.T) {
	doc := `{"index":0,"time":1000,"process":3,"type":"invoke","f":"txn","value":{"txn":"pipe-1"}}
{"index":1,"time":4000,"process":3,"type":"ok","f":"txn","invoke":0,"value":{"txn":"pipe-1","ops":[{"f":"poll","group":"g","read_committed":true,"reads":[{"topic":"in","partition":0,"records":[[0,"v1"]]}]},{"f":"send","topic":"out","partition":0,"value":"v1","offset":0}],"commit":{"group":"g","offsets":[{"topic":"in","partition":0,"offset":1}]}}}
`
	in0, out0 := TopicPartition{"in", 0}, TopicPartition{"out", 0}
	r := NewRecorder()
	h := r.InvokeTxn(1000, 3, "pipe-1")
	r.Ok(4000, h, Result{
		TxnOps: []MicroOp{
			{F: Poll, Poll: &PollValue{Group: "g", ReadCommitted: true, Reads: []PartitionRecords{{TopicPartition: in0, Records: []Record{{Offset: 0, Value: "v1"}}}}}},
			{F: Send, Send: &SendValue{TopicPartition: out0, Value: "v1", Offset: 0}},
		},
		TxnOffsets: &CommitValue{Group: "g", Offsets: []PartitionOffset{{TopicPartition: in0, Offset: 1}}},
	})
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, r.History()); err != nil {
		t.Fatal(err)
	}
	if buf.String() != doc {
		t.Fatalf("encoder output differs from the documented example:\n%s", buf.String())
	}
	got, err := ReadJSONLines(bytes.NewReader(buf.Bytes()))
	if err != nil || len(got) != 2 || got[1].Txn.Ops[0].Poll.ReadCommitted != true || got[1].Txn.Offsets.Offsets[0].Offset != 1 {
		t.Fatalf("read back %+v, %v", got, err)
	}
}
