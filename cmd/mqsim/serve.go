package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"mqsim/gateway"
)

func init() { moreCommands = append(moreCommands, newServeCmd, newReplayCmd) }

func newServeCmd() *cobra.Command {
	var seed uint64
	var listen, sessionPath string
	var speed float64
	var maxFrame int32
	var maxConns, maxInFlight int
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
closes its client connections. Stop with Ctrl-C; the session is saved and its hash
printed.`,
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
			srv, err := gateway.Listen(gateway.Options{Scenario: sc, Listen: listen, Speed: speed, MaxFrameBytes: maxFrame,
				MaxConns: maxConns, MaxInFlight: maxInFlight, SessionPath: sessionPath, Log: errOut})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "serving %s (seed %d) at speed %g\n", sc.Name, seed, speed)
			for i, a := range srv.Addrs() {
				fmt.Fprintf(out, "  b%d  %s\n", i+1, a)
			}
			fmt.Fprintf(out, "session: %s (Ctrl-C to stop)\n", sessionPath)
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			go operatorCommands(ctx, srv, cmd.InOrStdin(), out)
			s, err := srv.Serve(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "%d requests and commands, %d events, virtual time %s\nhash %s\n", len(s.Arrivals), s.EndStep, time.Duration(s.EndTime), s.Hash)
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 1, "the run's seed")
	f.StringVar(&listen, "listen", gateway.DefaultListen, "first broker's address (broker bN listens on port + N - 1)")
	f.Float64Var(&speed, "speed", 1, "virtual seconds per wall second (the world may run up to 1ms of wall time ahead)")
	f.StringVar(&sessionPath, "session", "mqsim-session.json", "where the session is recorded")
	f.Int32Var(&maxFrame, "socket-request-max-bytes", gateway.DefaultMaxFrameBytes, "largest request frame (socket.request.max.bytes)")
	f.IntVar(&maxConns, "max-connections", gateway.DefaultMaxConns, "most open client connections")
	f.IntVar(&maxInFlight, "max-in-flight", gateway.DefaultMaxInFlight, "most unanswered requests per connection")
	return cmd
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
	return &cobra.Command{
		Use:   "replay SESSION",
		Short: "Rerun a session recorded by mqsim serve, without any client, and print its hash",
		Args:  cobra.ExactArgs(1),
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
			return nil
		},
	}
}
