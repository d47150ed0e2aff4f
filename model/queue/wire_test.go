package queue

import (
	"testing"

	"mqsim/sim"
)

func TestWireSizesCountKeyValueAndHeaders(t *testing.T) {
	m := Message{Key: "rk", Value: "hello", Headers: []Header{{Key: "a", Value: "bc"}}}
	want := sim.HeaderSize + RecordOverhead + 2 + 5 + 3
	if got := sim.WireSize(Delivery{Msg: m}); got != want {
		t.Errorf("delivery: %d bytes, want %d", got, want)
	}
	r := ReceiveResp{Msgs: []Message{m, m}}
	if got := r.WireSize(); got != sim.HeaderSize+2*(want-sim.HeaderSize) || r.RecordCount() != 2 {
		t.Errorf("receive: %d bytes, %d messages", got, r.RecordCount())
	}
}
