package cluster_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// invCluster is a 3-broker cluster with one rf=3 partition whose invariant observer also
// verifies, at every event, the views it keeps (cluster.Paranoid).
type invCluster struct {
	t  *testing.T
	w  *sim.World
	c  *cluster.Cluster
	p  sim.NodeID
	cs sim.NodeID
	b  []sim.NodeID
}

func quickConfig() proto.Config {
	cfg := proto.DefaultConfig()
	cfg.Topic = proto.TopicConfig{Name: "t", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 1}
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	cfg.Producer.RequestTimeout = 2 * time.Second
	cfg.Producer.Acks = proto.AcksLeader
	cfg.Producer.Idempotence = false
	return cfg
}

func newInvCluster(t *testing.T, cfg proto.Config, disk sim.DiskConfig) *invCluster {
	t.Helper()
	wc := sim.DefaultConfig(1)
	wc.Disk = disk
	w := sim.NewWorld(wc)
	c, err := cluster.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cluster.Paranoid(c)
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(cfg.Topic); err != nil {
		t.Fatal(err)
	}
	p, _ := c.AddProducer("p1", cfg.Producer)
	cs, _ := c.AddConsumer("c1", cfg.Consumer)
	w.RunFor(0)
	w.Inject(cs.ID, client.Assign{Partitions: []proto.TP{{Topic: "t"}}, FromBeginning: true}, 0)
	return &invCluster{t: t, w: w, c: c, p: p.ID, cs: cs.ID, b: c.Brokers}
}

// send produces one value and runs until its send completes (or 5s pass).
func (ic *invCluster) send(value string) {
	ic.w.Inject(ic.p, client.Send{Topic: "t", Value: value, Partition: 0}, 0)
	end := ic.w.Now().Add(5 * time.Second)
	ic.w.RunUntil(func(w *sim.World) bool {
		if w.Now() > end {
			return true
		}
		for _, op := range ic.c.History.History() {
			if op.F == history.Send && op.Type != history.Invoke && op.Send.Value == value {
				return true
			}
		}
		return false
	}, 1_000_000)
}

// poll runs one consumer poll to its end.
func (ic *invCluster) poll() {
	before := len(ic.c.History.History())
	ic.w.Inject(ic.cs, client.Poll{}, 0)
	ic.w.RunUntil(func(w *sim.World) bool {
		for _, op := range ic.c.History.History()[before:] {
			if op.F == history.Poll && op.Type != history.Invoke {
				return true
			}
		}
		return false
	}, 1_000_000)
}

// found lists the anomalies found, in order, and fails on divergent views.
func (ic *invCluster) found() []string {
	ic.t.Helper()
	if d := cluster.Divergences(ic.c); len(d) > 0 {
		ic.t.Fatalf("kept views went stale %d times; first: %s", len(d), d[0])
	}
	var names []string
	for _, v := range ic.c.InvariantViolations() {
		ic.t.Logf("found: %s", v)
		if !slices.Contains(names, v.Anomaly) {
			names = append(names, v.Anomaly)
		}
	}
	return names
}

// Each planted bug that breaks an invariant is caught by it, and the same run without
// the bug breaks none.
func TestPlantedBugsBreakInvariants(t *testing.T) {
	for _, tc := range []struct {
		bug  string
		want []string
		run  func(ic *invCluster)
		cfg  func(*proto.Config)
		disk func(*sim.DiskConfig)
	}{
		{
			// The controller elects b2 without a new epoch while b1, cut off from
			// everyone, still leads: two leaders in epoch 0. b2's HW, learned from b1's
			// fetch responses, lags b1's: the HW goes back within the epoch.
			bug: "no-epoch-bump", want: []string{cluster.TwoLeaders, cluster.HWRegression},
			run: func(ic *invCluster) {
				ic.send("v1")
				ic.w.RunFor(100 * time.Millisecond)
				ic.send("v2")
				ic.w.Partition([]sim.NodeID{ic.b[0]}, []sim.NodeID{ic.c.Controller, ic.b[1], ic.b[2], ic.p, ic.cs})
				ic.w.RunFor(5 * time.Second)
			},
		},
		{
			// The followers cannot fetch, so the HW stays at 1, yet the consumer is
			// given "dirty" at offset 1.
			bug: "reads-beyond-hw", want: []string{cluster.ReadAboveHW},
			run: func(ic *invCluster) {
				ic.send("v1")
				ic.w.RunFor(100 * time.Millisecond)
				ic.w.Partition([]sim.NodeID{ic.b[0]}, []sim.NodeID{ic.b[1], ic.b[2]})
				ic.send("dirty")
				ic.poll()
			},
		},
		{
			// acks=all, min.insync.replicas=2, every batch fsynced: b1 commits "lost"
			// alone (its own log end is the HW), crashes, and b2, which never had it,
			// leads the next epoch.
			bug: "hw-from-leader-only", want: []string{cluster.ISRBehindHW, cluster.LeaderIncomplete},
			cfg: func(c *proto.Config) {
				c.Producer.Acks, c.Producer.Idempotence = proto.AcksAll, true
				c.Topic.MinInsyncReplicas = 2
				c.Broker.Log.Flush = wal.FlushEveryBatch
			},
			run: func(ic *invCluster) {
				ic.send("v1")
				ic.w.RunFor(100 * time.Millisecond)
				ic.w.Partition([]sim.NodeID{ic.b[0]}, []sim.NodeID{ic.b[1], ic.b[2]})
				ic.send("lost")
				ic.w.Crash(ic.b[0])
				ic.w.Heal()
				ic.w.RunFor(5 * time.Second)
			},
		},
		{
			// Slow disks: "gone" is acknowledged once all three replicas have it in
			// memory, then every broker loses power before an fsync completes.
			bug: "ack-before-fsync", want: []string{cluster.ISRBehindHW, cluster.LeaderIncomplete},
			cfg: func(c *proto.Config) {
				c.Producer.Acks, c.Producer.Idempotence = proto.AcksAll, true
				c.Topic.MinInsyncReplicas = 2
				c.Broker.Log.Flush = wal.FlushEveryBatch
			},
			disk: func(d *sim.DiskConfig) { d.FsyncLatency = 200 * time.Millisecond },
			run: func(ic *invCluster) {
				ic.send("v1")
				ic.w.RunFor(time.Second)
				ic.send("gone")
				for _, b := range ic.b {
					ic.w.Crash(b)
				}
				// Past the session timeout: the controller has fenced all three before
				// they return, so each restart is a clean registration.
				ic.w.RunFor(5 * time.Second)
				for _, b := range ic.b {
					ic.w.Restart(b)
				}
				ic.w.RunFor(10 * time.Second)
			},
		},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			for _, planted := range []bool{true, false} {
				cfg := quickConfig()
				if tc.cfg != nil {
					tc.cfg(&cfg)
				}
				if planted {
					if err := cfg.Bugs.Set(tc.bug); err != nil {
						t.Fatal(err)
					}
				}
				disk := sim.DefaultDisk()
				if tc.disk != nil {
					tc.disk(&disk)
				}
				ic := newInvCluster(t, cfg, disk)
				tc.run(ic)
				got := ic.found()
				switch {
				case planted && !slices.Equal(got, tc.want):
					t.Errorf("with %s planted: found %v, want %v", tc.bug, got, tc.want)
				case !planted && len(got) > 0:
					t.Errorf("without the bug: found %v, want nothing", got)
				}
			}
		})
	}
}

// Violations mark the trace where they begin, and carry its step.
func TestInvariantViolationIsTraced(t *testing.T) {
	cfg := quickConfig()
	cfg.Bugs.ReadsBeyondHW = true
	ic := newInvCluster(t, cfg, sim.DefaultDisk())
	ic.send("v1")
	ic.w.RunFor(100 * time.Millisecond)
	ic.w.Partition([]sim.NodeID{ic.b[0]}, []sim.NodeID{ic.b[1], ic.b[2]})
	ic.send("dirty")
	ic.poll()
	vs := ic.c.InvariantViolations()
	if len(vs) != 1 {
		t.Fatalf("found %v, want one read-above-hw", vs)
	}
	v := vs[0]
	var marked []sim.Event
	for _, e := range ic.w.Trace().Events() {
		if e.Kind == "invariant" {
			marked = append(marked, e)
		}
	}
	if len(marked) != 1 || marked[0].Step != v.Step || marked[0].Time != v.Time ||
		!strings.Contains(marked[0].Detail, "read-above-hw: poll") || !strings.Contains(v.Text, "1:dirty at or above the HW 1") {
		t.Errorf("violation %s; trace marks %v", v, marked)
	}
}

// Random runs with random faults: the kept views never go stale (the observer reads
// what an event may have changed, and a paranoid read of everything agrees), and the
// safe configuration breaks no invariant.
func TestInvariantsOnRandomRuns(t *testing.T) {
	safe := safeConfig()
	loose := quickConfig()
	loose.Topic.Partitions, loose.Topic.UncleanLeaderElection = 2, true
	loose.Broker.Log.Flush = wal.FlushInterval(50 * time.Millisecond)
	configs := []struct {
		name string
		cfg  proto.Config
		safe bool
	}{{"safe", safe, true}, {"loose", loose, false}}
	for _, b := range proto.BugList {
		cfg := safe
		cfg.Bugs.Set(b.Name)
		configs = append(configs, struct {
			name string
			cfg  proto.Config
			safe bool
		}{b.Name, cfg, false})
	}
	runs := 12
	if testing.Short() {
		runs = 3
	}
	for _, cc := range configs {
		t.Run(cc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= uint64(runs); seed++ {
				c := randomRun(t, cc.cfg, seed)
				if d := cluster.Divergences(c); len(d) > 0 {
					t.Fatalf("seed %d: kept views went stale %d times; first: %s", seed, len(d), d[0])
				}
				if vs := c.InvariantViolations(); cc.safe && len(vs) > 0 {
					t.Fatalf("seed %d: the safe configuration broke an invariant: %s", seed, vs[0])
				}
			}
		})
	}
}

// randomRun drives produce, crash, restart, pause, partition and heal at random, with a
// consumer polling, then heals everything.
func randomRun(t *testing.T, cfg proto.Config, seed uint64) *cluster.Cluster {
	t.Helper()
	r := sim.NewRand(seed, "invariants-test")
	w := sim.NewWorld(sim.DefaultConfig(seed))
	c, err := cluster.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cluster.Paranoid(c)
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(cfg.Topic); err != nil {
		t.Fatal(err)
	}
	p, _ := c.AddProducer("p1", cfg.Producer)
	cs, _ := c.AddConsumer("c1", cfg.Consumer)
	w.RunFor(0)
	var tps []proto.TP
	for _, ps := range c.Partitions() {
		tps = append(tps, ps.TP)
	}
	w.Inject(cs.ID, client.Assign{Partitions: tps, FromBeginning: true}, 0)
	w.Inject(cs.ID, client.PollLoop{Every: 50 * time.Millisecond, Count: 1 << 20}, 0)
	nodes := append([]sim.NodeID{c.Controller}, c.Brokers...)
	sent := 0
	for i := 0; i < 20; i++ {
		switch r.IntN(7) {
		case 0, 1:
			for k := r.IntN(5); k >= 0; k-- {
				sent++
				w.Inject(p.ID, client.Send{Topic: "t", Value: fmt.Sprintf("v%d", sent), Partition: -1}, 0)
			}
		case 2:
			w.Crash(nodes[r.IntN(len(nodes))])
		case 3:
			w.Restart(nodes[r.IntN(len(nodes))])
		case 4:
			cut := 1 + r.IntN(len(nodes)-1)
			w.Partition(nodes[:cut], nodes[cut:])
		case 5:
			n := nodes[r.IntN(len(nodes))]
			w.Pause(n)
			w.RunFor(time.Duration(r.IntN(4000)) * time.Millisecond)
			w.Resume(n)
		case 6:
			w.Heal()
		}
		w.RunFor(time.Duration(1+r.IntN(3000)) * time.Millisecond)
	}
	w.Heal()
	for _, id := range nodes {
		w.Restart(id)
	}
	w.RunFor(30 * time.Second)
	return c
}
