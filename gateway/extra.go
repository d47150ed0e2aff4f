package gateway

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The requests served beyond the first gateway's (node.go dispatches those): each in its
// own file, epochs.go, describe.go, txn.go, consumergroup.go.

// startMore starts a call for one of these requests; false if the request is none of them.
func (n *Node) startMore(env *sim.Env, c *call) bool {
	switch req := c.req.Req.(type) {
	case *kmsg.OffsetForLeaderEpochRequest:
		n.offsetForLeaderEpoch(env, c, req)
	case *kmsg.DescribeClusterRequest:
		n.describeCluster(env, c, req)
	case *kmsg.AddPartitionsToTxnRequest:
		n.addPartitionsToTxn(env, c, req)
	case *kmsg.AddOffsetsToTxnRequest:
		n.addOffsetsToTxn(env, c, req)
	case *kmsg.EndTxnRequest:
		n.endTxn(env, c, req)
	case *kmsg.TxnOffsetCommitRequest:
		n.txnOffsetCommit(env, c, req)
	case *kmsg.ConsumerGroupHeartbeatRequest:
		n.consumerGroupHeartbeat(env, c, req)
	default:
		return false
	}
	return true
}

// correlationOfMore reads the correlation id of the answers these requests ask for.
func correlationOfMore(msg sim.Message) (int64, bool) {
	switch m := msg.(type) {
	case proto.AddPartitionsToTxnResponse:
		return m.CorrelationID, true
	case proto.AddOffsetsToTxnResponse:
		return m.CorrelationID, true
	case proto.EndTxnResponse:
		return m.CorrelationID, true
	case proto.TxnOffsetCommitResponse:
		return m.CorrelationID, true
	case proto.ConsumerGroupHeartbeatResponse:
		return m.CorrelationID, true
	}
	return 0, false
}
