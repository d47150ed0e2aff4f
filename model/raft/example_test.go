package raft_test

import (
	"fmt"
	"time"

	"mqsim/model/raft"
	"mqsim/sim"
)

// Three KV nodes elect a leader; a client's put is committed and read back.
func Example() {
	w := sim.NewWorld(sim.DefaultConfig(1))
	names := []string{"s1", "s2", "s3"}
	for _, name := range names {
		w.MustAddNode(name, func() sim.Node {
			n, err := raft.NewKVNode(raft.DefaultConfig(names...))
			if err != nil {
				panic(err)
			}
			return n
		})
	}
	c := w.MustAddNode("c1", func() sim.Node { return raft.NewKVClient(names...) })
	w.Inject(c, raft.KVDo{Op: raft.OpPut, Key: "color", Value: "blue"}, 0)
	w.Inject(c, raft.KVDo{Op: raft.OpGet, Key: "color"}, 0)
	w.RunFor(time.Second)
	for _, e := range w.Trace().Events() {
		if e.Kind == "election" || e.Kind == "kv" {
			fmt.Println(e.Node, e.Kind+":", e.Detail)
		}
	}
	// Output:
	// s3 election: pre-candidate for term 1
	// s3 election: candidate for term 1
	// s3 election: leader for term 1 (votes s1 s3)
	// c1 kv: p0 put color=blue [0s,277.112ms] ok at 2/t1
	// c1 kv: p0 get color -> blue [277.112ms,282.085ms] ok
}
