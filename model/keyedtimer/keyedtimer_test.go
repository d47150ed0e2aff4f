package keyedtimer

import (
	"testing"
	"time"

	"mqsim/sim"
)

type host struct {
	next      int64
	cancelled []sim.TimerID
}

func (h *host) NewKey() int64 { h.next++; return h.next }
func (h *host) SetTimer(d time.Duration, key int64) sim.TimerID {
	return sim.TimerID(key * 10)
}
func (h *host) CancelTimer(id sim.TimerID) { h.cancelled = append(h.cancelled, id) }

// A timer is owned until it fires or is cancelled; firing hands back its reference once.
func TestTable(t *testing.T) {
	var tb Table[string]
	h := &host{}
	id1, k1 := tb.Set(h, time.Second, "session")
	_, k2 := tb.Set(h, time.Second, "rebalance")
	if k1 == k2 || !tb.Owns(k1) || !tb.Owns(k2) || tb.Owns(99) {
		t.Fatalf("keys %d %d: owns %t %t, a stranger %t", k1, k2, tb.Owns(k1), tb.Owns(k2), tb.Owns(99))
	}
	if ref, ok := tb.Fired(k2); !ok || ref != "rebalance" {
		t.Errorf("fired %d: %q %t, want rebalance", k2, ref, ok)
	}
	if _, ok := tb.Fired(k2); ok || tb.Owns(k2) {
		t.Errorf("a timer fired twice")
	}
	tb.Cancel(h, id1, k1)
	if tb.Owns(k1) || len(h.cancelled) != 1 || h.cancelled[0] != id1 {
		t.Errorf("after cancel: owns %t, cancelled %v", tb.Owns(k1), h.cancelled)
	}
	_, k3 := tb.Set(h, time.Second, "write")
	tb.Reset()
	if tb.Owns(k3) {
		t.Errorf("a timer survived Reset")
	}
}
