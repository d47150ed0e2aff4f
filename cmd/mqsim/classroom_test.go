package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/vt"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/tui"
)

// wait is the bound of every wait in these tests.
const wait = 10 * time.Second

// student is an SSH client's session with a PTY of its own size; its output is fed
// to a terminal emulator, so that the test reads the screen the student sees.
type student struct {
	t      *testing.T
	name   string
	client *ssh.Client
	sess   *ssh.Session
	stdin  io.Writer
	stderr *lockedBuffer
	mu     sync.Mutex
	term   *vt.Emulator
	ended  chan error // the session's exit
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dialClassroom connects, asks for a w x h PTY and a shell. hostKey, when not nil,
// receives the server's host key.
func dialClassroom(t *testing.T, addr net.Addr, name string, w, h int, hostKey *ssh.PublicKey) *student {
	t.Helper()
	cfg := &ssh.ClientConfig{
		User: name,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if hostKey != nil {
				*hostKey = key
			}
			return nil
		},
		Timeout: wait,
	}
	client, err := ssh.Dial("tcp", addr.String(), cfg)
	if err != nil {
		t.Fatalf("%s: dial: %v", name, err)
	}
	sess, err := client.NewSession()
	if err != nil {
		t.Fatalf("%s: session: %v", name, err)
	}
	s := &student{t: t, name: name, client: client, sess: sess, stderr: &lockedBuffer{}, term: vt.NewEmulator(w, h), ended: make(chan error, 1)}
	t.Cleanup(func() { s.client.Close() })
	if s.stdin, err = sess.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sess.Stderr = s.stderr
	if err := sess.RequestPty("xterm-256color", h, w, ssh.TerminalModes{}); err != nil {
		t.Fatalf("%s: pty: %v", name, err)
	}
	if err := sess.Shell(); err != nil {
		t.Fatalf("%s: shell: %v", name, err)
	}
	// The emulator's answers to the program's queries are read and dropped: the test
	// types its own keys.
	go func() { _, _ = io.Copy(io.Discard, s.term) }()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			s.mu.Lock()
			_, _ = s.term.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				break
			}
		}
		s.ended <- sess.Wait()
		// Ends the reader of the emulator's answers (Emulator.Close would race with it).
		_ = s.term.InputPipe().(io.Closer).Close()
	}()
	return s
}

// screen is the student's screen as text.
func (s *student) screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.term.String()
}

// waitFor polls the screen until it contains want, or fails after the bound.
func (s *student) waitFor(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		scr := s.screen()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s's screen never showed %q; it shows:\n%s", s.name, want, scr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *student) press(keys string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, keys); err != nil {
		s.t.Fatalf("%s: typing %q: %v", s.name, keys, err)
	}
}

// waitEnded waits for the session to end and returns its error.
func (s *student) waitEnded() error {
	s.t.Helper()
	select {
	case err := <-s.ended:
		return err
	case <-time.After(wait):
		s.t.Fatalf("%s's session did not end within %s", s.name, wait)
		return nil
	}
}

// waitUntil polls ok until it holds, or fails after the bound.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: not so: %s", wait, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func recordRun(t *testing.T, name string) *tui.Run {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	run, err := tui.Record("main", s, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// marker is what the header says at event i: "step K / LAST".
func marker(run *tui.Run, i int) string {
	return fmt.Sprintf("step %d / %d,", run.Events[i].Step, run.Events[run.Len()-1].Step)
}

// eventsAtSteps are the first events of n distinct kernel steps under 1,000 (so that
// their number reads without a comma), spread over the run.
func eventsAtSteps(t *testing.T, run *tui.Run, n int) []int {
	var out []int
	for i := 1; i < run.Len() && len(out) < n; i++ {
		if run.Events[i].Step != run.Events[i-1].Step && run.Events[i].Step < 1000 && (len(out) == 0 || i-out[len(out)-1] > 5) {
			out = append(out, i)
		}
	}
	if len(out) < n {
		t.Fatalf("the run has fewer than %d distinct steps", n)
	}
	return out
}

func newTestClassroom(t *testing.T, run *tui.Run, max int, idle time.Duration, hostKey string) (*classroom, *lecturerHub) {
	t.Helper()
	hub := newLecturerHub(tui.LecturerMsg{Event: 0})
	room, err := startClassroom(classroomConfig{Listen: "127.0.0.1:0", MaxSessions: max, Idle: idle, HostKey: hostKey, NoColor: true}, run, hub)
	if err != nil {
		t.Fatal(err)
	}
	return room, hub
}

func TestClassroomTwoStudentsFollowTheLecturer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	run := recordRun(t, "acks1-leader-crash")
	at := eventsAtSteps(t, run, 3)
	room, hub := newTestClassroom(t, run, 2, time.Minute, filepath.Join(t.TempDir(), "mqsim", "host_ed25519"))

	// Two sessions at their own sizes: wide enough for two columns, and 80x24.
	wide := dialClassroom(t, room.Addr(), "ada", 130, 40, nil)
	narrow := dialClassroom(t, room.Addr(), "bob", 80, 24, nil)
	for _, s := range []*student{wide, narrow} {
		s.waitFor(marker(run, 0))
		s.waitFor("⇄ following")
	}
	// Each at its own size: the wide one in two columns (the timeline beside the rest),
	// the narrow one in one (its first frame is whole once its help line shows).
	wide.waitFor("│Cluster:")
	if scr := narrow.waitFor("e explore on your own"); strings.Contains(scr, "│") {
		t.Errorf("the 80-column session is laid out in two columns:\n%s", scr)
	}

	// The lecturer steps: both screens follow.
	hub.Publish(tui.LecturerMsg{Event: at[0]})
	wide.waitFor(marker(run, at[0]))
	narrow.waitFor(marker(run, at[0]))

	// ada explores on her own: the lecturer's next step moves bob only.
	wide.press("e")
	wide.waitFor("exploring ·")
	wide.press("g" + fmt.Sprint(run.Events[at[2]].Step) + "\r")
	wide.waitFor(marker(run, at[2]))
	hub.Publish(tui.LecturerMsg{Event: at[1]})
	narrow.waitFor(marker(run, at[1]))
	// A key that moves nothing, typed after the lecturer's step reached bob: once ada's
	// full help shows, her session has had time to read that step as bob's did. (The
	// tui package's test shows deterministically that an exploring model ignores it.)
	wide.press("?")
	wide.waitFor("+10")
	if scr := wide.screen(); !strings.Contains(scr, marker(run, at[2])) {
		t.Fatalf("ada explores, yet the lecturer's step moved her screen:\n%s", scr)
	}

	// ada rejoins: she is at the lecturer's step again.
	wide.press("r")
	wide.waitFor(marker(run, at[1]))
	wide.waitFor("⇄ following")

	// A third session finds the room full (the limit here is 2).
	third := dialClassroom(t, room.Addr(), "cyd", 80, 24, nil)
	err := third.waitEnded()
	var exit *ssh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 1 || !strings.Contains(third.stderr.String(), "the classroom is full (2 sessions)") {
		t.Fatalf("the third session: exit %v, stderr %q; want status 1 and the room is full", err, third.stderr.String())
	}
	if n := room.Sessions(); n != 2 {
		t.Fatalf("%d sessions open, want 2", n)
	}

	// Stopping the classroom ends every session and leaves no goroutine behind.
	if err := room.Close(wait); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*student{wide, narrow} {
		s.waitEnded()
		if scr := s.screen(); !strings.Contains(scr, "the lecturer closed the classroom") {
			t.Errorf("%s was not told the classroom closed:\n%s", s.name, scr)
		}
		s.client.Close()
	}
	third.client.Close()
}

func TestClassroomClosesIdleSessionsAndKeepsItsHostKey(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	run := recordRun(t, "acks1-leader-crash")
	keyFile := filepath.Join(t.TempDir(), "mqsim", "host_ed25519")
	var keys [2]ssh.PublicKey
	for i := range keys {
		room, _ := newTestClassroom(t, run, 5, 300*time.Millisecond, keyFile)
		start := time.Now()
		s := dialClassroom(t, room.Addr(), "dee", 80, 24, &keys[i])
		s.waitFor(marker(run, 0))
		s.waitEnded() // nobody types, the lecturer does not step
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Fatalf("the idle session ended %s after it connected, before its 300ms", d)
		}
		waitUntil(t, "the idle session is no longer counted", func() bool { return room.Sessions() == 0 })
		if err := room.Close(wait); err != nil {
			t.Fatal(err)
		}
		s.client.Close()
	}
	if keys[0] == nil || !bytes.Equal(keys[0].Marshal(), keys[1].Marshal()) {
		t.Fatalf("the host key changed between two classrooms on the same file")
	}
}

func TestClassroomListenBeyondLoopback(t *testing.T) {
	for listen, want := range map[string]bool{
		"127.0.0.1:2222": false, "localhost:2222": false, "[::1]:2222": false,
		"0.0.0.0:2222": true, ":2222": true, "192.168.1.5:2222": true, "lab.example.org:2222": true,
	} {
		got, err := beyondLoopback(listen)
		if err != nil || got != want {
			t.Errorf("beyondLoopback(%q) = %v, %v; want %v", listen, got, err, want)
		}
	}
	if _, err := beyondLoopback("2222"); err == nil || !strings.Contains(err.Error(), "want host:port") {
		t.Errorf("a port alone: %v", err)
	}
}

func TestLecturerHubNeverBlocksAndDeliversTheNewest(t *testing.T) {
	hub := newLecturerHub(tui.LecturerMsg{Event: 0})
	got := make(chan tui.LecturerMsg)
	stop := make(chan struct{})
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(done)
		hub.follow(ctx, func(at tui.LecturerMsg) {
			select {
			case got <- at:
			case <-stop:
			}
		})
	}()
	if at := <-got; at.Event != 0 {
		t.Fatalf("first delivery: %+v, want the current position 0", at)
	}
	// The follower is not reading: a thousand steps must not block the lecturer.
	published := make(chan struct{})
	go func() {
		for i := 1; i <= 1000; i++ {
			hub.Publish(tui.LecturerMsg{Event: i})
		}
		close(published)
	}()
	select {
	case <-published:
	case <-time.After(wait):
		t.Fatal("Publish blocked on a follower that does not read")
	}
	// The follower may have been woken once during the burst (and holds the position it
	// read then); after that it is woken once more and reads the newest: no backlog.
	first := <-got
	if first.Event != 1000 {
		if second := <-got; second.Event != 1000 {
			t.Fatalf("after 1000 steps the follower got %+v then %+v, want 1000 by the second", first, second)
		}
	}
	cancel()
	close(stop)
	<-done
}

func TestLecturerPublishesItsPosition(t *testing.T) {
	run := recordRun(t, "acks1-leader-crash")
	l := newLecturer(tui.New(run, tui.Options{NoColor: true}), run)
	type key = tea.KeyPressMsg
	for _, k := range []tea.Msg{key{Code: tea.KeyRight}, key{Code: tea.KeyRight}, key{Code: 'p', Text: "p"}} {
		next, _ := l.Update(k)
		l = next.(lecturer)
	}
	if got, want := l.hub.Current(), (tui.LecturerMsg{Event: l.Pos(), Present: true}); got != want || want.Event == 0 {
		t.Fatalf("after → → p the hub holds %+v, want %+v (and not the start)", got, want)
	}
}

func TestClassroomCommandRejectsBadFlagsBeforeRecording(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "2222"}, "--listen 2222: want host:port"},
		{[]string{"--max-sessions", "0"}, "--max-sessions 0: want at least 1"},
		{[]string{"--idle", "0s"}, "--idle 0s: want a positive duration"},
		{[]string{"no-such-scenario"}, "no scenario file or catalogue entry"},
	} {
		_, _, err := run(t, append([]string{"classroom"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mqsim classroom %v: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestClassroomBannerSaysWhatStudentsType(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:2222": "students type  ssh -p 2222 127.0.0.1 ",
		"0.0.0.0:2300":   "students type  ssh -p 2300 THIS-MACHINE ",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := classroomBanner(a); !strings.Contains(got, want) || !strings.Contains(got, "e explores") {
			t.Errorf("banner for %s: %q, want %q", addr, got, want)
		}
	}
}

func TestClassroomAsksForATerminal(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	run := recordRun(t, "acks1-leader-crash")
	room, _ := newTestClassroom(t, run, 2, time.Minute, filepath.Join(t.TempDir(), "k"))
	client, err := ssh.Dial("tcp", room.Addr().String(), &ssh.ClientConfig{User: "eve", HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	sess.Stderr = &stderr
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	select {
	case err = <-ended:
	case <-time.After(wait):
		t.Fatal("a session without a terminal was not closed")
	}
	if !strings.Contains(stderr.String(), "needs a terminal: connect with ssh -t") {
		t.Errorf("without a PTY: %v, stderr %q", err, stderr.String())
	}
	client.Close()
	if err := room.Close(wait); err != nil {
		t.Fatal(err)
	}
}
