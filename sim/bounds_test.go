package sim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// spinner answers every message with another one to itself at the same instant: a node
// that never lets the world settle and never moves the clock.
type spinner struct{ probe }

func (s *spinner) Recv(env *Env, from NodeID, msg Message) { env.Send(env.Self(), msg) }

func TestParseDurationRefusesMoreThanAYear(t *testing.T) {
	if d, err := ParseDuration("8760h"); err != nil || d != MaxDuration {
		t.Fatalf("8760h: %v, %v; want the largest allowed duration", d, err)
	}
	_, err := ParseDuration("1000000h")
	if err == nil || !strings.Contains(err.Error(), "largest allowed is 8760h0m0s") {
		t.Fatalf("1000000h: err %v; want the bound named", err)
	}
}

func TestTimeAddSaturatesInsteadOfWrapping(t *testing.T) {
	if got := (MaxTime - 5).Add(time.Hour); got != MaxTime {
		t.Fatalf("MaxTime-5 + 1h = %d, want MaxTime", got)
	}
	if got := Time(5).Add(3); got != 8 {
		t.Fatalf("5 + 3 = %d", got)
	}
}

func TestSettleStopsAtItsStepBound(t *testing.T) {
	w := NewWorld(fixedConfig())
	id := w.MustAddNode("s", func() Node { return &spinner{} })
	w.RunFor(0)
	w.Inject(id, "ping", 0)
	ok, err := w.Settle("s's ping", func(*World) bool { return false }, Bound{Steps: 1000, Until: MaxTime})
	var ns *NotSettledError
	if ok || !errors.As(err, &ns) || ns.ByTime || ns.Steps != 1000 {
		t.Fatalf("ok %v err %v; want a step-bound NotSettledError after 1000 steps", ok, err)
	}
	if !strings.Contains(err.Error(), "s's ping did not settle within 1000 steps") {
		t.Fatalf("message %q", err)
	}
}

func TestSettleStopsAtItsTimeBound(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a")
	for i := 1; i <= 5; i++ {
		w.Env(ids[0]).SetTimer(time.Duration(i)*time.Second, TimerTag{Arg: int64(i)})
	}
	ok, err := w.Settle("the timers", func(*World) bool { return false }, Bound{Steps: 100, Until: Time(2500 * time.Millisecond)})
	var ns *NotSettledError
	if ok || !errors.As(err, &ns) || !ns.ByTime || ns.Steps != 2 || w.Now() != Time(2*time.Second) {
		t.Fatalf("ok %v err %v now %s; want a time-bound error after 2 timers at 2s", ok, err, w.Now())
	}
}

func TestSettleReportsDoneAndQuiet(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "a")
	w.Env(ids[0]).SetTimer(time.Second, TimerTag{Arg: 1})
	if ok, err := w.Settle("quiet", func(w *World) bool { return w.Pending() == 0 }, Bound{Steps: 10, Until: MaxTime}); !ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
	if ok, err := w.Settle("never", func(*World) bool { return false }, Bound{Steps: 10, Until: MaxTime}); ok || err != nil {
		t.Fatalf("nothing pending: ok %v err %v; want false, nil", ok, err)
	}
}

func TestStabilizeIsBoundedInSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs StabilizeSteps events")
	}
	cfg := fixedConfig()
	cfg.Link.Latency = 0
	w := NewWorld(cfg)
	w.Trace().Mode = TraceOff
	id := w.MustAddNode("s", func() Node { return &spinner{} })
	w.RunFor(0)
	w.Inject(id, "ping", 0)
	start := w.Steps()
	if w.Stabilize(time.Second) {
		t.Fatal("a spinning node went quiet?")
	}
	if n := w.Steps() - start; n != StabilizeSteps {
		t.Fatalf("ran %d steps, want %d", n, StabilizeSteps)
	}
}
