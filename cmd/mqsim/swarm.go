package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/scenarios/swarm"
)

func init() { moreCommands = append(moreCommands, newSwarmCmd) }

type swarmFlags struct {
	seeds, workers    int
	start             uint64
	profile, bug, out string
	shard             string
	json, noShrink    bool
	shrinkRuns        int
	set               []string
}

func newSwarmCmd() *cobra.Command {
	var f swarmFlags
	cmd := &cobra.Command{
		Use:   "swarm",
		Short: "Run many random seeded fault-injection runs and judge each",
		Long: `Each seed becomes a whole random run: cluster shape, settings (within the profile),
workload and fault plan, with whole fault kinds switched on or off per seed (swarm
testing). A safety phase with faults is followed by a liveness phase: faults end,
nodes restart, the cluster converges, a fresh consumer reads everything, and the
checkers judge the history. In the safe profile one fault the settings tolerate then
stays (t/0's leader crashed, or its link to a follower clogged) and new writes must
be acknowledged within 30s.

Profiles: safe (acks=all, min.insync.replicas=2, rf=3, idempotence, no unclean
election, fsync per batch: every violation is a bug), any (settings drawn freely:
only violations the settings do not allow count) and queue (the RabbitMQ-style
queue broker: quorum queues, publisher confirms, manual acks, exchanges, consumers
with prefetch; faults include consumer crashes and slow consumers; a confirmed
message never processed, or enqueued twice, is a bug; redeliveries and reorders
are allowed). --bug plants one of the bugs mqsim bugs lists: the log brokers' (safe or
any profile) or the queue broker's (queue profile). --set adds a cluster setting to
every run: a legacy replication switch (isr-expand=hw) or kafka-version=2.0, which
mqsim commands lists; with one of them on, a lost or diverged write is a failure.

For each failing seed, a shrunk scenario file that still fails goes to --out, ready
for 'mqsim run FILE' and 'mqsim tui FILE'. --shard I/N runs every N-th seed starting
at the I-th, so N machines together cover exactly the unsharded run.

Exit status: 0 when no run failed, 1 when one did, 2 on a usage error. Ctrl-C stops
cleanly and prints the summary so far.`,
		Example: "  mqsim swarm --seeds 200\n  mqsim swarm --seeds 500 --bug hw-from-leader-only --out failures\n  mqsim swarm --seeds 10000 --shard 3/8 --json\n  mqsim swarm --profile queue --seeds 10000 --out failures",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSwarm(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.seeds, "seeds", 100, "number of seeds to run")
	fl.Uint64Var(&f.start, "start", 1, "first seed")
	fl.IntVar(&f.workers, "workers", 0, "parallel workers (default: number of CPUs)")
	fl.StringVar(&f.profile, "profile", "safe", "safe, any or queue (the RabbitMQ-style queue broker)")
	fl.StringVar(&f.bug, "bug", "", "plant a bug in every run (see mqsim bugs)")
	fl.StringArrayVar(&f.set, "set", nil, "add a cluster setting to every run, KEY=VALUE (repeatable), e.g. isr-expand=hw")
	fl.StringVar(&f.shard, "shard", "", "I/N: run only seeds start+I, start+I+N, ...")
	fl.StringVar(&f.out, "out", "", "directory for the failing seeds' shrunk scenario files")
	fl.BoolVar(&f.json, "json", false, "print the summary as JSON")
	fl.BoolVar(&f.noShrink, "no-shrink", false, "write failing scenarios as generated, without shrinking")
	fl.IntVar(&f.shrinkRuns, "shrink-runs", 500, "at most this many runs to shrink one failure")
	return cmd
}

// parseShard reads "I/N".
func parseShard(s string) (i, n int, err error) {
	if s == "" {
		return 0, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 0 <= I < N, e.g. 0/4", s)
	}
	return i, n, nil
}

// shardSeeds lists the seeds of shard i of n among count seeds from start.
func shardSeeds(start uint64, count, i, n int) []uint64 {
	var seeds []uint64
	for k := i; k < count; k += n {
		seeds = append(seeds, start+uint64(k))
	}
	return seeds
}

// swarmSummary is what a swarm prints at the end (and as JSON).
type swarmSummary struct {
	Profile     string             `json:"profile"`
	Bug         string             `json:"bug,omitempty"`
	Set         []string           `json:"set,omitempty"`
	Seeds       int                `json:"seeds"`
	Runs        int                `json:"runs"`
	Failed      int                `json:"failed"`
	Interrupted bool               `json:"interrupted,omitempty"`
	Events      uint64             `json:"events"`
	SimSeconds  float64            `json:"sim_seconds"`
	WallSeconds float64            `json:"wall_seconds"`
	ByAnomaly   map[string]int     `json:"failures_by_anomaly"`
	Allowed     map[string]int     `json:"allowed_by_anomaly,omitempty"`
	Failures    []swarmFailureInfo `json:"failing_seeds,omitempty"`
}

type swarmFailureInfo struct {
	Seed      uint64   `json:"seed"`
	Anomalies []string `json:"anomalies"`
	Error     string   `json:"error,omitempty"`
	Steps     int      `json:"steps"`
	Shrunk    int      `json:"shrunk_steps,omitempty"`
	File      string   `json:"file,omitempty"`
}

func runSwarm(cmd *cobra.Command, f swarmFlags) error {
	opts := swarm.Options{Profile: swarm.Profile(f.profile), Bug: f.bug, Set: f.set}
	if err := opts.Validate(); err != nil {
		return err
	}
	if f.seeds < 1 {
		return fmt.Errorf("--seeds %d: want at least 1", f.seeds)
	}
	si, sn, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	workers := f.workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
	}
	seeds := shardSeeds(f.start, f.seeds, si, sn)
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()

	started := time.Now()
	results := make(chan swarm.SeedResult)
	next := make(chan uint64)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				results <- swarm.RunSeed(seed, opts)
			}
		}()
	}
	go func() {
		defer close(next)
		for _, s := range seeds {
			select {
			case next <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	progress := newProgress(cmd.ErrOrStderr(), len(seeds))
	var all []swarm.SeedResult
	failed := 0
	for r := range results {
		all = append(all, r)
		if r.Failed() {
			failed++
		}
		progress.update(len(all), failed, time.Since(started))
	}
	progress.done()
	interrupted := ctx.Err() != nil
	sort.Slice(all, func(i, j int) bool { return all[i].Seed < all[j].Seed })

	sum := swarmSummary{Profile: f.profile, Bug: f.bug, Set: f.set, Seeds: len(seeds), Runs: len(all), Interrupted: interrupted,
		ByAnomaly: map[string]int{}, Allowed: map[string]int{}}
	for _, r := range all {
		sum.Events += r.Events
		sum.SimSeconds += r.SimTime.Seconds()
		for _, a := range r.Allowed {
			sum.Allowed[string(a)]++
		}
		if !r.Failed() {
			continue
		}
		sum.Failed++
		info := swarmFailureInfo{Seed: r.Seed, Steps: swarm.CountSteps(r.Script)}
		for _, a := range r.Failures {
			sum.ByAnomaly[string(a)]++
			info.Anomalies = append(info.Anomalies, string(a))
		}
		if r.Err != nil {
			info.Error = r.Err.Error()
			sum.ByAnomaly["error"]++
		}
		if f.out != "" && !interrupted {
			text := r.Script
			if !f.noShrink && r.Err == nil {
				shrunk := swarm.Shrink(r.Script, r.Failures, f.shrinkRuns)
				info.Shrunk = swarm.CountSteps(shrunk.Text)
				text = shrinkHeader(r, info, shrunk) + withOutputs(shrunk.Text)
			}
			info.File = filepath.Join(f.out, fmt.Sprintf("seed-%d.txt", r.Seed))
			if err := writeAtomic(info.File, []byte(text)); err != nil {
				return err
			}
		}
		sum.Failures = append(sum.Failures, info)
	}
	sum.WallSeconds = time.Since(started).Seconds()
	out := cmd.OutOrStdout()
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printSummary(out, sum)
	}
	if sum.Failed > 0 {
		return exitError{1, fmt.Errorf("%d of %d runs failed", sum.Failed, sum.Runs)}
	}
	if interrupted {
		return exitError{1, errors.New("interrupted")}
	}
	return nil
}

// withOutputs runs a scenario once and returns its transcript: the file with every
// command's output filled in, so that it reads as a story and replays as a golden file.
func withOutputs(text string) string {
	s, err := script.Parse("shrunk", text)
	if err != nil {
		return text
	}
	res, err := runner.Run(s, runner.Options{}, nil)
	if err != nil || res == nil {
		return text
	}
	return res.Transcript + "\n"
}

func shrinkHeader(r swarm.SeedResult, info swarmFailureInfo, shrunk swarm.Shrunk) string {
	var names []string
	for _, a := range r.Failures {
		names = append(names, string(a))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Swarm failure: %s (seed %d), shrunk from %d to %d commands in %d runs:\n",
		strings.Join(names, ", "), r.Seed, info.Steps, info.Shrunk, shrunk.Runs)
	for _, step := range shrunk.Steps {
		fmt.Fprintf(&b, "# - %s\n", step)
	}
	b.WriteString("# Replay: mqsim run FILE, or open it in mqsim tui FILE.\n#\n")
	return b.String()
}

func printSummary(w io.Writer, s swarmSummary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "profile\t%s\n", s.Profile)
	if s.Bug != "" {
		fmt.Fprintf(tw, "planted bug\t%s\n", s.Bug)
	}
	if len(s.Set) > 0 {
		fmt.Fprintf(tw, "settings\t%s\n", strings.Join(s.Set, " "))
	}
	status := ""
	if s.Interrupted {
		status = fmt.Sprintf(" (interrupted: %d of %d seeds)", s.Runs, s.Seeds)
	}
	fmt.Fprintf(tw, "runs\t%d%s\n", s.Runs, status)
	fmt.Fprintf(tw, "failed\t%d\n", s.Failed)
	fmt.Fprintf(tw, "events\t%d\n", s.Events)
	fmt.Fprintf(tw, "simulated time\t%s\n", time.Duration(s.SimSeconds*float64(time.Second)).Round(time.Second))
	fmt.Fprintf(tw, "wall time\t%s\n", time.Duration(s.WallSeconds*float64(time.Second)).Round(time.Millisecond))
	if s.WallSeconds > 0 {
		fmt.Fprintf(tw, "seeds per minute\t%.0f\n", float64(s.Runs)/s.WallSeconds*60)
		fmt.Fprintf(tw, "simulated/wall\t%.0fx\n", s.SimSeconds/s.WallSeconds)
	}
	for _, k := range sortedKeys(s.ByAnomaly) {
		fmt.Fprintf(tw, "failures: %s\t%d\n", k, s.ByAnomaly[k])
	}
	for _, k := range sortedKeys(s.Allowed) {
		fmt.Fprintf(tw, "allowed (runs): %s\t%d\n", k, s.Allowed[k])
	}
	tw.Flush()
	for _, f := range s.Failures {
		line := fmt.Sprintf("seed %d: %s", f.Seed, strings.Join(f.Anomalies, ", "))
		if f.Error != "" {
			line += " error: " + f.Error
		}
		if f.File != "" {
			line += fmt.Sprintf(" -> %s (%d commands, shrunk from %d)", f.File, f.Shrunk, f.Steps)
		}
		fmt.Fprintln(w, line)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeAtomic writes a file in full or not at all: a temporary file in the same
// directory, renamed over the target.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mqsim-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// CreateTemp makes the file private; an output file is as readable as any other.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// progress draws a one-line progress bar on a terminal, and nothing elsewhere.
type progress struct {
	w     io.Writer
	total int
	on    bool
	last  time.Time
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

func (p *progress) update(done, failed int, elapsed time.Duration) {
	if !p.on || (time.Since(p.last) < 100*time.Millisecond && done < p.total) {
		return
	}
	p.last = time.Now()
	const width = 30
	filled := width * done / max(p.total, 1)
	rate := float64(done) / max(elapsed.Seconds(), 1e-9)
	eta := time.Duration(float64(p.total-done)/max(rate, 1e-9)) * time.Second
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d seeds, %.1f/s, %d failed, ETA %s   ", strings.Repeat("=", filled),
		strings.Repeat(" ", width-filled), done, p.total, rate, failed, eta.Round(time.Second))
}

func (p *progress) done() {
	if p.on {
		fmt.Fprintln(p.w)
	}
}
