package raft

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"mqsim/sim"
)

// kvInput and kvOutput are a KV operation as porcupine sees it.
type kvInput struct {
	op    KVOp
	key   string
	value string
}

type kvOutput struct {
	value   string
	found   bool
	unknown bool // the client timed out: the put may or may not have happened
}

// kvState is one key's value; comparable, so porcupine needs no Equal.
type kvState struct {
	value string
	found bool
}

// kvModel is a register per key: puts overwrite, gets read the latest put.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		var keys []string
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(kvInput).key
			if _, seen := byKey[k]; !seen {
				keys = append(keys, k) // first-seen order, not map order
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return kvState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(kvState), input.(kvInput), output.(kvOutput)
		switch in.op {
		case OpPut:
			return true, kvState{value: in.value, found: true}
		case OpGet:
			return out.found == st.found && (!st.found || out.value == st.value), st
		}
		return false, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		if in.op == OpPut {
			if out.unknown {
				return fmt.Sprintf("put %s=%s ?", in.key, in.value)
			}
			return fmt.Sprintf("put %s=%s", in.key, in.value)
		}
		if !out.found {
			return fmt.Sprintf("get %s -> none", in.key)
		}
		return fmt.Sprintf("get %s -> %s", in.key, out.value)
	},
	DescribeState: func(state any) string {
		if st := state.(kvState); st.found {
			return st.value
		}
		return "none"
	},
}

// porcupineHistory turns the clients' histories into porcupine operations: failed
// operations had no effect and are left out, as are gets with an unknown outcome; a put
// with an unknown outcome may take effect at any time after its call.
func porcupineHistory(c *cluster) []porcupine.Operation {
	var ops []porcupine.Operation
	for ci := range c.clients {
		for _, r := range c.client(ci).History {
			op := porcupine.Operation{
				ClientId: ci*1000 + r.Process,
				Input:    kvInput{op: r.Op, key: r.Key, value: r.Value},
				Call:     int64(r.Call),
				Return:   int64(r.Return),
			}
			switch r.Outcome {
			case OutcomeOK:
				op.Output = kvOutput{value: r.Value, found: r.Found}
			case OutcomeInfo:
				if r.Op == OpGet {
					continue
				}
				op.Output, op.Return = kvOutput{unknown: true}, math.MaxInt64
			default:
				continue
			}
			ops = append(ops, op)
		}
	}
	return ops
}

type linStats struct {
	ops, ok, info, fail int
	result              porcupine.CheckResult
}

// runLinearizable runs four clients against a 3-node KV cluster while a seeded fault
// plan isolates the leader, crashes, restarts and pauses nodes and loses messages, then
// checks the clients' history with porcupine.
func runLinearizable(t testing.TB, seed uint64, bugs Bugs) linStats {
	return runLinearizableWith(t, seed, bugs, linWorkload)
}

type linParams struct {
	keys    []string
	ops     int
	timeout time.Duration
}

// linWorkload is four clients doing 200 operations each on six keys, half of them gets,
// giving up after 200ms: enough unknown outcomes to matter, few enough per key for
// porcupine to search in milliseconds.
var linWorkload = linParams{keys: []string{"a", "b", "c", "d", "e", "f"}, ops: 200, timeout: 200 * time.Millisecond}

func runLinearizableWith(t testing.TB, seed uint64, bugs Bugs, p linParams) linStats {
	c := newCluster(t, clusterOpts{
		seed: seed, n: 3, clients: 4, snapshotEvery: 8,
		cfg: func(cfg *Config) { cfg.Bugs = bugs },
		world: func(wc *sim.Config) {
			wc.Link.Drop, wc.Link.Dup = sim.Percent(1), sim.Percent(1)
			wc.Disk.Torn = sim.Percent(30)
		},
	})
	w := c.w
	w.Trace().Mode = sim.TraceOff
	inv := newInvariants(c)
	w.AddObserver(inv)
	for i := range c.clients {
		cl := c.client(i)
		cl.Timeout = p.timeout
		w.Inject(c.clients[i], KVWorkload{Ops: p.ops, Keys: p.keys, GetPercent: 50, Think: 2 * time.Millisecond}, 300*time.Millisecond)
	}
	r := sim.NewRand(seed, "faults")
	names := c.names
	for at := 400 * time.Millisecond; at < 6*time.Second; at += time.Duration(100+r.IntN(500)) * time.Millisecond {
		w.RunUntilTime(sim.Time(at))
		switch r.IntN(6) {
		case 0, 1: // isolate the leader from the other servers (clients still reach it)
			if l := c.leader(); l >= 0 {
				var rest []sim.NodeID
				for i, id := range c.servers {
					if i != l {
						rest = append(rest, id)
					}
				}
				w.Partition([]sim.NodeID{c.servers[l]}, rest)
			}
		case 2:
			w.Heal()
		case 3:
			id := c.servers[r.IntN(len(names))]
			if w.Status(id) == sim.Down {
				w.Restart(id)
			} else {
				w.Crash(id)
			}
		case 4:
			id := c.servers[r.IntN(len(names))]
			if w.Status(id) == sim.Paused {
				w.Resume(id)
			} else {
				w.Pause(id)
			}
		case 5:
			for _, id := range c.servers {
				w.Resume(id)
				w.Restart(id)
			}
		}
	}
	w.Heal()
	for _, id := range c.servers {
		w.Resume(id)
		w.Restart(id)
	}
	busy := func() bool {
		for i := range c.clients {
			if c.client(i).Busy() {
				return true
			}
		}
		return false
	}
	for end := w.Now().Add(20 * time.Second); busy() && w.Now() < end; {
		w.RunFor(10 * time.Millisecond)
	}
	if inv.err != nil {
		t.Fatalf("seed %d: %v", seed, inv.err)
	}
	if busy() {
		t.Fatalf("seed %d: clients still busy 20s after the faults ended", seed)
	}
	var st linStats
	for ci := range c.clients {
		for _, r := range c.client(ci).History {
			st.ops++
			switch r.Outcome {
			case OutcomeOK:
				st.ok++
			case OutcomeInfo:
				st.info++
			default:
				st.fail++
			}
		}
	}
	st.result = porcupine.CheckOperationsTimeout(kvModel, porcupineHistory(c), 30*time.Second)
	return st
}

func TestLinearizable(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() {
		seeds = 5
	}
	var sum linStats
	for seed := uint64(1); seed <= seeds; seed++ {
		st := runLinearizable(t, seed, Bugs{})
		if st.result != porcupine.Ok {
			t.Fatalf("seed %d: history is not linearizable (%s)", seed, st.result)
		}
		sum.ops, sum.ok, sum.info, sum.fail = sum.ops+st.ops, sum.ok+st.ok, sum.info+st.info, sum.fail+st.fail
	}
	if sum.ok < sum.ops/2 {
		t.Fatalf("only %d of %d operations succeeded: the check means little", sum.ok, sum.ops)
	}
	t.Logf("%d seeds: %d operations, %d ok, %d unknown, %d failed; all linearizable", seeds, sum.ops, sum.ok, sum.info, sum.fail)
}

// Porcupine must be able to fail: a leader that serves reads without confirming it still
// leads answers from a stale state once it has been cut off and replaced.
func TestLinearizableCatchesUnconfirmedReads(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		if st := runLinearizable(t, seed, Bugs{UnconfirmedReads: true}); st.result == porcupine.Illegal {
			t.Logf("caught at seed %d (%d operations)", seed, st.ops)
			return
		}
	}
	t.Fatal("100 runs with unconfirmed reads stayed linearizable")
}
