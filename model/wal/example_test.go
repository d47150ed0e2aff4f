package wal_test

import (
	"fmt"
	"time"

	"mqsim/model/wal"
	"mqsim/sim"
)

// partition is the part of a broker that drives one log: it opens (recovers) the log in
// Start, appends on request, hands the files the log names to env.Fsync, and forwards
// fsync completions.
type partition struct {
	log *wal.Log
}

type produce struct{ value string }

// The example's trace events: what recovery found, and how far the log is durable.
type recovered struct{ rec wal.Recovery }
type durable struct{ below int64 }

func (recovered) Kind() string     { return "recover" }
func (r recovered) Detail() string { return r.rec.String() }
func (durable) Kind() string       { return "fsync" }
func (d durable) Detail() string   { return fmt.Sprintf("durable below %d", d.below) }

func (p *partition) Start(env *sim.Env) {
	cfg := wal.SmallConfig()
	cfg.Flush = wal.FlushEveryBatch
	l, rec, err := wal.Open(env.Disk(), "p0", cfg)
	if err != nil {
		panic(err)
	}
	p.log = l
	sim.Record(env, recovered{rec})
	for _, f := range rec.Sync {
		env.Fsync(f)
	}
}

func (p *partition) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case produce:
		res, err := p.log.Append(wal.Batch{LeaderEpoch: 0, Timestamp: env.Now(), Records: []wal.Record{{Value: []byte(m.value)}}})
		if err != nil {
			panic(err)
		}
		for _, f := range res.Sync {
			env.Fsync(f)
		}
	case sim.FsyncDone:
		if off, ok := p.log.OnSynced(m.File); ok {
			sim.Record(env, durable{off})
		}
	}
}

func (p *partition) Timer(env *sim.Env, tag sim.TimerTag) {}

func Example() {
	w := sim.NewWorld(sim.DefaultConfig(7))
	b1 := w.MustAddNode("b1", func() sim.Node { return &partition{} })
	w.Inject(b1, produce{"a"}, time.Millisecond)
	w.Inject(b1, produce{"b"}, 2*time.Millisecond)
	w.RunFor(10 * time.Millisecond) // both fsyncs complete
	w.Inject(b1, produce{"c"}, 0)
	w.Apply(sim.Action{Verb: sim.VerbTorn, Nodes: []string{"b1"}})
	w.RunFor(time.Millisecond) // "c" is written, its fsync still in flight
	w.Crash(b1)
	w.Restart(b1)
	w.RunFor(0)

	l := w.Node(b1).(*partition).log
	bs, _ := l.Read(0, 1<<10)
	for _, b := range bs {
		fmt.Printf("%d: %s\n", b.BaseOffset, b.Records[0].Value)
	}
	for _, e := range w.Trace().Events() {
		if e.Kind == "recover" || e.Kind == "fsync" {
			fmt.Println(e.Kind, e.Detail)
		}
	}
	// Output:
	// 0: a
	// 1: b
	// recover recovered p0: log [0,0) in 1 segment, 0 batches
	// fsync durable below 1
	// fsync durable below 1
	// fsync durable below 2
	// recover recovered p0: log [0,2) in 1 segment, 2 batches; truncated 51 bytes torn tail at offset 2 (p0/00000000000000000000.log byte 104)
}
