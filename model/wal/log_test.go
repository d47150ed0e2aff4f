package wal

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/sim"
)

func smallCfg() Config {
	c := SmallConfig()
	c.SegmentBytes = 600
	c.IndexIntervalBytes = 150
	return c
}

func TestAppendReadAcrossRolls(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	var want []Batch
	for i := 0; i < 60; i++ {
		b := batchOf(0, sim.Time(i), i*3, 1+i%3)
		res := h.append(b)
		b.BaseOffset = res.BaseOffset
		want = append(want, b)
		if res.NextOffset != b.NextOffset() {
			t.Fatalf("append %d: next %d, want %d", i, res.NextOffset, b.NextOffset())
		}
	}
	l := h.log()
	checkStructure(t, l)
	segs := l.Segments()
	if len(segs) < 4 {
		t.Fatalf("expected several rolls with 600-byte segments, got %d segments", len(segs))
	}
	for i, s := range segs {
		if s.File != SegmentName("p0", s.BaseOffset) || !strings.HasSuffix(s.File, ".log") || len(s.File) != len("p0/")+24 {
			t.Fatalf("segment file %q not named by its base offset %d", s.File, s.BaseOffset)
		}
		if !s.Active && s.SizeBytes > l.Config().SegmentBytes {
			t.Fatalf("rolled segment %s is %d bytes, over SegmentBytes", s.File, s.SizeBytes)
		}
		if s.Active != (i == len(segs)-1) {
			t.Fatalf("segment %d active=%v", i, s.Active)
		}
		if !s.Active && s.IndexEntries == 0 {
			t.Fatalf("segment %s of %d bytes has no index entry (interval 150)", s.File, s.SizeBytes)
		}
	}
	got := readAll(t, l)
	if len(got) != len(want) {
		t.Fatalf("read %d batches, appended %d", len(got), len(want))
	}
	for i := range want {
		if !sameBatch(got[i], want[i]) {
			t.Fatalf("batch %d: got %v want %v", i, &got[i], &want[i])
		}
	}
	// Every offset finds the batch that holds it.
	for _, b := range want {
		for off := b.BaseOffset; off < b.NextOffset(); off++ {
			bs, err := l.Read(off, 1)
			if err != nil || len(bs) != 1 || !sameBatch(bs[0], b) {
				t.Fatalf("read %d: got %v err %v, want %v", off, bs, err, &b)
			}
		}
	}
}

func TestRollBySegmentAge(t *testing.T) {
	cfg := SmallConfig()
	cfg.SegmentAge = time.Second
	h := newHarness(t, 1, cfg)
	h.append(batchOf(0, sim.Time(0), 0, 1))
	if r := h.append(batchOf(0, sim.Time(time.Second), 1, 1)); r.Rolled != "" {
		t.Fatalf("rolled at exactly SegmentAge: %q", r.Rolled)
	}
	r := h.append(batchOf(0, sim.Time(time.Second+1), 2, 1))
	if r.Rolled != "segment.ms" || r.File != SegmentName("p0", 2) {
		t.Fatalf("want a segment.ms roll into %s, got %q into %s", SegmentName("p0", 2), r.Rolled, r.File)
	}
	// A follower catching up with old batches does not roll on every batch: age is
	// measured between batch timestamps, not against the wall.
	r = h.append(batchOf(0, sim.Time(time.Second+2), 3, 1))
	if r.Rolled != "" {
		t.Fatalf("unexpected roll %q", r.Rolled)
	}
}

func TestRollBySizeAndRolledSegmentFlushed(t *testing.T) {
	cfg := smallCfg()
	h := newHarness(t, 1, cfg)
	var rolled AppendResult
	for i := 0; i < 40 && rolled.Rolled == ""; i++ {
		rolled = h.append(batchOf(0, 0, i, 2))
	}
	if rolled.Rolled != "segment.bytes" {
		t.Fatalf("no size roll")
	}
	// Under FlushNever only the rolled segment is asked for (Kafka flushes on roll).
	first := SegmentName("p0", 0)
	if !slices.Equal(rolled.Sync, []string{first}) {
		t.Fatalf("roll under FlushNever wants %v, want [%s]", rolled.Sync, first)
	}
	// A batch bigger than a segment still gets appended (alone in its segment).
	big := Batch{LeaderEpoch: 0, Records: []Record{{Value: make([]byte, 2*int(cfg.SegmentBytes))}}}
	r := h.append(big)
	next := h.append(batchOf(0, 0, 100, 1))
	if r.Position != 0 || next.Position != 0 {
		t.Fatalf("big batch at %d, next at %d: each should start a segment", r.Position, next.Position)
	}
}

func TestReadMaxBytesAndCopies(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	var sizes []int64
	for i := 0; i < 30; i++ {
		sizes = append(sizes, h.append(batchOf(0, 0, i, 1)).Bytes)
	}
	l := h.log()
	bs, err := l.Read(0, 0)
	if err != nil || len(bs) != 1 {
		t.Fatalf("maxBytes 0 must still return one batch: %d, %v", len(bs), err)
	}
	budget := sizes[0] + sizes[1] + sizes[2] + sizes[3]/2
	bs, err = l.Read(0, int(budget))
	if err != nil || len(bs) != 3 {
		t.Fatalf("budget of 3.5 batches returned %d, %v", len(bs), err)
	}
	bs, _ = l.Read(5, 1<<20)
	if len(bs) != 25 || bs[0].BaseOffset != 5 {
		t.Fatalf("read from 5 across segments: %d batches from %d", len(bs), bs[0].BaseOffset)
	}
	// Returned data is a copy: scribbling on it changes nothing in the log.
	bs[0].Records[0].Value[0] = 'X'
	again, _ := l.Read(5, 1)
	if again[0].Records[0].Value[0] == 'X' {
		t.Fatal("Read handed out memory the log reads from")
	}
	// And a read result survives later truncation of the log.
	keep, _ := l.Read(20, 1)
	want := string(keep[0].Records[0].Value)
	if _, err := l.TruncateTo(10); err != nil {
		t.Fatal(err)
	}
	h.append(batchOf(0, 0, 500, 1))
	if string(keep[0].Records[0].Value) != want {
		t.Fatal("read result changed after truncate and append")
	}
}

func TestReadOutOfRange(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	for i := 0; i < 5; i++ {
		h.append(batchOf(0, 0, i, 2))
	}
	l := h.log()
	if _, err := l.Read(11, 100); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past end: %v", err)
	}
	if bs, err := l.Read(10, 100); err != nil || bs != nil {
		t.Fatalf("read at end: %v %v", bs, err)
	}
	if _, err := l.DeleteBefore(4); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(3, 100); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	bs, err := l.Read(4, 1)
	if err != nil || bs[0].BaseOffset != 4 {
		t.Fatalf("read at start: %v %v", bs, err)
	}
}

func TestAppendRejects(t *testing.T) {
	cfg := smallCfg()
	cfg.MaxBatchBytes = 100
	h := newHarness(t, 1, cfg)
	l := h.log()
	if _, err := l.Append(Batch{LeaderEpoch: 0}); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("empty batch: %v", err)
	}
	if _, err := l.Append(batchOf(-1, 0, 0, 1)); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("negative epoch: %v", err)
	}
	if _, err := l.Append(Batch{Records: []Record{{Value: make([]byte, 100)}}}); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("large batch: %v", err)
	}
	b := batchOf(0, 0, 0, 1)
	b.BaseOffset = 3
	if _, err := l.AppendReplica(b); !errors.Is(err, ErrUnexpectedOffset) {
		t.Fatalf("replica gap: %v", err)
	}
	b.BaseOffset = 0
	if _, err := l.AppendReplica(b); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 1 || l.SizeBytes() != h.disk().Size(SegmentName("p0", 0)) {
		t.Fatal("rejected appends left traces")
	}
	if _, _, err := Open(h.disk(), "p0/", cfg); err == nil {
		t.Fatal("dir with trailing slash accepted")
	}
	bad := cfg
	bad.SegmentBytes = 0
	if _, _, err := Open(h.disk(), "p1", bad); err == nil || !strings.Contains(err.Error(), "SegmentBytes") {
		t.Fatalf("bad config: %v", err)
	}
}

func TestTruncateTo(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	// Epoch 0: offsets 0..19 in batches of 2; epoch 2: 20..39.
	for i := 0; i < 20; i++ {
		h.append(batchOf(int32(i/10)*2, 0, 2*i, 2))
	}
	l := h.log()
	nseg := len(l.Segments())
	if nseg < 3 {
		t.Fatalf("want several segments, got %d", nseg)
	}
	// Inside a batch: the whole batch goes.
	tr, err := l.TruncateTo(31)
	if err != nil || tr.NewEnd != 30 || l.LogEndOffset() != 30 {
		t.Fatalf("truncate 31: %v %v", tr, err)
	}
	checkStructure(t, l)
	if got := readAll(t, l); got[len(got)-1].NextOffset() != 30 {
		t.Fatal("records above 30 still readable")
	}
	// Into an earlier segment: later segments deleted, that one active again.
	tr, err = l.TruncateTo(6)
	if err != nil || l.LogEndOffset() != 6 || tr.SegmentsDeleted == 0 {
		t.Fatalf("truncate 6: %v %v", tr, err)
	}
	checkStructure(t, l)
	for _, s := range l.Segments() {
		if s.BaseOffset > 6 {
			t.Fatalf("segment %s above the cut survived", s.File)
		}
	}
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{0, 0}}) {
		t.Fatalf("epoch 2 started at 20, above the cut, must be gone: %v", got)
	}
	// Appending continues at the cut, in the cut segment.
	r := h.append(batchOf(3, 0, 100, 1))
	if r.BaseOffset != 6 {
		t.Fatalf("append after truncate at %d", r.BaseOffset)
	}
	checkStructure(t, l)
	// At or above the end: nothing.
	if tr, _ := l.TruncateTo(100); tr.Bytes != 0 || l.LogEndOffset() != 7 {
		t.Fatalf("truncate above end: %v", tr)
	}
}

func TestTruncateBelowFirstSegmentResets(t *testing.T) {
	cfg := smallCfg()
	cfg.RetentionBytes = 0
	h := newHarness(t, 1, cfg)
	for i := 0; i < 30; i++ {
		h.append(batchOf(1, 0, i, 2))
	}
	l := h.log()
	l.ApplyRetention(0, l.LogEndOffset())
	start := l.LogStartOffset()
	if start == 0 {
		t.Fatal("retention deleted nothing")
	}
	tr, err := l.TruncateTo(start - 1)
	if err != nil || l.LogEndOffset() != start-1 || l.LogStartOffset() != start-1 || len(l.Segments()) != 1 || len(l.Epochs()) != 0 {
		t.Fatalf("truncate below first segment: %v %v, log [%d,%d) %d segments", tr, err, l.LogStartOffset(), l.LogEndOffset(), len(l.Segments()))
	}
	checkStructure(t, l)
}

func TestEndOffsetFor(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	l := h.log()
	if e, o := l.EndOffsetFor(0); e != UndefinedEpoch || o != UndefinedOffset {
		t.Fatalf("empty cache: (%d,%d)", e, o)
	}
	// KAFKA-6361 / KIP-279 (reference R8): A leads epoch 1 for [0..20], then epoch 3
	// from 21. B asks about epoch 2, which A never had.
	h.append(batchOf(1, 0, 0, 11))  // 0..10
	h.append(batchOf(1, 0, 11, 10)) // 11..20
	h.append(batchOf(3, 0, 21, 10)) // 21..30
	type q struct {
		req   int32
		epoch int32
		end   int64
	}
	check := func(stage string, cases []q) {
		t.Helper()
		for _, c := range cases {
			if e, o := l.EndOffsetFor(c.req); e != c.epoch || o != c.end {
				t.Errorf("%s: EndOffsetFor(%d) = (%d,%d), want (%d,%d)", stage, c.req, e, o, c.epoch, c.end)
			}
		}
	}
	check("R8", []q{
		{UndefinedEpoch, UndefinedEpoch, UndefinedOffset},
		{0, 0, 0},  // below every known epoch: (requested, start of the lowest)
		{1, 1, 21}, // ends where epoch 3 starts
		{2, 1, 21}, // KIP-279: the largest epoch <= 2 is 1, which ended at 21
		{3, 3, 31}, // latest epoch: the log end
		{4, UndefinedEpoch, UndefinedOffset},
	})
	// A new leader of epoch 5 assigns its epoch before appending: epoch 3 now ends at 31.
	if _, err := l.AssignEpoch(5); err != nil {
		t.Fatal(err)
	}
	check("assign", []q{{3, 3, 31}, {4, 3, 31}, {5, 5, 31}})
	// Truncation below epoch 3's start forgets epochs 3 and 5: epoch 1 is the latest
	// again and ends at the new log end.
	if _, err := l.TruncateTo(15); err != nil {
		t.Fatal(err)
	}
	check("truncated", []q{{1, 1, 11}, {3, UndefinedEpoch, UndefinedOffset}, {0, 0, 0}})
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{1, 0}}) {
		t.Fatalf("cache after truncate: %v", got)
	}
	// A follower appending an older epoch than one it assigned (it led epoch 6 without
	// writing, then follows the epoch-7 leader whose log has epoch 4 batches here): the
	// newer entry at the same offset goes, as Kafka's assign does.
	l.AssignEpoch(6)
	b := batchOf(4, 0, 0, 2)
	b.BaseOffset = l.LogEndOffset()
	if _, err := l.AppendReplica(b); err != nil {
		t.Fatal(err)
	}
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{1, 0}, {4, 11}}) {
		t.Fatalf("cache after older-epoch replica append: %v", got)
	}
	// Log start moves into epoch 4: the first entry is moved up to the log start.
	if _, err := l.DeleteBefore(12); err != nil {
		t.Fatal(err)
	}
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{4, 12}}) {
		t.Fatalf("cache after DeleteBefore(12): %v", got)
	}
	check("start moved", []q{{1, 1, 12}, {4, 4, 13}})
}

func TestEpochCacheUnit(t *testing.T) {
	var c epochCache
	c, _ = c.assign(1, 0)
	c, _ = c.assign(2, 10)
	c, ch := c.assign(2, 15)
	if ch || !slices.Equal(c, epochCache{{1, 0}, {2, 10}}) {
		t.Fatalf("same epoch later start must not change: %v", c)
	}
	c, ch = c.assign(2, 5) // same epoch, earlier start: replaces
	if !ch || !slices.Equal(c, epochCache{{1, 0}, {2, 5}}) {
		t.Fatalf("same epoch earlier start: %v", c)
	}
	c, _ = c.assign(3, 20)
	c, _ = c.assign(4, 8) // higher epoch at a lower offset removes entries at >= 8
	if !slices.Equal(c, epochCache{{1, 0}, {2, 5}, {4, 8}}) {
		t.Fatalf("non-monotonic assign: %v", c)
	}
	c, _ = c.truncateFromEnd(8)
	if !slices.Equal(c, epochCache{{1, 0}, {2, 5}}) {
		t.Fatalf("truncateFromEnd(8): %v", c)
	}
	c, _ = c.truncateFromStart(7)
	if !slices.Equal(c, epochCache{{2, 7}}) {
		t.Fatalf("truncateFromStart(7): %v", c)
	}
	_, ch = c.truncateFromStart(7)
	if ch {
		t.Fatal("idempotent truncateFromStart reported a change")
	}
}

func TestRetentionBySize(t *testing.T) {
	cfg := smallCfg()
	cfg.RetentionBytes = 1500
	h := newHarness(t, 1, cfg)
	for i := 0; i < 60; i++ {
		h.append(batchOf(0, 0, i, 2))
	}
	l := h.log()
	before := l.Segments()
	// Nothing above the limit offset goes: with limit 0 nothing is deletable.
	if d := l.ApplyRetention(0, 0); len(d.Segments) != 0 {
		t.Fatalf("retention ignored the limit offset: %v", d)
	}
	d := l.ApplyRetention(0, l.LogEndOffset())
	if len(d.Segments) == 0 {
		t.Fatal("retention.bytes deleted nothing")
	}
	if l.SizeBytes() < cfg.RetentionBytes {
		t.Fatalf("deleted below RetentionBytes: %d left", l.SizeBytes())
	}
	if l.SizeBytes()-l.Segments()[0].SizeBytes >= cfg.RetentionBytes && len(l.Segments()) > 1 {
		t.Fatalf("one more segment could go: %d bytes, oldest %d", l.SizeBytes(), l.Segments()[0].SizeBytes)
	}
	for i, s := range d.Segments {
		if s != before[i] || d.Reasons[i] != "retention.bytes" || h.disk().Exists(s.File) {
			t.Fatalf("deleted %v (%s), want oldest first %v", s, d.Reasons[i], before[i])
		}
	}
	if l.LogStartOffset() != l.Segments()[0].BaseOffset || d.LogStartOffset != l.LogStartOffset() {
		t.Fatalf("log start %d, first segment %d", l.LogStartOffset(), l.Segments()[0].BaseOffset)
	}
	checkStructure(t, l)
	// Retention 0 still keeps the active segment.
	l.cfg.RetentionBytes = 0
	l.ApplyRetention(0, l.LogEndOffset())
	if segs := l.Segments(); len(segs) != 1 || !segs[0].Active || segs[0].SizeBytes == 0 {
		t.Fatalf("retention touched the active segment: %v", segs)
	}
}

func TestRetentionByTime(t *testing.T) {
	cfg := smallCfg()
	cfg.RetentionAge = time.Minute
	h := newHarness(t, 1, cfg)
	for i := 0; i < 60; i++ {
		h.append(batchOf(0, sim.Time(time.Duration(i)*time.Second), i, 2))
	}
	l := h.log()
	segs := l.Segments()
	if len(segs) < 4 {
		t.Fatalf("want several segments, got %d", len(segs))
	}
	// At segs[1].MaxTimestamp + 1m + 1ns exactly segments 0 and 1 are expired.
	now := segs[1].MaxTimestamp.Add(time.Minute + 1)
	d := l.ApplyRetention(now, l.LogEndOffset())
	if len(d.Segments) != 2 || d.Segments[1] != segs[1] || d.Reasons[0] != "retention.ms" {
		t.Fatalf("time retention: %v", d)
	}
	// Far in the future everything but the active segment goes.
	l.ApplyRetention(sim.Time(time.Hour), l.LogEndOffset())
	if got := l.Segments(); len(got) != 1 || got[0] != segs[len(segs)-1] {
		t.Fatalf("after an hour: %v", got)
	}
	checkStructure(t, l)
}

func TestFlushPolicies(t *testing.T) {
	for _, pol := range []FlushPolicy{FlushEveryBatch, FlushInterval(5 * time.Millisecond), FlushNever} {
		t.Run(pol.String(), func(t *testing.T) {
			cfg := SmallConfig()
			cfg.Flush = pol
			h := newHarness(t, 1, cfg)
			r := h.append(batchOf(0, 0, 0, 3))
			wantSync := pol == FlushEveryBatch
			if got := slices.Contains(r.Sync, r.File); got != wantSync {
				t.Fatalf("Sync=%v", r.Sync)
			}
			h.settle()
			l := h.log()
			if wantSync {
				if l.SyncedOffset() != 3 || !l.Durable(2) {
					t.Fatalf("synced offset %d after fsync", l.SyncedOffset())
				}
			} else if l.SyncedOffset() != 0 || l.Durable(0) {
				t.Fatalf("synced offset %d without fsync", l.SyncedOffset())
			}
			files := l.Flush()
			if wantSync != (len(files) == 0) {
				t.Fatalf("Flush listed %v", files)
			}
			if again := l.Flush(); len(again) != 0 {
				t.Fatalf("Flush listed %v again before the fsync completed", again)
			}
			fsyncAll(h.env(), files)
			h.settle()
			if l.SyncedOffset() != 3 {
				t.Fatalf("synced offset %d after Flush", l.SyncedOffset())
			}
		})
	}
	if p, err := ParseFlushPolicy("interval=5ms"); err != nil || p != FlushInterval(5*time.Millisecond) {
		t.Fatalf("parse: %v %v", p, err)
	}
	for _, s := range []string{"never", "every-batch", "interval=250ms"} {
		p, err := ParseFlushPolicy(s)
		if err != nil || p.String() != s {
			t.Fatalf("%s: %v %v", s, p, err)
		}
	}
	if _, err := ParseFlushPolicy("interval=5"); err == nil {
		t.Fatal("interval without unit accepted")
	}
}

// SyncedOffset stops at the last whole batch inside the synced prefix.
func TestSyncedOffsetAtBatchBoundary(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	h.append(batchOf(0, 0, 0, 2))
	h.append(batchOf(0, 0, 2, 2))
	l := h.log()
	fsyncAll(h.env(), l.Flush())
	h.append(batchOf(0, 0, 4, 2))
	h.settle()
	if got := l.SyncedOffset(); got != 4 {
		t.Fatalf("synced offset %d, want 4", got)
	}
	if off, ours := l.OnSynced("p0/checkpoint.0"); !ours || off != 4 {
		t.Fatalf("OnSynced: %d %v", off, ours)
	}
	if _, ours := l.OnSynced("p1/00000000000000000000.log"); ours {
		t.Fatal("another partition's file claimed")
	}
}

// A leader that assigned an epoch and was replaced before appending drops that epoch when
// it truncates to its own end as a follower.
func TestNoOpTruncationDropsAnEpochWithoutRecords(t *testing.T) {
	h := newHarness(t, 1, smallCfg())
	h.append(batchOf(0, 0, 0, 1))
	l := h.log()
	if _, err := l.AssignEpoch(1); err != nil {
		t.Fatal(err)
	}
	if l.LatestEpoch() != 1 {
		t.Fatalf("latest epoch %d, want 1", l.LatestEpoch())
	}
	if _, err := l.TruncateTo(l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if l.LatestEpoch() != 0 || l.LogEndOffset() != 1 {
		t.Errorf("after no-op truncation: latest epoch %d (want 0), LEO %d (want 1)", l.LatestEpoch(), l.LogEndOffset())
	}
}

func TestCompressedBatchIsStoredAtItsCompressedSize(t *testing.T) {
	h := newHarness(t, 1, SmallConfig())
	// A codec that halves what it compresses (rounding up), as a stand-in for the
	// broker's table.
	h.log().SetCompression(func(b *Batch, n int) int { return (n + 1) / 2 })
	plain := h.append(batchOf(0, 0, 0, 3))
	if plain.Stored != plain.Bytes {
		t.Errorf("an uncompressed batch of %dB is stored as %dB, want as encoded", plain.Bytes, plain.Stored)
	}
	b := batchOf(0, 1, 3, 3)
	b.SetCodec(1)
	zipped := h.append(b)
	want := batchHeaderSize + (zipped.Bytes-batchHeaderSize+1)/2
	if zipped.Stored != want {
		t.Errorf("a compressed batch of %dB is stored as %dB, want its %dB header and half of the rest: %dB",
			zipped.Bytes, zipped.Stored, batchHeaderSize, want)
	}
	file := h.log().Segments()[0].File
	if got := h.disk().StoredSize(file); got != plain.Stored+zipped.Stored {
		t.Errorf("the segment is stored as %dB, want %d+%d", got, plain.Stored, zipped.Stored)
	}
	if got := h.disk().Size(file); got != plain.Bytes+zipped.Bytes {
		t.Errorf("the segment keeps %dB, want every byte appended: %d+%d", got, plain.Bytes, zipped.Bytes)
	}
	// What is read back is the batch as it came.
	got, err := h.log().Read(3, 1<<20)
	if err != nil || len(got) != 1 || got[0].Codec() != 1 || len(got[0].Records) != 3 {
		t.Errorf("read back %d batches (%v), want the compressed batch of 3 records", len(got), err)
	}
}

// A batch read again is the batch decoded from the same bytes (a leader's followers read
// it one after the other); bytes changed since at the same place decode afresh, so a
// flipped byte is reported rather than answered from the last read.
func TestReadAgainDecodesChangedBytes(t *testing.T) {
	h := newHarness(t, 1, SmallConfig())
	l := h.log()
	res := h.append(batchOf(1, 0, 0, 3))
	first, err := l.Read(res.BaseOffset, 1<<16)
	if err != nil || len(first) != 1 {
		t.Fatalf("first read: %d batches, %v", len(first), err)
	}
	again, err := l.Read(res.BaseOffset, 1<<16)
	if err != nil || len(again) != 1 || !sameBatch(first[0], again[0]) {
		t.Fatalf("second read: %v, %v; want %v", again, err, first)
	}
	// Flip a byte of the last record's value, as bit rot would.
	if err := h.disk().WriteAt(res.File, res.Position+res.Bytes-2, []byte{0xFF}); err != nil {
		t.Fatal(err)
	}
	if bs, err := l.Read(res.BaseOffset, 1<<16); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read after a flipped byte: %d batches, %v; want %v", len(bs), err, ErrCorrupt)
	}
}

// A follower that appends the batches it read from its leader stores the leader's very
// bytes; a batch kept with its bytes (read, or just appended) whose header or records
// change is encoded afresh, as the same batch built anew would be.
func TestKeptBytesEncodeOnlyTheirBatch(t *testing.T) {
	leader, follower := newHarness(t, 1, smallCfg()), newHarness(t, 2, smallCfg())
	for i := range 8 {
		leader.append(batchOf(1, sim.Time(i), i*3, 1+i%3))
		for follower.log().LogEndOffset() < leader.log().LogEndOffset() {
			bs, err := leader.log().Read(follower.log().LogEndOffset(), 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				if _, err := follower.log().AppendReplica(b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	files := leader.disk().List("p0/")
	if !slices.Equal(files, follower.disk().List("p0/")) || len(files) == 0 {
		t.Fatalf("leader files %v, follower files %v; want the same", files, follower.disk().List("p0/"))
	}
	for _, f := range files {
		if !slices.Equal(leader.disk().ReadAll(f), follower.disk().ReadAll(f)) {
			t.Fatalf("%s differs between leader and follower", f)
		}
	}

	anew := func(b Batch) []byte { // the same batch, built without kept bytes
		fresh := Batch{BaseOffset: b.BaseOffset, LeaderEpoch: b.LeaderEpoch, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch,
			BaseSequence: b.BaseSequence, Timestamp: b.Timestamp, Flags: b.Flags, Records: slices.Clone(b.Records)}
		enc, err := fresh.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	read := readAll(t, leader.log())
	last := read[len(read)-1] // kept by the leader's append, then by the follower's read
	changed := map[string]Batch{"as read": read[2], "as appended": last}
	for name, change := range map[string]func(b *Batch){
		"epoch":    func(b *Batch) { b.LeaderEpoch = 9 },
		"time":     func(b *Batch) { b.Timestamp = 99 },
		"offset":   func(b *Batch) { b.BaseOffset = 1000 },
		"producer": func(b *Batch) { b.ProducerID, b.ProducerEpoch, b.BaseSequence = 5, 1, 7 },
		"records": func(b *Batch) {
			b.Records = slices.Clone(b.Records)
			b.Records[0].Value = []byte("another")
		},
		"shifted": func(b *Batch) { b.Records = b.Records[1:] },
		"cut":     func(b *Batch) { b.Records = b.Records[:1] },
	} {
		b := last
		change(&b)
		changed[name] = b
	}
	for name, b := range changed {
		got, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, anew(b)) {
			t.Fatalf("batch %s encodes to other bytes than the same batch built anew", name)
		}
	}
}
