package main

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mqsim/export"
	"mqsim/export/page"
)

func init() { moreCommands = append(moreCommands, newExportCmd) }

type exportFlags struct {
	q      export.Request
	format string
	out    string
	quiet  bool
}

func newExportCmd() *cobra.Command {
	var f exportFlags
	var formats strings.Builder
	for _, x := range export.Formats {
		fmt.Fprintf(&formats, "  %-10s %s\n", x.Format, x.What)
	}
	cmd := &cobra.Command{
		Use:   "export NAME|FILE --format F",
		Short: "Export a run: a time-space diagram (SVG, Mermaid), its trace, its client history or its metrics",
		Long: `Run a scenario (a catalogue name or a file) and export the run in one format:

` + formats.String() + `
The diagrams need every message, so the scenario runs once more with the world's
message tracing on; nothing else changes (the export checks that).

Without --from and --to, svg draws a slide: a 16:9 picture (1600x900, no text under
20px) of the steps around the moment the verdict's first violation happens (the
acknowledgement or read that breaks it), with a callout on that moment, each replica's
log and HW beside the lanes, and a message's send and receipt on one row when they are
adjacent. --full draws the whole run instead (about 600 events, messages included: the
whole run when it is that short, otherwise a window that starts shortly before the first
violation).

--from and --to choose kernel steps, the step numbers mqsim run prints for a violation
("(step 48)") and mqsim tui shows, for svg, mermaid and jsonl: every event of those
steps, messages included (svg then draws the full diagram of those steps). Without them,
mermaid draws 150 events: the whole run when it is that short, otherwise a window that
starts shortly before the verdict's first violation (the command says which steps). Any window
may be as wide as you like; with only --from or --to, the other end is chosen the same
way. --nodes draws only some nodes' lanes; --hide leaves out messages by type (the
message's Go type: BrokerHeartbeat, Metadata, FetchRequest, ...; a Raft message by its
kind: app, app-resp, vote, ...).

The history formats always export the whole history, and metrics the whole run. The jepsen format names each
topic-partition by a key "t-0" (see the export package's documentation).

-o writes the output to a file, whole or not at all; without it, it goes to stdout.`,
		Example: "  mqsim export acks1-leader-crash --format svg -o slide.svg\n" +
			"  mqsim export acks1-leader-crash --format svg --full -o whole-run.svg\n" +
			"  mqsim export acks1-leader-crash --format svg --from 44 --to 60 --hide BrokerHeartbeat\n" +
			"  mqsim export acks1-leader-crash --format mermaid --nodes p1,b1,b2,b3\n" +
			"  mqsim export acks1-leader-crash --format jepsen -o history.edn\n" +
			"  mqsim export acks1-leader-crash --format porcupine -o lin.html\n" +
			"  mqsim export acks1-leader-crash --format html -o acks1.html\n" +
			"  mqsim export acks1-leader-crash --fix --format metrics -o metrics.csv",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.q.Scenario = args[0]
			f.q.SeedSet = cmd.Flags().Changed("seed")
			return runExport(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "svg", "svg, mermaid, jsonl, history, jepsen, porcupine, html or metrics")
	fl.StringVarP(&f.out, "output", "o", "", "write to this file instead of stdout")
	fl.Uint64Var(&f.q.Seed, "seed", 0, "run seed (default: the scenario's own, else 1)")
	fl.IntVar(&f.q.From, "from", 0, "first kernel step to export (as mqsim run and mqsim tui number them)")
	fl.IntVar(&f.q.To, "to", 0, "last kernel step to export")
	fl.BoolVar(&f.q.Full, "full", false, "svg: draw the whole run rather than a slide of its key moment")
	fl.BoolVar(&f.q.Fix, "fix", false, "apply the settings the scenario names as its fix")
	fl.StringArrayVar(&f.q.Set, "set", nil, "override a cluster setting, KEY=VALUE, or a client's, NAME.KEY=VALUE (repeatable)")
	fl.StringSliceVar(&f.q.Nodes, "nodes", nil, "draw only these nodes (comma-separated)")
	fl.StringSliceVar(&f.q.Hide, "hide", nil, "leave out messages of these types (comma-separated), e.g. BrokerHeartbeat,Metadata")
	fl.DurationVar(&f.q.Budget, "budget", 10*time.Second, "porcupine: wall-clock bound on the linearizability search")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "say nothing on stderr about the window chosen")
	return cmd
}

func runExport(cmd *cobra.Command, f exportFlags) error {
	var err error
	if f.q.Format, err = export.ParseFormat(f.format); err != nil {
		return err
	}
	if f.out != "" {
		if err := checkOutputFile(f.out); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
	}
	if f.q.Budget < 0 {
		return fmt.Errorf("--budget %s: want 0 (no bound) or a positive duration", f.q.Budget)
	}
	f.q.Record = page.Record
	var b bytes.Buffer
	res, err := export.Export(f.q, &b)
	if err != nil {
		return err
	}
	if res.Slide && !f.quiet {
		at := "from the start: the run has no violation and no fault"
		if res.HasMoment {
			at = fmt.Sprintf("around step %d, %s", res.Moment.Step, res.Moment.Callout)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "mqsim export: a %dx%d slide of %s of %d, %s (the whole run: --full)\n",
			export.SlideWidth, export.SlideHeight, res.Window, res.Run.Steps, at)
	} else if res.Defaulted && !f.quiet && (res.Window.From > 1 || res.Window.To < res.Run.Steps) {
		fmt.Fprintf(cmd.ErrOrStderr(), "mqsim export: %s of %d (choose others with --from and --to)\n", res.Window, res.Run.Steps)
	}
	if f.out == "" {
		_, err = cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
	return writeAtomic(f.out, b.Bytes())
}
