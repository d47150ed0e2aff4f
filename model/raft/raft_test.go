package raft

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mqsim/sim"
)

func TestElectsLeaderAndReplicates(t *testing.T) {
	c := newCluster(t, clusterOpts{seed: 1, n: 3, clients: 1})
	l := c.waitLeader(t, 2*time.Second)
	t.Logf("leader s%d at %s", l+1, c.w.Now())
	for i := 0; i < 5; i++ {
		c.w.Inject(c.clients[0], KVDo{Op: OpPut, Key: "k"}, 0)
	}
	c.w.Inject(c.clients[0], KVDo{Op: OpGet, Key: "k"}, 0)
	c.w.RunFor(time.Second)
	h := c.client(0).History
	if len(h) != 6 {
		t.Fatalf("history %v", h)
	}
	for _, r := range h {
		if r.Outcome != OutcomeOK {
			t.Fatalf("op failed: %v", r)
		}
	}
	if got := h[5].Value; got != h[4].Value {
		t.Fatalf("read %q, want %q", got, h[4].Value)
	}
	for i := range c.servers {
		if v, _ := c.kv(i).Get("k"); v != h[4].Value {
			t.Errorf("s%d has k=%q", i+1, v)
		}
	}
	if countEvents(c, "", "election", "leader for term") != 1 || countEvents(c, "", "commit", "") == 0 {
		t.Fatal("trace lacks the election or the commits")
	}
}

func countEvents(c *cluster, node, kind, contains string) int {
	n := 0
	for _, e := range c.w.Trace().Events() {
		if (node == "" || e.Node == node) && e.Kind == kind && strings.Contains(e.Detail, contains) {
			n++
		}
	}
	return n
}

func puts(c *cluster, client, n int) {
	for i := 0; i < n; i++ {
		c.w.Inject(c.clients[client], KVDo{Op: OpPut, Key: fmt.Sprintf("k%d", i%4)}, 0)
	}
}

// A follower that was down while the leader compacted its log past the follower's end
// catches up by installing the leader's snapshot.
func TestLaggingFollowerInstallsSnapshot(t *testing.T) {
	c := newCluster(t, clusterOpts{seed: 2, n: 3, clients: 1, snapshotEvery: 10})
	l := c.waitLeader(t, 2*time.Second)
	f := (l + 1) % 3
	c.w.Crash(c.servers[f])
	puts(c, 0, 60)
	c.w.RunFor(2 * time.Second)
	if s := c.kv(l).Raft.SnapshotIndex(); s < 50 {
		t.Fatalf("leader's snapshot is at %d, want compaction past 50", s)
	}
	c.w.Restart(c.servers[f])
	c.w.RunFor(time.Second)
	if countEvents(c, c.names[f], "snapshot", "installed") == 0 {
		t.Fatalf("%s installed no snapshot", c.names[f])
	}
	if got, want := string(c.kv(f).Encode()), string(c.kv(l).Encode()); got != want {
		t.Fatalf("%s's map differs from the leader's", c.names[f])
	}
	if a, b := c.kv(f).Raft.Applied(), c.kv(l).Raft.Applied(); a != b {
		t.Fatalf("%s applied %d, leader %d", c.names[f], a, b)
	}
}

// A leader cut off from its followers steps down within two election timeouts
// (check-quorum), and the others elect a new leader in a higher term.
func TestIsolatedLeaderStepsDown(t *testing.T) {
	c := newCluster(t, clusterOpts{seed: 3, n: 3})
	l := c.waitLeader(t, 2*time.Second)
	term := c.kv(l).Raft.Term()
	var rest []sim.NodeID
	for i, id := range c.servers {
		if i != l {
			rest = append(rest, id)
		}
	}
	c.w.Partition([]sim.NodeID{c.servers[l]}, rest)
	c.w.RunFor(2*15*10*time.Millisecond + 20*time.Millisecond)
	if c.kv(l).Raft.IsLeader() {
		t.Fatalf("isolated %s still leads", c.names[l])
	}
	if countEvents(c, c.names[l], "step-down", "lost quorum") != 1 {
		t.Fatalf("no check-quorum step-down in the trace")
	}
	c.w.RunFor(time.Second)
	nl := c.leader()
	if nl < 0 || nl == l || c.kv(nl).Raft.Term() <= term {
		t.Fatalf("no new leader in a term above %d (leader %d)", term, nl)
	}
}

// With pre-vote, a follower cut off for seconds does not bump its term, so when it
// returns the leader is undisturbed; without pre-vote its term runs up and deposes the
// leader.
func TestPreVoteKeepsReturningNodeQuiet(t *testing.T) {
	for _, prevote := range []bool{true, false} {
		c := newCluster(t, clusterOpts{seed: 4, n: 3, cfg: func(cfg *Config) { cfg.PreVote = prevote }})
		l := c.waitLeader(t, 2*time.Second)
		term := c.kv(l).Raft.Term()
		f := (l + 1) % 3
		var rest []sim.NodeID
		for i, id := range c.servers {
			if i != f {
				rest = append(rest, id)
			}
		}
		c.w.Partition([]sim.NodeID{c.servers[f]}, rest)
		c.w.RunFor(3 * time.Second)
		c.w.Heal()
		c.w.RunFor(time.Second)
		ft, lt := c.kv(f).Raft.Term(), c.kv(c.leader()).Raft.Term()
		if prevote && (ft != term || lt != term || c.leader() != l) {
			t.Fatalf("pre-vote: terms moved (follower %d, leader %d, was %d) or leader changed", ft, lt, term)
		}
		if !prevote && lt <= term {
			t.Fatalf("without pre-vote the returning node should have forced a new term; still %d", lt)
		}
	}
}

// A vote is granted in memory at once but answered only after the fsync of the term and
// vote completes.
func TestVoteAnsweredAfterFsync(t *testing.T) {
	c := newCluster(t, clusterOpts{seed: 5, n: 3, world: func(wc *sim.Config) {
		wc.TraceMessages = true
		wc.Disk.FsyncLatency, wc.Disk.FsyncJitter = 20*time.Millisecond, 0
	}})
	c.waitLeader(t, 3*time.Second)
	granted := map[string]sim.Time{}
	checked := 0
	for _, e := range c.w.Trace().Events() {
		switch {
		case e.Kind == "vote" && strings.HasPrefix(e.Detail, "vote for") && strings.HasSuffix(e.Detail, "granted"):
			granted[e.Node] = e.Time
		case e.Kind == "send" && strings.HasPrefix(e.Detail, "vote-resp") && strings.Contains(e.Detail, "granted"):
			at, ok := granted[e.Node]
			if !ok || e.Time.Sub(at) < 20*time.Millisecond {
				t.Fatalf("%s answered a vote at %s, granted at %s: before its fsync", e.Node, e.Time, at)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no vote answers in the trace")
	}
}

// A crash that tears the newest term-and-vote record leaves the previous one, which was
// durable, in the other file.
func TestTornStateFallsBack(t *testing.T) {
	c := newCluster(t, clusterOpts{seed: 6, n: 1})
	c.waitLeader(t, time.Second)
	d := c.w.Disk(c.servers[0])
	var s stateStore
	s.init("raft")
	s.load(d)
	before := s.want
	if before.term != 1 {
		t.Fatalf("single node: term %d on disk, want 1", before.term)
	}
	// Write a newer record into the other slot without syncing it, then tear it.
	newer := encodeState(hardState{gen: before.gen + 1, term: 9, vote: 0})
	d.Truncate(s.file(s.slot), 0)
	d.Append(s.file(s.slot), newer)
	d.TearNextCrash(true)
	c.w.Crash(c.servers[0])
	var after stateStore
	after.init("raft")
	after.load(d)
	if after.want != before {
		t.Fatalf("after a torn write: %+v, want %+v", after.want, before)
	}
	c.w.Restart(c.servers[0])
	c.waitLeader(t, time.Second)
	if tm := c.kv(0).Raft.Term(); tm != 2 {
		t.Fatalf("term after restart and election %d, want 2", tm)
	}
}

// Propose refuses what it cannot take: a follower's proposal, an entry larger than a wal
// batch, and more than MaxUncommitted entries above the commit index.
func TestProposeBounds(t *testing.T) {
	c := newCluster(t, clusterOpts{seed: 7, n: 3, cfg: func(cfg *Config) { cfg.MaxUncommitted = 4 }})
	l := c.waitLeader(t, 2*time.Second)
	c.w.RunFor(50 * time.Millisecond)
	r, env := c.kv(l).Raft, c.w.Env(c.servers[l])
	if _, _, ok := c.kv((l+1)%3).Raft.Propose(c.w.Env(c.servers[(l+1)%3]), encodePut("k", "v")); ok {
		t.Fatal("a follower accepted a proposal")
	}
	if _, _, ok := r.Propose(env, make([]byte, r.Config().WAL.MaxBatchBytes)); ok {
		t.Fatal("an entry larger than a wal batch was accepted")
	}
	accepted := 0
	for i := 0; i < 10; i++ {
		if _, _, ok := r.Propose(env, encodePut("k", "v")); ok {
			accepted++
		}
	}
	if accepted != 4 {
		t.Fatalf("accepted %d proposals above the commit index, want MaxUncommitted=4", accepted)
	}
	c.w.RunFor(100 * time.Millisecond)
	if _, _, ok := r.Propose(env, encodePut("k", "v")); !ok {
		t.Fatal("no proposal accepted once the window committed")
	}
}
