package gateway

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The classic group protocol: Kafka carries each member's subscription and assignment as
// opaque bytes (the consumer protocol); mqsim's coordinator carries them typed, so the
// gateway decodes them with kmsg on the way in and encodes them on the way out.

// memberKey names a member's last subscription bytes.
type memberKey struct{ group, member string }

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// joinGroup joins with the member's first protocol (the assignor it prefers); its
// subscription is the protocol's metadata, decoded.
func (n *Node) joinGroup(env *sim.Env, c *call, req *kmsg.JoinGroupRequest) {
	m := proto.JoinGroup{Group: req.Group, MemberID: req.MemberID, InstanceID: str(req.InstanceID), ClientID: c.req.Header.ClientID,
		SessionTimeout:   time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout: time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond}
	if req.GetVersion() == 0 {
		m.RebalanceTimeout = m.SessionTimeout
	}
	var metadata []byte
	if len(req.Protocols) > 0 {
		m.Assignor, metadata = req.Protocols[0].Name, req.Protocols[0].Metadata
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(metadata); err == nil {
			m.Subscription.Topics = slices.Clone(meta.Topics)
			for _, o := range meta.OwnedPartitions {
				for _, p := range o.Partitions {
					m.Subscription.Owned = append(m.Subscription.Owned, proto.TP{Topic: o.Topic, Partition: p})
				}
			}
		}
	}
	answer := proto.JoinGroupResponse{Error: proto.RequestTimedOut, Generation: -1}
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m }, func(msg sim.Message) {
		answer = msg.(proto.JoinGroupResponse)
		if answer.MemberID != "" && metadata != nil {
			if n.subscriptions == nil {
				n.subscriptions = map[memberKey][]byte{}
			}
			n.subscriptions[memberKey{req.Group, answer.MemberID}] = metadata
		}
	})
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.ErrorCode, resp.Generation, resp.LeaderID, resp.MemberID = errorCode(answer.Error), answer.Generation, answer.Leader, answer.MemberID
		resp.ProtocolType, resp.Protocol = strPtr("consumer"), strPtr(answer.Assignor)
		resp.SkipAssignment = answer.SkipAssignment
		for _, gm := range answer.Members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID, rm.InstanceID = gm.MemberID, strPtr(gm.InstanceID)
			rm.ProtocolMetadata = n.subscriptionBytes(req.Group, gm)
			resp.Members = append(resp.Members, rm)
		}
		return resp
	}
}

// subscriptionBytes is the member's subscription as it sent it (its assignor's user data
// included) when the gateway saw it join, else the typed subscription encoded anew.
func (n *Node) subscriptionBytes(group string, gm proto.GroupMember) []byte {
	if b, ok := n.subscriptions[memberKey{group, gm.MemberID}]; ok {
		return b
	}
	meta := kmsg.ConsumerMemberMetadata{Version: 2, Topics: gm.Subscription.Topics, Generation: -1}
	for _, tp := range gm.Subscription.Owned {
		if len(meta.OwnedPartitions) == 0 || meta.OwnedPartitions[len(meta.OwnedPartitions)-1].Topic != tp.Topic {
			meta.OwnedPartitions = append(meta.OwnedPartitions, kmsg.ConsumerMemberMetadataOwnedPartition{Topic: tp.Topic})
		}
		o := &meta.OwnedPartitions[len(meta.OwnedPartitions)-1]
		o.Partitions = append(o.Partitions, tp.Partition)
	}
	return meta.AppendTo(nil)
}

// syncGroup hands the leader's assignments (decoded) to the coordinator and returns the
// member's own, encoded.
func (n *Node) syncGroup(env *sim.Env, c *call, req *kmsg.SyncGroupRequest) {
	m := proto.SyncGroup{Group: req.Group, MemberID: req.MemberID, InstanceID: str(req.InstanceID), Generation: req.Generation}
	for _, a := range req.GroupAssignment {
		ma := proto.MemberAssignment{MemberID: a.MemberID}
		var ka kmsg.ConsumerMemberAssignment
		if err := ka.ReadFrom(a.MemberAssignment); err == nil {
			for _, t := range ka.Topics {
				for _, p := range t.Partitions {
					ma.Partitions = append(ma.Partitions, proto.TP{Topic: t.Topic, Partition: p})
				}
			}
		}
		m.Assignments = append(m.Assignments, ma)
	}
	answer := proto.SyncGroupResponse{Error: proto.RequestTimedOut}
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
		func(msg sim.Message) { answer = msg.(proto.SyncGroupResponse) })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode = errorCode(answer.Error)
		resp.ProtocolType, resp.Protocol = req.ProtocolType, req.Protocol
		ka := kmsg.ConsumerMemberAssignment{}
		for _, tp := range answer.Partitions {
			if len(ka.Topics) == 0 || ka.Topics[len(ka.Topics)-1].Topic != tp.Topic {
				ka.Topics = append(ka.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: tp.Topic})
			}
			t := &ka.Topics[len(ka.Topics)-1]
			t.Partitions = append(t.Partitions, tp.Partition)
		}
		if answer.Error == proto.None {
			resp.MemberAssignment = ka.AppendTo(nil)
		}
		return resp
	}
}

func (n *Node) heartbeat(env *sim.Env, c *call, req *kmsg.HeartbeatRequest) {
	m := proto.Heartbeat{Group: req.Group, MemberID: req.MemberID, InstanceID: str(req.InstanceID), Generation: req.Generation}
	answer := proto.Error(proto.RequestTimedOut)
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
		func(msg sim.Message) { answer = msg.(proto.HeartbeatResponse).Error })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.ErrorCode = errorCode(answer)
		return resp
	}
}

// leaveGroup sends one LeaveGroup per member (v3+ batches members).
func (n *Node) leaveGroup(env *sim.Env, c *call, req *kmsg.LeaveGroupRequest) {
	members := req.Members
	if req.GetVersion() < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	answers := make([]proto.Error, len(members))
	for i, mem := range members {
		answers[i] = proto.RequestTimedOut
		m := proto.LeaveGroup{Group: req.Group, MemberID: mem.MemberID, InstanceID: str(mem.InstanceID), Reason: str(mem.Reason)}
		n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
			func(msg sim.Message) { answers[i] = msg.(proto.LeaveGroupResponse).Error })
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrLeaveGroupResponse()
		for i, mem := range members {
			if req.GetVersion() < 3 {
				resp.ErrorCode = errorCode(answers[i])
				continue
			}
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID, rm.InstanceID, rm.ErrorCode = mem.MemberID, mem.InstanceID, errorCode(answers[i])
			resp.Members = append(resp.Members, rm)
		}
		return resp
	}
}

// offsetCommit commits every partition in one mqsim commit, whose one error answers for
// each partition.
func (n *Node) offsetCommit(env *sim.Env, c *call, req *kmsg.OffsetCommitRequest) {
	m := proto.OffsetCommit{Group: req.Group, MemberID: req.MemberID, InstanceID: str(req.InstanceID), Generation: req.Generation}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			epoch := p.LeaderEpoch
			if req.GetVersion() < 6 {
				epoch = -1
			}
			m.Offsets = append(m.Offsets, proto.PartitionOffset{TP: proto.TP{Topic: t.Topic, Partition: p.Partition}, Offset: p.Offset, LeaderEpoch: epoch})
		}
	}
	answer := proto.Error(proto.RequestTimedOut)
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
		func(msg sim.Message) { answer = msg.(proto.OffsetCommitResponse).Error })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrOffsetCommitResponse()
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errorCode(answer)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
}

// offsetFetch reads a group's committed offsets (v1-v7: one group per request). Asked
// for every topic (v2+ with no topics), it first reads the broker's metadata for the
// partitions there are, and answers only those the group committed, as Kafka does.
func (n *Node) offsetFetch(env *sim.Env, c *call, req *kmsg.OffsetFetchRequest) {
	m := proto.OffsetFetch{Group: req.Group, RequireStable: req.RequireStable}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			m.Partitions = append(m.Partitions, proto.TP{Topic: t.Topic, Partition: p})
		}
	}
	all := req.Topics == nil && req.GetVersion() >= 2
	answer := proto.OffsetFetchResponse{Error: proto.RequestTimedOut}
	ask := func() {
		n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
			func(msg sim.Message) { answer = msg.(proto.OffsetFetchResponse) })
	}
	if all {
		n.send(env, c, n.target(c), func(corr int64) sim.Message { return proto.MetadataRequest{CorrelationID: corr} }, func(msg sim.Message) {
			for _, p := range msg.(proto.MetadataResponse).Metadata.Partitions {
				if p.TP.Topic != proto.OffsetsTopic {
					m.Partitions = append(m.Partitions, p.TP)
				}
			}
			ask()
		})
	} else {
		ask()
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrOffsetFetchResponse()
		resp.ErrorCode = errorCode(answer.Error)
		if resp.ErrorCode != 0 && req.GetVersion() < 2 {
			resp.ErrorCode = 0 // v0-1 carry errors per partition only
		}
		for _, o := range answer.Offsets {
			if all && o.Offset < 0 {
				continue
			}
			if len(resp.Topics) == 0 || resp.Topics[len(resp.Topics)-1].Topic != o.TP.Topic {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = o.TP.Topic
				resp.Topics = append(resp.Topics, rt)
			}
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = o.TP.Partition, o.Offset, o.LeaderEpoch
			rt := &resp.Topics[len(resp.Topics)-1]
			rt.Partitions = append(rt.Partitions, rp)
		}
		if answer.Error != proto.None && req.GetVersion() < 2 {
			for _, t := range req.Topics {
				rt := kmsg.NewOffsetFetchResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p, -1, errorCode(answer.Error)
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
		}
		return resp
	}
}
