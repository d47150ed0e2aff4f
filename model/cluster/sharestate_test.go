package cluster_test

import (
	"testing"
	"time"

	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/sim"
)

// The share-group state topic is created once, with a leader for each partition.
func TestEnsureShareGroupStateTopic(t *testing.T) {
	cfg := proto.DefaultConfig()
	c, err := cluster.New(sim.NewWorld(sim.DefaultConfig(1)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Settle(50 * time.Millisecond)
	for range 2 {
		if err := c.EnsureShareGroupStateTopic(); err != nil {
			t.Fatal(err)
		}
	}
	for p := range int32(cfg.Share.StateTopicPartitions) {
		if _, ok := c.Leader(proto.TP{Topic: proto.ShareGroupStateTopic, Partition: p}); !ok {
			t.Fatalf("%s/%d has no leader", proto.ShareGroupStateTopic, p)
		}
	}
}
