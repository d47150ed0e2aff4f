package proto

import (
	"time"

	"mqsim/model/wal"
	"mqsim/sim"
)

// Sizes on the wire, for the kernel's bandwidth and CPU costs (sim.Costs): the messages
// that carry records say how many bytes and records they carry (sim.Sized, sim.Counted);
// every other message counts as sim.HeaderSize bytes.
//
// A record batch is sized as Kafka's record batch format v2 (magic 2, KIP-98; the
// layout in Kafka's DefaultRecordBatch and DefaultRecord):
//   - BatchOverhead, 61 bytes of batch header: base offset 8, length 4, partition
//     leader epoch 4, magic 1, CRC 4, attributes 2, last offset delta 4, first and max
//     timestamps 8 + 8, producer id 8, producer epoch 2, base sequence 4, record count 4;
//   - RecordOverhead, 7 bytes per record: its length, attributes, timestamp delta,
//     offset delta, key length, value length and header count, each a varint (or int8)
//     at its one-byte size; a record over 63 bytes or a batch over 63 records takes a
//     byte or two more in Kafka, which mqsim leaves out;
//   - the key and value bytes, and per header its key, value and 2 bytes of lengths.
const (
	BatchOverhead  = 61
	RecordOverhead = 7
	HeaderOverhead = 2
)

// BatchWireSize is the batch's size in Kafka's v2 format (see BatchOverhead): a
// compressed batch (wal.Batch.Codec) has its records compressed, its header not.
func BatchWireSize(b *wal.Batch) int {
	return BatchOverhead + CodecOf(b).Compressed(RecordsSize(b))
}

// RecordsSize is the size of the batch's records, uncompressed.
func RecordsSize(b *wal.Batch) int {
	n := 0
	for i := range b.Records {
		r := &b.Records[i]
		n += RecordOverhead + len(r.Key) + len(r.Value)
		for _, h := range r.Headers {
			n += HeaderOverhead + len(h.Key) + len(h.Value)
		}
	}
	return n
}

// WireSize is the request header and the batch.
func (m ProduceRequest) WireSize() int { return sim.HeaderSize + BatchWireSize(&m.Batch) }

// RecordCount is the batch's records.
func (m ProduceRequest) RecordCount() int { return len(m.Batch.Records) }

// ExtraCPU is the leader decompressing a compressed batch: Kafka's LogValidator reads
// every record of a compressed batch to validate it (validateMessagesAndAssignOffsetsCompressed),
// which decompresses it even when it keeps the batch as it came.
func (m ProduceRequest) ExtraCPU() time.Duration {
	return CodecOf(&m.Batch).DecompressTime(RecordsSize(&m.Batch))
}

// WireSize is the response header and the batches, to a consumer or a follower.
func (m FetchResponse) WireSize() int {
	n := sim.HeaderSize
	for i := range m.Batches {
		n += BatchWireSize(&m.Batches[i])
	}
	return n
}

// RecordCount is the records of every batch.
func (m FetchResponse) RecordCount() int {
	n := 0
	for i := range m.Batches {
		n += len(m.Batches[i].Records)
	}
	return n
}
