package sim

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// probe is a test node: it records what it receives and which timers fire, and can be told
// to send, write and arm timers through its env.
type probe struct {
	got    []string
	timers []string
}

func (p *probe) Start(env *Env) {}
func (p *probe) Recv(env *Env, from NodeID, msg Message) {
	p.got = append(p.got, fmt.Sprintf("%s@%s:%v", env.NameOf(from), env.Now(), msg))
}
func (p *probe) Timer(env *Env, tag TimerTag) {
	p.timers = append(p.timers, fmt.Sprintf("%d@%s", tag.Arg, env.Now()))
}

func newProbeWorld(t *testing.T, cfg Config, names ...string) (*World, []NodeID) {
	t.Helper()
	w := NewWorld(cfg)
	ids := make([]NodeID, len(names))
	for i, n := range names {
		ids[i] = w.MustAddNode(n, func() Node { return &probe{} })
	}
	w.RunFor(0) // run the Start events
	return w, ids
}

func probeOf(w *World, id NodeID) *probe { return w.Node(id).(*probe) }

// fixedLink has no jitter so delivery times are exact.
func fixedConfig() Config {
	cfg := DefaultConfig(1)
	cfg.Link = LinkConfig{Latency: time.Millisecond, InOrder: true}
	return cfg
}

func TestPartitionDropsExactlyTheCutTrafficBothWays(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b", "c")
	a, b, c := ids[0], ids[1], ids[2]
	w.Partition([]NodeID{a}, []NodeID{b, c})
	for _, pair := range [][2]NodeID{{a, b}, {b, a}, {a, c}, {c, a}, {b, c}, {c, b}} {
		w.Env(pair[0]).Send(pair[1], "x")
	}
	w.RunFor(10 * time.Millisecond)
	if got := probeOf(w, a).got; len(got) != 0 {
		t.Errorf("a received across the partition: %v", got)
	}
	if got := probeOf(w, b).got; len(got) != 1 || !strings.HasPrefix(got[0], "c@") {
		t.Errorf("b should get exactly c's message, got %v", got)
	}
	if got := probeOf(w, c).got; len(got) != 1 || !strings.HasPrefix(got[0], "b@") {
		t.Errorf("c should get exactly b's message, got %v", got)
	}
	if s := w.NetStats(); s.Cut != 4 || s.Delivered != 2 {
		t.Errorf("stats: %+v, want 4 cut and 2 delivered", s)
	}
	w.Heal()
	w.Env(a).Send(b, "after")
	w.RunFor(10 * time.Millisecond)
	if got := probeOf(w, b).got; len(got) != 2 {
		t.Errorf("after heal b should have 2 messages, got %v", got)
	}
}

func TestOneWayCutBlocksOnlyOneDirection(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.Cut(a, b)
	w.Env(a).Send(b, "lost")
	w.Env(b).Send(a, "kept")
	w.RunFor(10 * time.Millisecond)
	if len(probeOf(w, b).got) != 0 || len(probeOf(w, a).got) != 1 {
		t.Errorf("a->b cut: b got %v, a got %v", probeOf(w, b).got, probeOf(w, a).got)
	}
}

func TestPartitionDiscardsMessagesAlreadyInFlight(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	w.Env(ids[0]).Send(ids[1], "in-flight")
	w.Cut(ids[0], ids[1])
	w.RunFor(10 * time.Millisecond)
	if len(probeOf(w, ids[1]).got) != 0 {
		t.Errorf("message in flight when the link was cut was delivered")
	}
	if w.InFlight(ids[0], ids[1]) != 0 {
		t.Errorf("in-flight count not released")
	}
}

func TestClogHoldsThenReleasesInOrder(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.Clog(a, b)
	for i := 0; i < 5; i++ {
		w.Env(a).Send(b, i)
		w.RunFor(time.Millisecond)
	}
	w.RunFor(50 * time.Millisecond)
	if n := len(probeOf(w, b).got); n != 0 {
		t.Fatalf("clogged link delivered %d messages", n)
	}
	if w.InFlight(a, b) != 5 {
		t.Fatalf("in flight = %d, want 5 held", w.InFlight(a, b))
	}
	w.Unclog(a, b)
	w.RunFor(0)
	got := probeOf(w, b).got
	want := []string{"a@55ms:0", "a@55ms:1", "a@55ms:2", "a@55ms:3", "a@55ms:4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("released %v, want %v", got, want)
	}
}

func TestPauseDelaysDeliveryAndTimers(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.Env(b).SetTimer(2*time.Millisecond, TimerTag{Arg: 7})
	w.Pause(b)
	w.Env(a).Send(b, "m")
	w.RunFor(100 * time.Millisecond)
	if len(probeOf(w, b).got) != 0 || len(probeOf(w, b).timers) != 0 {
		t.Fatalf("paused node acted: got %v timers %v", probeOf(w, b).got, probeOf(w, b).timers)
	}
	w.Resume(b)
	w.RunFor(0)
	p := probeOf(w, b)
	if fmt.Sprint(p.got) != "[a@100ms:m]" || fmt.Sprint(p.timers) != "[7@100ms]" {
		t.Errorf("after resume: got %v timers %v, want both at 100ms", p.got, p.timers)
	}
}

func TestCrashDropsTimersAndMessagesRestartRecovers(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.Env(b).SetTimer(5*time.Millisecond, TimerTag{Arg: 1})
	w.Crash(b)
	w.Env(a).Send(b, "to-dead")
	w.RunFor(10 * time.Millisecond)
	if w.Node(b) != nil || w.Status(b) != Down {
		t.Fatalf("crashed node still has a state machine")
	}
	w.Restart(b)
	w.RunFor(10 * time.Millisecond)
	if p := probeOf(w, b); len(p.got) != 0 || len(p.timers) != 0 {
		t.Errorf("restarted node saw events of its past life: %v %v", p.got, p.timers)
	}
	if s := w.LinkStats(a, b); s.ToDown != 1 {
		t.Errorf("stats %+v, want one message to a down node", s)
	}
}

func TestCancelTimer(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a")
	env := w.Env(ids[0])
	id := env.SetTimer(time.Millisecond, TimerTag{Arg: 1})
	env.SetTimer(2*time.Millisecond, TimerTag{Arg: 2})
	env.CancelTimer(id)
	w.RunFor(10 * time.Millisecond)
	if got := fmt.Sprint(probeOf(w, ids[0]).timers); got != "[2@2ms]" {
		t.Errorf("timers %s, want only the second", got)
	}
}

func TestDropNextAndDuplicate(t *testing.T) {
	cfg := fixedConfig()
	cfg.Link.Dup = 1_000_000
	w, ids := newProbeWorld(t, cfg, "a", "b")
	w.DropNext(ids[0], ids[1], 1)
	w.Env(ids[0]).Send(ids[1], "first")
	w.Env(ids[0]).Send(ids[1], "second")
	w.RunFor(10 * time.Millisecond)
	got := probeOf(w, ids[1]).got
	if len(got) != 2 || !strings.HasSuffix(got[0], "second") || !strings.HasSuffix(got[1], "second") {
		t.Errorf("got %v, want the second message twice and the first never", got)
	}
}

func TestCapacityOverflow(t *testing.T) {
	cfg := fixedConfig()
	cfg.Link.Capacity = 3
	w, ids := newProbeWorld(t, cfg, "a", "b")
	for i := 0; i < 5; i++ {
		w.Env(ids[0]).Send(ids[1], i)
	}
	w.RunFor(10 * time.Millisecond)
	if n := len(probeOf(w, ids[1]).got); n != 3 {
		t.Errorf("delivered %d, want 3 (capacity)", n)
	}
	if s := w.LinkStats(ids[0], ids[1]); s.Overflow != 2 {
		t.Errorf("overflow %d, want 2", s.Overflow)
	}
}

func TestJitterReordersUnlessInOrder(t *testing.T) {
	for _, inOrder := range []bool{false, true} {
		cfg := DefaultConfig(3)
		cfg.Link = LinkConfig{Latency: time.Millisecond, Jitter: 10 * time.Millisecond, InOrder: inOrder}
		w, ids := newProbeWorld(t, cfg, "a", "b")
		for i := 0; i < 50; i++ {
			w.Env(ids[0]).Send(ids[1], i)
		}
		w.RunFor(time.Second)
		got := probeOf(w, ids[1]).got
		sorted := true
		for i, g := range got {
			if !strings.HasSuffix(g, fmt.Sprintf(":%d", i)) {
				sorted = false
			}
		}
		if len(got) != 50 || sorted != inOrder {
			t.Errorf("inOrder=%v: %d delivered, in order=%v", inOrder, len(got), sorted)
		}
	}
}

func TestPlanRunsAtItsTimes(t *testing.T) {
	w, _ := newProbeWorld(t, fixedConfig(), "a", "b")
	plan, err := ParsePlan("5ms crash b\n10ms restart b\n12ms partition a | b\n20ms heal\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SchedulePlan(plan); err != nil {
		t.Fatal(err)
	}
	w.RunFor(30 * time.Millisecond)
	var got []string
	for _, e := range w.Trace().Events() {
		got = append(got, e.String())
	}
	want := "5ms b crash: no unsynced data|10ms b restart|12ms env partition: a | b|20ms env heal: all links"
	if strings.Join(got, "|") != want {
		t.Errorf("trace\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

func TestSchedulePlanRefusesUnknownNodes(t *testing.T) {
	w, _ := newProbeWorld(t, fixedConfig(), "a")
	plan, _ := ParsePlan("1s crash zz")
	err := w.SchedulePlan(plan)
	if err == nil || !strings.Contains(err.Error(), `unknown node: "zz"`) {
		t.Errorf("err = %v", err)
	}
	if w.Pending() != 0 {
		t.Errorf("a refused plan scheduled events")
	}
}

type countingObserver struct{ steps int }

func (o *countingObserver) AfterStep(w *World) { o.steps++ }

func TestObserverSeesEveryStep(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	o := &countingObserver{}
	w.AddObserver(o)
	before := w.Steps()
	w.Env(ids[0]).Send(ids[1], "x")
	w.Env(ids[0]).SetTimer(time.Millisecond, TimerTag{})
	w.RunFor(10 * time.Millisecond)
	if uint64(o.steps) != w.Steps()-before || o.steps != 2 {
		t.Errorf("observer saw %d steps, world ran %d", o.steps, w.Steps()-before)
	}
}

func TestSetLinksReachesNodesAddedLater(t *testing.T) {
	cfg := fixedConfig()
	cfg.Link.Drop = 1_000_000
	w, ids := newProbeWorld(t, cfg, "a")
	if err := w.SetLinks(func(c *LinkConfig) error { c.Drop = 0; return nil }); err != nil {
		t.Fatal(err)
	}
	b := w.MustAddNode("b", func() Node { return &probe{} })
	w.RunFor(0)
	w.Env(ids[0]).Send(b, "x")
	w.RunFor(10 * time.Millisecond)
	if len(probeOf(w, b).got) != 1 {
		t.Errorf("a link of a node added after SetLinks kept the old loss")
	}
}

// A restarted node does not receive what was sent to its previous incarnation: the
// connections died with it.
func TestMessagesToAPreviousIncarnationAreDropped(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.Env(a).Send(b, "old")
	w.Crash(b)
	w.Restart(b)
	w.Env(a).Send(b, "new")
	w.RunFor(10 * time.Millisecond)
	if got := fmt.Sprint(probeOf(w, b).got); got != "[a@1ms:new]" {
		t.Errorf("restarted node got %s, want only the message sent after its restart", got)
	}
}

// startProbe is a probe that also records its Start.
type startProbe struct{ probe }

func (p *startProbe) Start(env *Env) { p.got = append(p.got, "start") }

// A restarted node starts before it receives anything: a message sent while it was down,
// held on a clogged link and released just before the restart, at the same instant, waits
// for its Start.
func TestARestartedNodeStartsBeforeItReceives(t *testing.T) {
	w := NewWorld(fixedConfig())
	a := w.MustAddNode("a", func() Node { return &probe{} })
	b := w.MustAddNode("b", func() Node { return &startProbe{} })
	w.RunFor(0)
	w.Crash(b)
	w.Clog(a, b)
	w.Env(a).Send(b, "while-down")
	w.RunFor(5 * time.Millisecond)
	w.Unclog(a, b) // released now, before the Start the restart schedules
	w.Restart(b)
	w.RunFor(time.Millisecond)
	if got := fmt.Sprint(w.Node(b).(*startProbe).got); got != "[start a@5ms:while-down]" {
		t.Errorf("restarted node saw %s, want its start first", got)
	}
}

// ping and pong are two kinds of message, told apart by MessageKind.
type ping int
type pong int

func TestMessageFaultsStrikeOnlyTheirKind(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.DropNextKind(a, b, "pong", 1)
	w.DuplicateNext(a, b, "ping", 1)
	w.DelayNext(a, b, "ping", 1, 5*time.Millisecond)
	env := w.Env(a)
	env.Send(b, ping(1)) // duplicated (the first armed fault that matches)
	env.Send(b, pong(2)) // dropped
	env.Send(b, ping(3)) // delayed 5ms: ping 4 overtakes it on the in-order link
	env.Send(b, ping(4))
	env.Send(b, pong(5))
	w.RunFor(10 * time.Millisecond)
	want := []string{"a@1ms:1", "a@1ms:1", "a@1ms:4", "a@1ms:5", "a@6ms:3"}
	if got := probeOf(w, b).got; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := MessageKind(ping(1)); got != "ping" {
		t.Errorf("MessageKind = %q, want ping", got)
	}
}

func TestReleaseDeliversSomeHeldMessagesAndKeepsTheClog(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a", "b")
	a, b := ids[0], ids[1]
	w.Clog(a, b)
	env := w.Env(a)
	for i := 1; i <= 4; i++ {
		env.Send(b, ping(i))
		env.Send(b, pong(10*i))
	}
	w.RunFor(2 * time.Millisecond)
	w.Release(a, b, "pong", 2) // the first two pongs
	w.RunFor(time.Millisecond)
	w.Release(a, b, "", 1) // the oldest held message, ping 1
	w.RunFor(time.Millisecond)
	want := []string{"a@2ms:10", "a@2ms:20", "a@3ms:1"}
	if got := probeOf(w, b).got; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if n := w.InFlight(a, b); n != 5 {
		t.Errorf("%d messages still held, want 5", n)
	}
	w.Env(a).Send(b, ping(9)) // still clogged
	w.RunFor(2 * time.Millisecond)
	if got := len(probeOf(w, b).got); got != 3 {
		t.Errorf("the link delivered after a release: %d messages", got)
	}
}
