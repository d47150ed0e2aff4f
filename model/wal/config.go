package wal

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"mqsim/sim"
)

// FlushPolicy says when the log wants its files fsynced. The log cannot fsync or set
// timers itself: it tells the caller which files to hand to sim.Env.Fsync (see Log).
//
// Kafka's knobs are flush.messages and flush.ms, both unlimited by default: Kafka leaves
// durability to replication and the OS page cache. The zero value, FlushNever, is that
// default.
type FlushPolicy int64

const (
	// FlushNever leaves data in the "page cache": only segment rolls and checkpoint
	// rewrites ask for an fsync (as Kafka does), so a crash loses every unsynced append.
	FlushNever FlushPolicy = 0
	// FlushEveryBatch asks for an fsync of the active segment after every append
	// (Kafka flush.messages=1).
	FlushEveryBatch FlushPolicy = -1
)

// FlushInterval asks the caller to fsync every d (Kafka flush.ms): the broker sets a timer
// and calls Log.Flush when it fires. d must be positive.
func FlushInterval(d time.Duration) FlushPolicy { return FlushPolicy(d) }

// Interval is the period of a FlushInterval policy, and false for the others.
func (p FlushPolicy) Interval() (time.Duration, bool) {
	if p > 0 {
		return time.Duration(p), true
	}
	return 0, false
}

// String renders the policy the way ParseFlushPolicy reads it.
func (p FlushPolicy) String() string {
	switch {
	case p == FlushNever:
		return "never"
	case p == FlushEveryBatch:
		return "every-batch"
	case p > 0:
		return "interval=" + sim.FormatDuration(time.Duration(p))
	}
	return fmt.Sprintf("invalid(%d)", int64(p))
}

// ParseFlushPolicy reads "never", "every-batch" or "interval=DURATION" (e.g. interval=5ms).
func ParseFlushPolicy(s string) (FlushPolicy, error) {
	switch s {
	case "never":
		return FlushNever, nil
	case "every-batch":
		return FlushEveryBatch, nil
	}
	if d, ok := strings.CutPrefix(s, "interval="); ok {
		dur, err := sim.ParseDuration(d)
		if err != nil {
			return 0, fmt.Errorf("flush policy %q: %w", s, err)
		}
		if dur <= 0 {
			return 0, fmt.Errorf("flush policy %q: the interval must be positive", s)
		}
		return FlushInterval(dur), nil
	}
	return 0, fmt.Errorf("flush policy %q: want never, every-batch or interval=DURATION (e.g. interval=5ms)", s)
}

// Config shapes one partition's log. Field names carry their unit last; comments give the
// Kafka topic config each one models.
type Config struct {
	// SegmentBytes rolls the active segment before an append that would make it larger
	// (segment.bytes, Kafka default 1 GiB). A batch larger than this still gets a
	// segment of its own.
	SegmentBytes int64
	// SegmentAge rolls the active segment before an append whose timestamp is more than
	// this after the segment's first batch (segment.ms, Kafka default 7 days).
	SegmentAge time.Duration
	// IndexIntervalBytes is how many bytes are appended between two entries of a
	// segment's sparse offset index (index.interval.bytes, Kafka default 4096).
	IndexIntervalBytes int64
	// RetentionBytes deletes the oldest rolled segments while the log without them would
	// still hold at least this many bytes (retention.bytes, Kafka default -1: no limit).
	// Negative means no limit.
	RetentionBytes int64
	// RetentionAge deletes rolled segments whose newest batch is older than this
	// (retention.ms, Kafka default 7 days). Negative means no limit.
	RetentionAge time.Duration
	// MaxBatchBytes refuses larger batches on append (message.max.bytes, Kafka default
	// 1048588: 1 MiB plus a 12-byte log overhead).
	MaxBatchBytes int
	// Flush is the flush policy (flush.messages / flush.ms; Kafka default: never).
	Flush FlushPolicy
	// Compaction is cleanup.policy and the cleaner's settings (compact.go).
	Compaction Compaction
}

// DefaultConfig is Kafka's defaults. With 1 GiB segments and 7-day ages a simulated run
// rarely rolls a segment; scenarios about rolls, the index or retention use SmallConfig or
// set the fields.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentAge:         7 * 24 * time.Hour,
		IndexIntervalBytes: 4096,
		RetentionBytes:     -1,
		RetentionAge:       7 * 24 * time.Hour,
		MaxBatchBytes:      1048588,
		Flush:              FlushNever,
		Compaction:         DefaultCompaction(),
	}
}

// SmallConfig scales the size and age knobs down to what a simulated run of a few hundred
// small records in a few virtual seconds actually reaches, so that segment rolls, index
// entries and retention happen and can be watched: 4 KiB segments (about 50 batches of
// a few short records), an index entry every 256 bytes, a roll after 10s. Retention
// stays unlimited, as in Kafka, until a scenario sets it. Not Kafka's values: the only
// reason is that Kafka's are too large for a simulation to ever meet.
func SmallConfig() Config {
	c := DefaultConfig()
	c.SegmentBytes = 4096
	c.SegmentAge = 10 * time.Second
	c.IndexIntervalBytes = 256
	c.RetentionAge = -1
	return c
}

// Validate reports every field that is out of range.
func (c Config) Validate() error {
	var errs []error
	if c.SegmentBytes <= 0 {
		errs = append(errs, fmt.Errorf("SegmentBytes %d must be positive", c.SegmentBytes))
	}
	if c.SegmentAge <= 0 {
		errs = append(errs, fmt.Errorf("SegmentAge %s must be positive", c.SegmentAge))
	}
	if c.IndexIntervalBytes <= 0 {
		errs = append(errs, fmt.Errorf("IndexIntervalBytes %d must be positive", c.IndexIntervalBytes))
	}
	if c.MaxBatchBytes < batchHeaderSize+minRecordSize {
		errs = append(errs, fmt.Errorf("MaxBatchBytes %d is below the smallest batch (%d bytes)", c.MaxBatchBytes, batchHeaderSize+minRecordSize))
	}
	if c.Flush < FlushEveryBatch {
		errs = append(errs, fmt.Errorf("Flush %d is not a flush policy", int64(c.Flush)))
	}
	if iv, ok := c.Flush.Interval(); ok && iv < sim.MinTimerPeriod {
		errs = append(errs, fmt.Errorf("flush interval %s: want at least %s (a shorter period fires many times before any message crosses a link: the run would spend its steps on the timer)", iv, sim.MinTimerPeriod))
	}
	errs = append(errs, c.Compaction.validate()...)
	if len(errs) > 0 {
		return fmt.Errorf("wal config: %w", errors.Join(errs...))
	}
	return nil
}

// String renders the configuration on one line, to print at the start of a run.
func (c Config) String() string {
	lim := func(n int64) string {
		if n < 0 {
			return "unlimited"
		}
		return fmt.Sprint(n)
	}
	age := "unlimited"
	if c.RetentionAge >= 0 {
		age = sim.FormatDuration(c.RetentionAge)
	}
	s := fmt.Sprintf("segment.bytes=%d segment.ms=%s index.interval.bytes=%d retention.bytes=%s retention.ms=%s max.batch.bytes=%d flush=%s",
		c.SegmentBytes, sim.FormatDuration(c.SegmentAge), c.IndexIntervalBytes, lim(c.RetentionBytes), age, c.MaxBatchBytes, c.Flush)
	if c.Compaction.Policy != CleanupDelete { // the default says nothing, as before compaction existed
		s += " " + c.Compaction.String()
	}
	return s
}
