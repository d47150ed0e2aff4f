package queue_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/model/queue"
	"mqsim/sim"
)

// broker starts nodes q1..qN with the queues declared by decl.
func broker(t *testing.T, nodes int, decl func(c *queue.Cluster, top *queue.Topology) error) *queue.Cluster {
	t.Helper()
	w := sim.NewWorld(sim.DefaultConfig(1))
	cfg := queue.DefaultConfig()
	cfg.Nodes = nodes
	c, err := queue.New(w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Declare(func(top *queue.Topology) error { return decl(c, top) }, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	return c
}

func publish(t *testing.T, c *queue.Cluster, name string, cmds ...queue.PublishCmd) {
	t.Helper()
	id, ok := c.W.Lookup(name)
	if !ok {
		pc := queue.DefaultPublisherConfig()
		pc.Confirms = true
		cl, err := c.AddPublisher(name, pc)
		if err != nil {
			t.Fatal(err)
		}
		id = cl.ID
	}
	for _, cmd := range cmds {
		c.W.Inject(id, cmd, 0)
	}
}

func values(prefix string, n int) []queue.PublishCmd {
	var out []queue.PublishCmd
	for i := 1; i <= n; i++ {
		out = append(out, queue.PublishCmd{Key: "orders", Value: fmt.Sprintf("%s%d", prefix, i)})
	}
	return out
}

// processed lists, per queue, the values ok polls read, in order.
func processed(h history.History) map[string][]string {
	out := map[string][]string{}
	for _, op := range h {
		if op.F == history.Poll && op.Type == history.Ok {
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					out[pr.Topic] = append(out[pr.Topic], r.Value)
				}
			}
		}
	}
	return out
}

func mustBeValid(t *testing.T, h history.History) {
	t.Helper()
	rep, err := checker.CheckQueue(h, checker.QueueOptions{Promise: checker.AtLeastOnce})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) > 0 {
		t.Fatalf("queue-mode checker:\n%s", rep)
	}
}

// Both queue types deliver through any node a client connects to: a node that does not
// act for the queue names the one that does.
func TestEveryQueueTypeDeliversAndConfirms(t *testing.T) {
	for _, typ := range []queue.QueueType{queue.Classic, queue.Quorum} {
		t.Run(string(typ), func(t *testing.T) {
			c := broker(t, 3, func(c *queue.Cluster, top *queue.Topology) error {
				q := queue.DefaultQueueConfig("orders")
				q.Type, q.Home, q.Members = typ, "q2", c.Names
				return top.AddQueue(q, c.Names)
			})
			cc := queue.DefaultConsumerConfig("orders")
			cc.Prefetch = 2
			if _, err := c.AddConsumer("c1", cc); err != nil {
				t.Fatal(err)
			}
			publish(t, c, "p1", values("v", 5)...)
			if !c.Drain(10 * time.Second) {
				t.Fatal("not settled")
			}
			if got := strings.Join(processed(c.History.History())["orders"], " "); got != "v1 v2 v3 v4 v5" {
				t.Fatalf("processed %q", got)
			}
			mustBeValid(t, c.History.History())
		})
	}
}

// Messages that expire in a queue nobody reads are dead-lettered, through the routing
// of the acting node, to a queue somebody reads, with x-death.
func TestTTLDeadLettersThroughTheCluster(t *testing.T) {
	c := broker(t, 3, func(c *queue.Cluster, top *queue.Topology) error {
		if err := top.AddExchange(queue.Exchange{Name: "dlx", Kind: queue.Fanout}); err != nil {
			return err
		}
		dlq := queue.DefaultQueueConfig("expired")
		dlq.Type, dlq.Members = queue.Quorum, c.Names
		if err := top.AddQueue(dlq, c.Names); err != nil {
			return err
		}
		if err := top.AddBinding(queue.Binding{Exchange: "dlx", Queue: "expired"}); err != nil {
			return err
		}
		q := queue.DefaultQueueConfig("orders")
		q.Type, q.Members, q.DLX, q.MessageTTL = queue.Quorum, c.Names, "dlx", 100*time.Millisecond
		return top.AddQueue(q, c.Names)
	})
	if _, err := c.AddConsumer("inspector", queue.DefaultConsumerConfig("expired")); err != nil {
		t.Fatal(err)
	}
	publish(t, c, "p1", values("v", 3)...)
	c.Drain(10 * time.Second)
	if got := strings.Join(processed(c.History.History())["expired"], " "); got != "v1 v2 v3" {
		t.Fatalf("processed from the dead-letter queue: %q", got)
	}
	_, v, _ := c.Acting("expired")
	if v.State.Stats().Enqueued != 3 {
		t.Fatalf("the dead-letter queue enqueued %d", v.State.Stats().Enqueued)
	}
	found := false
	for _, e := range c.W.Trace().Events() {
		if enq, ok := e.Data.(queue.Enqueued); ok && enq.Queue == "expired" &&
			slices.Equal(enq.Msg.Deaths, []queue.Death{{Queue: "orders", Reason: "expired", Count: 1}}) {
			found = true
		}
	}
	if !found {
		t.Fatal("no dead letter was enqueued with x-death")
	}
	mustBeValid(t, c.History.History())
}

// A consumer that holds a delivery past the consumer timeout loses its channel; the
// message goes to another consumer, and the slow one's late ack is void.
func TestConsumerTimeoutRedelivers(t *testing.T) {
	c := broker(t, 1, func(c *queue.Cluster, top *queue.Topology) error {
		q := queue.DefaultQueueConfig("orders")
		q.ConsumerTimeout = 200 * time.Millisecond
		return top.AddQueue(q, c.Names)
	})
	slow := queue.DefaultConsumerConfig("orders")
	slow.Prefetch, slow.Processing = 1, 500*time.Millisecond
	c.AddConsumer("slow", slow)
	publish(t, c, "p1", values("v", 1)...)
	c.W.RunFor(100 * time.Millisecond)
	fast := queue.DefaultConsumerConfig("orders")
	fast.Prefetch = 1
	c.AddConsumer("fast", fast)
	c.Drain(10 * time.Second)
	h := c.History.History()
	if got := processed(h)["orders"]; len(got) != 2 {
		t.Fatalf("processed %v, want v1 twice (by the fast consumer, then the slow one's late finish)", got)
	}
	s := c.W.Node(mustLookup(t, c, "slow")).(*queue.Consumer).Stats()
	if s.AcksLost != 1 {
		t.Fatalf("slow consumer: %+v", s)
	}
	if _, v, _ := c.Acting("orders"); v.State.Stats().ConsumerTimeouts != 1 {
		t.Fatal("no consumer timeout counted")
	}
	rep, _ := checker.CheckQueue(h, checker.QueueOptions{Promise: checker.ExactlyOnce})
	if rep.Counts[checker.Redelivered] != 1 {
		t.Fatalf("exactly-once should fail on the redelivery:\n%s", rep)
	}
}

func mustLookup(t *testing.T, c *queue.Cluster, name string) sim.NodeID {
	t.Helper()
	id, ok := c.W.Lookup(name)
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return id
}

// A consumer cut off from the broker is silent: after two heartbeats the broker closes
// its channel and requeues what it held; the consumer, hearing nothing either, drops
// its buffer and reconnects once the network heals.
func TestCutOffConsumerIsClosedAndItsMessagesRequeued(t *testing.T) {
	c := broker(t, 1, func(c *queue.Cluster, top *queue.Topology) error {
		return top.AddQueue(queue.DefaultQueueConfig("orders"), c.Names)
	})
	cc := queue.DefaultConsumerConfig("orders")
	cc.Processing = 300 * time.Millisecond
	c.AddConsumer("c1", cc)
	publish(t, c, "p1", values("v", 4)...)
	c.W.RunFor(50 * time.Millisecond)
	c.W.Apply(sim.Action{At: c.W.Now(), Verb: sim.VerbCut, Nodes: []string{"c1", "q1"}, Both: true})
	c.W.RunFor(3 * time.Second)
	_, v, _ := c.Acting("orders")
	if v.State.Stats().ChannelsClosed == 0 || len(v.State.Consumers()) != 0 {
		t.Fatalf("the cut-off channel is still open: %+v", v.State.Consumers())
	}
	c.W.Apply(sim.Action{At: c.W.Now(), Verb: sim.VerbHeal})
	if !c.Drain(10 * time.Second) {
		t.Fatal("not settled after the heal")
	}
	mustBeValid(t, c.History.History())
	if got := processed(c.History.History())["orders"]; len(got) < 4 {
		t.Fatalf("processed %v", got)
	}
}

// TestTracedEventsAreDocumented: every queue event a run with dead letters, consumers and
// confirms records is a type EventDocs lists.
func TestTracedEventsAreDocumented(t *testing.T) {
	c := broker(t, 1, func(c *queue.Cluster, top *queue.Topology) error {
		q := queue.DefaultQueueConfig("orders")
		q.MessageTTL, q.DLXKey = 50*time.Millisecond, "expired"
		if err := top.AddQueue(q, c.Names); err != nil {
			return err
		}
		return top.AddQueue(queue.DefaultQueueConfig("expired"), c.Names)
	})
	c.AddConsumer("c1", queue.DefaultConsumerConfig("expired"))
	publish(t, c, "p1", values("v", 2)...)
	c.Drain(10 * time.Second)
	listed := map[reflect.Type]bool{}
	for _, d := range queue.EventDocs() {
		listed[reflect.TypeOf(d.Example)] = true
	}
	kinds := map[string]bool{}
	for _, e := range c.W.Trace().Events() {
		ty := reflect.TypeOf(e.Data)
		if ty.PkgPath() != "mqsim/model/queue" {
			continue
		}
		kinds[e.Kind] = true
		if !listed[ty] {
			t.Errorf("%s (%s) is not in EventDocs", ty, e)
		}
	}
	for _, k := range []string{"publish", "route", "enqueue", "expire", "dead-letter", "deliver", "ack", "confirm", "process"} {
		if !kinds[k] {
			t.Errorf("no %s event in the run: the test does not cover what it says", k)
		}
	}
}
