package gateway

import (
	"testing"
	"time"

	"mqsim/sim"
)

// runDue runs the events due within the lead at once, never moves the clock past the
// last event it ran, and leaves the world where a replay's RunUntilTime of that moment
// leaves the same world: the same step and the same step hash.
func TestRunDueRunsTheLeadAndReplaysToTheSameStep(t *testing.T) {
	build := func() *World {
		sc, err := LoadScenario("", 1)
		if err != nil {
			t.Fatal(err)
		}
		w, err := Build(sc, func(int) ([]Addr, error) {
			return []Addr{{Host: "127.0.0.1", Port: 9092}, {Host: "127.0.0.1", Port: 9093}, {Host: "127.0.0.1", Port: 9094}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	live, replay := build(), build()
	const lead = 700 * time.Millisecond // a hop of the default network is 1-1.5ms
	vnow := live.W.Now()
	for range 20 {
		vnow = vnow.Add(100 * time.Millisecond)
		live.runDue(func() sim.Time { return vnow }, lead)
		if next, ok := live.W.NextAt(); ok && next <= vnow.Add(lead) {
			t.Fatalf("at %s an event due at %s, within the lead, did not run", vnow, next)
		}
		if live.W.Now() > vnow.Add(lead) {
			t.Fatalf("the clock %s passed the lead (%s + %s)", live.W.Now(), vnow, lead)
		}
		if now := live.W.Now(); now > vnow && now > replay.W.Now() {
			// Ahead of the wall: the clock is where the last event ran, not anywhere later.
			replay.W.RunUntilTime(now - 1)
			before := replay.W.Steps()
			if replay.W.RunUntilTime(now); replay.W.Steps() == before {
				t.Fatalf("the clock %s is ahead of the wall's %s with no event there", now, vnow)
			}
		}
		replay.W.RunUntilTime(live.W.Now())
		if replay.W.Steps() != live.W.Steps() || replay.W.StepHash() != live.W.StepHash() {
			t.Fatalf("at %s: live at step %d (hash %x), replay at step %d (hash %x)", live.W.Now(),
				live.W.Steps(), live.W.StepHash(), replay.W.Steps(), replay.W.StepHash())
		}
	}
	if live.W.Now() <= vnow {
		t.Errorf("the clock %s never ran ahead of the wall's %s: the lead was not used", live.W.Now(), vnow)
	}
}

// A wall far ahead of the world (a speed it cannot keep up with) makes runDue stop after
// maxAdvanceSteps events, behind it, so the server comes back to its requests; called
// again and again, it catches up, and the world is still the one a replay reaches.
func TestRunDueStopsBehindAWallItCannotKeepUpWith(t *testing.T) {
	sc, err := LoadScenario("", 1)
	if err != nil {
		t.Fatal(err)
	}
	addrs := func(int) ([]Addr, error) {
		return []Addr{{Host: "127.0.0.1", Port: 9092}, {Host: "127.0.0.1", Port: 9093}, {Host: "127.0.0.1", Port: 9094}}, nil
	}
	live, err := Build(sc, addrs)
	if err != nil {
		t.Fatal(err)
	}
	wall := live.W.Now().Add(2 * time.Hour) // two hours of the cluster's timers at once
	vnow := func() sim.Time { return wall }
	calls := 0
	for before := live.W.Steps(); live.runDue(vnow, time.Millisecond); before = live.W.Steps() {
		if ran := live.W.Steps() - before; ran < maxAdvanceSteps || ran > maxAdvanceSteps+100 {
			t.Fatalf("an advance that stopped behind ran %d events; want %d (and the rest of one instant)", ran, maxAdvanceSteps)
		}
		if live.W.Now() >= wall {
			t.Fatalf("stopped behind at %s, past the wall %s", live.W.Now(), wall)
		}
		if calls++; calls > 1000 {
			t.Fatalf("still behind after %d advances, at %s of %s", calls, live.W.Now(), wall)
		}
	}
	if calls == 0 {
		t.Fatal("two hours of the cluster's timers ran in one advance: the bound was never met")
	}
	if live.W.Now() != wall {
		t.Fatalf("caught up at %s, want the wall's %s", live.W.Now(), wall)
	}
	replay, err := Build(sc, addrs)
	if err != nil {
		t.Fatal(err)
	}
	replay.W.RunUntilTime(wall)
	if replay.W.Steps() != live.W.Steps() || replay.W.StepHash() != live.W.StepHash() {
		t.Fatalf("live at step %d (hash %x), replay at step %d (hash %x)", live.W.Steps(), live.W.StepHash(), replay.W.Steps(), replay.W.StepHash())
	}
}
