package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/spf13/cobra"

	"mqsim/gateway"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/tui"
)

func init() { moreCommands = append(moreCommands, newTUICmd) }

func newTUICmd() *cobra.Command {
	var seed uint64
	var noColor, presenter, fix, print bool
	var set []string
	var step, width, height int
	cmd := &cobra.Command{
		Use:   "tui [NAME|FILE|SESSION]",
		Short: "Step through a scenario's run in a terminal UI, and break it on purpose",
		Long: `Open a scenario (a catalogue name or a file; acks1-leader-crash by default) in a
terminal UI: its trace event by event, forwards and backwards, with the cluster (brokers
and replicas; in queue mode, the queue nodes, each queue's leader, messages, consumers'
prefetch windows and exchanges), the clients, the network, each event in plain words and
what the checkers found.

At any step, x adds a fault (crash b1, crash q2, cut b1 <-> b2, pause c1, drop-next b1 -> b2,
...) at that moment: the run forks and replays with it; w saves the fork as a scenario file.
p turns presenter mode on: narration, and pgdn or . for the next narrated point.
? shows every key. NO_COLOR or --no-color turns colours off.

A session file of mqsim serve (SESSION) opens the run its real clients made: the
scenario, then each of their requests and the operator's commands at the step they
arrived, replayed; the Checks pane holds the verdict mqsim serve printed. Such a run
does not fork.

--print renders one screen as plain text and exits (for docs and terminals without a
TTY).`,
		Example: "  mqsim tui\n  mqsim tui acks1-leader-crash --presenter\n  mqsim tui rabbit-quorum-leader-crash\n  mqsim tui my-scenario.txt --seed 7\n  mqsim tui acks1-leader-crash --print --step 52",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "acks1-leader-crash"
			if len(args) == 1 {
				name = args[0]
			}
			if err := checkScreen(print, width, height, step); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd.Context())
			progress := newRunProgress(cmd.ErrOrStderr())
			watch := func(p tui.Progress) { progress.update(p.Steps, p.Now) }
			var run *tui.Run
			var err error
			if isSessionFile(name) {
				if fix || len(set) > 0 || cmd.Flags().Changed("seed") {
					stop()
					return fmt.Errorf("%s is a session of mqsim serve: it replays as it was served, without --seed, --set or --fix", name)
				}
				var sess *gateway.Session
				if sess, err = gateway.LoadSession(name); err == nil {
					run, err = tui.RecordSession(ctx, "main", sess, watch)
				}
			} else {
				run, err = recordScenario(ctx, name, runner.Options{Seed: seed, SeedSet: cmd.Flags().Changed("seed"), Set: set}, fix, watch)
			}
			progress.done()
			stop()
			if err != nil {
				return err
			}
			if errors.Is(run.Err, runner.ErrInterrupted) {
				return exitError{exitInterrupted, run.Err}
			}
			if run.Err != nil && run.Len() == 0 {
				// Nothing to step through (a bad --set stops the first command): say why.
				return run.Err
			}
			// --step is a kernel step, as mqsim run numbers them: its bound is the last
			// traced step, not the number of trace events.
			if n := run.Len(); step > 0 && (n == 0 || uint64(step) > run.Events[n-1].Step) {
				last := uint64(0)
				if n > 0 {
					last = run.Events[n-1].Step
				}
				return fmt.Errorf("--step %d: the run has %d kernel steps", step, last)
			}
			uiOpts := tui.Options{NoColor: noColor || os.Getenv("NO_COLOR") != "", Presenter: presenter}
			m := tui.New(run, uiOpts)
			if step > 0 {
				i := run.EventAtStep(uint64(step))
				if i < 0 {
					return fmt.Errorf("--step %d: the run's trace ends before that step", step)
				}
				m = m.At(i)
			}
			if print {
				m = m.WithSize(width, height)
				fmt.Fprintln(cmd.OutOrStdout(), ansi.Strip(m.Render()))
				return nil
			}
			p := tea.NewProgram(m, tui.ProgramOptions(uiOpts)...)
			_, err = p.Run()
			return err
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 0, "run seed (default: the scenario's own, else 1)")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "no colours (also when NO_COLOR is set)")
	cmd.Flags().BoolVar(&presenter, "presenter", false, "start in presenter mode")
	cmd.Flags().BoolVar(&fix, "fix", false, "apply the settings the scenario names as its fix")
	cmd.Flags().StringArrayVar(&set, "set", nil, "override a cluster setting, KEY=VALUE, or a client's, NAME.KEY=VALUE (repeatable)")
	cmd.Flags().BoolVar(&print, "print", false, "print one screen as plain text and exit")
	cmd.Flags().IntVar(&step, "step", 0, "start at this step (the kernel step, as mqsim run numbers them)")
	cmd.Flags().IntVar(&width, "width", 80, "with --print: screen width")
	cmd.Flags().IntVar(&height, "height", 24, "with --print: screen height")
	return cmd
}

// recordScenario records a scenario's run for the TUI, with its fix's settings if asked.
func recordScenario(ctx context.Context, name string, opts runner.Options, fix bool, watch func(tui.Progress)) (*tui.Run, error) {
	script, err := scenarios.Load(name)
	if err != nil {
		return nil, err
	}
	if fix {
		if len(script.Fix) == 0 {
			return nil, fmt.Errorf("%s names no fix (no \"fix:\" line in its narration)", script.Name)
		}
		opts.Set = append(slices.Clone(script.Fix), opts.Set...)
	}
	return tui.RecordWatched(ctx, "main", script, opts, watch)
}

// isSessionFile reports whether path is a file holding a session of mqsim serve (a JSON
// object), not a scenario file.
func isSessionFile(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// maxScreen bounds --width and --height of --print: a screen is drawn in memory whole.
const maxScreen = 1000

// checkScreen checks the numeric flags of mqsim tui before anything runs.
func checkScreen(print bool, width, height, step int) error {
	if step < 0 {
		return fmt.Errorf("--step %d: want a step number, from 1", step)
	}
	if !print {
		return nil
	}
	if width < 20 || width > maxScreen || height < 5 || height > maxScreen {
		return fmt.Errorf("--width %d --height %d: want a width of 20 to %d and a height of 5 to %d", width, height, maxScreen, maxScreen)
	}
	return nil
}
