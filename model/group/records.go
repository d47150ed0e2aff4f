package group

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/model/wal"
)

// What the coordinator writes to its partition of the offsets topic, as Kafka's
// GroupMetadataManager does: one record per committed offset, keyed by (group, topic,
// partition), and one record of group metadata per completed rebalance, keyed by the
// group. The latest record of a key wins when a new coordinator loads the partition (the
// topic is compacted in Kafka; mqsim keeps every record and reads them all). Keys and
// values are JSON, so `show log` stays readable.

// offsetKey is ["offset", group, topic, partition].
func offsetKey(group string, tp proto.TP) []byte {
	b, _ := json.Marshal([]any{"offset", group, tp.Topic, tp.Partition})
	return b
}

// groupKey is ["group", group].
func groupKey(group string) []byte {
	b, _ := json.Marshal([]any{"group", group})
	return b
}

// offsetValue is the committed offset and who committed it.
type offsetValue struct {
	Offset      int64  `json:"offset"`
	LeaderEpoch int32  `json:"leader_epoch"`
	Member      string `json:"member,omitempty"`
	Generation  int32  `json:"generation"`
}

// groupRecord is a group's metadata as persisted after each rebalance.
type groupRecord struct {
	Generation int32          `json:"generation"`
	State      string         `json:"state"`
	Assignor   string         `json:"assignor,omitempty"`
	Leader     string         `json:"leader,omitempty"`
	NextMember int            `json:"next_member"`
	Rebalances int            `json:"rebalances"`
	Members    []memberRecord `json:"members,omitempty"`
}

type memberRecord struct {
	ID               string        `json:"id"`
	InstanceID       string        `json:"instance,omitempty"`
	ClientID         string        `json:"client"`
	SessionTimeout   time.Duration `json:"session"`
	RebalanceTimeout time.Duration `json:"rebalance"`
	Topics           []string      `json:"topics"`
	Assignment       []proto.TP    `json:"assignment"`
}

func encodeOffset(group string, o proto.PartitionOffset, member string, gen int32) wal.Record {
	v, _ := json.Marshal(offsetValue{Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Member: member, Generation: gen})
	return wal.Record{Key: offsetKey(group, o.TP), Value: v}
}

func encodeGroup(g *Group) wal.Record {
	rec := groupRecord{Generation: g.Generation, State: g.State.String(), Assignor: g.Assignor, Leader: g.Leader,
		NextMember: g.nextMember, Rebalances: g.Rebalances}
	for _, m := range g.members {
		rec.Members = append(rec.Members, memberRecord{ID: m.ID, InstanceID: m.InstanceID, ClientID: m.ClientID,
			SessionTimeout: m.SessionTimeout, RebalanceTimeout: m.RebalanceTimeout,
			Topics: slices.Clone(m.Subscription.Topics), Assignment: slices.Clone(m.Assignment)})
	}
	v, _ := json.Marshal(rec)
	return wal.Record{Key: groupKey(g.ID), Value: v}
}

// decoded is one record of the offsets topic, read back.
type decoded struct {
	group  string
	tp     proto.TP
	offset *offsetValue
	meta   *groupRecord
	cmeta  *consumerGroupRecord // a consumer-protocol group (consumer_group.go)
	smeta  *shareGroupRecord    // a share group (share_group.go)
}

func decode(r wal.Record) (decoded, error) {
	var key []any
	if err := json.Unmarshal(r.Key, &key); err != nil || len(key) < 2 {
		return decoded{}, fmt.Errorf("bad key %q", r.Key)
	}
	kind, _ := key[0].(string)
	group, _ := key[1].(string)
	switch {
	case kind == "offset" && len(key) == 4:
		topic, _ := key[2].(string)
		part, _ := key[3].(float64)
		var v offsetValue
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return decoded{}, fmt.Errorf("bad offset value %q", r.Value)
		}
		return decoded{group: group, tp: proto.TP{Topic: topic, Partition: int32(part)}, offset: &v}, nil
	case kind == "group":
		var v groupRecord
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return decoded{}, fmt.Errorf("bad group value %q", r.Value)
		}
		return decoded{group: group, meta: &v}, nil
	case kind == "consumer-group":
		var v consumerGroupRecord
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return decoded{}, fmt.Errorf("bad consumer group value %q", r.Value)
		}
		return decoded{group: group, cmeta: &v}, nil
	case kind == "share-group":
		var v shareGroupRecord
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return decoded{}, fmt.Errorf("bad share group value %q", r.Value)
		}
		return decoded{group: group, smeta: &v}, nil
	}
	return decoded{}, fmt.Errorf("unknown key %q", r.Key)
}
