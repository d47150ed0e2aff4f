package swarm

import (
	"context"
	"testing"

	"mqsim/checker"
)

// TestShrinkStopsWhenInterrupted: with its context done, shrinking tries no candidate and
// returns at once with what it has.
func TestShrinkStopsWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	text := Generate(1, Options{Profile: ProfileSafe})
	got := ShrinkWatched(ctx, text, []checker.Anomaly{checker.LostWrite}, 500)
	if got.Runs != 0 || CountSteps(got.Text) != CountSteps(text) {
		t.Errorf("interrupted shrink ran %d candidates, %d of %d steps left", got.Runs, CountSteps(got.Text), CountSteps(text))
	}
}
