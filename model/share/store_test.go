package share

import (
	"reflect"
	"testing"

	"mqsim/model/proto"
	"mqsim/model/wal"
)

func TestPartitionForIsJavaHash(t *testing.T) {
	// "g:t:0".hashCode() = 96963863 (Java), 96963863 % 3 = 2.
	if got := PartitionFor(proto.SharePartitionKey{Group: "g", TP: proto.TP{Topic: "t"}}, 3); got != 2 {
		t.Fatalf("partition %d, want 2", got)
	}
}

func TestStoreFencesAndReplays(t *testing.T) {
	var s Store
	st := proto.ShareState{StateEpoch: 1, StartOffset: 4, Batches: []proto.PersistedBatch{{First: 5, Last: 6, State: proto.Acknowledged, DeliveryCount: 2}}}
	var log []wal.Record
	e, _, err := s.Write(proto.WriteShareGroupState{Key: key, LeaderEpoch: 2, Seq: 1, State: st})
	if err != proto.None {
		t.Fatal(err)
	}
	s.Put(e)
	log = append(log, Encode(e))
	if _, _, err := s.Write(proto.WriteShareGroupState{Key: key, LeaderEpoch: 1, Seq: 9, State: st}); err != proto.FencedLeaderEpoch {
		t.Fatalf("lower leader epoch: %v", err)
	}
	if _, _, err := s.Write(proto.WriteShareGroupState{Key: key, LeaderEpoch: 2, Seq: 2, State: proto.ShareState{StateEpoch: 0}}); err != proto.FencedStateEpoch {
		t.Fatalf("lower state epoch: %v", err)
	}
	if _, _, err := s.Write(proto.WriteShareGroupState{Key: key, LeaderEpoch: 2, Seq: 0, State: st}); err != proto.FencedStateEpoch {
		t.Fatalf("a stale copy of an older write: %v", err)
	}
	if again, dup, err := s.Write(proto.WriteShareGroupState{Key: key, LeaderEpoch: 2, Seq: 1, State: st}); err != proto.None || !dup || again.Seq != 1 {
		t.Fatalf("a repeat of the last write: %v %v %v", again, dup, err)
	}
	if resp, _, _ := s.Read(proto.ReadShareGroupState{Key: key, LeaderEpoch: 1}); resp.Error != proto.FencedLeaderEpoch {
		t.Fatalf("read with a lower leader epoch: %v", resp)
	}
	resp, e, wrote := s.Read(proto.ReadShareGroupState{Key: key, LeaderEpoch: 3})
	if resp.Error != proto.None || !resp.Found || !reflect.DeepEqual(resp.State, st) || !wrote {
		t.Fatalf("read by the new leader: %v wrote=%t", resp, wrote)
	}
	s.Put(e)
	log = append(log, Encode(e))
	if _, _, err := s.Write(proto.WriteShareGroupState{Key: key, LeaderEpoch: 2, Seq: 2, State: st}); err != proto.FencedLeaderEpoch {
		t.Fatalf("the deposed leader's write after the new one read: %v", err)
	}
	other := proto.SharePartitionKey{Group: "a", TP: proto.TP{Topic: "t", Partition: 1}}
	resp, e, wrote = s.Read(proto.ReadShareGroupState{Key: other, LeaderEpoch: 0})
	if resp.Found || !wrote {
		t.Fatalf("a key never written: %v", resp)
	}
	s.Put(e)
	log = append(log, Encode(e), wal.Record{Key: []byte("junk")})

	var replayed Store
	if bad := replayed.Replay(log); bad != 1 {
		t.Fatalf("bad records %d, want 1", bad)
	}
	if !reflect.DeepEqual(replayed.Entries(), s.Entries()) {
		t.Fatalf("replayed %+v\nwant %+v", replayed.Entries(), s.Entries())
	}
	if e := replayed.Entries(); len(e) != 2 || e[0].Key != other || e[1].LeaderEpoch != 3 {
		t.Fatalf("entries %+v, want a's then g's with leader epoch 3", e)
	}
}
