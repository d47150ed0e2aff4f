package wal

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"mqsim/sim"
)

// indexEntry maps the base offset of a batch to its byte position in the segment.
type indexEntry struct {
	offset int64
	pos    int64
}

// segment is one log file and what the log knows about it. Only the last segment of a
// log (the active one) is appended to.
type segment struct {
	file  string
	base  int64 // the offset in the file name: the first offset the segment holds
	next  int64 // the offset after its last batch (base when empty)
	size  int64 // bytes, always equal to the file's size on disk
	index []indexEntry
	// firstTimestamp is the first batch's timestamp (segment.ms counts from it);
	// maxTimestamp the newest (retention.ms counts from it). Both zero while empty.
	firstTimestamp sim.Time
	maxTimestamp   sim.Time
	// requested is how many bytes of the file an fsync has been asked for (by this Log
	// value): a file whose size is not above it and its synced size is not listed again.
	requested int64
}

// SegmentName is the file of the segment whose first offset is base: Kafka's 20-digit,
// zero-padded name, e.g. "p0/00000000000000000042.log".
func SegmentName(dir string, base int64) string {
	return fmt.Sprintf("%s/%020d.log", dir, base)
}

// parseSegmentName reads the base offset back from a name SegmentName made.
func parseSegmentName(dir, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, dir+"/")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".log")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	return base, err == nil
}

// lastIndexPos is where the last index entry points, 0 when there is none (the segment
// start serves as an implicit entry for the base offset).
func (s *segment) lastIndexPos() int64 {
	if len(s.index) == 0 {
		return 0
	}
	return s.index[len(s.index)-1].pos
}

// noteBatch updates the segment's index and timestamps for a batch about to be written at
// pos (== s.size). Kafka's LogSegment.append rule: an index entry is added when more than
// IndexIntervalBytes were appended since the last one.
func (s *segment) noteBatch(h batchHeader, pos int64, intervalBytes int64) {
	if pos != s.size || h.base != s.next {
		invariant("segment %s: batch [%d..] at byte %d, segment ends at %d (offset %d)", s.file, h.base, pos, s.size, s.next)
	}
	if pos-s.lastIndexPos() > intervalBytes {
		s.index = append(s.index, indexEntry{offset: h.base, pos: pos})
	}
	if s.size == 0 {
		s.firstTimestamp = h.timestamp
		s.maxTimestamp = h.timestamp
	}
	s.maxTimestamp = max(s.maxTimestamp, h.timestamp)
	s.size += h.size
	s.next = h.next()
}

// floor is the position to start scanning from for offset: the last index entry at or
// before it.
func (s *segment) floor(offset int64) int64 {
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].offset > offset })
	if i == 0 {
		return 0
	}
	return s.index[i-1].pos
}

// floorPos is the last index entry at or before byte position pos (the segment start,
// as an implicit entry, when there is none).
func (s *segment) floorPos(pos int64) indexEntry {
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].pos > pos })
	if i == 0 {
		return indexEntry{offset: s.base, pos: 0}
	}
	return s.index[i-1]
}

// SegmentInfo describes one segment, for views and tests.
type SegmentInfo struct {
	File         string
	BaseOffset   int64 // first offset
	NextOffset   int64 // offset after the last batch
	SizeBytes    int64
	SyncedBytes  int64 // the durable prefix (sim.Disk.SyncedSize)
	IndexEntries int
	// FirstTimestamp and MaxTimestamp are the timestamps of the first and the newest
	// batch (zero while empty).
	FirstTimestamp sim.Time
	MaxTimestamp   sim.Time
	Active         bool
}

func (s SegmentInfo) String() string {
	act := ""
	if s.Active {
		act = " active"
	}
	return fmt.Sprintf("%s [%d,%d) %dB synced %dB index %d%s", s.File, s.BaseOffset, s.NextOffset, s.SizeBytes, s.SyncedBytes, s.IndexEntries, act)
}
