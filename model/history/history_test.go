package history

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

var (
	t0 = TopicPartition{Topic: "t", Partition: 0}
	t1 = TopicPartition{Topic: "t", Partition: 1}
)

// everyKind records one op of every function and completion type, so the
// round trip covers every field of the format.
func everyKind() History {
	r := NewRecorder()
	s := r.InvokeSend(10, 1, t0, "k1", "v1")
	acks0 := r.InvokeSend(11, 1, t1, "", "v2")
	r.Ok(20, s, Result{Offset: 0})
	r.Ok(21, acks0, Result{Offset: NoOffset})
	failed := r.InvokeSend(22, 1, t0, "k1", "v3")
	r.Fail(23, failed, Result{Error: "INVALID_TOPIC"})
	unknown := r.InvokeSend(24, 1, t0, "k1", "v4")
	r.Info(25, unknown, Result{Error: "timeout"})
	sub := r.InvokeSubscribe(30, 2, "g", []string{"t"})
	r.Ok(31, sub, Result{Partitions: []TopicPartition{t0, t1}})
	as := r.InvokeAssign(32, 3, "", []TopicPartition{t0}, true)
	r.Ok(33, as, Result{})
	none := r.InvokeAssign(34, 3, "", nil, false)
	r.Ok(35, none, Result{})
	p := r.InvokePoll(40, 2, "g")
	r.Ok(41, p, Result{Reads: []PartitionRecords{
		{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "v1"}, {Offset: 1, Value: `quote " and \ back`}}},
		{TopicPartition: t1}, // polled, nothing there
	}})
	ip := r.InvokePoll(42, 2, "g")
	r.Info(43, ip, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 2, Value: "v4"}}}}})
	c := r.InvokeCommit(50, 2, "g", []PartitionOffset{{TopicPartition: t0, Offset: 2}})
	r.Ok(51, c, Result{})
	rc := r.InvokeReadCommittedPoll(52, 5, "g")
	r.Ok(53, rc, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "v1"}}}}})
	tx := r.InvokeTxn(54, 6, "T1")
	r.Ok(55, tx, Result{TxnOps: []MicroOp{
		{F: Poll, Poll: &PollValue{Group: "g", ReadCommitted: true, Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "v1"}}}}}},
		{F: Send, Send: &SendValue{TopicPartition: t1, Key: "k", Value: "v1", Offset: 5}},
		{F: Send, Send: &SendValue{TopicPartition: t1, Value: "v9", Offset: NoOffset}},
		{F: Poll, Poll: &PollValue{Group: "g"}},
	}, TxnOffsets: &CommitValue{Group: "g", Offsets: []PartitionOffset{{TopicPartition: t0, Offset: 1}}}})
	aborted := r.InvokeTxn(56, 6, "T1")
	r.Fail(57, aborted, Result{TxnOps: []MicroOp{{F: Send, Send: &SendValue{TopicPartition: t1, Value: "v5", Offset: 6}}},
		TxnOffsets: &CommitValue{}, Error: "aborted"})
	empty := r.InvokeTxn(58, 6, "T1")
	r.Info(59, empty, Result{})
	r.InvokeTxn(59, 7, "T2")
	seek := r.InvokeSeek(59, 2, "g", []PartitionOffset{{TopicPartition: t0, Offset: NoOffset}}, false)
	r.Ok(59, seek, Result{SeekOffsets: []PartitionOffset{{TopicPartition: t0, Offset: 0}}})
	reset := r.InvokeSeek(59, 8, "g", []PartitionOffset{{TopicPartition: t0, Offset: 1}}, true)
	r.Ok(59, reset, Result{})
	sp := r.InvokeSharePoll(59, 9, "sg")
	r.Ok(59, sp, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "v1", DeliveryCount: 1}, {Offset: 2, Value: "v4", DeliveryCount: 3}}}}})
	ack := r.InvokeAck(59, 9, "sg", t0, []RecordAck{{Offset: 0, Type: AckAccept}, {Offset: 2, Type: AckReject}})
	r.Ok(59, ack, Result{})
	refused := r.InvokeAck(59, 9, "sg", t0, []RecordAck{{Offset: 1, Type: AckRelease}})
	r.Fail(59, refused, Result{Error: "INVALID_RECORD_STATE"})
	r.InvokeAck(59, 9, "sg", t1, []RecordAck{{Offset: 5, Type: AckAccept}}) // never completes
	r.InvokePoll(60, 4, "")                                                 // never completes: the run ended
	return r.History()
}

func TestRoundTrip(t *testing.T) {
	h := everyKind()
	if err := h.Validate(); err != nil {
		t.Fatalf("recorder built an invalid history: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, h); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSONLines(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip changed the history:\nwant %+v\ngot  %+v", h, got)
	}
	var again bytes.Buffer
	if err := WriteJSONLines(&again, got); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Fatalf("re-encoding differs:\n%s\n%s", buf.String(), again.String())
	}
}

// The package documentation's example must stay exactly what the encoder
// writes.
func TestDocExample(t *testing.T) {
	doc := `{"index":0,"time":1000,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"key":"k","value":"v1"}}
{"index":1,"time":2500,"process":1,"type":"ok","f":"send","invoke":0,"value":{"topic":"t","partition":0,"key":"k","value":"v1","offset":0}}
{"index":2,"time":3000,"process":2,"type":"invoke","f":"poll","value":{"group":"g"}}
{"index":3,"time":3100,"process":2,"type":"ok","f":"poll","invoke":2,"value":{"group":"g","reads":[{"topic":"t","partition":0,"records":[[0,"v1"]]}]}}
`
	r := NewRecorder()
	s := r.InvokeSend(1000, 1, t0, "k", "v1")
	r.Ok(2500, s, Result{Offset: 0})
	p := r.InvokePoll(3000, 2, "g")
	r.Ok(3100, p, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "v1"}}}}})
	var buf bytes.Buffer
	if err := WriteJSONLines(&buf, r.History()); err != nil {
		t.Fatal(err)
	}
	if buf.String() != doc {
		t.Fatalf("encoder output differs from the documented example:\n%s", buf.String())
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tt := range decodeErrorCases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJSONLines(strings.NewReader(tt.input))
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("got error %v, want a *DecodeError", err)
			}
			if de.Line != tt.line || !strings.Contains(de.Reason, tt.want) {
				t.Fatalf("got %q, want line %d containing %q", err, tt.line, tt.want)
			}
		})
	}
}

func TestRecorderPanicsOnMisuse(t *testing.T) {
	tests := []struct {
		name string
		do   func(r *Recorder)
		want string
	}{
		{"complete twice", func(r *Recorder) {
			h := r.InvokePoll(1, 1, "")
			r.Ok(2, h, Result{})
			r.Ok(3, h, Result{})
		}, "not an open invocation"},
		{"time goes back", func(r *Recorder) {
			h := r.InvokePoll(5, 1, "")
			r.Ok(4, h, Result{})
		}, "before the last recorded time"},
		{"offset on a fail send", func(r *Recorder) {
			h := r.InvokeSend(1, 1, t0, "", "a")
			r.Fail(2, h, Result{Offset: 3})
		}, "only ok sends learn offsets"},
		{"reads on a send", func(r *Recorder) {
			h := r.InvokeSend(1, 1, t0, "", "a")
			r.Ok(2, h, Result{Reads: []PartitionRecords{{TopicPartition: t0}}})
		}, "reads given for a send"},
		{"negative read offset", func(r *Recorder) {
			h := r.InvokePoll(1, 1, "")
			r.Ok(2, h, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: -3, Value: "a"}}}}})
		}, "negative offset"},
		{"delivery count on a plain poll", func(r *Recorder) {
			h := r.InvokePoll(1, 1, "g")
			r.Ok(2, h, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "a", DeliveryCount: 1}}}}})
		}, "only a share poll's records carry one"},
		{"share poll without delivery count", func(r *Recorder) {
			h := r.InvokeSharePoll(1, 1, "sg")
			r.Ok(2, h, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "a"}}}}})
		}, "with delivery count 0; want 1 or more"},
		{"share poll without group", func(r *Recorder) { r.InvokeSharePoll(1, 1, "") }, "a share poll names no group"},
		{"ack of nothing", func(r *Recorder) { r.InvokeAck(1, 1, "sg", t0, nil) }, "acknowledges no record"},
		{"ack of unknown type", func(r *Recorder) {
			r.InvokeAck(1, 1, "sg", t0, []RecordAck{{Offset: 0, Type: "renew"}})
		}, `has type "renew"; want "accept", "release" or "reject"`},
		{"ack with reads", func(r *Recorder) {
			h := r.InvokeAck(1, 1, "sg", t0, []RecordAck{{Offset: 0, Type: AckAccept}})
			r.Ok(2, h, Result{Reads: []PartitionRecords{{TopicPartition: t0}}})
		}, "reads given for a ack"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tt.want) {
					t.Fatalf("panic %q, want one containing %q", msg, tt.want)
				}
			}()
			tt.do(NewRecorder())
		})
	}
}

// The recorder copies what it is given: clients reuse their buffers.
func TestRecorderCopiesInputs(t *testing.T) {
	r := NewRecorder()
	recs := []Record{{Offset: 0, Value: "a"}}
	h := r.InvokePoll(1, 1, "g")
	r.Ok(2, h, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: recs}}})
	recs[0].Value = "changed"
	if got := r.History()[1].Poll.Reads[0].Records[0].Value; got != "a" {
		t.Fatalf("recorded value changed with the caller's buffer: %q", got)
	}
	if r.Open(h) {
		t.Fatal("completed handle still open")
	}
}

func TestCovers(t *testing.T) {
	sub := AssignValue{Topics: []string{"t"}}
	assigned := AssignValue{Topics: []string{"t"}, Partitions: []TopicPartition{t1}}
	other := TopicPartition{Topic: "u", Partition: 0}
	for _, c := range []struct {
		a    AssignValue
		tp   TopicPartition
		want bool
	}{{sub, t0, true}, {sub, other, false}, {assigned, t1, true}, {assigned, t0, false}} {
		if got := c.a.Covers(c.tp); got != c.want {
			t.Errorf("%+v covers %s = %v, want %v", c.a, c.tp, got, c.want)
		}
	}
}

const (
	inv  = `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":"a"}}`
	ok   = `{"index":1,"time":2,"process":1,"type":"ok","f":"send","invoke":0,"value":{"topic":"t","partition":0,"value":"a","offset":0}}`
	poll = `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{}}`
)

// txn is a txn invocation and an ok completion whose micro-ops are ops.
func txn(ops string) string {
	return `{"index":0,"time":1,"process":1,"type":"invoke","f":"txn","value":{"txn":"T1"}}` + "\n" +
		`{"index":1,"time":2,"process":1,"type":"ok","f":"txn","invoke":0,"value":{"txn":"T1","ops":[` + ops + `]}}`
}

var decodeErrorCases = []struct {
	name, input string
	line        int
	want        string // substring of the error
}{
	{"not json", "{", 1, "expected a JSON object"},
	{"seek without offsets", `{"index":0,"time":1,"process":1,"type":"invoke","f":"seek","value":{"group":"g"}}`, 1,
		`missing or null field "offsets" (expected a list of committed offsets) of a seek`},
	{"ok seek with unknown offset", `{"index":0,"time":1,"process":1,"type":"invoke","f":"seek","value":{"offsets":[{"topic":"t","partition":0,"offset":-1}]}}
{"index":1,"time":1,"process":1,"type":"ok","f":"seek","invoke":0,"value":{"offsets":[{"topic":"t","partition":0,"offset":-1}]}}`, 2,
		"seek of t-0 to offset -1; want an offset >= 0"},
	{"seek completion moves a known offset", `{"index":0,"time":1,"process":1,"type":"invoke","f":"seek","value":{"offsets":[{"topic":"t","partition":0,"offset":3}]}}
{"index":1,"time":1,"process":1,"type":"ok","f":"seek","invoke":0,"value":{"offsets":[{"topic":"t","partition":0,"offset":4}]}}`, 2,
		"completion's seek value differs from its invocation 0"},
	{"reset without group", `{"index":0,"time":1,"process":1,"type":"invoke","f":"seek","value":{"offsets":[],"reset":true}}`, 1,
		"a seek with reset names no group"},
	{"reset on a poll", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"reset":true}}`, 1,
		`field "reset" does not belong to a poll`},
	{"bad type", `{"index":0,"time":1,"process":1,"type":"okay","f":"send","value":{}}`, 1,
		`field "type": expected "invoke", "ok", "fail" or "info", got "okay"`},
	{"bad f", `{"index":0,"time":1,"process":1,"type":"invoke","f":"read","value":{}}`, 1, `field "f": expected "send"`},
	{"missing time", `{"index":0,"process":1,"type":"invoke","f":"poll","value":{}}`, 1, `missing or null field "time"`},
	{"float time", `{"index":0,"time":1.5,"process":1,"type":"invoke","f":"poll","value":{}}`, 1,
		`field "time": expected an integer (virtual nanoseconds), got number 1.5`},
	{"unknown field", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{},"node":3}`, 1,
		`unknown field "node"`},
	{"invoke on invocation", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","invoke":0,"value":{}}`, 1,
		`field "invoke": not expected on an invocation`},
	{"completion without invoke", inv + "\n" + `{"index":1,"time":2,"process":1,"type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"a"}}`,
		2, `missing or null field "invoke"`},
	{"missing value", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll"}`, 1, `missing or null field "value"`},
	{"send without topic", `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"partition":0,"value":"a"}}`, 1,
		`field "value": missing or null field "topic" (expected a topic name) of a send`},
	{"null value string", `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":null}}`, 1,
		`field "value": missing or null field "value" (expected a string) of a send`},
	{"number as value string", `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":3}}`, 1,
		`field "value.value": expected a string, got number`},
	{"wrong field for f", `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":"a","reads":[]}}`, 1,
		`field "value": field "reads" does not belong to a send, expected only topic, partition, value, key, offset`},
	{"partition not a number", `{"index":0,"time":1,"process":1,"type":"invoke","f":"assign","value":{"partitions":[{"topic":"t","partition":"0"}]}}`, 1,
		`field "value.partitions.partition": expected a partition number, got string`},
	{"trailing data", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{}} {}`, 1,
		"expected one JSON object, found more after it"},
	{"bad record", poll + "\n" + `{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"reads":[{"topic":"t","partition":0,"records":[[0,"a"],["1","b"]]}]}}`,
		2, `field "records": expected an [offset, value] pair such as [7,"v"], got ["1","b"]`},
	{"blank lines count", "\n\n" + inv + "\n\n" + strings.Replace(ok, `"index":1`, `"index":5`, 1), 5,
		"index is 5, expected its position 1"},
	{"time goes back", inv + "\n" + strings.Replace(ok, `"time":2`, `"time":0`, 1), 2, "before the previous op's time"},
	{"completes nothing", strings.Replace(ok, `"index":1`, `"index":0`, 1), 1, "invoke 0 does not name an earlier op"},
	{"completed twice", inv + "\n" + ok + "\n" + strings.Replace(ok, `"index":1,"time":2`, `"index":2,"time":3`, 1), 3,
		"invocation 0 is completed twice"},
	{"other process", inv + "\n" + strings.Replace(ok, `"process":1`, `"process":2`, 1), 2, "process 2 completes invocation 0 of process 1"},
	{"value differs", inv + "\n" + strings.Replace(ok, `"value":"a"`, `"value":"b"`, 1), 2, "differs from its invocation 0"},
	{"offset on info", inv + "\n" + strings.Replace(ok, `"type":"ok"`, `"type":"info"`, 1), 2,
		"a info send carries offset 0; only ok completions learn an offset"},
	{"unknown system", `{"system":"stream"}` + "\n" + inv, 1, `field "system": expected "log" or "queue", got "stream"`},
	{"null system", `{"system":null}`, 1, `field "system": expected "log" or "queue", got null`},
	{"system not a string", `{"system":1}`, 1, `field "system": expected "log" or "queue", got number`},
	{"system beside op fields", strings.Replace(inv, `"index":0,`, `"index":0,"system":"log",`, 1), 1,
		`field "system" belongs on a header line of its own`},
	{"header after an op", inv + "\n\n" + `{"system":"queue"}`, 3, "a header line after the first op (line 1)"},
	{"two headers", `{"system":"queue"}` + "\n" + `{"system":"queue"}` + "\n" + inv, 2, "a second header line (the first is line 1)"},
	{"unknown header field", `{"system":"log","version":2}`, 1, `unknown field "version"`},
	{"txn micro-op neither send nor poll", txn(`{"f":"commit","offsets":[]}`), 2,
		`field "value.ops[0]": expected "f": "send" or "poll", got "commit"`},
	{"txn micro-op without f", txn(`{"topic":"t","partition":0,"value":"a"}`), 2,
		`field "value.ops[0]": expected "f": "send" or "poll"`},
	{"txn micro-op unknown field", txn(`{"f":"send","topic":"t","partition":0,"value":"a","retries":1}`), 2,
		`unknown field "value.ops.retries"`},
	{"txn micro-op field of the other function", txn(`{"f":"send","topic":"t","partition":0,"value":"a","reads":[]}`), 2,
		`field "value.ops[0]": expected a send micro-op: field "reads" does not belong to a send`},
	{"txn micro-op wrong type", txn(`{"f":"send","topic":"t","partition":0,"value":7}`), 2,
		`field "value.ops.value": expected a string, got number`},
	{"txn micro-op missing field", txn(`{"f":"send","topic":"t","value":"a"}`), 2,
		`missing or null field "partition" (expected a partition number) of a send`},
	{"txn micro-op nests ops", txn(`{"f":"poll","ops":[]}`), 2, `a micro-op holds no micro-ops`},
	{"txn micro-op not an object", txn(`["send","t",0,"a"]`), 2, `field "value.ops[0]": expected a micro-op object such as {"f":"poll"}, got ["send","t",0,"a"]`},
	{"txn without id", `{"index":0,"time":1,"process":1,"type":"invoke","f":"txn","value":{}}`, 1,
		`field "value": missing or null field "txn" (expected a transactional id) of a txn`},
	{"txn ops on invocation", `{"index":0,"time":1,"process":1,"type":"invoke","f":"txn","value":{"txn":"T1","ops":[]}}` + "\n" +
		`{"index":1,"time":1,"process":1,"type":"invoke","f":"txn","value":{"txn":"T1","ops":[{"f":"poll"}]}}`, 2,
		"a txn invocation carries micro-ops or offsets"},
	{"txn commit without offsets", `{"index":0,"time":1,"process":1,"type":"invoke","f":"txn","value":{"txn":"T1","commit":{"group":"g"}}}`, 1,
		`field "value.commit": expected "offsets"`},
	{"txn commit unknown field", `{"index":0,"time":1,"process":1,"type":"invoke","f":"txn","value":{"txn":"T1","commit":{"offsets":[],"epoch":3}}}`, 1,
		`unknown field "value.commit.epoch"`},
	{"read_committed not a bool", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"read_committed":"yes"}}`, 1,
		`field "value.read_committed": expected true or false, got string`},
	{"read_committed on a send", `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":"a","read_committed":true}}`, 1,
		`field "read_committed" does not belong to a send`},
	{"read_committed differs", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"read_committed":true}}` + "\n" +
		`{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{}}`, 2, "differs from its invocation 0"},
	{"ack without acks", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"group":"g","topic":"t","partition":0}}`, 1,
		`field "value": missing or null field "acks" (expected a list of [offset, type] pairs such as [7,"accept"]) of a ack`},
	{"ack without group", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"topic":"t","partition":0,"acks":[[0,"accept"]]}}`, 1,
		`missing or null field "group"`},
	{"ack pair malformed", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"group":"g","topic":"t","partition":0,"acks":[[0,1]]}}`, 1,
		`field "acks": expected an [offset, type] pair such as [7,"accept"], got [0,1]`},
	{"ack object not pair", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"group":"g","topic":"t","partition":0,"acks":[{"offset":0,"type":"accept"}]}}`, 1,
		`field "acks": expected an [offset, type] pair`},
	{"ack of unknown type", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"group":"g","topic":"t","partition":0,"acks":[[0,"renew"]]}}`, 1,
		`ack of offset 0 has type "renew"`},
	{"ack offset twice", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"group":"g","topic":"t","partition":0,"acks":[[0,"accept"],[0,"reject"]]}}`, 1,
		`ack lists offset 0 of t-0 twice`},
	{"acks on a poll", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"acks":[]}}`, 1,
		`field "acks" does not belong to a poll`},
	{"share on a send", `{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":0,"value":"a","share":true}}`, 1,
		`field "share" does not belong to a send`},
	{"share not a bool", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"group":"g","share":1}}`, 1,
		`field "value.share": expected true or false, got number`},
	{"ack completion differs", `{"index":0,"time":1,"process":1,"type":"invoke","f":"ack","value":{"group":"g","topic":"t","partition":0,"acks":[[0,"accept"]]}}` + "\n" +
		`{"index":1,"time":2,"process":1,"type":"ok","f":"ack","invoke":0,"value":{"group":"g","topic":"t","partition":0,"acks":[[0,"reject"]]}}`, 2,
		"completion's ack value differs from its invocation 0"},
	{"share flag differs", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"group":"g","share":true}}` + "\n" +
		`{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"group":"g"}}`, 2, "differs from its invocation 0"},
	{"delivery count on a plain poll", poll + "\n" + `{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"reads":[{"topic":"t","partition":0,"records":[[0,"a",1]]}]}}`,
		2, "poll read offset 0 from t-0 with delivery count 1; only a share poll's records carry one"},
	{"share record without count", `{"index":0,"time":1,"process":1,"type":"invoke","f":"poll","value":{"group":"g","share":true}}` + "\n" +
		`{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"group":"g","share":true,"reads":[{"topic":"t","partition":0,"records":[[0,"a"]]}]}}`,
		2, "share poll read offset 0 from t-0 with delivery count 0; want 1 or more"},
	{"record with four elements", poll + "\n" + `{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"reads":[{"topic":"t","partition":0,"records":[[0,"a",1,2]]}]}}`,
		2, `field "records": expected an [offset, value] pair such as [7,"v"], got [0,"a",1,2]`},
	{"share poll in a txn", txn(`{"f":"poll","group":"g","share":true}`), 2, "txn micro-op 0 is a share poll"},
	{"partition twice", poll + "\n" + `{"index":1,"time":2,"process":1,"type":"ok","f":"poll","invoke":0,"value":{"reads":[{"topic":"t","partition":0,"records":[]},{"topic":"t","partition":0,"records":[]}]}}`,
		2, "poll lists partition t-0 twice"},
}

// A file's header line names its system; it survives a round trip, and a
// file without one reads as NoSystem.
func TestFileHeaderRoundTrip(t *testing.T) {
	for _, sys := range []System{NoSystem, LogSystem, QueueSystem} {
		var b strings.Builder
		if err := WriteFile(&b, File{System: sys, Ops: everyKind()}); err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(b.String(), "\n"); (sys != NoSystem) != (first == `{"system":"`+string(sys)+`"}`) {
			t.Fatalf("%q: first line %s", sys, first)
		}
		f, err := ReadFile(strings.NewReader("\n" + b.String()))
		if err != nil || f.System != sys || !reflect.DeepEqual(f.Ops, everyKind()) {
			t.Fatalf("%q: read back %q, %v", sys, f.System, err)
		}
	}
	if err := WriteFile(io.Discard, File{System: "stream"}); err == nil || !strings.Contains(err.Error(), `system "stream"`) {
		t.Fatalf("writing an unknown system: %v", err)
	}
	f, err := ReadFile(strings.NewReader(`{"system":"queue"}` + "\n"))
	if err != nil || f.System != QueueSystem || len(f.Ops) != 0 {
		t.Fatalf("a header alone: %+v, %v", f, err)
	}
	var op Op
	if err := op.UnmarshalJSON([]byte(`{"system":"log"}`)); err == nil || !strings.Contains(err.Error(), "header line") {
		t.Fatalf("Op.UnmarshalJSON of a header: %v", err)
	}
}
