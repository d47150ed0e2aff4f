package swarm

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/model/queue"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// The queue profile's safe configuration holds: no seed finds a violation.
func TestSwarmQueueSeedsPass(t *testing.T) {
	allowed := map[checker.Anomaly]int{}
	for seed := uint64(1); seed <= 100; seed++ {
		res := RunSeed(seed, Options{Profile: ProfileQueue})
		if res.Failed() {
			t.Fatalf("seed %d: %v %v\n%s\n%s", seed, res.Err, res.Failures, res.Report, res.Script)
		}
		if len(res.Report.Delivery) == 0 {
			t.Fatalf("seed %d: %d events, report %s: the run judged nothing", seed, res.Events, res.Report)
		}
		for _, a := range res.Allowed {
			allowed[a]++
		}
	}
	// At-least-once is exercised, not only promised: some runs redeliver.
	if allowed[checker.Redelivered] == 0 {
		t.Errorf("100 seeds and no redelivery: the faults do not reach the consumers (allowed: %v)", allowed)
	}
}

// One seed, one scenario, one run: the text and the run depend on the seed alone.
func TestSwarmQueueIsDeterministic(t *testing.T) {
	opts := Options{Profile: ProfileQueue}
	for _, seed := range []uint64{1, 2, 77, 1 << 40} {
		a, b := Generate(seed, opts), Generate(seed, opts)
		if a != b {
			t.Fatalf("seed %d: two texts:\n%s\n---\n%s", seed, a, b)
		}
		if a == Generate(seed+1, opts) {
			t.Fatalf("seeds %d and %d gave the same scenario", seed, seed+1)
		}
		r1, r2 := RunSeed(seed, opts), RunSeed(seed, opts)
		if r1.Events != r2.Events || r1.SimTime != r2.SimTime || r1.Report.String() != r2.Report.String() {
			t.Fatalf("seed %d: two runs: %d/%s vs %d/%s events/time", seed, r1.Events, r1.SimTime, r2.Events, r2.SimTime)
		}
		// Planting a bug changes the broker line and the header, nothing the seed draws.
		withBug := generateQueue(seed, string(queue.BugConfirmOnRoute))
		strip := strings.NewReplacer(", planted bug confirm-on-route", "", " bugs=(confirm-on-route)", "")
		if strip.Replace(withBug) != a {
			t.Fatalf("seed %d: planting a bug changed the run:\n%s\n---\n%s", seed, withBug, a)
		}
	}
}

// The generated scenarios have the shape the shrinker and the liveness phase rely on:
// world first, then the broker; a "Liveness phase" narration; a check at the end.
func TestSwarmQueueScenarioShape(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		s, err := script.Parse("shape", Generate(seed, Options{Profile: ProfileQueue}))
		if err != nil {
			t.Fatal(err)
		}
		if err := runner.Check(s); err != nil {
			t.Fatal(err)
		}
		if s.Steps[0].Cmd != "world" || s.Steps[1].Cmd != "queue-broker" || s.Steps[len(s.Steps)-1].Cmd != "check" {
			t.Fatalf("seed %d: steps %s, %s ... %s", seed, s.Steps[0].Cmd, s.Steps[1].Cmd, s.Steps[len(s.Steps)-1].Cmd)
		}
		_, body, tail := splitPhases(s.Steps)
		if len(body) == 0 || len(tail) == 0 || tail[0].Cmd != "heal" {
			t.Fatalf("seed %d: safety phase %d steps, liveness phase %d", seed, len(body), len(tail))
		}
	}
}

// The checks must be able to fail: with a queue-broker bug planted, some seed loses a
// confirmed message, the same seed without the bug does not, and the failure survives
// shrinking.
func TestSwarmQueueCatchesPlantedBugs(t *testing.T) {
	for _, bug := range queue.BugList {
		t.Run(string(bug.Name), func(t *testing.T) {
			for seed := uint64(1); seed <= 300; seed++ {
				res := RunScript("bug", generateQueue(seed, string(bug.Name)))
				if res.Err != nil {
					t.Fatalf("seed %d: %v", seed, res.Err)
				}
				if !res.Failed() {
					continue
				}
				if !slices.ContainsFunc(res.Failures, func(a checker.Anomaly) bool { return a == checker.Unseen || a == checker.LostWrite }) {
					t.Fatalf("seed %d: the bug loses confirmed messages, yet the run failed with %v\n%s", seed, res.Failures, res.Report)
				}
				if clean := RunSeed(seed, Options{Profile: ProfileQueue}); clean.Failed() {
					t.Fatalf("seed %d fails without the bug too: %v %v", seed, clean.Err, clean.Failures)
				}
				shrunk := Shrink(res.Script, res.Failures, 200)
				small, runs := shrunk.Text, shrunk.Runs
				if again := RunScript("shrunk", small); !again.Failed() {
					t.Fatalf("seed %d: the shrunk scenario no longer fails:\n%s", seed, small)
				}
				t.Logf("seed %d: %v; shrunk from %d to %d commands in %d runs", seed, res.Failures, CountSteps(res.Script), CountSteps(small), runs)
				return
			}
			t.Fatalf("300 seeds with %s planted found nothing", bug.Name)
		})
	}
}

// A run's client history says which checker judges it: every catalogue scenario with a
// queue broker (and no cluster) writes a queue-mode history that checker.LooksLikeQueueMode
// recognises, and no log cluster's history is taken for one.
func TestClientHistoryModeIsRecognised(t *testing.T) {
	queues := 0
	for _, e := range scenarios.Catalog() {
		s, err := scenarios.Load(e.Name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := runner.Run(s, runner.Options{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		h, queueMode, ok := out.Runner.ClientHistory()
		if !ok {
			continue
		}
		if queueMode {
			queues++
		}
		if got := checker.LooksLikeQueueMode(h); got != queueMode {
			t.Errorf("%s: queue mode %t, but the history looks like queue mode: %t", e.Name, queueMode, got)
		}
	}
	if queues == 0 {
		t.Fatal("no catalogue scenario has a queue broker")
	}
}

// A queue run's history survives JSON lines whole, and the queue-mode checker judges the
// copy as the scenario's check command judged the run.
func TestQueueHistoryRoundTrip(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		s, err := script.Parse("roundtrip", Generate(seed, Options{Profile: ProfileQueue}))
		if err != nil {
			t.Fatal(err)
		}
		out, err := runner.Run(s, runner.Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, queueMode, ok := out.Runner.ClientHistory()
		if !ok || !queueMode || len(h) == 0 {
			t.Fatalf("seed %d: history %d ops, queue mode %t, ok %t", seed, len(h), queueMode, ok)
		}
		var buf bytes.Buffer
		if err := history.WriteJSONLines(&buf, h); err != nil {
			t.Fatal(err)
		}
		back, err := history.ReadJSONLines(&buf)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := checker.CheckQueue(back, checker.QueueOptions{Promise: checker.AtLeastOnce})
		if err != nil {
			t.Fatal(err)
		}
		reports := out.Runner.Reports()
		if got, want := rep.String(), reports[len(reports)-1].String(); got != want {
			t.Fatalf("seed %d: the history read back judges differently:\n%s\nin the run:\n%s", seed, got, want)
		}
	}
}
