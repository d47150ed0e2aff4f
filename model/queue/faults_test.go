package queue_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/model/queue"
	"mqsim/sim"
)

// Regression tests for what the queue swarm (mqsim swarm --profile queue) found.

// The network may deliver a publish twice (a channel is a TCP connection, which would
// not; the simulated network may). The node must route it once: a second copy used to
// be routed again under a fresh enqueuer number, and the queue enqueued the value twice
// (the swarm's seed 4: "duplicate").
func TestDuplicatedPublishIsRoutedOnce(t *testing.T) {
	c := broker(t, 3, func(c *queue.Cluster, top *queue.Topology) error {
		q := queue.DefaultQueueConfig("orders")
		q.Type, q.Members = queue.Quorum, c.Names
		return top.AddQueue(q, c.Names)
	})
	pc := queue.DefaultPublisherConfig()
	pc.Confirms = true
	if _, err := c.AddPublisher("p1", pc); err != nil {
		t.Fatal(err)
	}
	// Every message from p1 to q1 arrives twice, in any order.
	lc := c.W.Link(mustLookup(t, c, "p1"), mustLookup(t, c, "q1"))
	lc.Dup, lc.Jitter = sim.Percent(100), 3*time.Millisecond
	c.W.SetLink(mustLookup(t, c, "p1"), mustLookup(t, c, "q1"), lc)
	cc := queue.DefaultConsumerConfig("orders")
	cc.Prefetch = 3
	if _, err := c.AddConsumer("c1", cc); err != nil {
		t.Fatal(err)
	}
	publish(t, c, "p1", values("v", 10)...)
	if !c.Drain(10 * time.Second) {
		t.Fatal("not settled")
	}
	_, v, _ := c.Acting("orders")
	if n := v.State.Stats().Enqueued; n != 10 {
		t.Fatalf("enqueued %d messages for 10 publishes", n)
	}
	if got := processed(c.History.History())["orders"]; len(got) != 10 {
		t.Fatalf("processed %v", got)
	}
	dedups := 0
	for _, e := range c.W.Trace().Events() {
		if e.Kind == "dedup" && e.Node == "q1" {
			dedups++
		}
	}
	if dedups == 0 {
		t.Fatal("no second copy reached q1: the test does not test anything")
	}
	rep, err := checker.CheckQueue(c.History.History(), checker.QueueOptions{Promise: checker.ExactlyOnce})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("%s", rep)
	}
}

// A message a clog held for a crashed node, released at the very instant the node
// restarts, used to reach the new process before its Start ran, and the node panicked on
// its unset environment (the swarm's seed 264). The kernel now holds such a message until
// the Start: the node takes the three publishes as any other, after it has recovered.
func TestMessageReleasedAtRestartBeforeStart(t *testing.T) {
	c := broker(t, 3, func(c *queue.Cluster, top *queue.Topology) error {
		q := queue.DefaultQueueConfig("orders")
		q.Type, q.Members = queue.Quorum, c.Names
		return top.AddQueue(q, c.Names)
	})
	pc := queue.DefaultPublisherConfig()
	pc.Confirms, pc.Nodes = true, []string{"q1"}
	if _, err := c.AddPublisher("p1", pc); err != nil {
		t.Fatal(err)
	}
	act := func(verb sim.Verb, nodes ...string) {
		t.Helper()
		if err := c.W.Apply(sim.Action{At: c.W.Now(), Verb: verb, Nodes: nodes}); err != nil {
			t.Fatal(err)
		}
	}
	act(sim.VerbClog, "p1", "q1")
	act(sim.VerbCrash, "q1")
	publish(t, c, "p1", values("v", 3)...)
	c.W.RunFor(time.Second)
	if held := c.W.LinkStats(mustLookup(t, c, "p1"), mustLookup(t, c, "q1")).Held; held != 3 {
		t.Fatalf("the clog held %d publishes, want 3", held)
	}
	act(sim.VerbUnclog, "p1", "q1")
	act(sim.VerbRestart, "q1")
	c.W.RunFor(3 * time.Second)
	cc := queue.DefaultConsumerConfig("orders")
	if _, err := c.AddConsumer("c1", cc); err != nil {
		t.Fatal(err)
	}
	publish(t, c, "p1", queue.PublishCmd{Key: "orders", Value: "after"})
	if !c.Drain(20 * time.Second) {
		t.Fatal("not settled after the restart")
	}
	if got := processed(c.History.History())["orders"]; !slices.Equal(got, []string{"v1", "v2", "v3", "after"}) {
		t.Fatalf("processed %v, want the three held publishes, then the later one", got)
	}
	mustBeValid(t, c.History.History())
}

// A confirm belongs to the connection its publish came on. A restarted publisher numbers
// its publishes from 1 again; confirms for its previous incarnation's publishes, held
// up by a paused node, used to be taken for confirms of the new publishes with the same
// numbers: a publish that never reached the broker was recorded as confirmed, and then
// never processed (the swarm's seed 5536, "unseen").
func TestConfirmForAnEarlierIncarnationIsIgnored(t *testing.T) {
	c := broker(t, 3, func(c *queue.Cluster, top *queue.Topology) error {
		q := queue.DefaultQueueConfig("orders")
		q.Type, q.Members = queue.Quorum, c.Names
		return top.AddQueue(q, c.Names)
	})
	pc := queue.DefaultPublisherConfig()
	pc.Confirms, pc.Nodes = true, []string{"q1"}
	if _, err := c.AddPublisher("p1", pc); err != nil {
		t.Fatal(err)
	}
	act := func(verb sim.Verb, nodes ...string) {
		t.Helper()
		if err := c.W.Apply(sim.Action{At: c.W.Now(), Verb: verb, Nodes: nodes}); err != nil {
			t.Fatal(err)
		}
	}
	act(sim.VerbPause, "q1")
	publish(t, c, "p1", values("old", 3)...) // held by the paused q1
	c.W.RunFor(100 * time.Millisecond)
	act(sim.VerbCrash, "p1")
	act(sim.VerbRestart, "p1")
	c.W.RunFor(0)
	if err := c.W.Apply(sim.Action{At: c.W.Now(), Verb: sim.VerbCut, Nodes: []string{"p1", "q1"}}); err != nil {
		t.Fatal(err)
	}
	publish(t, c, "p1", values("new", 3)...) // lost on the cut link
	c.W.RunFor(100 * time.Millisecond)
	act(sim.VerbHeal)
	act(sim.VerbResume, "q1") // routes and confirms old1..old3, to the new p1
	c.W.RunFor(time.Second)
	for _, op := range c.History.History() {
		if op.Type == history.Ok && op.F == history.Send && strings.HasPrefix(op.Send.Value, "new") {
			t.Fatalf("%s was confirmed, yet it never reached the broker", op.Send.Value)
		}
	}
	if _, err := c.AddConsumer("c1", queue.DefaultConsumerConfig("orders")); err != nil {
		t.Fatal(err)
	}
	if !c.Drain(20 * time.Second) {
		t.Fatal("not settled")
	}
	if got := processed(c.History.History())["orders"]; strings.Join(got, " ") != "old1 old2 old3" {
		t.Fatalf("processed %v", got)
	}
	mustBeValid(t, c.History.History())
}
