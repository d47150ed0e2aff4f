package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"mqsim/sim"
)

// Kafka's sentinel values for batches that carry no producer state or no leader epoch
// (RecordBatch.NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_PARTITION_LEADER_EPOCH).
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
	NoSequence      int32 = -1
	UndefinedEpoch  int32 = -1
	UndefinedOffset int64 = -1
)

// BatchFlags are the batch attributes mqsim keeps from Kafka's record batch.
type BatchFlags uint8

const (
	// FlagTransactional marks a batch written inside a transaction (Kafka attribute bit 4).
	FlagTransactional BatchFlags = 1 << 0
	// FlagControl marks a control batch: a transaction commit or abort marker (bit 5).
	FlagControl BatchFlags = 1 << 1
	// FlagCompacted marks a batch the log cleaner rewrote (compact.go): some of its
	// records were removed, so it carries each record's offset delta and the span of
	// offsets it covers (Batch.OffsetDeltas, Batch.Span). Kafka needs no flag, since its
	// v2 records always carry an offset delta and the batch header its last offset delta;
	// mqsim's plain batches do not, and this keeps their encoding as it was.
	FlagCompacted BatchFlags = 1 << 2

	// FlagsCodec holds the batch's compression codec (Kafka attribute bits 0-2, ids as
	// Kafka's CompressionType: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). mqsim stores
	// the records uncompressed and only sizes the batch as compressed (proto.Codec), so
	// a batch without compression encodes as it always did.
	FlagsCodec BatchFlags = 7 << flagsCodecShift

	flagsCodecShift = 3
	flagsKnown      = FlagTransactional | FlagControl | FlagCompacted | FlagsCodec
)

// Codec is the batch's compression codec id (FlagsCodec): 0 is none.
func (b *Batch) Codec() uint8 { return uint8(b.Flags&FlagsCodec) >> flagsCodecShift }

// SetCodec records the batch's compression codec id (0 to 7).
func (b *Batch) SetCodec(id uint8) {
	b.Flags = b.Flags&^FlagsCodec | BatchFlags(id&7)<<flagsCodecShift
}

// Header is one record header. A record's headers are sorted by Key (duplicates allowed,
// kept in the order given), so that a record has one canonical encoding.
type Header struct {
	Key   string
	Value []byte // nil and empty are distinct and both survive a round trip
}

// Record is one message. Key and Value may be nil (Kafka's null), which is distinct from
// empty. Its offset is its batch's BaseOffset plus its index in the batch.
type Record struct {
	Key     []byte
	Value   []byte
	Headers []Header // sorted by Key; nil when there are none (decoding never yields an empty non-nil slice)
}

// Batch is a record batch, the unit the log appends, indexes, checksums and truncates.
// Producer fields are for idempotence: NoProducerID, NoProducerEpoch and NoSequence when
// the producer is not idempotent. Timestamp is virtual time; the leader sets it when it
// appends (Kafka's LogAppendTime), and segment rolling and time retention read it.
type Batch struct {
	BaseOffset    int64
	LeaderEpoch   int32
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Timestamp     sim.Time
	Flags         BatchFlags
	Records       []Record
	// Span and OffsetDeltas are set only with FlagCompacted: the batch covers the offsets
	// [BaseOffset, BaseOffset+Span) and record i is at BaseOffset+OffsetDeltas[i]
	// (strictly increasing); the offsets between are records the cleaner removed. A
	// compacted batch may hold no record at all: it still covers its span, so offsets
	// stay where they were. Without the flag both are zero and record i is at
	// BaseOffset+i.
	Span         int32
	OffsetDeltas []int32
	// DeleteHorizon (compacted batches only) is when the batch's tombstones may go: set
	// by the first cleaning that saw them, to its time plus delete.retention.ms, as
	// Kafka's v2 batches do (KAFKA-8522); zero when unset.
	DeleteHorizon sim.Time

	// encoding is the bytes a read decoded the batch from, and decodedRecords the
	// records it decoded: AppendEncoded copies the bytes instead of encoding again
	// while the batch keeps that header and those records (reusedEncoding). A
	// follower appends each batch it fetched as it is: three replicas encoded every
	// batch three times. Records are never modified in place, as no message is.
	encoding       []byte
	decodedRecords []Record
}

// reusedEncoding is the batch's encoding when the batch is still what it was decoded
// from (an uncompacted batch with the same header fields and the same records), else nil.
func (b *Batch) reusedEncoding() []byte {
	e := b.encoding
	if e == nil || b.Flags != BatchFlags(e[posFlags]) || b.Compacted() || len(b.Records) != len(b.decodedRecords) ||
		(len(b.Records) > 0 && &b.Records[0] != &b.decodedRecords[0]) {
		return nil
	}
	be := binary.BigEndian
	if b.BaseOffset != int64(be.Uint64(e[posBaseOffset:])) || b.LeaderEpoch != int32(be.Uint32(e[posLeaderEpoch:])) ||
		b.ProducerID != int64(be.Uint64(e[posProducerID:])) || b.ProducerEpoch != int16(be.Uint16(e[posProducerEpoch:])) ||
		b.BaseSequence != int32(be.Uint32(e[posBaseSequence:])) || b.Timestamp != sim.Time(be.Uint64(e[posTimestamp:])) {
		return nil
	}
	return e
}

// Count is the number of records in the batch (of offsets too, unless it is compacted).
func (b *Batch) Count() int { return len(b.Records) }

// Compacted reports whether the cleaner rewrote the batch (FlagCompacted).
func (b *Batch) Compacted() bool { return b.Flags&FlagCompacted != 0 }

// OffsetOf is the offset of record i.
func (b *Batch) OffsetOf(i int) int64 {
	if b.Compacted() {
		return b.BaseOffset + int64(b.OffsetDeltas[i])
	}
	return b.BaseOffset + int64(i)
}

// span is how many offsets the batch covers.
func (b *Batch) span() int64 {
	if b.Compacted() {
		return int64(b.Span)
	}
	return int64(len(b.Records))
}

// LastOffset is the last offset the batch covers (its last record's, unless the cleaner
// removed that one).
func (b *Batch) LastOffset() int64 { return b.BaseOffset + b.span() - 1 }

// NextOffset is the offset just after the batch.
func (b *Batch) NextOffset() int64 { return b.BaseOffset + b.span() }

// Contains reports whether offset is one of the batch's records.
func (b *Batch) Contains(offset int64) bool {
	return offset >= b.BaseOffset && offset < b.NextOffset()
}

// The encoding, big-endian like Kafka's. A batch is a 48-byte header and its records:
//
//	pos size field
//	  0    4 length          bytes after this field (so a reader can skip or detect a torn tail)
//	  4    4 crc             CRC32C (Castagnoli) of every byte after this field
//	  8    1 magic           format version, batchMagic
//	  9    1 flags           BatchFlags
//	 10    8 base offset
//	 18    4 record count    at least 1
//	 22    4 leader epoch
//	 26    8 producer id
//	 34    2 producer epoch
//	 36    4 base sequence
//	 40    8 timestamp       virtual nanoseconds
//	 48      records, each:  key (varint length, -1 = nil, then bytes), value (the same),
//	                         header count (uvarint), then per header: key (uvarint length,
//	                         bytes), value (varint length, -1 = nil, bytes)
//
// A compacted batch (FlagCompacted, written by the log cleaner) differs in three places:
// the record count field holds the span of offsets the batch covers; the records are
// preceded by their count (uvarint) and the delete horizon (uvarint, virtual
// nanoseconds, 0 = unset); and each record is preceded by its offset delta (uvarint,
// increasing, below the span). A compacted batch may hold no record.
//
// Unlike Kafka, the CRC also covers the base offset and the leader epoch: mqsim never
// rewrites them in place (a follower stores the leader's batch byte for byte).
const (
	batchMagic      = 1
	batchHeaderSize = 48
	lengthFieldSize = 4
	minRecordSize   = 3 // nil key, nil value, no headers: three one-byte varints

	posCRC           = 4
	posMagic         = 8
	posFlags         = 9
	posBaseOffset    = 10
	posCount         = 18
	posLeaderEpoch   = 22
	posProducerID    = 26
	posProducerEpoch = 34
	posBaseSequence  = 36
	posTimestamp     = 40
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Decode errors. Every error DecodeBatch returns is a *DecodeError that wraps one of these,
// so callers can tell a torn write from corruption with errors.Is.
var (
	// ErrTruncated: the buffer ends before the batch does, as a torn write leaves it.
	ErrTruncated = errors.New("batch truncated")
	// ErrChecksum: the bytes do not match their CRC32C: corruption.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrMalformed: the checksum may match but a field is impossible (bad magic, zero
	// records, a record running past the batch end, unsorted headers, ...).
	ErrMalformed = errors.New("malformed batch")
)

// DecodeError says what was wrong with an encoded batch and where.
type DecodeError struct {
	Pos    int    // byte position, within the buffer given to the decoder, where the problem is
	Field  string // the field being read: "length", "crc", "magic", "record 3 value", ...
	Err    error  // ErrTruncated, ErrChecksum or ErrMalformed
	Detail string // what was found
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("wal: decode %s at byte %d: %v: %s", e.Field, e.Pos, e.Err, e.Detail)
}

func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(pos int, field string, kind error, format string, args ...any) *DecodeError {
	return &DecodeError{Pos: pos, Field: field, Err: kind, Detail: fmt.Sprintf(format, args...)}
}

// Validate checks what the encoding cannot represent or the log refuses: no records, more
// than fits in the count field, negative base offset, unknown flags, unsorted headers.
func (b *Batch) Validate() error {
	if err := b.validateLayout(); err != nil {
		return err
	}
	if b.BaseOffset < 0 || b.BaseOffset > math.MaxInt64-b.span() {
		return fmt.Errorf("wal: batch base offset %d out of range", b.BaseOffset)
	}
	if b.Flags&^flagsKnown != 0 {
		return fmt.Errorf("wal: batch has unknown flags %#x", uint8(b.Flags))
	}
	for i := range b.Records {
		if err := checkHeadersSorted(b.Records[i].Headers); err != nil {
			return fmt.Errorf("wal: record %d: %w", i, err)
		}
	}
	return nil
}

// validateLayout checks the record count, and for a compacted batch its span and deltas.
func (b *Batch) validateLayout() error {
	if len(b.Records) > math.MaxInt32 {
		return fmt.Errorf("wal: batch has %d records, more than %d", len(b.Records), math.MaxInt32)
	}
	if !b.Compacted() {
		if len(b.Records) == 0 {
			return errors.New("wal: batch has no records")
		}
		if b.Span != 0 || b.OffsetDeltas != nil || b.DeleteHorizon != 0 {
			return errors.New("wal: span and offset deltas are for compacted batches only")
		}
		return nil
	}
	if b.DeleteHorizon < 0 {
		return fmt.Errorf("wal: compacted batch delete horizon %d is negative", b.DeleteHorizon)
	}
	if b.Span < 1 {
		return fmt.Errorf("wal: compacted batch spans %d offsets", b.Span)
	}
	if len(b.OffsetDeltas) != len(b.Records) {
		return fmt.Errorf("wal: compacted batch has %d records and %d offset deltas", len(b.Records), len(b.OffsetDeltas))
	}
	for i, d := range b.OffsetDeltas {
		if d < 0 || d >= b.Span || (i > 0 && d <= b.OffsetDeltas[i-1]) {
			return fmt.Errorf("wal: compacted batch: offset delta %d of record %d is not increasing within span %d", d, i, b.Span)
		}
	}
	return nil
}

func checkHeadersSorted(hs []Header) error {
	for i := 1; i < len(hs); i++ {
		if hs[i-1].Key > hs[i].Key {
			return fmt.Errorf("headers not sorted by key: %q before %q", hs[i-1].Key, hs[i].Key)
		}
	}
	return nil
}

// SortHeaders sorts headers by key in place, keeping the order of equal keys: the form
// Validate wants.
func SortHeaders(hs []Header) {
	// Insertion sort: stable, allocation-free, and header lists are short.
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && hs[j-1].Key > hs[j].Key; j-- {
			hs[j-1], hs[j] = hs[j], hs[j-1]
		}
	}
}

// EncodedSize is the exact number of bytes Encode produces for b.
func (b *Batch) EncodedSize() int {
	n := batchHeaderSize
	if b.Compacted() {
		n += uvarintSize(uint64(len(b.Records))) + uvarintSize(uint64(b.DeleteHorizon))
		for _, d := range b.OffsetDeltas {
			n += uvarintSize(uint64(d))
		}
	}
	for i := range b.Records {
		r := &b.Records[i]
		n += bytesFieldSize(r.Key) + bytesFieldSize(r.Value) + uvarintSize(uint64(len(r.Headers)))
		for _, h := range r.Headers {
			n += uvarintSize(uint64(len(h.Key))) + len(h.Key) + bytesFieldSize(h.Value)
		}
	}
	return n
}

func bytesFieldSize(p []byte) int {
	if p == nil {
		return varintSize(-1)
	}
	return varintSize(int64(len(p))) + len(p)
}

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func varintSize(v int64) int {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return uvarintSize(u)
}

// Encode returns the batch's encoding in a new slice.
func (b *Batch) Encode() ([]byte, error) {
	return b.AppendEncoded(make([]byte, 0, b.EncodedSize()))
}

// AppendEncoded appends the batch's encoding to dst. On error dst is returned unchanged.
func (b *Batch) AppendEncoded(dst []byte) ([]byte, error) {
	if err := b.Validate(); err != nil {
		return dst, err
	}
	if e := b.reusedEncoding(); e != nil {
		return append(dst, e...), nil
	}
	start := len(dst)
	var hdr [batchHeaderSize]byte
	dst = append(dst, hdr[:]...)
	if b.Compacted() {
		dst = binary.AppendUvarint(dst, uint64(len(b.Records)))
		dst = binary.AppendUvarint(dst, uint64(b.DeleteHorizon))
	}
	for i := range b.Records {
		r := &b.Records[i]
		if b.Compacted() {
			dst = binary.AppendUvarint(dst, uint64(b.OffsetDeltas[i]))
		}
		dst = appendBytesField(dst, r.Key)
		dst = appendBytesField(dst, r.Value)
		dst = binary.AppendUvarint(dst, uint64(len(r.Headers)))
		for _, h := range r.Headers {
			dst = binary.AppendUvarint(dst, uint64(len(h.Key)))
			dst = append(dst, h.Key...)
			dst = appendBytesField(dst, h.Value)
		}
	}
	length := len(dst) - start - lengthFieldSize
	if int64(length) > math.MaxUint32 {
		return dst[:start], fmt.Errorf("wal: batch encodes to %d bytes, more than the length field holds", length)
	}
	p := dst[start:]
	be := binary.BigEndian
	be.PutUint32(p[0:], uint32(length))
	p[posMagic] = batchMagic
	p[posFlags] = uint8(b.Flags)
	be.PutUint64(p[posBaseOffset:], uint64(b.BaseOffset))
	be.PutUint32(p[posCount:], uint32(b.span()))
	be.PutUint32(p[posLeaderEpoch:], uint32(b.LeaderEpoch))
	be.PutUint64(p[posProducerID:], uint64(b.ProducerID))
	be.PutUint16(p[posProducerEpoch:], uint16(b.ProducerEpoch))
	be.PutUint32(p[posBaseSequence:], uint32(b.BaseSequence))
	be.PutUint64(p[posTimestamp:], uint64(b.Timestamp))
	be.PutUint32(p[posCRC:], crc32.Checksum(p[posMagic:], castagnoli))
	return dst, nil
}

func appendBytesField(dst, p []byte) []byte {
	if p == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(p)))
	return append(dst, p...)
}

// batchHeader is the fixed part of an encoded batch: what the index and recovery need
// without touching the records.
type batchHeader struct {
	size      int64 // whole encoded batch, length field included
	crc       uint32
	flags     BatchFlags
	base      int64
	count     int64 // offsets covered: the record count, or a compacted batch's span
	epoch     int32
	timestamp sim.Time
}

func (h batchHeader) next() int64 { return h.base + h.count }

// parseHeader reads the fixed header from p, which holds at least the header or the whole
// rest of the file. It checks the length field against what p holds (ErrTruncated when the
// batch runs past the end of p and p is all there is), the magic, the flags and the count;
// not the CRC.
func parseHeader(p []byte) (batchHeader, *DecodeError) {
	var h batchHeader
	if len(p) < lengthFieldSize {
		return h, decodeErr(0, "length", ErrTruncated, "%d bytes left, a length field needs %d", len(p), lengthFieldSize)
	}
	be := binary.BigEndian
	length := int64(be.Uint32(p))
	if length < batchHeaderSize-lengthFieldSize {
		return h, decodeErr(0, "length", ErrMalformed, "length %d is shorter than a batch header (%d)", length, batchHeaderSize-lengthFieldSize)
	}
	h.size = length + lengthFieldSize
	if len(p) < batchHeaderSize {
		return h, decodeErr(len(p), "header", ErrTruncated, "batch of %d bytes but only %d bytes left", h.size, len(p))
	}
	if p[posMagic] != batchMagic {
		return h, decodeErr(posMagic, "magic", ErrMalformed, "magic %d, want %d", p[posMagic], batchMagic)
	}
	h.crc = be.Uint32(p[posCRC:])
	h.flags = BatchFlags(p[posFlags])
	if h.flags&^flagsKnown != 0 {
		return h, decodeErr(posFlags, "flags", ErrMalformed, "unknown flags %#x", p[posFlags])
	}
	h.base = int64(be.Uint64(p[posBaseOffset:]))
	h.count = int64(be.Uint32(p[posCount:]))
	h.epoch = int32(be.Uint32(p[posLeaderEpoch:]))
	h.timestamp = sim.Time(be.Uint64(p[posTimestamp:]))
	if h.count == 0 || (h.flags&FlagCompacted == 0 && h.count > (length-(batchHeaderSize-lengthFieldSize))/minRecordSize) {
		return h, decodeErr(posCount, "record count", ErrMalformed, "%d records cannot fit in a batch of %d bytes", h.count, h.size)
	}
	if h.base < 0 || h.base > math.MaxInt64-h.count {
		return h, decodeErr(posBaseOffset, "base offset", ErrMalformed, "base offset %d out of range", h.base)
	}
	return h, nil
}

// DecodeBatch decodes the batch at the start of p and returns it with the number of bytes
// it took. It verifies the length, the CRC32C and every field. The batch's byte slices
// alias p (capped, so appending to one cannot overwrite the next): pass a buffer nobody
// else writes. Errors are *DecodeError.
func DecodeBatch(p []byte) (Batch, int, error) {
	b, n, err := decodeBatch(p, true)
	if err != nil {
		return Batch{}, 0, err
	}
	return b, n, nil
}

// decodeBatch is DecodeBatch; with keep false it only verifies (allocating nothing).
func decodeBatch(p []byte, keep bool) (Batch, int, *DecodeError) {
	// Length first, then the checksum, and only then the fields: a flipped byte anywhere
	// after the length field reads as a checksum mismatch, whatever field it hit.
	if len(p) < lengthFieldSize {
		return Batch{}, 0, decodeErr(0, "length", ErrTruncated, "%d bytes left, a length field needs %d", len(p), lengthFieldSize)
	}
	size := int64(binary.BigEndian.Uint32(p)) + lengthFieldSize
	if size < batchHeaderSize {
		return Batch{}, 0, decodeErr(0, "length", ErrMalformed, "length %d is shorter than a batch header (%d)", size-lengthFieldSize, batchHeaderSize-lengthFieldSize)
	}
	if int64(len(p)) < size {
		return Batch{}, 0, decodeErr(len(p), "length", ErrTruncated, "batch of %d bytes but only %d bytes left", size, len(p))
	}
	body := p[:size]
	stored := binary.BigEndian.Uint32(body[posCRC:])
	if sum := crc32.Checksum(body[posMagic:], castagnoli); sum != stored {
		return Batch{}, 0, decodeErr(posCRC, "crc", ErrChecksum, "stored %#08x, computed %#08x", stored, sum)
	}
	h, derr := parseHeader(body)
	if derr != nil {
		return Batch{}, 0, derr
	}
	be := binary.BigEndian
	b := Batch{
		BaseOffset:    h.base,
		LeaderEpoch:   h.epoch,
		ProducerID:    int64(be.Uint64(body[posProducerID:])),
		ProducerEpoch: int16(be.Uint16(body[posProducerEpoch:])),
		BaseSequence:  int32(be.Uint32(body[posBaseSequence:])),
		Timestamp:     h.timestamp,
		Flags:         h.flags,
	}
	d := decoder{p: body, pos: batchHeaderSize}
	n := h.count
	if b.Compacted() {
		b.Span = int32(h.count)
		n = int64(d.uvarint(0, "compacted record count"))
		horizon := d.uvarint(0, "delete horizon")
		if d.err == nil && horizon > math.MaxInt64 {
			d.fail(d.pos, "delete horizon", "%d out of range", horizon)
		}
		b.DeleteHorizon = sim.Time(horizon)
		if d.err == nil && (n < 0 || n > int64(len(body)-d.pos)/(minRecordSize+1)) {
			d.fail(d.pos, "compacted record count", "%d records cannot fit in %d bytes", n, len(body)-d.pos)
		}
		if d.err != nil {
			return Batch{}, 0, d.err
		}
		if keep {
			b.OffsetDeltas = make([]int32, 0, n)
		}
	}
	if keep {
		b.Records = make([]Record, 0, n)
	}
	prevDelta := int64(-1)
	for i := int64(0); i < n; i++ {
		var r Record
		if b.Compacted() {
			delta := int64(d.uvarint(i, "offset delta"))
			if d.err == nil && (delta <= prevDelta || delta >= h.count) {
				d.fail(d.pos, fmt.Sprintf("record %d offset delta", i), "delta %d after %d in a span of %d", delta, prevDelta, h.count)
			}
			if d.err != nil {
				return Batch{}, 0, d.err
			}
			prevDelta = delta
			if keep {
				b.OffsetDeltas = append(b.OffsetDeltas, int32(delta))
			}
		}
		r.Key = d.bytesField(i, "key")
		r.Value = d.bytesField(i, "value")
		nh := d.uvarint(i, "header count")
		if d.err == nil && nh > uint64(len(body)-d.pos)/2 {
			d.fail(d.pos, fmt.Sprintf("record %d header count", i), "%d headers cannot fit in %d bytes", nh, len(body)-d.pos)
		}
		if d.err == nil && nh > 0 && keep {
			r.Headers = make([]Header, 0, nh)
		}
		var prevKey []byte
		for j := uint64(0); d.err == nil && j < nh; j++ {
			kl := d.uvarint(i, "header key length")
			key := d.take(kl, i, "header key")
			val := d.bytesField(i, "header value")
			if d.err != nil {
				break
			}
			if j > 0 && bytes.Compare(key, prevKey) < 0 {
				d.fail(d.pos, fmt.Sprintf("record %d headers", i), "header %q after %q: not sorted", key, prevKey)
				break
			}
			prevKey = key
			if keep {
				r.Headers = append(r.Headers, Header{Key: string(key), Value: val})
			}
		}
		if d.err != nil {
			return Batch{}, 0, d.err
		}
		if keep {
			b.Records = append(b.Records, r)
		}
	}
	if d.pos != len(body) {
		return Batch{}, 0, decodeErr(d.pos, "records", ErrMalformed, "%d bytes left over after %d records", len(body)-d.pos, n)
	}
	if keep {
		b.encoding, b.decodedRecords = body[:len(body):len(body)], b.Records
	}
	return b, int(h.size), nil
}

// decoder walks the records of one batch whose CRC already matched; any error is
// ErrMalformed (the bytes are what the writer wrote, and the writer was wrong).
type decoder struct {
	p   []byte
	pos int
	err *DecodeError
}

func (d *decoder) fail(pos int, field, format string, args ...any) {
	if d.err == nil {
		d.err = decodeErr(pos, field, ErrMalformed, format, args...)
	}
}

func (d *decoder) uvarint(rec int64, field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p[d.pos:])
	if n <= 0 {
		d.fail(d.pos, fmt.Sprintf("record %d %s", rec, field), "bad uvarint")
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) take(n uint64, rec int64, field string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.p)-d.pos) {
		d.fail(d.pos, fmt.Sprintf("record %d %s", rec, field), "length %d runs past the batch end (%d bytes left)", n, len(d.p)-d.pos)
		return nil
	}
	end := d.pos + int(n)
	v := d.p[d.pos:end:end]
	d.pos = end
	return v
}

func (d *decoder) bytesField(rec int64, field string) []byte {
	if d.err != nil {
		return nil
	}
	v, n := binary.Varint(d.p[d.pos:])
	if n <= 0 {
		d.fail(d.pos, fmt.Sprintf("record %d %s length", rec, field), "bad varint")
		return nil
	}
	if v < -1 {
		d.fail(d.pos, fmt.Sprintf("record %d %s length", rec, field), "length %d", v)
		return nil
	}
	d.pos += n
	if v == -1 {
		return nil
	}
	return d.take(uint64(v), rec, field)
}

// String renders a batch on one line for traces and test failures.
func (b *Batch) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "batch [%d..%d] epoch=%d t=%s", b.BaseOffset, b.LastOffset(), b.LeaderEpoch, b.Timestamp)
	if b.ProducerID != NoProducerID {
		fmt.Fprintf(&s, " pid=%d/%d seq=%d", b.ProducerID, b.ProducerEpoch, b.BaseSequence)
	}
	if b.Flags&FlagTransactional != 0 {
		s.WriteString(" txn")
	}
	if b.Flags&FlagControl != 0 {
		s.WriteString(" control")
	}
	if b.Compacted() {
		fmt.Fprintf(&s, " compacted(%d records)", len(b.Records))
	}
	return s.String()
}
