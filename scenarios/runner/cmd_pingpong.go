package runner

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/pingpong"
	"mqsim/sim"
)

// Commands and node kinds of the ping-pong model, the kernel's end-to-end demo.

func init() {
	registerKind("echo", func() sim.Node { return &pingpong.Server{} })
	registerKind("journal", func() sim.Node { return &pingpong.Server{Durable: true} })
	registerKind("pinger", func() sim.Node { return &pingpong.Client{} })
	register(&Command{
		Name:  "ping",
		Usage: "ping from=CLIENT to=SERVER [count=N] [every=D]",
		Help:  "make a pinger send count pings (default 1), one every D (default 10ms)",
		Keys:  []string{"from", "to", "count", "every"},
		Run:   cmdPing,
	})
	showSubjects["pings"] = showPings
}

func cmdPing(r *Runner, a *Args) (string, error) {
	from, err := a.Required("from")
	if err != nil {
		return "", err
	}
	to, err := a.Required("to")
	if err != nil {
		return "", err
	}
	count, err := a.Int("count", 1, 1, 1_000_000)
	if err != nil {
		return "", err
	}
	every, err := a.Duration("every", 10*time.Millisecond)
	if err != nil {
		return "", err
	}
	id, err := r.node(from)
	if err != nil {
		return "", err
	}
	if _, ok := r.World().Node(id).(*pingpong.Client); !ok {
		return "", fmt.Errorf("%s is not a pinger (or is down)", from)
	}
	if _, err := r.node(to); err != nil {
		return "", err
	}
	cmd := pingpong.Start{To: to, Count: count, Every: every}
	r.World().Inject(id, cmd, 0)
	return fmt.Sprintf("%s: %s", from, cmd), nil
}

func showPings(r *Runner, a *Args, words []string) (string, error) {
	w := r.World()
	var lines []string
	for i := 0; i < w.NumNodes(); i++ {
		id := sim.NodeID(i)
		switch n := w.Node(id).(type) {
		case *pingpong.Client:
			var rtts []string
			for _, d := range n.RTTs {
				rtts = append(rtts, d.String())
			}
			lines = append(lines, fmt.Sprintf("%s: sent=%d answered=%d unanswered=%d rtt=[%s]",
				w.Name(id), n.Sent, n.Answers, n.Unanswered(), strings.Join(rtts, " ")))
		case *pingpong.Server:
			lines = append(lines, fmt.Sprintf("%s: answered=%d", w.Name(id), n.Answered))
		}
	}
	if len(lines) == 0 {
		return "no ping nodes up", nil
	}
	return strings.Join(lines, "\n"), nil
}
