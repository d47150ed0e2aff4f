package broker

import "testing"

// The sampled rate is Kafka's: the samples' sum over the time since the oldest began,
// counted as at least ten one-second windows; a sample without events for eleven windows
// is dropped.
func TestByteRateMeasuresAsKafkasRate(t *testing.T) {
	var r byteRate
	r.record(0, 10_000)
	if sum, window := r.measure(0); sum != 10_000 || window != 10_000 {
		t.Errorf("at 0: sum %d over %dms; want 10000 over 10000ms (ten windows at least)", sum, window)
	}
	r.record(1_500, 5_000) // a second sample: the first is complete
	if sum, window := r.measure(12_000); sum != 5_000 || window != 10_500 {
		// At 12s the first sample (last event at 0) is 12s old: dropped, restarted at 12s;
		// the oldest is then the second, begun at 1.5s: 10.5s, ten full windows.
		t.Errorf("at 12s: sum %d over %dms; want 5000 over 10500ms", sum, window)
	}
	if sum, _ := r.measure(12_500); sum != 0 {
		t.Errorf("at 12.5s: sum %d; want 0 (the second sample's last event is 11s old)", sum)
	}
	if len(r.samples) != 2 {
		t.Errorf("%d samples; want 2", len(r.samples))
	}
}

// The throttle time brings the rate back to the quota if nothing more comes:
// X = (rate - quota) / quota x window. 10000 bytes at once against a quota of 500 bytes/s
// is a rate of 1000 over a 10s window: X = 10s. Within the quota, nothing.
func TestThrottleTimeIsKafkas(t *testing.T) {
	for _, tc := range []struct {
		bytes, limit int64
		wantMs       int64
	}{
		{10_000, 500, 10_000},
		{10_000, 1_000, 0},
		{10_000, 800, 2_500}, // (1000-800)/800 x 10s
		{10_001, 1_000, 1},   // 0.1 bytes/s over for 10s: 1ms
		{10_000, 999, 10},    // 1.001 over: 10.01ms, rounded
	} {
		var r byteRate
		r.record(0, tc.bytes)
		sum, window := r.measure(0)
		if got := throttleMs(sum, window, tc.limit); got != tc.wantMs {
			t.Errorf("%d bytes against %d bytes/s: throttle %dms; want %dms", tc.bytes, tc.limit, got, tc.wantMs)
		}
	}
}
