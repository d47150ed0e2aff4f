package cluster_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/checker"
	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// safeConfig is the configuration whose promise the property checks: acks=all,
// min.insync.replicas=2 of 3 replicas, idempotence, no unclean election, and brokers
// that fsync every batch, so that no crash can take back an acknowledged record.
func safeConfig() proto.Config {
	cfg := proto.DefaultConfig()
	cfg.Topic = proto.TopicConfig{Name: "t", Partitions: 2, ReplicationFactor: 3, MinInsyncReplicas: 2}
	cfg.Broker.Log.Flush = wal.FlushEveryBatch
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	cfg.Broker.ReplicaLagTimeMax = 5 * time.Second
	cfg.Producer.RequestTimeout = 3 * time.Second
	// Longer than any run (25 steps of at most 3s, then a minute to converge): a batch that
	// expires makes an idempotent producer take a new producer id, and what it re-sends
	// under the new id may duplicate what the old id appended. Kafka's no-duplicates
	// promise holds within one producer id, so a shorter timeout lets a correct cluster
	// fail this property (a random run did, with 20s).
	cfg.Producer.DeliveryTimeout = 5 * time.Minute
	return cfg
}

// draws is where a run's random choices come from: rapid, which shrinks failures, or a
// plain seeded stream, for the loop that hunts a planted bug.
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

// TestSafeConfigurationLosesNothing drives random produce, crash, restart, partition and
// heal sequences, then heals everything and checks that every acknowledged record is
// read back and that no two replicas disagree below their high watermarks.
func TestSafeConfigurationLosesNothing(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		runSafe(rapidDraws{rt}, safeConfig())
	})
}

// The property must be able to fail: with a planted bug that lets the high watermark run
// ahead of the followers, a few random runs lose an acknowledged record.
func TestSafePropertyCatchesPlantedBug(t *testing.T) {
	cfg := safeConfig()
	cfg.Bugs.HWFromLeaderOnly = true
	for seed := uint64(1); seed <= 200; seed++ {
		d := &seededDraws{r: sim.NewRand(seed, "property")}
		runSafe(d, cfg)
		if d.failed != "" {
			t.Logf("seed %d: %s", seed, d.failed)
			return
		}
	}
	t.Fatal("200 random runs with hw-from-leader-only planted found nothing")
}

func runSafe(d draws, cfg proto.Config) {
	seed := uint64(d.intRange("seed", 0, 1<<30))
	w := sim.NewWorld(sim.DefaultConfig(seed))
	c, err := cluster.New(w, cfg)
	if err != nil {
		d.fatalf("%v", err)
		return
	}
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(c.Cfg.Topic); err != nil {
		d.fatalf("%v", err)
		return
	}
	p, _ := c.AddProducer("p1", c.Cfg.Producer)
	nodes := append(slices.Clone(c.Controllers), c.Brokers...)
	sent := 0
	steps := d.intRange("steps", 5, 25)
	for i := 0; i < steps; i++ {
		switch d.intRange("action", 0, 5) {
		case 0, 1:
			n := d.intRange("records", 1, 5)
			for k := 0; k < n; k++ {
				sent++
				w.Inject(p.ID, client.Send{Topic: "t", Key: fmt.Sprintf("k%d", sent%7), Value: fmt.Sprintf("v%d", sent), Partition: -1}, 0)
			}
		case 2:
			w.Crash(nodes[d.intRange("crash", 0, len(nodes)-1)])
		case 3:
			w.Restart(nodes[d.intRange("restart", 0, len(nodes)-1)])
		case 4:
			cut := d.intRange("cut", 1, len(nodes)-1)
			w.Partition(nodes[:cut], nodes[cut:])
		case 5:
			w.Heal()
		}
		w.RunFor(time.Duration(d.intRange("ms", 1, 3000)) * time.Millisecond)
		checkReplicasAgree(d, c)
		if v := c.InvariantViolations(); len(v) > 0 {
			d.fatalf("invariant broken: %s", v[0])
			return
		}
	}
	// Liveness phase: every fault ends, and the cluster has time to converge.
	w.Heal()
	for _, id := range nodes {
		w.Restart(id)
	}
	w.RunFor(time.Minute)
	checkReplicasAgree(d, c)
	read := readAll(d, c)
	// Every checker judges the history: the queue anomalies (lost, duplicate, reordered,
	// unseen...) and, since this configuration promises them, no loss and no duplicates.
	rep, err := checker.Check(c.History.History(), checker.Options{Promise: checker.NoLoss | checker.NoDuplicates})
	if err != nil {
		d.fatalf("check: %v", err)
		return
	}
	if len(rep.Violations) > 0 {
		d.fatalf("the checkers found %s", rep.Violations[0].Text)
		return
	}
	for _, op := range c.History.History() {
		if op.F == history.Send && op.Type == history.Ok && !slices.Contains(read[tpOf(op.Send.TopicPartition)], op.Send.Value) {
			d.fatalf("acknowledged %s at %s@%d was not read back; read %v", op.Send.Value, tpOf(op.Send.TopicPartition), op.Send.Offset, read)
			return
		}
	}
}

func tpOf(tp history.TopicPartition) proto.TP {
	return proto.TP{Topic: tp.Topic, Partition: tp.Partition}
}

// checkReplicasAgree compares every two live replicas of each partition below the lower
// of their high watermarks.
func checkReplicasAgree(rt draws, c *cluster.Cluster) {
	for _, ps := range c.Partitions() {
		var logs [][]string
		var names []string
		for i := range c.Brokers {
			b := c.Broker(i)
			if b == nil {
				continue
			}
			r, ok := b.Replica(ps.TP)
			if !ok {
				continue
			}
			logs = append(logs, values(rt, r.Log, r.HighWatermark))
			names = append(names, c.W.Name(c.Brokers[i]))
		}
		for i := 1; i < len(logs); i++ {
			n := min(len(logs[0]), len(logs[i]))
			if !slices.Equal(logs[0][:n], logs[i][:n]) {
				rt.fatalf("%s: %s and %s disagree below their HWs:\n%v\n%v", ps.TP, names[0], names[i], logs[0], logs[i])
			}
		}
	}
}

// values lists "value@epoch" for the records below hw.
func values(rt draws, log *wal.Log, hw int64) []string {
	var out []string
	for off := log.LogStartOffset(); off < hw; {
		batches, err := log.Read(off, 1<<20)
		if err != nil || len(batches) == 0 {
			rt.fatalf("read %s at %d below HW %d: %v", log.Dir(), off, hw, err)
			return out
		}
		for _, b := range batches {
			for k, r := range b.Records {
				if b.BaseOffset+int64(k) >= off && b.BaseOffset+int64(k) < hw {
					out = append(out, fmt.Sprintf("%s@%d", r.Value, b.LeaderEpoch))
				}
			}
			off = b.NextOffset()
		}
	}
	return out
}

// readAll consumes every partition from the start with a fresh consumer.
func readAll(rt draws, c *cluster.Cluster) map[proto.TP][]string {
	cl, err := c.AddConsumer(fmt.Sprintf("reader%d", len(c.Consumers)), c.Cfg.Consumer)
	if err != nil {
		rt.fatalf("%v", err)
		return nil
	}
	var tps []proto.TP
	for _, ps := range c.Partitions() {
		tps = append(tps, ps.TP)
	}
	c.W.RunFor(0)
	c.W.Inject(cl.ID, client.Assign{Partitions: tps, FromBeginning: true}, 0)
	read := map[proto.TP][]string{}
	for polls := 0; polls < 50; polls++ {
		before := len(c.History.History())
		c.W.Inject(cl.ID, client.Poll{}, 0)
		c.W.RunFor(2 * time.Second)
		got := 0
		for _, op := range c.History.History()[before:] {
			if op.F == history.Poll && op.Type == history.Ok {
				for _, pr := range op.Poll.Reads {
					for _, r := range pr.Records {
						read[tpOf(pr.TopicPartition)] = append(read[tpOf(pr.TopicPartition)], r.Value)
						got++
					}
				}
			}
		}
		if got == 0 && polls > 2 {
			break
		}
	}
	return read
}
