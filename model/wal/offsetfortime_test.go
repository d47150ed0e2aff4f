package wal

import (
	"testing"

	"mqsim/sim"
)

// OffsetForTime answers the first batch at or after a time, across segments, and
// nothing past the newest batch; a log start inside a batch moves the answer to it.
func TestOffsetForTime(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	// Batches of two records at times 10, 20, ..., 300: offsets 0, 2, 4, ...
	for i := 0; i < 30; i++ {
		h.append(batchOf(0, sim.Time(10*(i+1)), 2*i, 2))
	}
	l := h.log()
	if len(l.Segments()) < 3 {
		t.Fatalf("want several segments, got %d", len(l.Segments()))
	}
	for _, c := range []struct {
		at     sim.Time
		offset int64
		ts     sim.Time
		found  bool
	}{
		{0, 0, 10, true},
		{10, 0, 10, true},
		{11, 2, 20, true},
		{155, 30, 160, true},
		{300, 58, 300, true},
		{301, 0, 0, false},
	} {
		off, ts, found, err := l.OffsetForTime(c.at)
		if err != nil || off != c.offset || ts != c.ts || found != c.found {
			t.Errorf("OffsetForTime(%d) = %d, %d, %t, %v; want %d, %d, %t", c.at, off, ts, found, err, c.offset, c.ts, c.found)
		}
	}
	if _, err := l.DeleteBefore(5); err != nil {
		t.Fatal(err)
	}
	if off, _, _, _ := l.OffsetForTime(0); off != 5 {
		t.Errorf("after DeleteBefore(5), OffsetForTime(0) = %d, want the log start 5", off)
	}
}
