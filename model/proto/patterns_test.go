package proto

import (
	"testing"
	"time"
)

func TestParsePoisonRule(t *testing.T) {
	for _, c := range []struct {
		in   string
		want PoisonRule
		err  bool
	}{
		{in: "v3", want: PoisonRule{Value: "v3"}},
		{in: "v5:2", want: PoisonRule{Value: "v5", Failures: 2}},
		{in: "key=bad*", want: PoisonRule{KeyPattern: "bad*"}},
		{in: "key=k?:1", want: PoisonRule{KeyPattern: "k?", Failures: 1}},
		{in: "v5:0", err: true},
		{in: "v5:x", err: true},
		{in: "key=", err: true},
		{in: "key=[", err: true},
		{in: ":1", err: true},
	} {
		got, err := ParsePoisonRule(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParsePoisonRule(%q) = %+v, %v; want %+v, error %t", c.in, got, err, c.want, c.err)
		}
		if !c.err && got.String() != c.in {
			t.Errorf("%q renders back as %q", c.in, got.String())
		}
	}
}

func TestPoisonFails(t *testing.T) {
	p := ConsumerPatterns{Poison: []PoisonRule{{Value: "v3"}, {Value: "v5", Failures: 2}, {KeyPattern: "bad*"}}}
	for _, c := range []struct {
		key, value string
		attempt    int
		want       bool
	}{
		{"", "v3", 1, true}, {"", "v3", 99, true},
		{"", "v5", 1, true}, {"", "v5", 2, true}, {"", "v5", 3, false},
		{"bad-1", "x", 1, true}, {"good", "x", 1, false}, {"", "v4", 1, false},
	} {
		if got := p.Fails(c.key, c.value, c.attempt); got != c.want {
			t.Errorf("Fails(%q, %q, %d) = %t, want %t", c.key, c.value, c.attempt, got, c.want)
		}
	}
	if (ConsumerPatterns{}).Fails("", "v3", 1) {
		t.Error("no poison rules, yet a failure")
	}
}

func TestRetryStageAndTopics(t *testing.T) {
	for _, c := range []struct {
		topic, base string
		stage       int
	}{
		{"t", "t", 0}, {"t.retry.1", "t", 1}, {"orders.retry.12", "orders", 12},
		{"t.retry.x", "t.retry.x", 0}, {"t.retry.0", "t.retry.0", 0}, {".retry.1", ".retry.1", 0}, {"t.dlq", "t.dlq", 0},
	} {
		if base, stage := RetryStage(c.topic); base != c.base || stage != c.stage {
			t.Errorf("RetryStage(%q) = %q, %d; want %q, %d", c.topic, base, stage, c.base, c.stage)
		}
	}
	if RetryTopic("t", 2) != "t.retry.2" || DeadLetterTopic("t") != "t.dlq" {
		t.Error("topic names")
	}
}

func TestMatchTags(t *testing.T) {
	for _, c := range []struct {
		filter, tags []string
		want         bool
	}{
		{nil, nil, true}, {nil, []string{"a"}, true},
		{[]string{"a"}, nil, false}, {[]string{"a"}, []string{"b", "a"}, true}, {[]string{"a", "c"}, []string{"b"}, false},
	} {
		if got := MatchTags(c.filter, c.tags); got != c.want {
			t.Errorf("MatchTags(%v, %v) = %t", c.filter, c.tags, got)
		}
	}
	if got := ParseTags("a,b"); len(got) != 2 || got[1] != "b" || ParseTags("") != nil {
		t.Errorf("ParseTags: %v", got)
	}
}

func TestPatternsValidate(t *testing.T) {
	bad := []ConsumerPatterns{
		{RetryDelays: []time.Duration{time.Second, 0}},
		{Tags: []string{"a"}, FilterAt: "proxy"},
		{Tags: []string{"a,b"}},
	}
	for _, p := range bad {
		if p.Validate() == nil {
			t.Errorf("%+v validates", p)
		}
	}
	cfg := DefaultConfig()
	cfg.Broker.RetentionCheckInterval = 0
	if cfg.Validate() == nil {
		t.Error("a zero retention check interval validates")
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
