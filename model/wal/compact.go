package wal

import (
	"fmt"
	"strings"
	"time"

	"mqsim/sim"
)

// Log compaction: Kafka's log cleaner in its compact mode (LogCleaner.scala's Cleaner,
// LogCleanerManager.cleanableOffsets, OffsetMap). A compacted log keeps, for every key, at
// least its latest record; older records of a key are removed from the rolled segments,
// and a tombstone (a record whose value is nil) is itself removed delete.retention.ms
// after the first cleaning that saw it.
//
// The log is a clean section, [log start, cleaner checkpoint), where every key appears
// once, followed by a dirty section. One cleaning:
//
//  1. finds the cleanable range: the dirty section up to the first uncleanable offset,
//     the lowest of the limit the broker passes (its last stable offset, so never past
//     the high watermark or into an open transaction), the active segment's base (the
//     active segment is never cleaned), and the first segment whose newest record is
//     younger than min.compaction.lag.ms;
//  2. does nothing unless dirty bytes / (clean + dirty bytes) is above
//     min.cleanable.dirty.ratio;
//  3. builds the offset map, key -> the last offset of that key in the dirty section;
//  4. rewrites every segment below the first uncleanable offset, clean and dirty: a record
//     stays if no later record of its key is in the map, and a tombstone only until its
//     batch's delete horizon; every record keeps its offset (batches become compacted
//     batches, which keep their span: the log has gaps, never renumbered offsets);
//  5. moves the cleaner checkpoint to the first uncleanable offset.
//
// What mqsim simplifies, each in one line: segments are rewritten one for one (Kafka also
// merges small neighbours); the offset map has no memory limit (Kafka's
// log.cleaner.dedupe.buffer.size can make it clean in several passes); transactional and
// control batches are copied unchanged and never enter the map (Kafka removes aborted
// records and, later, markers); records without a key are kept (Kafka drops them, and
// refuses them on produce); the cleaner checkpoint is kept in memory, so a restarted
// broker sees its whole log as dirty and cleans it again (harmless: cleaning is
// idempotent, and delete horizons are stamped in the batches); a rewritten segment is
// swapped in atomically (sim.Disk.Replace, Kafka's .cleaned/.swap rename).

// CleanupPolicy is a topic's cleanup.policy.
type CleanupPolicy uint8

const (
	// CleanupDelete: retention deletes whole old segments (Kafka's default).
	CleanupDelete CleanupPolicy = iota
	// CleanupCompact: the cleaner keeps the latest record of every key; retention.ms and
	// retention.bytes do not apply.
	CleanupCompact
	// CleanupCompactDelete: both.
	CleanupCompactDelete
)

// Compacts reports whether the cleaner compacts a log under this policy.
func (p CleanupPolicy) Compacts() bool { return p == CleanupCompact || p == CleanupCompactDelete }

// Deletes reports whether retention deletes old segments under this policy.
func (p CleanupPolicy) Deletes() bool { return p == CleanupDelete || p == CleanupCompactDelete }

func (p CleanupPolicy) String() string {
	switch p {
	case CleanupDelete:
		return "delete"
	case CleanupCompact:
		return "compact"
	case CleanupCompactDelete:
		return "compact,delete"
	}
	return fmt.Sprintf("CleanupPolicy(%d)", uint8(p))
}

// ParseCleanupPolicy reads "delete", "compact", or "compact,delete" (either order).
func ParseCleanupPolicy(s string) (CleanupPolicy, error) {
	switch strings.ReplaceAll(s, " ", "") {
	case "delete":
		return CleanupDelete, nil
	case "compact":
		return CleanupCompact, nil
	case "compact,delete", "delete,compact":
		return CleanupCompactDelete, nil
	}
	return 0, fmt.Errorf("cleanup.policy %q: want delete, compact or compact,delete", s)
}

// Compaction is a log's cleanup policy and the cleaner's topic settings.
type Compaction struct {
	Policy CleanupPolicy
	// MinCleanableDirtyRatio: a log is cleaned only when its cleanable dirty bytes are more
	// than this share of its clean and dirty bytes (min.cleanable.dirty.ratio, 0.5).
	MinCleanableDirtyRatio float64
	// MinCompactionLag: a record stays uncompacted at least this long; a segment whose
	// newest record is younger, and every segment after it, is not cleaned
	// (min.compaction.lag.ms, 0).
	MinCompactionLag time.Duration
	// DeleteRetention: a tombstone survives this long after the first cleaning that saw
	// it (delete.retention.ms, 1 day), so that a consumer reading within that time sees
	// the delete.
	DeleteRetention time.Duration
}

// DefaultCompaction is Kafka's defaults: cleanup.policy=delete, so no compaction.
func DefaultCompaction() Compaction {
	return Compaction{Policy: CleanupDelete, MinCleanableDirtyRatio: 0.5, DeleteRetention: 24 * time.Hour}
}

func (c Compaction) validate() []error {
	var errs []error
	if c.Policy > CleanupCompactDelete {
		errs = append(errs, fmt.Errorf("cleanup policy %d: want delete, compact or compact,delete", c.Policy))
	}
	if c.MinCleanableDirtyRatio < 0 || c.MinCleanableDirtyRatio > 1 {
		errs = append(errs, fmt.Errorf("min.cleanable.dirty.ratio %g: want a number in [0, 1]", c.MinCleanableDirtyRatio))
	}
	if c.MinCompactionLag < 0 || c.DeleteRetention < 0 {
		errs = append(errs, fmt.Errorf("min.compaction.lag.ms %s, delete.retention.ms %s: durations are not negative", c.MinCompactionLag, c.DeleteRetention))
	}
	return errs
}

func (c Compaction) String() string {
	return fmt.Sprintf("cleanup.policy=%s min.cleanable.dirty.ratio=%g min.compaction.lag.ms=%s delete.retention.ms=%s",
		c.Policy, c.MinCleanableDirtyRatio, sim.FormatDuration(c.MinCompactionLag), sim.FormatDuration(c.DeleteRetention))
}

// Cleaning says what one call of Clean found and did.
type Cleaning struct {
	// FirstDirty is the cleaner checkpoint before the pass; FirstUncleanable the end of
	// the cleanable range. A pass that cleans moves the checkpoint to FirstUncleanable.
	FirstDirty, FirstUncleanable int64
	CleanBytes, DirtyBytes       int64 // the sizes the dirty ratio is computed from
	// Cleaned is false when there was nothing cleanable or the ratio was not above
	// min.cleanable.dirty.ratio; the counts below are then zero.
	Cleaned bool
	// Keys is the number of offset map entries; Superseded the records removed because a
	// later record of their key is in the map; Tombstones the tombstones removed because
	// their delete horizon had passed.
	Keys, Superseded, Tombstones int
	// Segments is how many segments were rewritten; BytesBefore and BytesAfter their size.
	Segments                int
	BytesBefore, BytesAfter int64
}

// Ratio is the dirty ratio the pass compared with min.cleanable.dirty.ratio.
func (c Cleaning) Ratio() float64 {
	if c.CleanBytes+c.DirtyBytes == 0 {
		return 0
	}
	return float64(c.DirtyBytes) / float64(c.CleanBytes+c.DirtyBytes)
}

func (c Cleaning) String() string {
	if !c.Cleaned {
		return fmt.Sprintf("nothing to clean: dirty [%d,%d) %dB of %dB (ratio %.2f)",
			c.FirstDirty, c.FirstUncleanable, c.DirtyBytes, c.CleanBytes+c.DirtyBytes, c.Ratio())
	}
	return fmt.Sprintf("cleaned below %d (dirty from %d, ratio %.2f): %s, %d superseded and %s removed, %s %dB -> %dB",
		c.FirstUncleanable, c.FirstDirty, c.Ratio(), count(c.Keys, "key"), c.Superseded, count(c.Tombstones, "tombstone"),
		count(c.Segments, "segment"), c.BytesBefore, c.BytesAfter)
}

// count is "1 key", "2 keys".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// CleanerCheckpoint is the first offset of the dirty section.
func (l *Log) CleanerCheckpoint() int64 { return max(l.cleanedTo, l.logStart) }

// Clean runs one pass of the log cleaner at now. limit is the first offset the broker
// lets it touch: the partition's last stable offset. It returns what it did; a log whose
// policy does not compact is left alone. An error (bytes that no longer decode) leaves
// the log unchanged.
func (l *Log) Clean(now sim.Time, limit int64) (Cleaning, error) {
	c := Cleaning{FirstDirty: l.CleanerCheckpoint()}
	cfg := l.cfg.Compaction
	if !cfg.Policy.Compacts() {
		return c, nil
	}
	end := 0 // segments [0, end) are cleanable
	for end < len(l.segs)-1 {
		s := l.segs[end]
		if s.next > limit || now.Sub(s.maxTimestamp) < cfg.MinCompactionLag {
			break
		}
		end++
	}
	c.FirstUncleanable = l.segs[end].base
	for _, s := range l.segs[:end] {
		if s.next <= c.FirstDirty {
			c.CleanBytes += s.size
		} else {
			c.DirtyBytes += s.size
		}
	}
	if c.DirtyBytes == 0 || c.Ratio() <= cfg.MinCleanableDirtyRatio {
		return c, nil
	}
	segBatches := make([][]Batch, end)
	for i, s := range l.segs[:end] {
		bs, err := l.segmentBatches(s)
		if err != nil {
			return Cleaning{FirstDirty: c.FirstDirty}, err
		}
		segBatches[i] = bs
	}
	offsets := buildOffsetMap(segBatches, c.FirstDirty)
	c.Keys = len(offsets)
	c.Cleaned = true
	for i, s := range l.segs[:end] {
		var enc []byte
		for _, b := range segBatches[i] {
			kept := l.cleanBatch(&b, offsets, now, &c)
			var err error
			if enc, err = kept.AppendEncoded(enc); err != nil {
				invariant("%s: cleaned batch does not encode: %v", s.file, err)
			}
		}
		if enc == nil {
			invariant("%s: a segment below the active one has no batch", s.file)
		}
		c.BytesBefore += s.size
		c.BytesAfter += int64(len(enc))
		if int64(len(enc)) == s.size && string(enc) == string(l.disk.ReadAll(s.file)) {
			continue
		}
		c.Segments++
		l.durableSegs = min(l.durableSegs, i) // Replace leaves it synced; recount anyway
		l.disk.Replace(s.file, enc)
		*s = l.rebuiltSegment(s, enc)
	}
	l.cleanedTo = c.FirstUncleanable
	return c, nil
}

// segmentBatches decodes every batch of s.
func (l *Log) segmentBatches(s *segment) ([]Batch, error) {
	data := l.disk.ReadAll(s.file)
	var out []Batch
	for pos := 0; pos < len(data); {
		b, n, derr := decodeBatch(data[pos:], true)
		if derr != nil {
			return nil, fmt.Errorf("wal: %s byte %d: %w: %w", s.file, pos, ErrCorrupt, derr)
		}
		out = append(out, b)
		pos += n
	}
	return out, nil
}

// mapped reports whether the cleaner may compact b's records: plain records only.
func mapped(b *Batch) bool { return b.Flags&(FlagTransactional|FlagControl) == 0 }

// buildOffsetMap is the cleaner's offset map (Kafka's SkimpyOffsetMap, without its memory
// bound): for every key of a record at or after firstDirty, the offset of its last record.
func buildOffsetMap(segs [][]Batch, firstDirty int64) map[string]int64 {
	offsets := map[string]int64{}
	for _, bs := range segs {
		for i := range bs {
			b := &bs[i]
			if !mapped(b) || b.NextOffset() <= firstDirty {
				continue
			}
			for j, r := range b.Records {
				if off := b.OffsetOf(j); off >= firstDirty && r.Key != nil {
					offsets[string(r.Key)] = off
				}
			}
		}
	}
	return offsets
}

// cleanBatch is b with the records the cleaner removes taken out (Kafka's
// Cleaner.shouldRetainRecord in LogCleaner.scala), as a compacted batch that keeps b's span; it counts the
// removals in c.
func (l *Log) cleanBatch(b *Batch, offsets map[string]int64, now sim.Time, c *Cleaning) Batch {
	if !mapped(b) {
		return *b
	}
	out := *b
	out.Flags |= FlagCompacted
	out.Span = int32(b.NextOffset() - b.BaseOffset)
	out.Records, out.OffsetDeltas = nil, []int32{}
	horizonPassed := b.DeleteHorizon != 0 && now >= b.DeleteHorizon // Kafka keeps it while currentTime < deleteHorizonMs
	tombstones := false
	for j, r := range b.Records {
		off := b.OffsetOf(j)
		if latest, ok := offsets[string(r.Key)]; r.Key != nil && ok && off < latest {
			c.Superseded++
			continue
		}
		if r.Value == nil && r.Key != nil {
			if horizonPassed {
				c.Tombstones++
				continue
			}
			tombstones = true
		}
		out.Records = append(out.Records, r)
		out.OffsetDeltas = append(out.OffsetDeltas, int32(off-b.BaseOffset))
	}
	if tombstones && out.DeleteHorizon == 0 {
		out.DeleteHorizon = now.Add(l.cfg.Compaction.DeleteRetention)
	}
	if !tombstones {
		out.DeleteHorizon = 0
	}
	return out
}

// rebuiltSegment is s after its file was replaced by enc: the same span, a new index.
func (l *Log) rebuiltSegment(s *segment, enc []byte) segment {
	n := segment{file: s.file, base: s.base, next: s.base}
	for pos := int64(0); pos < int64(len(enc)); {
		h, derr := parseHeader(enc[pos:])
		if derr != nil {
			invariant("%s: own cleaned encoding does not parse: %v", s.file, derr)
		}
		n.noteBatch(h, pos, l.cfg.IndexIntervalBytes)
		pos += h.size
	}
	if n.next != s.next {
		invariant("%s: cleaned segment ends at %d, was %d", s.file, n.next, s.next)
	}
	n.requested = n.size // Replace made it durable
	return n
}
