package wal

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mqsim/sim"
)

// Cut is one piece of the log that recovery removed.
type Cut struct {
	File     string
	Position int64 // byte of File where the removed part starts (0: the whole file)
	Offset   int64 // the first offset that is gone: the log end right after this cut
	Bytes    int64
	Reason   string // "torn tail", "corrupt batch (crc ...)", "segment after a cut", ...
	Deleted  bool   // the whole file was deleted
}

func (c Cut) String() string {
	if c.Deleted {
		return fmt.Sprintf("deleted %s (%d bytes, %s)", c.File, c.Bytes, c.Reason)
	}
	return fmt.Sprintf("truncated %d bytes %s at offset %d (%s byte %d)", c.Bytes, c.Reason, c.Offset, c.File, c.Position)
}

// Recovery says what Open found and repaired, for the broker's trace.
type Recovery struct {
	Dir            string
	Segments       int   // segments kept
	Batches        int   // batches verified (length, CRC32C, fields, offsets)
	LogStartOffset int64 // after recovery
	LogEndOffset   int64 // after recovery
	// Checkpoint names the checkpoint file used and its generation, or says there was
	// none that was valid.
	Checkpoint string
	// Cuts lists what was removed, in log order: a torn or corrupt tail, segments after
	// it or after a gap.
	Cuts []Cut
	// EpochsDropped and EpochsAdded count the epoch cache entries the checkpoint had
	// that the log does not support (they start at or past the recovered log end, or
	// batches say otherwise) and those the log's batches add.
	EpochsDropped, EpochsAdded int
	// Sync lists files to fsync now (the checkpoint, when recovery rewrote it).
	Sync []string
}

// TruncatedBytes is the total size of the cuts.
func (r Recovery) TruncatedBytes() int64 {
	var n int64
	for _, c := range r.Cuts {
		n += c.Bytes
	}
	return n
}

// String renders the recovery for a trace event:
// "recovered p0: log [0,12) in 1 segment, 4 batches; truncated 37 bytes torn tail at offset 12 (...)".
func (r Recovery) String() string {
	var b strings.Builder
	plural := "s"
	if r.Segments == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "recovered %s: log [%d,%d) in %d segment%s, %d batches", r.Dir, r.LogStartOffset, r.LogEndOffset, r.Segments, plural, r.Batches)
	for i, c := range r.Cuts {
		sep := ", "
		if i == 0 {
			sep = "; "
		}
		b.WriteString(sep + c.String())
	}
	if r.EpochsDropped+r.EpochsAdded > 0 {
		fmt.Fprintf(&b, "; epoch cache repaired (-%d +%d)", r.EpochsDropped, r.EpochsAdded)
	}
	return b.String()
}

// Open opens the log in dir on disk, creating it when dir holds no segment, and recovers
// it as Kafka's LogLoader does after an unclean shutdown. A fresh node value calls it
// from Start after a crash.
//
//   - Segments are the files "<dir>/<20-digit base offset>.log". Other files in dir are
//     left alone, apart from the two checkpoint files.
//   - Every segment is read batch by batch, checking the length field, the CRC32C, every
//     field and that offsets continue where the previous batch ended. The first bad
//     batch and everything after it are cut: the rest of its segment (a torn tail: a
//     length running past the file end; corruption: a CRC mismatch) and every later
//     segment. A segment that does not start where the previous one ended (its
//     predecessor lost an unsynced tail) is deleted with everything after it. Kafka
//     checks only the segments after its recovery point; mqsim checks all, since the
//     scan also rebuilds the index.
//   - The sparse offset index is not a file: it is rebuilt in memory by this scan, with
//     the same IndexIntervalBytes rule as appends. A simulated disk makes the scan
//     cheap, and an index that cannot disagree with its log needs no recovery of its own.
//   - The log start offset is the checkpoint's, raised to the first segment's base; if it
//     is above the recovered log end, the log restarts empty there (Kafka does the same).
//   - The epoch cache is the checkpoint's, minus entries starting at or past the
//     recovered log end (Kafka's truncateFromEnd), plus the epochs of the batches
//     replayed in order (Kafka's recoverSegment assigns each batch's epoch), cut to the
//     log start. If that differs from the checkpoint, the checkpoint is rewritten.
//
// Open fails only for bad arguments; damaged data is repaired and reported.
func Open(disk *sim.Disk, dir string, cfg Config) (*Log, Recovery, error) {
	if disk == nil {
		return nil, Recovery{}, errors.New("wal: open: nil disk")
	}
	if dir == "" || strings.HasSuffix(dir, "/") {
		return nil, Recovery{}, fmt.Errorf("wal: open: directory %q must be non-empty and not end in /", dir)
	}
	if err := cfg.Validate(); err != nil {
		return nil, Recovery{}, err
	}
	l := &Log{disk: disk, dir: dir, cfg: cfg, ckptNames: [2]string{checkpointName(dir, 0), checkpointName(dir, 1)}}
	rec := Recovery{Dir: dir, Checkpoint: "none"}

	ck, loaded := l.loadCheckpoint()
	if loaded {
		rec.Checkpoint = fmt.Sprintf("%s gen %d", checkpointName(dir, ck.gen), ck.gen)
	}
	l.saved = ck

	var transitions []EpochEntry // batches whose epoch differs from the previous batch's
	last := UndefinedEpoch
	cut := false // everything from here on goes
	for _, name := range disk.List(dir + "/") {
		base, ok := parseSegmentName(dir, name)
		if !ok {
			continue
		}
		size := disk.Size(name)
		if cut {
			rec.Cuts = append(rec.Cuts, Cut{File: name, Offset: l.LogEndOffset(), Bytes: size, Reason: "segment after a cut", Deleted: true})
			disk.Delete(name)
			continue
		}
		if len(l.segs) > 0 && base != l.LogEndOffset() {
			rec.Cuts = append(rec.Cuts, Cut{File: name, Offset: l.LogEndOffset(), Bytes: size,
				Reason: fmt.Sprintf("starts at %d, after a gap", base), Deleted: true})
			disk.Delete(name)
			cut = true
			continue
		}
		seg := &segment{file: name, base: base, next: base}
		data := disk.ReadAll(name)
		for pos := int64(0); pos < int64(len(data)); { // each pass moves pos by a whole batch or ends
			reason := ""
			_, n, derr := decodeBatch(data[pos:], false)
			var h batchHeader
			if derr == nil {
				h, _ = parseHeader(data[pos:])
				switch {
				case h.base != seg.next:
					reason = fmt.Sprintf("invalid batch (base offset %d, expected %d)", h.base, seg.next)
				case h.epoch < 0:
					reason = fmt.Sprintf("invalid batch (leader epoch %d)", h.epoch)
				}
			} else {
				reason = cutReason(derr)
			}
			if reason != "" {
				disk.Truncate(name, pos)
				rec.Cuts = append(rec.Cuts, Cut{File: name, Position: pos, Offset: seg.next, Bytes: int64(len(data)) - pos, Reason: reason})
				cut = true
				break
			}
			seg.noteBatch(h, pos, cfg.IndexIntervalBytes)
			if h.epoch != last {
				transitions = append(transitions, EpochEntry{Epoch: h.epoch, StartOffset: h.base})
				last = h.epoch
			}
			rec.Batches++
			pos += int64(n)
		}
		if seg.size != disk.Size(name) {
			invariant("%s: recovered %d bytes, file has %d", name, seg.size, disk.Size(name))
		}
		l.segs = append(l.segs, seg)
	}

	if len(l.segs) == 0 {
		l.newSegment(ck.logStart)
	}
	leo := l.LogEndOffset()
	l.logStart = max(ck.logStart, l.segs[0].base)
	if l.logStart > leo {
		// The checkpoint says records below logStart were deleted, and what was above
		// them did not survive: restart empty at logStart (Kafka's LogLoader).
		for _, s := range l.segs {
			rec.Cuts = append(rec.Cuts, Cut{File: s.file, Offset: s.base, Bytes: s.size,
				Reason: fmt.Sprintf("below the log start offset %d, above the log end %d", l.logStart, leo), Deleted: true})
			disk.Delete(s.file)
		}
		l.segs = l.segs[:0]
		l.newSegment(l.logStart)
		transitions = nil
	}

	epochs := slices.Clone(ck.epochs)
	epochs, _ = epochs.truncateFromEnd(l.LogEndOffset())
	for _, t := range transitions {
		epochs, _ = epochs.assign(t.Epoch, t.StartOffset)
	}
	epochs, _ = epochs.truncateFromStart(l.logStart)
	l.epochs = epochs
	for _, e := range ck.epochs {
		if !slices.Contains(l.epochs, e) {
			rec.EpochsDropped++
		}
	}
	for _, e := range l.epochs {
		if !slices.Contains(ck.epochs, e) {
			rec.EpochsAdded++
		}
	}

	rec.Sync = l.finish()
	rec.Segments = len(l.segs)
	rec.LogStartOffset, rec.LogEndOffset = l.logStart, l.LogEndOffset()
	return l, rec, nil
}

// cutReason words a decode error for a Cut.
func cutReason(err *DecodeError) string {
	switch {
	case errors.Is(err, ErrTruncated):
		return "torn tail"
	case errors.Is(err, ErrChecksum):
		return "corrupt batch (crc " + err.Detail + ")"
	}
	return "invalid batch (" + err.Field + ": " + err.Detail + ")"
}

// loadCheckpoint reads both checkpoint files, remembers what each holds, and returns
// the valid one with the higher generation, or an empty state at generation 0 when
// neither is valid.
func (l *Log) loadCheckpoint() (checkpoint, bool) {
	var best checkpoint
	found := false
	for slot := uint64(0); slot < 2; slot++ {
		name := l.checkpointName(slot)
		if !l.disk.Exists(name) {
			continue
		}
		c, ok := decodeCheckpoint(l.disk.ReadAll(name))
		if !ok || c.gen%2 != slot {
			continue
		}
		l.slots[slot], l.slotValid[slot] = c, true
		if !found || c.gen > best.gen {
			best, found = c, true
		}
	}
	return best, found
}
