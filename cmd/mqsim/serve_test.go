package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"mqsim/checker"
	"mqsim/gateway"
	"mqsim/tui"
)

// servedSession serves the default cluster while a kgo client produces three records
// and reads them back, and returns the saved session file.
func servedSession(t *testing.T) string {
	t.Helper()
	sc, err := gateway.LoadScenario("", 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "session.json")
	srv, err := gateway.Listen(gateway.Options{Scenario: sc, Listen: "127.0.0.1:0", Speed: 4, SessionPath: path})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := srv.Serve(serveCtx); done <- err }()
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v", v, err)
		}
	}
	for n := 0; n < 3 && ctx.Err() == nil; {
		n += cl.PollFetches(ctx).NumRecords()
	}
	cl.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return path
}

// mqsim replay prints the session's verdict; mqsim tui opens the session at the
// gateway's events, with the same hash and the same verdict.
func TestReplayAndTUIOpenASession(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	path := servedSession(t)
	s, err := gateway.LoadSession(path)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "replay", path)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	for _, want := range []string{"hash " + s.Hash, "result: valid (0 violations, 0 allowed)"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
	hist := filepath.Join(t.TempDir(), "h.jsonl")
	if _, _, err := run(t, "replay", path, "--history", hist); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, "check", hist)
	if err != nil || !strings.Contains(out, "result: valid") {
		t.Fatalf("mqsim check of the session's history: %v\n%s", err, out)
	}

	// The TUI's run is the served one: the same hash, the same verdict, a step per
	// request after the scenario's.
	tr, err := tui.RecordSession(context.Background(), "main", s, nil)
	if err != nil || tr.Err != nil {
		t.Fatalf("RecordSession: %v, run error %v", err, tr.Err)
	}
	if tr.Hash != s.Hash {
		t.Errorf("the TUI's run has hash %s, the session %s", tr.Hash, s.Hash)
	}
	if tr.Verdict == nil || tr.Report.Result != checker.Valid {
		t.Errorf("the TUI's verdict: %+v", tr.Report)
	}
	kafkaSteps := 0
	for _, sp := range tr.Steps {
		if sp.Step.Cmd == "kafka" {
			kafkaSteps++
		}
	}
	if kafkaSteps != len(s.Arrivals) {
		t.Errorf("%d kafka steps in the TUI's run, %d requests in the session", kafkaSteps, len(s.Arrivals))
	}

	// The first request the gateway received, on the screen at its step.
	step := s.Arrivals[0].Step + 1
	out, _, err = run(t, "tui", path, "--print", "--width", "160", "--height", "50", "--step", fmt.Sprint(step))
	if err != nil {
		t.Fatalf("tui: %v\n%s", err, out)
	}
	for _, want := range []string{"acks=all from gw", "kafka Produce"} {
		if !strings.Contains(out, want) {
			t.Errorf("the TUI at step %d does not show %q:\n%s", step, want, out)
		}
	}
	if _, _, err := run(t, "tui", path, "--seed", "2", "--print"); err == nil || !strings.Contains(err.Error(), "session of mqsim serve") {
		t.Errorf("tui SESSION --seed 2: err = %v, want that a session replays as served", err)
	}
}
