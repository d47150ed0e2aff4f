package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/tui"
)

func init() { moreCommands = append(moreCommands, newClassroomCmd) }

func newClassroomCmd() *cobra.Command {
	var seed uint64
	var noColor, presenter bool
	var set []string
	cfg := classroomConfig{}
	cmd := &cobra.Command{
		Use:   "classroom [NAME|FILE]",
		Short: "Serve a scenario's TUI over SSH to a room that follows the lecturer's step",
		Long: `Record a scenario once (a catalogue name or a file; acks1-leader-crash by
default), open the TUI on it in this terminal for the lecturer, and serve the same run
over SSH: students connect with

  ssh -p 2222 HOST        (any user name; no password)

Every student's screen follows the lecturer's: when the lecturer steps, jumps or moves
to a narrated point, each student's TUI moves there, laid out for the student's own
terminal. A student presses e to explore the run on their own (every key of mqsim tui
but forks and saves) and r to rejoin the lecturer. Quitting the lecturer's TUI closes
the classroom.

The server listens on loopback (127.0.0.1:2222) unless --listen names another address;
anyone who can reach that address can connect, so mqsim warns when it is not loopback.
The host key is created once, in the user's configuration directory (mqsim/
classroom_ed25519 there), so that students' ssh sees the same key every lecture. At most
--max-sessions sessions (the next is told the room is full), and a connection with no
traffic (no key from the student, no step from the lecturer) for --idle is closed.`,
		Example: "  mqsim classroom\n  mqsim classroom acks1-leader-crash --presenter\n  mqsim classroom rebalance-duplicates --listen 0.0.0.0:2222",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "acks1-leader-crash"
			if len(args) == 1 {
				name = args[0]
			}
			wide, err := beyondLoopback(cfg.Listen)
			if err != nil {
				return err
			}
			if err := cfg.check(); err != nil {
				return err
			}
			if cfg.HostKey == "" {
				if cfg.HostKey, err = defaultHostKey(); err != nil {
					return err
				}
			}
			script, err := scenarios.Load(name)
			if err != nil {
				return err
			}
			run, err := tui.Record("main", script, runner.Options{Seed: seed, SeedSet: cmd.Flags().Changed("seed"), Set: set})
			if err != nil {
				return err
			}
			cfg.NoColor = noColor || os.Getenv("NO_COLOR") != ""
			uiOpts := tui.Options{NoColor: cfg.NoColor, Presenter: presenter}
			lect := newLecturer(tui.New(run, uiOpts), run)
			room, err := startClassroom(cfg, run, lect.hub)
			if err != nil {
				return err
			}
			lect.room = room
			stderr := cmd.ErrOrStderr()
			if wide {
				fmt.Fprintf(stderr, "warning: listening on %s, beyond this machine: anyone who can reach it can connect without a password and watch the run\n", room.Addr())
			}
			fmt.Fprintln(stderr, classroomBanner(room.Addr()))
			_, runErr := tea.NewProgram(lect, tui.ProgramOptions(uiOpts)...).Run()
			closeErr := room.Close(5 * time.Second)
			fmt.Fprintln(stderr, "classroom closed")
			return errors.Join(runErr, closeErr)
		},
	}
	cmd.Flags().StringVar(&cfg.Listen, "listen", "127.0.0.1:2222", "address to serve SSH on, host:port (loopback unless you say otherwise)")
	cmd.Flags().IntVar(&cfg.MaxSessions, "max-sessions", 100, "most student sessions at once")
	cmd.Flags().DurationVar(&cfg.Idle, "idle", 30*time.Minute, "close a connection with no traffic for this long")
	cmd.Flags().StringVar(&cfg.HostKey, "host-key", "", "host key file, created if missing (default: the user's config directory, mqsim/classroom_ed25519)")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "run seed (default: the scenario's own, else 1)")
	cmd.Flags().StringArrayVar(&set, "set", nil, "override a cluster setting, KEY=VALUE, or a client's, NAME.KEY=VALUE (repeatable)")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "no colours, here and in students' sessions (also when NO_COLOR is set)")
	cmd.Flags().BoolVar(&presenter, "presenter", false, "start in presenter mode (students' screens follow it)")
	return cmd
}

// studentCommand is what students type to join a classroom listening on addr.
func studentCommand(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "THIS-MACHINE"
	}
	return fmt.Sprintf("ssh -p %s %s", port, host)
}

// classroomBanner tells the lecturer what students type.
func classroomBanner(addr net.Addr) string {
	return fmt.Sprintf("classroom open: students type  %s  (e explores on one's own, r rejoins)", studentCommand(addr))
}

// lecturer is the lecturer's TUI: the ordinary model, whose position on the original run
// is published to the students after every update. A fork the lecturer makes is theirs
// alone: while it is on screen the students stay where the lecturer left the run.
type lecturer struct {
	tui.Model
	run  *tui.Run
	hub  *lecturerHub
	room *classroom
}

func newLecturer(m tui.Model, run *tui.Run) lecturer {
	return lecturer{Model: m, run: run, hub: newLecturerHub(tui.LecturerMsg{Event: m.Pos(), Present: m.Presenting()})}
}

// Update updates the lecturer's TUI and publishes where it is.
func (l lecturer) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := l.Model.Update(msg)
	l.Model = next.(tui.Model)
	if l.Model.Run() == l.run {
		l.hub.Publish(tui.LecturerMsg{Event: l.Model.Pos(), Present: l.Model.Presenting()})
	}
	return l, cmd
}

// View is the lecturer's screen, titled with what students type and how many are
// connected.
func (l lecturer) View() tea.View {
	v := l.Model.View()
	if l.room != nil {
		v.WindowTitle = fmt.Sprintf("mqsim classroom · %s · %d connected", studentCommand(l.room.Addr()), l.room.Sessions())
	}
	return v
}
