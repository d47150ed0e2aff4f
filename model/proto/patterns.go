package proto

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/model/wal"
)

// Delivery patterns on top of the log: delayed (scheduled) messages, record tags and their
// filters, consumer-side retries through retry topics and a dead-letter topic, and the
// settings they need. What travels with a record travels as record headers, so that the
// log alone says what a record is and a new leader can rebuild its state from it.

// Record header keys mqsim gives a meaning to.

// TombstoneLabel is the name a tombstone carries in its HeaderTombstone header, and
// whether rec is a tombstone that carries one.
func TombstoneLabel(rec *wal.Record) (string, bool) {
	key, value, headers := rec.Key, rec.Value, rec.Headers
	if key == nil || value != nil {
		return "", false
	}
	for _, h := range headers {
		if h.Key == HeaderTombstone {
			return string(h.Value), true
		}
	}
	return "", false
}

const (
	// HeaderTags holds a record's tags, comma-separated ("a,b"): what a tag filter matches.
	HeaderTags = "tags"
	// HeaderTombstone names a tombstone (a record with a key and a nil value, which a
	// compacted log keeps for delete.retention.ms and then removes with its key): the value
	// mqsim's checkers follow it by, since the record itself has none.
	HeaderTombstone = "tombstone"
	// HeaderDeliverAt marks a scheduled entry: the virtual time (decimal nanoseconds) at
	// which the leader releases the record to its partition. Consumers never see the entry.
	HeaderDeliverAt = "delay.deliver-at"
	// HeaderDelayCancel marks a cancellation: the offset (decimal) of the scheduled entry it
	// cancels. Consumers never see it.
	HeaderDelayCancel = "delay.cancel"
	// HeaderDelayedFrom marks a released record: the offset (decimal) of its scheduled entry.
	HeaderDelayedFrom = "delay.from"
	// HeaderRetryAttempt is how many times the application has tried the record before
	// (1 after the first failure).
	HeaderRetryAttempt = "retry.attempt"
	// HeaderRetryDue is when (virtual nanoseconds) a record of a retry topic may be
	// processed: the retry consumer waits until then.
	HeaderRetryDue = "retry.due"
	// HeaderRetryOrigin is where the record first was: "t/0@3".
	HeaderRetryOrigin = "retry.origin"
)

// DelayNotPending answers a cancellation of a delayed message that is not waiting any more
// (released, cancelled, or never scheduled).
const DelayNotPending Error = "DELAY_NOT_PENDING"

// DefaultRetentionCheckInterval is log.retention.check.interval.ms (5 minutes).
const DefaultRetentionCheckInterval = 5 * time.Minute

// Tag filter placements.
const (
	// FilterAtBroker: the consumer sends its tags with each fetch and the leader returns
	// only matching records (RocketMQ's tag filter): fewer bytes on the wire.
	FilterAtBroker = "broker"
	// FilterAtClient: the consumer fetches everything and drops what does not match (what a
	// Kafka consumer has to do).
	FilterAtClient = "client"
)

// PoisonRule names records whose processing fails: by value, or by a key pattern
// (path.Match syntax, e.g. "bad*"). Failures is how many attempts fail before one
// succeeds; 0 means every attempt fails (a poison message, not a transient error).
type PoisonRule struct {
	Value      string
	KeyPattern string
	Failures   int
}

func (p PoisonRule) String() string {
	s := p.Value
	if p.KeyPattern != "" {
		s = "key=" + p.KeyPattern
	}
	if p.Failures > 0 {
		s += ":" + strconv.Itoa(p.Failures)
	}
	return s
}

// ParsePoisonRule reads "v3" (value v3 always fails), "v3:2" (its first two attempts fail),
// "key=bad*" (records whose key matches), "key=bad*:1".
func ParsePoisonRule(s string) (PoisonRule, error) {
	var r PoisonRule
	body := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 {
			return r, fmt.Errorf("poison %q: after ':' want how many attempts fail (1 or more)", s)
		}
		r.Failures, body = n, s[:i]
	}
	if k, ok := strings.CutPrefix(body, "key="); ok {
		if _, err := path.Match(k, ""); err != nil || k == "" {
			return r, fmt.Errorf("poison %q: bad key pattern", s)
		}
		r.KeyPattern = k
	} else {
		r.Value = body
	}
	if r.Value == "" && r.KeyPattern == "" {
		return r, fmt.Errorf("poison %q: name a value or key=PATTERN", s)
	}
	return r, nil
}

// ConsumerPatterns are a consumer's delivery-pattern settings. The zero value changes
// nothing: no failures, no retry topics, no filter.
type ConsumerPatterns struct {
	// Poison lists the records whose processing fails.
	Poison []PoisonRule
	// RetryDelays are the delays of the retry topics T.retry.1, T.retry.2, ...: a record
	// whose processing fails goes to the next one, to be tried again after its delay,
	// while the partition it came from carries on (non-blocking retries).
	RetryDelays []time.Duration
	// DeadLetter sends a record that failed every attempt to T.dlq; without it the record
	// is dropped (logged). Without retry delays and dead letters, a failure is retried in
	// place, blocking the consumer (the poison-pill problem).
	DeadLetter bool
	// Tags is the tag filter: only records with one of these tags are delivered. Empty:
	// every record.
	Tags []string
	// FilterAt is where the filter runs: FilterAtBroker or FilterAtClient ("" is broker).
	FilterAt string
}

// NonBlocking reports whether failed records leave the partition (retry topics or a DLQ).
func (p ConsumerPatterns) NonBlocking() bool { return len(p.RetryDelays) > 0 || p.DeadLetter }

// Fails reports whether processing the record fails at this attempt (1 for the first).
func (p ConsumerPatterns) Fails(key, value string, attempt int) bool {
	for _, r := range p.Poison {
		hit := r.Value != "" && r.Value == value
		if r.KeyPattern != "" {
			ok, _ := path.Match(r.KeyPattern, key)
			hit = hit || ok
		}
		if hit && (r.Failures == 0 || attempt <= r.Failures) {
			return true
		}
	}
	return false
}

// Filtering reports whether the consumer filters by tag, and where.
func (p ConsumerPatterns) Filtering() (string, bool) {
	if len(p.Tags) == 0 {
		return "", false
	}
	if p.FilterAt == "" {
		return FilterAtBroker, true
	}
	return p.FilterAt, true
}

// Validate reports what is wrong with the settings.
func (p ConsumerPatterns) Validate() error {
	var errs []error
	for i, d := range p.RetryDelays {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("retry-delays: delay %d is %s: want a positive duration", i+1, d))
		}
	}
	switch p.FilterAt {
	case "", FilterAtBroker, FilterAtClient:
	default:
		errs = append(errs, fmt.Errorf("tag-filter=%s: want broker or client", p.FilterAt))
	}
	for _, t := range p.Tags {
		if t == "" || strings.Contains(t, ",") {
			errs = append(errs, fmt.Errorf("tags: %q is not a tag", t))
		}
	}
	return errors.Join(errs...)
}

// String renders the settings that are set, for a scenario's output; "" if none.
func (p ConsumerPatterns) String() string {
	var s []string
	if len(p.Poison) > 0 {
		var rs []string
		for _, r := range p.Poison {
			rs = append(rs, r.String())
		}
		s = append(s, "poison=("+strings.Join(rs, ",")+")")
	}
	if len(p.RetryDelays) > 0 {
		var ds []string
		for _, d := range p.RetryDelays {
			ds = append(ds, d.String())
		}
		s = append(s, "retry-delays=("+strings.Join(ds, ",")+")")
	}
	if p.DeadLetter {
		s = append(s, "dlq=true")
	}
	if at, ok := p.Filtering(); ok {
		s = append(s, fmt.Sprintf("tags=(%s) filtered at the %s", strings.Join(p.Tags, ","), at))
	}
	return strings.Join(s, " ")
}

// RetryTopic is the k-th retry topic of base (from 1): "t.retry.2".
func RetryTopic(base string, k int) string { return fmt.Sprintf("%s.retry.%d", base, k) }

// DeadLetterTopic is base's dead-letter topic: "t.dlq".
func DeadLetterTopic(base string) string { return base + ".dlq" }

// RetryStage splits a topic name into the topic it retries and its stage: "t.retry.2" is
// ("t", 2), "t" is ("t", 0).
func RetryStage(topic string) (base string, stage int) {
	i := strings.LastIndex(topic, ".retry.")
	if i <= 0 {
		return topic, 0
	}
	k, err := strconv.Atoi(topic[i+len(".retry."):])
	if err != nil || k < 1 {
		return topic, 0
	}
	return topic[:i], k
}

// ParseTags reads a HeaderTags value.
func ParseTags(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// MatchTags reports whether a record with tags passes a filter: the filter is empty, or
// the record has one of its tags. A record without tags passes only an empty filter.
func MatchTags(filter, tags []string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, t := range tags {
		if slices.Contains(filter, t) {
			return true
		}
	}
	return false
}

// validatePatterns checks the pattern settings of a cluster configuration.
func (c Config) validatePatterns() error {
	var errs []error
	if c.Broker.RetentionCheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("log.retention.check.interval.ms=%s: must be positive", c.Broker.RetentionCheckInterval))
	}
	if err := c.Consumer.Patterns.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
