package checker

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/model/history"
)

// correctLog generates histories from a correct in-memory log: producers
// send (ok, info that applied, info that did not, fail), consumers of group
// "g" own one partition each, poll contiguous runs (ok, info, fail) and
// commit their position; some sends stay pending at the end. Every client
// has at most one op in flight, and each op takes effect at its own step
// between invocation and completion, so ops overlap. At the end the
// consumers drain their partitions and a fresh consumer of group "final"
// reads everything. t-0 always starts with three acknowledged values, so
// every mutation below has a place to land.
type correctLog struct {
	t    *rapid.T
	r    *history.Recorder
	now  int64
	tps  []history.TopicPartition
	logs [][]string
	sent int
}

type client struct {
	proc     int
	consumer bool
	part     int   // a consumer's partition
	pos      int64 // a consumer's next offset
	op       *inflight
}

type inflight struct {
	h       history.Handle
	f       history.Func
	part    int
	value   string
	applied bool
	outcome history.Type // decided when the op takes effect
	offset  int64
	reads   []history.Record
}

func (g *correctLog) tick() int64 {
	g.now += int64(rapid.IntRange(0, 5).Draw(g.t, "dt"))
	return g.now
}

func genHistory(t *rapid.T) history.History {
	g := &correctLog{t: t, r: history.NewRecorder(), tps: []history.TopicPartition{t0, t1}, logs: make([][]string, 2)}
	producers := rapid.IntRange(1, 3).Draw(t, "producers")
	var clients []*client
	for i := range producers {
		clients = append(clients, &client{proc: 1 + i})
	}
	for part, tp := range g.tps {
		c := &client{proc: 100 + part, consumer: true, part: part}
		a := g.r.InvokeAssign(g.tick(), c.proc, "g", []history.TopicPartition{tp}, false)
		g.r.Ok(g.tick(), a, history.Result{})
		clients = append(clients, c)
	}
	for range 3 {
		op := g.invoke(clients[0], 0)
		op.outcome = history.Ok
		g.finish(clients[0], op)
	}
	for range rapid.IntRange(0, 100).Draw(t, "steps") {
		g.step(clients[rapid.IntRange(0, len(clients)-1).Draw(t, "client")])
	}
	for _, c := range clients {
		if c.op != nil && (c.consumer || !rapid.Bool().Draw(t, "leave pending")) {
			g.finish(c, c.op)
		}
		for c.consumer && c.pos < int64(len(g.logs[c.part])) {
			p := g.r.InvokePoll(g.tick(), c.proc, "g")
			g.r.Ok(g.tick(), p, history.Result{Reads: []history.PartitionRecords{rd(g.tps[c.part], g.run(c.part, c.pos, len(g.logs[c.part]))...)}})
			c.pos = int64(len(g.logs[c.part]))
		}
	}
	a := g.r.InvokeAssign(g.tick(), 999, "final", g.tps, true)
	g.r.Ok(g.tick(), a, history.Result{})
	p := g.r.InvokePoll(g.tick(), 999, "final")
	var reads []history.PartitionRecords
	for part, tp := range g.tps {
		reads = append(reads, rd(tp, g.run(part, 0, len(g.logs[part]))...))
	}
	g.r.Ok(g.tick(), p, history.Result{Reads: reads})
	return g.r.History()
}

// run returns records [from, to) of a partition's log.
func (g *correctLog) run(part int, from int64, to int) []history.Record {
	var out []history.Record
	for o := from; o < int64(to); o++ {
		out = append(out, at(o, g.logs[part][o]))
	}
	return out
}

// step moves a client one step: invoke, take effect, or complete.
func (g *correctLog) step(c *client) {
	switch {
	case c.op == nil:
		c.op = g.invoke(c, rapid.IntRange(0, len(g.tps)-1).Draw(g.t, "partition"))
	case !c.op.applied:
		g.apply(c, c.op)
	default:
		g.complete(c, c.op)
	}
}

func (g *correctLog) invoke(c *client, part int) *inflight {
	switch {
	case !c.consumer:
		g.sent++
		v := fmt.Sprintf("v%d", g.sent)
		return &inflight{h: g.r.InvokeSend(g.tick(), c.proc, g.tps[part], "", v), f: history.Send, part: part, value: v}
	case rapid.IntRange(0, 3).Draw(g.t, "commit?") == 0:
		offsets := []history.PartitionOffset{{TopicPartition: g.tps[c.part], Offset: c.pos}}
		return &inflight{h: g.r.InvokeCommit(g.tick(), c.proc, "g", offsets), f: history.Commit, applied: true,
			outcome: g.outcome("commit outcome", 8, 2, 0)}
	}
	return &inflight{h: g.r.InvokePoll(g.tick(), c.proc, "g"), f: history.Poll, part: c.part}
}

// outcome draws ok, info or fail with the given weights.
func (g *correctLog) outcome(label string, ok, info, fail int) history.Type {
	n := rapid.IntRange(0, ok+info+fail-1).Draw(g.t, label)
	switch {
	case n < ok:
		return history.Ok
	case n < ok+info:
		return history.Info
	}
	return history.Fail
}

func (g *correctLog) apply(c *client, op *inflight) {
	op.applied = true
	switch op.f {
	case history.Send:
		if op.outcome == "" { // not forced
			op.outcome = g.outcome("send outcome", 7, 2, 1)
		}
		if op.outcome == history.Fail || (op.outcome == history.Info && rapid.Bool().Draw(g.t, "info lost")) {
			return // not in the log
		}
		op.offset = int64(len(g.logs[op.part]))
		g.logs[op.part] = append(g.logs[op.part], op.value)
	case history.Poll:
		n := rapid.IntRange(0, 3).Draw(g.t, "records")
		op.reads = g.run(c.part, c.pos, min(len(g.logs[c.part]), int(c.pos)+n))
		op.outcome = g.outcome("poll outcome", 7, 2, 1)
	}
}

func (g *correctLog) complete(c *client, op *inflight) {
	res := history.Result{}
	switch {
	case op.f == history.Send && op.outcome == history.Ok:
		res.Offset = op.offset
	case op.f == history.Poll && op.outcome != history.Fail:
		res.Reads = []history.PartitionRecords{rd(g.tps[op.part], op.reads...)}
		if op.outcome == history.Ok {
			c.pos += int64(len(op.reads)) // info and fail polls roll back: read again
		}
	}
	switch op.outcome {
	case history.Ok:
		g.r.Ok(g.tick(), op.h, res)
	case history.Info:
		g.r.Info(g.tick(), op.h, res)
	default:
		g.r.Fail(g.tick(), op.h, res)
	}
	c.op = nil
}

func (g *correctLog) finish(c *client, op *inflight) {
	c.op = op
	if !op.applied {
		g.apply(c, op)
	}
	g.complete(c, op)
}

// checkAll runs every checker; generated histories are small, so the
// linearizability budget is generous and an Unknown is a test failure.
func checkAll(t *rapid.T, h history.History) Report {
	r, err := Check(h, Options{Promise: ExactlyOnce, Linearizability: &LinearizabilityOptions{Budget: 20 * time.Second}})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if r.Result == Unknown {
		t.Fatalf("linearizability check ran out of budget:\n%s", r)
	}
	return r
}

func TestPropertyCorrectLogHasNoViolation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		if r := checkAll(t, h); r.Result != Valid {
			t.Fatalf("a correct log was judged %s:\n%s", r.Result, r)
		}
	})
}

// mutation plants one fault in a correct history and names the anomaly
// the queue checker must then report on t-0.
type mutation struct {
	name    string
	anomaly Anomaly
	apply   func(t *rapid.T, h history.History) (values []string)
}

var mutations = []mutation{
	{"drop a read value", LostWrite, func(t *rapid.T, h history.History) []string {
		v := pickAcked(t, h, true)
		for i := range h {
			if h[i].F == history.Poll {
				for j := range h[i].Poll.Reads {
					pr := &h[i].Poll.Reads[j]
					pr.Records = slices.DeleteFunc(pr.Records, func(r history.Record) bool { return pr.TopicPartition == t0 && r.Value == v })
				}
			}
		}
		return []string{v}
	}},
	{"duplicate a value at a second offset", Duplicate, func(t *rapid.T, h history.History) []string {
		final := finalRead(h)
		v := rapid.SampledFrom(final.Records).Draw(t, "duplicated").Value
		final.Records = append(final.Records, at(int64(len(final.Records)), v))
		return []string{v}
	}},
	{"reorder two records of a poll", IntNonmonotonicPoll, func(t *rapid.T, h history.History) []string {
		final := finalRead(h)
		i := rapid.IntRange(0, len(final.Records)-2).Draw(t, "swap at")
		final.Records[i], final.Records[i+1] = final.Records[i+1], final.Records[i]
		return []string{final.Records[i].Value, final.Records[i+1].Value}
	}},
	{"fail a send that was read", G1a, func(t *rapid.T, h history.History) []string {
		v := pickAcked(t, h, false)
		for i := range h {
			if s := h[i].Send; s != nil && h[i].Type == history.Ok && s.TopicPartition == t0 && s.Value == v {
				h[i].Type, s.Offset = history.Fail, history.NoOffset
			}
		}
		return []string{v}
	}},
}

func TestPropertyPlantedMutationIsFound(t *testing.T) {
	for _, m := range mutations {
		t.Run(m.name, rapid.MakeCheck(func(t *rapid.T) {
			h := cloneHistory(genHistory(t))
			values := m.apply(t, h)
			r := checkAll(t, h)
			found := slices.ContainsFunc(r.Violations, func(v Violation) bool {
				return v.Anomaly == m.anomaly && v.TopicPartition == t0 && slices.Equal(v.Values, values)
			})
			if !found {
				t.Fatalf("planted %s on %v, want %s:\n%s", m.name, values, m.anomaly, r)
			}
			if !hasAnomaly(r, Nonlinearizable, t0) {
				t.Fatalf("planted %s, but t-0 still linearizable:\n%s", m.name, r)
			}
			if again := checkAll(t, h); !reflect.DeepEqual(again, r) {
				t.Fatalf("the same history gave two reports:\n%s\n%s", r, again)
			}
		}))
	}
}

// pickAcked picks an acknowledged value of t-0. inner keeps to offsets
// strictly inside the log: a later read then proves the value's loss, and
// an earlier one makes the final poll's run non-contiguous (a poll that
// merely starts later is legal, so dropping offset 0 would be
// linearizable).
func pickAcked(t *rapid.T, h history.History, inner bool) string {
	final := finalRead(h)
	var candidates []string
	for _, op := range h {
		if s := op.Send; s != nil && op.Type == history.Ok && s.TopicPartition == t0 &&
			(!inner || (s.Offset > 0 && s.Offset < int64(len(final.Records))-1)) {
			candidates = append(candidates, s.Value)
		}
	}
	return rapid.SampledFrom(candidates).Draw(t, "value")
}

// finalRead is the final consumer's read of t-0 (the last op).
func finalRead(h history.History) *history.PartitionRecords {
	return &h[len(h)-1].Poll.Reads[0]
}

// cloneHistory deep-copies what mutations touch: send and poll values.
func cloneHistory(h history.History) history.History {
	out := slices.Clone(h)
	for i := range out {
		if s := out[i].Send; s != nil {
			c := *s
			out[i].Send = &c
		}
		if p := out[i].Poll; p != nil {
			c := *p
			c.Reads = slices.Clone(p.Reads)
			for j := range c.Reads {
				c.Reads[j].Records = slices.Clone(c.Reads[j].Records)
			}
			out[i].Poll = &c
		}
	}
	return out
}
