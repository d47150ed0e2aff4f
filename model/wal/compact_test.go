package wal

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/sim"
)

// written is one record the reference remembers: where it went and what it held.
type written struct {
	offset int64
	key    string
	value  []byte // nil: a tombstone
	// firstCleaned is when the first cleaning that covered the record ran (0: none yet):
	// a tombstone's delete horizon counts from it.
	firstCleaned sim.Time
}

// logRecords reads the whole log and lists its records with their offsets.
func logRecords(t tb, l *Log) []written {
	t.Helper()
	var out []written
	for _, b := range readAll(t, l) {
		for i, r := range b.Records {
			out = append(out, written{offset: b.OffsetOf(i), key: string(r.Key), value: r.Value})
		}
	}
	return out
}

func compactConfig(ratio float64) Config {
	cfg := SmallConfig()
	cfg.SegmentBytes = 200
	cfg.Flush = FlushEveryBatch
	cfg.Compaction = Compaction{Policy: CleanupCompact, MinCleanableDirtyRatio: ratio, DeleteRetention: time.Hour}
	return cfg
}

// TestCompactionProperty: after every cleaning, each record below the first uncleanable
// offset survives at its original offset exactly when it is the last record of its key
// there, a tombstone only while within delete.retention.ms of its first cleaning; every
// record above is untouched; a reader that keeps up sees every record, in offset order.
// Crashes between cleanings (everything synced) change none of it.
func TestCompactionProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := compactConfig(rapid.SampledFrom([]float64{0, 0.5}).Draw(rt, "ratio"))
		h := newHarness(rt, 1, cfg)
		var ref []written
		var now sim.Time
		var seen []written // what the reader that keeps up read
		n := 0
		keepUp := func() {
			got := logRecords(rt, h.log())
			from := int64(0)
			if len(seen) > 0 {
				from = seen[len(seen)-1].offset + 1
			}
			for _, w := range got {
				if w.offset >= from {
					seen = append(seen, w)
				}
			}
		}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for step := 0; step < steps; step++ {
			now = now.Add(time.Duration(rapid.IntRange(0, 40).Draw(rt, "minutes")) * time.Minute)
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0, 1: // clean, after the reader caught up
				keepUp()
				limit := h.log().LogEndOffset()
				c, err := h.log().Clean(now, limit)
				if err != nil {
					rt.Fatalf("clean: %v", err)
				}
				if c.FirstUncleanable > limit || c.FirstUncleanable > h.log().active().base {
					rt.Fatalf("first uncleanable %d past the limit %d or the active segment %d", c.FirstUncleanable, limit, h.log().active().base)
				}
				h.settle()
				checkStructure(rt, h.log())
				if !c.Cleaned {
					continue
				}
				checkCleaned(rt, h.log(), ref, c.FirstUncleanable, now, cfg.Compaction.DeleteRetention)
			case 2:
				h.settle()
				h.crashRestart()
			default:
				b := Batch{LeaderEpoch: 0, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Timestamp: now}
				for range rapid.IntRange(1, 3).Draw(rt, "records") {
					n++
					r := Record{Key: fmt.Appendf(nil, "k%d", rapid.IntRange(0, 4).Draw(rt, "key"))}
					if !rapid.Bool().Draw(rt, "tombstone") || rapid.Bool().Draw(rt, "tombstone2") {
						r.Value = fmt.Appendf(nil, "v%d", n)
					}
					b.Records = append(b.Records, r)
				}
				res := h.append(b)
				for i, r := range b.Records {
					ref = append(ref, written{offset: res.BaseOffset + int64(i), key: string(r.Key), value: r.Value})
				}
			}
		}
		// Every record the reader saw is the one written at that offset, and it saw all.
		keepUp()
		if len(seen) != len(ref) {
			rt.Fatalf("the reader that kept up saw %d records, %d were written", len(seen), len(ref))
		}
		for i := range ref {
			if seen[i].offset != ref[i].offset || string(seen[i].value) != string(ref[i].value) {
				rt.Fatalf("reader saw %d:%q, written %d:%q", seen[i].offset, seen[i].value, ref[i].offset, ref[i].value)
			}
		}
	})
}

// checkCleaned compares the log after a cleaning that covered [0, u) at now with what the
// reference says must survive. It stamps firstCleaned on the reference's records.
func checkCleaned(t *rapid.T, l *Log, ref []written, u int64, now sim.Time, retention time.Duration) {
	last := map[string]int64{}
	for i := range ref {
		if ref[i].offset < u {
			last[ref[i].key] = ref[i].offset
			if ref[i].firstCleaned == 0 {
				ref[i].firstCleaned = now
			}
		}
	}
	var want []written
	for _, w := range ref {
		switch {
		case w.offset >= u:
			want = append(want, w)
		case last[w.key] != w.offset:
			// superseded by a later record of its key below u
		case w.value == nil && now >= w.firstCleaned.Add(retention):
			// a tombstone past its delete horizon
		default:
			want = append(want, w)
		}
	}
	got := logRecords(t, l)
	if len(got) != len(want) {
		t.Fatalf("after cleaning below %d at %s: %d records, want %d\ngot  %v\nwant %v", u, now, len(got), len(want), got, want)
	}
	for i := range want {
		if got[i].offset != want[i].offset || got[i].key != want[i].key || string(got[i].value) != string(want[i].value) ||
			(got[i].value == nil) != (want[i].value == nil) {
			t.Fatalf("after cleaning below %d: record %d is %d %s=%q, want %d %s=%q", u, i, got[i].offset, got[i].key, got[i].value, want[i].offset, want[i].key, want[i].value)
		}
	}
}

// TestCleanWorkedExample: k1 written three times, k2 once then deleted; segments of one
// batch each. The cleaner keeps k1's last value at offset 2 and the tombstone of k2 at 4
// (its delete horizon is an hour away), and offsets 0, 1 and 3 read as gaps.
func TestCleanWorkedExample(t *testing.T) {
	cfg := compactConfig(0.5)
	cfg.SegmentBytes = 64 // one batch per segment
	h := newHarness(t, 1, cfg)
	put := func(k, v string, at sim.Time) {
		r := Record{Key: []byte(k)}
		if v != "" {
			r.Value = []byte(v)
		}
		h.append(Batch{ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Timestamp: at, Records: []Record{r}})
	}
	put("k1", "a", 0)
	put("k1", "b", 0)
	put("k1", "c", 0)
	put("k2", "x", 0)
	put("k2", "", 0)
	put("k3", "active", 0) // the active segment: never cleaned
	c, err := h.log().Clean(sim.Time(time.Minute), h.log().LogEndOffset())
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String(); got != "cleaned below 5 (dirty from 0, ratio 1.00): 2 keys, 3 superseded and 0 tombstones removed, 5 segments 269B -> 268B" {
		t.Errorf("cleaning: %s", got)
	}
	if got := fmt.Sprint(logRecords(t, h.log())); got != `[{2 k1 [99] 0} {4 k2 [] 0} {5 k3 [97 99 116 105 118 101] 0}]` {
		t.Errorf("records: %s", got)
	}
	// Reading at a removed offset returns what follows it.
	bs, err := h.log().Read(1, 1<<20)
	if err != nil || len(bs) == 0 || bs[0].NextOffset() != 2 || len(bs[0].Records) != 0 {
		t.Errorf("read at 1: %v %v", bs, err)
	}
	// An hour and a bit later the tombstone goes; nothing is dirty, so ratio 0 is needed.
	h.log().cfg.Compaction.MinCleanableDirtyRatio = 0
	put("k4", "y", sim.Time(2*time.Hour)) // rolls k3's segment: now dirty
	c, err = h.log().Clean(sim.Time(2*time.Hour), h.log().LogEndOffset())
	if err != nil || c.Tombstones != 1 {
		t.Fatalf("second cleaning: %v %v", c, err)
	}
	if got := fmt.Sprint(logRecords(t, h.log())); got != `[{2 k1 [99] 0} {5 k3 [97 99 116 105 118 101] 0} {6 k4 [121] 0}]` {
		t.Errorf("records after the horizon: %s", got)
	}
	// The gaps survive a crash: recovery reads compacted batches as they are.
	h.settle()
	h.crashRestart()
	if got := fmt.Sprint(logRecords(t, h.log())); got != `[{2 k1 [99] 0} {5 k3 [97 99 116 105 118 101] 0} {6 k4 [121] 0}]` {
		t.Errorf("records after a crash: %s", got)
	}
}

// A compacted batch round-trips with its span, offset deltas and delete horizon, and a
// decoder refuses deltas that do not increase inside the span.
func TestCompactedBatchEncoding(t *testing.T) {
	b := Batch{BaseOffset: 10, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
		Flags: FlagCompacted, Span: 5, OffsetDeltas: []int32{1, 4}, DeleteHorizon: sim.Time(time.Hour),
		Records: []Record{{Key: []byte("a"), Value: []byte("x")}, {Key: []byte("b")}}}
	enc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, n, err := DecodeBatch(enc)
	if err != nil || n != len(enc) || got.NextOffset() != 15 || got.OffsetOf(1) != 14 || got.DeleteHorizon != b.DeleteHorizon ||
		!sameRecords(got.Records, b.Records) || got.Records[1].Value != nil {
		t.Fatalf("decoded %v (n %d, err %v)", got.String(), n, err)
	}
	empty := Batch{BaseOffset: 3, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Flags: FlagCompacted, Span: 2, OffsetDeltas: []int32{}}
	if enc, err := empty.Encode(); err != nil || len(enc) != batchHeaderSize+2 {
		t.Errorf("an emptied batch: %d bytes, %v", len(enc), err)
	}
	for _, bad := range [][]int32{{4, 1}, {1, 5}, {1, 1}} {
		b.OffsetDeltas = bad
		if _, err := b.Encode(); err == nil {
			t.Errorf("deltas %v encoded", bad)
		}
	}
}

// The cleaner waits for min.cleanable.dirty.ratio and min.compaction.lag.ms, and leaves a
// log whose policy does not compact alone.
func TestCleanWaitsForRatioAndLag(t *testing.T) {
	cfg := compactConfig(0.5)
	cfg.SegmentBytes = 64 // one batch per segment
	cfg.Compaction.MinCompactionLag = time.Minute
	h := newHarness(t, 1, cfg)
	put := func(v string, at sim.Time) {
		h.append(Batch{ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Timestamp: at,
			Records: []Record{{Key: []byte("k"), Value: []byte(v)}}})
	}
	put("a", 0)
	put("b", sim.Time(50*time.Second))
	put("c", sim.Time(50*time.Second)) // active
	// At 1m30s the second segment is younger than the lag: only [0,1) is cleanable.
	c, err := h.log().Clean(sim.Time(90*time.Second), h.log().LogEndOffset())
	if err != nil || !c.Cleaned || c.FirstUncleanable != 1 || c.Superseded != 0 {
		t.Fatalf("inside the lag: %v %v", c, err)
	}
	// Later: [1,2) is dirty, [0,1) clean (a little larger, as a compacted batch); the
	// ratio is just under a half, not above 0.5.
	c, err = h.log().Clean(sim.Time(5*time.Minute), h.log().LogEndOffset())
	if err != nil || c.Cleaned || c.FirstDirty != 1 || c.FirstUncleanable != 2 {
		t.Fatalf("at the ratio: %v %v", c, err)
	}
	if got := c.String(); got != "nothing to clean: dirty [1,2) 53B of 109B (ratio 0.49)" {
		t.Errorf("at the ratio: %s", got)
	}
	h.log().cfg.Compaction.Policy = CleanupDelete
	if c, err := h.log().Clean(sim.Time(time.Hour), h.log().LogEndOffset()); err != nil || c.Cleaned || c.DirtyBytes != 0 {
		t.Errorf("cleanup.policy=delete: %v %v", c, err)
	}
}
