package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readSummary(t *testing.T, path string) swarmSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s swarmSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Two shards of consecutive ranges, each written with --json=FILE, merge into the
// summary of the whole range.
func TestSwarmMergeCombinesShards(t *testing.T) {
	dir := t.TempDir()
	for _, start := range []string{"1", "4"} {
		if _, _, err := run(t, "swarm", "--seeds", "3", "--start", start, "--json="+filepath.Join(dir, "shard-"+start, "summary.json")); err != nil {
			t.Fatal(err)
		}
	}
	a, b := readSummary(t, filepath.Join(dir, "shard-1", "summary.json")), readSummary(t, filepath.Join(dir, "shard-4", "summary.json"))
	if a.Plan != (swarmPlan{Start: 1, Count: 3, Shard: 0, Shards: 1}) || b.Plan.Start != 4 || a.Runs != 3 {
		t.Fatalf("shard summaries: %+v %+v", a, b)
	}
	out, errb, err := run(t, "swarm", "merge", "--start", "1", "--seeds", "6", "--json", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	var m swarmSummary
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.Runs != 6 || m.Seeds != 6 || m.Failed != 0 || m.Events != a.Events+b.Events || m.Plan.Start != 1 || m.Plan.Count != 6 {
		t.Errorf("merged %+v from %d+%d events", m, a.Events, b.Events)
	}
}

// writeShard writes a shard's summary as mqsim swarm --json=FILE would.
func writeShard(t *testing.T, path string, s swarmSummary) {
	t.Helper()
	if s.Profile == "" {
		s.Profile = "safe"
	}
	data, _ := json.Marshal(s)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A missing range, a seed two shards ran, and the seeds an interrupted shard did not
// reach are each reported, and the merge exits 2.
func TestSwarmMergeReportsGapsAndOverlaps(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"), filepath.Join(dir, "c.json")
	writeShard(t, a, swarmSummary{Plan: swarmPlan{Start: 1, Count: 4, Shards: 1}, Seeds: 4, Runs: 4})
	writeShard(t, b, swarmSummary{Plan: swarmPlan{Start: 4, Count: 3, Shards: 1}, Seeds: 3, Runs: 3})
	// seeds 10, 12, 14 of 10..15 (shard 0/2), interrupted after the first two: 14 did not run.
	writeShard(t, c, swarmSummary{Plan: swarmPlan{Start: 10, Count: 6, Shard: 0, Shards: 2}, Seeds: 3, Runs: 2, Interrupted: true})
	_, errb, err := run(t, "swarm", "merge", "--start", "1", "--seeds", "15", dir)
	if exitCode(err) != 2 {
		t.Fatalf("exit %d (%v), want 2", exitCode(err), err)
	}
	want := []string{
		"coverage: seeds 7..9 did not run",
		"coverage: seed 11 did not run",
		"coverage: seeds 13..15 did not run",
		"coverage: seed 4 ran twice, in " + a + " and " + b,
	}
	if got := strings.Split(strings.TrimSpace(errb), "\n"); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(err.Error(), "do not cover seeds 1..15 exactly once (4 problems)") {
		t.Errorf("err = %v", err)
	}

	// Without --start and --seeds the range is what the shards planned, 1..15: the same.
	_, errb2, _ := run(t, "swarm", "merge", a, b, c)
	if errb2 != errb {
		t.Errorf("the range the shards planned gives\n%s\nwant\n%s", errb2, errb)
	}
	// Shards that cover 1..6 exactly once pass.
	writeShard(t, b, swarmSummary{Plan: swarmPlan{Start: 5, Count: 2, Shards: 1}, Seeds: 2, Runs: 2})
	if _, errb, err := run(t, "swarm", "merge", a, b); err != nil {
		t.Errorf("1..4 and 5..6: %v\n%s", err, errb)
	}
}

// The merge lists every failing seed with its shrunk file, found relative to the summary
// that names it even after the shard's directory moved (as an artifact download does).
func TestSwarmMergeListsFailuresWithTheirFiles(t *testing.T) {
	ran, moved := t.TempDir(), t.TempDir()
	for _, start := range []string{"1", "3"} {
		shard := filepath.Join(ran, "shard-"+start)
		_, _, err := run(t, "swarm", "--bug", "no-idempotent-dedup", "--no-shrink", "--seeds", "2", "--start", start,
			"--json="+filepath.Join(shard, "summary.json"), "--out", filepath.Join(shard, "failures"))
		if exitCode(err) != 1 {
			t.Fatalf("shard %s: %v, want failing seeds", start, err)
		}
	}
	downloaded := filepath.Join(moved, "artifacts")
	if err := os.Rename(ran, downloaded); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "swarm", "merge", "--json", downloaded)
	if exitCode(err) != 1 {
		t.Fatalf("exit %d (%v), want 1: runs failed", exitCode(err), err)
	}
	var m swarmSummary
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m.Runs != 4 || m.Failed == 0 || len(m.Failures) != m.Failed {
		t.Fatalf("merged %+v", m)
	}
	for i, f := range m.Failures {
		if i > 0 && m.Failures[i-1].Seed >= f.Seed {
			t.Errorf("failures not in seed order: %v", m.Failures)
		}
		if !strings.HasPrefix(f.File, downloaded) {
			t.Errorf("seed %d: file %q, want it under %s", f.Seed, f.File, downloaded)
		}
		if _, err := os.Stat(f.File); err != nil {
			t.Errorf("seed %d: %v", f.Seed, err)
		}
	}
}

// Summaries of different swarms, or files that are not summaries, are refused.
func TestSwarmMergeRefusesWhatItCannotMerge(t *testing.T) {
	dir := t.TempDir()
	writeShard(t, filepath.Join(dir, "a.json"), swarmSummary{Plan: swarmPlan{Start: 1, Count: 2, Shards: 1}})
	writeShard(t, filepath.Join(dir, "b.json"), swarmSummary{Profile: "any", Plan: swarmPlan{Start: 3, Count: 2, Shards: 1}})
	if _, _, err := run(t, "swarm", "merge", dir); err == nil || !strings.Contains(err.Error(), "merge shards of one swarm") {
		t.Errorf("profiles safe and any merged: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"profile":"safe","plan":{"start":3,"count":2,"shard":2,"shards":2}}`), 0o644)
	if _, _, err := run(t, "swarm", "merge", dir); err == nil || !strings.Contains(err.Error(), "want 0 <= shard < shards") {
		t.Errorf("shard 2/2 accepted: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"seed": 3}`), 0o644)
	if _, _, err := run(t, "swarm", "merge", dir); err == nil || !strings.Contains(err.Error(), "not a swarm summary") {
		t.Errorf("a foreign JSON file accepted: %v", err)
	}
	if _, _, err := run(t, "swarm", "merge", t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.json summaries") {
		t.Errorf("an empty directory accepted: %v", err)
	}
}

// --json takes its file after an equals sign; a file after a space is refused with
// that advice rather than run as if no file was named.
func TestSwarmJSONFileNeedsEquals(t *testing.T) {
	_, _, err := run(t, "swarm", "--seeds", "1", "--json", "out.json")
	if err == nil || !strings.Contains(err.Error(), "say --json=FILE") {
		t.Errorf("err = %v", err)
	}
}
