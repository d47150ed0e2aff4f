package tui

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// RecordSession records a session of mqsim serve for the TUI: the session's scenario
// step by step as any run, then the gateway added (gateway.Attach) and each request the
// real clients sent, and each command the operator gave, replayed at the step it
// arrived (gateway.World.Apply), one step of the run each, named after the request. A
// session replays deterministically, so this run is the served one: same trace, same
// hash, and the verdict mqsim serve printed (gateway.World.Verdict), in the same panes
// as any run. A replay that diverges stops the run there, with Err saying where.
func RecordSession(ctx context.Context, name string, sess *gateway.Session, progress func(Progress)) (*Run, error) {
	s, err := script.Parse(sess.Scenario.Name, sess.Scenario.Text)
	if err != nil {
		return nil, err
	}
	more := func(rn *runner.Runner) ([]extraStep, func() (runner.Verdict, error)) {
		var gw *gateway.World
		steps := []extraStep{{step: sessionStep(sess.Scenario.Name, "gateway", "gateway: the real clients' requests from here on"),
			exec: func() (string, error) {
				var err error
				gw, err = gateway.Attach(rn, func(int) ([]gateway.Addr, error) { return sess.Addrs, nil })
				if err != nil {
					return "", err
				}
				return fmt.Sprintf("node %s serves %d requests and commands of session %s", gateway.NodeName, len(sess.Arrivals), name), nil
			}}}
		for i, a := range sess.Arrivals {
			steps = append(steps, extraStep{step: arrivalStep(sess.Scenario.Name, a),
				exec: func() (string, error) { return "", gw.Apply(i, a) }})
		}
		steps = append(steps, extraStep{step: sessionStep(sess.Scenario.Name, "end", "end of the session"),
			exec: func() (string, error) { return "", gw.Finish(sess) }})
		verdict := func() (runner.Verdict, error) {
			if gw == nil {
				return runner.Verdict{}, errNoVerdict
			}
			return gw.Verdict()
		}
		return steps, verdict
	}
	run, err := recordRun(ctx, name, s, gateway.RunnerOptions(sess.Scenario), progress, more)
	if err != nil {
		return nil, err
	}
	run.Session = sess
	return run, nil
}

// sessionStep is a step of a session's run beyond its scenario's (no line of its file).
func sessionStep(file, cmd, text string) script.Step {
	return script.Step{File: file, Cmd: cmd, Text: text}
}

// arrivalStep is the step of one arrival: the operator's command as the scenario
// parser reads it, or a "kafka" step naming the request's kind and version, its
// connection and broker (from the frame's own header, as the gateway decoded it).
func arrivalStep(file string, a gateway.Arrival) script.Step {
	if a.Command != "" {
		if s, err := script.Parse(file, a.Command+"\n----\n"); err == nil && len(s.Steps) == 1 {
			st := s.Steps[0]
			st.Line = 0
			return st
		}
		return sessionStep(file, "command", a.Command)
	}
	h, _, err := gateway.ParseRequest(a.Frame)
	if err != nil {
		return sessionStep(file, "kafka", fmt.Sprintf("kafka request on connection %d to b%d (%v)", a.Conn, a.Broker, err))
	}
	return sessionStep(file, "kafka", fmt.Sprintf("kafka %s v%d on connection %d to b%d", kmsg.NameForKey(h.Key), h.Version, a.Conn, a.Broker))
}
