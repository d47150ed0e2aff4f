package export

import (
	"mqsim/model/broker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// ReplicaLog is one broker's copy of a partition right after some kernel step, as the
// broker's own Replica view says: what a slide draws beside the lanes.
type ReplicaLog struct {
	Broker string
	Down   bool // the broker is down (its log is not shown)
	Leader bool
	Epoch  int32
	HW     int64
	LEO    int64
	Start  int64 // the log's first offset
	// Values are the records' values at offsets Start..LEO-1 ("?" where unreadable).
	Values []string
	// Epochs are the leader epochs of those records.
	Epochs []int32
}

// ReplicaLogsAt runs the scenario once more and reads every broker's copy of tp right after
// kernel step k. It returns nil when the run starts no Kafka-style cluster or never reaches
// step k. The run is the one Record made (same script, same options), so the state is the
// state of the diagram's run.
func (r *Run) ReplicaLogsAt(tp proto.TP, k int) ([]ReplicaLog, error) {
	if r.script == nil || k <= 0 {
		return nil, nil
	}
	rn := runner.NewRunner(r.opts)
	snap := &replicaSnapshot{runner: rn, tp: tp, step: uint64(k)}
	var w *sim.World
	for _, st := range r.script.Steps {
		if !rn.Started() && st.Cmd != "world" {
			rn.World() // made now so that the snapshot sees its first step
		}
		if w == nil && rn.Started() {
			w = rn.World()
			w.AddObserver(snap)
		}
		if _, err := rn.Exec(st); err != nil {
			return nil, err
		}
		if snap.done {
			break
		}
	}
	if w != nil {
		w.RemoveObserver(snap)
	}
	return snap.logs, nil
}

// replicaSnapshot is the world observer that reads the replicas once the run reaches its step.
type replicaSnapshot struct {
	runner *runner.Runner
	tp     proto.TP
	step   uint64
	done   bool
	logs   []ReplicaLog
}

func (s *replicaSnapshot) AfterStep(w *sim.World) {
	if s.done || w.Steps() < s.step {
		return
	}
	s.done = true
	c := s.runner.Cluster()
	if c == nil {
		return
	}
	for bi, id := range c.Brokers {
		s.logs = append(s.logs, readReplica(c, bi, w.Name(id), s.tp))
	}
}

// readReplica is broker bi's copy of tp, or a row that says the broker is down.
func readReplica(c *cluster.Cluster, bi int, name string, tp proto.TP) ReplicaLog {
	b := c.Broker(bi)
	if b == nil {
		return ReplicaLog{Broker: name, Down: true}
	}
	rep, ok := b.Replica(tp)
	if !ok {
		return ReplicaLog{Broker: name}
	}
	rl := ReplicaLog{Broker: name, Leader: rep.Leader, Epoch: rep.LeaderEpoch, HW: rep.HighWatermark,
		LEO: rep.LogEndOffset, Start: rep.LogStart}
	rl.Values, rl.Epochs = readValues(rep, rl.Start, rl.LEO)
	return rl
}

// readValues reads the values and epochs of the records at [from, to) of a replica's log.
func readValues(rep broker.Replica, from, to int64) ([]string, []int32) {
	var vals []string
	var epochs []int32
	if from >= to {
		return nil, nil
	}
	batches, err := rep.Log.Read(from, 1<<30)
	next := from
	if err == nil {
		for bi := range batches {
			b := &batches[bi]
			for k, rec := range b.Records {
				off := b.BaseOffset + int64(k)
				if off < next || off >= to {
					continue
				}
				v := string(rec.Value)
				if b.IsControl() {
					v = "(marker)"
				}
				vals = append(vals, v)
				epochs = append(epochs, b.LeaderEpoch)
				next = off + 1
			}
		}
	}
	for ; next < to; next++ {
		vals = append(vals, "?")
		epochs = append(epochs, -1)
	}
	return vals, epochs
}
