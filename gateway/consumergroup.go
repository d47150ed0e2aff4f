package gateway

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The consumer group protocol (KIP-848): ConsumerGroupHeartbeat, translated to
// model/proto/consumergroup.go's message. Kafka's request leaves out what did not change
// since the member's last heartbeat (a null subscription, null owned partitions) and
// names topics by id; mqsim's carries both in full and by name. The gateway keeps each
// member's last subscription and owned partitions, and reads topic ids back to names
// through the subscription (a member owns only partitions of topics it subscribed to, or
// did: its last owned partitions name those).
//
// The coordinator names a joining member (v0's rule); a v1 client names itself, and
// takes the name the answer gives, as kgo does. Regular-expression subscriptions (v1)
// are not modelled: such a heartbeat is answered INVALID_REQUEST.

// consumerMemberState is what a member last told its coordinator.
type consumerMemberState struct {
	subscribed []string
	owned      []proto.TP
}

func (n *Node) consumerGroupHeartbeat(env *sim.Env, c *call, req *kmsg.ConsumerGroupHeartbeatRequest) {
	resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	c.finish = func() kmsg.Response { return resp }
	if req.SubscribedTopicRegex != nil {
		resp.ErrorCode = kerr.InvalidRequest.Code
		msg := "mqsim's coordinator does not resolve subscription patterns: subscribe by topic name"
		resp.ErrorMessage = &msg
		return
	}
	key := memberKey{req.Group, req.MemberID}
	last := n.consumerMembers[key]
	if req.MemberEpoch == proto.JoinEpoch {
		last = consumerMemberState{}
	}
	m := proto.ConsumerGroupHeartbeat{Group: req.Group, MemberID: req.MemberID, InstanceID: str(req.InstanceID),
		MemberEpoch: req.MemberEpoch, RebalanceTimeout: time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		ServerAssignor: str(req.ServerAssignor), Subscribed: last.subscribed, Owned: last.owned}
	if req.MemberEpoch == proto.JoinEpoch {
		m.MemberID = "" // the coordinator names the member
	}
	if req.SubscribedTopicNames != nil {
		m.Subscribed = slices.Clone(req.SubscribedTopicNames)
	}
	if req.Topics != nil {
		names := map[[16]byte]string{}
		for _, t := range m.Subscribed {
			names[topicID(t)] = t
		}
		for _, tp := range last.owned {
			names[topicID(tp.Topic)] = tp.Topic
		}
		m.Owned = nil
		for _, t := range req.Topics {
			name, ok := names[t.TopicID]
			if !ok {
				continue // a topic it neither subscribes to nor owned: nothing mqsim knows
			}
			for _, p := range t.Partitions {
				m.Owned = append(m.Owned, proto.TP{Topic: name, Partition: p})
			}
		}
	}
	answer := proto.ConsumerGroupHeartbeatResponse{Error: proto.RequestTimedOut, MemberEpoch: -1}
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m }, func(msg sim.Message) {
		answer = msg.(proto.ConsumerGroupHeartbeatResponse)
		if n.consumerMembers == nil {
			n.consumerMembers = map[memberKey]consumerMemberState{}
		}
		delete(n.consumerMembers, key)
		if answer.Error == proto.None && answer.MemberEpoch >= 0 {
			n.consumerMembers[memberKey{req.Group, answer.MemberID}] = consumerMemberState{subscribed: m.Subscribed, owned: m.Owned}
		}
	})
	c.finish = func() kmsg.Response {
		resp.ErrorCode, resp.MemberEpoch = errorCode(answer.Error), answer.MemberEpoch
		resp.HeartbeatIntervalMillis = int32(answer.HeartbeatInterval / time.Millisecond)
		if answer.MemberID != "" {
			id := answer.MemberID
			resp.MemberID = &id
		}
		if answer.Error == proto.None && answer.HasAssignment {
			a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
			for _, tp := range answer.Assignment {
				id := topicID(tp.Topic)
				if len(a.Topics) == 0 || a.Topics[len(a.Topics)-1].TopicID != id {
					at := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
					at.TopicID = id
					a.Topics = append(a.Topics, at)
				}
				at := &a.Topics[len(a.Topics)-1]
				at.Partitions = append(at.Partitions, tp.Partition)
			}
			resp.Assignment = &a
		}
		return resp
	}
}
