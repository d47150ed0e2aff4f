package sim

import (
	"testing"
	"time"
)

// The kernel's cost is measured against the smallest event loop that does the same work:
// a heap of (time, seq) events and nothing else. Both run in the same benchmark, so the
// ratio holds on any machine however noisy.

var pingMsg = &sizedPing{size: 1000} // a pointer, so sending it allocates nothing

// sizedPing says its size, so that a link with a bandwidth asks it (costs.go).
type sizedPing struct{ size int }

func (p *sizedPing) WireSize() int { return p.size }

// ticker re-arms a timer every millisecond and sends a message to the next node; receiving
// does nothing. It is the kernel's steady state with no model cost.
type ticker struct {
	next NodeID
}

func (t *ticker) Start(env *Env)                          { env.SetTimer(time.Millisecond, TimerTag{}) }
func (t *ticker) Recv(env *Env, from NodeID, msg Message) {}
func (t *ticker) Timer(env *Env, tag TimerTag) {
	env.Send(t.next, pingMsg)
	env.SetTimer(time.Millisecond, TimerTag{})
}

const benchNodes = 16

func newTickerWorld() *World { return newTickerWorldCosts(Costs{}) }

func newTickerWorldCosts(c Costs) *World {
	cfg := DefaultConfig(1)
	cfg.Link = LinkConfig{Latency: 300 * time.Microsecond, Jitter: 200 * time.Microsecond}
	cfg.Costs = c
	w := NewWorld(cfg)
	w.Trace().Mode = TraceOff
	for i := 0; i < benchNodes; i++ {
		next := NodeID((i + 1) % benchNodes)
		w.MustAddNode(string(rune('A'+i)), func() Node { return &ticker{next: next} })
	}
	return w
}

// minimalLoop is the same workload with nothing but a heap of (time, seq) events. It uses
// the kernel's own heap, so the ratio isolates what the rest of the kernel costs (node
// table, incarnations, link accounting, step hash), not a difference in heaps.
type minimalLoop struct {
	q    eventQueue
	seq  uint64
	rand *Rand
}

func (m *minimalLoop) push(e event) {
	m.seq++
	e.seq = m.seq
	m.q.push(e)
}

func (m *minimalLoop) step() {
	e := m.q.pop()
	if e.kind == evDeliver {
		return
	}
	delay := 300*time.Microsecond + m.rand.Jitter(200*time.Microsecond)
	m.push(event{at: e.at.Add(delay), kind: evDeliver, node: (e.node + 1) % benchNodes})
	m.push(event{at: e.at.Add(time.Millisecond), kind: evTimer, node: e.node})
}

func newMinimalLoop() *minimalLoop {
	m := &minimalLoop{rand: NewRand(1, "network")}
	for i := 0; i < benchNodes; i++ {
		m.push(event{at: Time(time.Millisecond), kind: evTimer, node: NodeID(i)})
	}
	return m
}

func runMinimal(m *minimalLoop, events int) {
	for i := 0; i < events; i++ {
		m.step()
	}
}

func runKernel(w *World, events int) {
	for i := 0; i < events; i++ {
		w.Step()
	}
}

// BenchmarkKernelVsMinimalLoop reports the kernel's events per second, the minimal loop's,
// and their ratio (goal: kernel/minimal >= 0.5), with allocations per kernel event.
func BenchmarkKernelVsMinimalLoop(b *testing.B) {
	const events = 200_000
	w := newTickerWorld()
	runKernel(w, 10_000) // warm up: grow the queue to its steady size
	m := newMinimalLoop()
	runMinimal(m, 10_000)
	var kernelNS, minimalNS int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		runKernel(w, events)
		kernelNS += time.Since(start).Nanoseconds()
		b.StopTimer()
		start = time.Now()
		runMinimal(m, events)
		minimalNS += time.Since(start).Nanoseconds()
		b.StartTimer()
	}
	total := float64(b.N) * events
	b.ReportMetric(total/(float64(kernelNS)/1e9), "kernel-events/s")
	b.ReportMetric(total/(float64(minimalNS)/1e9), "minimal-events/s")
	b.ReportMetric(float64(minimalNS)/float64(kernelNS), "kernel/minimal")
	b.ReportMetric(0, "ns/op") // the per-op time mixes both loops; the rates above are the result
}

// BenchmarkKernelBandwidthVsNone reports the kernel's events per second with bandwidth
// accounting on (1 Gbit/s links: each 1000-byte ping asks its size and queues on its
// link) and off, in the same run, and their ratio (goal: bandwidth/none >= 0.9, at most
// 10% slower).
func BenchmarkKernelBandwidthVsNone(b *testing.B) {
	const events = 200_000
	off := newTickerWorld()
	on := newTickerWorldCosts(Costs{Bandwidth: 125_000_000})
	runKernel(off, 10_000)
	runKernel(on, 10_000)
	var offNS, onNS int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		runKernel(on, events)
		onNS += time.Since(start).Nanoseconds()
		b.StopTimer()
		start = time.Now()
		runKernel(off, events)
		offNS += time.Since(start).Nanoseconds()
		b.StartTimer()
	}
	total := float64(b.N) * events
	b.ReportMetric(total/(float64(onNS)/1e9), "bandwidth-events/s")
	b.ReportMetric(total/(float64(offNS)/1e9), "none-events/s")
	b.ReportMetric(float64(offNS)/float64(onNS), "bandwidth/none")
	b.ReportMetric(0, "ns/op") // the per-op time mixes both runs; the rates above are the result
}

// TestKernelSteadyStateAllocatesNothing pins the zero-allocation goal as a test: counting
// allocations is deterministic, unlike timing.
func TestKernelSteadyStateAllocatesNothing(t *testing.T) {
	w := newTickerWorld()
	runKernel(w, 10_000)
	allocs := testing.AllocsPerRun(5, func() { runKernel(w, 10_000) })
	if allocs > 0 {
		t.Errorf("%.0f allocations per 10,000 kernel events in steady state, want 0", allocs)
	}
	w = newTickerWorldCosts(RealisticCosts())
	runKernel(w, 10_000)
	if allocs := testing.AllocsPerRun(5, func() { runKernel(w, 10_000) }); allocs > 0 {
		t.Errorf("%.0f allocations per 10,000 kernel events with costs, want 0", allocs)
	}
}
