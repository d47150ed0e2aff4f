package metrics

import (
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/controller"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Per-partition load: producer appends count records, bytes and batches, over the run
// and over the window; the coordinator's own appends and internal topics do not; a
// partition added by CreatePartitions appears; the leader follows the brokers' events;
// fetches count only when the trace keeps messages.
func TestLoadOf(t *testing.T) {
	t1 := proto.TP{Topic: "t", Partition: 1}
	offsets := proto.TP{Topic: proto.OffsetsTopic, Partition: 0}
	es := append(start(),
		ev(3, 6, "ctl", controller.TopicCreated{Config: proto.TopicConfig{Name: proto.OffsetsTopic, Partitions: 1}}),
		ev(10, 7, "b1", broker.Appended{TP: tp, First: 0, Last: 9, Bytes: 300}),
		ev(11, 8, "b1", broker.Appended{TP: offsets, First: 0, Last: 0, Bytes: 50, Coordinator: true}),
		ev(20, 9, "ctl", controller.PartitionsCreated{Topic: "t", Before: 1, After: 2}),
		ev(21, 10, "b2", broker.Leading{TP: t1}),
		ev(1500, 11, "b1", broker.Appended{TP: tp, First: 10, Last: 11, Bytes: 70}),
		ev(1600, 12, "b2", broker.Appended{TP: t1, First: 0, Last: 3, Bytes: 120}),
		ev(1700, 13, "b1", sim.NodeCrashed{}),
	)
	l := LoadOf(es, sim.Time(2*time.Second), time.Second)
	if l.FetchesCounted || len(l.Partitions) != 2 {
		t.Fatalf("fetches counted %t, partitions %+v", l.FetchesCounted, l.Partitions)
	}
	want := []PartitionLoad{
		{TP: tp, Leader: "", Total: Served{Records: 12, Bytes: 370, Produces: 2}, Recent: Served{Records: 2, Bytes: 70, Produces: 1}},
		{TP: t1, Leader: "b2", Total: Served{Records: 4, Bytes: 120, Produces: 1}, Recent: Served{Records: 4, Bytes: 120, Produces: 1}},
	}
	for i, w := range want {
		if l.Partitions[i] != w {
			t.Errorf("partition %d: %+v, want %+v", i, l.Partitions[i], w)
		}
	}
	// Figures are taken at now: later events do not count.
	if early := LoadOf(es, sim.Time(15*time.Millisecond), time.Second); len(early.Partitions) != 1 || early.Partitions[0].Total.Records != 10 {
		t.Errorf("at 15ms: %+v", early.Partitions)
	}
	fetch := ev(1800, 14, "b2", sim.Received{Msg: proto.FetchRequest{TP: t1}})
	l = LoadOf(append(es, fetch), sim.Time(2*time.Second), time.Second)
	if !l.FetchesCounted || l.Partitions[1].Total.Fetches != 1 || l.Partitions[1].Recent.Fetches != 1 || l.Partitions[0].Total.Fetches != 0 {
		t.Errorf("fetches: %+v", l.Partitions)
	}
	if Share(3, 4) != 75 || Share(1, 0) != 0 {
		t.Errorf("Share")
	}
}
