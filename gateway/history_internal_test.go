package gateway

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/history"
	"mqsim/model/wal"
)

// A fetch's records as the client keeps them: from the fetch offset on, no control
// record, and under read_committed none of an aborted transaction.
func TestFetchedRecordsAsTheClientKeepsThem(t *testing.T) {
	var raw []byte
	for _, b := range []wal.Batch{
		{BaseOffset: 0, ProducerID: 7, Flags: wal.FlagTransactional, Records: []wal.Record{{Value: []byte("t0")}, {Value: []byte("t1")}}},
		{BaseOffset: 2, ProducerID: 7, Flags: wal.FlagTransactional | wal.FlagControl, Records: []wal.Record{{Value: []byte("abort")}}},
		{BaseOffset: 3, ProducerID: -1, Records: []wal.Record{{Value: []byte("p3")}, {Value: []byte("p4")}}},
	} {
		raw = appendBatch(raw, b)
	}
	aborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7, FirstOffset: 0}}
	rec := func(o int64, v string) history.Record { return history.Record{Offset: o, Value: v} }
	for _, c := range []struct {
		name    string
		from    int64
		aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
		want    []history.Record
	}{
		{"read_uncommitted", 0, nil, []history.Record{rec(0, "t0"), rec(1, "t1"), rec(3, "p3"), rec(4, "p4")}},
		{"read_committed", 0, aborted, []history.Record{rec(3, "p3"), rec(4, "p4")}},
		{"from offset 1", 1, nil, []history.Record{rec(1, "t1"), rec(3, "p3"), rec(4, "p4")}},
		{"from offset 4", 4, aborted, []history.Record{rec(4, "p4")}},
		{"truncated bytes", 0, nil, []history.Record{rec(0, "t0"), rec(1, "t1")}},
	} {
		in := raw
		if c.name == "truncated bytes" {
			in = raw[:len(raw)-5] // the last batch cut short: the client cannot read it either
		}
		if got := fetchedRecords(in, c.from, c.aborted); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// produceCall is a Produce request on connection conn with one batch per partition of
// topic t, its values in order.
func produceCall(id int64, conn int, acks int16, batches map[int32][]string) *call {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = acks
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	for p := int32(0); p < 4; p++ {
		vs, ok := batches[p]
		if !ok {
			continue
		}
		b := wal.Batch{ProducerID: -1}
		for _, v := range vs {
			b.Records = append(b.Records, wal.Record{Value: []byte(v)})
		}
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition, rp.Records = p, appendBatch(nil, b)
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return &call{id: id, req: Request{Conn: conn, Header: Header{ClientID: "app"}, Req: req}}
}

func produceResponse(parts map[int32][2]int64) *kmsg.ProduceResponse {
	resp := kmsg.NewPtrProduceResponse()
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = "t"
	for p := int32(0); p < 4; p++ {
		if a, ok := parts[p]; ok {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.BaseOffset = p, int16(a[0]), a[1]
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	resp.Topics = append(resp.Topics, rt)
	return resp
}

// Each outcome on the wire becomes the history's: ok with the record's offset, fail on a
// definite error, info on an ambiguous one or no answer, ok without offset for acks=0;
// a poll counts for the group its client joined, and a partition listed twice is read once.
func TestWireHistoryOutcomes(t *testing.T) {
	rec := history.NewRecorder()
	procs := 0
	h := newWireHistory(rec, func() int { procs++; return procs })

	c1 := produceCall(1, 1, -1, map[int32][]string{0: {"a", "b"}, 1: {"c"}})
	h.request(10, c1)
	h.answered(20, c1, produceResponse(map[int32][2]int64{0: {0, 5}, 1: {6, -1}})) // 6: NOT_LEADER_FOR_PARTITION
	c2 := produceCall(2, 1, -1, map[int32][]string{2: {"d"}})
	h.request(30, c2)
	h.answered(40, c2, produceResponse(map[int32][2]int64{2: {7, -1}})) // 7: REQUEST_TIMED_OUT
	c3 := produceCall(3, 1, -1, map[int32][]string{3: {"e"}})
	h.request(50, c3)
	h.unanswered(60, c3)
	c4 := produceCall(4, 1, 0, map[int32][]string{0: {"f"}})
	h.request(70, c4)
	h.answered(70, c4, nil)

	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = "g"
	h.request(80, &call{id: 5, req: Request{Conn: 2, Header: Header{ClientID: "app"}, Req: join}})
	fetch := kmsg.NewPtrFetchRequest()
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	ft.Partitions = append(ft.Partitions, fp, fp) // partition 0, twice
	fetch.Topics = append(fetch.Topics, ft)
	resp := kmsg.NewPtrFetchResponse()
	rt := kmsg.NewFetchResponseTopic()
	rt.Topic = "t"
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.RecordBatches = appendBatch(nil, wal.Batch{BaseOffset: 5, ProducerID: -1, Records: []wal.Record{{Value: []byte("a")}, {Value: []byte("b")}}})
	rt.Partitions = append(rt.Partitions, rp, rp)
	resp.Topics = append(resp.Topics, rt)
	fc := &call{id: 6, req: Request{Conn: 3, Header: Header{ClientID: "app"}, Req: fetch}}
	h.request(90, fc)
	h.answered(100, fc, resp)

	type outcome struct {
		typ    history.Type
		f      history.Func
		value  string
		offset int64
		group  string
		proc   int
	}
	var got []outcome
	for _, op := range rec.History() {
		if op.Type == history.Invoke {
			continue
		}
		o := outcome{typ: op.Type, f: op.F, proc: op.Process}
		switch op.F {
		case history.Send:
			o.value, o.offset = op.Send.Value, op.Send.Offset
		case history.Poll:
			o.group = op.Poll.Group
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					o.value += r.Value
				}
			}
		}
		got = append(got, o)
	}
	want := []outcome{
		{history.Ok, history.Send, "a", 5, "", 1},
		{history.Ok, history.Send, "b", 6, "", 1},
		{history.Fail, history.Send, "c", -1, "", 1},
		{history.Info, history.Send, "d", -1, "", 1},
		{history.Info, history.Send, "e", -1, "", 1},
		{history.Ok, history.Send, "f", -1, "", 1},
		{history.Ok, history.Poll, "ab", 0, "g", 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("completions:\n got %+v\nwant %+v", got, want)
	}
	if err := rec.History().Validate(); err != nil {
		t.Fatal(err)
	}
}
