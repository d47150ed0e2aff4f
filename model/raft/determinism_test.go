package raft

import (
	"testing"

	"mqsim/sim"
)

// The same seed gives the same run: the same trace hash and step hash, twice over, for a
// run with crashes, partitions, torn writes, snapshots and clients.
func TestSameSeedSameTrace(t *testing.T) {
	run := func(seed uint64) runStats {
		d := &seededDraws{r: sim.NewRand(seed, "property")}
		st := runSafety(d, Bugs{})
		if d.failed != "" {
			t.Fatalf("seed %d: %s", seed, d.failed)
		}
		return st
	}
	events := 0
	for seed := uint64(1); seed <= 5; seed++ {
		a, b := run(seed), run(seed)
		if a.traceHash != b.traceHash || a.stepHash != b.stepHash || a.events != b.events {
			t.Fatalf("seed %d: trace %x/%x, steps %x/%x, events %d/%d", seed, a.traceHash, b.traceHash, a.stepHash, b.stepHash, a.events, b.events)
		}
		events += a.events
		if c := run(seed + 100); c.traceHash == a.traceHash {
			t.Fatalf("seeds %d and %d gave the same trace", seed, seed+100)
		}
	}
	if events < 5_000 {
		t.Fatalf("only %d events in 5 runs: too small to mean anything", events)
	}
}
