package wal

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/sim"
)

// refLog is the reference: the batches appended and not truncated, contiguous from
// base, and the log start offset. Batches below the log start stay in it (reads refuse
// them); the comparison reads from the batch holding the log start.
type refLog struct {
	base     int64
	batches  []Batch
	logStart int64
}

func (r *refLog) end() int64 {
	if len(r.batches) == 0 {
		return r.base
	}
	return r.batches[len(r.batches)-1].NextOffset()
}

// find is the index of the batch holding offset.
func (r *refLog) find(offset int64) int {
	for i := range r.batches {
		if r.batches[i].Contains(offset) {
			return i
		}
	}
	return -1
}

// truncate keeps the batches that end at or below end; end must be a batch boundary.
func (r *refLog) truncate(t *rapid.T, end int64) {
	for len(r.batches) > 0 && r.batches[len(r.batches)-1].NextOffset() > end {
		r.batches = r.batches[:len(r.batches)-1]
	}
	if r.end() != end {
		if len(r.batches) != 0 {
			t.Fatalf("log end %d is not a batch boundary of the reference (ends %d)", end, r.end())
		}
		r.base = end
	}
}

type propState struct {
	h     *harness
	ref   refLog
	now   sim.Time
	epoch int32
	n     int // records made so far, for distinct contents
}

func (s *propState) genBatch(t *rapid.T) Batch {
	if len(s.ref.batches) > 0 {
		s.epoch = s.ref.batches[len(s.ref.batches)-1].LeaderEpoch
	}
	s.epoch += int32(rapid.IntRange(0, 4).Draw(t, "epoch+") / 3)
	s.now = s.now.Add(time.Duration(rapid.IntRange(0, 3000).Draw(t, "dt-ms")) * time.Millisecond)
	b := Batch{LeaderEpoch: s.epoch, ProducerID: int64(rapid.IntRange(-1, 3).Draw(t, "pid")), Timestamp: s.now}
	k := rapid.IntRange(1, 4).Draw(t, "records")
	for i := 0; i < k; i++ {
		s.n++
		r := Record{Key: fmt.Appendf(nil, "k%d", s.n), Value: make([]byte, rapid.IntRange(0, 120).Draw(t, "value-bytes"))}
		r.Value = fmt.Appendf(r.Value[:0], "%d:%s", s.n, r.Value)
		if rapid.IntRange(0, 5).Draw(t, "header") == 0 {
			r.Headers = []Header{{Key: "h", Value: []byte{byte(s.n)}}}
		}
		b.Records = append(b.Records, r)
	}
	return b
}

// compare checks the log against the reference: ends, every readable batch, the epoch
// cache's answers, and the internal structure.
func (s *propState) compare(t *rapid.T) {
	l := s.h.log()
	checkStructure(t, l)
	if l.LogEndOffset() != s.ref.end() || l.LogStartOffset() != s.ref.logStart {
		t.Fatalf("log [%d,%d), reference [%d,%d)", l.LogStartOffset(), l.LogEndOffset(), s.ref.logStart, s.ref.end())
	}
	got := readAll(t, l)
	first := s.ref.find(s.ref.logStart)
	if first < 0 {
		first = len(s.ref.batches)
	}
	want := s.ref.batches[first:]
	if len(got) != len(want) {
		t.Fatalf("read %d batches, reference has %d from the log start", len(got), len(want))
	}
	for i := range got {
		if !sameBatch(got[i], want[i]) {
			t.Fatalf("batch %d: got %v want %v", i, &got[i], &want[i])
		}
	}
	// OffsetsForLeaderEpoch, from the retained batches alone.
	if len(want) == 0 {
		return
	}
	lo, hi := want[0].LeaderEpoch, want[len(want)-1].LeaderEpoch
	for e := max(lo-1, 0); e <= hi+1; e++ {
		wantEpoch, wantEnd := UndefinedEpoch, UndefinedOffset
		switch {
		case e == hi:
			wantEpoch, wantEnd = e, l.LogEndOffset()
		case e < hi:
			wantEpoch = e
			for _, b := range want {
				if b.LeaderEpoch > e {
					wantEnd = max(b.BaseOffset, s.ref.logStart)
					break
				}
				wantEpoch = b.LeaderEpoch
			}
		}
		if ge, go_ := l.EndOffsetFor(e); ge != wantEpoch || go_ != wantEnd {
			t.Fatalf("EndOffsetFor(%d) = (%d,%d), want (%d,%d); cache %v", e, ge, go_, wantEpoch, wantEnd, l.Epochs())
		}
	}
}

func TestLogMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := SmallConfig()
		cfg.SegmentBytes = int64(rapid.IntRange(150, 2000).Draw(t, "segment-bytes"))
		cfg.IndexIntervalBytes = int64(rapid.IntRange(1, 600).Draw(t, "index-interval"))
		cfg.SegmentAge = time.Duration(rapid.IntRange(1, 20).Draw(t, "segment-age-s")) * time.Second
		cfg.RetentionBytes = int64(rapid.IntRange(-1, 3000).Draw(t, "retention-bytes"))
		cfg.RetentionAge = time.Duration(rapid.IntRange(-1, 60).Draw(t, "retention-age-s")) * time.Second
		cfg.Flush = rapid.SampledFrom([]FlushPolicy{FlushNever, FlushEveryBatch, FlushInterval(time.Millisecond)}).Draw(t, "flush")
		s := &propState{h: newHarness(t, rapid.Uint64().Draw(t, "seed"), cfg)}
		s.h.w.RunFor(0)

		t.Repeat(map[string]func(*rapid.T){
			"append": func(t *rapid.T) {
				b := s.genBatch(t)
				var res AppendResult
				var err error
				if rapid.Bool().Draw(t, "replica") {
					b.BaseOffset = s.h.log().LogEndOffset()
					res, err = s.h.log().AppendReplica(b)
				} else {
					res, err = s.h.log().Append(b)
				}
				if err != nil {
					t.Fatal(err)
				}
				fsyncAll(s.h.env(), res.Sync)
				b.BaseOffset = res.BaseOffset
				if res.BaseOffset != s.ref.end() {
					t.Fatalf("appended at %d, reference end %d", res.BaseOffset, s.ref.end())
				}
				s.ref.batches = append(s.ref.batches, b)
			},
			"read": func(t *rapid.T) {
				l := s.h.log()
				off := rapid.Int64Range(s.ref.logStart, s.ref.end()).Draw(t, "offset")
				maxBytes := rapid.IntRange(0, 1500).Draw(t, "max-bytes")
				bs, err := l.Read(off, maxBytes)
				if err != nil {
					t.Fatal(err)
				}
				if off == s.ref.end() {
					if len(bs) != 0 {
						t.Fatalf("read at the end returned %d batches", len(bs))
					}
					return
				}
				i := s.ref.find(off)
				total := 0
				for k, b := range bs {
					if i+k >= len(s.ref.batches) || !sameBatch(b, s.ref.batches[i+k]) {
						t.Fatalf("read %d: batch %d is %v", off, k, &b)
					}
					total += b.EncodedSize()
				}
				if len(bs) == 0 || (len(bs) > 1 && total > maxBytes) {
					t.Fatalf("read %d max %d: %d batches, %d bytes", off, maxBytes, len(bs), total)
				}
				if next := i + len(bs); next < len(s.ref.batches) && total+s.ref.batches[next].EncodedSize() <= maxBytes {
					t.Fatalf("read %d max %d stopped early: %d bytes, next batch %d bytes", off, maxBytes, total, s.ref.batches[next].EncodedSize())
				}
			},
			"truncate": func(t *rapid.T) {
				l := s.h.log()
				off := rapid.Int64Range(0, s.ref.end()+1).Draw(t, "offset")
				reset := off < l.Segments()[0].BaseOffset
				tr, err := l.TruncateTo(off)
				if err != nil {
					t.Fatal(err)
				}
				fsyncAll(s.h.env(), tr.Sync)
				if reset {
					s.ref = refLog{base: off, logStart: off}
					return
				}
				s.ref.truncate(t, tr.NewEnd)
				if tr.NewEnd > off || (off < tr.OldEnd && s.ref.end() != tr.NewEnd) {
					t.Fatalf("truncate to %d: new end %d", off, tr.NewEnd)
				}
				s.ref.logStart = min(s.ref.logStart, tr.NewEnd)
			},
			"delete-before": func(t *rapid.T) {
				off := rapid.Int64Range(0, s.ref.end()).Draw(t, "offset")
				d, err := s.h.log().DeleteBefore(off)
				if err != nil {
					t.Fatal(err)
				}
				fsyncAll(s.h.env(), d.Sync)
				s.ref.logStart = max(s.ref.logStart, off)
			},
			"retention": func(t *rapid.T) {
				l := s.h.log()
				limit := rapid.Int64Range(0, s.ref.end()).Draw(t, "limit")
				segs := l.Segments()
				d := l.ApplyRetention(s.now, limit)
				fsyncAll(s.h.env(), d.Sync)
				for i, g := range d.Segments {
					if g != segs[i] || g.NextOffset > limit || g.Active {
						t.Fatalf("retention deleted %v (limit %d)", g, limit)
					}
				}
				s.ref.logStart = max(s.ref.logStart, l.Segments()[0].BaseOffset)
			},
			"flush": func(t *rapid.T) {
				fsyncAll(s.h.env(), s.h.log().Flush())
			},
			"time": func(t *rapid.T) {
				s.h.w.RunFor(time.Duration(rapid.IntRange(0, 4000).Draw(t, "us")) * time.Microsecond)
			},
			"crash": func(t *rapid.T) {
				l := s.h.log()
				synced, end := l.SyncedOffset(), l.LogEndOffset()
				switch rapid.IntRange(0, 2).Draw(t, "tear") {
				case 1:
					s.h.disk().TearNextCrash(false)
				case 2:
					s.h.disk().TearNextCrash(true)
				}
				rec := s.h.crashRestart()
				l = s.h.log()
				newEnd, newStart := l.LogEndOffset(), l.LogStartOffset()
				if newEnd < synced || newEnd > max(end, newStart) {
					t.Fatalf("recovered end %d, synced was %d, end %d; %v", newEnd, synced, end, rec)
				}
				if segs := l.Segments(); len(segs) == 1 && segs[0].SizeBytes == 0 && segs[0].BaseOffset == newEnd && newEnd != s.ref.end() {
					s.ref = refLog{base: newEnd, logStart: newStart} // restarted empty
				} else {
					s.ref.truncate(t, newEnd)
				}
				s.ref.logStart = newStart
			},
			"": func(t *rapid.T) { s.compare(t) },
		})
	})
}
