package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	jsonOut           string // "" none, "-" standard output, else a file
	noShrink          bool
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
only violations the settings do not allow count), queue (the RabbitMQ-style
queue broker: quorum queues, publisher confirms, manual acks, exchanges, consumers
with prefetch; faults include consumer crashes and slow consumers; a confirmed
message never processed, or enqueued twice, is a bug; redeliveries and reorders
are allowed) and txn (the safe settings with transactions: transactional producers
that commit or abort at random, read_committed and read_uncommitted consumers, a
transactional consume-transform-produce pipeline held to exactly-once; faults
include crashes of a transaction coordinator's broker, producer and pipeline crashes
and takeovers by a new instance with the same transactional.id, and lost, delayed or
duplicated transaction messages; the liveness phase ends every transaction and reads
every topic at read_committed) and share (the safe settings with share groups,
KIP-932: share consumers in one or two groups, explicit and implicit
acknowledgement, poison records, consumers slower than a lowered record lock
duration; faults include crashes of a share-partition's leader and of its share
coordinator, consumer crashes, pauses, closes and joins, and lost, delayed or
duplicated ShareFetch, ShareAcknowledge and share-state messages; the liveness phase
drains every group, and an acknowledged record never settled, one delivered beyond
the delivery count limit, or again after an accept, is a bug). --bug plants one of
the bugs mqsim bugs lists: the log brokers' (safe, any, txn or share profile) or the
queue broker's (queue profile). --set adds a cluster setting to
every run: a legacy replication switch (isr-expand=hw) or kafka-version=2.0, which
mqsim commands lists; with one of them on, a lost or diverged write is a failure.

For each failing seed, a shrunk scenario file that still fails goes to --out, ready
for 'mqsim run FILE' and 'mqsim tui FILE'. --shard I/N runs every N-th seed starting
at the I-th, so N machines together cover exactly the unsharded run; so do N machines
given consecutive ranges with --start and --seeds. --json prints the summary as JSON;
--json=FILE writes it to FILE (and prints the text summary), naming the shrunk files
relative to FILE's directory, and 'mqsim swarm merge' combines such files.

Seeds are drawn one at a time and only the failing ones are kept, so --seeds may be
as large as you like. Ctrl-C or SIGTERM stops cleanly: the runs under way finish, the
summary so far is printed, and the failing seeds found so far are written to --out
(as generated if the stop came before shrinking; shrinking stops with what it has).


Exit status: 0 when no run failed, 1 when one did, 2 on a usage error, 130 when
interrupted before any run failed.`,
		Example: "  mqsim swarm --seeds 200\n  mqsim swarm --seeds 500 --bug hw-from-leader-only --out failures\n" +
			"  mqsim swarm --seeds 10000 --shard 3/8 --json\n  mqsim swarm --seeds 12500 --start 25001 --json=out/shard-2.json --out out/failures\n" +
			"  mqsim swarm --profile queue --seeds 10000 --out failures\n  mqsim swarm --profile txn --seeds 500 --bug lso-from-hw\n" +
			"  mqsim swarm --profile share --seeds 500 --bug share-lock-never-expires",
		Args: noArgsBesideJSON,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSwarm(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.seeds, "seeds", 100, "number of seeds to run")
	fl.Uint64Var(&f.start, "start", 1, "first seed")
	fl.IntVar(&f.workers, "workers", 0, "parallel workers (default: GOMAXPROCS, the CPUs the process may use, a container's limit included)")
	fl.StringVar(&f.profile, "profile", "safe", "safe, any, queue (the RabbitMQ-style queue broker), txn (transactions) or share (share groups)")
	fl.StringVar(&f.bug, "bug", "", "plant a bug in every run (see mqsim bugs)")
	fl.StringArrayVar(&f.set, "set", nil, "add a cluster setting to every run, KEY=VALUE (repeatable), e.g. isr-expand=hw")
	fl.StringVar(&f.shard, "shard", "", "I/N: run only seeds start+I, start+I+N, ...")
	fl.StringVar(&f.out, "out", "", "directory for the failing seeds' shrunk scenario files")
	jsonFlag(fl, &f.jsonOut)
	fl.BoolVar(&f.noShrink, "no-shrink", false, "write failing scenarios as generated, without shrinking")
	fl.IntVar(&f.shrinkRuns, "shrink-runs", 500, "at most this many runs to shrink one failure")
	cmd.AddCommand(newSwarmMergeCmd())
	return cmd
}

// jsonFlag declares --json, alone for standard output or --json=FILE.
func jsonFlag(fl *pflag.FlagSet, to *string) {
	fl.StringVar(to, "json", "", "print the summary as JSON; --json=FILE writes it to FILE")
	fl.Lookup("json").NoOptDefVal = "-"
}

// noArgsBesideJSON refuses arguments, explaining the likeliest one: a file meant for
// --json, whose value must follow an equals sign since --json alone is valid too.
func noArgsBesideJSON(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected argument %q (to write the JSON summary to a file, say --json=FILE)", args[0])
	}
	return nil
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

// shardSeeds yields the seeds of shard i of n among count seeds from start, one at a
// time: a swarm of 2^63 seeds needs no list of them.
func shardSeeds(start uint64, count, i, n int) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for k := i; k < count; k += n {
			if !yield(start + uint64(k)) {
				return
			}
			if k > count-n {
				return // k+n would overflow
			}
		}
	}
}

// swarmPlan is the seeds a swarm was asked to run: of the Count seeds from Start, those
// of shard Shard of Shards (every Shards-th from Start+Shard), in that order. Seeds are
// handed to the workers in that order and a run under way always finishes, so a swarm
// that stopped early ran the first Runs seeds of its plan.
type swarmPlan struct {
	Start  uint64 `json:"start"`
	Count  int    `json:"count"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
}

func (p swarmPlan) seeds() iter.Seq[uint64] { return shardSeeds(p.Start, p.Count, p.Shard, p.Shards) }

// shardSize is how many seeds shard i of n has among count.
func shardSize(count, i, n int) int { return (count - i + n - 1) / n }

// swarmSummary is what a swarm prints at the end (and as JSON).
type swarmSummary struct {
	Profile     string             `json:"profile"`
	Bug         string             `json:"bug,omitempty"`
	Plan        swarmPlan          `json:"plan"`
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
	// File is the shrunk scenario; in a summary written with --json=FILE, relative to
	// FILE's directory.
	File string `json:"file,omitempty"`
}

// validate checks every numeric flag: none has a silent default for a value out of range.
func (f swarmFlags) validate() error {
	if f.seeds < 1 {
		return fmt.Errorf("--seeds %d: want at least 1", f.seeds)
	}
	if f.start > math.MaxUint64-uint64(f.seeds-1) {
		return fmt.Errorf("--start %d --seeds %d: the last seed would pass %d, the largest seed", f.start, f.seeds, uint64(math.MaxUint64))
	}
	if f.workers < 0 || f.workers > maxWorkers {
		return fmt.Errorf("--workers %d: want 0 (one per CPU) to %d", f.workers, maxWorkers)
	}
	if f.shrinkRuns < 0 {
		return fmt.Errorf("--shrink-runs %d: want 0 (write failures as generated) or more", f.shrinkRuns)
	}
	return nil
}

// maxWorkers bounds --workers: each worker holds one run in memory.
const maxWorkers = 1024

// swarmTally is what a swarm keeps while it runs: counts, and the failing seeds only.
type swarmTally struct {
	sum      swarmSummary
	failures []swarm.SeedResult
}

func (t *swarmTally) add(r swarm.SeedResult) {
	t.sum.Runs++
	t.sum.Events += r.Events
	t.sum.SimSeconds += r.SimTime.Seconds()
	for _, a := range r.Allowed {
		t.sum.Allowed[string(a)]++
	}
	if r.Failed() {
		t.sum.Failed++
		t.failures = append(t.failures, r)
	}
}

func runSwarm(cmd *cobra.Command, f swarmFlags) error {
	opts := swarm.Options{Profile: swarm.Profile(f.profile), Bug: f.bug, Set: f.set}
	if err := opts.Validate(); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	si, sn, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	workers := f.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
	}
	relaxGC()
	ctx, stop := interruptible(cmd.Context())
	defer stop()

	started := time.Now()
	total := shardSize(f.seeds, si, sn)
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
		for s := range shardSeeds(f.start, f.seeds, si, sn) {
			select {
			case next <- s:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	progress := newProgress(cmd.ErrOrStderr(), total)
	tally := swarmTally{sum: swarmSummary{Profile: f.profile, Bug: f.bug, Seeds: total, ByAnomaly: map[string]int{}, Allowed: map[string]int{}}}
	for r := range results {
		tally.add(r)
		progress.update(tally.sum.Runs, tally.sum.Failed, time.Since(started))
	}
	progress.done()
	sum := tally.sum
	sum.Plan = swarmPlan{Start: f.start, Count: f.seeds, Shard: si, Shards: sn}
	sum.Set = f.set
	sum.Interrupted = ctx.Err() != nil
	slices.SortFunc(tally.failures, func(a, b swarm.SeedResult) int { return cmp.Compare(a.Seed, b.Seed) })
	for _, r := range tally.failures {
		info, err := reportFailure(ctx, r, f)
		if err != nil {
			return err
		}
		for _, a := range info.Anomalies {
			sum.ByAnomaly[a]++
		}
		if info.Error != "" {
			sum.ByAnomaly["error"]++
		}
		sum.Failures = append(sum.Failures, info)
	}
	sum.WallSeconds = time.Since(started).Seconds()
	if err := emitSummary(cmd.OutOrStdout(), f.jsonOut, sum); err != nil {
		return err
	}
	if sum.Failed > 0 {
		return exitError{1, fmt.Errorf("%d of %d runs failed", sum.Failed, sum.Runs)}
	}
	if sum.Interrupted {
		return exitError{exitInterrupted, errors.New("interrupted")}
	}
	return nil
}

// emitSummary prints the summary as text, or as JSON when jsonOut is "-"; with a file
// name it writes the JSON there, with the shrunk files named relative to it, and prints
// the text.
func emitSummary(out io.Writer, jsonOut string, sum swarmSummary) error {
	if jsonOut == "" || jsonOut == "-" {
		if jsonOut == "" {
			printSummary(out, sum)
			return nil
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	printSummary(out, sum)
	dir, err := filepath.Abs(filepath.Dir(jsonOut))
	if err != nil {
		return err
	}
	rel := sum
	rel.Failures = slices.Clone(sum.Failures)
	for i, fi := range rel.Failures {
		if fi.File == "" {
			continue
		}
		abs, err := filepath.Abs(fi.File)
		if err != nil {
			return err
		}
		if rel.Failures[i].File, err = filepath.Rel(dir, abs); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(rel, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeAtomic(jsonOut, append(data, '\n'))
}

// relaxGC lets the heap grow to five times the live data before a collection, unless
// GOGC says otherwise. A seed's world is small and short-lived, so with Go's default the
// collector runs so often that it costs a sixth of a swarm's CPU time; the larger heap
// is a few tens of megabytes. No result depends on it.
func relaxGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// reportFailure describes one failing seed and, with --out, writes its scenario file:
// shrunk unless --no-shrink, the run ended in an error, or the swarm was interrupted
// (ctx done: shrinking then stops with what it has, so the file is written at once).
func reportFailure(ctx context.Context, r swarm.SeedResult, f swarmFlags) (swarmFailureInfo, error) {
	info := swarmFailureInfo{Seed: r.Seed, Steps: swarm.CountSteps(r.Script)}
	for _, a := range r.Failures {
		info.Anomalies = append(info.Anomalies, string(a))
	}
	if r.Err != nil {
		info.Error = r.Err.Error()
	}
	if f.out == "" {
		return info, nil
	}
	text := r.Script
	if !f.noShrink && r.Err == nil && ctx.Err() == nil {
		shrunk := swarm.ShrinkWatched(ctx, r.Script, r.Failures, f.shrinkRuns)
		info.Shrunk = swarm.CountSteps(shrunk.Text)
		text = shrinkHeader(r, info, shrunk) + withOutputs(shrunk.Text)
	}
	info.File = filepath.Join(f.out, fmt.Sprintf("seed-%d.txt", r.Seed))
	if err := writeAtomic(info.File, []byte(text)); err != nil {
		return info, err
	}
	return info, nil
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
	if err := checkOutputFile(path); err != nil {
		return err
	}
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

// checkOutputFile refuses, before any work, a path that cannot become a file: a directory,
// or one in a directory that does not exist.
func checkOutputFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: give a file name, e.g. %s", path, filepath.Join(path, "out.txt"))
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: no directory %s to write it in", path, filepath.Dir(path))
	}
	return nil
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
