package tui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"mqsim/gateway"
	"mqsim/model/broker"
	"mqsim/sim"
)

// runCmd runs a tea.Cmd off the test's goroutine, as Bubble Tea does, and fails if it
// does not come back in time.
func runCmd(t *testing.T, cmd tea.Cmd) tea.Msg {
	t.Helper()
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	select {
	case msg := <-got:
		return msg
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not come back within 10s")
		return nil
	}
}

// The live TUI follows a served session: the run grows with what a kgo client does, x
// crashes a broker in the served world (recorded in the session), and when the session
// ends the TUI holds its whole run, with the served hash and a verdict.
func TestLiveSessionFollowsClientsAndTakesFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	sc, err := gateway.LoadScenario("", 1)
	if err != nil {
		t.Fatal(err)
	}
	live := NewLive()
	srv, err := gateway.Listen(gateway.Options{Scenario: sc, Listen: "127.0.0.1:0", Speed: 4,
		Build: live.Build, Advanced: live.Advanced})
	if err != nil {
		t.Fatal(err)
	}
	live.Exec = srv.Exec
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan *gateway.Session, 1)
	go func() {
		s, err := srv.Serve(serveCtx)
		if err != nil {
			t.Error(err)
		}
		served <- s
	}()

	m := New(live.Latest(), Options{NoColor: true, Live: live})
	before := m.Run().Len()
	m = m.At(before - 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	cl.Close()
	// Snapshots come until one holds the broker's append of the gateway's batch.
	appended := func(r *Run) bool {
		return slices.ContainsFunc(r.Events, func(e sim.Event) bool {
			a, ok := e.Data.(broker.Appended)
			return ok && a.From == gateway.NodeName
		})
	}
	for cmd := m.Init(); !appended(m.Run()); {
		res, next := m.Update(runCmd(t, cmd))
		m, cmd = res.(Model), next
		if cmd == nil {
			t.Fatal("the live model stopped waiting for snapshots")
		}
	}
	if m.Pos() != m.Run().Len()-1 || m.Run().Len() <= before {
		t.Errorf("at event %d of %d (was %d): a user at the end follows the new events", m.Pos(), m.Run().Len(), before)
	}

	// x: the fault goes to the served world, in a command.
	m, cmd := m.fork("crash b1")
	msg := runCmd(t, cmd)
	if f, ok := msg.(liveFaultMsg); !ok || f.err != nil || !strings.Contains(f.out, "crash") {
		t.Fatalf("crash b1 live: %+v", msg)
	}
	res, _ := m.Update(msg)
	m = res.(Model)
	if !strings.Contains(m.status, "crash") {
		t.Errorf("status after the fault: %q", m.status)
	}

	stop()
	s := <-served
	final := live.End()
	if !slices.ContainsFunc(s.Arrivals, func(a gateway.Arrival) bool { return a.Command == "crash b1" }) {
		t.Error("the session did not record the fault given live")
	}
	if final.Hash != s.Hash {
		t.Errorf("the live run ends with hash %s, the session with %s", final.Hash, s.Hash)
	}
	if final.Verdict == nil {
		t.Error("the final live run has no verdict")
	}
	// The TUI built the served world itself: mqsim replay's world is the same.
	if w, err := gateway.Replay(s); err != nil || w.Hash() != s.Hash {
		t.Errorf("replay of the live session: %v, hash %v, want %s", err, w, s.Hash)
	}
	res, next := m.Update(runCmd(t, m.opts.Live.wait()))
	if m = res.(Model); next != nil || m.Run() != final {
		t.Error("the model did not take the final run and stop waiting")
	}
}
