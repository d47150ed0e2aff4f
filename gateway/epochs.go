package gateway

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// offsetForLeaderEpoch answers, for each partition, where the leader's log ends the
// asked epoch (KIP-101/320): a client asks it after a leader change, to learn whether
// the records it read before are still in the log (librdkafka and kgo truncate their
// position to the answer).
//
// mqsim's consumers never ask it, and the broker has no request of that name: its
// followers learn the same answer in a fetch, which carries the epoch of the last record
// fetched and gets back the leader's end offset of that epoch (DivergingEpoch) when the
// leader's log ends it before the fetch offset. The gateway asks exactly that: a consumer
// fetch from an offset beyond any log, so that the broker always answers with the epoch's
// end (Log.EndOffsetFor, as Kafka's LeaderEpochFileCache.endOffsetFor), after the same
// checks Kafka makes (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH).
func (n *Node) offsetForLeaderEpoch(env *sim.Env, c *call, req *kmsg.OffsetForLeaderEpochRequest) {
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.OffsetForLeaderEpochResponseTopicPartition, len(t.Partitions))
		resp.Topics = append(resp.Topics, rt)
		parts := resp.Topics[len(resp.Topics)-1].Partitions
		for i, p := range t.Partitions {
			rp := &parts[i]
			*rp = kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.LeaderEpoch, rp.EndOffset = p.Partition, wal.UndefinedEpoch, wal.UndefinedOffset
			if p.LeaderEpoch < 0 {
				continue // no epoch asked: Kafka answers UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
			}
			rp.ErrorCode = kerr.RequestTimedOut.Code
			current := p.CurrentLeaderEpoch
			if req.GetVersion() < 2 {
				current = wal.UndefinedEpoch
			}
			m := proto.FetchRequest{ReplicaID: proto.ConsumerReplica, TP: proto.TP{Topic: t.Topic, Partition: p.Partition},
				FetchOffset: math.MaxInt64, LastFetchedEpoch: p.LeaderEpoch, CurrentLeaderEpoch: current}
			n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m }, func(msg sim.Message) {
				a := msg.(proto.FetchResponse)
				rp.ErrorCode = errorCode(a.Error)
				if a.Error != proto.None || a.DivergingEpoch == nil {
					return
				}
				// The broker names no epoch when its log knows none at or below the one
				// asked: Kafka then answers (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET).
				if a.DivergingEpoch.Epoch != wal.UndefinedEpoch {
					rp.LeaderEpoch, rp.EndOffset = a.DivergingEpoch.Epoch, a.DivergingEpoch.EndOffset
				}
			})
		}
	}
	c.finish = func() kmsg.Response { return resp }
}
