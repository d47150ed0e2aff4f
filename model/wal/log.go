package wal

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"mqsim/sim"
)

// Log is one partition's log in a directory of a node's sim.Disk. It is not safe for
// concurrent use (nothing in mqsim is concurrent). Methods that change files return the
// names of the files the flush policy wants fsynced now, in a field or slice named Sync;
// the caller passes each to sim.Env.Fsync.
type Log struct {
	disk *sim.Disk
	dir  string
	cfg  Config

	segs     []*segment // by base offset; the last is active; never empty
	logStart int64
	epochs   epochCache
	// cleanedTo is the cleaner checkpoint (compact.go): below it every key appears once.
	cleanedTo int64

	saved         checkpoint    // the state in the newest checkpoint written or loaded
	slots         [2]checkpoint // what checkpoint.0 and .1 hold
	slotValid     [2]bool
	ckptRequested [2]int64  // like segment.requested, for checkpoint.0 and .1
	ckptNames     [2]string // checkpointName of both slots, made once: asked for at every event

	// durableSegs counts the oldest segments known to be wholly synced, never the active
	// one: SyncedOffset starts its walk after them, so that an fsync completion costs what
	// it covers rather than the number of segments (a long session rolls thousands). A
	// rolled segment is not appended to, and its synced size only shrinks when the log
	// cuts or deletes it (TruncateTo, Reset, deletion from the front, the cleaner's
	// Replace): each of those lowers the count.
	durableSegs int

	// lastRead is the last batch Read decoded (decodeRead); readScratch the buffer
	// readWindow compares its bytes in.
	lastRead    decodedRead
	readScratch []byte

	want    []string // files the policy wants fsynced, not yet handed to the caller
	scratch []byte   // encoding buffer; the disk copies what is appended

	// compressed sizes a compressed batch's records on the disk (SetCompression); nil:
	// every batch is stored as encoded.
	compressed Compression
}

// Compression says how many bytes n bytes of a compressed batch's records take once
// compressed by the batch's codec (Batch.Codec). The log has no table of codecs: its
// owner gives it (proto.Codec's ratios).
type Compression func(b *Batch, n int) int

// SetCompression makes the log store each compressed batch at its compressed size: its
// header as it is and its records compressed, which is what the disk's write
// throughput and page cache count (sim.Disk.AppendStored). The bytes kept are the
// records as they came: mqsim runs no compressor.
func (l *Log) SetCompression(c Compression) { l.compressed = c }

// storedSize is the size on the disk of a batch encoded in n bytes.
func (l *Log) storedSize(b *Batch, n int) int {
	if l.compressed == nil || b.Codec() == 0 || n <= batchHeaderSize {
		return n
	}
	return batchHeaderSize + l.compressed(b, n-batchHeaderSize)
}

// Errors for bad requests. They are wrapped with details; test with errors.Is.
var (
	// ErrOffsetOutOfRange: the offset is below the log start or above the log end.
	ErrOffsetOutOfRange = errors.New("offset out of range")
	// ErrBatchTooLarge: the batch encodes to more than MaxBatchBytes.
	ErrBatchTooLarge = errors.New("batch too large")
	// ErrUnexpectedOffset: a replicated batch does not start at the log end offset.
	ErrUnexpectedOffset = errors.New("unexpected append offset")
	// ErrInvalidBatch: the batch cannot be encoded or the log refuses it.
	ErrInvalidBatch = errors.New("invalid batch")
	// ErrCorrupt: bytes the log reads back do not decode: bit rot after recovery.
	ErrCorrupt = errors.New("corrupt log data")
)

// checkpointName is the file of the checkpoint slot gen%2.
func (l *Log) checkpointName(gen uint64) string { return l.ckptNames[gen%2] }

// Dir is the log's directory on the disk.
func (l *Log) Dir() string { return l.dir }

// Config is the log's configuration.
func (l *Log) Config() Config { return l.cfg }

// LogStartOffset is the first offset a read may ask for.
func (l *Log) LogStartOffset() int64 { return l.logStart }

// LogEndOffset (LEO) is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.active().next }

func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

// SizeBytes is the total size of the log's segments.
func (l *Log) SizeBytes() int64 {
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// Segments describes the segments, oldest first.
func (l *Log) Segments() []SegmentInfo {
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = l.info(s)
	}
	return out
}

func (l *Log) info(s *segment) SegmentInfo {
	return SegmentInfo{
		File: s.file, BaseOffset: s.base, NextOffset: s.next, SizeBytes: s.size,
		SyncedBytes: max(l.disk.SyncedSize(s.file), 0), IndexEntries: len(s.index),
		FirstTimestamp: s.firstTimestamp, MaxTimestamp: s.maxTimestamp, Active: s == l.active(),
	}
}

// Epochs is a copy of the leader epoch cache, oldest epoch first.
func (l *Log) Epochs() []EpochEntry { return slices.Clone(l.epochs) }

// LatestEpoch is the newest epoch in the cache, or UndefinedEpoch.
func (l *Log) LatestEpoch() int32 {
	if len(l.epochs) == 0 {
		return UndefinedEpoch
	}
	return l.epochs[len(l.epochs)-1].Epoch
}

// EndOffsetFor answers OffsetsForLeaderEpoch(epoch) (KIP-101, KIP-279) as Kafka's
// LeaderEpochFileCache.endOffsetFor does: the largest epoch <= epoch that this log knows,
// and its end offset, which is the start offset of the next higher known epoch, or the
// log end offset when that epoch is the latest. (UndefinedEpoch, UndefinedOffset) when
// epoch is undefined or newer than every epoch the log knows.
func (l *Log) EndOffsetFor(epoch int32) (int32, int64) {
	return l.epochs.endOffsetFor(epoch, l.LogEndOffset())
}

// AppendResult says what an append wrote.
type AppendResult struct {
	BaseOffset int64  // offset of the first record
	NextOffset int64  // the log end offset after the append
	File       string // the segment written to
	Position   int64  // byte position of the batch in File
	Bytes      int64  // encoded size of the batch
	Stored     int64  // its size on the disk: Bytes, or less for a compressed batch (SetCompression)
	// Rolled is why a new segment was started before this batch ("segment.bytes",
	// "segment.ms"), or empty.
	Rolled string
	// EpochStarted is true when the batch opened a new entry in the epoch cache.
	EpochStarted bool
	// Sync lists the files to fsync now: the active segment under FlushEveryBatch, the
	// segment just rolled, the checkpoint when the epoch cache changed.
	Sync []string
}

// Append appends b as the leader does: the batch gets the offsets from the log end on
// (b.BaseOffset is ignored) and keeps its LeaderEpoch, which the leader stamps with its
// own epoch. b's records are kept for the reads that follow (the caller does not modify
// them, as no one modifies a message).
func (l *Log) Append(b Batch) (AppendResult, error) {
	b.BaseOffset = l.LogEndOffset()
	res, err := l.append(&b)
	if err == nil {
		// The followers read this batch next: kept as Read keeps a batch it decoded
		// (decodeRead), with a copy of its bytes, it spares the first one's decoding.
		enc := slices.Clone(l.scratch)
		b.encoding, b.decodedRecords = enc, b.Records
		l.lastRead = decodedRead{file: res.File, pos: res.Position, enc: enc, batch: b}
	}
	return res, err
}

// AppendReplica appends a batch copied from the leader, as a follower does: it must start
// at the log end offset (ErrUnexpectedOffset otherwise) and is stored as it is.
func (l *Log) AppendReplica(b Batch) (AppendResult, error) {
	if leo := l.LogEndOffset(); b.BaseOffset != leo {
		return AppendResult{}, fmt.Errorf("wal: %s: replica batch starts at %d, log end is %d: %w", l.dir, b.BaseOffset, leo, ErrUnexpectedOffset)
	}
	return l.append(&b)
}

func (l *Log) append(b *Batch) (AppendResult, error) {
	if b.LeaderEpoch < 0 {
		return AppendResult{}, fmt.Errorf("wal: %s: batch leader epoch %d: %w", l.dir, b.LeaderEpoch, ErrInvalidBatch)
	}
	enc, err := b.AppendEncoded(l.scratch[:0])
	if err != nil {
		return AppendResult{}, fmt.Errorf("%w: %w", ErrInvalidBatch, err)
	}
	l.scratch = enc
	if len(enc) > l.cfg.MaxBatchBytes {
		return AppendResult{}, fmt.Errorf("wal: %s: batch of %d records is %d bytes, MaxBatchBytes is %d: %w",
			l.dir, len(b.Records), len(enc), l.cfg.MaxBatchBytes, ErrBatchTooLarge)
	}
	h, derr := parseHeader(enc)
	if derr != nil {
		invariant("own encoding does not parse: %v", derr)
	}

	var res AppendResult
	act := l.active()
	if act.size > 0 {
		switch {
		case act.size+h.size > l.cfg.SegmentBytes:
			res.Rolled = "segment.bytes"
		case b.Timestamp.Sub(act.firstTimestamp) > l.cfg.SegmentAge:
			res.Rolled = "segment.ms"
		}
	}
	if res.Rolled != "" {
		l.wantSync(act.file) // Kafka flushes a segment when it rolls, whatever the policy
		act = l.newSegment(h.base)
	}
	stored := l.storedSize(b, len(enc))
	pos := l.disk.AppendStored(act.file, enc, int64(stored))
	act.noteBatch(h, pos, l.cfg.IndexIntervalBytes)
	if l.disk.Size(act.file) != act.size {
		invariant("%s: disk size %d, segment size %d", act.file, l.disk.Size(act.file), act.size)
	}

	l.epochs, res.EpochStarted = l.epochs.assign(b.LeaderEpoch, b.BaseOffset)
	if l.cfg.Flush == FlushEveryBatch {
		l.wantSync(act.file)
	}
	res.BaseOffset, res.NextOffset = h.base, h.next()
	res.File, res.Position, res.Bytes, res.Stored = act.file, pos, h.size, int64(stored)
	res.Sync = l.finish()
	return res, nil
}

// newSegment creates the file of an empty segment starting at base and makes it active.
func (l *Log) newSegment(base int64) *segment {
	name := SegmentName(l.dir, base)
	if l.disk.Exists(name) {
		invariant("segment %s already exists", name)
	}
	l.disk.Truncate(name, 0) // creates it; creation is durable at once on a sim.Disk
	s := &segment{file: name, base: base, next: base}
	l.segs = append(l.segs, s)
	return s
}

// AssignEpoch records that epoch starts at the log end offset, as a new leader does
// before its first append (Kafka: maybeAssignEpochStartOffset on becoming leader), so
// that OffsetsForLeaderEpoch of the previous epoch answers the right end offset at once.
// It returns the files to fsync (the checkpoint, when the cache changed).
func (l *Log) AssignEpoch(epoch int32) ([]string, error) {
	if epoch < 0 {
		return nil, fmt.Errorf("wal: %s: assign epoch %d: epochs are not negative", l.dir, epoch)
	}
	l.epochs, _ = l.epochs.assign(epoch, l.LogEndOffset())
	return l.finish(), nil
}

// Read returns copies of the batches from the one containing offset on, as many whole
// batches as fit in maxBytes of encoding, and always at least one (as Kafka's fetch does
// when the first batch is larger than the limit). It reads across segments. Reading at
// the log end offset returns nothing; below the log start or above the end is
// ErrOffsetOutOfRange. The first batch may begin before offset (offsets are assigned per
// batch; the reader skips what it did not ask for). The batches share one buffer and
// nothing else, except a batch an earlier Read returned from the same bytes, which is
// given again (decodeRead): they stay valid and unchanged whatever the log does next,
// and, as every message, are never modified by those who get them.
// Bytes that no longer decode (bit rot after recovery) are ErrCorrupt when they are in the
// first batch; after it, Read stops before them.
func (l *Log) Read(offset int64, maxBytes int) ([]Batch, error) {
	leo := l.LogEndOffset()
	if offset < l.logStart || offset > leo {
		return nil, fmt.Errorf("wal: %s: read at %d, log holds [%d,%d): %w", l.dir, offset, l.logStart, leo, ErrOffsetOutOfRange)
	}
	if offset == leo {
		return nil, nil
	}
	si, pos, err := l.locate(offset)
	if err != nil {
		return nil, err
	}
	var out []Batch
	budget := int64(maxBytes)
	for ; si < len(l.segs); si, pos = si+1, 0 {
		seg := l.segs[si]
		avail := seg.size - pos
		if avail <= 0 {
			continue
		}
		want := min(avail, max(budget, 0))
		if len(out) == 0 {
			h, err := l.headerAt(seg, pos)
			if err != nil {
				return nil, err
			}
			want = max(want, h.size)
		}
		if want < lengthFieldSize {
			break
		}
		buf := l.readWindow(seg.file, pos, want)
		used := 0
		for used < len(buf) { // each pass takes a whole batch or ends
			rest := buf[used:]
			if len(out) > 0 {
				// The window holds the first batch whole; a later one may be cut off
				// by maxBytes.
				h, derr := parseHeader(rest)
				if (derr != nil && errors.Is(derr, ErrTruncated)) || (derr == nil && h.size > int64(len(rest))) {
					break
				}
			}
			b, k, derr := l.decodeRead(seg.file, pos+int64(used), rest, used == 0)
			if derr != nil {
				if len(out) > 0 {
					return out, nil // the next Read, starting here, reports it
				}
				return nil, fmt.Errorf("wal: %s byte %d: %w: %w", seg.file, pos+int64(used), ErrCorrupt, derr)
			}
			if len(out) == 0 && !b.Contains(offset) {
				return nil, fmt.Errorf("wal: %s byte %d: batch [%d..%d] does not hold offset %d: %w", seg.file, pos, b.BaseOffset, b.LastOffset(), offset, ErrCorrupt)
			}
			out = append(out, b)
			used += k
			budget -= int64(k)
		}
		if used < len(buf) || budget <= 0 {
			break
		}
	}
	return out, nil
}

// readWindow reads want bytes of file from pos into a buffer of their own. When the
// window is the batch the last Read decoded (decodeRead), it reads into the log's scratch
// buffer first: unchanged bytes are answered with that read's buffer, which holds the
// same bytes, and only changed ones get a buffer of their own. The disk is read once
// either way.
func (l *Log) readWindow(file string, pos, want int64) []byte {
	c := &l.lastRead
	last := c.file == file && c.pos == pos && int64(len(c.enc)) == want
	buf := l.readScratch
	if last {
		buf = slices.Grow(buf[:0], int(want))[:want]
		l.readScratch = buf
	} else {
		buf = make([]byte, want)
	}
	if n := l.disk.ReadAt(file, pos, buf); int64(n) != want {
		invariant("%s: read %d of %d bytes at %d", file, n, want, pos)
	}
	if !last {
		return buf
	}
	if bytes.Equal(buf, c.enc) {
		return c.enc
	}
	return slices.Clone(buf)
}

// decodeRead decodes the batch at the start of p, read from file at pos. A leader's
// followers ask for the batch it just appended one after the other, so the last batch
// Read decoded is kept with its bytes: when the same file and position hold the same
// bytes, the batch decoded from them is the answer (decoding is a function of the bytes
// alone), and the second follower's read costs a comparison instead of a decode and a
// copy of every record. The bytes are still read from the disk (what a read costs is
// the kernel's to charge), and bytes changed since (bit rot, a rewrite) decode afresh.
// Only a batch that is the whole of its read's buffer is kept (wholeBuffer: p is the
// buffer from its start), so what the log keeps alive is that one batch, never a
// consumer's large read window.
func (l *Log) decodeRead(file string, pos int64, p []byte, wholeBuffer bool) (Batch, int, *DecodeError) {
	if c := &l.lastRead; c.file == file && c.pos == pos && len(c.enc) > 0 && len(p) >= len(c.enc) &&
		(&p[0] == &c.enc[0] || bytes.Equal(p[:len(c.enc)], c.enc)) { // readWindow's answer is c.enc itself
		return c.batch, len(c.enc), nil
	}
	b, k, derr := decodeBatch(p, true)
	if derr == nil && wholeBuffer && k == len(p) {
		l.lastRead = decodedRead{file: file, pos: pos, enc: p, batch: b}
	}
	return b, k, derr
}

// decodedRead is a batch Read decoded and the bytes it was decoded from.
type decodedRead struct {
	file  string
	pos   int64
	enc   []byte
	batch Batch
}

// headerAt reads and checks the header of the batch at pos of seg.
func (l *Log) headerAt(seg *segment, pos int64) (batchHeader, error) {
	var buf [batchHeaderSize]byte
	n := l.disk.ReadAt(seg.file, pos, buf[:])
	h, derr := parseHeader(buf[:n])
	if derr == nil && pos+h.size > seg.size {
		derr = decodeErr(0, "length", ErrMalformed, "batch of %d bytes runs past the segment end %d", h.size, seg.size)
	}
	if derr != nil {
		return h, fmt.Errorf("wal: %s byte %d: %w: %w", seg.file, pos, ErrCorrupt, derr)
	}
	return h, nil
}

// locate finds the segment and byte position of the batch holding offset, which must be
// in [first segment base, log end). It starts from the sparse index entry at or before
// offset and reads batch headers forward: at most IndexIntervalBytes worth of batches.
func (l *Log) locate(offset int64) (int, int64, error) {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	if si < 0 || offset >= l.segs[si].next {
		invariant("locate %d: segments start at %d, log end %d", offset, l.segs[0].base, l.LogEndOffset())
	}
	seg := l.segs[si]
	pos := seg.floor(offset)
	for steps := seg.size/batchHeaderSize + 1; steps > 0; steps-- {
		h, err := l.headerAt(seg, pos)
		if err != nil {
			return 0, 0, err
		}
		if offset < h.next() {
			if offset < h.base {
				return 0, 0, fmt.Errorf("wal: %s byte %d: batch starts at %d, past offset %d: %w", seg.file, pos, h.base, offset, ErrCorrupt)
			}
			return si, pos, nil
		}
		pos += h.size
	}
	return 0, 0, fmt.Errorf("wal: %s: offset %d not found: %w", seg.file, offset, ErrCorrupt)
}

// Truncation says what TruncateTo or Reset removed.
type Truncation struct {
	Requested       int64 // the offset asked for
	OldEnd, NewEnd  int64 // log end offset before and after
	Bytes           int64 // bytes removed
	SegmentsDeleted int
	Sync            []string // files to fsync (the checkpoint, when it changed)
}

func (t Truncation) String() string {
	if t.OldEnd == t.NewEnd && t.Bytes == 0 {
		return fmt.Sprintf("truncate to %d: nothing to remove (log end %d)", t.Requested, t.OldEnd)
	}
	return fmt.Sprintf("truncate to %d: log end %d -> %d, %d bytes, %d segments deleted", t.Requested, t.OldEnd, t.NewEnd, t.Bytes, t.SegmentsDeleted)
}

// TruncateTo removes every record at and above offset, as a follower does after finding
// where its log diverges from the leader's. Whole batches go: when offset falls inside a
// batch, the batch goes too and the new log end is its base offset (Kafka's
// LogSegment.truncateTo). Later segments are deleted and the segment holding offset is cut
// and becomes the active one again. The epoch cache forgets the epochs that started at or
// after the new end. Below the first segment, the log is emptied and restarts at offset
// (Kafka's truncateFullyAndStartAt). At or above the log end it does nothing.
func (l *Log) TruncateTo(offset int64) (Truncation, error) {
	t := Truncation{Requested: offset, OldEnd: l.LogEndOffset(), NewEnd: l.LogEndOffset()}
	if offset < 0 {
		return t, fmt.Errorf("wal: %s: truncate to %d: offsets are not negative", l.dir, offset)
	}
	if offset >= t.OldEnd {
		// Nothing to cut, but an epoch that starts at the log end and has no record yet
		// goes: a broker that became leader and was replaced before its first append
		// must not keep claiming that epoch, or as a follower it would report it as its
		// last fetched epoch forever (Kafka's UnifiedLog.truncateTo does the same).
		l.epochs, _ = l.epochs.truncateFromEnd(t.OldEnd)
		t.Sync = l.finish()
		return t, nil
	}
	if offset < l.segs[0].base {
		return l.Reset(offset)
	}
	si, pos, err := l.locate(offset)
	if err != nil {
		return t, err
	}
	seg := l.segs[si]
	h, err := l.headerAt(seg, pos)
	if err != nil {
		return t, err
	}
	// Read what the cut segment keeps before changing anything, so an error (bit rot)
	// leaves the log as it was.
	first, newest, err := l.timestamps(seg, pos)
	if err != nil {
		return t, err
	}
	for len(l.segs) > si+1 {
		s := l.segs[len(l.segs)-1]
		t.Bytes += s.size
		t.SegmentsDeleted++
		l.disk.Delete(s.file)
		l.segs = l.segs[:len(l.segs)-1]
	}
	t.Bytes += seg.size - pos
	l.durableSegs = min(l.durableSegs, si)
	l.disk.Truncate(seg.file, pos)
	seg.size, seg.next = pos, h.base
	seg.requested = min(seg.requested, pos)
	seg.index = seg.index[:sort.Search(len(seg.index), func(i int) bool { return seg.index[i].pos >= pos })]
	seg.firstTimestamp, seg.maxTimestamp = first, newest
	t.NewEnd = l.LogEndOffset()
	l.logStart = min(l.logStart, t.NewEnd)
	l.cleanedTo = min(l.cleanedTo, t.NewEnd)
	l.epochs, _ = l.epochs.truncateFromEnd(t.NewEnd)
	t.Sync = l.finish()
	return t, nil
}

// timestamps reads the headers of the batches in the first end bytes of seg and returns
// the first batch's timestamp and the newest (zeros when end is 0).
func (l *Log) timestamps(seg *segment, end int64) (first, newest sim.Time, err error) {
	at := int64(0)
	for steps := end/batchHeaderSize + 1; at < end && steps > 0; steps-- {
		h, err := l.headerAt(seg, at)
		if err != nil {
			return 0, 0, err
		}
		if at == 0 {
			first, newest = h.timestamp, h.timestamp
		}
		newest = max(newest, h.timestamp)
		at += h.size
	}
	if at != end {
		invariant("%s: batch headers end at %d, expected %d", seg.file, at, end)
	}
	return first, newest, nil
}

// Reset deletes every segment and restarts the log, empty, at offset: Kafka's
// truncateFullyAndStartAt, for a follower whose log is wholly behind the leader's log
// start (or wholly divergent). The epoch cache is cleared.
func (l *Log) Reset(offset int64) (Truncation, error) {
	t := Truncation{Requested: offset, OldEnd: l.LogEndOffset()}
	if offset < 0 {
		return t, fmt.Errorf("wal: %s: reset to %d: offsets are not negative", l.dir, offset)
	}
	for _, s := range l.segs {
		t.Bytes += s.size
		t.SegmentsDeleted++
		l.disk.Delete(s.file)
	}
	l.segs = l.segs[:0]
	l.durableSegs = 0
	l.newSegment(offset)
	l.logStart, l.cleanedTo = offset, offset
	l.epochs = l.epochs[:0]
	t.NewEnd = offset
	t.Sync = l.finish()
	return t, nil
}

// Deletion says which segments DeleteBefore or ApplyRetention deleted.
type Deletion struct {
	Segments       []SegmentInfo // the deleted segments, oldest first
	Reasons        []string      // per segment: "retention.ms", "retention.bytes" or "log start offset"
	LogStartOffset int64         // after the deletion
	Sync           []string      // files to fsync (the checkpoint, when it changed)
}

func (d Deletion) String() string {
	if len(d.Segments) == 0 {
		return fmt.Sprintf("no segment deleted, log start %d", d.LogStartOffset)
	}
	s := fmt.Sprintf("deleted %d segments, log start %d:", len(d.Segments), d.LogStartOffset)
	for i, g := range d.Segments {
		s += fmt.Sprintf(" [%d,%d) %dB (%s)", g.BaseOffset, g.NextOffset, g.SizeBytes, d.Reasons[i])
	}
	return s
}

// DeleteBefore moves the log start offset up to offset (Kafka's DeleteRecords; the
// broker checks offset <= high watermark) and deletes the rolled segments that lie wholly
// below it. The active segment is never deleted, even when offset is the log end: reads
// below the log start are refused instead. Moving the start down does nothing.
func (l *Log) DeleteBefore(offset int64) (Deletion, error) {
	leo := l.LogEndOffset()
	if offset < 0 || offset > leo {
		return Deletion{LogStartOffset: l.logStart}, fmt.Errorf("wal: %s: delete before %d, log end is %d: %w", l.dir, offset, leo, ErrOffsetOutOfRange)
	}
	var d Deletion
	if offset > l.logStart {
		l.logStart = offset
		l.deleteOldest(&d, "log start offset", func(s *segment) bool { return s.next <= l.logStart })
	}
	return l.afterDeletion(d), nil
}

// ApplyRetention deletes the oldest rolled segments that retention allows, as Kafka's
// periodic retention check does (log.retention.check.interval.ms, every 5 minutes;
// the broker sets the timer): first while the oldest segment's newest batch is more than
// RetentionAge older than now, then while the log without the oldest segment still holds
// RetentionBytes. Only segments wholly below limitOffset go: the broker passes its high
// watermark, as Kafka does, so retention never removes uncommitted records. The active
// segment is never deleted.
func (l *Log) ApplyRetention(now sim.Time, limitOffset int64) Deletion {
	var d Deletion
	below := func(s *segment) bool { return s.next <= limitOffset }
	if l.cfg.RetentionAge >= 0 {
		l.deleteOldest(&d, "retention.ms", func(s *segment) bool {
			return below(s) && now.Sub(s.maxTimestamp) > l.cfg.RetentionAge
		})
	}
	if l.cfg.RetentionBytes >= 0 {
		total := l.SizeBytes()
		l.deleteOldest(&d, "retention.bytes", func(s *segment) bool {
			if below(s) && total-s.size >= l.cfg.RetentionBytes {
				total -= s.size
				return true
			}
			return false
		})
	}
	return l.afterDeletion(d)
}

// deleteOldest deletes rolled segments from the oldest on while ok says so.
func (l *Log) deleteOldest(d *Deletion, reason string, ok func(*segment) bool) {
	for len(l.segs) > 1 && ok(l.segs[0]) {
		s := l.segs[0]
		d.Segments = append(d.Segments, l.info(s))
		d.Reasons = append(d.Reasons, reason)
		l.disk.Delete(s.file)
		l.segs = slices.Delete(l.segs, 0, 1)
		l.durableSegs = max(l.durableSegs-1, 0)
	}
}

func (l *Log) afterDeletion(d Deletion) Deletion {
	l.logStart = max(l.logStart, l.segs[0].base)
	l.epochs, _ = l.epochs.truncateFromStart(l.logStart)
	d.LogStartOffset = l.logStart
	d.Sync = l.finish()
	return d
}

// Flush lists every file of the log with bytes that are neither durable nor covered by
// an fsync already asked for, and records them as asked for. The broker calls it from
// its flush timer (FlushInterval), or before a clean shutdown, and fsyncs each file.
func (l *Log) Flush() []string {
	for _, s := range l.segs {
		l.wantSync(s.file)
	}
	l.wantSync(l.checkpointName(0))
	l.wantSync(l.checkpointName(1))
	return l.takeSync()
}

// OnSynced is the broker's forward of sim.FsyncDone (its File): it reports whether the
// file belongs to this log and the synced offset now, for a trace event. The durable
// state itself is read from the disk (sim.Disk.SyncedSize), so a forgotten call costs
// nothing but this answer.
func (l *Log) OnSynced(file string) (syncedOffset int64, ours bool) {
	if !strings.HasPrefix(file, l.dir+"/") {
		return 0, false
	}
	return l.SyncedOffset(), true
}

// SyncedOffset is the first offset that is not durable: a crash now keeps every record
// below it (barring bit rot) and may lose any at or above it. It walks the segments in
// order and stops at the first whose synced prefix is short of its size, at the last
// whole batch inside that prefix: recovery cuts a segment at its first incomplete batch
// and drops the segments after a cut. It can be below LogStartOffset when even the
// first segment is not durable. One more case: after the log start moved down
// (TruncateTo or Reset below it), until the checkpoint saying so is synced a crash would
// bring the old, higher start back and with it drop what lies below; then nothing above
// the start counts as durable.
func (l *Log) SyncedOffset() int64 {
	off := l.syncedSegmentsOffset()
	if l.durableLogStart() > l.logStart {
		off = min(off, l.logStart)
	}
	return off
}

func (l *Log) syncedSegmentsOffset() int64 { return l.syncedOffsetFrom(l.durableSegs) }

// syncedOffsetFrom walks the segments from segs[first] on (those before it must be wholly
// synced) and counts in durableSegs the rolled ones it finds wholly synced right after
// the known prefix.
func (l *Log) syncedOffsetFrom(first int) int64 {
	for i := first; i < len(l.segs); i++ {
		s := l.segs[i]
		synced := l.disk.SyncedSize(s.file)
		if synced >= s.size {
			if i == l.durableSegs && i < len(l.segs)-1 {
				l.durableSegs++
			}
			continue
		}
		e := s.floorPos(synced)
		pos, off := e.pos, e.offset
		for steps := s.size/batchHeaderSize + 1; steps > 0; steps-- {
			h, err := l.headerAt(s, pos)
			if err != nil || pos+h.size > synced {
				// The batch at pos is not wholly durable (or no longer parses, and
				// recovery would cut there too).
				return off
			}
			pos, off = pos+h.size, h.next()
		}
		return off
	}
	return l.LogEndOffset()
}

// durableLogStart is the log start offset recovery would read now: the one in the newest
// checkpoint whose file is wholly synced (0 when none is: recovery then starts at the
// first segment, which is never above the log start).
func (l *Log) durableLogStart() int64 {
	var best checkpoint
	found := false
	for slot := range l.slots {
		name := l.checkpointName(uint64(slot))
		size := l.disk.Size(name)
		if !l.slotValid[slot] || size <= 0 || l.disk.SyncedSize(name) < size {
			continue
		}
		if !found || l.slots[slot].gen > best.gen {
			best, found = l.slots[slot], true
		}
	}
	return best.logStart
}

// Durable reports whether offset is below SyncedOffset.
func (l *Log) Durable(offset int64) bool { return offset < l.SyncedOffset() }

// wantSync marks a file for the next takeSync.
func (l *Log) wantSync(name string) {
	if !slices.Contains(l.want, name) {
		l.want = append(l.want, name)
	}
}

// finish ends every mutation: it rewrites the checkpoint if the log start or the epoch
// cache changed, then hands out the files to fsync.
func (l *Log) finish() []string {
	l.epochs.check()
	if l.logStart > l.LogEndOffset() {
		invariant("log start %d above log end %d", l.logStart, l.LogEndOffset())
	}
	cur := checkpoint{logStart: l.logStart, epochs: l.epochs}
	if !cur.sameState(l.saved) {
		l.writeCheckpoint()
	}
	return l.takeSync()
}

func (l *Log) writeCheckpoint() {
	c := checkpoint{gen: l.saved.gen + 1, logStart: l.logStart, epochs: slices.Clone(l.epochs)}
	name := l.checkpointName(c.gen)
	l.disk.Truncate(name, 0)
	l.disk.Append(name, encodeCheckpoint(c))
	l.ckptRequested[c.gen%2] = 0
	l.slots[c.gen%2], l.slotValid[c.gen%2] = c, true
	l.saved = c
	l.wantSync(name)
}

// takeSync returns the wanted files that have bytes neither durable nor already asked
// for, and records them as asked for.
func (l *Log) takeSync() []string {
	var out []string
	for _, name := range l.want {
		req := l.requestedOf(name)
		if req == nil {
			continue // deleted since
		}
		size := l.disk.Size(name)
		if size > max(*req, l.disk.SyncedSize(name)) {
			*req = size
			out = append(out, name)
		}
	}
	l.want = l.want[:0]
	return out
}

func (l *Log) requestedOf(name string) *int64 {
	for i := range l.ckptRequested {
		if name == l.checkpointName(uint64(i)) {
			return &l.ckptRequested[i]
		}
	}
	// Newest first: the file wanted is nearly always the active segment (or the one just
	// rolled), and a long log has thousands of segments.
	for i := len(l.segs) - 1; i >= 0; i-- {
		if s := l.segs[i]; s.file == name {
			return &s.requested
		}
	}
	return nil
}

// OffsetForTime finds the first offset at or after the log start whose batch timestamp
// is at or after t, and that timestamp: Kafka's UnifiedLog.fetchOffsetByTimestamp
// (LogSegment.findOffsetByTimestamp), which skips the segments whose newest timestamp is
// older than t and then scans batches. Kafka looks the batch up in the segment's time
// index; mqsim keeps no time index and reads the headers of the segment found. Every
// record of a batch carries the batch's timestamp (the leader's append time), so the
// answer is a batch's first offset, or the log start inside the first batch. found is
// false when no batch is that recent.
func (l *Log) OffsetForTime(t sim.Time) (offset int64, ts sim.Time, found bool, err error) {
	for _, seg := range l.segs {
		if seg.size == 0 || seg.maxTimestamp < t || seg.next <= l.logStart {
			continue
		}
		for pos := int64(0); pos < seg.size; {
			h, err := l.headerAt(seg, pos)
			if err != nil {
				return 0, 0, false, err
			}
			if h.timestamp >= t && h.next() > l.logStart {
				return max(h.base, l.logStart), h.timestamp, true, nil
			}
			pos += h.size
		}
	}
	return 0, 0, false, nil
}
