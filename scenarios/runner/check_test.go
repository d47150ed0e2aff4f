package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/checker"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// runScript runs an inline scenario and returns its runner; steps need no outputs.
func runScript(t *testing.T, text string, opts Options) *Runner {
	t.Helper()
	s, err := script.Parse("inline", text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Runner
}

func lastReport(t *testing.T, r *Runner) checker.Report {
	t.Helper()
	reps := r.Reports()
	if len(reps) == 0 {
		t.Fatal("no check ran")
	}
	return reps[len(reps)-1]
}

func hasNote(r checker.Report, checkerName, text string) bool {
	return slices.ContainsFunc(r.Notes, func(n checker.Note) bool {
		return n.Checker == checkerName && strings.Contains(n.Text, text)
	})
}

// --set bugs=() (what a "# fix: bugs=()" line applies) clears the planted bugs.
func TestOverrideWithEmptyList(t *testing.T) {
	script := "cluster brokers=1 rf=1 bugs=(reads-beyond-hw, no-epoch-bump)\n----\n"
	r := runScript(t, script, Options{Set: []string{"bugs=()"}})
	if bugs := r.Cluster().Cfg.Bugs.Names(); len(bugs) != 0 {
		t.Errorf("bugs=() left %v planted", bugs)
	}
	r = runScript(t, script, Options{Set: []string{"bugs=( never-shrink-isr )"}})
	if bugs := r.Cluster().Cfg.Bugs.Names(); !slices.Equal(bugs, []string{"never-shrink-isr"}) {
		t.Errorf("bugs=( never-shrink-isr ) planted %v", bugs)
	}
}

// The check command's liveness bound counts from the last fault, traced or scheduled.
func TestLastFault(t *testing.T) {
	r := runScript(t, `cluster brokers=3
----

crash b2
----

run for=1s
----

restart b2
----

at 5s partition b1 | b2 b3
----
`, Options{})
	if got := LastFault(r.World()); got != sim.Time(5*time.Second) {
		t.Errorf("last fault at %s, want the scheduled partition at 5s", got)
	}
	// Swarms run with the trace off: the world still knows when its last fault was.
	for _, mode := range []sim.TraceMode{sim.TraceKeep, sim.TraceOff} {
		r = runScript(t, "cluster brokers=3\n----\n\ncrash b2\n----\n\nrun for=1s\n----\n\nrestart b2\n----\n\nrun for=1s\n----\n", Options{TraceMode: mode})
		if got := LastFault(r.World()); got != r.World().Now().Add(-time.Second) {
			t.Errorf("trace mode %v: last fault at %s, want the restart at %s", mode, got, r.World().Now().Add(-time.Second))
		}
	}
}

// A cluster run that recovers passes the liveness check; one whose only replica is
// gone for good is reported unrecoverable, not slow.
func TestCheckLiveness(t *testing.T) {
	recovers := runScript(t, `cluster brokers=3 min-isr=2 acks=all session-timeout=3s heartbeat=1s
----

produce values=(a, b)
----

crash b1
----

run for=5s
----

produce values=(c, d)
----

restart b1
----

run for=5s
----

consume
----

check live-within=10s
----
`, Options{})
	rep := lastReport(t, recovers)
	if len(rep.Violations) != 0 || rep.Counts[checker.Unconsumed] != 0 {
		t.Errorf("a recovered run fails liveness:\n%s", rep)
	}

	lost := runScript(t, `cluster brokers=2 rf=1 partitions=2 acks=all session-timeout=3s heartbeat=1s
----

produce partition=0 value=a
----

produce partition=1 value=x
----

crash b1
----

run for=5s
----

consume consumer=c2 partitions=(t/1)
----

consume consumer=c1 partitions=(t/0) polls=1
----

check live-within=1m
----
`, Options{})
	rep = lastReport(t, lost)
	if rep.Counts[checker.Unconsumed] != 0 || !hasNote(rep, checker.LivenessChecker, "t-0 is unrecoverable (every broker the controller may elect is down: in-sync replicas [b1])") {
		t.Errorf("the partition whose only replica is gone:\n%s", rep)
	}

	// A consumer that never gets a value: the clog keeps the HW where b3 left it, and
	// the bug keeps b3 in the ISR. (c2 above takes 30s for its first metadata, asked of
	// the dead b1: a bound below that would fail it too.)
	stuck := runScript(t, `cluster brokers=3 acks=1 idempotence=false lag-max=2s session-timeout=3s heartbeat=1s bugs=(never-shrink-isr)
----

produce value=a
----

consume
----

clog b1 -> b3
----

produce value=b
----

run for=5s
----

consume
----

check live-within=3s
----
`, Options{})
	rep = lastReport(t, stuck)
	i := slices.IndexFunc(rep.Violations, func(v checker.Violation) bool { return v.Anomaly == checker.Unconsumed })
	if i < 0 || !slices.Equal(rep.Violations[i].Values, []string{"b"}) {
		t.Errorf("the stuck HW passes liveness:\n%s", rep)
	}
}

// unseen-within bounds Jepsen's unseen from the last fault; invariant findings are part
// of the check's report, with their trace step.
func TestCheckUnseenWithinAndInvariants(t *testing.T) {
	r := runScript(t, `cluster brokers=3 partitions=2 acks=1 idempotence=false session-timeout=3s heartbeat=1s bugs=(reads-beyond-hw)
----

produce partition=0 value=a
----

partition b1 | b2 b3
----

produce partition=0 value=b
----

consume partitions=(t/0)
----

run for=10s
----

heal
----

produce partition=0 value=c
----

run for=1s
----

consume partitions=(t/0)
----

check unseen-within=5s
----

produce partition=1 value=d
----

run for=10s
----

consume partitions=(t/0)
----

check unseen-within=5s
----
`, Options{})
	reps := r.Reports()
	first, last := reps[0], reps[1]
	if first.Counts[checker.Unseen] != 0 {
		t.Errorf("values read in time are unseen:\n%s", first)
	}
	i := slices.IndexFunc(first.Violations, func(v checker.Violation) bool { return v.Checker == checker.InvariantChecker })
	if i < 0 || first.Violations[i].Anomaly != "read-above-hw" || first.Violations[i].Step == 0 {
		t.Errorf("no read-above-hw with a step:\n%s", first)
	}
	i = slices.IndexFunc(last.Violations, func(v checker.Violation) bool { return v.Anomaly == checker.Unseen })
	if i < 0 || !slices.Equal(last.Violations[i].Values, []string{"d"}) || !strings.Contains(last.Violations[i].Text, "within 5s of max(ack, t=") {
		t.Errorf("d, never read, is not unseen within 5s:\n%s", last)
	}
}
