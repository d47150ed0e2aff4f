// Package wal is a partition's write-ahead log on a node's simulated disk (sim.Disk): the
// storage layer of mqsim's Kafka-style broker.
//
// A log is a directory of segments, "<dir>/<base offset, 20 digits>.log", each a sequence
// of record batches (see Batch for the encoding: length-prefixed, CRC32C-checked). The
// last segment is active; it rolls when a batch would push it past SegmentBytes or comes
// more than SegmentAge after its first batch, and rolled segments are only read, deleted
// by retention, or cut by truncation. Each segment has a sparse offset index (an entry
// every IndexIntervalBytes), kept in memory and rebuilt by the scan in Open rather than
// stored in an .index file: simpler, and it cannot disagree with its log. Alongside the
// segments, a checkpoint holds the log start offset and the leader epoch cache.
//
// The log is part of the deterministic core: it starts no goroutine, reads no clock
// (time comes in as sim.Time), and does all I/O through the sim.Disk it was opened on.
//
// # Driving it from a broker
//
// The log never fsyncs by itself; it cannot schedule anything. Every method that writes
// returns the files its flush policy wants synced now (a Sync field or slice), and the
// broker hands each to env.Fsync:
//
//	res, err := p.log.Append(batch)          // leader: batch.LeaderEpoch = current epoch
//	for _, f := range res.Sync { env.Fsync(f) }
//
//	case sim.FsyncDone:                       // in Recv
//		if off, ok := p.log.OnSynced(m.File); ok { sim.Record(env, Synced{TP: p.tp, Below: off}) }
//
//	case flushTimer:                          // FlushInterval(d): the broker's timer every d
//		for _, f := range p.log.Flush() { env.Fsync(f) }
//
// SyncedOffset tells which offsets would survive a crash now, read from the disk's synced
// sizes, so a view can draw synced and unsynced records apart.
//
// After a crash, the new node value calls Open from Start. Open scans every segment, cuts
// a torn or corrupt tail at the first bad batch, and returns a Recovery to emit as a trace
// event ("recovered p0: log [0,12) in 1 segment, 4 batches; truncated 37 bytes torn tail
// at offset 12 (...)").
//
// Followers use AppendReplica, EndOffsetFor (OffsetsForLeaderEpoch), TruncateTo and
// Reset; a new leader calls AssignEpoch. Retention runs when the broker calls
// ApplyRetention with its high watermark; DeleteBefore serves DeleteRecords.
//
// Clean compacts a log whose cleanup.policy compacts (compact.go).
//
// Simplifications, each in one line: no time index, no producer-state
// snapshots (a broker rebuilds idempotence state from the batches' producer fields),
// no per-record timestamps or offset deltas, and an fsync covers one file.
package wal
