package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"mqsim/labs"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/scenarios/swarm"
	"mqsim/tui"
)

func init() { moreCommands = append(moreCommands, newLabCmd) }

// labFlags are mqsim lab's options.
type labFlags struct {
	seeds      int
	start      uint64
	solution   bool
	openTUI    bool
	out        string
	shrinkRuns int
	code       string // a folder with the learner's code, outside the clone's starter
}

func newLabCmd() *cobra.Command {
	var f labFlags
	cmd := &cobra.Command{
		Use:   "lab [NAME]",
		Short: "Run a lab: your own code, judged by a swarm of random runs",
		Long: `A lab is an exercise in which your own Go code runs inside the simulation:
labs/NAME/README.md states the task and the property the checker judges. Your code
is compiled in: edit labs/NAME/starter in your clone of mqsim and run

  go run ./cmd/mqsim lab NAME

mqsim lab first checks your code for the simulation's determinism rules (no
goroutines, channels, select, clock, os, net, sync, math/rand, map ranges,
package-level variables; each breach named by file and line), then runs --seeds
random runs of the lab's world on it (a cluster, faults, your code) and stops at the
first that fails: it shrinks that run to a small scenario, prints what the checker
found and writes the scenario to a file that mqsim run and mqsim tui replay. --tui
opens it at the step where it broke.
--solution runs the reference solution instead (labs/NAME/solution: read it after).
--code DIR runs the Go files of DIR (package starter) in place of labs/NAME/starter:
mqsim builds itself again with them (go run -overlay), so it needs the go tool and
runs inside your clone.

Without NAME it lists the labs.`,
		Example: "  mqsim lab\n  go run ./cmd/mqsim lab idempotent-consumer\n  go run ./cmd/mqsim lab idempotent-consumer --code ~/my-lab\n  go run ./cmd/mqsim lab idempotent-consumer --tui\n  mqsim lab idempotent-consumer --solution --seeds 2000",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listLabs(cmd.OutOrStdout())
			}
			if f.seeds < 1 || f.seeds > 1_000_000 {
				return fmt.Errorf("--seeds %d: want 1 to 1000000", f.seeds)
			}
			l, err := labs.Find(args[0])
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			if f.code != "" {
				return runLabCode(ctx, l, f.code, f)
			}
			return runLab(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), l, f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.seeds, "seeds", 200, "how many random runs (seeds start, start+1, ...)")
	fl.Uint64Var(&f.start, "start", 1, "the first seed")
	fl.BoolVar(&f.solution, "solution", false, "run the reference solution instead of your code (labs/NAME/solution)")
	fl.BoolVar(&f.openTUI, "tui", false, "open the smallest failing run in the TUI, at the step where it broke")
	fl.StringVar(&f.out, "out", "", "where to write the failing scenario (default lab-NAME-seed-S.txt)")
	fl.IntVar(&f.shrinkRuns, "shrink-runs", 300, "how many candidate runs the shrinker may try")
	fl.StringVar(&f.code, "code", "", "run the Go files of this folder (package starter) instead of labs/NAME/starter: builds mqsim with them (needs the go tool; run inside your clone)")
	return cmd
}

func listLabs(out io.Writer) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, l := range labs.All() {
		fmt.Fprintf(tw, "%s\tabout %d min\t%s\n", l.Name, l.Minutes, l.Summary)
	}
	fmt.Fprintln(tw, "\nRead labs/NAME/README.md, edit labs/NAME/starter, then: go run ./cmd/mqsim lab NAME")
	return tw.Flush()
}

// runLab checks the code, runs the seeds and reports the first failure, shrunk.
func runLab(ctx context.Context, out, errOut io.Writer, l labs.Lab, f labFlags) error {
	code := labs.Starter
	if f.solution {
		code = labs.Solution
	}
	problems, err := l.Check(code)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return determinismError(problems)
	}
	fmt.Fprintf(out, "lab %s, %s code: %d seeds from %d\n", l.Name, code, f.seeds, f.start)
	for i := 0; i < f.seeds; i++ {
		if ctx.Err() != nil {
			return exitError{exitInterrupted, fmt.Errorf("interrupted after %d seeds", i)}
		}
		seed := f.start + uint64(i)
		if isTerminal(errOut) {
			fmt.Fprintf(errOut, "\rseed %d (%d/%d)", seed, i+1, f.seeds)
		}
		res := l.RunSeed(seed, code)
		if !res.Failed() {
			continue
		}
		if isTerminal(errOut) {
			fmt.Fprintln(errOut)
		}
		return labFailure(ctx, out, l, res, f)
	}
	if isTerminal(errOut) {
		fmt.Fprintln(errOut)
	}
	fmt.Fprintf(out, "all %d seeds pass: the checker found nothing.\n", f.seeds)
	return nil
}

// labFailure shrinks a failing seed, prints what it found, writes the scenario and, with
// --tui, opens it at the step of its first violation.
func labFailure(ctx context.Context, out io.Writer, l labs.Lab, res labs.Result, f labFlags) error {
	if res.Err != nil {
		return fmt.Errorf("seed %d: the run stopped: %w", res.Seed, res.Err)
	}
	before := swarm.CountSteps(res.Script)
	fmt.Fprintf(out, "seed %d fails (%s); shrinking its %d commands...\n", res.Seed, labAnomalies(res), before)
	shrunk := labs.Shrink(ctx, res, f.shrinkRuns)
	small := swarm.RunScript("shrunk", shrunk.Text)
	if !small.Failed() { // the shrinker keeps only failing candidates: the original if none
		small = res
	}
	fmt.Fprintf(out, "shrunk to %d commands in %d runs:\n\n", swarm.CountSteps(shrunk.Text), shrunk.Runs)
	fmt.Fprint(out, indent(shrunk.Text))
	fmt.Fprintln(out, "\nwhat the checker found:")
	for _, v := range small.Report.Violations {
		if !slices.Contains(small.Failures, v.Anomaly) {
			continue // what the lab's cluster allows (ordered-retries: duplicates without idempotence)
		}
		fmt.Fprintf(out, "  step %d: %s: %s\n", v.Step, v.Anomaly, v.Text)
	}
	for _, n := range small.Report.Notes {
		if n.Checker == l.Name {
			fmt.Fprintf(out, "  %s\n", n.Text)
		}
	}
	path := f.out
	if path == "" {
		path = fmt.Sprintf("lab-%s-seed-%d.txt", l.Name, res.Seed)
	}
	header := fmt.Sprintf("# Lab %s: seed %d failed (%s), shrunk from %d to %d commands.\n# Replay: mqsim run FILE, or mqsim tui FILE.\n#\n",
		l.Name, res.Seed, labAnomalies(res), before, swarm.CountSteps(shrunk.Text))
	if err := writeAtomic(path, []byte(header+withOutputs(shrunk.Text))); err != nil {
		return err
	}
	step := uint64(0)
	if v, ok := labs.FirstFailure(small); ok {
		step = v.Step
	}
	fmt.Fprintf(out, "\nwritten to %s; step through it where it broke:\n  go run ./cmd/mqsim tui %s --step %d\n", path, path, step)
	if f.openTUI {
		if err := openLabTUI(ctx, path, step); err != nil {
			return err
		}
	}
	return exitError{exitInvalid, fmt.Errorf("lab %s: seed %d fails", l.Name, res.Seed)}
}

// determinismError lists the breaches of the determinism rules, one a line.
func determinismError(problems []labs.Problem) error {
	var b strings.Builder
	fmt.Fprintf(&b, "your code breaks the simulation's determinism rules (%s):\n", plural(len(problems), "problem"))
	for _, p := range problems {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return exitError{exitBadInput, errors.New(strings.TrimRight(b.String(), "\n"))}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func labAnomalies(res labs.Result) string {
	var names []string
	for _, a := range res.Failures {
		names = append(names, string(a))
	}
	return strings.Join(names, ", ")
}

func indent(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line == "" || line == "----" {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", line)
	}
	return b.String()
}

// openLabTUI opens the scenario at path in the TUI at step, as mqsim tui FILE --step S
// would.
func openLabTUI(ctx context.Context, path string, step uint64) error {
	uiOpts := tui.Options{NoColor: os.Getenv("NO_COLOR") != ""}
	m, err := labTUIModel(ctx, path, step, uiOpts)
	if err != nil {
		return err
	}
	_, err = tea.NewProgram(m, tui.ProgramOptions(uiOpts)...).Run()
	return err
}

// labTUIModel records the run of the scenario at path and places the TUI at step.
func labTUIModel(ctx context.Context, path string, step uint64, uiOpts tui.Options) (tui.Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tui.Model{}, err
	}
	s, err := script.Parse(path, string(data))
	if err != nil {
		return tui.Model{}, err
	}
	run, err := tui.RecordWatched(ctx, "main", s, runner.Options{}, nil)
	if err != nil {
		return tui.Model{}, err
	}
	m := tui.New(run, uiOpts)
	if i := run.EventAtStep(step); step > 0 && i >= 0 {
		m = m.At(i)
	}
	return m, nil
}
