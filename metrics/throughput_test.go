package metrics

import (
	"reflect"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

func TestPercentilesByNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	p := percentiles(ds)
	if p.N != 100 || p.P50 != 50*time.Millisecond || p.P99 != 99*time.Millisecond || p.Max != 100*time.Millisecond {
		t.Errorf("percentiles of 1..100ms: %+v", p)
	}
	if p := percentiles([]time.Duration{7}); p.P50 != 7 || p.P99 != 7 {
		t.Errorf("one value: %+v", p)
	}
}

func TestMeasureCountsWhatCompletedInTheWindow(t *testing.T) {
	ms := func(n int64) int64 { return n * int64(time.Millisecond) }
	rec := history.NewRecorder()
	tp := history.TopicPartition{Topic: "t"}
	a := rec.InvokeSend(ms(0), 1, tp, "k", "aa")
	b := rec.InvokeSend(ms(1), 1, tp, "", "bbbb")
	c := rec.InvokeSend(ms(2), 1, tp, "", "c")
	rec.Ok(ms(10), a, history.Result{Offset: 0})
	rec.Ok(ms(21), b, history.Result{Offset: 1})
	rec.Fail(ms(22), c, history.Result{Error: "no"})
	poll := rec.InvokePoll(ms(30), 2, "")
	rec.Ok(ms(34), poll, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: []history.Record{{Offset: 0, Value: "aa"}, {Offset: 1, Value: "bbbb"}}}}})
	empty := rec.InvokePoll(ms(40), 2, "")
	rec.Ok(ms(540), empty, history.Result{})
	events := []sim.Event{
		{Time: sim.Time(ms(5)), Node: "p1", Data: client.BatchSent{TP: proto.TP{Topic: "t"}, Records: 2, Attempt: 1, Bytes: 200, Raw: 80}},
		{Time: sim.Time(ms(6)), Node: "p2", Data: client.BatchSent{TP: proto.TP{Topic: "t"}, Records: 1, Attempt: 2, Bytes: 100, Raw: 40}},
		{Time: sim.Time(ms(7)), Node: "b1", Data: broker.Appended{TP: proto.TP{Topic: "t"}, From: "p1", Bytes: 90}},
		{Time: sim.Time(ms(8)), Node: "b1", Data: broker.Appended{TP: proto.TP{Topic: "t"}, Coordinator: true, Bytes: 50}},
	}
	m := Measure(events, rec.History(), Scope{To: sim.Time(ms(1000))})
	want := Throughput{To: sim.Time(ms(1000)),
		Acked: 2, AckedBytes: 7, Failed: 1, SendSpan: 21 * time.Millisecond,
		ProduceLatency: Percentiles{N: 2, P50: 10 * time.Millisecond, P99: 20 * time.Millisecond, Max: 20 * time.Millisecond},
		Batches:        2, BatchRecords: 3, WireBytes: 300, RawBytes: 120, Retries: 1, StoredBytes: 90,
		Partitions: []PartitionThroughput{{TP: proto.TP{Topic: "t"}, Acked: 2, Bytes: 7, SendSpan: 21 * time.Millisecond, WireBytes: 300,
			ProduceLatency: Percentiles{N: 2, P50: 10 * time.Millisecond, P99: 20 * time.Millisecond, Max: 20 * time.Millisecond}}},
		Read: 2, ReadBytes: 7, ReadSpan: 4 * time.Millisecond,
		EndToEnd: Percentiles{N: 2, P50: 33 * time.Millisecond, P99: 34 * time.Millisecond, Max: 34 * time.Millisecond},
		Fetch:    Percentiles{N: 1, P50: 4 * time.Millisecond, P99: 4 * time.Millisecond, Max: 4 * time.Millisecond},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("measure:\n got %+v\nwant %+v", m, want)
	}
	// A window after the sends, and one producer's batches only.
	m = Measure(events, rec.History(), Scope{From: sim.Time(ms(25)), To: sim.Time(ms(1000)), Producers: []string{"p2"}})
	if m.Acked != 0 || m.Batches != 0 || m.Read != 2 {
		t.Errorf("window from 25ms: acked %d batches %d read %d, want 0, 0, 2", m.Acked, m.Batches, m.Read)
	}
	m = Measure(events, rec.History(), Scope{To: sim.Time(ms(1000)), Producers: []string{"p2"}, ConsumerProcesses: []int{}})
	if m.Batches != 1 || m.WireBytes != 100 || m.Read != 0 {
		t.Errorf("p2 only: batches %d, wire %dB, read %d; want 1, 100B, 0", m.Batches, m.WireBytes, m.Read)
	}
}
