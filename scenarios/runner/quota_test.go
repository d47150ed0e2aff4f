package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// producedBytes sums the wire size of the produce requests node received between from
// and to, from the trace's message events (world trace-messages=true): what the broker
// took in, measured apart from the quota's own sampled rate.
func producedBytes(r *Runner, node string, from, to time.Duration) int {
	n := 0
	for _, e := range r.World().Trace().Events() {
		if e.Node != node || e.Time < sim.Time(from) || e.Time >= sim.Time(to) {
			continue
		}
		if rec, ok := e.Data.(sim.Received); ok {
			if m, ok := rec.Msg.(proto.ProduceRequest); ok {
				n += m.WireSize()
			}
		}
	}
	return n
}

// A producer with more to send than its quota allows settles at the quota: after the
// burst the sample window lets through (about ten windows' worth), the bytes the leader
// takes per second stay within 15% of the quota. The tolerance covers how throttling
// works: each throttle time brings the windowed rate back to the quota assuming nothing
// more arrives, then the producer sends its five requests in flight at once, so the rate
// overshoots by up to five batches per throttle period and the average sits a little
// above the quota. Without a quota the same records take well under a second.
func TestProduceQuotaSettlesNearTheQuota(t *testing.T) {
	const quota = 2000 // bytes per second
	run := func(quotaCmd string) *Runner {
		cmds := []string{"world trace-messages=true", "cluster brokers=3 partitions=1 rf=3 min-isr=2 batch-size=256"}
		if quotaCmd != "" {
			cmds = append(cmds, quotaCmd)
		}
		r, _ := execAll(t, append(cmds, "produce count=20000 wait=false", "run for=100s")...)
		return r
	}
	r := run(fmt.Sprintf("quota client=p1 produce=%dB/s", quota))
	start := r.World().Now() - sim.Time(100*time.Second)
	from, to := time.Duration(start)+30*time.Second, time.Duration(start)+90*time.Second
	got := producedBytes(r, "b1", from, to)
	rate := float64(got) / (to - from).Seconds()
	t.Logf("quota %d bytes/s: the leader took %d bytes in 60s, %.0f bytes/s", quota, got, rate)
	if rate < 0.85*quota || rate > 1.15*quota {
		t.Errorf("with a produce quota of %d bytes/s the leader took %.0f bytes/s from 30s to 90s: want within 15%%", quota, rate)
	}
	free := run("")
	all := producedBytes(free, "b1", 0, time.Duration(free.World().Now()))
	first := producedBytes(free, "b1", 0, time.Duration(start)+time.Second)
	t.Logf("no quota: %d of %d bytes in the first second", first, all)
	if first != all {
		t.Errorf("without a quota the leader took %d of %d bytes in the first second: want all", first, all)
	}
}

// firstBufferFailure has an application send 250 records a second for 12 seconds (about
// 2.9KB/s on the wire) over a network that carries 1KB/s, with the given buffer.memory,
// and returns when the first send failed for want of memory (0: none did). max.block.ms
// is short (100ms, shorter than a batch takes to complete), so a send fails soon after
// the pool is first full.
func firstBufferFailure(t *testing.T, buffer string) time.Duration {
	t.Helper()
	cmds := []string{"cluster brokers=3 partitions=1 rf=3 min-isr=2 batch-size=256 max-block=100ms buffer-memory=" + buffer,
		"costs bandwidth=1KB/s"}
	for range 60 {
		cmds = append(cmds, "produce count=50 wait=false", "run for=200ms")
	}
	r, _ := execAll(t, append(cmds, "run for=60s")...)
	for _, op := range r.Cluster().History.History() {
		if op.F == history.Send && op.Type == history.Fail && strings.HasPrefix(op.Error, "Failed to allocate") {
			return time.Duration(op.Time)
		}
	}
	return 0
}

// The pool fills at the difference between what the application makes and what the
// network takes, so a bigger buffer.memory fills later and the first send that fails
// after max.block.ms fails later; a pool that holds the whole stream never fails one.
func TestBiggerBufferDelaysTheFirstFailure(t *testing.T) {
	var firsts []time.Duration
	for _, b := range []string{"1KiB", "4KiB", "8KiB"} {
		firsts = append(firsts, firstBufferFailure(t, b))
	}
	never := firstBufferFailure(t, "256KiB")
	t.Logf("first send failed to allocate memory at %v with 1KiB, 4KiB, 8KiB; at %s with 256KiB (0: none)", firsts, never)
	for i, f := range firsts {
		if f == 0 || i > 0 && f <= firsts[i-1] {
			t.Errorf("first failures at %v for 1KiB, 4KiB, 8KiB: want one for each, each later than the one before", firsts)
			break
		}
	}
	if never != 0 {
		t.Errorf("with 256KiB a send failed at %s: the pool holds the whole stream", never)
	}
}

// The application is blocked in a send: the sends it makes after it are invoked only once
// the blocked one returned, and the blocked one fails in the history.
func TestSendsQueueBehindABlockedSend(t *testing.T) {
	r, _ := execAll(t, "cluster brokers=3 partitions=1 rf=3 min-isr=2 batch-size=256 max-block=1s buffer-memory=1KiB",
		"costs bandwidth=1KB/s", "produce count=400 wait=false", "run for=30s")
	invoked := map[string]sim.Time{}
	var failed []history.Op
	for _, op := range r.Cluster().History.History() {
		if op.F != history.Send {
			continue
		}
		switch op.Type {
		case history.Invoke:
			invoked[op.Send.Value] = sim.Time(op.Time)
		case history.Fail:
			failed = append(failed, op)
		}
	}
	if len(failed) == 0 {
		t.Fatal("no send failed for want of memory")
	}
	for _, f := range failed {
		if d := time.Duration(sim.Time(f.Time) - invoked[f.Send.Value]); d != time.Second {
			t.Errorf("%s failed %s after it was invoked: want max.block.ms=1s", f.Send.Value, d)
		}
	}
	v := failed[0].Send.Value
	var n int
	fmt.Sscanf(v, "v%d", &n)
	next := fmt.Sprintf("v%d", n+1)
	if invoked[next] < sim.Time(failed[0].Time) {
		t.Errorf("%s was invoked at %s, before %s returned at %s: the application was blocked in that send",
			next, time.Duration(invoked[next]), v, time.Duration(failed[0].Time))
	}
}
