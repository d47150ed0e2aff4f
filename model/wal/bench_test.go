package wal

import (
	"testing"

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
