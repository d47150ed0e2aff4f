package group

import (
	"fmt"
	"testing"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// logNode owns one log, opened in Start, so a test can append batches and Load from it.
type logNode struct{ log *wal.Log }

func (n *logNode) Start(env *sim.Env) {
	n.log, _, _ = wal.Open(env.Disk(), "data/__consumer_offsets-0", wal.DefaultConfig())
}
func (n *logNode) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {}
func (n *logNode) Timer(env *sim.Env, tag sim.TimerTag)                {}

// Load rebuilds the pending transactional offsets from the log and resolves those whose
// marker is in it: committed ones become the group's offsets, aborted ones vanish, and
// those still open stay pending (invisible).
func TestLoadResolvesTransactionalOffsets(t *testing.T) {
	w := sim.NewWorld(sim.DefaultConfig(1))
	n := &logNode{}
	w.MustAddNode("n", func() sim.Node { return n })
	w.RunFor(1)
	off := func(tp int32, o int64) wal.Record {
		return encodeOffset("g", proto.PartitionOffset{TP: proto.TP{Topic: "t", Partition: tp}, Offset: o}, "m-1", 1)
	}
	txn := func(pid int64, recs ...wal.Record) wal.Batch {
		return wal.Batch{ProducerID: pid, BaseSequence: wal.NoSequence, Flags: wal.FlagTransactional, Records: recs}
	}
	for _, b := range []wal.Batch{
		{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence, Records: []wal.Record{off(0, 1)}},
		txn(1, off(0, 5)),
		txn(2, off(1, 7)),
		wal.MarkerBatch(1, 0, wal.Marker{Type: wal.ControlCommit}),
		txn(3, off(2, 9)),
		wal.MarkerBatch(3, 0, wal.Marker{Type: wal.ControlAbort}),
		wal.MarkerBatch(4, 0, wal.Marker{Type: wal.ControlCommit}), // nothing pending: no effect
	} {
		if _, err := n.log.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	h := newFakeHost()
	c := Load(h, testConfig(), proto.DefaultShareConfig(), proto.Bugs{}, 0, 0, n.log)
	for _, e := range h.events {
		if _, bad := e.(Unreadable); bad {
			t.Fatalf("Load found unreadable records: %v", e.Detail())
		}
	}
	g := c.Group("g")
	if g == nil {
		t.Fatal("no group g")
	}
	if got := fmt.Sprint(g.Offset(proto.TP{Topic: "t"}), g.Offset(proto.TP{Topic: "t", Partition: 1}), g.Offset(proto.TP{Topic: "t", Partition: 2})); got != "5 -1 -1" {
		t.Errorf("committed offsets t/0 t/1 t/2: %s, want 5 -1 -1", got)
	}
	if got := fmt.Sprint(c.PendingTxnOffsets()); got != "[{2 g {t/1 7 0 m-1 1}}]" {
		t.Errorf("pending: %s, want pid 2's t/1@7", got)
	}
	c.CompleteTxn(newFakeHost(), 2, true)
	if o := g.Offset(proto.TP{Topic: "t", Partition: 1}); o != 7 || len(c.PendingTxnOffsets()) != 0 {
		t.Errorf("after pid 2's COMMIT: t/1 at %d, pending %v", o, c.PendingTxnOffsets())
	}
}
