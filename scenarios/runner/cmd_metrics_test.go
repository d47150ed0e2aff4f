package runner

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"mqsim/metrics"
	"mqsim/model/controller"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// runCatalogue runs a catalogue scenario, with its fix when fix is set, and returns its trace.
func runCatalogue(t *testing.T, name string, fix bool) []sim.Event {
	t.Helper()
	text, err := os.ReadFile("../catalog/" + name + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := script.Parse(name, string(text))
	if err != nil {
		t.Fatal(err)
	}
	var opts Options
	if fix {
		opts.Set = s.Fix
	}
	res, err := Run(s, opts, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return res.Runner.World().Trace().Events()
}

// figureLines are the figures after event i that its kernel step changed.
func changedAt(tl *metrics.Timeline, i int) []string {
	var out []string
	for _, f := range tl.At(i) {
		if f.Changed {
			out = append(out, f.Line())
		}
	}
	return out
}

// In acks1-leader-crash with its fix (acks=all, min.insync.replicas=2), the partition
// that cuts b1 off its followers makes b1 shrink the ISR to itself once they lag for
// replica.lag.time.max.ms: at the step the controller accepts that shrink, b1's
// UnderMinIsrPartitionCount and UnderReplicatedPartitions rise to 1 with an alert and its
// IsrShrinksPerSec counts the shrink. Without the fix (min.insync.replicas=1) nothing
// shrinks before b1 crashes; the election that follows leaves t/0 under-replicated.
func TestAcks1LeaderCrashMetrics(t *testing.T) {
	es := runCatalogue(t, "acks1-leader-crash", true)
	tl := metrics.Build(es, 0)
	shrink := slices.IndexFunc(es, func(e sim.Event) bool {
		d, ok := e.Data.(controller.ISRChanged)
		return ok && len(d.After) < len(d.Before)
	})
	if shrink < 0 {
		t.Fatal("no ISR shrink in acks1-leader-crash --fix")
	}
	got := changedAt(tl, shrink)
	want := []string{
		"UnderReplicatedPartitions b1 = 1 (was 0) ALERT",
		"UnderMinIsrPartitionCount b1 = 1 (was 0) ALERT",
		"IsrShrinksPerSec b1 = 0.1 (was 0)",
		"UnderReplicated t/0 = 1 (was 0) ALERT",
		"UnderMinIsr t/0 = 1 (was 0) ALERT",
		"InSyncReplicasCount t/0 = 1 (was 3)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("at the shrink (%s), changed:\n%s\nwant\n%s", es[shrink], strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	es = runCatalogue(t, "acks1-leader-crash", false)
	tl = metrics.Build(es, 0)
	election := slices.IndexFunc(es, func(e sim.Event) bool { _, ok := e.Data.(controller.LeaderElected); return ok })
	if election < 0 {
		t.Fatal("no election in acks1-leader-crash")
	}
	got = changedAt(tl, election)
	for _, w := range []string{"LeaderElectionRate cluster = 0.1 (was 0)", "UnderReplicated t/0 = 1 (was 0) ALERT"} {
		if !slices.Contains(got, w) {
			t.Errorf("at the election (%s): no %q among\n%s", es[election], w, strings.Join(got, "\n"))
		}
	}
	if slices.ContainsFunc(es[:election], func(e sim.Event) bool { _, ok := e.Data.(controller.ISRChanged); return ok }) {
		t.Error("acks1-leader-crash shrank the ISR before the election: the scenario changed")
	}
}

// show metrics names the levels it takes when given another word, and needs the trace.
func TestShowMetricsErrors(t *testing.T) {
	s, err := script.Parse("m.txt", "cluster brokers=1 rf=1 min-isr=1\n----\n\nshow metrics brokers\n----\n\nshow metrics broker\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{})
	if _, err := r.Exec(s.Steps[0]); err != nil {
		t.Fatal(err)
	}
	_, err = r.Exec(s.Steps[1])
	if want := "show metrics brokers: want levels among cluster, controller, broker, partition, consumer"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	r = NewRunner(Options{TraceMode: sim.TraceHashOnly})
	if _, err := r.Exec(s.Steps[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Exec(s.Steps[2]); err == nil || !strings.Contains(err.Error(), "needs the whole trace") {
		t.Errorf("with the trace not kept: %v", err)
	}
}
