package checker

import (
	"testing"

	"mqsim/model/history"
)

// seekTo records an ok seek of proc (group may be empty) moving tp to offset; reset
// says the group tool did it.
func (b *builder) seekTo(proc int, group string, tp history.TopicPartition, offset int64, reset bool) {
	h := b.r.InvokeSeek(b.tick(), proc, group, []history.PartitionOffset{{TopicPartition: tp, Offset: history.NoOffset}}, reset)
	b.r.Ok(b.tick(), h, history.Result{SeekOffsets: []history.PartitionOffset{{TopicPartition: tp, Offset: offset}}})
}

// fourValues sends a, b, c, d to t0 at offsets 0-3.
func fourValues() *builder {
	b := newBuilder()
	for i, v := range []string{"a", "b", "c", "d"} {
		b.ok(1, t0, v, int64(i))
	}
	return b
}

// A manual consumer reads a-d, seeks back to 1 and reads b and c again: declared,
// nothing reported. It then seeks forward to 3, over d's predecessor c read just now,
// and reads d: declared too.
func TestSeekBackIsADeclaredReRead(t *testing.T) {
	b := fourValues()
	b.assign(2, history.Ok, false, t0)
	b.read(2, t0, at(0, "a"), at(1, "b"), at(2, "c"), at(3, "d"))
	b.seekTo(2, "", t0, 1, false)
	b.read(2, t0, at(1, "b"), at(2, "c"))
	b.seekTo(2, "", t0, 3, false)
	b.read(2, t0, at(3, "d"))
	r, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, nil)
}

// The tricky negatives: a re-read with no seek is still nonmonotonic-poll; after a seek
// to 2, starting at 1 goes back before the seek, and starting at 3 skips c.
func TestSeekDoesNotExcuseOtherMoves(t *testing.T) {
	b := fourValues()
	b.assign(2, history.Ok, false, t0)
	b.read(2, t0, at(0, "a"), at(1, "b"))
	b.read(2, t0, at(0, "a")) // no seek: a re-read
	b.seekTo(2, "", t0, 2, false)
	b.read(2, t0, at(1, "b"), at(2, "c")) // before the seek's offset
	b.seekTo(2, "", t0, 2, false)
	b.read(2, t0, at(3, "d")) // past it, over c
	r, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, []want{
		{anomaly: NonmonotonicPoll, tp: t0, offsets: []int64{1, 0}, values: []string{"b", "a"}},
		{anomaly: NonmonotonicPoll, tp: t0, offsets: []int64{2, 1}, values: []string{"b"}},
		{anomaly: PollSkip, tp: t0, offsets: []int64{2, 3}, values: []string{"c"}},
	})
}

// Group g reads a-d, the group tool resets g to offset 2 (below the committed 4), a new
// member reads c and d again and commits 4: a declared re-read of c and d, and no
// nonmonotonic-commit. Group h re-reads b with no reset: still a duplicate.
func TestResetIsADeclaredReRead(t *testing.T) {
	b := fourValues()
	b.poll(2, "g", history.Ok, rd(t0, at(0, "a"), at(1, "b"), at(2, "c"), at(3, "d")))
	b.commit(2, "g", t0, 4)
	b.seekTo(9, "g", t0, 2, true)
	b.commit(3, "g", t0, 3) // the new member's first commit, below the old 4
	b.poll(3, "g", history.Ok, rd(t0, at(2, "c"), at(3, "d")))
	b.poll(4, "h", history.Ok, rd(t0, at(0, "a"), at(1, "b"), at(2, "c"), at(3, "d")))
	b.poll(5, "h", history.Ok, rd(t0, at(1, "b")))
	h := b.history()
	r, err := CheckDelivery(h, ExactlyOnce)
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, []want{{anomaly: Redelivered, tp: t0, group: "h", values: []string{"b"}}})
	g := GroupDelivery{Group: "g", Values: 4, Once: 4, Replayed: 2, Observed: ObservedExactlyOnce}
	if len(r.Delivery) != 2 || r.Delivery[0] != g {
		t.Errorf("delivery %+v, want g %+v", r.Delivery, g)
	}
	if got, want := g.line(), "group g: 4 acknowledged values read 0 times: 0, once: 4, more: 0; this run: each value read once; declared by a seek or offset reset: 2 read again, 0 skipped"; got != want {
		t.Errorf("line\n got %s\nwant %s", got, want)
	}
	lr, err := CheckLog(h, LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hasAnomaly(lr, NonmonotonicCommit, t0) {
		t.Errorf("a commit below the old one after a reset was reported:\n%s", lr)
	}
}

// A reset that reads twice within the new pass is a duplicate; one that jumps forward
// declares what it jumped over skipped, not lost; a failed reset declares nothing.
func TestResetPassesAndSkips(t *testing.T) {
	b := fourValues()
	b.poll(2, "g", history.Ok, rd(t0, at(0, "a")))
	b.seekTo(9, "g", t0, 3, true) // skips b and c
	b.poll(3, "g", history.Ok, rd(t0, at(3, "d")))
	b.poll(3, "g", history.Ok, rd(t0, at(3, "d"))) // twice in one pass
	failed := b.r.InvokeSeek(b.tick(), 9, "g", []history.PartitionOffset{{TopicPartition: t0, Offset: 0}}, true)
	b.r.Fail(b.tick(), failed, history.Result{Error: "group not empty"})
	b.poll(3, "g", history.Ok, rd(t0, at(0, "a")))
	r, err := CheckDelivery(b.history(), ExactlyOnce)
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, []want{{anomaly: Redelivered, tp: t0, group: "g", values: []string{"a", "d"}}})
	g := GroupDelivery{Group: "g", Values: 4, More: 2, Skipped: 2, Observed: ObservedAtLeastOnce}
	if len(r.Delivery) != 1 || r.Delivery[0] != g {
		t.Errorf("delivery %+v, want %+v", r.Delivery, g)
	}
}

// A reader that starts at a declared offset (a group failed over to a replica, reset to
// its translated checkpoint) and reads c and d passes over a and b on purpose: no lost
// write. Without the declaration (the planted bug: a reader that skipped them on its
// own) a and b are lost writes, and so they are when another reader read from before
// the declared start and still never saw b.
func TestDeclaredStartPassesOverEarlierValues(t *testing.T) {
	b := fourValues()
	b.seekTo(9, "g", t0, 2, true)
	b.poll(2, "g", history.Ok, rd(t0, at(2, "c"), at(3, "d")))
	if rep := logOf(t, b); hasAnomaly(rep, LostWrite, t0) {
		t.Fatalf("a declared start reported as a loss: %v", rep.Violations)
	}

	b = fourValues()
	b.poll(2, "g", history.Ok, rd(t0, at(2, "c"), at(3, "d")))
	if rep := logOf(t, b); !hasAnomaly(rep, LostWrite, t0) {
		t.Fatal("an undeclared skip over a and b is not reported")
	}

	b = fourValues()
	b.seekTo(9, "g", t0, 2, true)
	b.read(3, t0, at(0, "a"))
	b.poll(2, "g", history.Ok, rd(t0, at(2, "c"), at(3, "d")))
	if rep := logOf(t, b); !hasAnomaly(rep, LostWrite, t0) {
		t.Fatal("b, never read by a reader that read a before it, is not reported")
	}
}

func logOf(t *testing.T, b *builder) Report {
	t.Helper()
	r, err := CheckLog(b.history(), LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
