package controller

import (
	"encoding/json"
	"reflect"
	"testing"

	"mqsim/model/proto"
	"mqsim/sim"
)

// A batch of records survives its log encoding, and applying the decoded batch gives the
// same metadata as applying the original: what the active controller decided is what
// every controller holds.
func TestRecordsRoundTrip(t *testing.T) {
	topic := proto.TopicConfig{Name: "t", Partitions: 2, ReplicationFactor: 2, MinInsyncReplicas: 1}
	p0 := proto.PartitionState{TP: proto.TP{Topic: "t"}, Replicas: []sim.NodeID{3, 4}, Leader: 3, ISR: []sim.NodeID{3, 4}, PartitionEpoch: 1}
	p1 := proto.PartitionState{TP: proto.TP{Topic: "t", Partition: 1}, Replicas: []sim.NodeID{4, 3}, Leader: proto.NoLeader, LeaderEpoch: 2, ISR: []sim.NodeID{4}, PartitionEpoch: 5}
	recs := []record{
		{Register: &brokerRecord{Broker: 0, Incarnation: 2}},
		{Register: &brokerRecord{Broker: 1, Incarnation: 1}},
		{Topic: &topic},
		{Partition: &p1},
		{Partition: &p0},
		{Fence: &brokerRecord{Broker: 1, Incarnation: 1}},
		{ProducerIDs: 7},
	}
	direct := newState(2, true)
	for _, r := range recs {
		direct.apply(r)
	}
	decoded, err := decodeRecords(encodeRecords(recs))
	if err != nil {
		t.Fatal(err)
	}
	replayed := newState(2, true)
	for _, r := range decoded {
		replayed.apply(r)
	}
	if !reflect.DeepEqual(direct, replayed) {
		t.Fatalf("applied directly:\n%+v\nafter the log encoding:\n%+v", direct, replayed)
	}
	if direct.Partitions[0].TP.Partition != 0 || direct.Fenced[0] || !direct.Fenced[1] || direct.NextProducerID != 7 {
		t.Fatalf("unexpected state %+v", direct)
	}
	// A snapshot is the state's JSON.
	b, _ := json.Marshal(direct)
	var back state
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(*direct, back) {
		t.Fatalf("snapshot round trip: %v\n%+v\n%+v", err, *direct, back)
	}
}

// The single controller's file keeps the line format it always had (the metadata image
// without liveness), so a disk written before the quorum existed still recovers.
func TestSingleControllerImageFormat(t *testing.T) {
	st := &state{ControllerEpoch: 2, Version: 9, NextProducerID: 3, Incarnations: []int64{1, 2}, Fenced: []bool{false, true}}
	b, err := json.Marshal(image{st.ControllerEpoch, st.Version, st.NextProducerID, st.Topics, st.Partitions, st.Incarnations})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ControllerEpoch":2,"Version":9,"NextProducerID":3,"Topics":null,"Partitions":null,"Incarnations":[1,2]}`
	if string(b) != want {
		t.Fatalf("image line\n%s\nwant\n%s", b, want)
	}
}
