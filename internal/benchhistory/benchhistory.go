// Package benchhistory builds the large, valid histories the benchmarks
// time, so the same history can be written to a file (cmd/genhistory) and
// remeasured from the command line.
package benchhistory

import (
	"fmt"
	"math/rand/v2"

	"mqsim/model/history"
)

// Build deterministically builds a busy, healthy run of n operations
// (2n history entries): 8 producers sending to the given partitions,
// one group consumer per partition polling runs of up to 8 records and
// committing now and then, a few indeterminate and failed ops, every client
// with one op in flight at a time and clients interleaved.
func Build(n, partitions int) history.History {
	const producers = 8
	rng := rand.New(rand.NewPCG(1, 2))
	r := history.NewRecorder()
	var now int64
	tick := func() int64 { now += 1 + rng.Int64N(100); return now }
	tps := make([]history.TopicPartition, partitions)
	logs := make([][]string, partitions)
	pos := make([]int64, partitions)
	for i := range tps {
		tps[i] = history.TopicPartition{Topic: "t", Partition: int32(i)}
	}
	type pending struct {
		h     history.Handle
		send  bool
		part  int
		value string
	}
	open := make([]*pending, producers+partitions) // one slot per client
	sent := 0
	complete := func(p *pending) {
		switch {
		case p.send && rng.IntN(50) == 0:
			r.Info(tick(), p.h, history.Result{Error: "timeout"}) // lost
		case p.send:
			logs[p.part] = append(logs[p.part], p.value)
			r.Ok(tick(), p.h, history.Result{Offset: int64(len(logs[p.part]) - 1)})
		default:
			end := min(len(logs[p.part]), int(pos[p.part])+1+rng.IntN(8))
			var recs []history.Record
			for o := pos[p.part]; o < int64(end); o++ {
				recs = append(recs, history.Record{Offset: o, Value: logs[p.part][o]})
			}
			pos[p.part] = int64(end)
			r.Ok(tick(), p.h, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tps[p.part], Records: recs}}})
		}
	}
	for ops := 0; ops < n; {
		c := rng.IntN(len(open))
		if p := open[c]; p != nil {
			complete(p)
			open[c] = nil
			ops++
			continue
		}
		if c < producers {
			part := rng.IntN(partitions)
			sent++
			v := fmt.Sprintf("v%d", sent)
			open[c] = &pending{h: r.InvokeSend(tick(), c, tps[part], "", v), send: true, part: part, value: v}
			continue
		}
		part := c - producers
		if rng.IntN(10) == 0 {
			h := r.InvokeCommit(tick(), c, "g", []history.PartitionOffset{{TopicPartition: tps[part], Offset: pos[part]}})
			r.Ok(tick(), h, history.Result{})
			ops++
			continue
		}
		open[c] = &pending{h: r.InvokePoll(tick(), c, "g"), part: part}
	}
	// Drain: finish what is open, then consumers catch up (a few extra ops).
	for c, p := range open {
		if p != nil {
			complete(p)
		}
		if part := c - producers; part >= 0 {
			for pos[part] < int64(len(logs[part])) {
				complete(&pending{h: r.InvokePoll(tick(), c, "g"), part: part})
			}
		}
	}
	return r.History()
}
