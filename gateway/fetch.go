package gateway

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// fetch reads each partition from the connected broker. The broker holds a fetch that
// finds nothing for up to its max wait; the Kafka response goes out as soon as one
// partition brings records or an error, leaving out the partitions still waiting (a
// Kafka broker answers a multi-partition fetch as soon as it has min.bytes, too). The
// gateway opens no fetch session: every response is a full one (session id 0).
func (n *Node) fetch(env *sim.Env, c *call, req *kmsg.FetchRequest) {
	type result struct {
		topic string
		got   bool
		resp  proto.FetchResponse
	}
	var results []*result
	iso := proto.ReadUncommitted
	if req.IsolationLevel == 1 {
		iso = proto.ReadCommitted
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			r := &result{topic: t.Topic}
			results = append(results, r)
			m := proto.FetchRequest{ReplicaID: proto.ConsumerReplica, TP: proto.TP{Topic: t.Topic, Partition: p.Partition},
				FetchOffset: p.FetchOffset, LastFetchedEpoch: wal.UndefinedEpoch, CurrentLeaderEpoch: p.CurrentLeaderEpoch,
				MaxBytes: int(p.PartitionMaxBytes), MaxWait: time.Duration(req.MaxWaitMillis) * time.Millisecond, Isolation: iso}
			if req.GetVersion() < 9 {
				m.CurrentLeaderEpoch = wal.UndefinedEpoch
			}
			n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m }, func(msg sim.Message) {
				r.got, r.resp = true, msg.(proto.FetchResponse)
				if (len(r.resp.Batches) > 0 || r.resp.Error != proto.None) && !c.done {
					n.complete(env, c)
				}
			})
		}
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrFetchResponse()
		for _, r := range results {
			if !r.got {
				continue
			}
			if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != r.topic {
				rt := kmsg.NewFetchResponseTopic()
				rt.Topic, rt.TopicID = r.topic, topicID(r.topic)
				resp.Topics = append(resp.Topics, rt)
			}
			rt := &resp.Topics[len(resp.Topics)-1]
			rt.Partitions = append(rt.Partitions, fetchPartition(r.resp))
		}
		return resp
	}
}

// fetchPartition writes one partition's fetch answer in Kafka's terms.
func fetchPartition(a proto.FetchResponse) kmsg.FetchResponseTopicPartition {
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition, rp.ErrorCode = a.TP.Partition, errorCode(a.Error)
	// No records are an empty record set, never a null one: librdkafka reads a null
	// set's size (-1) as a malformed response, as Kafka never sends one.
	rp.RecordBatches = []byte{}
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = a.HighWatermark, a.LastStableOffset, a.LogStartOffset
	if a.Error != proto.None {
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
		return rp
	}
	for _, t := range a.AbortedTransactions {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = t.ProducerID, t.FirstOffset
		rp.AbortedTransactions = append(rp.AbortedTransactions, at)
	}
	for _, b := range a.Batches {
		rp.RecordBatches = appendBatch(rp.RecordBatches, b)
	}
	return rp
}

// listOffsets asks the connected broker for each partition's earliest (-2) or latest (-1)
// offset, or the first at a timestamp (milliseconds of virtual time).
func (n *Node) listOffsets(env *sim.Env, c *call, req *kmsg.ListOffsetsRequest) {
	iso := proto.ReadUncommitted
	if req.IsolationLevel == 1 {
		iso = proto.ReadCommitted
	}
	resp := kmsg.NewPtrListOffsetsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ListOffsetsResponseTopicPartition, len(t.Partitions))
		resp.Topics = append(resp.Topics, rt)
		parts := resp.Topics[len(resp.Topics)-1].Partitions
		for i, p := range t.Partitions {
			rp := &parts[i]
			*rp = kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.Offset, rp.Timestamp, rp.ErrorCode = p.Partition, -1, -1, kerr.RequestTimedOut.Code
			m := proto.ListOffsets{TP: proto.TP{Topic: t.Topic, Partition: p.Partition}, Isolation: iso}
			switch {
			case p.Timestamp == -1:
				m.Latest = true
			case p.Timestamp == -2:
			case p.Timestamp >= 0:
				m.ByTime, m.Time = true, sim.Time(p.Timestamp*int64(time.Millisecond))
			default:
				// -3 (max timestamp) and later special values: mqsim has no such lookup.
				rp.ErrorCode = kerr.InvalidRequest.Code
				continue
			}
			byTime := m.ByTime
			n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m }, func(msg sim.Message) {
				a := msg.(proto.ListOffsetsResponse)
				rp.ErrorCode, rp.Offset, rp.LeaderEpoch = errorCode(a.Error), a.Offset, a.LeaderEpoch
				if byTime && a.Offset != proto.UnknownOffset {
					rp.Timestamp = millis(a.Timestamp)
				}
			})
		}
	}
	c.finish = func() kmsg.Response { return resp }
}
