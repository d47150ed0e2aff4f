package proto

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/wal"
)

// Codec is a compression.type: how much smaller it makes a batch's records and what it
// costs in CPU. mqsim runs no compressor: a compressed batch keeps its records as they
// are and is sized as compressed (BatchWireSize), and the CPU it costs is charged as time
// (sim.Env.Work at the producer, sim.Laboured at the broker), so a run stays
// deterministic and its figures are the table's.
//
// The figures, all in this one table, are those of the facebook/zstd README's benchmark
// (lzbench on the Silesia corpus, one core of a Core i7-9700K at 4.9GHz; zstd 1.5.1 -1,
// zlib 1.2.11 -1, lz4 1.9.3, snappy 1.1.9), each codec at its fastest level:
//
//	codec   ratio  compress   decompress
//	gzip    2.743    95 MB/s    400 MB/s  (zlib: gzip is DEFLATE, as Kafka's GzipCompression)
//	snappy  2.073   550 MB/s   1750 MB/s
//	lz4     2.101   740 MB/s   4500 MB/s
//	zstd    2.887   530 MB/s   1700 MB/s
//
// Assumptions, not measurements of Kafka: a ratio depends on the data (Silesia is a mix
// of text, executables and images; JSON messages compress better), and Kafka's default
// levels (compression.gzip.level -1, Deflater.DEFAULT_COMPRESSION, which zlib takes as
// level 6; compression.lz4.level 9; compression.zstd.level 3: CompressionType.java) trade
// some speed for a little more ratio than the fastest levels above. The table itself is
// quoted from the zstd README of the zstd 1.5.1 era; its exact figures move from release
// to release. A batch compresses as a whole (ProducerConfig's compression.type doc:
// "more batching means better compression"); mqsim's ratio is one constant per codec,
// whatever the batch's size, which overstates what a batch of one small record gains.
type Codec struct {
	Name string
	// ID is Kafka's CompressionType id, the batch attribute (wal.Batch.Codec).
	ID uint8
	// RatioMilli is uncompressed size over compressed size, in thousandths.
	RatioMilli int64
	// Compress and Decompress are bytes of uncompressed data per second of one core.
	Compress, Decompress int64
}

// Codecs are the compression types, in Kafka's id order.
var Codecs = []Codec{
	{Name: "none", ID: 0},
	{Name: "gzip", ID: 1, RatioMilli: 2743, Compress: 95_000_000, Decompress: 400_000_000},
	{Name: "snappy", ID: 2, RatioMilli: 2073, Compress: 550_000_000, Decompress: 1_750_000_000},
	{Name: "lz4", ID: 3, RatioMilli: 2101, Compress: 740_000_000, Decompress: 4_500_000_000},
	{Name: "zstd", ID: 4, RatioMilli: 2887, Compress: 530_000_000, Decompress: 1_700_000_000},
}

// CodecNamed finds a compression.type by name.
func CodecNamed(name string) (Codec, error) {
	for _, c := range Codecs {
		if c.Name == name {
			return c, nil
		}
	}
	var names []string
	for _, c := range Codecs {
		names = append(names, c.Name)
	}
	return Codec{}, fmt.Errorf("compression.type=%s: want one of %s", name, strings.Join(names, ", "))
}

// CodecOf is the codec a batch was compressed with (none for an unknown id).
func CodecOf(b *wal.Batch) Codec {
	if id := int(b.Codec()); id < len(Codecs) {
		return Codecs[id]
	}
	return Codecs[0]
}

// Compressed is the size n bytes of records take once compressed, rounded up.
func (c Codec) Compressed(n int) int {
	if c.RatioMilli == 0 || n <= 0 {
		return n
	}
	return int((int64(n)*1000 + c.RatioMilli - 1) / c.RatioMilli)
}

// CompressedRecords is the size n bytes of the batch's records take compressed by its
// codec: what the log stores for a compressed batch (wal.Log.SetCompression).
func CompressedRecords(b *wal.Batch, n int) int { return CodecOf(b).Compressed(n) }

// CompressTime and DecompressTime are the CPU time n uncompressed bytes take.
func (c Codec) CompressTime(n int) time.Duration   { return cpuTime(n, c.Compress) }
func (c Codec) DecompressTime(n int) time.Duration { return cpuTime(n, c.Decompress) }

func cpuTime(n int, rate int64) time.Duration {
	if rate == 0 || n <= 0 {
		return 0
	}
	return time.Duration((int64(n)*int64(time.Second) + rate - 1) / rate)
}
