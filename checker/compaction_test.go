package checker

import (
	"testing"

	"mqsim/model/history"
)

// TestCompactedLostWriteIsAllowed: k1's first value, superseded by a later write of k1,
// and k2's value, superseded by nothing, are both never read while later offsets are.
// Without compaction both are lost-writes; with it, only k2's value is a violation (the
// cleaner may remove a1, it may not remove b1), and a1 is reported as allowed.
func TestCompactedLostWriteIsAllowed(t *testing.T) {
	tp := history.TopicPartition{Topic: "t", Partition: 0}
	b := newBuilder()
	keyed := func(key, value string, offset int64) {
		h := b.r.InvokeSend(b.tick(), 0, tp, key, value)
		b.complete(h, history.Ok, history.Result{Offset: offset})
	}
	keyed("k1", "a1", 0)
	keyed("k2", "b1", 1)
	keyed("k1", "a2", 2)
	keyed("k3", "c1", 3)
	b.read(1, tp, at(2, "a2"), at(3, "c1"))

	plain, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, plain.Violations, []want{{anomaly: LostWrite, tp: tp, values: []string{"a1"}}, {anomaly: LostWrite, tp: tp, values: []string{"b1"}}})

	compacted, err := CheckLog(b.history(), LogOptions{Compacted: true})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, compacted.Violations, []want{{anomaly: LostWrite, tp: tp, values: []string{"b1"}}})
	expectExactly(t, compacted.Allowed, []want{{anomaly: LostWrite, tp: tp, values: []string{"a1"}}})
}

// TestCompactedPollSkip: a consumer reads k1's first value, then, after the cleaner ran,
// resumes past a2 (superseded by a3) and past b1 (a tombstone's name, superseded by
// nothing). Skipping a2 is what compaction promises; skipping b1 is not, and its
// poll-skip stays a violation.
func TestCompactedPollSkip(t *testing.T) {
	tp := history.TopicPartition{Topic: "t", Partition: 0}
	b := newBuilder()
	keyed := func(key, value string, offset int64) {
		h := b.r.InvokeSend(b.tick(), 0, tp, key, value)
		b.complete(h, history.Ok, history.Result{Offset: offset})
	}
	keyed("k1", "a1", 0)
	keyed("k1", "a2", 1)
	keyed("k1", "a3", 2)
	keyed("k2", "b1", 3)
	keyed("k3", "c1", 4)
	b.read(1, tp, at(0, "a1"))
	b.read(1, tp, at(2, "a3")) // a2 compacted away: allowed
	b.read(2, tp, at(0, "a1"), at(1, "a2"), at(2, "a3"), at(3, "b1"), at(4, "c1"))
	b.read(1, tp, at(4, "c1")) // b1 skipped: a violation
	r, err := CheckLog(b.history(), LogOptions{Compacted: true})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, []want{{anomaly: PollSkip, tp: tp, values: []string{"b1"}}})
	expectExactly(t, r.Allowed, []want{{anomaly: PollSkip, tp: tp, values: []string{"a2"}}})
	r, err = CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, []want{{anomaly: PollSkip, tp: tp, values: []string{"a2"}}, {anomaly: PollSkip, tp: tp, values: []string{"b1"}}})
}
