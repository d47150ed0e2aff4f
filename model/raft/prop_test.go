package raft

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/sim"
)

// draws is where a run's random choices come from: rapid, which shrinks failures, or a
// plain seeded stream, for the loops that hunt a planted bug.
type draws interface {
	intRange(label string, lo, hi int) int
	fatalf(format string, args ...any)
}

type rapidDraws struct{ t *rapid.T }

func (d rapidDraws) intRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(d.t, label)
}
func (d rapidDraws) fatalf(format string, args ...any) { d.t.Fatalf(format, args...) }

// seededDraws draws from a sim.Rand and records the first failure instead of stopping.
type seededDraws struct {
	r      *sim.Rand
	failed string
}

func (d *seededDraws) intRange(label string, lo, hi int) int { return lo + d.r.IntN(hi-lo+1) }
func (d *seededDraws) fatalf(format string, args ...any) {
	if d.failed == "" {
		d.failed = fmt.Sprintf(format, args...)
	}
}

// runStats says what a run did, to show the property is not vacuous.
type runStats struct {
	events, crashes, partitions, acked, leaders, snapshots, truncations int
	stepHash, traceHash                                                 uint64
}

// runSafety builds a 3- or 5-node KV cluster on a faulty network and disk, drives a
// random sequence of proposals, crashes, restarts, pauses, partitions (symmetric and
// one-way), torn writes and time, checking the safety invariants after every event; then
// heals everything and checks liveness: a leader is elected, and every put acknowledged
// as committed is applied, identically, by every node within a bound.
func runSafety(d draws, bugs Bugs) runStats {
	var st runStats
	n := []int{3, 5}[d.intRange("five nodes", 0, 1)]
	seed := uint64(d.intRange("seed", 1, 1<<30))
	drop := d.intRange("drop percent", 0, 10)
	dup := d.intRange("dup percent", 0, 10)
	inOrder := d.intRange("in order", 0, 1) == 1
	torn := d.intRange("torn percent", 0, 100)
	snapEvery := int64([]int{0, 4, 16}[d.intRange("snapshot every", 0, 2)])
	c := newCluster(nil, clusterOpts{
		seed: seed, n: n, clients: 2, snapshotEvery: snapEvery,
		cfg: func(cfg *Config) {
			cfg.Bugs = bugs
			cfg.WAL.SegmentBytes = 512 // roll often, so compaction deletes segments
		},
		world: func(wc *sim.Config) {
			wc.TraceMessages = dumpTo != ""
			wc.Link.Drop, wc.Link.Dup, wc.Link.InOrder = sim.Percent(drop), sim.Percent(dup), inOrder
			wc.Disk.Torn, wc.Disk.Corrupt = sim.Percent(torn), sim.Percent(torn/2)
		},
	})
	w := c.w
	w.Trace().Mode = sim.TraceHashOnly
	if dumpTo != "" {
		w.Trace().Mode = sim.TraceKeep
		defer dumpTrace(w)
	}
	inv := newInvariants(c)
	w.AddObserver(inv)
	check := func(phase string) bool {
		if inv.err != nil {
			d.fatalf("seed %d, %d nodes, %s: %v", seed, n, phase, inv.err)
			return false
		}
		return true
	}
	server := func(label string) sim.NodeID { return c.servers[d.intRange(label, 0, n-1)] }

	steps := d.intRange("steps", 5, 80)
	for s := 0; s < steps; s++ {
		switch d.intRange("action", 0, 11) {
		case 0, 1:
			w.Crash(server("crash"))
			st.crashes++
		case 2:
			w.Restart(server("restart"))
		case 3:
			var a, b []sim.NodeID
			for i := range c.servers {
				if d.intRange("side", 0, 1) == 0 {
					a = append(a, c.servers[i])
				} else {
					b = append(b, c.servers[i])
				}
			}
			if len(a) > 0 && len(b) > 0 {
				w.Partition(a, b)
				st.partitions++
			}
		case 4:
			from, to := server("cut from"), server("cut to")
			if from != to {
				w.Cut(from, to)
				st.partitions++
			}
		case 5:
			w.Heal()
		case 6:
			id := server("pause")
			if w.Status(id) == sim.Paused {
				w.Resume(id)
			} else {
				w.Pause(id)
			}
		case 7:
			w.Disk(server("torn")).TearNextCrash(d.intRange("corrupt", 0, 1) == 1)
		default:
			cl := c.clients[d.intRange("client", 0, 1)]
			for k := d.intRange("puts", 1, 5); k > 0; k-- {
				w.Inject(cl, KVDo{Op: OpPut, Key: fmt.Sprintf("k%d", d.intRange("key", 0, 2))}, 0)
			}
		}
		w.RunFor(time.Duration(d.intRange("run ms", 1, 500)) * time.Millisecond)
		if !check(fmt.Sprintf("step %d", s)) {
			return st
		}
	}

	// Liveness: heal everything, restart every node, and wait.
	w.Heal()
	if err := w.SetLinks(func(l *sim.LinkConfig) error { l.Drop, l.Dup = 0, 0; return nil }); err != nil {
		panic(err)
	}
	for _, id := range c.servers {
		w.Resume(id)
		if d.intRange("tear on final crash", 0, 3) == 0 {
			w.Disk(id).TearNextCrash(true)
		}
		w.Crash(id)
		w.Restart(id)
	}
	end := w.Now().Add(5 * time.Second)
	for c.leader() < 0 && w.Now() < end {
		w.RunFor(10 * time.Millisecond)
	}
	if !check("liveness") {
		return st
	}
	if c.leader() < 0 {
		d.fatalf("seed %d: no leader 5s after healing", seed)
		return st
	}
	w.Inject(c.clients[0], KVDo{Op: OpPut, Key: "final"}, 0)
	w.RunFor(0)
	end = w.Now().Add(10 * time.Second)
	var maxAcked int64
	done := func() bool {
		if c.client(0).Busy() || c.client(1).Busy() {
			return false
		}
		maxAcked = 0
		for ci := range c.clients {
			for _, r := range c.client(ci).History {
				if r.Op == OpPut && r.Outcome == OutcomeOK {
					maxAcked = max(maxAcked, r.Index)
				}
			}
		}
		for i := range c.servers {
			if n := c.kv(i); n == nil || n.Raft.Applied() < maxAcked {
				return false
			}
		}
		return true
	}
	for !done() && w.Now() < end {
		w.RunFor(10 * time.Millisecond)
	}
	if !check("liveness") {
		return st
	}
	if !done() {
		var applied []int64
		for i := range c.servers {
			applied = append(applied, c.kv(i).Raft.Applied())
		}
		d.fatalf("seed %d: 10s after healing, acknowledged puts up to %d, nodes applied %v", seed, maxAcked, applied)
		return st
	}
	final := c.client(0).History[len(c.client(0).History)-1]
	if final.Key != "final" || final.Outcome != OutcomeOK {
		d.fatalf("seed %d: the put after healing did not commit: %v", seed, final)
		return st
	}
	// Every acknowledged put is the entry committed at its index.
	for ci := range c.clients {
		for _, r := range c.client(ci).History {
			if r.Op != OpPut || r.Outcome != OutcomeOK {
				continue
			}
			st.acked++
			e := Entry{Index: r.Index, Term: r.Term, Data: encodePut(r.Key, r.Value)}
			if f := inv.committedAt(r.Index); !f.known || f.term != r.Term || f.hash != entryHash(e) {
				d.fatalf("seed %d: acknowledged %v at %d/t%d, committed there: %+v", seed, r, r.Index, r.Term, f)
				return st
			}
		}
	}
	// Run until all nodes applied the same prefix; their maps must then be equal.
	for w.Now() < end {
		a0 := c.kv(0).Raft.Applied()
		same := true
		for i := range c.servers {
			same = same && c.kv(i).Raft.Applied() == a0 && c.kv(i).Raft.Commit() == a0
		}
		if same {
			break
		}
		w.RunFor(10 * time.Millisecond)
	}
	want := string(c.kv(0).Encode())
	for i := range c.servers {
		if got := string(c.kv(i).Encode()); got != want {
			d.fatalf("seed %d: %s's map differs from s1's after healing", seed, c.names[i])
			return st
		}
	}
	st.events = int(w.Steps())
	st.leaders = len(inv.leaders)
	st.snapshots, st.truncations = inv.snapshots, inv.truncations
	st.stepHash, st.traceHash = w.StepHash(), w.Trace().Hash()
	return st
}

func TestSafetyAndLiveness(t *testing.T) {
	var runs int
	var sum runStats
	rapid.Check(t, func(rt *rapid.T) {
		st := runSafety(rapidDraws{rt}, Bugs{})
		runs++
		sum.events += st.events
		sum.crashes += st.crashes
		sum.partitions += st.partitions
		sum.acked += st.acked
		sum.leaders += st.leaders
		sum.snapshots += st.snapshots
		sum.truncations += st.truncations
	})
	t.Logf("%d runs: %d events checked, %d crashes, %d partitions, %d terms with a leader, %d snapshots, %d log truncations, %d acknowledged puts verified",
		runs, sum.events, sum.crashes, sum.partitions, sum.leaders, sum.snapshots, sum.truncations, sum.acked)
}

// The same property over uniformly drawn runs (rapid favours small values), which are
// longer and busier on average.
func TestSafetySeeds(t *testing.T) {
	seeds := uint64(300)
	if testing.Short() {
		seeds = 30
	}
	if n, err := strconv.ParseUint(os.Getenv("RAFT_SEEDS"), 10, 64); err == nil {
		seeds = n // a longer hunt: RAFT_SEEDS=100000
	}
	var sum runStats
	for seed := uint64(1); seed <= seeds; seed++ {
		d := &seededDraws{r: sim.NewRand(seed, "property")}
		st := runSafety(d, Bugs{})
		if d.failed != "" {
			t.Fatalf("seed %d: %s", seed, d.failed)
		}
		sum.events += st.events
		sum.crashes += st.crashes
		sum.partitions += st.partitions
		sum.acked += st.acked
		sum.snapshots += st.snapshots
		sum.truncations += st.truncations
	}
	t.Logf("%d runs: %d events checked, %d crashes, %d partitions, %d snapshots, %d log truncations, %d acknowledged puts verified",
		seeds, sum.events, sum.crashes, sum.partitions, sum.snapshots, sum.truncations, sum.acked)
}

// The property must be able to fail: with a leader that commits what only its own disk
// holds, random runs commit two different entries at one index.
func TestSafetyCatchesCommitOnMinority(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		d := &seededDraws{r: sim.NewRand(seed, "property")}
		runSafety(d, Bugs{CommitOnMinority: true})
		if d.failed != "" {
			t.Logf("caught at seed %d: %s", seed, d.failed)
			return
		}
	}
	t.Fatal("300 runs with commit-on-minority found no violation")
}

// RAFT_TRACE=file keeps the trace of the property runs and writes the last one there.
var dumpTo = os.Getenv("RAFT_TRACE")

func dumpTrace(w *sim.World) {
	var b strings.Builder
	for _, e := range w.Trace().Events() {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	if err := os.WriteFile(dumpTo, []byte(b.String()), 0o644); err != nil {
		panic(err)
	}
}
