package labs

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/sim"
)

// labScript is one random run of a lab being written: its random stream, the fault kinds
// the seed switched on (swarm testing: each kind on or off for the whole run), and the
// scenario text.
type labScript struct {
	r  *sim.Rand
	on []string
	b  strings.Builder
}

// startLabScript draws, from the lab's own stream, which of kinds the seed switches on,
// and writes the header and the world line: latency 1ms, a jitter, an fsync of 1 to
// maxFsyncMs, and the loss and duplication rates of the "loss" and "duplicate" kinds.
func startLabScript(lab string, seed uint64, code Code, kinds []string, maxFsyncMs int) *labScript {
	s := &labScript{r: sim.NewRand(seed, "lab/"+lab)}
	for _, k := range kinds {
		if s.r.Chance(sim.Percent(50)) {
			s.on = append(s.on, k)
		}
	}
	on := "none"
	if len(s.on) > 0 {
		on = strings.Join(s.on, ", ")
	}
	fmt.Fprintf(&s.b, "# Lab %s: seed %d, code %s.\n# Fault kinds on: %s.\n", lab, seed, code, on)
	world := fmt.Sprintf("world seed=%d latency=1ms jitter=%dus fsync=%dms", seed, s.r.IntN(3000), 1+s.r.IntN(maxFsyncMs))
	if s.has("loss") {
		world += fmt.Sprintf(" drop=%dppm", 1000+s.r.IntN(30_000))
	}
	if s.has("duplicate") {
		world += fmt.Sprintf(" dup=%dppm", 1000+s.r.IntN(30_000))
	}
	s.line("%s", world)
	return s
}

// line writes one command, with the separator of an empty expected output.
func (s *labScript) line(format string, args ...any) { fmt.Fprintf(&s.b, format+"\n----\n\n", args...) }

func (s *labScript) has(kind string) bool { return slices.Contains(s.on, kind) }

// pick draws one of from.
func (s *labScript) pick(from []string) string { return from[s.r.IntN(len(from))] }

// togglePause pauses node, or resumes it if paused holds it, and returns the nodes
// paused since.
func (s *labScript) togglePause(node string, paused []string) []string {
	if slices.Contains(paused, node) {
		s.line("resume %s", node)
		return slices.DeleteFunc(paused, func(p string) bool { return p == node })
	}
	s.line("pause %s", node)
	return append(paused, node)
}

// partition cuts nodes in two at random.
func (s *labScript) partition(nodes []string) {
	order := slices.Clone(nodes)
	for j := len(order) - 1; j > 0; j-- {
		x := s.r.IntN(j + 1)
		order[j], order[x] = order[x], order[j]
	}
	cut := 1 + s.r.IntN(len(order)-1)
	s.line("partition %s | %s", strings.Join(order[:cut], " "), strings.Join(order[cut:], " "))
}

// endFaults ends every fault, as a run's liveness phase starts: the network heals, the
// paused nodes resume, restart restarts (it runs, whatever it went through) and the
// links carry settings (drop and duplication off) from now on.
func (s *labScript) endFaults(paused, restart []string, settings string) {
	s.line("heal")
	if len(paused) > 0 {
		s.line("resume %s", strings.Join(paused, " "))
	}
	s.line("restart %s", strings.Join(restart, " "))
	s.line("link all %s", settings)
}

// crashOrRestart crashes node (three times in five) or restarts it.
func (s *labScript) crashOrRestart(node string) {
	if s.r.Chance(sim.Percent(60)) {
		s.line("crash %s", node)
	} else {
		s.line("restart %s", node)
	}
}
