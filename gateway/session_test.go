package gateway_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mqsim/gateway"
)

// A session saved and loaded replays; a session whose recorded step is off is reported
// as diverged, and a file that is not a session says what was expected.
func TestSessionSaveLoadAndDivergence(t *testing.T) {
	sc, err := gateway.LoadScenario("", 3)
	if err != nil {
		t.Fatal(err)
	}
	addrs := []gateway.Addr{{Host: "127.0.0.1", Port: 9092}, {Host: "127.0.0.1", Port: 9093}, {Host: "127.0.0.1", Port: 9094}}
	w, err := gateway.Build(sc, func(int) ([]gateway.Addr, error) { return addrs, nil })
	if err != nil {
		t.Fatal(err)
	}
	w.W.RunUntilTime(w.W.Now()) // as the server does before it records an arrival
	step, now := w.W.Steps(), w.W.Now()
	s := &gateway.Session{Version: gateway.SessionVersion, Scenario: sc, Addrs: addrs,
		Arrivals: []gateway.Arrival{{Step: step, Time: now, Command: "crash b2"}}}
	path := filepath.Join(t.TempDir(), "s.json")
	s.EndStep, s.EndTime = 0, now
	first, err := gateway.Replay(s)
	if err == nil || !strings.Contains(err.Error(), "ended at step") {
		t.Fatalf("a wrong end step: err %v", err)
	}
	s.EndStep = first.W.Steps()
	s.Hash = first.Hash()
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := gateway.LoadSession(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := gateway.Replay(loaded)
	if err != nil || again.Hash() != s.Hash {
		t.Fatalf("replay of the saved session: %v, hash %s want %s", err, again.Hash(), s.Hash)
	}
	loaded.Arrivals[0].Step++
	if _, err := gateway.Replay(loaded); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Errorf("a request recorded at the wrong step: err %v, want diverged", err)
	}
	os.WriteFile(path, []byte("not json"), 0o644)
	if _, err := gateway.LoadSession(path); err == nil || !strings.Contains(err.Error(), "mqsim serve") {
		t.Errorf("a bad file: err %v, want one naming what was expected", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("saving left %d files, want only the session (the temporary file renamed)", len(entries))
	}
}
