package gateway

import (
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/wal"
	"mqsim/sim"
)

// Kafka record batch attributes (RecordBatch.Attributes).
const (
	attrCompression   = 0x07
	attrTransactional = 0x10
	attrControl       = 0x20
)

// decompressor reads compressed batches (gzip, snappy, lz4, zstd) with franz-go's own
// codecs, as a Kafka broker reads what clients compress.
var decompressor = kgo.DefaultDecompressor()

// minRecordBytes is the smallest encoded record: length, attributes, timestamp delta,
// offset delta, key length, value length and header count, one byte each.
const minRecordBytes = 7

// decodeBatch reads the one record batch (magic 2) a v3+ produce carries for a partition.
func decodeBatch(raw []byte) (wal.Batch, error) {
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(raw); err != nil {
		return wal.Batch{}, fmt.Errorf("record batch: %w", err)
	}
	if kb.Magic != 2 {
		return wal.Batch{}, fmt.Errorf("record batch magic %d: want 2", kb.Magic)
	}
	if int(kb.Length)+12 != len(raw) {
		return wal.Batch{}, fmt.Errorf("record batch of %d bytes in %d: want exactly one batch", kb.Length+12, len(raw))
	}
	if kb.Attributes&attrControl != 0 {
		return wal.Batch{}, fmt.Errorf("a client may not produce a control batch")
	}
	if kb.NumRecords < 0 || kb.NumRecords > int32(len(raw)) {
		return wal.Batch{}, fmt.Errorf("record batch claims %d records", kb.NumRecords)
	}
	records, err := decompressor.Decompress(kb.Records, kgo.CompressionCodecType(kb.Attributes&attrCompression))
	if err != nil {
		return wal.Batch{}, fmt.Errorf("records compressed with codec %d: %w", kb.Attributes&attrCompression, err)
	}
	b := wal.Batch{ProducerID: kb.ProducerID, ProducerEpoch: kb.ProducerEpoch, BaseSequence: kb.FirstSequence}
	if kb.Attributes&attrTransactional != 0 {
		b.Flags |= wal.FlagTransactional
	}
	// The records' slice at its size at once: growing it by appends copied a batch's
	// records (three slices each) about twice over, a fifth of a served produce's work.
	// The count is the client's claim, so it is bounded by what the bytes can hold.
	b.Records = make([]wal.Record, 0, min(int(kb.NumRecords), len(records)/minRecordBytes))
	for i := int32(0); i < kb.NumRecords; i++ {
		r := kbin.Reader{Src: records}
		n := int(r.Varint())
		head := len(records) - len(r.Src)
		if !r.Ok() || n < 0 || head+n > len(records) {
			return wal.Batch{}, fmt.Errorf("record %d of %d truncated", i, kb.NumRecords)
		}
		var kr kmsg.Record
		if err := kr.ReadFrom(records[:head+n]); err != nil {
			return wal.Batch{}, fmt.Errorf("record %d: %w", i, err)
		}
		records = records[head+n:]
		rec := wal.Record{Key: kr.Key, Value: kr.Value}
		for _, h := range kr.Headers {
			rec.Headers = append(rec.Headers, wal.Header{Key: h.Key, Value: h.Value})
		}
		// mqsim keeps a record's headers sorted by key (one canonical encoding).
		slices.SortStableFunc(rec.Headers, func(a, b wal.Header) int { return strings.Compare(a.Key, b.Key) })
		b.Records = append(b.Records, rec)
	}
	if len(records) != 0 {
		return wal.Batch{}, fmt.Errorf("%d bytes after the batch's %d records", len(records), kb.NumRecords)
	}
	return b, nil
}

// millis is a virtual time as Kafka's timestamps are written: milliseconds since the
// epoch, where the epoch is the start of the run.
func millis(t sim.Time) int64 { return int64(t) / int64(time.Millisecond) }

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// appendBatch writes a log batch as a Kafka record batch (magic 2, uncompressed, with its
// CRC-32C), as a fetch response carries it.
func appendBatch(dst []byte, b wal.Batch) []byte {
	kb := kmsg.RecordBatch{
		FirstOffset:          b.BaseOffset,
		PartitionLeaderEpoch: b.LeaderEpoch,
		Magic:                2,
		FirstTimestamp:       millis(b.Timestamp),
		MaxTimestamp:         millis(b.Timestamp),
		ProducerID:           b.ProducerID,
		ProducerEpoch:        b.ProducerEpoch,
		FirstSequence:        b.BaseSequence,
		NumRecords:           int32(len(b.Records)),
		LastOffsetDelta:      int32(len(b.Records)) - 1,
	}
	if b.Compacted() {
		kb.LastOffsetDelta = b.Span - 1
	}
	if b.Flags&wal.FlagTransactional != 0 {
		kb.Attributes |= attrTransactional
	}
	if b.Flags&wal.FlagControl != 0 {
		kb.Attributes |= attrControl
	}
	var records []byte
	for i, r := range b.Records {
		kr := kmsg.Record{OffsetDelta: int32(b.OffsetOf(i) - b.BaseOffset), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		// A record's length prefix counts what follows it: encode once to measure.
		kr.Length = int32(len(kr.AppendTo(nil)) - 1)
		records = kr.AppendTo(records)
	}
	kb.Records = records
	// Length counts from the leader epoch on: the whole batch less offset and length.
	kb.Length = int32(len(kb.AppendTo(nil)) - 12)
	out := kb.AppendTo(nil)
	// The CRC covers everything after itself (from the attributes on).
	const crcAt = 8 + 4 + 4 + 1
	kb.CRC = int32(crc32Checksum(out[crcAt+4:]))
	return kb.AppendTo(dst)
}

func crc32Checksum(b []byte) uint32 { return crc32.Checksum(b, crc32c) }
