package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
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
	memoryMiB                  int64
	healedAt, unseen, liveness time.Duration
	ackWithin                  time.Duration
	allow                      []string
	pipelines                  []string
}

// Exit statuses of mqsim check, so that a CI gate can tell them apart.
const (
	exitValid     = 0
	exitInvalid   = 1
	exitBadInput  = 2
	exitUndecided = 3
)

func newCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Judge a client history (JSON lines) and print the checkers' report",
		Long: `Read a client history in JSON lines (the format of 'mqsim run NAME --history FILE',
documented in model/history; the reader is strict: invalid UTF-8, a field twice
in one object and unknown fields are errors) and judge it: the log anomalies
(lost-write, duplicate, inconsistent-offsets, unseen, poll-skip, ..., named and
defined as in Jepsen's Kafka checker), delivery counts, and linearizability of
each partition against a sequential log (porcupine) within --budget of wall time
and --memory-budget of memory. Offsets may be sparse, as in Kafka: only their
order counts. A process that subscribed may re-read or skip after a rebalance
(Jepsen allows poll-skip and nonmonotonic-poll under subscribe; they are
reported as allowed); one that assigned may not.

--promise at-least-once|at-most-once|exactly-once makes a group's missed
(undelivered) or repeated (redelivered) values violations. --live-within D adds
the liveness check: every reader active after --healed-at must read every
acknowledged value within D of max(its ack, --healed-at); --ack-within D asks
every send invoked after --healed-at to be acknowledged within D (unavailable).
--unseen-within D bounds Jepsen's unseen rule the same way.

Transactions (txn ops) are judged with the names of Jepsen's Kafka workload:
G1a (aborted read; allowed for a read_uncommitted poll), G1b (intermediate
read), G0 and G1c (cycles of ww and wr dependencies), int-poll-skip,
int-nonmonotonic-poll, int-send-skip and int-nonmonotonic-send.
--pipeline IN:OUT (repeatable) promises exactly-once to a consume-transform-
produce application reading topic IN and writing each value once to topic OUT:
every committed input value must appear in OUT exactly once, as read_committed
polls read it (missing-output, duplicate-output).

Share groups (share polls with delivery counts, ack ops) are judged by
Kafka's defaults (delivery count limit 5, share.auto.offset.reset=latest):
share-lost (an acknowledged record never accepted, rejected or delivered at the
limit), share-beyond-limit and share-redelivered-after-accept.

A queue broker's history (queue mode: 'mqsim run' of a queue-broker scenario; each
poll names the queue it read from, sends learn no offsets) is judged in queue
mode as the scenario's own check command judges it: every confirmed message
processed (unseen, lost-write), nothing enqueued twice (duplicate), nothing
processed that was not sent or was refused; --promise and --order say what the
queues promise (at-least-once and no order by default). --mode auto (the
default) follows the file's header line, {"system":"queue"} or {"system":"log"}
(mqsim run --history writes it); a file without one is judged as a log's only
when an op says so (an assign, subscribe or commit, a send acknowledged with an
offset, a poll without a group or of a topic other than its group), otherwise
it asks for --mode. --mode log or queue overrides the header.

A history without operations is bad input (exit 2), never valid.

The report is plain text, coloured on a terminal (--color), or JSON (--json).
--html FILE writes porcupine's interactive visualisation of the linearizability
search. Output files are written whole or not at all.

Exit status:
  0  valid: the checkers found no violation and every check decided
  1  invalid: at least one violation
  2  bad input (reported as FILE:LINE: what was expected) or a usage error
  3  undecided: no violation, but a check could not decide within its budget
     (the report says which and how to give it more: --budget, --memory-budget)`,
		Example: "  mqsim run acks1-leader-crash --history h.jsonl; mqsim check h.jsonl\n" +
			"  mqsim check h.jsonl --json\n  mqsim check h.jsonl --html lin.html --budget 30s\n" +
			"  mqsim check h.jsonl --healed-at 12s --live-within 10s --ack-within 5s\n" +
			"  mqsim check queue.jsonl --promise exactly-once\n  mqsim check foreign.jsonl --mode queue",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print the report as JSON")
	fl.StringVar(&f.html, "html", "", "write porcupine's visualisation to this file")
	fl.DurationVar(&f.budget, "budget", 10*time.Second, "wall-clock bound on the linearizability search (0: none)")
	fl.Int64Var(&f.memoryMiB, "memory-budget", checker.DefaultMemoryBudget>>20, "memory bound on the linearizability search, in MiB")
	fl.BoolVar(&f.linearizable, "linearizable", true, "check linearizability (--linearizable=false skips it)")
	fl.StringVar(&f.color, "color", "auto", "colour the text report: auto (on a terminal), always or never")
	fl.DurationVar(&f.healedAt, "healed-at", 0, "virtual time the faults ended, for --live-within, --ack-within and --unseen-within")
	fl.DurationVar(&f.liveness, "live-within", 0, "liveness bound: every reader reads every acknowledged value within it")
	fl.DurationVar(&f.ackWithin, "ack-within", 0, "availability bound: every send invoked after --healed-at is acknowledged within it (unavailable)")
	fl.DurationVar(&f.unseen, "unseen-within", 0, "unseen bound: every acknowledged value is read within it")
	fl.StringArrayVar(&f.pipelines, "pipeline", nil, "IN:OUT: a pipeline reading topic IN and writing topic OUT, held to exactly-once (repeatable)")
	fl.StringArrayVar(&f.allow, "allow", nil, "report this anomaly as allowed, not a violation (repeatable), e.g. poll-skip")
	fl.StringVar(&f.mode, "mode", "auto", "auto (a log's history when an op says so), log or queue")
	fl.StringVar(&f.promise, "promise", "", "delivery promise: at-least-once, at-most-once or exactly-once (queue mode: at-least-once by default)")
	fl.StringVar(&f.order, "order", "none", "queue mode: the order the queues promise: none, key or queue")
	return cmd
}

// checkUsage validates the flags on their own, before the file is read.
func checkUsage(f checkFlags) error {
	switch {
	case f.color != "auto" && f.color != "always" && f.color != "never":
		return fmt.Errorf("--color=%s: want auto, always or never", f.color)
	case f.html != "" && !f.linearizable:
		return errors.New("--html shows the linearizability search: it needs --linearizable")
	case f.mode != "auto" && f.mode != "log" && f.mode != "queue":
		return fmt.Errorf("--mode=%s: want auto, log or queue", f.mode)
	case f.memoryMiB <= 0:
		return fmt.Errorf("--memory-budget=%d: want a positive number of MiB", f.memoryMiB)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"budget", f.budget}, {"healed-at", f.healedAt}, {"live-within", f.liveness},
		{"ack-within", f.ackWithin}, {"unseen-within", f.unseen}} {
		if d.v < 0 {
			return fmt.Errorf("--%s=%s: want a duration of 0 or more", d.name, d.v)
		}
	}
	for _, a := range f.allow {
		if _, err := checker.ParseAnomaly(a); err != nil {
			return fmt.Errorf("--allow: %w", err)
		}
	}
	_, err := parsePipelines(f.pipelines)
	return err
}

// parsePipelines reads --pipeline IN:OUT flags.
func parsePipelines(flags []string) ([]checker.Pipeline, error) {
	var out []checker.Pipeline
	for _, s := range flags {
		in, outTopic, ok := strings.Cut(s, ":")
		if !ok || in == "" || outTopic == "" || strings.Contains(outTopic, ":") || in == outTopic {
			return nil, fmt.Errorf("--pipeline=%s: want IN:OUT, two different topic names", s)
		}
		out = append(out, checker.Pipeline{Input: in, Output: outTopic})
	}
	return out, nil
}

func runCheck(cmd *cobra.Command, path string, f checkFlags) error {
	if err := checkUsage(f); err != nil {
		return exitError{exitBadInput, err}
	}
	if f.html != "" {
		if err := checkOutputFile(f.html); err != nil {
			return exitError{2, fmt.Errorf("--html: %w", err)}
		}
	}
	file, err := readHistory(path)
	if err != nil {
		return exitError{exitBadInput, err}
	}
	h := file.Ops
	// No operation is bad input (exit 2), not a pass: a CI gate handed an
	// empty file most likely has a run that wrote nothing, and "valid" would
	// wave it through; "undecided" (3) is for a check that ran out of budget.
	if len(h) == 0 {
		return exitError{exitBadInput, fmt.Errorf("%s: no operations: an empty history proves nothing; expected at least one op (see the format in model/history)", path)}
	}
	if f.mode == "auto" {
		switch file.System {
		case history.QueueSystem:
			f.mode = "queue"
		case history.LogSystem:
			f.mode = "log"
		default:
			if _, _, ok := checker.LogSign(h); !ok {
				return exitError{exitBadInput, fmt.Errorf("%s: cannot tell a log's history from a queue broker's: no header line names the system "+
					`({"system":"log"} or {"system":"queue"}, first) and no op only a log's history has `+
					"(an assign, subscribe or commit, a send acknowledged with an offset, a poll without a group or of a topic other than its group); "+
					"say which with --mode log or --mode queue", path)}
			}
		}
	}
	if f.mode == "queue" {
		rep, err := checkQueueMode(h, f)
		if err != nil {
			return err
		}
		return printReport(cmd, path, rep, f)
	}
	if cmd.Flags().Changed("order") {
		return exitError{exitBadInput, errors.New("--order judges a queue broker's history; this one is judged as a log's (--mode queue to insist)")}
	}
	opts := checker.Options{}
	for _, a := range f.allow {
		opts.Log.Allow = append(opts.Log.Allow, checker.Anomaly(a))
	}
	opts.Pipelines, _ = parsePipelines(f.pipelines) // checked by checkUsage
	if f.promise != "" {
		if opts.Promise, err = checker.ParsePromise(f.promise); err != nil {
			return exitError{exitBadInput, fmt.Errorf("--promise: %w", err)}
		}
	}
	if f.unseen > 0 {
		opts.Log.Unseen = checker.UnseenRule{After: int64(f.healedAt), Within: int64(f.unseen)}
	}
	if f.liveness > 0 || f.ackWithin > 0 {
		opts.Liveness = &checker.LivenessOptions{HealedAt: int64(f.healedAt), Within: int64(f.liveness), AckWithin: int64(f.ackWithin)}
	}
	var html bytes.Buffer
	if f.linearizable {
		opts.Linearizability = &checker.LinearizabilityOptions{Budget: f.budget, MemoryBudget: f.memoryMiB << 20}
		if f.html != "" {
			opts.Linearizability.HTML = &html
		}
	}
	rep, err := checker.Check(h, opts)
	if err != nil {
		return exitError{exitBadInput, fmt.Errorf("%s: %w", path, err)}
	}
	if f.html != "" {
		if err := writeAtomic(f.html, html.Bytes()); err != nil {
			return exitError{exitBadInput, fmt.Errorf("--html: %w", err)}
		}
	}
	return printReport(cmd, path, rep, f)
}

// checkQueueMode judges a queue broker's history as the scenario's check command does.
func checkQueueMode(h history.History, f checkFlags) (checker.Report, error) {
	if len(f.pipelines) > 0 {
		return checker.Report{}, exitError{exitBadInput, errors.New("--pipeline judges a log's transactions; a queue broker's history has none")}
	}
	if f.html != "" || f.liveness > 0 || f.ackWithin > 0 {
		return checker.Report{}, exitError{exitBadInput, errors.New("--html, --live-within and --ack-within judge a log's partitions; a queue broker's history has none (use --unseen-within)")}
	}
	opts := checker.QueueOptions{}
	for _, a := range f.allow {
		opts.Allow = append(opts.Allow, checker.Anomaly(a))
	}
	if f.unseen > 0 {
		opts.Unseen = checker.UnseenRule{After: int64(f.healedAt), Within: int64(f.unseen)}
	}
	promise := cmp.Or(f.promise, checker.AtLeastOnce.String())
	var err error
	if opts.Promise, err = checker.ParseQueuePromise(promise); err != nil {
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

// printReport prints a report as text or JSON; violations make the exit
// status 1, and a report without any but with a check that could not
// decide makes it 3.
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
		return exitError{exitInvalid, fmt.Errorf("%s: %s", path, count(n, "violation"))}
	}
	if rep.Result == checker.Unknown {
		return exitError{exitUndecided, fmt.Errorf("%s: no violation found, but a check could not decide (see its note)", path)}
	}
	return nil
}

// readHistory reads a JSON-lines history, naming the file and line of any
// error. The file is read whole and its lines decoded on every core (lines
// are independent; the parts are joined in file order and validated once,
// so the history and the errors are those of history.ReadJSONLines).
func readHistory(path string) (history.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return history.File{}, err
	}
	const minPart = 1 << 20 // below this a goroutine costs more than it saves
	f, err := decodeParallel(data, max(1, min(runtime.GOMAXPROCS(0), len(data)/minPart)))
	var de *history.DecodeError
	switch {
	case errors.As(err, &de):
		return history.File{}, fmt.Errorf("%s:%d: %s", path, de.Line, de.Reason)
	case err != nil:
		return history.File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// decodeParallel splits data into up to n parts at line ends and decodes
// them at once (n > 0), each into its own stretch of one array (so that joining
// them moves nothing unless blank lines left gaps). The first error in
// file order wins.
func decodeParallel(data []byte, n int) (history.File, error) {
	type part struct {
		data  []byte
		first int // line number of its first line
		at    int // index of its first op in the array
		lines history.Lines
		err   error
	}
	parts := make([]part, 0, n)
	line, room := 1, 0
	for rest := data; len(rest) > 0; {
		cut := len(rest)
		if len(parts) < n-1 {
			if i := bytes.IndexByte(rest[min(len(rest), len(data)/n):], '\n'); i >= 0 {
				cut = min(len(rest), len(data)/n) + i + 1
			}
		}
		lines := history.MaxLines(rest[:cut])
		parts = append(parts, part{data: rest[:cut], first: line, at: room})
		line += lines - 1
		room += lines
		rest = rest[cut:]
	}
	ops, lines := make(history.History, room), make([]int, room)
	for i := range parts {
		p := &parts[i]
		end := p.at + history.MaxLines(p.data)
		p.lines = history.Lines{Ops: ops[p.at:p.at:end], Line: lines[p.at:p.at:end]}
	}
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() { parts[i].err = parts[i].lines.Decode(parts[i].data, parts[i].first) })
	}
	wg.Wait()
	joined := 0
	var headers []history.Header
	for _, p := range parts {
		if p.err != nil {
			return history.File{}, p.err
		}
		headers = append(headers, p.lines.Headers...)
		if p.at != joined {
			copy(ops[joined:], p.lines.Ops)
			copy(lines[joined:], p.lines.Line)
		}
		joined += len(p.lines.Ops)
	}
	clear(ops[joined:]) // what a gap's copy left behind
	return history.Lines{Ops: ops[:joined], Line: lines[:joined], Headers: headers}.Validated()
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
