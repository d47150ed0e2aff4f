package checker

import (
	"slices"
	"strings"
	"testing"

	"mqsim/model/history"
)

var (
	t0 = history.TopicPartition{Topic: "t", Partition: 0}
	t1 = history.TopicPartition{Topic: "t", Partition: 1}
	u0 = history.TopicPartition{Topic: "u", Partition: 0}
)

// builder writes hand-made histories: each call records a whole operation
// (invocation and completion) 10ns after the previous one, so operations
// are sequential unless a test uses the recorder directly.
type builder struct {
	r   *history.Recorder
	now int64
}

func newBuilder() *builder { return &builder{r: history.NewRecorder()} }

func (b *builder) tick() int64 {
	b.now += 10
	return b.now
}

func (b *builder) history() history.History { return b.r.History() }

// send records a send completing with typ; offset matters for ok only.
func (b *builder) send(proc int, tp history.TopicPartition, value string, typ history.Type, offset int64) {
	h := b.r.InvokeSend(b.tick(), proc, tp, "", value)
	b.complete(h, typ, history.Result{Offset: offset})
}

// ok is an acknowledged send at offset.
func (b *builder) ok(proc int, tp history.TopicPartition, value string, offset int64) {
	b.send(proc, tp, value, history.Ok, offset)
}

// poll records a poll completing with typ and the given reads.
func (b *builder) poll(proc int, group string, typ history.Type, reads ...history.PartitionRecords) {
	h := b.r.InvokePoll(b.tick(), proc, group)
	b.complete(h, typ, history.Result{Reads: reads})
}

// read is an ok poll of one partition by a group-less consumer.
func (b *builder) read(proc int, tp history.TopicPartition, recs ...history.Record) {
	b.poll(proc, "", history.Ok, rd(tp, recs...))
}

func (b *builder) commit(proc int, group string, tp history.TopicPartition, offset int64) {
	h := b.r.InvokeCommit(b.tick(), proc, group, []history.PartitionOffset{{TopicPartition: tp, Offset: offset}})
	b.r.Ok(b.tick(), h, history.Result{})
}

func (b *builder) assign(proc int, typ history.Type, seek bool, tps ...history.TopicPartition) {
	h := b.r.InvokeAssign(b.tick(), proc, "", tps, seek)
	b.complete(h, typ, history.Result{})
}

func (b *builder) complete(h history.Handle, typ history.Type, res history.Result) {
	switch typ {
	case history.Ok:
		b.r.Ok(b.tick(), h, res)
	case history.Fail:
		res.Offset = 0
		b.r.Fail(b.tick(), h, res)
	case history.Info:
		res.Offset = 0
		b.r.Info(b.tick(), h, res)
	}
}

func at(offset int64, value string) history.Record {
	return history.Record{Offset: offset, Value: value}
}

func rd(tp history.TopicPartition, recs ...history.Record) history.PartitionRecords {
	return history.PartitionRecords{TopicPartition: tp, Records: recs}
}

// want describes one expected finding; zero fields are not compared.
type want struct {
	anomaly Anomaly
	tp      history.TopicPartition
	group   string
	offsets []int64
	values  []string
	where   string
}

func (w want) matches(v Violation) bool {
	return v.Anomaly == w.anomaly && v.TopicPartition == w.tp && v.Group == w.group &&
		(w.offsets == nil || slices.Equal(v.Offsets, w.offsets)) &&
		(w.values == nil || slices.Equal(v.Values, w.values)) &&
		(w.where == "" || v.Where == w.where)
}

// expectExactly fails unless found holds exactly one match per want, and
// nothing else.
func expectExactly(t *testing.T, found []Violation, wants []want) {
	t.Helper()
	left := slices.Clone(found)
	for _, w := range wants {
		i := slices.IndexFunc(left, w.matches)
		if i < 0 {
			t.Errorf("missing %s on %s offsets %v values %v where %q", w.anomaly, w.tp, w.offsets, w.values, w.where)
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	for _, v := range left {
		t.Errorf("unexpected finding: %s", v.line())
	}
}

// hasAnomaly reports whether r has a violation of anomaly on tp.
func hasAnomaly(r Report, anomaly Anomaly, tp history.TopicPartition) bool {
	return slices.ContainsFunc(r.Violations, func(v Violation) bool { return v.Anomaly == anomaly && v.TopicPartition == tp })
}

func noteContaining(r Report, s string) bool {
	return slices.ContainsFunc(r.Notes, func(n Note) bool { return strings.Contains(n.Text, s) })
}
