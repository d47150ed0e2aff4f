package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// maxMergeRange bounds the seed range a merge accounts for, one counter per seed.
const maxMergeRange = 50_000_000

func newSwarmMergeCmd() *cobra.Command {
	var jsonOut string
	var start uint64
	var seeds int
	cmd := &cobra.Command{
		Use:   "merge DIR|FILE...",
		Short: "Combine the JSON summaries of swarm shards and check they cover the range",
		Long: `Reads the summaries that 'mqsim swarm --json=FILE' wrote (each FILE named, or every
*.json under each DIR), checks that every seed of the range ran exactly once, and prints
one summary: runs, failures by anomaly, and each failing seed with its shrunk scenario
file, found relative to the summary that names it.

The range is --start and --seeds when given (so that a shard whose summary is missing
shows as a gap), else from the lowest to the highest seed any summary planned.

Exit status: 0 when every seed ran once and none failed, 1 when a seed failed, 2 when a
seed of the range did not run or ran more than once (each listed), the summaries
disagree on the profile or the planted bug, or one does not parse.`,
		Example: "  mqsim swarm merge shards/\n  mqsim swarm merge --start 1 --seeds 100000 shards/",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			shards, err := readShardSummaries(args)
			if err != nil {
				return err
			}
			var want *swarmPlan
			if cmd.Flags().Changed("start") || cmd.Flags().Changed("seeds") {
				if seeds < 1 {
					return fmt.Errorf("--seeds %d: want at least 1", seeds)
				}
				want = &swarmPlan{Start: start, Count: seeds, Shards: 1}
			}
			sum, problems, err := mergeShards(shards, want)
			if err != nil {
				return err
			}
			if err := emitSummary(cmd.OutOrStdout(), jsonOut, sum); err != nil {
				return err
			}
			if len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(cmd.ErrOrStderr(), "coverage:", p)
				}
				return exitError{2, fmt.Errorf("the shards do not cover seeds %d..%d exactly once (%d problems)",
					sum.Plan.Start, sum.Plan.Start+uint64(sum.Plan.Count)-1, len(problems))}
			}
			if sum.Failed > 0 {
				return exitError{1, fmt.Errorf("%d of %d runs failed", sum.Failed, sum.Runs)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&start, "start", 1, "first seed of the range the shards must cover")
	fl.IntVar(&seeds, "seeds", 0, "number of seeds in the range (default: as far as the summaries planned)")
	jsonFlag(fl, &jsonOut)
	return cmd
}

// shardSummary is one shard's summary and the file it came from.
type shardSummary struct {
	path string
	sum  swarmSummary
}

// readShardSummaries reads the named files, and every *.json file under the named
// directories, in lexical order.
func readShardSummaries(args []string) ([]shardSummary, error) {
	var paths []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			paths = append(paths, a)
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.json summaries in %s", strings.Join(args, " "))
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	var out []shardSummary
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var s swarmSummary
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: not a swarm summary (want the JSON of mqsim swarm --json=FILE): %v", p, err)
		}
		if s.Plan.Shards < 1 || s.Plan.Shard < 0 || s.Plan.Shard >= s.Plan.Shards || s.Plan.Count < 0 || s.Plan.Count > maxMergeRange {
			return nil, fmt.Errorf("%s: plan %+v: want 0 <= shard < shards and 0 <= count <= %d", p, s.Plan, maxMergeRange)
		}
		out = append(out, shardSummary{path: p, sum: s})
	}
	return out, nil
}

// mergeShards adds the shards' summaries into one and lists every seed of the range that
// did not run, or ran more than once, as coverage problems. The range is want, or else
// spans every seed the shards planned. Shards that disagree on the profile or the bug
// cannot be merged.
func mergeShards(shards []shardSummary, want *swarmPlan) (swarmSummary, []string, error) {
	first := shards[0].sum
	lo, hi := first.Plan.Start, first.Plan.Start
	for _, sh := range shards {
		s := sh.sum
		if s.Profile != first.Profile || s.Bug != first.Bug {
			return swarmSummary{}, nil, fmt.Errorf("%s ran profile %q bug %q, but %s ran profile %q bug %q: merge shards of one swarm",
				sh.path, s.Profile, s.Bug, shards[0].path, first.Profile, first.Bug)
		}
		lo, hi = min(lo, s.Plan.Start), max(hi, s.Plan.Start+uint64(s.Plan.Count))
	}
	if want != nil {
		lo, hi = want.Start, want.Start+uint64(want.Count)
	}
	if hi-lo > maxMergeRange {
		return swarmSummary{}, nil, fmt.Errorf("seeds %d..%d: a range of more than %d seeds", lo, hi-1, maxMergeRange)
	}
	sum := swarmSummary{Profile: first.Profile, Bug: first.Bug, Plan: swarmPlan{Start: lo, Count: int(hi - lo), Shards: 1},
		Seeds: int(hi - lo), ByAnomaly: map[string]int{}, Allowed: map[string]int{}}
	ranBy := make([]int32, hi-lo) // 1 + the index of the shard that ran the seed; 0 when none did
	var outside, twice []seedNote
	for i, sh := range shards {
		s := sh.sum
		sum.Runs += s.Runs
		sum.Failed += s.Failed
		sum.Events += s.Events
		sum.SimSeconds += s.SimSeconds
		sum.WallSeconds = max(sum.WallSeconds, s.WallSeconds) // the shards ran side by side
		sum.Interrupted = sum.Interrupted || s.Interrupted
		for k, n := range s.ByAnomaly {
			sum.ByAnomaly[k] += n
		}
		for k, n := range s.Allowed {
			sum.Allowed[k] += n
		}
		for _, fi := range s.Failures {
			if fi.File != "" && !filepath.IsAbs(fi.File) {
				fi.File = filepath.Join(filepath.Dir(sh.path), fi.File)
			}
			sum.Failures = append(sum.Failures, fi)
		}
		ran := 0 // the first Runs seeds of the plan ran (swarmPlan)
		for seed := range s.Plan.seeds() {
			if ran == s.Runs {
				break
			}
			ran++
			switch {
			case seed < lo || seed >= hi:
				outside = append(outside, seedNote{seed, sh.path})
			case ranBy[seed-lo] != 0:
				twice = append(twice, seedNote{seed, shards[ranBy[seed-lo]-1].path + " and " + sh.path})
			default:
				ranBy[seed-lo] = int32(i + 1)
			}
		}
	}
	slices.SortFunc(sum.Failures, func(a, b swarmFailureInfo) int { return cmp.Compare(a.Seed, b.Seed) })
	var missing []seedNote
	for k, by := range ranBy {
		if by == 0 {
			missing = append(missing, seedNote{lo + uint64(k), ""})
		}
	}
	var problems []string
	problems = append(problems, describeSeeds("did not run", missing)...)
	problems = append(problems, describeSeeds("ran twice, in", twice)...)
	problems = append(problems, describeSeeds(fmt.Sprintf("lie outside the range %d..%d, in", lo, hi-1), outside)...)
	return sum, problems, nil
}

// seedNote is one seed with a problem, and where (which files).
type seedNote struct {
	seed  uint64
	where string
}

// describeSeeds groups notes into runs of consecutive seeds with the same where, one line
// each: "seeds 5..9 did not run", "seed 12 ran twice, in a.json and b.json". Past
// maxLines it says how many more there are.
func describeSeeds(what string, notes []seedNote) []string {
	const maxLines = 20
	slices.SortStableFunc(notes, func(a, b seedNote) int { return cmp.Compare(a.seed, b.seed) })
	var lines []string
	for i := 0; i < len(notes); {
		j := i + 1
		for j < len(notes) && notes[j].seed == notes[j-1].seed+1 && notes[j].where == notes[i].where {
			j++
		}
		line := fmt.Sprintf("seed %d %s", notes[i].seed, what)
		if j-i > 1 {
			line = fmt.Sprintf("seeds %d..%d %s", notes[i].seed, notes[j-1].seed, what)
		}
		if notes[i].where != "" {
			line += " " + notes[i].where
		}
		lines = append(lines, line)
		i = j
	}
	if len(lines) > maxLines {
		more := len(lines) - maxLines
		lines = append(lines[:maxLines], fmt.Sprintf("and %d more such ranges of seeds that %s", more, strings.TrimSuffix(what, ", in")))
	}
	return lines
}
