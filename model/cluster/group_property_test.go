package cluster_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// groupConfig is the safe cluster of safeConfig with short group timeouts, so that a run
// sees many sessions expire, and consumers that commit after processing.
func groupConfig() proto.Config {
	cfg := safeConfig()
	cfg.Topic.Partitions = 3
	cfg.Consumer.AutoOffsetReset = "earliest"
	cfg.Consumer.Commit = proto.CommitAfter
	cfg.Consumer.SessionTimeout = 6 * time.Second
	cfg.Consumer.HeartbeatInterval = time.Second
	cfg.Consumer.MaxPollInterval = 8 * time.Second
	cfg.Consumer.MaxPollRecords = 20
	cfg.Consumer.RequestTimeout = 5 * time.Second
	cfg.Group.InitialRebalanceDelay = time.Second
	return cfg
}

// TestGroupsNeverDoubleOwnNorLose drives random joins, leaves, crashes, restarts and GC
// pauses of the members of one group, produces records meanwhile, and fails over
// coordinators by crashing and partitioning brokers. After every step no partition may be
// held by two members of one generation, and no coordinator may have accepted a commit
// from a stale member. In the end, with every fault healed, every acknowledged record must
// have been processed by the group at least once (commit after processing: duplicates are
// allowed, and counted).
func TestGroupsNeverDoubleOwnNorLose(t *testing.T) {
	dups := 0
	rapid.Check(t, func(rt *rapid.T) {
		dups += runGroups(rapidDraws{rt}, groupConfig())
	})
	t.Logf("records processed more than once, over all runs: %d", dups)
}

// The property must be able to fail: each group bug is found by some seed.
func TestGroupPropertyCatchesPlantedBugs(t *testing.T) {
	for _, bug := range []string{"no-generation-fencing", "commit-before-processing", "no-revoke-first"} {
		t.Run(bug, func(t *testing.T) {
			cfg := groupConfig()
			if err := cfg.Bugs.Set(bug); err != nil {
				t.Fatal(err)
			}
			for seed := uint64(1); seed <= 300; seed++ {
				d := &seededDraws{r: sim.NewRand(seed, "groups")}
				runGroups(d, cfg)
				if d.failed != "" {
					t.Logf("seed %d: %s", seed, d.failed)
					return
				}
			}
			t.Fatalf("300 random runs with %s planted found nothing", bug)
		})
	}
}

// runGroups is one random run; it returns how many acknowledged records the group read
// more than once.
func runGroups(d draws, cfg proto.Config) int {
	seed := uint64(d.intRange("seed", 0, 1<<30))
	w := sim.NewWorld(sim.DefaultConfig(seed))
	c, err := cluster.New(w, cfg)
	if err != nil {
		d.fatalf("%v", err)
		return 0
	}
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(c.Cfg.Topic); err != nil {
		d.fatalf("%v", err)
		return 0
	}
	p, _ := c.AddProducer("p1", c.Cfg.Producer)
	consumers := []string{"c1", "c2", "c3"}
	assignors := []string{"range", "roundrobin", "sticky", "cooperative-sticky"}
	protocol := proto.ProtocolEager
	assignor := assignors[d.intRange("assignor", 0, len(assignors)-1)]
	if assignor == "cooperative-sticky" || d.intRange("cooperative", 0, 1) == 1 {
		protocol = proto.ProtocolCooperative
	}
	subs := map[string]client.Subscribe{}
	for i, name := range consumers {
		cc := c.Cfg.Consumer
		cc.Assignor, cc.Protocol = assignor, protocol
		cc.ProcessingTime = time.Duration(d.intRange("processing", 0, 300)) * time.Millisecond
		s := client.Subscribe{Group: "g", Topics: []string{"t"}, Config: &cc, PollEvery: 200 * time.Millisecond}
		if d.intRange("static", 0, 2) == 0 {
			s.InstanceID = fmt.Sprintf("i%d", i+1)
		}
		if _, err := c.AddConsumer(name, cc); err != nil {
			d.fatalf("%v", err)
			return 0
		}
		subs[name] = s
	}
	w.RunFor(0)
	for _, name := range consumers {
		if err := c.Subscribe(name, subs[name]); err != nil {
			d.fatalf("%v", err)
			return 0
		}
	}
	id := func(name string) sim.NodeID { n, _ := w.Lookup(name); return n }
	sent := 0
	brokers := c.Brokers
	steps := d.intRange("steps", 5, 25)
	for i := 0; i < steps; i++ {
		name := consumers[d.intRange("consumer", 0, len(consumers)-1)]
		switch d.intRange("action", 0, 9) {
		case 0, 1, 2:
			n := d.intRange("records", 1, 20)
			for k := 0; k < n; k++ {
				sent++
				w.Inject(p.ID, client.Send{Topic: "t", Key: fmt.Sprintf("k%d", sent%11), Value: fmt.Sprintf("v%d", sent), Partition: -1}, 0)
			}
		case 3:
			w.Crash(id(name))
		case 4:
			w.Restart(id(name))
		case 5:
			// A GC pause: long enough, sometimes, for the session or max.poll.interval.ms.
			w.Pause(id(name))
			resume, _ := sim.After(0, sim.VerbResume, name)
			resume.At = w.Now().Add(time.Duration(d.intRange("pause-ms", 100, 15000)) * time.Millisecond)
			if err := w.SchedulePlan(sim.Plan{resume}); err != nil {
				d.fatalf("%v", err)
				return 0
			}
		case 6:
			if w.Status(id(name)) == sim.Up {
				w.Inject(id(name), client.Leave{Reason: "random leave"}, 0)
			}
		case 7:
			if w.Status(id(name)) == sim.Up {
				_ = c.Subscribe(name, subs[name])
			}
		case 8:
			// Coordinator failover: crash or restart a broker.
			b := brokers[d.intRange("broker", 0, len(brokers)-1)]
			if w.Status(b) == sim.Down {
				w.Restart(b)
			} else {
				w.Crash(b)
			}
		case 9:
			cut := d.intRange("cut", 1, len(brokers))
			w.Partition(brokers[:cut], append(slices.Clone(brokers[cut:]), c.Controller))
		}
		w.RunFor(time.Duration(d.intRange("ms", 1, 8000)) * time.Millisecond)
		if bad := groupViolation(c); bad != "" {
			d.fatalf("%s", bad)
			return 0
		}
	}
	// Liveness phase: every fault ends; every consumer runs and is subscribed again.
	w.Heal()
	w.Restart(c.Controller)
	for _, b := range brokers {
		w.Restart(b)
	}
	for _, name := range consumers {
		w.Resume(id(name))
		w.Restart(id(name))
	}
	w.RunFor(5 * time.Second)
	for _, name := range consumers {
		if cs := c.Consumer(name); cs != nil {
			if st, ok := cs.Member(); !ok || st.State == "left" {
				_ = c.Subscribe(name, subs[name])
			}
		}
	}
	w.RunFor(2 * time.Minute)
	if bad := groupViolation(c); bad != "" {
		d.fatalf("%s", bad)
		return 0
	}
	return checkGroupRead(d, c)
}

// groupViolation reports the first group invariant broken so far (and any other).
func groupViolation(c *cluster.Cluster) string {
	for _, v := range c.InvariantViolations() {
		return v.String()
	}
	return ""
}

// checkGroupRead checks that every acknowledged send was read by an ok poll of group g,
// and counts the values read more than once.
func checkGroupRead(d draws, c *cluster.Cluster) int {
	reads := map[string]int{}
	for _, op := range c.History.History() {
		if op.F != history.Poll || op.Type != history.Ok || op.Poll.Group != "g" {
			continue
		}
		for _, pr := range op.Poll.Reads {
			for _, r := range pr.Records {
				reads[r.Value]++
			}
		}
	}
	dups := 0
	for _, op := range c.History.History() {
		if op.F != history.Send || op.Type != history.Ok {
			continue
		}
		switch n := reads[op.Send.Value]; {
		case n == 0:
			g := c.Group("g")
			d.fatalf("acknowledged %s at %s@%d was never processed by group g (group %s generation %d, offsets %v, consumers %v)",
				op.Send.Value, tpOf(op.Send.TopicPartition), op.Send.Offset, g.State, g.Generation, g.Offsets, g.Consumers)
			return dups
		case n > 1:
			dups++
		}
	}
	return dups
}
