package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"mqsim/gateway"
	"mqsim/tui"
)

func init() { moreCommands = append(moreCommands, newServeCmd, newReplayCmd) }

func newServeCmd() *cobra.Command {
	var seed uint64
	var listen, sessionPath string
	var speed float64
	var maxFrame int32
	var maxConns, maxInFlight int
	var sessionFor time.Duration
	var historyPath string
	var withTUI, noColor bool
	cmd := &cobra.Command{
		Use:   "serve [NAME|FILE]",
		Short: "Serve a scenario's cluster to real Kafka clients on loopback ports",
		Long: `Run a scenario's cluster (by default three brokers, topic t with three partitions,
rf=3, min-isr=2) and let real Kafka clients use it: each broker bN listens on its own
port (the --listen port + N - 1) and Metadata advertises those addresses. Virtual time
follows wall time (times --speed); events due within a millisecond of wall time run at
once rather than after a timer that short, which fires late, so the world may be up to
a millisecond of wall time (times --speed) ahead of the clock. Every request is
recorded in the session file, so 'mqsim replay SESSION' reruns the same world without
any client, to the same hash.
Type a scenario command on standard input to apply it while clients run (crash b1,
restart b1, partition b1 | b2 b3, heal): the session records it, and a crashed broker
closes its client connections.

The gateway records what the clients did as seen on the wire, in mqsim's history
format: a send per produced record (ok with its offset, fail on a definite error, info
on a timeout), a poll per fetch response with records (with the group of the client's
connection), and each offset commit. The session ends with Ctrl-C, Ctrl-D (end of a
terminal's input) or after --for of virtual time; the session is saved, its hash printed,
and the checkers' verdict on that history and the cluster's invariants printed, as
'mqsim run' prints a check's. --history FILE writes the history (JSON lines, for
'mqsim check').

--tui watches the run live in the TUI, with the panes of any run, while clients use
it: x applies a fault at the current moment (crash b1, cut b1 <-> b2, pause ctl ...),
recorded in the session as a typed command is; q ends the session.

Exit status: 0 when the checks found nothing, 1 when they found a violation.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			sc, err := gateway.LoadScenario(name, seed)
			if err != nil {
				return err
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if !gateway.IsLoopback(listen) {
				fmt.Fprintf(errOut, "WARNING: --listen %s is not a loopback address: anyone who can reach it can use the simulated cluster, which has no authentication\n", listen)
			}
			opts := gateway.Options{Scenario: sc, Listen: listen, Speed: speed, MaxFrameBytes: maxFrame,
				MaxConns: maxConns, MaxInFlight: maxInFlight, SessionPath: sessionPath, Log: errOut}
			var live *tui.Live
			if withTUI {
				// The TUI owns the terminal: connection log lines would tear its screen.
				live = tui.NewLive()
				opts.Build, opts.Advanced, opts.Log = live.Build, live.Advanced, io.Discard
			}
			srv, err := gateway.Listen(opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "serving %s (seed %d) at speed %g\n", sc.Name, seed, speed)
			for i, a := range srv.Addrs() {
				fmt.Fprintf(out, "  b%d  %s\n", i+1, a)
			}
			fmt.Fprintf(out, "session: %s (Ctrl-C or Ctrl-D to stop)\n", sessionPath)
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			ctx, end := context.WithCancel(ctx)
			defer end()
			if sessionFor > 0 {
				defer time.AfterFunc(time.Duration(float64(sessionFor)/speed), end).Stop()
			}
			if live != nil {
				return serveLive(ctx, end, srv, live, noColor, out, historyPath)
			}
			in := cmd.InOrStdin()
			go func() {
				operatorCommands(ctx, srv, in, out)
				// Ctrl-D on a terminal ends the session; a closed pipe or /dev/null (serve
				// in the background) only ends the commands.
				if f, ok := in.(*os.File); ok && term.IsTerminal(f.Fd()) {
					end()
				}
			}()
			s, err := srv.Serve(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%d requests and commands, %d events, virtual time %s\nhash %s\n", len(s.Arrivals), s.EndStep, time.Duration(s.EndTime), s.Hash)
			return printSessionVerdict(out, srv.World(), historyPath)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 1, "the run's seed")
	f.StringVar(&listen, "listen", gateway.DefaultListen, "first broker's address (broker bN listens on port + N - 1)")
	f.Float64Var(&speed, "speed", 1, "virtual seconds per wall second (the world may run up to 1ms of wall time ahead; at a speed it cannot keep up with, it runs behind, and says so)")
	f.StringVar(&sessionPath, "session", "mqsim-session.json", "where the session is recorded")
	f.Int32Var(&maxFrame, "socket-request-max-bytes", gateway.DefaultMaxFrameBytes, "largest request frame (socket.request.max.bytes)")
	f.IntVar(&maxConns, "max-connections", gateway.DefaultMaxConns, "most open client connections")
	f.IntVar(&maxInFlight, "max-in-flight", gateway.DefaultMaxInFlight, "most unanswered requests per connection")
	f.DurationVar(&sessionFor, "for", 0, "end the session after this much virtual time (0: at Ctrl-C or Ctrl-D)")
	f.StringVar(&historyPath, "history", "", "write the clients' history to this file (JSON lines)")
	f.BoolVar(&withTUI, "tui", false, "watch the run live in the TUI; x applies a fault while clients run, q ends the session")
	f.BoolVar(&noColor, "no-color", false, "with --tui: no colours (also when NO_COLOR is set)")
	return cmd
}

// serveLive serves while the TUI follows the run (tui.Live): quitting the TUI ends the
// session (so does --for: the TUI then shows the whole run, with its verdict, until q),
// whose verdict is then printed as without the TUI.
func serveLive(ctx context.Context, end context.CancelFunc, srv *gateway.Server, live *tui.Live, noColor bool, out io.Writer, historyPath string) error {
	live.Exec = srv.Exec
	served := make(chan error, 1)
	var s *gateway.Session
	go func() {
		var err error
		s, err = srv.Serve(ctx)
		if err == nil {
			live.End() // the TUI shows the whole run and its verdict (--for may end it first)
		}
		served <- err
	}()
	uiOpts := tui.Options{NoColor: noColor || os.Getenv("NO_COLOR") != "", Live: live}
	_, uiErr := tea.NewProgram(tui.New(live.Latest(), uiOpts), tui.ProgramOptions(uiOpts)...).Run()
	end()
	if err := <-served; err != nil {
		return err
	}
	if uiErr != nil {
		return uiErr
	}
	fmt.Fprintf(out, "%d requests and commands, %d events, virtual time %s\nhash %s\n", len(s.Arrivals), s.EndStep, time.Duration(s.EndTime), s.Hash)
	return printSessionVerdict(out, srv.World(), historyPath)
}

// printSessionVerdict prints a session's verdict (gateway.World.Verdict: the one verdict
// of every run) and writes its history if asked; violations make the exit status 1, as
// mqsim run's.
func printSessionVerdict(out io.Writer, w *gateway.World, historyPath string) error {
	v, err := w.Verdict()
	if err != nil {
		return err
	}
	fmt.Fprint(out, v.Report.String())
	if historyPath != "" {
		if err := writeHistory(historyPath, w.Runner); err != nil {
			return err
		}
	}
	if n := len(v.Report.Violations); n > 0 {
		return exitError{1, fmt.Errorf("the checks found %s", count(n, "violation"))}
	}
	return nil
}

// operatorCommands applies each line of in as a scenario command while the session
// runs, and prints its output.
func operatorCommands(ctx context.Context, srv *gateway.Server, in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		res, err := srv.Exec(ctx, line)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(out, "%s: %v\n", line, err)
			continue
		}
		fmt.Fprintln(out, res)
	}
}

func newReplayCmd() *cobra.Command {
	var historyPath string
	cmd := &cobra.Command{
		Use:   "replay SESSION",
		Short: "Rerun a session recorded by mqsim serve, without any client, and print its hash and verdict",
		Long: `Rerun a session recorded by mqsim serve without any client: the same scenario, each
request and operator command at the step it arrived. It prints the hash, which must be
the session's, and the checkers' verdict on the clients' history, which is the one
mqsim serve printed. --history FILE writes that history (JSON lines).

Exit status: 0 when the checks found nothing, 1 when they found a violation or the
replay diverged.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := gateway.LoadSession(args[0])
			if err != nil {
				return err
			}
			w, err := gateway.Replay(s)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "replayed %d requests and commands of %s (seed %d): %d events, virtual time %s\nhash %s\n",
				len(s.Arrivals), s.Scenario.Name, s.Scenario.Seed, w.W.Steps(), time.Duration(w.W.Now()), w.Hash())
			if w.Hash() != s.Hash {
				return exitError{1, fmt.Errorf("the session ended with hash %s, the replay with %s", s.Hash, w.Hash())}
			}
			return printSessionVerdict(out, w, historyPath)
		},
	}
	cmd.Flags().StringVar(&historyPath, "history", "", "write the clients' history to this file (JSON lines)")
	return cmd
}
