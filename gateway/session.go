package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"mqsim/sim"
)

// SessionVersion is the session file format's version.
const SessionVersion = 1

// Session is everything a served run received: the world it ran on and each request as
// it arrived. Replaying it rebuilds the world without any client.
type Session struct {
	Version  int
	Scenario Scenario
	// Addrs are where the brokers listened: Metadata carries them, so the responses of a
	// replay are byte for byte those the clients got.
	Addrs    []Addr
	Arrivals []Arrival
	// EndStep and EndTime are where the world stood when the session ended; Hash is the
	// run's hash there.
	EndStep uint64
	EndTime sim.Time
	Hash    string
}

// Arrival is one request as the world received it: from connection Conn, made to broker
// Broker (Kafka node id), injected when the world had run Step events and its clock read
// Time; Frame is the request's bytes (after the size prefix). An arrival with a Command
// is instead a scenario command the operator gave at that moment (a fault: crash b1).
type Arrival struct {
	Conn    int   `json:",omitempty"`
	Broker  int32 `json:",omitempty"`
	Step    uint64
	Time    sim.Time
	Frame   []byte `json:",omitempty"`
	Command string `json:",omitempty"`
}

// Save writes the session to path atomically: a temporary file in the same directory,
// synced, then renamed over path, so a reader never sees half a session.
func (s *Session) Save(path string) error {
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := firstErr(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("session %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("session %s: %w", path, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// LoadSession reads a session file.
func LoadSession(path string) (*Session, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Session
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("session %s: %w (want the JSON file mqsim serve --session writes)", path, err)
	}
	if s.Version != SessionVersion {
		return nil, fmt.Errorf("session %s: format version %d, want %d", path, s.Version, SessionVersion)
	}
	return &s, nil
}

// Replay reruns a session's world: the same scenario, each request injected at the step
// and time it arrived, then on to where the session ended. It fails if the world is not
// at a request's recorded step when its time comes (the run diverged).
func Replay(s *Session) (*World, error) {
	w, err := Build(s.Scenario, s.recordedAddrs)
	if err != nil {
		return nil, err
	}
	for i, a := range s.Arrivals {
		if err := w.Apply(i, a); err != nil {
			return w, err
		}
	}
	return w, w.Finish(s)
}
