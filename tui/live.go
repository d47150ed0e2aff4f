package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"mqsim/gateway"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// Live is a session of mqsim serve the TUI watches while real clients use it (mqsim
// serve --tui). The TUI's recorder stays attached to the served world, so the server's
// world goroutine records the run as it goes (Advanced) and hands the UI read-only
// snapshots; the UI waits for them in a tea.Cmd, never in Update, and gives its faults
// (x: crash b1, cut b1 <-> b2, pause ctl ...) to the server in a tea.Cmd as well
// (Exec), which applies them at the current virtual time and records them in the
// session. Nothing else touches the world.
type Live struct {
	// Exec applies a scenario command to the served world (gateway.Server.Exec).
	Exec func(ctx context.Context, command string) (string, error)

	rc       *recorder // owned by the world goroutine
	gw       *gateway.World
	snapLen  int       // events in the last snapshot
	snapWall time.Time // when it was taken

	mu     sync.Mutex
	latest *Run
	notify chan struct{} // holds a token when a newer snapshot waits
	done   chan struct{} // closed once latest is the final run
}

// liveEvery bounds how often the world goroutine takes a snapshot: each copies the
// view's state, and a person reads no faster.
const liveEvery = 100 * time.Millisecond

// NewLive makes a live session's watcher; give its Build and Advanced to the server's
// options (gateway.Options), and set Exec once the server listens.
func NewLive() *Live {
	return &Live{notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// Build is gateway.Options.Build: it runs the scenario's steps watched by the recorder,
// as any run of the TUI, then attaches the gateway; the recorder stays attached.
func (l *Live) Build(sc gateway.Scenario, listen func(brokers int) ([]gateway.Addr, error)) (*gateway.World, error) {
	s, err := script.Parse(sc.Name, sc.Text)
	if err != nil {
		return nil, err
	}
	more := func(rn *runner.Runner) ([]extraStep, func() (runner.Verdict, error)) {
		attach := extraStep{step: sessionStep(sc.Name, "gateway", "gateway: real clients from here on, live"),
			exec: func() (string, error) {
				var err error
				l.gw, err = gateway.Attach(rn, listen)
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("node %s serves real clients", gateway.NodeName), nil
			}}
		return []extraStep{attach}, nil
	}
	rc, _, err := recordSteps(context.Background(), "live", s, gateway.RunnerOptions(sc), nil, more)
	if err != nil {
		return nil, err
	}
	if rc.run.Err != nil {
		if rc.w != nil {
			rc.w.RemoveObserver(rc)
		}
		return nil, rc.run.Err
	}
	l.rc = rc
	l.publish(l.take())
	return l.gw, nil
}

// take snapshots the run (world goroutine only).
func (l *Live) take() *Run {
	r := l.rc.snapshot(nil)
	l.snapLen, l.snapWall = r.Len(), time.Now()
	return r
}

// Advanced is gateway.Options.Advanced: on the world goroutine, after the world moved,
// it hands the UI a new snapshot when there are new events and the last one is not too
// recent.
func (l *Live) Advanced(w *gateway.World) {
	if w.W.Trace().Len() == l.snapLen || time.Since(l.snapWall) < liveEvery {
		return
	}
	l.publish(l.take())
}

// End is called once the server's Serve returned (the world goroutine is done): the
// final run, judged as the session is (gateway.World.Verdict), goes to the UI and is
// returned.
func (l *Live) End() *Run {
	if l.rc.w != nil {
		l.rc.w.RemoveObserver(l.rc)
	}
	r := l.rc.snapshot(l.gw.Verdict)
	l.publish(r)
	close(l.done)
	return r
}

func (l *Live) publish(r *Run) {
	l.mu.Lock()
	l.latest = r
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default: // a token waits already: the UI will read this newer run
	}
}

// Latest is the newest snapshot of the run.
func (l *Live) Latest() *Run {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latest
}

// liveMsg brings a snapshot to the UI; Final says the session ended (no more follow).
type liveMsg struct {
	run   *Run
	final bool
}

// wait is the tea.Cmd that brings the next snapshot, off the UI loop.
func (l *Live) wait() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-l.notify:
		case <-l.done:
		}
		// done is looked at before latest is read: End publishes the final run before it
		// closes done, so a closed done means latest is final.
		final := false
		select {
		case <-l.done:
			final = true
		default:
		}
		return liveMsg{run: l.Latest(), final: final}
	}
}

// liveFaultMsg is what the server answered a fault given live.
type liveFaultMsg struct {
	command, out string
	err          error
}

// liveExecTimeout bounds the wait for the server to apply a command (it does at once
// while it serves; after it stopped, nothing would answer).
const liveExecTimeout = 5 * time.Second

// liveFault gives a fault to the served world, in a tea.Cmd: the session records it, and
// the next snapshot shows it.
func (m Model) liveFault(text string) (Model, tea.Cmd) {
	if _, err := sim.ParseAction(strings.Fields(text)); err != nil {
		m.status = err.Error()
		return m, nil
	}
	live := m.opts.Live
	m.status = "applying " + text + "..."
	return m, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), liveExecTimeout)
		defer cancel()
		out, err := live.Exec(ctx, text)
		return liveFaultMsg{command: text, out: out, err: err}
	}
}

// liveRun shows a newer snapshot of the live run: a user at the last event follows
// the new ones; elsewhere the position stays.
func (m Model) liveRun(msg liveMsg) Model {
	atEnd := m.pos[0] >= m.runs[0].Len()-1
	m.runs = slices.Clone(m.runs)
	m.runs[0] = msg.run
	if atEnd {
		m.pos = slices.Clone(m.pos)
		m.pos[0] = msg.run.Len() - 1
	}
	if msg.final {
		m.status = "the session ended: this is its whole run, with its verdict"
	}
	m.refresh()
	return m
}
