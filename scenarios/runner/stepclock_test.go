package runner

import (
	"testing"

	"mqsim/sim"
)

// The step clock names a time by the first step at or after it, across its chunks: every
// third step starts a new time (times 10, 20, ...), so step 3k+1 is the first at time
// 10(k+1).
func TestStepClockAcrossChunks(t *testing.T) {
	var c stepClock
	if c.stepAt(0) != 0 {
		t.Errorf("an empty clock names step %d", c.stepAt(0))
	}
	const steps = 3 * (firstClockChunk + 2*clockChunk + 7)
	for s := uint64(1); s <= steps; s++ {
		c.mark(sim.Time(10*((s-1)/3+1)), s)
	}
	if len(c.chunks) != 4 {
		t.Errorf("%d chunks, want 4", len(c.chunks))
	}
	for _, tc := range []struct {
		t    sim.Time
		want uint64
	}{
		{0, 1}, {10, 1}, {11, 4}, {20, 4},
		{10 * firstClockChunk, 3*firstClockChunk - 2}, {10*firstClockChunk + 1, 3*firstClockChunk + 1},
		{10 * (firstClockChunk + clockChunk + 1), 3*(firstClockChunk+clockChunk) + 1},
		{steps / 3 * 10, steps - 2}, {steps/3*10 + 1, 0},
	} {
		if got := c.stepAt(tc.t); got != tc.want {
			t.Errorf("stepAt(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
}
