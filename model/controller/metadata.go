package controller

import (
	"encoding/json"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/sim"
)

// state is the cluster's metadata: what the controller's state machine holds, in both
// modes. Every change to it is a batch of records applied by apply, the one place that
// changes it.
type state struct {
	ControllerEpoch int32
	// Version is the position of the last change: the count of writes of the single
	// controller's file, the metadata log offset (Raft index) of the quorum's.
	Version        int64
	NextProducerID int64
	Topics         []proto.TopicConfig    // sorted by name
	Partitions     []proto.PartitionState // sorted by TP
	// Incarnations are the brokers' registered incarnations (broker epochs), by broker
	// index, so that a new or restarted controller still recognises a broker that
	// restarted meanwhile (KRaft keeps broker registrations in its metadata log for the
	// same reason).
	Incarnations []int64
	// Fenced says, by broker index, which brokers are not alive. The quorum logs it, so a
	// new active controller knows whom its predecessor fenced; the single controller
	// keeps it in memory only and presumes every broker alive when it starts.
	Fenced []bool
}

// newState is the metadata of a cluster of n brokers that nothing happened to yet.
// Brokers start fenced in the quorum (they are unfenced by registering), alive for the
// single controller (which gives each a session to report in).
func newState(n int, fenced bool) *state {
	s := &state{Incarnations: make([]int64, n), Fenced: make([]bool, n)}
	for i := range s.Fenced {
		s.Fenced[i] = fenced
	}
	return s
}

func (s *state) clone() *state {
	c := *s
	c.Topics = slices.Clone(s.Topics)
	c.Partitions = make([]proto.PartitionState, len(s.Partitions))
	for i, p := range s.Partitions {
		c.Partitions[i] = p.Clone()
	}
	c.Incarnations = slices.Clone(s.Incarnations)
	c.Fenced = slices.Clone(s.Fenced)
	return &c
}

// record is one metadata change, as KRaft's metadata log holds them: exactly one field is
// set. A batch of records is applied atomically (one Raft entry, one file write). A record
// sets state rather than changing it, so applying it twice is applying it once.
type record struct {
	// Register is RegisterBrokerRecord: the broker runs this incarnation and is alive.
	Register *brokerRecord `json:",omitempty"`
	// Fence is BrokerRegistrationChangeRecord(fenced): the broker is not alive.
	Fence *brokerRecord `json:",omitempty"`
	// Topic is TopicRecord.
	Topic *proto.TopicConfig `json:",omitempty"`
	// Partition is PartitionRecord / PartitionChangeRecord: the partition's whole new
	// state (replicas, leader, leader epoch, ISR, partition epoch).
	Partition *proto.PartitionState `json:",omitempty"`
	// ProducerIDs is ProducerIdsRecord: the last producer id handed out.
	ProducerIDs int64 `json:",omitempty"`
}

type brokerRecord struct {
	Broker      int // index: b1 is 0
	Incarnation int64
}

// apply changes s by one record. Every controller applies the same records in the same
// order, so apply must depend on nothing but s and r.
func (s *state) apply(r record) {
	switch {
	case r.Register != nil:
		s.grow(r.Register.Broker)
		s.Incarnations[r.Register.Broker] = r.Register.Incarnation
		s.Fenced[r.Register.Broker] = false
	case r.Fence != nil:
		s.grow(r.Fence.Broker)
		s.Fenced[r.Fence.Broker] = true
	case r.Topic != nil:
		i, found := slices.BinarySearchFunc(s.Topics, r.Topic.Name, func(t proto.TopicConfig, name string) int { return strings.Compare(t.Name, name) })
		if found {
			s.Topics[i] = *r.Topic
		} else {
			s.Topics = slices.Insert(s.Topics, i, *r.Topic)
		}
	case r.Partition != nil:
		p := r.Partition.Clone()
		i, found := s.search(p.TP)
		if found {
			s.Partitions[i] = p
		} else {
			s.Partitions = slices.Insert(s.Partitions, i, p)
		}
	case r.ProducerIDs != 0:
		s.NextProducerID = r.ProducerIDs
	}
}

func (s *state) grow(i int) {
	for len(s.Incarnations) <= i {
		s.Incarnations = append(s.Incarnations, 0)
	}
	for len(s.Fenced) <= i {
		s.Fenced = append(s.Fenced, false)
	}
}

// partitionIndex is tp's index in s.Partitions, or -1.
func (s *state) partitionIndex(tp proto.TP) int {
	if i, found := s.search(tp); found {
		return i
	}
	return -1
}

// search finds tp in s.Partitions, kept sorted by TP, or where it would go: a lookup
// costs the log of the partitions, not their number, on every request about one.
func (s *state) search(tp proto.TP) (int, bool) {
	return slices.BinarySearchFunc(s.Partitions, tp, func(x proto.PartitionState, tp proto.TP) int { return proto.CompareTP(x.TP, tp) })
}

func (s *state) topic(name string) proto.TopicConfig {
	for _, t := range s.Topics {
		if t.Name == name {
			return t
		}
	}
	return proto.TopicConfig{}
}

// encodeRecords is a batch's form in the metadata log: JSON, whose encoding of these
// plain structs is deterministic.
func encodeRecords(recs []record) []byte {
	b, err := json.Marshal(recs)
	if err != nil {
		panic(err) // plain data always encodes
	}
	return b
}

func decodeRecords(p []byte) ([]record, error) {
	var recs []record
	err := json.Unmarshal(p, &recs)
	return recs, err
}

// describe names the brokers of a batch's records, for the trace.
func describe(env *sim.Env, recs []record) []MetadataRecord {
	out := make([]MetadataRecord, 0, len(recs))
	for _, r := range recs {
		switch {
		case r.Register != nil:
			out = append(out, MetadataRecord{Kind: RegisterRecord, Broker: BrokerName(r.Register.Broker + 1), Incarnation: r.Register.Incarnation})
		case r.Fence != nil:
			out = append(out, MetadataRecord{Kind: FenceRecord, Broker: BrokerName(r.Fence.Broker + 1)})
		case r.Topic != nil:
			out = append(out, MetadataRecord{Kind: TopicRecord, Topic: r.Topic.Name})
		case r.Partition != nil:
			p := r.Partition
			leader := ""
			if p.Leader != proto.NoLeader {
				leader = env.NameOf(p.Leader)
			}
			out = append(out, MetadataRecord{Kind: PartitionRecord, TP: p.TP, Leader: leader, Epoch: p.LeaderEpoch, ISR: names(env, p.ISR)})
		case r.ProducerIDs != 0:
			out = append(out, MetadataRecord{Kind: ProducerIDsRecord, ProducerIDs: r.ProducerIDs})
		}
	}
	return out
}

// names are the world's names of ids.
func names(env *sim.Env, ids []sim.NodeID) []string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = env.NameOf(id)
	}
	return s
}
