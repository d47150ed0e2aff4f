package txn

import (
	"encoding/json"
	"fmt"
	"time"

	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// What the coordinator writes to its partition of the transaction state topic, as Kafka's
// TransactionStateManager does (TransactionLog's key and value): one record per state
// change of a transactional id, keyed by the id. The latest record of a key wins when a new
// coordinator loads the partition (the topic is compacted in Kafka; mqsim keeps every record
// and reads them all). Keys and values are JSON, so `show log` stays readable.

// Producer ids: this coordinator's range (a simplification of the controller's id blocks,
// see doc.go). The base keeps them apart from the ids the controller grants idempotent
// producers; the decimal layout keeps a pid readable: 1002000007 is the 7th id of
// partition 2.
const (
	ProducerIDBase          int64 = 1_000_000_000
	ProducerIDsPerPartition int64 = 1_000_000
)

// txnKey is ["txn", transactional id].
func txnKey(id string) []byte {
	b, _ := json.Marshal([]any{"txn", id})
	return b
}

// txnValue is a transactional id's metadata as persisted.
type txnValue struct {
	ProducerID int64         `json:"pid"`
	Epoch      int16         `json:"epoch"`
	State      string        `json:"state"`
	Partitions []proto.TP    `json:"partitions,omitempty"`
	Start      sim.Time      `json:"start"`
	Timeout    time.Duration `json:"timeout"`
	LastEpoch  int16         `json:"last_epoch"`
}

func encode(m txnMeta) wal.Record {
	v, _ := json.Marshal(txnValue{ProducerID: m.pid, Epoch: m.epoch, State: m.state.String(), Partitions: m.partitions,
		Start: m.start, Timeout: m.timeout, LastEpoch: m.lastEpoch})
	return wal.Record{Key: txnKey(m.id), Value: v}
}

func decode(r wal.Record) (txnMeta, error) {
	var key []string
	if err := json.Unmarshal(r.Key, &key); err != nil || len(key) != 2 || key[0] != "txn" {
		return txnMeta{}, fmt.Errorf("bad key %q: want [\"txn\", id]", r.Key)
	}
	var v txnValue
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return txnMeta{}, fmt.Errorf("bad value %q", r.Value)
	}
	st, ok := parseState(v.State)
	if !ok || st == PrepareEpochFence || st == Dead {
		return txnMeta{}, fmt.Errorf("bad state %q in %q", v.State, r.Value)
	}
	return txnMeta{id: key[1], pid: v.ProducerID, epoch: v.Epoch, state: st, partitions: v.Partitions, start: v.Start, timeout: v.Timeout, lastEpoch: v.LastEpoch}, nil
}

// PartitionFor is the partition of the transaction state topic that holds a transactional
// id, and so whose leader coordinates it: TransactionStateManager.partitionFor,
// Utils.abs(transactionalId.hashCode) % transaction.state.log.num.partitions, the rule
// the offsets topic uses for group ids.
func PartitionFor(transactionalID string, partitions int) int32 {
	return group.PartitionFor(transactionalID, partitions)
}
