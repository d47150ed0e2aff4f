package cluster

import (
	"slices"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// No planted bug breaks the ISR invariants (the controller validates every ISR it
// accepts), so they are tested on made-up leader views, as is every other invariant.
func TestInvariantRules(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic = proto.TopicConfig{Name: "t", Partitions: 1, ReplicationFactor: 2, MinInsyncReplicas: 1}
	cfg.Broker.Log.Flush = wal.FlushEveryBatch
	w := sim.NewWorld(sim.DefaultConfig(1))
	c, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.CheckInvariants(false) // only the views below are judged
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(cfg.Topic); err != nil {
		t.Fatal(err)
	}
	b1, b2, b3 := c.Brokers[0], c.Brokers[1], c.Brokers[2]
	view := func(b int, epoch int32, hw, leo int64, isr ...sim.NodeID) leaderView {
		return leaderView{broker: b, brokerID: c.Brokers[b], replicaView: &replicaView{leader: true, epoch: epoch, hw: hw, leo: leo, isr: isr}}
	}
	for _, tc := range []struct {
		name  string
		steps [][]leaderView // the leaders at successive judgements
		want  []string
		// b2Log is b2's log end for the ISR contract; 0 means it holds whatever the
		// views say.
		b2Log int64
	}{
		{"a healthy succession", [][]leaderView{{view(0, 0, 2, 3, b1, b2)}, {view(1, 1, 2, 3, b1, b2)}, {view(1, 1, 3, 3, b2)}}, nil, 0},
		{"two leaders in one epoch", [][]leaderView{{view(0, 4, 0, 0, b1, b2), view(1, 4, 0, 0, b1, b2)}}, []string{TwoLeaders}, 0},
		{"leaders of two epochs at once are normal", [][]leaderView{{view(0, 4, 0, 0, b1, b2), view(1, 5, 0, 0, b2)}}, nil, 0},
		{"the HW goes back within an epoch", [][]leaderView{{view(0, 0, 5, 5, b1, b2)}, {view(0, 0, 4, 5, b1, b2)}}, []string{HWRegression}, 0},
		{"a lower HW in a new epoch is normal", [][]leaderView{{view(0, 0, 5, 5, b1, b2)}, {view(1, 1, 4, 5, b1, b2)}}, nil, 0},
		{"an ISR member that is not a replica", [][]leaderView{{view(0, 0, 0, 0, b1, b3)}}, []string{ISROutsideReplicas}, 0},
		{"a leader outside its ISR", [][]leaderView{{view(0, 0, 0, 0, b2)}}, []string{LeaderOutsideISR}, 0},
		{"a new leader that lacks committed records", [][]leaderView{{view(0, 0, 5, 5, b1, b2)}, {view(1, 1, 3, 4, b2)}}, []string{LeaderIncomplete}, 0},
		// The controller's ISR of t/0 is [b1 b2], led by b1 in epoch 0.
		{"an ISR member behind its leader's HW", [][]leaderView{{view(0, 0, 3, 5, b1)}}, []string{ISRBehindHW}, 2},
		{"an ISR member at its leader's HW", [][]leaderView{{view(0, 0, 3, 5, b1)}}, nil, 3},
		{"a deposed leader is not judged by the contract", [][]leaderView{{view(0, 1, 3, 5, b1)}}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.inv = nil
			c.CheckInvariants(true)
			c.CheckInvariants(false)
			inv := c.inv
			inv.logEnd = func(_ *sim.World, id sim.NodeID, _ proto.TP) (int64, bool) {
				return tc.b2Log, tc.b2Log > 0 && id == b2
			}
			inv.addTopics()
			p := &inv.parts[0]
			inv.learnReplicas(p)
			if !slices.Equal(p.replicas, []sim.NodeID{b1, b2}) || !p.complete {
				t.Fatalf("partition watch: replicas %v, complete %t", p.replicas, p.complete)
			}
			for _, leaders := range tc.steps {
				inv.leaders = leaders
				inv.judge(w, p)
			}
			var got []string
			for _, v := range inv.found {
				got = append(got, v.Anomaly)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("found %v, want %v: %v", got, tc.want, inv.found)
			}
		})
	}
}

// read-above-hw compares each ok poll with the highest HW seen so far.
func TestReadAboveHWRule(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic = proto.TopicConfig{Name: "t", Partitions: 1, ReplicationFactor: 1, MinInsyncReplicas: 1}
	w := sim.NewWorld(sim.DefaultConfig(1))
	c, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.CheckInvariants(false)
	c.topics = append(c.topics, cfg.Topic)
	inv := c.inv
	inv.addTopics()
	inv.parts[0].maxHW = 2
	tp := history.TopicPartition{Topic: "t"}
	r := history.NewRecorder()
	poll := func(recs ...history.Record) {
		h := r.InvokePoll(0, 1, "")
		r.Ok(0, h, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: recs}}})
	}
	poll(history.Record{Offset: 0, Value: "a"}, history.Record{Offset: 1, Value: "b"})
	inv.checkPolls(w, r)
	if len(inv.found) != 0 {
		t.Fatalf("reads below the HW flagged: %v", inv.found)
	}
	poll(history.Record{Offset: 2, Value: "c"})
	inv.checkPolls(w, r)
	if len(inv.found) != 1 || inv.found[0].Anomaly != ReadAboveHW || inv.found[0].Text != "poll (op 3) by process 1 read 2:c at or above the HW 2" {
		t.Errorf("found %v", inv.found)
	}
}

// Two leaders of one epoch, judged in broker order: the first is held to the epoch's
// record before the second raises it, so only the next judgement can find the first
// below it. The partition stays unsettled until a judgement moves no record, although
// none of its views changes (the judgement is incremental, and must find what judging
// every partition at every step would).
func TestRestlessJudgementIsRepeated(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic = proto.TopicConfig{Name: "t", Partitions: 1, ReplicationFactor: 2, MinInsyncReplicas: 1}
	w := sim.NewWorld(sim.DefaultConfig(1))
	c, err := New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.CheckInvariants(false) // only the views below are judged
	c.Settle(50 * time.Millisecond)
	if err := c.CreateTopic(cfg.Topic); err != nil {
		t.Fatal(err)
	}
	c.inv = nil
	c.CheckInvariants(true)
	c.CheckInvariants(false)
	inv := c.inv
	inv.addTopics()
	isr := []sim.NodeID{c.Brokers[0], c.Brokers[1]}
	for bi, hw := range []int64{14, 17} {
		inv.readView(bi, 0, broker.Role{Leader: true, LeaderEpoch: 0, HighWatermark: hw, LogEndOffset: 20, ISR: isr}, true)
	}
	var found [][]string
	for range 3 {
		inv.judgeChanged(w)
		var got []string
		for _, v := range inv.found {
			got = append(got, v.Anomaly)
		}
		found = append(found, got)
	}
	want := [][]string{{TwoLeaders}, {TwoLeaders, HWRegression}, {TwoLeaders, HWRegression}}
	if !slices.EqualFunc(found, want, slices.Equal) {
		t.Errorf("found after each judgement %v, want %v", found, want)
	}
	if len(inv.unsettled) != 0 {
		t.Errorf("still unsettled after a judgement that moved nothing: %v", inv.unsettled)
	}
}
