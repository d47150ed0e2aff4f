package checker

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"mqsim/model/history"
)

func reportHistory() history.History {
	b := newBuilder()
	for i, v := range []string{"a", "b", "c"} {
		b.ok(1, t0, v, int64(i))
	}
	b.poll(2, "g", history.Ok, rd(t0, at(0, "a")))
	b.poll(2, "g", history.Ok, rd(t0, at(2, "c")))
	return b.history()
}

// The text form is stable: golden tests and teaching transcripts print it.
func TestReportText(t *testing.T) {
	r, err := Check(reportHistory(), Options{Log: LogOptions{Allow: []Anomaly{PollSkip}}, Promise: AtLeastOnce})
	if err != nil {
		t.Fatal(err)
	}
	const want = `result: invalid (2 violations, 1 allowed)
violation delivery undelivered t-0 group g at t=30ns: 1 acknowledged value never read by the group: "b"
violation log lost-write t-0 at t=30ns: acknowledged value "b" at offset 1 (index 1, middle) was never read by an ok poll, yet op 9 read "c" at index 2
allowed log poll-skip t-0 at t=70ns: read "c" at offset 2 though the process's previous ok poll (op 7) ended at "a", offset 0 (index 0 to 2): skipped 1 value: "b"
delivery group g: 3 acknowledged values read 0 times: 1, once: 2, more: 0; this run: none read more than once, some missed
note log: t-0: acknowledged values never read by an ok poll, by place in the write order: prefix 0, middle 1 (lost-write), suffix 0, unplaced 0
counts: lost-write 1, poll-skip 1, undelivered 1
`
	if got := r.String(); got != want {
		t.Fatalf("text report changed:\n%s\nwant:\n%s", got, want)
	}
}

func TestReportJSON(t *testing.T) {
	r, err := Check(reportHistory(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("JSON round trip changed the report:\n%s", buf.String())
	}
	var raw map[string]any
	json.Unmarshal(buf.Bytes(), &raw)
	v := raw["violations"].([]any)[0].(map[string]any)
	for _, field := range []string{"checker", "anomaly", "topic", "partition", "offsets", "values", "ops", "time", "text"} {
		if _, ok := v[field]; !ok {
			t.Errorf("violation JSON lacks %q: %v", field, v)
		}
	}
}

// Merging is order-independent: reports sort themselves.
func TestMergeIsDeterministic(t *testing.T) {
	h := reportHistory()
	q, _ := CheckLog(h, LogOptions{})
	d, _ := CheckDelivery(h, ExactlyOnce)
	l, _ := CheckLinearizable(h, LinearizabilityOptions{})
	if a, b := Merge(q, d, l), Merge(l, d, q); !reflect.DeepEqual(a, b) {
		t.Fatalf("merge depends on order:\n%s\n%s", a, b)
	}
	unknown := Report{Result: Unknown}
	if got := Merge(Report{}, unknown).Result; got != Unknown {
		t.Fatalf("valid + unknown = %s, want unknown", got)
	}
	if got := Merge(q, unknown).Result; got != Invalid {
		t.Fatalf("invalid + unknown = %s, want invalid", got)
	}
}
