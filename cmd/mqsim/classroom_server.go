package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	charmlog "charm.land/log/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	bm "charm.land/wish/v2/bubbletea"

	"mqsim/tui"
)

// lecturerHub shares the lecturer's position on the run with every student's session. The
// lecturer's TUI publishes from its Update, which must never wait for a student: Publish
// only stores the position and wakes each session's follower, whose wake channel holds at
// most one signal, so a slow session skips to the newest position instead of queueing
// every step.
type lecturerHub struct {
	mu   sync.Mutex
	at   tui.LecturerMsg
	subs map[chan struct{}]struct{}
}

func newLecturerHub(at tui.LecturerMsg) *lecturerHub {
	return &lecturerHub{at: at, subs: map[chan struct{}]struct{}{}}
}

// Publish records the lecturer's position and wakes the followers; it never blocks.
func (h *lecturerHub) Publish(at tui.LecturerMsg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if at == h.at {
		return
	}
	h.at = at
	for wake := range h.subs {
		select {
		case wake <- struct{}{}:
		default: // already woken: it will read the newest position
		}
	}
}

// Current is the lecturer's position now.
func (h *lecturerHub) Current() tui.LecturerMsg {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.at
}

// follow hands send the lecturer's current position, then every newer one, until ctx
// ends. send may block (a session's program reads its messages in turn): it runs here,
// in the session's own goroutine, never in the lecturer's Update.
func (h *lecturerHub) follow(ctx context.Context, send func(tui.LecturerMsg)) {
	wake := make(chan struct{}, 1)
	wake <- struct{}{}
	h.mu.Lock()
	h.subs[wake] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs, wake)
		h.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			send(h.Current())
		}
	}
}

// classroomConfig is how the classroom serves.
type classroomConfig struct {
	Listen      string        // host:port
	MaxSessions int           // sessions beyond this are told the room is full
	Idle        time.Duration // a connection with no traffic for this long is closed
	HostKey     string        // the host key's file, created on first use
	NoColor     bool
}

// check checks the numbers before anything is recorded or served.
func (cfg classroomConfig) check() error {
	if cfg.MaxSessions < 1 {
		return fmt.Errorf("--max-sessions %d: want at least 1", cfg.MaxSessions)
	}
	if cfg.Idle <= 0 {
		return fmt.Errorf("--idle %s: want a positive duration, such as 30m", cfg.Idle)
	}
	return nil
}

// classroom is the SSH server of mqsim classroom: one TUI per student's session, all on
// one recorded run, each following the lecturer's position (hub) until the student
// explores on their own.
type classroom struct {
	cfg  classroomConfig
	run  *tui.Run
	hub  *lecturerHub
	srv  *ssh.Server
	ln   net.Listener
	done chan struct{} // closed when Serve returns

	mu       sync.Mutex
	closed   bool // Close has begun: no new sessions
	sessions int
	stops    map[ssh.Session]context.CancelFunc // each session's follower and program context
	work     sync.WaitGroup                     // session handlers and followers
}

// errRoomFull is what the session past the limit is told.
var errRoomFull = errors.New("the classroom is full")

// startClassroom listens and serves in the background; Close stops it.
func startClassroom(cfg classroomConfig, run *tui.Run, hub *lecturerHub) (*classroom, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	// The SSH library logs each session's end; the lecturer's terminal shows the TUI, and
	// nothing should be written over it.
	charmlog.SetOutput(io.Discard)
	if err := os.MkdirAll(filepath.Dir(cfg.HostKey), 0o700); err != nil {
		return nil, fmt.Errorf("host key directory: %w", err)
	}
	// Views of the run are read by every session at once: the run is read-only once
	// recorded, except for its figures, computed on first use; compute them now.
	run.Metrics()
	c := &classroom{cfg: cfg, run: run, hub: hub, done: make(chan struct{}), stops: map[ssh.Session]context.CancelFunc{}}
	srv, err := wish.NewServer(
		wish.WithAddress(cfg.Listen),
		wish.WithHostKeyPath(cfg.HostKey),
		wish.WithIdleTimeout(cfg.Idle),
		wish.WithVersion("mqsim-classroom"),
		// Composed first to last; the last runs first: admit, then the TUI.
		wish.WithMiddleware(bm.MiddlewareWithProgramHandler(c.program), c.admit),
	)
	if err != nil {
		return nil, err
	}
	srv.HandshakeTimeout = 10 * time.Second
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	c.srv, c.ln = srv, ln
	go func() {
		defer close(c.done)
		_ = srv.Serve(ln)
	}()
	return c, nil
}

// Addr is the address the classroom listens on.
func (c *classroom) Addr() net.Addr { return c.ln.Addr() }

// Sessions is the number of sessions open now.
func (c *classroom) Sessions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions
}

// admit turns away the session past the limit, and ends the session's follower when
// its TUI has ended.
func (c *classroom) admit(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		full := c.sessions >= c.cfg.MaxSessions
		if !full {
			c.sessions++
			c.work.Add(1)
		}
		c.mu.Unlock()
		if full {
			wish.Fatalf(sess, "mqsim classroom: %v (%d sessions); try again later\n", errRoomFull, c.cfg.MaxSessions)
			return
		}
		defer func() {
			c.mu.Lock()
			if stop, ok := c.stops[sess]; ok {
				stop()
				delete(c.stops, sess)
			}
			c.sessions--
			c.mu.Unlock()
			c.work.Done()
		}()
		next(sess)
		if c.isClosed() {
			wish.Println(sess, "\r\nmqsim classroom: the lecturer closed the classroom.\r")
		}
	}
}

// program makes a student's TUI: a classroom model at its own terminal size, following
// the lecturer from the lecturer's current position.
func (c *classroom) program(sess ssh.Session) *tea.Program {
	if _, _, ok := sess.Pty(); !ok {
		wish.Fatalln(sess, "mqsim classroom needs a terminal: connect with ssh -t")
		return nil
	}
	m := tui.New(c.run, tui.Options{Classroom: true, NoColor: c.cfg.NoColor})
	next, _ := m.Update(c.hub.Current())
	ctx, stop := context.WithCancel(sess.Context())
	opts := append(bm.MakeOptions(sess), tea.WithContext(ctx))
	if c.cfg.NoColor {
		opts = append(opts, tui.ProgramOptions(tui.Options{NoColor: true})...)
	}
	p := tea.NewProgram(next, opts...)
	// Registered under the lock that Close takes to stop every session: a session is
	// either stopped by Close or never starts.
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		stop()
		return nil
	}
	c.stops[sess] = stop
	c.work.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.work.Done()
		c.hub.follow(ctx, func(at tui.LecturerMsg) { p.Send(at) })
	}()
	return p
}

// Close stops the classroom: no new sessions; each session's TUI ends and the student
// is told why; then the server closes every connection. It waits up to wait for every
// session's goroutines to end.
func (c *classroom) Close(wait time.Duration) error {
	c.mu.Lock()
	c.closed = true
	for _, stop := range c.stops {
		stop()
	}
	c.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		c.work.Wait()
		close(ended)
	}()
	deadline := time.After(wait)
	select {
	case <-ended:
	case <-deadline:
	}
	err := c.srv.Close()
	select {
	case <-ended:
	case <-deadline:
		return fmt.Errorf("the classroom's sessions did not end within %s", wait)
	}
	select {
	case <-c.done:
	case <-deadline:
		return fmt.Errorf("the classroom's server did not stop within %s", wait)
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// isClosed reports whether Close has begun.
func (c *classroom) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// defaultHostKey is where the classroom's host key lives: created on first use, so that
// students' ssh clients see the same key every lecture.
func defaultHostKey() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory for the host key (%w): give --host-key FILE", err)
	}
	return filepath.Join(dir, "mqsim", "classroom_ed25519"), nil
}

// beyondLoopback reports whether listen (host:port) accepts connections from other
// machines: any host that is not a loopback address or localhost.
func beyondLoopback(listen string) (bool, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false, fmt.Errorf("--listen %s: want host:port, such as 127.0.0.1:2222", listen)
	}
	if host == "localhost" {
		return false, nil
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback(), nil
}
