package proto

import (
	"testing"

	"mqsim/model/wal"
	"mqsim/sim"
)

func TestWireSizesFollowTheV2BatchFormat(t *testing.T) {
	b := wal.Batch{Records: []wal.Record{
		{Key: []byte("k"), Value: []byte("vv")},
		{Value: []byte("vvv"), Headers: []wal.Header{{Key: "h", Value: []byte("x")}}},
	}}
	// 61 + (7+1+2) + (7+3 + 2+1+1)
	if got := BatchWireSize(&b); got != 85 {
		t.Errorf("batch of 2 records: %d bytes, want 85", got)
	}
	p := ProduceRequest{Batch: b}
	if p.WireSize() != sim.HeaderSize+85 || p.RecordCount() != 2 {
		t.Errorf("produce: %d bytes, %d records", p.WireSize(), p.RecordCount())
	}
	f := FetchResponse{Batches: []wal.Batch{b, b}}
	if f.WireSize() != sim.HeaderSize+170 || f.RecordCount() != 4 {
		t.Errorf("fetch: %d bytes, %d records", f.WireSize(), f.RecordCount())
	}
	if got := sim.WireSize(FetchResponse{}); got != sim.HeaderSize {
		t.Errorf("an empty fetch response: %d bytes, want the header's %d", got, sim.HeaderSize)
	}
}
