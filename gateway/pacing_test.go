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
