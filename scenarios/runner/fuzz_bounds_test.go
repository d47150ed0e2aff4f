package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"mqsim/scenarios/script"
)

// fuzzArgTemplates are command lines with one duration or count for the fuzzer to fill,
// each after a small cluster and before a little work that uses what it set.
var fuzzArgTemplates = []string{
	"cluster brokers=3 partitions=2 processing=%s",
	"cluster brokers=3 partitions=2 request-timeout=%s",
	"cluster brokers=3 partitions=2 heartbeat=%s",
	"cluster brokers=3 partitions=2 session-timeout=%s",
	"cluster brokers=3 partitions=2 linger=%s",
	"cluster brokers=3 partitions=2 retry-backoff=%s",
	"cluster brokers=3 partitions=2 delivery-timeout=%s",
	"cluster brokers=3 partitions=2 fetch-wait=%s",
	"cluster brokers=3 partitions=2 lag-max=%s",
	"cluster brokers=3 partitions=2 segment-ms=%s",
	"cluster brokers=3 partitions=2 retention-check=%s",
	"cluster brokers=3 partitions=%s",
	"cluster brokers=3 partitions=2 max-poll-records=%s",
	"cluster brokers=3 partitions=2 batch-size=%s",
	"cluster brokers=3 partitions=2 retries=%s",
	"cluster brokers=%s",
	"cluster brokers=3 partitions=2\n----\n\nrun for=%s",
	"cluster brokers=3 partitions=2\n----\n\nrun until=%s",
	"cluster brokers=3 partitions=2\n----\n\nrun steps=%s",
	"cluster brokers=3 partitions=2\n----\n\nstabilize limit=%s",
	"cluster brokers=3 partitions=2\n----\n\nproduce count=%s",
	"cluster brokers=3 partitions=2\n----\n\nproduce partition=%s value=x",
	"cluster brokers=3 partitions=2\n----\n\nconsume polls=%s",
	"cluster brokers=3 partitions=2\n----\n\ngroup name=g auto-commit-interval=%s",
	"cluster brokers=3 partitions=2\n----\n\ngroup name=g heartbeat=%s session-timeout=10s",
	"cluster brokers=3 partitions=2\n----\n\nlag-timeline group=g every=%s for=10s",
}

// fuzzCommandSteps bounds each command of a fuzzed scenario (Options.MaxCommandSteps),
// and fuzzWallBound is how long one scenario may take before the test calls it a hang:
// three commands of at most 50,000 events each take a second or two (the fuzzer itself
// calls an input that takes 10s hung).
const (
	fuzzCommandSteps = 50_000
	fuzzWallBound    = 30 * time.Second
)

// FuzzScenarioArguments: whatever duration or count a scenario command is given, the run
// ends (with an error, or having done the work) within its bound, and never panics.
func FuzzScenarioArguments(f *testing.F) {
	for i := range fuzzArgTemplates {
		for _, v := range []string{"1ns", "1000000h", "8760h", "99"} {
			f.Add(uint8(i), v)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		if strings.ContainsAny(value, "\n\r\\#") {
			return // a different line, a continuation or a comment: not an argument
		}
		line := fmt.Sprintf(fuzzArgTemplates[int(which)%len(fuzzArgTemplates)], value)
		text := line + "\n----\n\nproduce count=3\n----\n\nconsume\n----\n"
		s, err := script.Parse("fuzz.txt", text)
		if err != nil {
			return // refused by the parser, with an error: fine
		}
		ctx, cancel := context.WithTimeout(context.Background(), fuzzWallBound)
		defer cancel()
		start := time.Now()
		_, err = RunWatched(ctx, s, Options{MaxCommandSteps: fuzzCommandSteps}, nil, nil)
		if errors.Is(err, ErrInterrupted) {
			t.Fatalf("%q ran for %s without ending", line, time.Since(start).Round(time.Second))
		}
		if err != nil && err.Error() == "" {
			t.Fatalf("%q: an empty error", line)
		}
	})
}
