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

// consumedBy counts the records a consumer's ok polls returned up to t.
func consumedBy(r *Runner, process int, t sim.Time) int {
	n := 0
	for _, op := range r.Cluster().History.History() {
		if op.F == history.Poll && op.Type == history.Ok && op.Process == process && sim.Time(op.Time) <= t {
			for _, pr := range op.Poll.Reads {
				n += len(pr.Records)
			}
		}
	}
	return n
}

// A consumer reading a backlog under a fetch quota reads at most about the quota once its
// first ten windows' worth has passed; it reads less, since whole 20KB responses against
// an 11-second window make it wait for a response to leave the window (about half here,
// see broker-quota-throttle). Without the quota it reads the backlog in one poll.
func TestFetchQuotaBoundsTheConsumer(t *testing.T) {
	run := func(quota string) (*Runner, sim.Time) {
		cmds := []string{"cluster brokers=3 partitions=1 rf=3 min-isr=2 batch-size=256 max-poll-records=5000 auto-offset-reset=earliest",
			"produce count=15000"}
		if quota != "" {
			cmds = append(cmds, quota)
		}
		r, _ := execAll(t, append(cmds, "join consumer=c1 group=g poll-every=100ms", "run for=80s")...)
		return r, r.World().Now()
	}
	r, end := run("quota client=c1 fetch=2KB/s")
	c := r.Cluster().Consumer("c1")
	// About 11.6 bytes a record on the wire; the rate is measured from 20s to 80s, after
	// the first ten windows' worth.
	early, late := consumedBy(r, c.Process(), end-sim.Time(60*time.Second)), consumedBy(r, c.Process(), end)
	rate := float64(late-early) * 11.6 / 60
	t.Logf("fetch quota 2000 bytes/s: %d records by 20s, %d by 80s: about %.0f bytes/s", early, late, rate)
	if rate > 1.15*2000 || rate < 0.3*2000 {
		t.Errorf("with a fetch quota of 2000 bytes/s the consumer read about %.0f bytes/s: want at most 15%% over, and more than 30%% of it", rate)
	}
	if late == 15000 {
		t.Errorf("the consumer read the whole backlog under its quota")
	}
	free, freeEnd := run("")
	if n := consumedBy(free, free.Cluster().Consumer("c1").Process(), freeEnd-sim.Time(75*time.Second)); n != 15000 {
		t.Errorf("without a quota the consumer read %d of 15000 records in its first 5s: want all", n)
	}
}

func TestBackPressureSettingsRefuseBadValues(t *testing.T) {
	for _, tc := range []struct {
		setup     []string
		cmd, want string
	}{
		{[]string{"world seed=1"}, "cluster buffer-memory=lots", `buffer-memory=: "lots": want a number of bytes`},
		{[]string{"world seed=1"}, "cluster buffer-memory=1KiB batch-size=4096", "buffer.memory=1024: want at least batch.size=4096"},
		{[]string{"world seed=1"}, "cluster max-block=-1s", `max-block=: duration "-1s" is negative`},
		{[]string{"cluster brokers=1 rf=1 min-isr=1"}, "quota produce=1KB/s", "missing argument client="},
		{[]string{"cluster brokers=1 rf=1 min-isr=1"}, "quota client=p1 produce=fast", `produce=: "fast": want bytes per second`},
	} {
		err := execErr(t, tc.setup, tc.cmd)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.cmd, err, tc.want)
		}
	}
}
