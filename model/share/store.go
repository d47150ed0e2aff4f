package share

import (
	"encoding/json"
	"fmt"
	"strings"

	"mqsim/model/group"
	"mqsim/model/proto"
	"mqsim/model/wal"
)

// PartitionFor is the partition of the share-group state topic that holds a
// share-partition's state, and so whose leader is its share coordinator: Kafka's
// abs(hash("group:topicId:partition")) % share.coordinator.state.topic.num.partitions
// (ShareCoordinatorService.topicPartitionFor), with String.hashCode as the hash and the
// topic's name in place of its id (mqsim has no topic ids).
func PartitionFor(key proto.SharePartitionKey, partitions int) int32 {
	return group.PartitionFor(fmt.Sprintf("%s:%s:%d", key.Group, key.TP.Topic, key.TP.Partition), partitions)
}

// Store is a share coordinator's state: per share-partition, the last state written and
// the leader epoch that wrote or read it (ShareCoordinatorShard's shareStateMap and
// leaderEpochMap), built by replaying its partition of the share-group state topic. It is
// pure: the broker appends the records it returns and answers once they are replicated.
type Store struct {
	entries []Entry // sorted by key
}

// Entry is one share-partition's persisted state.
type Entry struct {
	Key         proto.SharePartitionKey
	LeaderEpoch int32
	Found       bool  // a state was written; false: only a read recorded its leader epoch
	Seq         int64 // the last write's number in LeaderEpoch (proto.WriteShareGroupState.Seq)
	State       proto.ShareState
}

// recordValue is a record's value: the whole state of the key (see doc.go).
type recordValue struct {
	LeaderEpoch int32                  `json:"leader_epoch"`
	Found       bool                   `json:"found"`
	Seq         int64                  `json:"seq,omitempty"`
	StateEpoch  int32                  `json:"state_epoch"`
	Start       int64                  `json:"start"`
	Batches     []proto.PersistedBatch `json:"batches,omitempty"`
}

// Encode is the record that persists an entry: key ["share", group, topic, partition],
// value the whole state, both JSON so that `show log` stays readable.
func Encode(e Entry) wal.Record {
	k, _ := json.Marshal([]any{"share", e.Key.Group, e.Key.TP.Topic, e.Key.TP.Partition})
	v, _ := json.Marshal(recordValue{LeaderEpoch: e.LeaderEpoch, Found: e.Found, Seq: e.Seq, StateEpoch: e.State.StateEpoch,
		Start: e.State.StartOffset, Batches: e.State.Batches})
	return wal.Record{Key: k, Value: v}
}

// Decode reads a record Encode wrote.
func Decode(r wal.Record) (Entry, error) {
	var key []json.RawMessage
	var kind, g, topic string
	var part int32
	if err := json.Unmarshal(r.Key, &key); err != nil || len(key) != 4 ||
		json.Unmarshal(key[0], &kind) != nil || kind != "share" ||
		json.Unmarshal(key[1], &g) != nil || json.Unmarshal(key[2], &topic) != nil || json.Unmarshal(key[3], &part) != nil {
		return Entry{}, fmt.Errorf("bad key %q: want [\"share\", group, topic, partition]", r.Key)
	}
	var v recordValue
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return Entry{}, fmt.Errorf("bad value %q: %v", r.Value, err)
	}
	return Entry{Key: proto.SharePartitionKey{Group: g, TP: proto.TP{Topic: topic, Partition: part}}, LeaderEpoch: v.LeaderEpoch,
		Found: v.Found, Seq: v.Seq, State: proto.ShareState{StateEpoch: v.StateEpoch, StartOffset: v.Start, Batches: v.Batches}}, nil
}

// Replay applies the records of the partition in log order (the latest record of a key
// wins) and returns how many it could not read.
func (s *Store) Replay(records []wal.Record) (bad int) {
	for _, r := range records {
		e, err := Decode(r)
		if err != nil {
			bad++
			continue
		}
		s.put(e)
	}
	return bad
}

func compareKeys(a, b proto.SharePartitionKey) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := strings.Compare(a.TP.Topic, b.TP.Topic); c != 0 {
		return c
	}
	return int(a.TP.Partition) - int(b.TP.Partition)
}

// find is the index of key, or where it would go.
func (s *Store) find(key proto.SharePartitionKey) (int, bool) {
	lo, hi := 0, len(s.entries)
	for lo < hi {
		m := (lo + hi) / 2
		if compareKeys(s.entries[m].Key, key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(s.entries) && compareKeys(s.entries[lo].Key, key) == 0
}

func (s *Store) put(e Entry) {
	i, ok := s.find(e.Key)
	if ok {
		s.entries[i] = e
		return
	}
	s.entries = append(s.entries, Entry{})
	copy(s.entries[i+1:], s.entries[i:])
	s.entries[i] = e
}

// Get is the entry of a key.
func (s *Store) Get(key proto.SharePartitionKey) (Entry, bool) {
	if i, ok := s.find(key); ok {
		return s.entries[i], true
	}
	return Entry{}, false
}

// Entries lists the entries, sorted by key, for views.
func (s *Store) Entries() []Entry { return append([]Entry(nil), s.entries...) }

// Write checks a WriteShareGroupState against the fences
// (ShareCoordinatorShard.maybeGetWriteStateError): a leader epoch below the recorded one
// is FENCED_LEADER_EPOCH (a deposed share-partition leader), a state epoch below the
// persisted one FENCED_STATE_EPOCH. Accepted, it returns the key's new entry, which the
// caller appends (Encode) and then Puts, so that later requests are checked against it.
// Within one leader epoch a write numbered below the last one taken is a stale copy:
// FENCED_STATE_EPOCH (nobody waits for its answer); a repeat of the last one is done
// already (dup true: answer it, append nothing).
func (s *Store) Write(m proto.WriteShareGroupState) (e Entry, dup bool, err proto.Error) {
	if cur, ok := s.Get(m.Key); ok {
		switch {
		case m.LeaderEpoch < cur.LeaderEpoch:
			return Entry{}, false, proto.FencedLeaderEpoch
		case cur.Found && m.State.StateEpoch < cur.State.StateEpoch:
			return Entry{}, false, proto.FencedStateEpoch
		case m.LeaderEpoch == cur.LeaderEpoch && cur.Found && m.Seq < cur.Seq:
			return Entry{}, false, proto.FencedStateEpoch
		case m.LeaderEpoch == cur.LeaderEpoch && cur.Found && m.Seq == cur.Seq:
			return cur, true, proto.None
		}
	}
	return Entry{Key: m.Key, LeaderEpoch: m.LeaderEpoch, Found: true, Seq: m.Seq, State: cloneState(m.State)}, false, proto.None
}

// Put makes e its key's entry (once its record is appended).
func (s *Store) Put(e Entry) { s.put(e) }

// Read answers a ReadShareGroupState. A leader epoch below the recorded one is
// FENCED_LEADER_EPOCH (ShareCoordinatorShard.maybeGetReadStateError). A higher one is
// recorded: the entry to append and Put is returned (ok true), so that the deposed leader's
// later writes are fenced even after the coordinator moves: Kafka 4.x reads through
// readStateAndMaybeUpdateLeaderEpoch for the same reason (kafka4.md 1.7; the 2024 mirror
// only fences a lower epoch).
func (s *Store) Read(m proto.ReadShareGroupState) (proto.ReadShareGroupStateResponse, Entry, bool) {
	resp := proto.ReadShareGroupStateResponse{CorrelationID: m.CorrelationID, Key: m.Key}
	cur, ok := s.Get(m.Key)
	if ok && m.LeaderEpoch < cur.LeaderEpoch {
		resp.Error = proto.FencedLeaderEpoch
		return resp, Entry{}, false
	}
	resp.Found, resp.State = cur.Found, cloneState(cur.State)
	if ok && m.LeaderEpoch == cur.LeaderEpoch {
		return resp, Entry{}, false
	}
	return resp, Entry{Key: m.Key, LeaderEpoch: m.LeaderEpoch, Found: cur.Found, Seq: 0, State: cloneState(cur.State)}, true
}

func cloneState(st proto.ShareState) proto.ShareState {
	st.Batches = append([]proto.PersistedBatch(nil), st.Batches...)
	return st
}
