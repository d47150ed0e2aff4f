package wal

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"strconv"
)

// The checkpoint holds what Kafka keeps per partition in leader-epoch-checkpoint (the
// epoch cache) and log-start-offset-checkpoint (the log start offset), in one small
// binary record:
//
//	crc u32 (CRC32C of what follows) | length u32 (bytes after this field) | version u8 |
//	generation u64 | log start offset i64 | entry count u32 | entries (epoch i32, start i64)
//
// The sim.Disk has no rename, so Kafka's write-temp-then-rename is replaced by two files
// used in turn (checkpoint.0, checkpoint.1): a rewrite truncates and rewrites the older
// one, and a reader takes the valid record with the higher generation. A crash in the
// middle of a rewrite (the file is truncated at once but its new bytes are not yet
// synced) leaves the other file, with the previous generation, intact.
const (
	checkpointVersion    = 1
	checkpointFixedBytes = 4 + 4 + 1 + 8 + 8 + 4
	checkpointEntryBytes = 4 + 8
)

type checkpoint struct {
	gen      uint64
	logStart int64
	epochs   epochCache
}

func checkpointName(dir string, slot uint64) string {
	return dir + "/checkpoint." + strconv.FormatUint(slot%2, 10)
}

func encodeCheckpoint(c checkpoint) []byte {
	p := make([]byte, 8, checkpointFixedBytes+checkpointEntryBytes*len(c.epochs))
	p = append(p, checkpointVersion)
	p = binary.BigEndian.AppendUint64(p, c.gen)
	p = binary.BigEndian.AppendUint64(p, uint64(c.logStart))
	p = binary.BigEndian.AppendUint32(p, uint32(len(c.epochs)))
	for _, e := range c.epochs {
		p = binary.BigEndian.AppendUint32(p, uint32(e.Epoch))
		p = binary.BigEndian.AppendUint64(p, uint64(e.StartOffset))
	}
	binary.BigEndian.PutUint32(p[4:], uint32(len(p)-8))
	binary.BigEndian.PutUint32(p[0:], crc32.Checksum(p[4:], castagnoli))
	return p
}

// decodeCheckpoint reads a checkpoint file's bytes; false when they are missing, torn,
// corrupt or inconsistent.
func decodeCheckpoint(p []byte) (checkpoint, bool) {
	var c checkpoint
	if len(p) < checkpointFixedBytes {
		return c, false
	}
	be := binary.BigEndian
	length := int(be.Uint32(p[4:]))
	if length != len(p)-8 || crc32.Checksum(p[4:], castagnoli) != be.Uint32(p) || p[8] != checkpointVersion {
		return c, false
	}
	c.gen = be.Uint64(p[9:])
	c.logStart = int64(be.Uint64(p[17:]))
	n := int(be.Uint32(p[25:]))
	if c.logStart < 0 || n != (len(p)-checkpointFixedBytes)/checkpointEntryBytes || (len(p)-checkpointFixedBytes)%checkpointEntryBytes != 0 {
		return c, false
	}
	c.epochs = make(epochCache, n)
	for i := range c.epochs {
		q := p[checkpointFixedBytes+i*checkpointEntryBytes:]
		c.epochs[i] = EpochEntry{Epoch: int32(be.Uint32(q)), StartOffset: int64(be.Uint64(q[4:]))}
	}
	if !c.epochs.valid() {
		return c, false
	}
	return c, true
}

func (c checkpoint) sameState(o checkpoint) bool {
	return c.logStart == o.logStart && slices.Equal(c.epochs, o.epochs)
}
