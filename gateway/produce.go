package gateway

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// producedBatches are a produce request's batches decoded (decodeBatch), by topic and
// partition index, with the error of each that does not decode, and their records
// packed for the history's sends (history.PackSends).
type producedBatches struct {
	batches [][]wal.Batch
	errs    [][]error
	sends   [][]history.SendBlock
}

// decodeProduce decodes every partition's batch of a produce request. The server calls
// it on the connection's goroutine, so that the world's goroutine, which runs every
// broker one event at a time, does not also decompress and parse the clients' records
// (a fifth of its work in a produce-heavy session); Replay calls it as it injects. It
// is a function of the bytes alone, so where it runs changes nothing.
func decodeProduce(req *kmsg.ProduceRequest) *producedBatches {
	d := &producedBatches{batches: make([][]wal.Batch, len(req.Topics)), errs: make([][]error, len(req.Topics)),
		sends: make([][]history.SendBlock, len(req.Topics))}
	for ti, t := range req.Topics {
		n := len(t.Partitions)
		d.batches[ti], d.errs[ti], d.sends[ti] = make([]wal.Batch, n), make([]error, n), make([]history.SendBlock, n)
		for pi, p := range t.Partitions {
			b, err := decodeBatch(p.Records)
			d.batches[ti][pi], d.errs[ti][pi] = b, err
			if err == nil && b.Flags&wal.FlagTransactional == 0 { // a transaction's sends are its own (wireHistory)
				d.sends[ti][pi] = history.PackSends(len(b.Records), func(i int) ([]byte, []byte) { return b.Records[i].Key, b.Records[i].Value })
			}
		}
	}
	return d
}

// produce sends each partition's batch to the connected broker. With acks=0 nothing
// answers and the client waits for nothing; otherwise each partition's answer (its base
// offset or Kafka's error) fills the response.
func (n *Node) produce(env *sim.Env, c *call, req *kmsg.ProduceRequest) {
	acks := proto.Acks(req.Acks)
	resp := kmsg.NewPtrProduceResponse()
	var txnID string
	if req.TransactionID != nil {
		txnID = *req.TransactionID
	}
	decoded := c.req.batches(req)
	for ti, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(t.Partitions))
		resp.Topics = append(resp.Topics, rt)
		parts := resp.Topics[len(resp.Topics)-1].Partitions
		for i, p := range t.Partitions {
			rp := &parts[i]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = p.Partition, -1, -1, -1
			batch, err := decoded.batches[ti][i], decoded.errs[ti][i]
			if err != nil {
				rp.ErrorCode = kerr.CorruptMessage.Code
				msg := err.Error()
				rp.ErrorMessage = &msg
				continue
			}
			m := proto.ProduceRequest{TP: proto.TP{Topic: t.Topic, Partition: p.Partition}, Acks: acks,
				Timeout: time.Duration(req.TimeoutMillis) * time.Millisecond, Batch: batch, TransactionalID: txnID}
			if acks == proto.AcksNone {
				env.Send(n.target(c), m)
				continue
			}
			rp.ErrorCode = kerr.RequestTimedOut.Code
			n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m }, func(msg sim.Message) {
				a := msg.(proto.ProduceResponse)
				rp.ErrorCode, rp.BaseOffset = errorCode(a.Error), a.BaseOffset
				if a.Error != proto.None {
					rp.BaseOffset = -1
				}
			})
		}
	}
	c.finish = func() kmsg.Response {
		if acks == proto.AcksNone {
			return nil
		}
		return resp
	}
}
