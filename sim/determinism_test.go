package sim

import (
	"runtime"
	"testing"
	"time"
)

// chatter is a node whose behaviour depends on every source of randomness the kernel
// offers: it pings random peers at random intervals and writes to its disk.
type chatter struct{ peers int }

// got is chatter's one trace event: a message arrived.
type got struct{ from string }

func (got) Kind() string     { return "got" }
func (g got) Detail() string { return "from " + g.from }

func (c *chatter) Start(env *Env) { env.SetTimer(time.Millisecond, TimerTag{}) }
func (c *chatter) Recv(env *Env, from NodeID, msg Message) {
	if _, ok := msg.(FsyncDone); ok {
		return
	}
	env.Disk().Append("log", []byte{byte(from)})
	var buf [8]byte
	env.Disk().ReadAt("log", 0, buf[:]) // charged only with costs: a tiny page cache misses
	if env.Rand().Chance(Percent(30)) {
		env.Fsync("log")
	}
	Record(env, got{from: env.NameOf(from)})
}
func (c *chatter) Timer(env *Env, tag TimerTag) {
	to := NodeID(env.Rand().IntN(c.peers))
	env.Send(to, blob{size: 100 + env.Rand().IntN(1000), records: env.Rand().IntN(5)})
	env.SetTimer(time.Millisecond+env.Rand().Jitter(3*time.Millisecond), TimerTag{})
}

func runChatter(seed uint64) (trace, steps uint64, events int) { return runChatterCosts(seed, Costs{}) }

// runChatter's workload with costs small enough to matter at its scale: a 100 KB/s link,
// slow disks, one page of cache, 100us of CPU per message and 50us per record.
var chatterCosts = Costs{Bandwidth: 100_000, DiskWrite: 1_000_000, DiskRead: 1_000_000, PageCache: PageSize,
	CPUPerRequest: 100 * time.Microsecond, CPUPerRecord: 50 * time.Microsecond}

func runChatterCosts(seed uint64, costs Costs) (trace, steps uint64, events int) {
	cfg := DefaultConfig(seed)
	cfg.Costs = costs
	cfg.Link = LinkConfig{Latency: time.Millisecond, Jitter: 5 * time.Millisecond, Drop: Percent(5), Dup: Percent(5), Capacity: 100}
	cfg.Disk.Torn = Percent(50)
	cfg.TraceMessages = true
	w := NewWorld(cfg)
	const n = 5
	for i := 0; i < n; i++ {
		w.MustAddNode(string(rune('a'+i)), func() Node { return &chatter{peers: n} })
	}
	plan, err := ParsePlan("50ms partition a b | c d e\n80ms crash c\n100ms heal\n120ms restart c\n130ms pause d\n160ms resume d\n170ms clog a -> b\n190ms unclog a -> b\n")
	if err != nil {
		panic(err)
	}
	if err := w.SchedulePlan(plan); err != nil {
		panic(err)
	}
	w.RunFor(300 * time.Millisecond)
	return w.Trace().Hash(), w.StepHash(), w.Trace().Len()
}

func TestSameSeedSameTrace(t *testing.T) {
	h0, s0, n0 := runChatter(42)
	if n0 < 1000 {
		t.Fatalf("workload too small to mean anything: %d events", n0)
	}
	for i := 0; i < 2; i++ {
		if h, s, n := runChatter(42); h != h0 || s != s0 || n != n0 {
			t.Fatalf("run %d differs: trace %x/%x steps %x/%x events %d/%d", i+2, h, h0, s, s0, n, n0)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if h, s, _ := runChatter(42); h != h0 || s != s0 {
		t.Fatalf("GOMAXPROCS=1 run differs")
	}
}

func TestSameSeedSameTraceWithCosts(t *testing.T) {
	h0, s0, n0 := runChatterCosts(42, chatterCosts)
	if hOff, _, _ := runChatter(42); hOff == h0 {
		t.Fatalf("the costs changed nothing in the run")
	}
	for i := 0; i < 2; i++ {
		if h, s, n := runChatterCosts(42, chatterCosts); h != h0 || s != s0 || n != n0 {
			t.Fatalf("run %d with costs differs: trace %x/%x steps %x/%x events %d/%d", i+2, h, h0, s, s0, n, n0)
		}
	}
}

func TestDifferentSeedsDifferentTraces(t *testing.T) {
	seen := map[uint64]uint64{}
	for seed := uint64(1); seed <= 5; seed++ {
		h, _, _ := runChatter(seed)
		if other, dup := seen[h]; dup {
			t.Errorf("seeds %d and %d gave the same trace hash %x", other, seed, h)
		}
		seen[h] = seed
	}
}
