package client

import (
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// compress marks a batch about to be sent with the producer's compression.type and, at
// its first attempt, spends the CPU compressing it takes (sim.Env.Work: only with CPU
// costs on; a retry re-sends the compressed batch, as Kafka's ProducerBatch keeps its
// built records). mqsim runs no compressor (proto.Codec): the records stay as they are,
// and the batch is sized as compressed on the wire and in every fetch of it.
func (p *Producer) compress(env *sim.Env, b *wal.Batch, first bool) {
	codec, err := p.cfg.Codec()
	if err != nil || codec.ID == 0 {
		return // Validate refused a bad name before the producer was built
	}
	b.SetCodec(codec.ID)
	if first {
		env.Work(codec.CompressTime(proto.RecordsSize(b)))
	}
}

// batchSent is the trace event of a batch sent to its leader, with its sizes for the
// throughput views (computed only when the trace keeps something).
func (p *Producer) batchSent(env *sim.Env, b *batch, wb *wal.Batch, to sim.NodeID) BatchSent {
	e := BatchSent{TP: b.tp, Records: len(b.recs), Idempotent: p.idempotent, Seq: b.seq, Attempt: b.attempts, To: env.NameOf(to)}
	if env.Tracing() {
		e.Bytes = sim.HeaderSize + proto.BatchWireSize(wb)
		e.Raw = proto.RecordsSize(wb)
		e.Codec = proto.CodecOf(wb).Name
	}
	return e
}
