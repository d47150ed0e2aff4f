package raft

import (
	"fmt"
	"testing"
	"time"

	"mqsim/sim"
)

// cluster is a world of KV nodes s1..sN and clients c1..cM.
type cluster struct {
	w       *sim.World
	servers []sim.NodeID
	clients []sim.NodeID
	names   []string
}

type clusterOpts struct {
	seed          uint64
	n             int
	clients       int
	snapshotEvery int64
	cfg           func(*Config)
	world         func(*sim.Config)
}

func newCluster(t testing.TB, o clusterOpts) *cluster {
	wc := sim.DefaultConfig(o.seed)
	if o.world != nil {
		o.world(&wc)
	}
	w := sim.NewWorld(wc)
	c := &cluster{w: w}
	for i := 1; i <= o.n; i++ {
		c.names = append(c.names, fmt.Sprintf("s%d", i))
	}
	cfg := DefaultConfig(c.names...)
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, name := range c.names {
		c.servers = append(c.servers, w.MustAddNode(name, func() sim.Node {
			n, err := NewKVNode(cfg)
			if err != nil {
				panic(err)
			}
			n.SnapshotEvery = o.snapshotEvery
			return n
		}))
	}
	for i := 1; i <= o.clients; i++ {
		c.clients = append(c.clients, w.MustAddNode(fmt.Sprintf("c%d", i), func() sim.Node {
			return NewKVClient(c.names...)
		}))
	}
	return c
}

// kv is server i's node, nil while it is down.
func (c *cluster) kv(i int) *KVNode {
	n, _ := c.w.Node(c.servers[i]).(*KVNode)
	return n
}

func (c *cluster) client(i int) *KVClient { return c.w.Node(c.clients[i]).(*KVClient) }

// leader is the index of a server that is up and leads, preferring the highest term, or -1.
func (c *cluster) leader() int {
	best, term := -1, int64(-1)
	for i := range c.servers {
		if n := c.kv(i); n != nil && n.Raft.IsLeader() && n.Raft.Term() > term {
			best, term = i, n.Raft.Term()
		}
	}
	return best
}

func (c *cluster) waitLeader(t testing.TB, limit time.Duration) int {
	t.Helper()
	end := c.w.Now().Add(limit)
	for c.w.Now() < end {
		if l := c.leader(); l >= 0 {
			return l
		}
		c.w.RunFor(5 * time.Millisecond)
	}
	t.Fatalf("no leader within %s", limit)
	return -1
}
