package sim

import (
	"fmt"
	"testing"
	"time"
)

// blob is a message of a given size on the wire carrying a number of records.
type blob struct{ size, records int }

func (b blob) WireSize() int    { return b.size }
func (b blob) RecordCount() int { return b.records }

// readReq asks a costNode to read a whole file of its disk.
type readReq struct{ file string }

// costNode records when each message reached it, and reads its disk when asked.
type costNode struct{ at []Time }

func (n *costNode) Start(env *Env) {}
func (n *costNode) Recv(env *Env, from NodeID, msg Message) {
	n.at = append(n.at, env.Now())
	if r, ok := msg.(readReq); ok {
		env.Disk().ReadAll(r.file)
	}
}
func (n *costNode) Timer(env *Env, tag TimerTag) {}

// costWorld has nodes a and b over a 1ms link without jitter, with the given costs.
func costWorld(t *testing.T, c Costs) (*World, NodeID, NodeID) {
	t.Helper()
	cfg := DefaultConfig(1)
	cfg.Link = LinkConfig{Latency: time.Millisecond, InOrder: true}
	cfg.Disk = DiskConfig{FsyncLatency: time.Millisecond}
	cfg.Costs = c
	w := NewWorld(cfg)
	a := w.MustAddNode("a", func() Node { return &costNode{} })
	b := w.MustAddNode("b", func() Node { return &costNode{} })
	w.RunFor(0)
	return w, a, b
}

func arrivals(w *World, id NodeID) []Time { return w.Node(id).(*costNode).at }

func ms(n float64) Time { return Time(n * float64(time.Millisecond)) }

func TestBandwidthAddsTransmitTimeAndSerialises(t *testing.T) {
	w, a, b := costWorld(t, Costs{Bandwidth: 1_000_000}) // 1 MB/s
	w.Env(a).Send(b, blob{size: 1000})                   // 1ms on the wire, then 1ms latency
	w.Env(a).Send(b, blob{size: 1000})                   // waits for the first: starts at 1ms
	w.Env(a).Send(b, "unsized")                          // HeaderSize: 64us after the second
	w.RunFor(10 * time.Millisecond)
	want := []Time{ms(2), ms(3), ms(3.064)}
	if got := arrivals(w, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("arrivals %v, want %v", got, want)
	}
	// The other direction has its own queue.
	w.Env(b).Send(a, blob{size: 1000})
	w.RunFor(10 * time.Millisecond)
	if got := arrivals(w, a); len(got) != 1 || got[0] != ms(12) {
		t.Errorf("reverse link arrivals %v, want [12ms]", got)
	}
}

func TestNoCostsNoTransmitTime(t *testing.T) {
	w, a, b := costWorld(t, Costs{})
	w.Env(a).Send(b, blob{size: 1_000_000})
	w.Env(a).Send(b, blob{size: 1_000_000})
	w.RunFor(10 * time.Millisecond)
	if got := arrivals(w, b); fmt.Sprint(got) != fmt.Sprint([]Time{ms(1), ms(1)}) {
		t.Errorf("arrivals %v, want both at 1ms", got)
	}
}

func TestCPUBusyDelaysTheNextMessage(t *testing.T) {
	w, a, b := costWorld(t, Costs{CPUPerRequest: time.Millisecond, CPUPerRecord: 2 * time.Millisecond})
	w.Env(a).Send(b, blob{records: 3}) // arrives at 1ms, busy 1ms + 3*2ms = 7ms
	w.Env(a).Send(b, "second")         // arrives at 1ms, waits until 8ms
	w.RunFor(20 * time.Millisecond)
	want := []Time{ms(1), ms(8)}
	if got := arrivals(w, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("arrivals %v, want %v", got, want)
	}
	if got := w.Busy(b); got != ms(9) {
		t.Errorf("b busy until %s, want 9ms (1ms for the second message)", got)
	}
	if s := w.LinkStats(a, b); s.Delivered != 2 {
		t.Errorf("delivered %d, want 2 (a wait is not a second delivery)", s.Delivered)
	}
}

// echo answers every message; what it sends while busy leaves when it is free.
type echo struct{}

func (echo) Start(env *Env)                          {}
func (echo) Recv(env *Env, from NodeID, msg Message) { env.Send(from, "pong") }
func (echo) Timer(env *Env, tag TimerTag)            {}

func TestBusySenderSendsWhenFree(t *testing.T) {
	w, a, _ := costWorld(t, Costs{CPUPerRequest: 5 * time.Millisecond})
	e := w.MustAddNode("e", func() Node { return echo{} })
	w.RunFor(0)
	w.Env(a).Send(e, "ping") // at e at 1ms, busy until 6ms, the pong reaches a at 7ms
	w.RunFor(20 * time.Millisecond)
	if got := arrivals(w, a); len(got) != 1 || got[0] != ms(7) {
		t.Errorf("pong arrivals %v, want [7ms]", got)
	}
}

func TestUncachedReadCostsSizeOverThroughput(t *testing.T) {
	// A cache of one page: writing b evicts a.
	w, _, b := costWorld(t, Costs{DiskRead: 1_000_000, PageCache: PageSize})
	d := w.Disk(b)
	d.Append("a", make([]byte, 1000))
	d.Append("b", make([]byte, 1000))
	if got := d.CachedBytes(); got != PageSize {
		t.Fatalf("cache holds %dB, want one page", got)
	}
	if d.ReadAll("a"); w.ch.missed != 0 {
		t.Fatalf("a read outside a handler was charged %dB", w.ch.missed)
	}
	w.Inject(b, readReq{"a"}, 0) // a is not cached: 1000B at 1MB/s is 1ms
	w.RunFor(0)
	if got := w.Busy(b); got != ms(1) {
		t.Errorf("after an uncached read b is busy until %s, want 1ms", got)
	}
	w.RunFor(5 * time.Millisecond)
	w.Inject(b, readReq{"a"}, 0) // now it is
	w.RunFor(0)
	if got := w.Busy(b); got != ms(1) {
		t.Errorf("a cached read made b busy until %s, want it free (busy until 1ms)", got)
	}
}

func TestCrashEmptiesThePageCacheKillKeepsIt(t *testing.T) {
	w, _, b := costWorld(t, Costs{DiskRead: 1_000_000, PageCache: 1 << 20})
	d := w.Disk(b)
	d.Append("log", make([]byte, 500))
	w.Env(b).Fsync("log")
	w.RunFor(5 * time.Millisecond)
	w.Kill(b)
	w.Restart(b)
	w.RunFor(0)
	w.Inject(b, readReq{"log"}, 0)
	w.RunFor(0)
	if got := w.Busy(b); got != 0 {
		t.Errorf("after a kill the read cost until %s, want nothing: the page cache outlives the process", got)
	}
	w.Crash(b)
	if got := d.CachedBytes(); got != 0 {
		t.Errorf("after a crash the cache holds %dB, want 0", got)
	}
	w.Restart(b)
	w.RunFor(0)
	w.Inject(b, readReq{"log"}, 0) // 500B at 1MB/s from the disk
	w.RunFor(0)
	if got, want := w.Busy(b), w.Now().Add(500*time.Microsecond); got != want {
		t.Errorf("after a crash b is busy until %s, want %s", got, want)
	}
}

func TestFsyncCostsTheUnsyncedBytesBehindQueuedWrites(t *testing.T) {
	w, _, b := costWorld(t, Costs{DiskWrite: 1_000_000}) // fsync latency 1ms
	env, d := w.Env(b), w.Disk(b)
	d.Append("x", make([]byte, 2000))
	env.Fsync("x") // 2ms of writing, then 1ms: done at 3ms
	env.Fsync("x") // nothing new to write: done 1ms after the queue, at 3ms
	d.Append("y", make([]byte, 1000))
	env.Fsync("y") // written behind x, at 3ms: done at 4ms
	w.RunFor(10 * time.Millisecond)
	want := []Time{ms(3), ms(3), ms(4)}
	if got := arrivals(w, b); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fsyncs done at %v, want %v", got, want)
	}
	if d.SyncedSize("x") != 2000 || d.SyncedSize("y") != 1000 {
		t.Errorf("synced %d and %d", d.SyncedSize("x"), d.SyncedSize("y"))
	}
}

func TestParseSizesAndRates(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		rate bool
	}{
		{"4096", 4096, false}, {"64KiB", 65536, false}, {"10MB", 10_000_000, false},
		{"1Gbit/s", 125_000_000, true}, {"500MB/s", 500_000_000, true}, {"2GB", 2_000_000_000, true},
	} {
		parse := ParseSize
		if tc.rate {
			parse = ParseRate
		}
		if got, err := parse(tc.in); err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "fast", "-5", "10XB", "1Gbit/h"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
	if got := RealisticCosts().String(); got != "bandwidth=125MB/s disk-write=500MB/s disk-read=2GB/s page-cache=1GiB cpu-request=50µs cpu-record=1µs" {
		t.Errorf("RealisticCosts prints %q", got)
	}
}

// heavy is a message whose handling costs extra CPU (a compressed batch to decompress).
type heavy struct{ extra time.Duration }

func (h heavy) ExtraCPU() time.Duration { return h.extra }

func TestLabouredMessageAndWorkCostCPUOnlyWithCPUCosts(t *testing.T) {
	w, a, b := costWorld(t, Costs{CPUPerRequest: time.Millisecond})
	w.Env(a).Send(b, heavy{extra: 4 * time.Millisecond}) // at b at 1ms, busy 1ms + 4ms
	w.RunFor(20 * time.Millisecond)
	if got := w.Busy(b); got != ms(6) {
		t.Errorf("b busy until %s, want 6ms (1ms per request and 4ms extra)", got)
	}
	w.Env(a).Work(3 * time.Millisecond) // a compresses for 3ms: what it sends leaves after
	w.Env(a).Send(b, "after work")
	w.RunFor(20 * time.Millisecond)
	if got := arrivals(w, b); len(got) != 2 || got[1] != w.Busy(a).Add(time.Millisecond) || w.Busy(a) != ms(23) {
		t.Errorf("arrivals %v, a busy until %s: want the message 1ms after a's 3ms of work from 20ms", got, w.Busy(a))
	}

	w, a, b = costWorld(t, Costs{Bandwidth: 1_000_000}) // costs on, CPU off: no extra
	w.Env(a).Work(3 * time.Millisecond)
	w.Env(a).Send(b, heavy{extra: 4 * time.Millisecond})
	w.RunFor(20 * time.Millisecond)
	if w.Busy(a) != 0 || w.Busy(b) != 0 {
		t.Errorf("busy a %s b %s with CPU costs off, want 0", w.Busy(a), w.Busy(b))
	}
}

// A link's own bandwidth applies with costs off, and overrides the world's with costs on;
// the other links keep the world's.
func TestLinkBandwidthOverridesTheWorlds(t *testing.T) {
	w, a, b := costWorld(t, Costs{})
	slow := w.Link(a, b)
	slow.Bandwidth = 500_000 // 1000B take 2ms
	w.SetLink(a, b, slow)
	w.Env(a).Send(b, blob{size: 1000})
	w.Env(a).Send(b, blob{size: 1000})
	w.Env(b).Send(a, blob{size: 1000}) // no bandwidth on b -> a: latency only
	w.RunFor(10 * time.Millisecond)
	if got, want := arrivals(w, b), []Time{ms(3), ms(5)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("costs off: arrivals at b %v, want %v", got, want)
	}
	if got := arrivals(w, a); fmt.Sprint(got) != fmt.Sprint([]Time{ms(1)}) {
		t.Errorf("costs off: arrivals at a %v, want [1ms]", got)
	}

	w, a, b = costWorld(t, Costs{Bandwidth: 1_000_000}) // 1000B take 1ms
	w.SetLink(a, b, slow)
	w.Env(a).Send(b, blob{size: 1000})
	w.Env(b).Send(a, blob{size: 1000})
	w.RunFor(10 * time.Millisecond)
	if got := arrivals(w, b); fmt.Sprint(got) != fmt.Sprint([]Time{ms(3)}) {
		t.Errorf("costs on: arrivals at b %v, want [3ms] (the link's 2ms, then 1ms latency)", got)
	}
	if got := arrivals(w, a); fmt.Sprint(got) != fmt.Sprint([]Time{ms(2)}) {
		t.Errorf("costs on: arrivals at a %v, want [2ms] (the world's 1ms, then 1ms latency)", got)
	}
	if got := slow.String(); got != "latency=1ms jitter=0s in-order=true drop=0ppm dup=0ppm capacity=0 bandwidth=500KB/s" {
		t.Errorf("String() = %q", got)
	}
}

func TestStoredSizeIsWhatFsyncsAndTheCacheCount(t *testing.T) {
	w, _, b := costWorld(t, Costs{DiskWrite: 1_000_000, DiskRead: 1_000_000, PageCache: 1 << 20}) // fsync latency 1ms
	env, d := w.Env(b), w.Disk(b)
	d.Append("log", make([]byte, 1000))             // stored as 1000B
	d.AppendStored("log", make([]byte, 3000), 1000) // 3000B stored as 1000B
	d.Append("log", make([]byte, 500))
	if got := d.StoredSize("log"); got != 2500 {
		t.Errorf("stored size %dB, want 1000+1000+500", got)
	}
	if got := d.Size("log"); got != 4500 {
		t.Errorf("size %dB, want the bytes as written, 4500", got)
	}
	if got := d.CachedBytes(); got != PageSize {
		t.Errorf("the cache holds %dB, want the 2500 stored bytes in one page", got)
	}
	env.Fsync("log") // 2500B at 1MB/s is 2.5ms, then 1ms
	w.RunFor(10 * time.Millisecond)
	if got, want := arrivals(w, b), []Time{ms(3.5)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fsync done at %v, want %v", got, want)
	}
	// Half of the stored append is cut: half of its stored size remains.
	d.Truncate("log", 2500)
	if got := d.StoredSize("log"); got != 1500 {
		t.Errorf("after a cut to 2500B the stored size is %dB, want 1000+500", got)
	}
	d.Append("log", make([]byte, 100))
	if got := d.StoredSize("log"); got != 1600 {
		t.Errorf("after an append of 100B the stored size is %dB, want 1600", got)
	}
	// A read from the disk costs the stored bytes: a crash empties the cache.
	w.Crash(b)
	w.Restart(b)
	w.RunFor(0)
	w.Inject(b, readReq{"log"}, 0)
	w.RunFor(0)
	if got, want := w.Busy(b), w.Now().Add(1500*time.Microsecond); got != want {
		t.Errorf("reading the whole file from the disk makes b busy until %s, want %s (1500 stored bytes at 1MB/s)", got, want)
	}
}
