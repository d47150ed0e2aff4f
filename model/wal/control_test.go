package wal

import (
	"strings"
	"testing"
)

func TestMarkerRoundTrip(t *testing.T) {
	for _, m := range []Marker{{Type: ControlCommit, CoordinatorEpoch: 7}, {Type: ControlAbort, CoordinatorEpoch: 0}, {Type: ControlAbort, CoordinatorEpoch: -1}} {
		b := MarkerBatch(42, 3, m)
		if !b.IsControl() || !b.IsTransactional() || b.ProducerID != 42 || b.ProducerEpoch != 3 || b.BaseSequence != NoSequence {
			t.Fatalf("MarkerBatch(42, 3, %v) = %+v", m, b)
		}
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		// Through the encoding too: a marker survives the log.
		enc, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := DecodeBatch(enc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := BatchMarker(&got)
		if err != nil || back != m {
			t.Fatalf("BatchMarker = %v, %v; want %v", back, err, m)
		}
	}
	if k := EncodeMarker(Marker{Type: ControlCommit, CoordinatorEpoch: 5}); string(k.Key) != "\x00\x00\x00\x01" || string(k.Value) != "\x00\x00\x00\x00\x00\x05" {
		t.Fatalf("layout: key %q value %q", k.Key, k.Value)
	}
}

func TestMalformedMarkerIsAnError(t *testing.T) {
	good := EncodeMarker(Marker{Type: ControlCommit, CoordinatorEpoch: 1})
	cases := map[string]Record{
		"key has 2 bytes":        {Key: good.Key[:2], Value: good.Value},
		"key version 1":          {Key: []byte{0, 1, 0, 1}, Value: good.Value},
		"control record type 5":  {Key: []byte{0, 0, 0, 5}, Value: good.Value},
		"value has 0 bytes":      {Key: good.Key},
		"marker value version 2": {Key: good.Key, Value: []byte{0, 2, 0, 0, 0, 1}},
	}
	for want, r := range cases {
		if _, err := DecodeMarker(r); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeMarker(%q/%q) = %v, want an error saying %q", r.Key, r.Value, err, want)
		}
	}
	data := Batch{ProducerID: 1, Flags: FlagTransactional, Records: []Record{good}}
	if _, err := BatchMarker(&data); err == nil {
		t.Error("BatchMarker of a data batch: no error")
	}
	two := MarkerBatch(1, 0, Marker{})
	two.Records = append(two.Records, good)
	if _, err := BatchMarker(&two); err == nil || !strings.Contains(err.Error(), "has 2 records") {
		t.Errorf("BatchMarker of a two-record control batch: %v", err)
	}
}
