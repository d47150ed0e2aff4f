package client

import (
	"slices"
	"testing"
	"time"

	"mqsim/model/proto"
	"mqsim/model/wal"
)

// The retry policy walks a failed record through the retry topics, then to the DLQ (or
// drops it): attempts are bounded by 1 + the number of retry topics.
func TestNextStage(t *testing.T) {
	p := proto.ConsumerPatterns{RetryDelays: []time.Duration{time.Second, 5 * time.Second}, DeadLetter: true}
	for _, c := range []struct {
		from, next string
		delay      time.Duration
		dlq, drop  bool
	}{
		{"t", "t.retry.1", time.Second, false, false},
		{"t.retry.1", "t.retry.2", 5 * time.Second, false, false},
		{"t.retry.2", "t.dlq", 0, true, false},
	} {
		next, delay, dlq, drop := NextStage(p, c.from)
		if next != c.next || delay != c.delay || dlq != c.dlq || drop != c.drop {
			t.Errorf("from %s: %s %s dlq=%t drop=%t", c.from, next, delay, dlq, drop)
		}
	}
	p.DeadLetter = false
	if _, _, _, drop := NextStage(p, "t.retry.2"); !drop {
		t.Error("without a DLQ, the last failure should drop the record")
	}
	if next, _, dlq, _ := NextStage(proto.ConsumerPatterns{DeadLetter: true}, "t"); next != "t.dlq" || !dlq {
		t.Errorf("DLQ only: %s", next)
	}
}

func TestWithRetryTopics(t *testing.T) {
	c := &Consumer{}
	if got := c.withRetryTopics([]string{"t"}); !slices.Equal(got, []string{"t"}) {
		t.Errorf("no policy: %v", got)
	}
	c.cfg.Patterns = proto.ConsumerPatterns{RetryDelays: []time.Duration{time.Second, time.Minute}, DeadLetter: true}
	got := c.withRetryTopics([]string{"a", "b", "a.retry.1"})
	if want := []string{"a", "b", "a.retry.1", "a.retry.2", "b.retry.1", "b.retry.2"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A republished record keeps its tags, counts its attempts, remembers where it came from
// and, for a retry topic, when it is due.
func TestRetryHeaders(t *testing.T) {
	pr := procRecord{tp: proto.TP{Topic: "t.retry.1"}, f: fetched{offset: 4, value: "v3", headers: []wal.Header{
		{Key: proto.HeaderRetryAttempt, Value: []byte("1")}, {Key: proto.HeaderRetryDue, Value: []byte("5")},
		{Key: proto.HeaderRetryOrigin, Value: []byte("t/0@2")}, {Key: proto.HeaderTags, Value: []byte("red")}}}}
	hs := retryHeaders(pr, 2, false, 99)
	want := map[string]string{proto.HeaderTags: "red", proto.HeaderRetryAttempt: "2", proto.HeaderRetryOrigin: "t/0@2", proto.HeaderRetryDue: "99"}
	if len(hs) != len(want) {
		t.Fatalf("headers %v", hs)
	}
	for i, h := range hs {
		if want[h.Key] != string(h.Value) {
			t.Errorf("%s=%s, want %s", h.Key, h.Value, want[h.Key])
		}
		if i > 0 && hs[i-1].Key > h.Key {
			t.Errorf("headers not sorted: %v", hs)
		}
	}
	dl := retryHeaders(procRecord{tp: proto.TP{Topic: "t"}, f: fetched{offset: 7}}, 1, true, 0)
	for _, h := range dl {
		if h.Key == proto.HeaderRetryDue {
			t.Error("a dead letter has no due time")
		}
		if h.Key == proto.HeaderRetryOrigin && string(h.Value) != "t/0@7" {
			t.Errorf("origin %s", h.Value)
		}
	}
}
