package checker

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"mqsim/model/history"
)

// txnLog is a correct transactional log: transactions append their records as
// they send, then a marker that commits or aborts them; read_committed
// consumers skip aborted records and markers, read_uncommitted ones return
// every record. Steps run one at a time, so no transaction is open when a
// consumer reads.
type txnLog struct {
	b       *builder
	logs    [2][]txnRecord
	pos     map[int]*[2]int // consumer process -> next log position per partition
	nextVal int
	// keepsAborted plants the bug of that name (proto.Bugs.ReadCommittedKeepsAborted):
	// read_committed polls return aborted records; leaked counts those returned.
	keepsAborted bool
	leaked       int
}

type txnRecord struct {
	offset  int64
	value   string
	aborted bool
	marker  bool
}

func (l *txnLog) tp(p int) history.TopicPartition {
	return history.TopicPartition{Topic: "t", Partition: int32(p)}
}

func (l *txnLog) append(p int, value string) int64 {
	off := int64(len(l.logs[p]))
	l.logs[p] = append(l.logs[p], txnRecord{offset: off, value: value})
	return off
}

func (l *txnLog) transaction(t *rapid.T, proc int) {
	commit := rapid.Bool().Draw(t, "commit")
	var ops []history.MicroOp
	var mine [2][]int
	touched := [2]bool{}
	for range rapid.IntRange(1, 3).Draw(t, "sends") {
		p := rapid.IntRange(0, 1).Draw(t, "partition")
		l.nextVal++
		v := fmt.Sprintf("v%d", l.nextVal)
		off := l.append(p, v)
		mine[p] = append(mine[p], int(off))
		touched[p] = true
		ops = append(ops, mSend(l.tp(p), v, off))
	}
	for p := range 2 {
		if !touched[p] {
			continue
		}
		for _, i := range mine[p] {
			l.logs[p][i].aborted = !commit
		}
		l.logs[p] = append(l.logs[p], txnRecord{offset: int64(len(l.logs[p])), marker: true})
	}
	typ := history.Ok
	if !commit {
		typ = history.Fail
	}
	l.b.txn(proc, fmt.Sprintf("T%d", proc), typ, ops...)
}

func (l *txnLog) poll(t *rapid.T, proc int, rc bool, all bool) {
	pos := l.pos[proc]
	if pos == nil {
		pos = &[2]int{}
		l.pos[proc] = pos
	}
	var reads []history.PartitionRecords
	for p := range 2 {
		n := len(l.logs[p])
		if !all {
			n = min(n, pos[p]+rapid.IntRange(0, 3).Draw(t, "records"))
		}
		var recs []history.Record
		for ; pos[p] < n; pos[p]++ {
			r := l.logs[p][pos[p]]
			if r.marker || (rc && r.aborted && !l.keepsAborted) {
				continue
			}
			if rc && r.aborted {
				l.leaked++
			}
			recs = append(recs, at(r.offset, r.value))
		}
		reads = append(reads, rd(l.tp(p), recs...))
	}
	h := l.b.r.InvokePoll(l.b.tick(), proc, "")
	if rc {
		h = l.b.r.InvokeReadCommittedPoll(l.b.tick(), proc, "")
	}
	l.b.r.Ok(l.b.tick(), h, history.Result{Reads: reads})
}

// genTxnLog runs a transactional log with a read_committed consumer (process
// 10) and a read_uncommitted one (11), each reading in steps, then both to the end.
func genTxnLog(t *rapid.T, keepsAborted bool) *txnLog {
	l := &txnLog{b: newBuilder(), pos: map[int]*[2]int{}, keepsAborted: keepsAborted}
	for range rapid.IntRange(1, 12).Draw(t, "steps") {
		switch rapid.IntRange(0, 3).Draw(t, "step") {
		case 0, 1:
			l.transaction(t, rapid.IntRange(1, 2).Draw(t, "producer"))
		case 2:
			l.nextVal++
			v := fmt.Sprintf("v%d", l.nextVal)
			p := rapid.IntRange(0, 1).Draw(t, "partition")
			l.b.ok(3, l.tp(p), v, l.append(p, v))
		case 3:
			c := rapid.IntRange(0, 1).Draw(t, "consumer")
			l.poll(t, 10+c, c == 0, false)
		}
	}
	l.poll(t, 10, true, true)
	l.poll(t, 11, false, true)
	return l
}

// The planted bug is found whenever it showed: a read_committed poll that
// returned an aborted record is a G1a violation.
func TestPropertyReadCommittedKeepsAbortedIsFound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genTxnLog(t, true)
		rep, err := Check(l.b.history(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if found := slices.ContainsFunc(rep.Violations, func(v Violation) bool { return v.Anomaly == G1a }); found != (l.leaked > 0) {
			t.Fatalf("%d aborted records returned at read_committed, G1a found: %v\n%s", l.leaked, found, rep)
		}
	})
}

// A correct transactional log, read at both isolation levels, shows no
// violation: aborted writes read at read_uncommitted are allowed, and the
// writes a read_committed consumer passes over are no skip.
func TestPropertyCorrectTxnLogHasNoViolation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := genTxnLog(t, false)
		rep, err := Check(l.b.history(), Options{Promise: AtLeastOnce})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Result != Valid {
			t.Fatalf("a correct transactional log was judged %s:\n%s", rep.Result, rep)
		}
		for _, v := range rep.Allowed {
			if v.Anomaly != G1a {
				t.Fatalf("allowed %s in a log without interleaving:\n%s", v.Anomaly, rep)
			}
		}
	})
}
