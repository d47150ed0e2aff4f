package gateway

import "fmt"

// A replay, one arrival at a time: Replay runs them all; the TUI runs each as a step of
// its own (tui.RecordSession).

// recordedAddrs are the addresses the session's brokers listened at (Attach's listen).
func (s *Session) recordedAddrs(brokers int) ([]Addr, error) { return s.Addrs, nil }

// Apply replays arrival i of a session: runs the world to its time, checks the world is at
// its step, and injects the request (or applies the command).
func (w *World) Apply(i int, a Arrival) error {
	w.W.RunUntilTime(a.Time)
	if w.W.Steps() != a.Step {
		what := fmt.Sprintf("request %d (connection %d)", i+1, a.Conn)
		if a.Command != "" {
			what = fmt.Sprintf("command %d (%s)", i+1, a.Command)
		}
		return fmt.Errorf("%s arrived at step %d, but the replay is at step %d at %s: the run diverged", what, a.Step, w.W.Steps(), a.Time)
	}
	if a.Command != "" {
		if _, err := w.exec(a.Command); err != nil {
			return fmt.Errorf("command %d (%s): %w", i+1, a.Command, err)
		}
	} else if err := w.inject(a.Conn, a.Broker, a.Frame); err != nil {
		return fmt.Errorf("request %d (connection %d): %w", i+1, a.Conn, err)
	}
	w.Node.TakeReplies()
	return nil
}

// Finish runs a replayed world to where the session ended, and checks it ended there.
func (w *World) Finish(s *Session) error {
	w.W.RunUntilTime(s.EndTime)
	w.Node.TakeReplies()
	if w.W.Steps() != s.EndStep {
		return fmt.Errorf("the session ended at step %d, the replay at step %d", s.EndStep, w.W.Steps())
	}
	return nil
}
