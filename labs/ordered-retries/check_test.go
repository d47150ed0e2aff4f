package lab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/model/history"
)

// run is a history: the application hands over records of key k1 (v1, v2, ...) at
// times 1, 2, ...; acked[v] is when the Sender acknowledged v (absent: never); log is
// what the final consume read of t/0, value by value from offset 0 (an ok send's
// offset is its first copy's).
func run(n int, acked map[string]int64, log ...string) history.History {
	rec := history.NewRecorder()
	tp := history.TopicPartition{Topic: "t"}
	type op struct {
		h      history.Handle
		at     int64
		offset int64
	}
	var ops []op
	for i := 1; i <= n; i++ {
		v := fmt.Sprintf("v%d", i)
		h := rec.InvokeSend(int64(i), 1, tp, "k1", v)
		if at, ok := acked[v]; ok {
			off := int64(slices.Index(log, v))
			ops = append(ops, op{h, at, off})
		}
	}
	// Completions in time order, as a recorder sees them.
	for t := int64(0); t <= 1000; t++ {
		for _, o := range ops {
			if o.at == t {
				rec.Ok(t, o.h, history.Result{Offset: o.offset})
			}
		}
	}
	var recs []history.Record
	for i, v := range log {
		recs = append(recs, history.Record{Offset: int64(i), Value: v})
	}
	h := rec.InvokePoll(2000, 2, "")
	rec.Ok(2001, h, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: recs}}})
	return rec.History()
}

func texts(r checker.Report) string {
	var lines []string
	for _, v := range r.Violations {
		lines = append(lines, fmt.Sprintf("%s %d: %s", v.Anomaly, v.Time, v.Text))
	}
	return strings.Join(lines, "\n")
}

// Each key's records in order, whatever their duplicates: valid, and the note counts
// the copies. A duplicate of v1 after v2 is not a reordering: v1's first copy is first.
func TestCheckAllowsDuplicatesInOrder(t *testing.T) {
	acked := map[string]int64{"v1": 10, "v2": 20}
	for _, log := range [][]string{{"v1", "v1", "v2"}, {"v1", "v2", "v1"}} {
		r := Check(run(2, acked, log...), "t")
		if r.Result != checker.Valid {
			t.Errorf("log %v: %s", log, texts(r))
		}
		want := "2 records handed over, 2 acknowledged; the log holds 3 copies of them, 1 of them duplicates (allowed: without the broker's idempotence a retry can write a record twice)"
		if len(r.Notes) != 1 || r.Notes[0].Text != want {
			t.Errorf("notes %v", r.Notes)
		}
	}
}

// The planted bugs: a retry of v1 that landed after v2 (placed where the second of the
// two was acknowledged), and a record never acknowledged.
func TestCheckCatchesPlantedBugs(t *testing.T) {
	r := Check(run(2, map[string]int64{"v1": 30, "v2": 20}, "v2", "v1"), "t")
	want := `reordered 30: process 2 read "v2" (t/0@0) before "v1" (t/0@1), which producer process 1 sent earlier with the same key "k1"`
	if got := texts(r); got != want {
		t.Errorf("reordered:\ngot  %s\nwant %s", got, want)
	}
	r = Check(run(3, map[string]int64{"v1": 10, "v2": 20}, "v1", "v2"), "t")
	want = "never-acknowledged 3: k1=v3 was handed over to the producer and never acknowledged, though every fault ended and the producer had a minute more"
	if got := texts(r); got != want {
		t.Errorf("never acknowledged:\ngot  %s\nwant %s", got, want)
	}
}

// Produce refuses what a request cannot be: empty, of two partitions, of a partition
// the topic lacks, or one more than MaxInFlight.
func TestProduceRefusesBadRequests(t *testing.T) {
	p := NewProducer(Config{Topic: "t", Partitions: 2}, nil, 1, history.NewRecorder())
	for _, c := range []struct {
		records []Record
		want    string
	}{
		{nil, "Produce: no records"},
		{[]Record{{Key: "a", Partition: 0}, {Key: "b", Partition: 1}}, "Produce: records of partitions 0 and 1 in one request: a request goes to one partition's leader"},
		{[]Record{{Key: "a", Partition: 2}}, "Produce: partition 2: the topic has 2"},
	} {
		if _, err := p.Produce(c.records...); err == nil || err.Error() != c.want {
			t.Errorf("%v: err %v, want %s", c.records, err, c.want)
		}
	}
	for range MaxInFlight {
		p.requests = append(p.requests, &request{})
	}
	if _, err := p.Produce(Record{Key: "a"}); !errors.Is(err, ErrTooManyInFlight) || p.InFlight() != MaxInFlight {
		t.Errorf("err %v with %d in flight", err, p.InFlight())
	}
}
