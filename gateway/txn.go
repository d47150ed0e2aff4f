package gateway

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The transaction requests (KIP-98, KIP-447, KIP-890), translated to model/proto/txn.go's
// messages. A client sends AddPartitionsToTxn, AddOffsetsToTxn and EndTxn to its
// transaction coordinator and TxnOffsetCommit to its group's coordinator (found with
// FindCoordinator), so each goes to the broker the client connected to; InitProducerId
// with a transactional id is in meta.go.
//
// Transaction version 2 (KIP-890 part 2) is mqsim's default (txn-verification=kip890):
// the coordinator bumps the producer epoch at every EndTxn and a partition leader adds
// a transactional batch's partition itself. The gateway then advertises the finalized
// feature transaction.version=2, as a Kafka 4 cluster does, so that a client ends each
// transaction with EndTxn v5 (which returns the new epoch), produces without
// AddPartitionsToTxn and commits offsets with TxnOffsetCommit v5 without
// AddOffsetsToTxn. With txn-verification=off it advertises nothing, and clients take the
// older path, as they would with Kafka before 4.0.

// ensureTxnStateTopic asks the controller for __transaction_state before then runs, until
// it has said the topic exists: a Kafka broker creates it at the first FindCoordinator for
// a transactional id, as the gateway does, so that a session without transactions has
// no such topic (and replays as before).
func (n *Node) ensureTxnStateTopic(env *sim.Env, c *call, then func()) {
	if n.txnTopicExists {
		then()
		return
	}
	n.send(env, c, n.controllers[0], func(corr int64) sim.Message {
		return proto.CreateTopic{CorrelationID: corr, Config: n.txnStateTopic}
	}, func(msg sim.Message) {
		if e := msg.(proto.CreateTopicResponse).Error; e == proto.None || e == proto.TopicAlreadyExists {
			n.txnTopicExists = true
		}
		then()
	})
}

// transactionVersionFeature is the feature a client reads to choose KIP-890 part 2.
const transactionVersionFeature = "transaction.version"

// addFeatures lists the cluster's finalized features in an ApiVersions answer (v3+).
func (n *Node) addFeatures(resp *kmsg.ApiVersionsResponse) {
	if resp.GetVersion() < 3 || !n.txnV2 {
		return
	}
	sf := kmsg.NewApiVersionsResponseSupportedFeature()
	sf.Name, sf.MinVersion, sf.MaxVersion = transactionVersionFeature, 0, 2
	resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	ff := kmsg.NewApiVersionsResponseFinalizedFeature()
	ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = transactionVersionFeature, 2, 2
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	resp.FinalizedFeaturesEpoch = 1
}

// addPartitionsToTxn (v0-3: one transaction per request, from a client) adds partitions
// to the producer's transaction; the coordinator's one error answers every partition.
func (n *Node) addPartitionsToTxn(env *sim.Env, c *call, req *kmsg.AddPartitionsToTxnRequest) {
	m := proto.AddPartitionsToTxn{TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			m.Partitions = append(m.Partitions, proto.TP{Topic: t.Topic, Partition: p})
		}
	}
	answer := proto.Error(proto.RequestTimedOut)
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
		func(msg sim.Message) { answer = msg.(proto.AddPartitionsToTxnResponse).Error })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrAddPartitionsToTxnResponse()
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, errorCode(answer)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
}

// addOffsetsToTxn adds the group's offsets partition to the producer's transaction.
func (n *Node) addOffsetsToTxn(env *sim.Env, c *call, req *kmsg.AddOffsetsToTxnRequest) {
	m := proto.AddOffsetsToTxn{TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Group: req.Group}
	answer := proto.Error(proto.RequestTimedOut)
	n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
		func(msg sim.Message) { answer = msg.(proto.AddOffsetsToTxnResponse).Error })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrAddOffsetsToTxnResponse()
		resp.ErrorCode = errorCode(answer)
		return resp
	}
}

// endTxn commits or aborts. Under transaction version 2 the coordinator bumps the epoch
// at every EndTxn; only v5 can tell the client the new one, so an older EndTxn is
// refused with UNSUPPORTED_VERSION before it reaches the coordinator (a Kafka 4 broker
// would end that transaction the version-1 way, which mqsim's coordinator does not do
// beside version 2).
func (n *Node) endTxn(env *sim.Env, c *call, req *kmsg.EndTxnRequest) {
	answer := proto.EndTxnResponse{Error: proto.RequestTimedOut, ProducerID: -1, ProducerEpoch: -1}
	refused := n.txnV2 && req.GetVersion() < 5
	if !refused {
		m := proto.EndTxn{TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, Commit: req.Commit}
		n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
			func(msg sim.Message) { answer = msg.(proto.EndTxnResponse) })
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrEndTxnResponse()
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = errorCode(answer.Error), answer.ProducerID, answer.ProducerEpoch
		if refused {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
		}
		if answer.Error != proto.None || !n.txnV2 {
			resp.ProducerID, resp.ProducerEpoch = -1, -1
		}
		return resp
	}
}

// txnOffsetCommit commits a group's offsets inside the producer's transaction. A v5+
// client (transaction version 2) sent no AddOffsetsToTxn: the gateway adds the group's
// offsets partition to the transaction first, at the transaction coordinator, as a Kafka
// 4 group coordinator has the transaction coordinator verify it; an error there answers
// every partition.
func (n *Node) txnOffsetCommit(env *sim.Env, c *call, req *kmsg.TxnOffsetCommitRequest) {
	m := proto.TxnOffsetCommit{TransactionalID: req.TransactionalID, Group: req.Group, ProducerID: req.ProducerID,
		ProducerEpoch: req.ProducerEpoch, Generation: -1}
	if req.GetVersion() >= 3 {
		m.Generation, m.MemberID, m.InstanceID = req.Generation, req.MemberID, str(req.InstanceID)
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			epoch := p.LeaderEpoch
			if req.GetVersion() < 2 {
				epoch = -1
			}
			m.Offsets = append(m.Offsets, proto.PartitionOffset{TP: proto.TP{Topic: t.Topic, Partition: p.Partition}, Offset: p.Offset, LeaderEpoch: epoch})
		}
	}
	answer := proto.Error(proto.RequestTimedOut)
	commit := func() {
		n.send(env, c, n.target(c), func(corr int64) sim.Message { m.CorrelationID = corr; return m },
			func(msg sim.Message) { answer = msg.(proto.TxnOffsetCommitResponse).Error })
	}
	if req.GetVersion() >= 5 {
		n.addOffsetsFirst(env, c, m, &answer, commit)
	} else {
		commit()
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrTxnOffsetCommitResponse()
		for _, t := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, errorCode(answer)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
}

// addOffsetsFirst finds the transaction's coordinator, adds the group's offsets partition
// there, then runs commit; a failure on the way is the commit's answer.
func (n *Node) addOffsetsFirst(env *sim.Env, c *call, m proto.TxnOffsetCommit, answer *proto.Error, commit func()) {
	n.send(env, c, n.target(c), func(corr int64) sim.Message {
		return proto.FindCoordinator{CorrelationID: corr, Group: m.TransactionalID, KeyType: proto.TransactionCoordinator}
	}, func(msg sim.Message) {
		fc := msg.(proto.FindCoordinatorResponse)
		if fc.Error != proto.None {
			*answer = fc.Error
			return
		}
		add := proto.AddOffsetsToTxn{TransactionalID: m.TransactionalID, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Group: m.Group}
		n.send(env, c, fc.Coordinator, func(corr int64) sim.Message { add.CorrelationID = corr; return add }, func(msg sim.Message) {
			if e := msg.(proto.AddOffsetsToTxnResponse).Error; e != proto.None {
				*answer = e
				return
			}
			commit()
		})
	})
}
