package gateway

import (
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// apiVersions answers at once. A client asking with a newer version than served gets a
// v0 answer with UNSUPPORTED_VERSION and only ApiVersions' own range (KIP-511, as Kafka
// answers), and retries at the highest version listed: a client given every key instead
// would keep v0's answer, which has no features.
func (n *Node) apiVersions(c *call) {
	c.finish = func() kmsg.Response {
		v, _ := served(int16(kmsg.ApiVersions))
		if c.req.Header.Version > v.max {
			resp := kmsg.NewPtrApiVersionsResponse()
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MinVersion, ak.MaxVersion = int16(kmsg.ApiVersions), v.min, v.max
			resp.ApiKeys = append(resp.ApiKeys, ak)
			// complete sets the request's version (0, as ParseRequest read it).
			return resp
		}
		resp := apiVersionsResponse(c.req.Header.Version)
		n.addFeatures(resp)
		return resp
	}
}

// metadata asks the connected broker for its metadata cache and answers with its live
// brokers (at their listening addresses) and the topics asked for.
func (n *Node) metadata(env *sim.Env, c *call, req *kmsg.MetadataRequest) {
	var meta proto.Metadata
	n.send(env, c, n.target(c), func(corr int64) sim.Message { return proto.MetadataRequest{CorrelationID: corr} },
		func(msg sim.Message) { meta = msg.(proto.MetadataResponse).Metadata })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrMetadataResponse()
		cluster := clusterID
		resp.ClusterID = &cluster
		resp.ControllerID = -1
		for _, id := range n.liveBrokerIDs(meta) {
			a := n.addr(id)
			mb := kmsg.NewMetadataResponseBroker()
			mb.NodeID, mb.Host, mb.Port = id, a.Host, a.Port
			resp.Brokers = append(resp.Brokers, mb)
			if resp.ControllerID < 0 {
				resp.ControllerID = id
			}
		}
		var names []string
		if req.Topics == nil {
			for _, t := range meta.Topics {
				names = append(names, t.Name)
			}
			slices.Sort(names)
		} else {
			for _, t := range req.Topics {
				if t.Topic != nil {
					names = append(names, *t.Topic)
				}
			}
		}
		for _, name := range names {
			resp.Topics = append(resp.Topics, n.topicMetadata(meta, name))
		}
		return resp
	}
}

// liveBrokerIDs are the Kafka node ids of the brokers the metadata lists as live,
// lowest first (the lowest stands in for the controller, which clients cannot reach).
func (n *Node) liveBrokerIDs(meta proto.Metadata) []int32 {
	var ids []int32
	for _, b := range meta.LiveBrokers {
		if id := n.kafkaID(b); id > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// topicMetadata describes one topic as the broker's metadata has it.
func (n *Node) topicMetadata(meta proto.Metadata, name string) kmsg.MetadataResponseTopic {
	t := kmsg.NewMetadataResponseTopic()
	t.Topic = &name
	t.TopicID = topicID(name)
	t.IsInternal = name == proto.OffsetsTopic
	if !slices.ContainsFunc(meta.Topics, func(tc proto.TopicConfig) bool { return tc.Name == name }) {
		t.ErrorCode = kerr.UnknownTopicOrPartition.Code
		return t
	}
	for _, p := range meta.Partitions {
		if p.TP.Topic != name {
			continue
		}
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Leader, mp.LeaderEpoch = p.TP.Partition, n.kafkaID(p.Leader), p.LeaderEpoch
		if p.Leader == proto.NoLeader {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		mp.Replicas = n.kafkaIDs(p.Replicas)
		mp.ISR = n.kafkaIDs(p.ISR)
		for _, r := range p.Replicas {
			if !slices.Contains(meta.LiveBrokers, r) {
				mp.OfflineReplicas = append(mp.OfflineReplicas, n.kafkaID(r))
			}
		}
		t.Partitions = append(t.Partitions, mp)
	}
	return t
}

func (n *Node) kafkaIDs(nodes []sim.NodeID) []int32 {
	ids := make([]int32, 0, len(nodes))
	for _, b := range nodes {
		ids = append(ids, n.kafkaID(b))
	}
	return ids
}

// topicID is a topic's id as Metadata v10+ gives it: mqsim's topics have none, so it is
// made from the name (stable across runs, distinct per name, never all zero).
func topicID(name string) [16]byte {
	var id [16]byte
	h := fnv.New128a()
	h.Write([]byte(name))
	copy(id[:], h.Sum(nil))
	id[0] |= 1
	return id
}

// findCoordinator asks the connected broker for each key's coordinator (v4 batches keys).
func (n *Node) findCoordinator(env *sim.Env, c *call, req *kmsg.FindCoordinatorRequest) {
	keys := req.CoordinatorKeys
	if req.GetVersion() < 4 {
		keys = []string{req.CoordinatorKey}
	}
	kind := proto.GroupCoordinator
	if req.CoordinatorType == 1 {
		kind = proto.TransactionCoordinator
	}
	answers := make([]proto.FindCoordinatorResponse, len(keys))
	for i := range answers {
		answers[i] = proto.FindCoordinatorResponse{Error: proto.RequestTimedOut, Coordinator: proto.NoLeader}
	}
	ask := func() {
		for i, key := range keys {
			n.send(env, c, n.target(c), func(corr int64) sim.Message {
				return proto.FindCoordinator{CorrelationID: corr, Group: key, KeyType: kind}
			}, func(msg sim.Message) { answers[i] = msg.(proto.FindCoordinatorResponse) })
		}
	}
	if kind == proto.TransactionCoordinator {
		n.ensureTxnStateTopic(env, c, ask)
	} else {
		ask()
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrFindCoordinatorResponse()
		for i, a := range answers {
			id := n.kafkaID(a.Coordinator)
			addr := n.addr(id)
			code := errorCode(a.Error)
			if req.GetVersion() < 4 {
				resp.ErrorCode, resp.NodeID, resp.Host, resp.Port = code, id, addr.Host, addr.Port
				continue
			}
			kc := kmsg.NewFindCoordinatorResponseCoordinator()
			kc.Key, kc.ErrorCode, kc.NodeID, kc.Host, kc.Port = keys[i], code, id, addr.Host, addr.Port
			resp.Coordinators = append(resp.Coordinators, kc)
		}
		return resp
	}
}

// initProducerID asks the controller for an idempotent producer's id, or the connected
// broker (the transaction coordinator) for a transactional one's. In quorum mode a
// controller that is not active names the active one, and the gateway asks it once.
func (n *Node) initProducerID(env *sim.Env, c *call, req *kmsg.InitProducerIDRequest) {
	msg := proto.InitProducerID{ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
		TransactionTimeout: time.Duration(req.TransactionTimeoutMillis) * time.Millisecond}
	to := n.controllers[0]
	if req.TransactionalID != nil {
		msg.TransactionalID = *req.TransactionalID
		to = n.target(c)
	}
	if msg.ProducerID < 0 {
		msg.ProducerID, msg.ProducerEpoch = wal.NoProducerID, -1
	}
	var answer proto.InitProducerIDResponse
	var ask func(to sim.NodeID, retry bool)
	ask = func(to sim.NodeID, retry bool) {
		n.send(env, c, to, func(corr int64) sim.Message { msg.CorrelationID = corr; return msg }, func(m sim.Message) {
			answer = m.(proto.InitProducerIDResponse)
			if retry && answer.Error == proto.NotController && answer.ActiveController != proto.NoController {
				ask(answer.ActiveController, false)
			}
		})
	}
	ask(to, true)
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrInitProducerIDResponse()
		resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = errorCode(answer.Error), answer.ProducerID, answer.ProducerEpoch
		if answer.Error == proto.NotController {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		}
		return resp
	}
}

// createTopics asks the controller for each topic; a partition count or replication
// factor of -1 takes the cluster's default, and min.insync.replicas is read from the
// topic's configs.
func (n *Node) createTopics(env *sim.Env, c *call, req *kmsg.CreateTopicsRequest) {
	answers := make([]proto.CreateTopicResponse, len(req.Topics))
	for i, t := range req.Topics {
		cfg := n.defaults
		cfg.Name = t.Topic
		if t.NumPartitions > 0 {
			cfg.Partitions = int(t.NumPartitions)
		}
		if t.ReplicationFactor > 0 {
			cfg.ReplicationFactor = int(t.ReplicationFactor)
		}
		for _, kv := range t.Configs {
			if kv.Name == "min.insync.replicas" && kv.Value != nil {
				if v, err := strconv.Atoi(*kv.Value); err == nil {
					cfg.MinInsyncReplicas = v
				}
			}
		}
		answers[i] = proto.CreateTopicResponse{Topic: t.Topic, Error: proto.RequestTimedOut}
		if err := cfg.Validate(len(n.brokers)); err != nil || req.ValidateOnly {
			if err != nil {
				answers[i] = proto.CreateTopicResponse{Topic: t.Topic, Error: proto.InvalidReplicationFactor, Detail: err.Error()}
			} else {
				answers[i].Error = proto.None
			}
			continue
		}
		n.send(env, c, n.controllers[0], func(corr int64) sim.Message {
			return proto.CreateTopic{CorrelationID: corr, Config: cfg}
		}, func(msg sim.Message) { answers[i] = msg.(proto.CreateTopicResponse) })
	}
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrCreateTopicsResponse()
		for i, a := range answers {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode = req.Topics[i].Topic, topicID(req.Topics[i].Topic), errorCode(a.Error)
			if a.Detail != "" {
				detail := a.Detail
				rt.ErrorMessage = &detail
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
}
