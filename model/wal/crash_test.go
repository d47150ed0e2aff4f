package wal

import (
	"strings"
	"testing"

	"mqsim/sim"
)

// appendN appends n two-record batches starting at record number i, returning them with
// their offsets.
func appendN(h *harness, epoch int32, i, n int) []Batch {
	var out []Batch
	for k := 0; k < n; k++ {
		b := batchOf(epoch, sim.Time(k), i+2*k, 2)
		b.BaseOffset = h.append(b).BaseOffset
		out = append(out, b)
	}
	return out
}

func syncAll(h *harness) {
	fsyncAll(h.env(), h.log().Flush())
	h.settle()
}

// checkPrefix asserts the recovered log is exactly a batch-aligned prefix of want with
// its end in [lo, hi].
func checkPrefix(t *testing.T, l *Log, want []Batch, lo, hi int64) {
	t.Helper()
	checkStructure(t, l)
	got := readAll(t, l)
	if len(got) > len(want) {
		t.Fatalf("recovered %d batches, only %d were written", len(got), len(want))
	}
	for i := range got {
		if !sameBatch(got[i], want[i]) {
			t.Fatalf("recovered batch %d differs: %v vs %v", i, &got[i], &want[i])
		}
	}
	end := l.LogEndOffset()
	if end < lo || end > hi {
		t.Fatalf("recovered log end %d outside [%d,%d]", end, lo, hi)
	}
	if len(got) > 0 && got[len(got)-1].NextOffset() != end {
		t.Fatalf("log end %d is not the end of the last batch %d", end, got[len(got)-1].NextOffset())
	}
}

func TestCrashLosesUnsyncedTail(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	want := appendN(h, 0, 0, 20)
	syncAll(h)
	synced := h.log().SyncedOffset()
	if synced != 40 {
		t.Fatalf("synced offset %d after Flush, want 40", synced)
	}
	want = append(want, appendN(h, 0, 40, 12)...) // crosses a roll, never synced
	if h.log().SyncedOffset() != synced {
		t.Fatal("unsynced appends counted as durable")
	}
	rec := h.crashRestart()
	l := h.log()
	checkPrefix(t, l, want, synced, synced)
	// A clean loss leaves nothing to cut inside a segment, but segments created after
	// the sync point and emptied by the crash are cut as a gap or kept as the empty active
	// segment.
	for _, c := range rec.Cuts {
		if c.Reason == "torn tail" || strings.HasPrefix(c.Reason, "corrupt") {
			t.Fatalf("clean loss reported %v", c)
		}
	}
	// The log goes on from the recovered end.
	r := h.append(batchOf(0, 0, 1000, 1))
	if r.BaseOffset != synced {
		t.Fatalf("append after recovery at %d, want %d", r.BaseOffset, synced)
	}
}

func TestCrashFlushEveryBatchLosesNothingSynced(t *testing.T) {
	cfg := smallCfg()
	cfg.Flush = FlushEveryBatch
	h := newHarness(t, 1, cfg)
	want := appendN(h, 0, 0, 30)
	h.settle()
	h.w.Apply(mustAction(t, "torn", "b1", "corrupt")) // nothing unsynced: nothing to tear
	rec := h.crashRestart()
	checkPrefix(t, h.log(), want, 60, 60)
	if len(rec.Cuts) != 0 {
		t.Fatalf("cuts after a crash with everything synced: %v", rec.Cuts)
	}
}

func mustAction(t *testing.T, words ...string) sim.Action {
	t.Helper()
	a, err := sim.ParseAction(words)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A torn tail keeps a random prefix of the unsynced bytes: recovery keeps the whole
// batches in it and cuts the partial one.
func TestCrashTornTail(t *testing.T) {
	sawTorn := 0
	for seed := uint64(1); seed <= 30; seed++ {
		cfg := SmallConfig() // 4 KiB segments: the unsynced tail stays in one segment
		h := newHarness(t, seed, cfg)
		want := appendN(h, 0, 0, 10)
		syncAll(h)
		synced := h.log().SyncedOffset()
		want = append(want, appendN(h, 0, 20, 10)...)
		leo := h.log().LogEndOffset()
		h.disk().TearNextCrash(false)
		rec := h.crashRestart()
		checkPrefix(t, h.log(), want, synced, leo)
		for _, c := range rec.Cuts {
			if c.Reason != "torn tail" {
				t.Fatalf("seed %d: unexpected cut %v", seed, c)
			}
			if c.Offset != h.log().LogEndOffset() {
				t.Fatalf("seed %d: cut at offset %d, log end %d", seed, c.Offset, h.log().LogEndOffset())
			}
			sawTorn++
			if !strings.Contains(rec.String(), "truncated") || !strings.Contains(rec.String(), "torn tail at offset") {
				t.Fatalf("recovery report %q", rec)
			}
		}
	}
	if sawTorn < 10 {
		t.Fatalf("only %d of 30 seeds left a partial batch to cut", sawTorn)
	}
}

// A torn tail with a flipped byte: the CRC finds the damaged batch even when it is whole.
func TestCrashCorruptTail(t *testing.T) {
	sawCRC := 0
	for seed := uint64(1); seed <= 30; seed++ {
		h := newHarness(t, seed, SmallConfig())
		want := appendN(h, 0, 0, 10)
		syncAll(h)
		synced := h.log().SyncedOffset()
		want = append(want, appendN(h, 0, 20, 10)...)
		leo := h.log().LogEndOffset()
		if err := h.w.Apply(mustAction(t, "torn", "b1", "corrupt")); err != nil {
			t.Fatal(err)
		}
		rec := h.crashRestart()
		checkPrefix(t, h.log(), want, synced, leo)
		for _, c := range rec.Cuts {
			if strings.HasPrefix(c.Reason, "corrupt batch (crc") {
				sawCRC++
			}
		}
	}
	if sawCRC < 5 {
		t.Fatalf("only %d of 30 seeds produced a CRC cut", sawCRC)
	}
}

// Bit rot inside a rolled, synced segment: recovery cuts there and drops the segments
// after it, so the log stays a prefix.
func TestRecoveryCutsCorruptRolledSegment(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	want := appendN(h, 0, 0, 40)
	syncAll(h)
	segs := h.log().Segments()
	if len(segs) < 4 {
		t.Fatalf("want several segments, got %d", len(segs))
	}
	victim := segs[1]
	// Corrupt a byte in the third batch of segment 1.
	read1 := func(off int64) Batch {
		t.Helper()
		bs, err := h.log().Read(off, 1)
		if err != nil || len(bs) != 1 {
			t.Fatalf("read %d: %v %v", off, bs, err)
		}
		return bs[0]
	}
	b := read1(victim.BaseOffset)
	third := int64(0)
	for k := 0; k < 2; k++ {
		third += int64(b.EncodedSize())
		b = read1(b.NextOffset())
	}
	if err := h.disk().Corrupt(victim.File, third+batchHeaderSize+1, 1); err != nil {
		t.Fatal(err)
	}
	rec := h.crashRestart()
	l := h.log()
	cutAt := b.BaseOffset
	checkPrefix(t, l, want, cutAt, cutAt)
	if len(rec.Cuts) != len(segs)-1 {
		t.Fatalf("cuts %v, want one in %s and one per later segment", rec.Cuts, victim.File)
	}
	if c := rec.Cuts[0]; c.File != victim.File || c.Position != third || c.Offset != cutAt || !strings.Contains(c.Reason, "crc") {
		t.Fatalf("first cut %v", c)
	}
	for _, c := range rec.Cuts[1:] {
		if c.Reason != "segment after a cut" || h.disk().Exists(c.File) {
			t.Fatalf("later cut %v", c)
		}
	}
	if got := l.Segments(); !got[len(got)-1].Active || got[len(got)-1].File != victim.File {
		t.Fatalf("the cut segment should be active again: %v", got)
	}
}

// A rolled segment that lost its unsynced tail while the next segment was synced: the
// next segment starts after a gap and goes.
func TestRecoveryDropsSegmentAfterGap(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	l := h.log()
	var want []Batch
	for k := 0; k < 40; k++ { // ignore the fsyncs the rolls ask for
		b := batchOf(0, 0, 2*k, 2)
		r, err := l.Append(b)
		if err != nil {
			t.Fatal(err)
		}
		b.BaseOffset = r.BaseOffset
		want = append(want, b)
	}
	segs := l.Segments()
	// fsync only the active segment and the first one: segment 1's bytes are lost.
	h.env().Fsync(segs[0].File)
	h.env().Fsync(segs[len(segs)-1].File)
	h.settle()
	if got := l.SyncedOffset(); got != segs[0].NextOffset {
		t.Fatalf("synced offset %d, want %d (segment 1 not durable)", got, segs[0].NextOffset)
	}
	rec := h.crashRestart()
	checkPrefix(t, h.log(), want, segs[0].NextOffset, segs[0].NextOffset)
	found := false
	for _, c := range rec.Cuts {
		found = found || strings.Contains(c.Reason, "after a gap")
	}
	if !found {
		t.Fatalf("no gap cut in %v", rec.Cuts)
	}
}

// The checkpoint keeps the log start offset and epoch cache across a crash, but only
// once it is synced; a torn rewrite falls back to the previous generation.
func TestCheckpointDurability(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	appendN(h, 0, 0, 5)
	appendN(h, 2, 10, 5)
	syncAll(h)
	d, err := h.log().DeleteBefore(3)
	if err != nil || len(d.Sync) != 1 || !strings.Contains(d.Sync[0], "checkpoint") {
		t.Fatalf("DeleteBefore: %v %v", d, err)
	}
	fsyncAll(h.env(), d.Sync)
	h.settle()
	// Unsynced second move of the start, torn.
	d, _ = h.log().DeleteBefore(7)
	h.disk().TearNextCrash(true)
	rec := h.crashRestart()
	l := h.log()
	if l.LogStartOffset() != 3 {
		t.Fatalf("log start %d after crash, want the synced 3 (recovery: %v)", l.LogStartOffset(), rec)
	}
	if got := l.Epochs(); len(got) != 2 || got[0] != (EpochEntry{0, 3}) || got[1] != (EpochEntry{2, 10}) {
		t.Fatalf("epochs %v", got)
	}
	if !strings.Contains(rec.Checkpoint, "gen") {
		t.Fatalf("no checkpoint used: %q", rec.Checkpoint)
	}
	// Without any checkpoint, the cache is rebuilt from the batches and the start is
	// the first segment's base.
	h.disk().Delete("p0/checkpoint.0")
	h.disk().Delete("p0/checkpoint.1")
	rec = h.crashRestart()
	if l := h.log(); l.LogStartOffset() != 0 || len(l.Epochs()) != 2 || l.Epochs()[0] != (EpochEntry{0, 0}) {
		t.Fatalf("rebuilt: start %d epochs %v", l.LogStartOffset(), l.Epochs())
	}
	if rec.EpochsAdded != 2 || len(rec.Sync) != 1 {
		t.Fatalf("recovery should report the rebuilt cache and ask to sync it: %+v", rec)
	}
}

// Recovery drops epoch cache entries at or past the recovered log end (Kafka's
// truncateFromEnd), e.g. an epoch assigned by a leader that crashed before appending.
func TestRecoveryValidatesEpochCache(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	appendN(h, 1, 0, 3)
	syncAll(h)
	files, _ := h.log().AssignEpoch(4)
	fsyncAll(h.env(), files)
	appendN(h, 4, 6, 3) // unsynced: lost
	h.settle()          // the checkpoint with (4, 6) is synced
	if e, o := h.log().EndOffsetFor(1); e != 1 || o != 6 {
		t.Fatalf("before crash EndOffsetFor(1) = (%d,%d)", e, o)
	}
	rec := h.crashRestart()
	l := h.log()
	if l.LogEndOffset() != 6 || len(l.Epochs()) != 1 || rec.EpochsDropped != 1 {
		t.Fatalf("LEO %d epochs %v recovery %+v", l.LogEndOffset(), l.Epochs(), rec)
	}
	if e, o := l.EndOffsetFor(1); e != 1 || o != 6 {
		t.Fatalf("after crash EndOffsetFor(1) = (%d,%d)", e, o)
	}
}

// Checkpoint start above the recovered end: the log restarts empty at the start offset.
func TestRecoveryStartAboveEnd(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	appendN(h, 0, 0, 3)
	syncAll(h)
	appendN(h, 0, 6, 3)
	d, _ := h.log().DeleteBefore(10)
	fsyncAll(h.env(), d.Sync) // only the checkpoint: the records 6..11 are not durable
	h.settle()
	rec := h.crashRestart()
	l := h.log()
	if l.LogStartOffset() != 10 || l.LogEndOffset() != 10 || len(rec.Cuts) == 0 {
		t.Fatalf("log [%d,%d) recovery %v", l.LogStartOffset(), l.LogEndOffset(), rec)
	}
	checkStructure(t, l)
}
