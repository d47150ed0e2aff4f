package client

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The consumer's side of tags, and of what a fetch brings beyond its records.
//
// A tag filter (proto.ConsumerPatterns.Tags) runs where FilterAt says. At the broker, the
// consumer sends its tags with every fetch and the leader returns only the records with one
// of them (RocketMQ's subscription expression); at the client, the consumer fetches every
// record and drops the others itself, as a Kafka consumer must. Either way offsets move on
// past what was left out, and the history shows only what the application got; the bytes
// fetched (PatternStats) show the difference.
//
// A leader may leave records out of a consumer's fetch for its own reasons too (scheduled
// entries of delayed messages); its SkippedTo moves the position past them.

// SetTags is the scenario's command to a Consumer: filter by these tags from now on (none:
// no filter), at the broker or at the client.
type SetTags struct {
	Tags []string
	At   string
}

func (s SetTags) String() string {
	return fmt.Sprintf("tags (%s) at the %s", strings.Join(s.Tags, ","), s.At)
}

// PatternStats are a consumer's counters for the delivery patterns, for views.
type PatternStats struct {
	FetchedBytes   int64 // encoded size of the batches its fetches brought
	FetchedRecords int   // records in them
	Filtered       int   // records the client-side tag filter dropped
	Failures       int   // processing attempts that failed
	InPlace        int   // of which retried in place (blocking)
	Retried        int   // records sent on to a retry topic
	DeadLettered   int   // records sent to the dead-letter topic
	Dropped        int   // records given up on without a dead-letter topic
}

// consumerPatterns is a consumer's state for the delivery patterns.
type consumerPatterns struct {
	stats  PatternStats
	paused []pausedPart // retry-topic partitions waiting for their next record's due time
	waited []waitedAt   // the records already reported as waiting, one per partition
	polls  int64        // numbers the polls that process records, for retry.go's timers
}

type pausedPart struct {
	tp    proto.TP
	until sim.Time
}

type waitedAt struct {
	tp     proto.TP
	offset int64
}

// skipMark is where a fetch says the position may move once its records are consumed.
type skipMark struct {
	tp    proto.TP
	to    int64
	epoch int32
}

// PatternStats returns the consumer's pattern counters.
func (c *Consumer) PatternStats() PatternStats { return c.pat.stats }

// Patterns returns the consumer's pattern settings.
func (c *Consumer) Patterns() proto.ConsumerPatterns { return c.cfg.Patterns }

func (c *Consumer) setTags(env *sim.Env, m SetTags) {
	c.cfg.Patterns.Tags = slices.Clone(m.Tags)
	c.cfg.Patterns.FilterAt = m.At
	if env.Tracing() {
		at, _ := c.cfg.Patterns.Filtering()
		sim.Record(env, TagFilter{Tags: slices.Clone(m.Tags), At: at})
	}
}

// brokerTags are the tags a fetch asks the leader to filter by.
func (c *Consumer) brokerTags() []string {
	if at, ok := c.cfg.Patterns.Filtering(); ok && at == proto.FilterAtBroker {
		return c.cfg.Patterns.Tags
	}
	return nil
}

func fetchedHeader(f *fetched, key string) (string, bool) {
	for _, h := range f.headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// shapeFetched counts what a fetch brought, applies the client-side tag filter, holds back
// retry-topic records that are not due yet (retry.go), and notes how far the position may
// skip. It returns the records the poll may hand to the application.
func (c *Consumer) shapeFetched(env *sim.Env, r *consumerReq, m proto.FetchResponse, got []fetched) []fetched {
	st := &c.pat.stats
	for i := range m.Batches {
		st.FetchedBytes += int64(m.Batches[i].EncodedSize())
		st.FetchedRecords += len(m.Batches[i].Records)
	}
	op := c.poll
	var skip *skipMark
	if m.SkippedTo > 0 {
		skip = &skipMark{tp: r.tp, to: m.SkippedTo, epoch: m.SkippedEpoch}
	}
	if at, ok := c.cfg.Patterns.Filtering(); ok && at == proto.FilterAtClient && len(got) > 0 {
		kept := got[:0:0]
		for i := range got {
			v, _ := fetchedHeader(&got[i], proto.HeaderTags)
			if proto.MatchTags(c.cfg.Patterns.Tags, proto.ParseTags(v)) {
				kept = append(kept, got[i])
			}
		}
		if dropped := len(got) - len(kept); dropped > 0 {
			st.Filtered += dropped
			last := got[len(got)-1]
			if skip == nil || skip.to < last.offset+1 {
				skip = &skipMark{tp: r.tp, to: last.offset + 1, epoch: last.epoch}
			}
		}
		got = kept
	}
	if held, due := c.holdBack(env, r.tp, got); held < len(got) {
		got = got[:held]
		skip = nil // the position must stop at the first record held back
		c.pause(r.tp, due)
	}
	if skip != nil {
		op.pat.skip = append(op.pat.skip, *skip)
	}
	return got
}

// skipFiltered moves a partition's position past what its fetch left out, once the poll
// handed over every record the fetch brought for it.
func (c *Consumer) skipFiltered(tp proto.TP, p *position) {
	op := c.poll
	i := slices.IndexFunc(op.pat.skip, func(s skipMark) bool { return s.tp == tp })
	if i < 0 {
		return
	}
	got := op.got[tp]
	if len(got) > 0 && p.offset <= got[len(got)-1].offset {
		return // max.poll.records cut the poll short: the next fetch reads the rest again
	}
	if s := op.pat.skip[i]; s.to > p.offset {
		p.offset, p.epoch = s.to, s.epoch
	}
}

// held reports whether a partition waits for its next record's due time: its fetches wait.
func (c *Consumer) held(env *sim.Env, tp proto.TP) bool {
	i := slices.IndexFunc(c.pat.paused, func(p pausedPart) bool { return p.tp == tp })
	if i < 0 {
		return false
	}
	if c.pat.paused[i].until > env.Now() {
		return true
	}
	c.pat.paused = slices.Delete(c.pat.paused, i, i+1)
	return false
}

func (c *Consumer) pause(tp proto.TP, until sim.Time) {
	i := slices.IndexFunc(c.pat.paused, func(p pausedPart) bool { return p.tp == tp })
	if i < 0 {
		c.pat.paused = append(c.pat.paused, pausedPart{tp: tp, until: until})
		return
	}
	c.pat.paused[i].until = until
}
