package queue

import (
	"reflect"
	"testing"
)

// TestHeadsArePrefixes: ReadyHead and UnsettledHead are the prefixes of Ready and
// Unsettled, bounded by n and by the queue, and copies: changing the queue later does not
// change them.
func TestHeadsArePrefixes(t *testing.T) {
	h := newHarness(t, DefaultQueueConfig("q"))
	a, _ := h.subscribe("a", 2, false)
	h.enqueue("v1", "v2", "v3", "v4", "v5")
	if h.s.ReadyLen() != 3 || h.s.UnsettledLen() != 2 {
		t.Fatalf("ready %d unsettled %d, want 3 and 2", h.s.ReadyLen(), h.s.UnsettledLen())
	}
	for _, n := range []int{-1, 0, 1, 2, 3, 10} {
		wantR := h.s.Ready()[:max(0, min(n, 3))]
		if got := h.s.ReadyHead(n); !reflect.DeepEqual(got, wantR) {
			t.Errorf("ReadyHead(%d) = %v, want %v", n, got, wantR)
		}
		wantU := h.s.Unsettled()[:max(0, min(n, 2))]
		if got := h.s.UnsettledHead(n); !reflect.DeepEqual(got, wantU) {
			t.Errorf("UnsettledHead(%d) = %v, want %v", n, got, wantU)
		}
	}
	ready, out := h.s.ReadyHead(3), h.s.UnsettledHead(2)
	if out[0].Consumer != "a" || out[0].Channel != a || out[0].Tag != 1 || out[1].Msg.Value != "v2" {
		t.Fatalf("unsettled %+v", out)
	}
	h.apply(Command{Op: OpAck, Channel: a, Tag: 1})
	if ready[0].Value != "v3" || out[0].Msg.Value != "v1" || h.s.UnsettledHead(2)[1].Msg.Value != "v3" {
		t.Fatalf("the heads taken before the ack changed, or the queue did not move on: %v %v", ready, out)
	}
}
