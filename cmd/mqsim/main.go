// Command mqsim runs deterministic simulations of distributed message queues: scenario
// files, the built-in catalogue, and (as the project grows) swarms of random fault
// injection runs, a terminal UI and exports.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/queue"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
)

// exitError carries a specific exit status out of a command.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

func main() {
	root := newRoot(os.Stdout, os.Stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mqsim:", err)
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(2)
	}
}

// moreCommands are added by the other files of this package (one file per command
// family), each in its init.
var moreCommands []func() *cobra.Command

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "mqsim",
		Short: "Deterministic simulation and teaching testbed for distributed message queues",
		Long: `mqsim simulates Kafka-style and queue-style message brokers over a virtual clock,
network and disk. One seed decides every event, so every run replays exactly.

Run a built-in scenario with 'mqsim run NAME' (see 'mqsim list'), or your own
scenario file with 'mqsim run FILE'. Predict what happens before you see it with
'mqsim quiz NAME' (or 'mqsim quiz --path interview'); 'mqsim progress' shows how you did. Write code the simulation judges with
'mqsim lab' (labs/NAME/README.md).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCmd(), newListCmd(), newCommandsCmd(), newBugsCmd(), newEventsCmd(), newVersionCmd())
	for _, c := range moreCommands {
		root.AddCommand(c())
	}
	return root
}

func newRunCmd() *cobra.Command {
	var seed uint64
	var quiet, fix bool
	var set []string
	var historyPath string
	cmd := &cobra.Command{
		Use:   "run NAME|FILE",
		Short: "Run a scenario and print its transcript and trace hash",
		Long: `Run a scenario file, or a catalogue scenario by name, and print its transcript:
the file again with the outputs of this run. The last line is the run's trace hash;
the same scenario and seed always give the same hash.

Scenarios that show an anomaly name the settings that prevent it ("fix:" in their
narration); --fix runs them with those settings, --set changes any cluster setting
(NAME.KEY=VALUE: the setting KEY of the client or pipeline named NAME).
--history FILE writes the clients' history as JSON lines, for 'mqsim check FILE': the
producers' and consumers' operations of a log cluster, or the publishers' and
consumers' of a queue broker (queue mode), written whole or not at all.

A long run shows its progress on stderr when that is a terminal; Ctrl-C (or SIGTERM)
stops it after the transcript of what ran.

Exit status: 0 when the run's checks found nothing, 1 when they found a violation,
2 on a bad scenario or usage error, 130 when interrupted.`,
		Example: "  mqsim run acks1-leader-crash\n  mqsim run acks1-leader-crash --fix\n  mqsim run acks1-leader-crash --set acks=all --set min-isr=2\n" +
			"  mqsim run my-scenario.txt --seed 7\n  mqsim run acks1-leader-crash --history h.jsonl && mqsim check h.jsonl",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			script, err := scenarios.Load(args[0])
			if err != nil {
				return err
			}
			opts := runner.Options{Seed: seed, SeedSet: cmd.Flags().Changed("seed"), Set: set}
			if fix {
				if len(script.Fix) == 0 {
					return fmt.Errorf("%s names no fix (no \"fix:\" line in its narration)", script.Name)
				}
				opts.Set = append(slices.Clone(script.Fix), set...)
			}
			out := cmd.OutOrStdout()
			var transcript io.Writer = out
			if quiet {
				transcript = nil
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			progress := newRunProgress(cmd.ErrOrStderr())
			res, err := runner.RunWatched(ctx, script, opts, transcript, progress.update)
			progress.done()
			if errors.Is(err, runner.ErrInterrupted) {
				return exitError{exitInterrupted, fmt.Errorf("%w (the transcript above is what ran)", err)}
			}
			if err != nil {
				return err
			}
			if len(opts.Set) > 0 && !quiet {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: the narration (# lines) was written for the run without --set %s; the outputs are this run's\n", strings.Join(opts.Set, " "))
			}
			if n := len(res.Mismatches); n > 0 && !opts.SeedSet && len(opts.Set) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %d outputs differ from those written in the file (first at %s)\n", n, res.Mismatches[0])
			}
			fmt.Fprintf(out, "\ntrace-hash: %s\n", res.Hash)
			if historyPath != "" {
				if err := writeHistory(historyPath, res.Runner); err != nil {
					return err
				}
			}
			if res.Violations > 0 {
				return exitError{1, fmt.Errorf("the checks found %s", count(res.Violations, "violation"))}
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 0, "run seed (default: the scenario's own, else 1)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the trace hash")
	cmd.Flags().BoolVar(&fix, "fix", false, "apply the settings the scenario names as its fix")
	cmd.Flags().StringArrayVar(&set, "set", nil, "override a cluster setting, KEY=VALUE, or a client's, NAME.KEY=VALUE (repeatable)")
	cmd.Flags().StringVar(&historyPath, "history", "", "write the clients' history to this file (JSON lines)")
	return cmd
}

// writeHistory writes the run's client history as JSON lines, whole or not at all: the
// log cluster's or a queue broker's, under a header line naming which, so that 'mqsim
// check' needs no --mode.
func writeHistory(path string, r *runner.Runner) error {
	sys := r.System()
	if sys == nil {
		return fmt.Errorf("--history: the scenario starts no cluster and no queue broker, so it has no client history")
	}
	file := history.File{System: sys.Kind().HistorySystem(), Ops: sys.History()}
	var b bytes.Buffer
	if err := history.WriteFile(&b, file); err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	if err := writeAtomic(path, b.Bytes()); err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	return nil
}

func newCommandsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "commands",
		Short: "List the commands a scenario file can use, and the cluster settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			for _, c := range runner.Commands() {
				fmt.Fprintf(out, "%s\n    %s\n", c.Usage, c.Help)
			}
			fmt.Fprintf(out, "\nSettings of the cluster command (Kafka's names in the help):\n%s", runner.ClusterSettingsHelp())
			return nil
		},
	}
}

func newBugsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bugs",
		Short: "List the bugs a scenario can plant for the checkers to catch",
		Long: `List the deliberate, realistic mistakes that a scenario can plant in the brokers
(cluster bugs=(NAME, ...)) to see the checkers catch them, and those it can plant in
the queue broker (queue-broker bugs=(NAME, ...)). All are off by default.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, b := range proto.BugList {
				fmt.Fprintf(tw, "%s\t%s\n", b.Name, b.What)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\nIn the queue broker (queue-broker bugs=(NAME, ...)):\n")
			for _, b := range queue.BugList {
				fmt.Fprintf(tw, "%s\t%s\n", b.Name, b.What)
			}
			return tw.Flush()
		},
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mqsim's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			version, rev := "devel", ""
			if bi, ok := debug.ReadBuildInfo(); ok {
				if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
					version = bi.Main.Version
				}
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						rev = " " + s.Value
					}
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mqsim %s%s\n", version, rev)
		},
	}
}

// count says n things, in the singular when n is 1: "1 violation", "3 violations".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
