package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mqsim/checker"
	"mqsim/model/history"
)

func init() { moreCommands = append(moreCommands, newCheckCmd) }

type checkFlags struct {
	json, linearizable         bool
	html, color                string
	mode, order, promise       string
	budget                     time.Duration
	healedAt, unseen, liveness time.Duration
	allow                      []string
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Judge a client history (JSON lines) and print the checkers' report",
		Long: `Read a client history in JSON lines (the format of 'mqsim run NAME --history FILE',
documented in model/history) and judge it: the queue anomalies (lost-write,
duplicate, inconsistent-offsets, unseen, poll-skip, ...), delivery counts, and
linearizability of each partition against a sequential log (porcupine), within
--budget of wall time; a search that runs out says "unknown", never "valid".

--live-within D adds the liveness check: every reader active after --healed-at
must read every acknowledged value within D of max(its ack, --healed-at).
--unseen-within D bounds Jepsen's unseen rule the same way.

A queue broker's history (queue mode: 'mqsim run' of a queue-broker scenario; each
poll names the queue it read from, sends learn no offsets) is recognised and judged
as the scenario's own check command judges it: every confirmed message processed
(unseen, lost-write), nothing enqueued twice (duplicate), nothing processed that was
not sent or was refused; --promise and --order say what the queues promise
(redeliveries and reorders are allowed by default). --mode log or --mode queue
overrides the recognition.

The report is plain text, coloured on a terminal (--color), or JSON (--json).
--html FILE writes porcupine's interactive visualisation of the linearizability
search. Output files are written whole or not at all.

Exit status: 0 when the checkers found no violation, 1 when they found one, 2 on
unreadable or invalid input (reported as FILE:LINE) or a usage error.`,
		Example: "  mqsim run acks1-leader-crash --history h.jsonl; mqsim check h.jsonl\n" +
			"  mqsim check h.jsonl --json\n  mqsim check h.jsonl --html lin.html --budget 30s\n" +
			"  mqsim check h.jsonl --healed-at 12s --live-within 10s",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.StringVar(&f.html, "html", "", "write porcupine's visualisation to this file")
	fl.DurationVar(&f.budget, "budget", 10*time.Second, "wall-clock bound on the linearizability search (0: none)")
	fl.BoolVar(&f.linearizable, "linearizable", true, "check linearizability (--linearizable=false skips it)")
	fl.StringVar(&f.color, "color", "auto", "colour the text report: auto (on a terminal), always or never")
	fl.DurationVar(&f.healedAt, "healed-at", 0, "virtual time the faults ended, for --live-within and --unseen-within")
	fl.DurationVar(&f.liveness, "live-within", 0, "liveness bound: every reader reads every acknowledged value within it")
	fl.DurationVar(&f.unseen, "unseen-within", 0, "unseen bound: every acknowledged value is read within it")
	fl.StringArrayVar(&f.allow, "allow", nil, "report this anomaly as allowed, not a violation (repeatable), e.g. poll-skip")
	fl.StringVar(&f.mode, "mode", "auto", "auto (recognise the history), log or queue")
	fl.StringVar(&f.promise, "promise", "at-least-once", "queue mode: at-least-once or exactly-once (redeliveries are violations)")
	fl.StringVar(&f.order, "order", "none", "queue mode: the order the queues promise: none, key or queue")
	return cmd
}

func runCheck(cmd *cobra.Command, path string, f checkFlags) error {
	if f.color != "auto" && f.color != "always" && f.color != "never" {
		return exitError{2, fmt.Errorf("--color=%s: want auto, always or never", f.color)}
	}
	if f.html != "" && !f.linearizable {
		return exitError{2, errors.New("--html shows the linearizability search: it needs --linearizable")}
	}
	if f.mode != "auto" && f.mode != "log" && f.mode != "queue" {
		return exitError{2, fmt.Errorf("--mode=%s: want auto, log or queue", f.mode)}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--budget", f.budget}, {"--healed-at", f.healedAt}, {"--live-within", f.liveness}, {"--unseen-within", f.unseen}} {
		if d.v < 0 {
			return exitError{2, fmt.Errorf("%s %s: want 0 or a positive duration", d.flag, d.v)}
		}
	}
	if f.html != "" {
		if err := checkOutputFile(f.html); err != nil {
			return exitError{2, fmt.Errorf("--html: %w", err)}
		}
	}
	h, err := readHistory(path)
	if err != nil {
		return exitError{2, err}
	}
	queueMode := f.mode == "queue" || (f.mode == "auto" && checker.LooksLikeQueueMode(h))
	if f.mode == "auto" && queueMode {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is a queue broker's history (its polls name their queues); judged in queue mode\n", path)
	}
	if queueMode {
		rep, err := checkQueueMode(h, f)
		if err != nil {
			return err
		}
		return printReport(cmd, path, rep, f)
	}
	if cmd.Flags().Changed("promise") || cmd.Flags().Changed("order") {
		return exitError{2, errors.New("--promise and --order judge a queue broker's history; this one is a log's (--mode queue to insist)")}
	}
	opts := checker.Options{}
	for _, a := range f.allow {
		opts.Log.Allow = append(opts.Log.Allow, checker.Anomaly(a))
	}
	if f.unseen > 0 {
		opts.Log.Unseen = checker.UnseenRule{After: int64(f.healedAt), Within: int64(f.unseen)}
	}
	if f.liveness > 0 {
		opts.Liveness = &checker.LivenessOptions{HealedAt: int64(f.healedAt), Within: int64(f.liveness)}
	}
	var html bytes.Buffer
	if f.linearizable {
		opts.Linearizability = &checker.LinearizabilityOptions{Budget: f.budget}
		if f.html != "" {
			opts.Linearizability.HTML = &html
		}
	}
	rep, err := checker.Check(h, opts)
	if err != nil {
		return exitError{2, fmt.Errorf("%s: %w", path, err)}
	}
	if f.html != "" {
		if err := writeAtomic(f.html, html.Bytes()); err != nil {
			return exitError{2, fmt.Errorf("--html: %w", err)}
		}
	}
	return printReport(cmd, path, rep, f)
}

// checkQueueMode judges a queue broker's history as the scenario's check command does.
func checkQueueMode(h history.History, f checkFlags) (checker.Report, error) {
	if f.html != "" || f.liveness > 0 {
		return checker.Report{}, exitError{2, errors.New("--html and --live-within judge a log's partitions; a queue broker's history has none (use --unseen-within)")}
	}
	opts := checker.QueueOptions{}
	for _, a := range f.allow {
		opts.Allow = append(opts.Allow, checker.Anomaly(a))
	}
	if f.unseen > 0 {
		opts.Unseen = checker.UnseenRule{After: int64(f.healedAt), Within: int64(f.unseen)}
	}
	var err error
	if opts.Promise, err = checker.ParseQueuePromise(f.promise); err != nil {
		return checker.Report{}, exitError{2, fmt.Errorf("--promise: %w", err)}
	}
	if opts.Order, err = checker.ParseOrderRule(f.order); err != nil {
		return checker.Report{}, exitError{2, fmt.Errorf("--order: %w", err)}
	}
	rep, err := checker.CheckQueue(h, opts)
	if err != nil {
		return checker.Report{}, exitError{2, err}
	}
	return rep, nil
}

// printReport prints a report as text or JSON; violations make the exit status 1.
func printReport(cmd *cobra.Command, path string, rep checker.Report, f checkFlags) error {
	var err error
	out := cmd.OutOrStdout()
	if f.json {
		err = rep.WriteJSON(out)
	} else {
		text := rep.String()
		if colorOn(out, f.color) {
			text = colorize(text)
		}
		_, err = io.WriteString(out, text)
	}
	if err != nil {
		return err
	}
	if n := len(rep.Violations); n > 0 {
		return exitError{1, fmt.Errorf("%s: %d violations", path, n)}
	}
	return nil
}

// readHistory reads a JSON-lines history, naming the file and line of any error.
func readHistory(path string) (history.History, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	h, err := history.ReadJSONLines(file)
	var de *history.DecodeError
	switch {
	case errors.As(err, &de):
		return nil, fmt.Errorf("%s:%d: %s", path, de.Line, de.Reason)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// colorOn decides whether to colour text for w: always, never, or (auto) when w is a
// terminal and NO_COLOR is not set (https://no-color.org).
func colorOn(w io.Writer, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	file, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiBold   = "\x1b[1m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiFaint  = "\x1b[2m"
)

// colorize colours a text report line by line, by the word it starts with.
func colorize(text string) string {
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if body == "" {
			continue
		}
		var style string
		switch {
		case strings.HasPrefix(body, "result: valid"):
			style = ansiGreen + ansiBold
		case strings.HasPrefix(body, "result: invalid"):
			style = ansiRed + ansiBold
		case strings.HasPrefix(body, "result: unknown"):
			style = ansiYellow + ansiBold
		case strings.HasPrefix(body, "violation "):
			style = ansiRed
		case strings.HasPrefix(body, "allowed "):
			style = ansiYellow
		case strings.HasPrefix(body, "note "), strings.HasPrefix(body, "counts: "):
			style = ansiFaint
		default:
			continue
		}
		lines[i] = style + body + ansiReset + l[len(body):]
	}
	return strings.Join(lines, "")
}
