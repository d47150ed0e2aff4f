package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestShardsCoverExactlyTheUnshardedSeeds(t *testing.T) {
	all := slices.Collect(shardSeeds(7, 101, 0, 1))
	for _, n := range []int{2, 3, 8} {
		var union []uint64
		for i := 0; i < n; i++ {
			union = append(union, slices.Collect(shardSeeds(7, 101, i, n))...)
			if got := shardSize(101, i, n); got != len(slices.Collect(shardSeeds(7, 101, i, n))) {
				t.Errorf("shard %d/%d: size %d", i, n, got)
			}
		}
		slices.Sort(union)
		if !slices.Equal(union, all) {
			t.Errorf("%d shards cover %v, want %v", n, union, all)
		}
	}
	for _, bad := range []string{"2/2", "-1/2", "x/2", "1", "1/0"} {
		if _, _, err := parseShard(bad); err == nil {
			t.Errorf("--shard %s accepted", bad)
		}
	}
}

func swarmJSON(t *testing.T, args ...string) swarmSummary {
	t.Helper()
	out, _, err := run(t, append([]string{"swarm", "--json"}, args...)...)
	var s swarmSummary
	if jerr := json.Unmarshal([]byte(out), &s); jerr != nil {
		t.Fatalf("%v: %v\n%s", err, jerr, out)
	}
	return s
}

func TestSwarmShardsTogetherEqualTheWholeRun(t *testing.T) {
	whole := swarmJSON(t, "--seeds", "12", "--workers", "2")
	a := swarmJSON(t, "--seeds", "12", "--shard", "0/2")
	b := swarmJSON(t, "--seeds", "12", "--shard", "1/2")
	if whole.Runs != 12 || a.Runs+b.Runs != 12 || a.Events+b.Events != whole.Events {
		t.Errorf("whole %d runs %d events; shards %d+%d runs, %d+%d events", whole.Runs, whole.Events, a.Runs, b.Runs, a.Events, b.Events)
	}
}

func TestSwarmFindsAPlantedBugAndWritesReplayableFiles(t *testing.T) {
	dir := t.TempDir()
	out, _, err := run(t, "swarm", "--seeds", "6", "--bug", "no-idempotent-dedup", "--out", dir)
	if err == nil || !strings.Contains(err.Error(), "runs failed") {
		t.Fatalf("err = %v, want failed runs\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seed-*.txt"))
	if len(files) == 0 {
		t.Fatalf("no scenario files in %s:\n%s", dir, out)
	}
	_, _, err = run(t, "run", files[0])
	if err == nil || !strings.Contains(err.Error(), "the checks found") {
		t.Errorf("replaying %s: err = %v, want the same violation", files[0], err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".mqsim-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// A bug of the other broker kind, or an unknown one, is refused before any run, naming
// the profile it needs.
func TestSwarmRefusesABugOfTheOtherBroker(t *testing.T) {
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--bug", "confirm-on-route"}, []string{"queue broker's bug", "--profile queue"}},
		{[]string{"--profile", "queue", "--bug", "hw-from-leader-only"}, []string{"log broker's bug", "--profile safe, any, txn or share"}},
		{[]string{"--profile", "queue", "--bug", "nope"}, []string{`unknown queue-broker bug "nope"`, "confirm-before-commit"}},
		{[]string{"--bug", "nope"}, []string{`unknown bug "nope"`, "hw-from-leader-only"}},
	} {
		_, _, err := run(t, append([]string{"swarm", "--seeds", "1"}, tc.args...)...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: err = %v, want it to say %q", tc.args, err, w)
			}
		}
	}
}

// A swarm interrupted before its first seed (Ctrl-C cancels its context) stops, prints
// the summary so far and, having found nothing, writes no file.
func TestSwarmInterruptedStopsCleanly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var outb, errb strings.Builder
	root := newRoot(&outb, &errb)
	root.SetArgs([]string{"swarm", "--seeds", "1000", "--out", dir})
	err := root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err = %v, want interrupted", err)
	}
	if !strings.Contains(outb.String(), "interrupted") {
		t.Errorf("summary does not say it was interrupted:\n%s", outb.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("files written by an interrupted swarm: %v", entries)
	}
}
