package broker

import (
	"fmt"
	"testing"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// logNode owns one log, opened in Start, for tests of the state derived from it.
type logNode struct{ log *wal.Log }

func (n *logNode) Start(env *sim.Env) {
	n.log, _, _ = wal.Open(env.Disk(), "data/t-0", wal.DefaultConfig())
}
func (n *logNode) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {}
func (n *logNode) Timer(env *sim.Env, tag sim.TimerTag)                {}

func newTestLog(t *testing.T) *wal.Log {
	t.Helper()
	w := sim.NewWorld(sim.DefaultConfig(1))
	n := &logNode{}
	w.MustAddNode("n", func() sim.Node { return n })
	w.RunFor(1)
	if n.log == nil {
		t.Fatal("log not opened")
	}
	return n.log
}

// appendAll appends the batches as a leader would and records each in ps.
func appendAll(t *testing.T, log *wal.Log, ps *producerStates, batches ...wal.Batch) {
	t.Helper()
	for _, b := range batches {
		res, err := log.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		b.BaseOffset = res.BaseOffset
		ps.record(b)
	}
}

func txnData(pid int64, seq int32) wal.Batch {
	return wal.Batch{ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq, Flags: wal.FlagTransactional, Records: []wal.Record{{Value: []byte("v")}}}
}

func stateText(ps *producerStates) string {
	var open []string
	for _, p := range ps.list {
		if p.txnFirst >= 0 {
			open = append(open, fmt.Sprintf("pid %d from %d", p.pid, p.txnFirst))
		}
	}
	first, ok := ps.firstUnstable(1 << 62)
	return fmt.Sprintf("open %v (%d, first unstable %d %v) aborted %v", open, ps.open, first, ok, ps.aborted)
}

// Truncation rebuilds the transaction state from what is left of the log: cutting below
// an open transaction's first offset removes it, cutting away a marker reopens its
// transaction and takes back its aborted index entry.
func TestTxnStateFollowsTruncation(t *testing.T) {
	log := newTestLog(t)
	var ps producerStates
	appendAll(t, log, &ps,
		txnData(1, 0), // 0: pid 1 opens
		txnData(2, 0), // 1: pid 2 opens
		wal.MarkerBatch(1, 0, wal.Marker{Type: wal.ControlAbort}), // 2: pid 1 aborted 0..2
		txnData(2, 1), // 3
	)
	if got, want := stateText(&ps), "open [pid 2 from 1] (1, first unstable 1 true) aborted [{1 0 2}]"; got != want {
		t.Fatalf("appended:\n got %s\nwant %s", got, want)
	}
	var rebuilt producerStates
	rebuilt.rebuild(log)
	if stateText(&rebuilt) != stateText(&ps) {
		t.Fatalf("rebuilt from the log: %s, kept by appends: %s", stateText(&rebuilt), stateText(&ps))
	}
	if _, err := log.TruncateTo(2); err != nil {
		t.Fatal(err)
	}
	ps.rebuild(log)
	if got, want := stateText(&ps), "open [pid 1 from 0 pid 2 from 1] (2, first unstable 0 true) aborted []"; got != want {
		t.Fatalf("marker truncated away:\n got %s\nwant %s", got, want)
	}
	if _, err := log.TruncateTo(1); err != nil {
		t.Fatal(err)
	}
	ps.rebuild(log)
	if got, want := stateText(&ps), "open [pid 1 from 0] (1, first unstable 0 true) aborted []"; got != want {
		t.Fatalf("pid 2's first offset truncated away:\n got %s\nwant %s", got, want)
	}
}

// A marker ends the producer's transaction here and takes the producer's epoch: the
// epoch's batches are forgotten (the next starts at sequence 0); a data batch from the
// producer without a transaction keeps the sequence rules.
func TestMarkerBumpsEpochAndKeepsSequences(t *testing.T) {
	log := newTestLog(t)
	var ps producerStates
	appendAll(t, log, &ps, txnData(1, 0), wal.MarkerBatch(1, 1, wal.Marker{Type: wal.ControlCommit, CoordinatorEpoch: 4}))
	p := ps.find(1)
	if p.epoch != 1 || len(p.batches) != 0 || p.coordEpoch != 4 || p.txnFirst != -1 || ps.open != 0 || len(ps.aborted) != 0 {
		t.Fatalf("after COMMIT with epoch 1: %+v, open %d, aborted %v", *p, ps.open, ps.aborted)
	}
	next := txnData(1, 0)
	next.ProducerEpoch = 1
	if dup, e := ps.check(next, false, false); dup != -1 || e != proto.None {
		t.Fatalf("the next transaction's first batch (epoch 1, seq 0): dup %d err %s", dup, e)
	}
	plain := wal.Batch{ProducerID: 1, ProducerEpoch: 1, BaseSequence: 0, Records: []wal.Record{{}}}
	appendAll(t, log, &ps, next)
	if _, e := ps.check(plain, false, false); e != proto.InvalidTxnState {
		t.Fatalf("a plain batch inside the producer's open transaction: %s, want INVALID_TXN_STATE", e)
	}
}

func TestRetentionDropsAbortedEntriesBelowLogStart(t *testing.T) {
	ps := producerStates{aborted: []abortedTxn{{pid: 1, first: 0, last: 4}, {pid: 2, first: 3, last: 9}}}
	ps.dropAbortedBelow(5)
	if fmt.Sprint(ps.aborted) != "[{2 3 9}]" {
		t.Fatalf("aborted after log start 5: %v", ps.aborted)
	}
	if got := ps.abortedIn(9, 12); fmt.Sprint(got) != "[{2 3}]" {
		t.Fatalf("abortedIn(9, 12) = %v: an entry whose marker is at the fetch offset overlaps", got)
	}
	if got := ps.abortedIn(10, 12); len(got) != 0 {
		t.Fatalf("abortedIn(10, 12) = %v, want none", got)
	}
}
