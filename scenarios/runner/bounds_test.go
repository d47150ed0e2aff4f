package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"mqsim/scenarios/script"
	"mqsim/sim"
)

// runErr runs an inline scenario (steps separated by blank lines) and returns its error
// and transcript, failing the test if it took longer than limit.
func runErr(t *testing.T, text string, limit time.Duration) (string, error) {
	t.Helper()
	s, err := script.Parse("bounds.txt", text)
	if err != nil {
		return "", err
	}
	start := time.Now()
	var b strings.Builder
	_, err = Run(s, Options{}, &b)
	if d := time.Since(start); d > limit {
		t.Errorf("took %s, more than %s", d, limit)
	}
	return b.String(), err
}

func TestBoundsRefusedUpFront(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"cluster brokers=3 processing=1000000h\n----\n", `bounds.txt:1: cluster: processing=: duration "1000000h" is too long: the largest allowed is 8760h0m0s`},
		{"cluster brokers=3 request-timeout=1ns\n----\n", "request.timeout.ms (producer)=1ns: want at least 1ms"},
		{"cluster brokers=3\n----\n\nrun for=1000000h\n----\n", `bounds.txt:4: run: for=: duration "1000000h" is too long: the largest allowed is 8760h0m0s`},
		{"cluster brokers=3\n----\n\nrun steps=1000000000000\n----\n", "bounds.txt:4: run: steps=1000000000000: want 1 to 50000000"},
		{"cluster brokers=3 partitions=1\n----\n\nproduce partition=99 value=a\n----\n", "bounds.txt:4: produce: partition=99: topic t has partitions 0 to 0"},
		{"cluster brokers=3 partitions=1\n----\n\ndelay partition=1 value=a after=1s\n----\n", "partition=1: topic t has partitions 0 to 0"},
	} {
		_, err := runErr(t, tc.text, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.text, err, tc.want)
		}
	}
}

// TestConsumeOfAPausedConsumerIsAnError: a paused consumer cannot poll; consume used to
// wait for its poll for 100 x 10,000,000 events.
func TestConsumeOfAPausedConsumerIsAnError(t *testing.T) {
	text := "cluster brokers=3 partitions=2\n----\n\njoin consumer=c1 group=g\n----\n\n" +
		"produce count=2 partition=0\n----\n\npause c1\n----\n\nconsume consumer=c1\n----\n"
	_, err := runErr(t, text, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "bounds.txt:13: consume: c1 is paused: a paused consumer cannot poll (resume c1 first)") {
		t.Fatalf("err %v", err)
	}
}

// TestConsumeReadsToTheEnd: one record per poll, 150 records: consume used to stop after
// 101 polls without a word; it now reads them all.
func TestConsumeReadsToTheEnd(t *testing.T) {
	text := "cluster brokers=3 partitions=1 max-poll-records=1\n----\n\nproduce count=150\n----\n\nconsume\n----\n"
	out, err := runErr(t, text, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, " 148:v149 149:v150\n") || strings.Contains(out, "stopped") {
		t.Errorf("consume did not read to the end:\n%s", out[strings.LastIndex(out, "consume"):][:200])
	}
}

// TestAWaitThatHitsItsStepBoundSaysWhat: the bound of a wait is an error naming what was
// awaited, not a silent return.
func TestAWaitThatHitsItsStepBoundSaysWhat(t *testing.T) {
	r := runScript(t, "cluster brokers=3\n----\n", Options{})
	_, err := r.wait("the answer", func(*sim.World) bool { return false }, 100, sim.MaxTime)
	var ns *sim.NotSettledError
	if !errors.As(err, &ns) || err.Error() != "the answer did not settle within 100 steps (now "+r.World().Now().String()+")" {
		t.Fatalf("err %v", err)
	}
	until := r.World().Now().Add(time.Second)
	_, err = r.wait("the answer", func(*sim.World) bool { return false }, 1_000_000, until)
	if !errors.As(err, &ns) || !ns.ByTime || !strings.Contains(err.Error(), "did not settle within the virtual time bound "+until.String()) {
		t.Fatalf("err %v", err)
	}
}

// TestRunStopsWhenInterrupted: a done context stops a long run between two slices of
// events, with what it has, and the error says it was interrupted and where.
func TestRunStopsWhenInterrupted(t *testing.T) {
	s, err := script.Parse("long.txt", "cluster brokers=3\n----\n\nrun for=8760h\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reports := 0
	start := time.Now()
	var b strings.Builder
	res, err := RunWatched(ctx, s, Options{}, &b, func(steps uint64, now sim.Time) {
		reports++
		if reports == 3 {
			cancel()
		}
	})
	if !errors.Is(err, ErrInterrupted) || !strings.HasPrefix(err.Error(), "long.txt:4: run: ") {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 10*time.Second || reports != 3 || !strings.Contains(b.String(), "controller ctl") {
		t.Errorf("%s, %d progress reports, transcript %q", time.Since(start), reports, b.String())
	}
	if w := res.Runner.World(); w.Steps() < 3*watchEvery || w.Steps() > 5*watchEvery {
		t.Errorf("stopped after %d steps", w.Steps())
	}
}
