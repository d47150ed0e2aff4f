package queue_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"mqsim/checker"
	"mqsim/model/queue"
	"mqsim/sim"
)

// safeRun is one random run of the safe profile: quorum queues on three nodes, publisher
// confirms, manual acks. Random publishes, broker and consumer crashes and restarts,
// partitions and heals; then everything heals and restarts, the consumers drain the
// queue, and the checkers judge the history.
type safeRun struct {
	w       *sim.World
	c       *queue.Cluster
	clients []string
	n       int // values published so far
}

func newSafeRun(seed uint64) *safeRun { return newRun(seed, false) }

// newRun is a safe run, or with autoAck an unsafe one whose consumers settle on delivery.
func newRun(seed uint64, autoAck bool) *safeRun {
	w := sim.NewWorld(sim.DefaultConfig(seed))
	cfg := queue.DefaultConfig()
	cfg.Nodes = 3
	c, err := queue.New(w, cfg)
	if err != nil {
		panic(err)
	}
	q := queue.DefaultQueueConfig("orders")
	q.Type, q.Members, q.DeliveryLimit = queue.Quorum, c.Names, -1
	if err := c.Declare(func(t *queue.Topology) error { return t.AddQueue(q, c.Names) }, 5*time.Second); err != nil {
		panic(err)
	}
	r := &safeRun{w: w, c: c}
	for i, name := range []string{"p1", "p2"} {
		pc := queue.DefaultPublisherConfig()
		pc.Confirms, pc.ConfirmTimeout = true, 2*time.Second
		pc.Nodes = rotate(c.Names, i)
		c.AddPublisher(name, pc)
		r.clients = append(r.clients, name)
	}
	for i, name := range []string{"c1", "c2"} {
		cc := queue.DefaultConsumerConfig("orders")
		cc.Prefetch, cc.AutoAck = 1+i*3, autoAck
		cc.Processing = time.Duration(5+10*i) * time.Millisecond
		cc.Nodes = rotate(c.Names, i+1)
		c.AddConsumer(name, cc)
		r.clients = append(r.clients, name)
	}
	return r
}

func rotate(names []string, i int) []string {
	i %= len(names)
	return append(slices.Clone(names[i:]), names[:i]...)
}

type draws interface {
	intRange(label string, lo, hi int) int
}

type rapidDraws struct{ t *rapid.T }

func (d rapidDraws) intRange(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(d.t, label)
}

type seededDraws struct{ r *sim.Rand }

func (d seededDraws) intRange(label string, lo, hi int) int { return lo + d.r.IntN(hi-lo+1) }

// step applies one random action and returns its description.
func (r *safeRun) step(d draws) string {
	nodes := append(slices.Clone(r.c.Names), r.clients...)
	switch d.intRange("action", 0, 7) {
	case 0, 1, 2:
		p := r.clients[d.intRange("publisher", 0, 1)]
		id, _ := r.w.Lookup(p)
		k := d.intRange("count", 1, 5)
		for i := 0; i < k; i++ {
			r.n++
			r.w.Inject(id, queue.PublishCmd{Key: "orders", Value: fmt.Sprintf("v%d", r.n)}, 0)
		}
		return fmt.Sprintf("publish %d from %s", k, p)
	case 3:
		name := nodes[d.intRange("crash", 0, len(nodes)-1)]
		if strings.HasPrefix(name, "p") {
			return "no-op" // a crashed publisher only turns its pending confirms into unknowns
		}
		id, _ := r.w.Lookup(name)
		r.w.Crash(id)
		return "crash " + name
	case 4:
		name := nodes[d.intRange("restart", 0, len(nodes)-1)]
		id, _ := r.w.Lookup(name)
		r.w.Restart(id)
		return "restart " + name
	case 5:
		var a, b []string
		for _, n := range nodes {
			if d.intRange("side "+n, 0, 1) == 0 {
				a = append(a, n)
			} else {
				b = append(b, n)
			}
		}
		if len(a) == 0 || len(b) == 0 {
			return "no-op"
		}
		act := sim.Action{At: r.w.Now(), Verb: sim.VerbPartition, Groups: [][]string{a, b}}
		r.w.Apply(act)
		return act.Command()
	case 6:
		r.w.Apply(sim.Action{At: r.w.Now(), Verb: sim.VerbHeal})
		return "heal"
	}
	dt := time.Duration(d.intRange("run ms", 1, 1500)) * time.Millisecond
	r.w.RunFor(dt)
	return "run " + dt.String()
}

// finish heals, restarts, drains and judges. It returns the problems found.
func (r *safeRun) finish() []string {
	r.w.Apply(sim.Action{At: r.w.Now(), Verb: sim.VerbHeal})
	for i := 0; i < r.w.NumNodes(); i++ {
		r.w.Restart(sim.NodeID(i))
	}
	r.w.RunFor(3 * time.Second) // let publishes in flight end, leaders settle
	var problems []string
	if !r.c.Drain(2 * time.Minute) {
		_, v, ok := r.c.Acting("orders")
		if !ok {
			problems = append(problems, "no leader for orders after healing")
		} else {
			problems = append(problems, fmt.Sprintf("not drained: %d ready, %d unsettled %+v, consumers %+v", len(v.State.Ready()), len(v.State.Unsettled()),
				v.State.Unsettled(), v.State.Consumers()))
		}
	}
	h := r.c.History.History()
	rep, err := checker.CheckQueue(h, checker.QueueOptions{Promise: checker.AtLeastOnce})
	if err != nil {
		return append(problems, err.Error())
	}
	for _, v := range rep.Violations {
		problems = append(problems, "queue-mode: "+v.Text)
	}
	// The log checkers, unchanged: every publish goes straight to the queue, so its IDs
	// are offsets. Competing consumers and redeliveries skip and go back by design.
	old, err := checker.CheckLog(h, checker.LogOptions{Allow: []checker.Anomaly{checker.PollSkip, checker.NonmonotonicPoll}})
	if err != nil {
		return append(problems, err.Error())
	}
	for _, v := range old.Violations {
		problems = append(problems, "queue: "+string(v.Anomaly)+": "+v.Text)
	}
	return problems
}

// TestSafeProfileLosesNoConfirmedMessage: under random crashes and partitions, quorum
// queues with publisher confirms and manual acks never lose a confirmed message, never
// enqueue one twice, and deliver nothing that was not sent.
func TestSafeProfileLosesNoConfirmedMessage(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := newSafeRun(rapid.Uint64().Draw(rt, "seed"))
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		var log []string
		for i := 0; i < steps; i++ {
			log = append(log, r.step(rapidDraws{rt}))
		}
		if problems := r.finish(); len(problems) > 0 {
			rt.Fatalf("%d problems:\n%s\nafter:\n%s", len(problems), strings.Join(problems, "\n"), strings.Join(log, "\n"))
		}
	})
}

// The property must be able to fail: with auto-ack consumers, some random runs lose a
// confirmed message (a consumer crashed or was cut off holding auto-acked deliveries).
func TestPropertyCatchesAutoAckLoss(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := newRun(seed, true)
		d := seededDraws{sim.NewRand(seed, "property")}
		for i := 0; i < 30; i++ {
			r.step(d)
		}
		for _, p := range r.finish() {
			if strings.Contains(p, "not processed") {
				t.Logf("seed %d: %s", seed, p)
				return
			}
		}
	}
	t.Fatal("200 runs with auto-ack consumers lost nothing: the property cannot fail")
}

// The same runs are deterministic: one seed, one trace.
func TestSafeRunIsDeterministic(t *testing.T) {
	run := func() (string, uint64) {
		r := newSafeRun(7)
		d := seededDraws{sim.NewRand(7, "property")}
		for i := 0; i < 30; i++ {
			r.step(d)
		}
		r.finish()
		return r.w.Trace().HashString(), r.w.StepHash()
	}
	h1, s1 := run()
	h2, s2 := run()
	if h1 != h2 || s1 != s2 {
		t.Fatalf("same seed, different runs: %s/%x vs %s/%x", h1, s1, h2, s2)
	}
}
