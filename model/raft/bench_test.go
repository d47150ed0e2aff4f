package raft

import (
	"fmt"
	"testing"

	"mqsim/sim"
)

// loadHost is a Raft host that, while it leads, keeps window entries proposed and not
// yet committed: the benchmark's load generator.
type loadHost struct {
	r       *Raft
	window  int64
	applied int64
	data    []byte
}

func (h *loadHost) Apply(env *sim.Env, e Entry)      { h.applied = e.Index }
func (h *loadHost) Restore(env *sim.Env, s Snapshot) { h.applied = s.Index }
func (h *loadHost) Start(env *sim.Env)               { h.r.Start(env) }
func (h *loadHost) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	h.r.Step(env, from, msg)
	h.load(env)
}
func (h *loadHost) Timer(env *sim.Env, tag sim.TimerTag) {
	h.r.HandleTimer(env, tag)
	h.load(env)
}

func (h *loadHost) load(env *sim.Env) {
	if h.r.Applied()-h.r.SnapshotIndex() >= 1024 && !h.r.SnapshotPending() {
		if err := h.r.Snapshot(env, h.r.Applied(), h.data); err != nil {
			panic(err)
		}
	}
	for h.r.IsLeader() && h.r.LastIndex()-h.r.Commit() < h.window {
		if _, _, ok := h.r.Propose(env, h.data); !ok {
			return
		}
	}
}

// BenchmarkCommit measures committed entries per wall-clock second in a 3-node cluster
// on the default LAN links and 2ms fsyncs, with the trace off, 100-byte entries and a
// snapshot every 1024 entries. window is how many entries the leader keeps uncommitted:
// 1 is a client waiting for each commit, 1024 a saturated pipeline. b.N is the number of
// entries committed.
func BenchmarkCommit(b *testing.B) {
	for _, window := range []int64{1, 64, 1024} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			w := sim.NewWorld(sim.DefaultConfig(1))
			w.Trace().Mode = sim.TraceOff
			names := []string{"s1", "s2", "s3"}
			var hosts []*loadHost
			cfg := DefaultConfig(names...)
			cfg.MaxEntriesPerMsg = 256
			for _, name := range names {
				w.MustAddNode(name, func() sim.Node {
					h := &loadHost{window: window, data: make([]byte, 100)}
					r, err := New(cfg, h)
					if err != nil {
						panic(err)
					}
					h.r = r
					hosts = append(hosts, h)
					return h
				})
			}
			leader := func() *loadHost {
				for _, h := range hosts {
					if h.r.IsLeader() {
						return h
					}
				}
				return nil
			}
			w.RunUntil(func(*sim.World) bool { l := leader(); return l != nil && l.r.Commit() > 0 }, 1<<20)
			l := leader()
			start, startAt, startSteps := l.r.Commit(), w.Now(), w.Steps()
			b.ResetTimer()
			w.RunUntil(func(*sim.World) bool { return l.r.Commit()-start >= int64(b.N) || !l.r.IsLeader() }, 1<<40)
			b.StopTimer()
			n := l.r.Commit() - start
			if n < int64(b.N) {
				b.Fatalf("leader lost its leadership after %d entries", n)
			}
			virt := w.Now().Sub(startAt)
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
			if virt > 0 {
				b.ReportMetric(float64(n)/virt.Seconds(), "entries/virtual-s")
			}
			b.ReportMetric(float64(w.Steps()-startSteps)/float64(n), "events/entry")
		})
	}
}
