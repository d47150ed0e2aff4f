package checker

import (
	"testing"

	"mqsim/model/history"
)

// keyed records an ok send of value with key at offset.
func (b *builder) keyed(proc int, tp history.TopicPartition, key, value string, offset int64) {
	h := b.r.InvokeSend(b.tick(), proc, tp, key, value)
	b.complete(h, history.Ok, history.Result{Offset: offset})
}

// A key moved from t/0 to t/1 (partitions added): the group reads the new partition's
// record first, which is a reorder; reading t/0 first is not.
func TestCheckKeyOrderAcrossPartitions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first history.TopicPartition
		want  string
	}{
		{"old partition first", t0, ""},
		{"new partition first", t1, `group g read "b" (t/1@0) before "a" (t/0@0), which producer process 0 sent earlier with the same key "k"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder()
			b.keyed(0, t0, "k", "a", 0)
			b.keyed(0, t1, "k", "b", 0)
			b.keyed(0, t1, "other", "c", 1)
			recs := map[history.TopicPartition]history.Record{t0: {Offset: 0, Value: "a"}, t1: {Offset: 0, Value: "b"}}
			second := t1
			if tc.first == t1 {
				second = t0
			}
			b.poll(5, "g", history.Ok, rd(tc.first, recs[tc.first]))
			b.poll(6, "g", history.Ok, rd(second, recs[second]))
			b.poll(6, "g", history.Ok, rd(t1, history.Record{Offset: 1, Value: "c"}))
			rep := CheckKeyOrder(b.history())
			var got string
			for _, v := range rep.Violations {
				if v.Anomaly != Reordered {
					t.Fatalf("anomaly %s", v.Anomaly)
				}
				got += v.Text
			}
			if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Different producers, different keys and different readers promise nothing to each
// other; a process without a group is its own reader.
func TestCheckKeyOrderScopes(t *testing.T) {
	b := newBuilder()
	b.keyed(0, t0, "k", "a", 0)
	b.keyed(1, t1, "k", "b", 0) // another producer
	b.keyed(0, t1, "j", "c", 1) // another key
	b.read(7, t1, history.Record{Offset: 0, Value: "b"}, history.Record{Offset: 1, Value: "c"})
	b.read(7, t0, history.Record{Offset: 0, Value: "a"})
	b.poll(8, "g", history.Ok, rd(t0, history.Record{Offset: 0, Value: "a"}))
	if rep := CheckKeyOrder(b.history()); len(rep.Violations) != 0 {
		t.Fatalf("violations: %+v", rep.Violations)
	}
	b.keyed(0, t1, "k", "d", 2) // process 0's k: a then d; process 7 reads d after a: fine
	b.read(7, t1, history.Record{Offset: 2, Value: "d"})
	b.poll(8, "g", history.Ok, rd(t1, history.Record{Offset: 2, Value: "d"}))
	if rep := CheckKeyOrder(b.history()); len(rep.Violations) != 0 {
		t.Fatalf("violations: %+v", rep.Violations)
	}
}
