package wal

import (
	"testing"
	"time"

	"mqsim/sim"
)

// BenchmarkAppendRead appends one 10-record batch (100-byte values) and reads it back per
// operation, with retention keeping the disk small. Reported: records/s appended and read.
func BenchmarkAppendRead(b *testing.B) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.RetentionBytes = 4 << 20
	h := newHarness(b, 1, cfg)
	l := h.log()
	batch := Batch{LeaderEpoch: 1, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence}
	for i := 0; i < 10; i++ {
		batch.Records = append(batch.Records, Record{Key: []byte("key-00000"), Value: make([]byte, 100)})
	}
	const records = 10
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch.Timestamp = sim.Time(i)
		res, err := l.Append(batch)
		if err != nil {
			b.Fatal(err)
		}
		bs, err := l.Read(res.BaseOffset, 1<<16)
		if err != nil || len(bs) != 1 || len(bs[0].Records) != records {
			b.Fatalf("read back: %d batches, %v", len(bs), err)
		}
		if i%1024 == 1023 {
			l.ApplyRetention(sim.Time(i), l.LogEndOffset())
		}
	}
	b.ReportMetric(float64(b.N*records)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppend measures appends alone (FlushNever, so no fsync bookkeeping).
func BenchmarkAppend(b *testing.B) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 << 20
	cfg.RetentionBytes = 4 << 20
	h := newHarness(b, 1, cfg)
	l := h.log()
	batch := Batch{LeaderEpoch: 1, Records: make([]Record, 10)}
	for i := range batch.Records {
		batch.Records[i] = Record{Key: []byte("key-00000"), Value: make([]byte, 100)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(batch); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			l.ApplyRetention(0, l.LogEndOffset())
		}
	}
	b.ReportMetric(float64(b.N*10)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkSyncedAppendManySegments appends a batch that rolls a segment, fsyncs it and
// asks for the synced offset (what a broker does at every FsyncDone), on a log that
// already has 10,000 segments and, as the baseline in the same run, on one with 1,000.
// ratio near 1 says an fsync costs what it covers, not the log's length (mqsim serve
// rolls a 4 KiB segment at nearly every batch of a long session).
func BenchmarkSyncedAppendManySegments(b *testing.B) {
	perOp := func(segments int) float64 {
		cfg := SmallConfig()
		cfg.SegmentBytes = 200 // every batch below rolls a segment
		cfg.Flush = FlushEveryBatch
		h := newHarness(b, 1, cfg)
		batch := Batch{LeaderEpoch: 1, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
			Records: []Record{{Key: []byte("key-00000"), Value: make([]byte, 150)}}}
		step := func() {
			h.append(batch)
			h.w.RunFor(5 * time.Millisecond) // the fsync completes
			if got, want := h.log().SyncedOffset(), h.log().LogEndOffset(); got != want {
				b.Fatalf("synced offset %d, log end %d", got, want)
			}
		}
		for range segments {
			step()
		}
		start := time.Now()
		for range b.N {
			step()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(b.N)
	}
	small := perOp(1000)
	b.ResetTimer()
	large := perOp(10000)
	b.ReportMetric(large, "ns/append-10k-segments")
	b.ReportMetric(small, "ns/append-1k-segments")
	b.ReportMetric(large/small, "ratio")
}
