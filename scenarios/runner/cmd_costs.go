package runner

import (
	"fmt"
	"strings"
	"time"

	"mqsim/sim"
)

// The hardware's costs (sim.Costs): the costs command, and the same keys on the cluster
// and queue-broker commands, so that --set reaches them (--set costs=realistic).

// costSetting is one key of sim.Costs.
type costSetting struct {
	key   string
	help  string
	apply func(a *Args, c *sim.Costs) error
}

func rateCost(key, help string, field func(*sim.Costs) *int64) costSetting {
	return costSetting{key, help, func(a *Args, c *sim.Costs) error {
		return byteCost(a, key, sim.ParseRate, field(c))
	}}
}

func byteCost(a *Args, key string, parse func(string) (int64, error), p *int64) error {
	s, err := a.String(key, "")
	if err != nil || s == "" {
		return err
	}
	n, err := parse(s)
	if err != nil {
		return fmt.Errorf("%s=%s: %v", key, s, err)
	}
	*p = n
	return nil
}

func cpuCost(key, help string, field func(*sim.Costs) *time.Duration) costSetting {
	return costSetting{key, help, func(a *Args, c *sim.Costs) (err error) {
		p := field(c)
		*p, err = a.Duration(key, *p)
		return
	}}
}

// costSettings are read in this order: the preset first, so that a key after it on the
// line (or in --set) changes one figure of it.
var costSettings = []costSetting{
	{"costs", "the hardware's costs: realistic (sim.RealisticCosts) or off (the default: nothing costs time)", func(a *Args, c *sim.Costs) error {
		s, err := a.String("costs", "")
		switch {
		case err != nil || s == "":
			return err
		case s == "realistic":
			*c = sim.RealisticCosts()
		case s == "off":
			*c = sim.Costs{}
		default:
			return fmt.Errorf("costs=%s: want realistic or off", s)
		}
		return nil
	}},
	rateCost("bandwidth", "bytes per second of every link, e.g. 1Gbit/s or 125MB/s (0: unlimited)", func(c *sim.Costs) *int64 { return &c.Bandwidth }),
	rateCost("disk-write", "bytes per second an fsync writes, e.g. 500MB/s (0: free)", func(c *sim.Costs) *int64 { return &c.DiskWrite }),
	rateCost("disk-read", "bytes per second of reads that miss the page cache, e.g. 2GB/s (0: free)", func(c *sim.Costs) *int64 { return &c.DiskRead }),
	costSetting{"page-cache", "page cache per node, e.g. 64MiB (with disk-read)", func(a *Args, c *sim.Costs) error {
		return byteCost(a, "page-cache", sim.ParseSize, &c.PageCache)
	}},
	cpuCost("cpu-request", "CPU time a node spends on each message it receives", func(c *sim.Costs) *time.Duration { return &c.CPUPerRequest }),
	cpuCost("cpu-record", "CPU time a node spends on each record a message carries", func(c *sim.Costs) *time.Duration { return &c.CPUPerRecord }),
}

func costKeys() []string {
	var keys []string
	for _, s := range costSettings {
		keys = append(keys, s.key)
	}
	return keys
}

// costsHelp lists the cost keys, indented, one a line.
func costsHelp(indent string) string {
	var b strings.Builder
	for _, s := range costSettings {
		fmt.Fprintf(&b, "%s%-18s %s\n", indent, s.key, s.help)
	}
	return b.String()
}

// readCosts changes c by the cost keys the step gives, and checks the result.
func readCosts(a *Args, c *sim.Costs) error {
	for _, s := range costSettings {
		if err := s.apply(a, c); err != nil {
			return err
		}
	}
	return c.Check()
}

// givesCosts reports whether the step names any cost key.
func givesCosts(a *Args) bool {
	for _, s := range costSettings {
		if a.Has(s.key) {
			return true
		}
	}
	return false
}

// applyCosts sets the world's costs from the step's cost keys, if it gives any, and
// returns the line that says so ("" when it gives none: the output stays as it was).
func applyCosts(r *Runner, a *Args) (string, error) {
	if !givesCosts(a) {
		return "", nil
	}
	c := r.World().Costs()
	if err := readCosts(a, &c); err != nil {
		return "", err
	}
	r.World().SetCosts(c)
	return "costs: " + c.String(), nil
}

func init() {
	register(&Command{
		Name:  "costs",
		Usage: "costs [realistic|off] [bandwidth=RATE] [disk-write=RATE] [disk-read=RATE] [page-cache=SIZE] [cpu-request=D] [cpu-record=D]",
		Help: "what the simulated hardware charges in time, from now on (off by default); realistic is sim.RealisticCosts, and a key after it changes one figure:\n" +
			strings.TrimRight(costsHelp("      "), "\n"),
		Keys: costKeys()[1:],
		Run:  cmdCosts,
	})
}

// cmdCosts is the costs command: a preset word, then keys; with neither it shows the
// costs in force.
func cmdCosts(r *Runner, a *Args) (string, error) {
	w := r.World()
	c := w.Costs()
	switch words := a.Words(); {
	case len(words) > 1:
		return "", fmt.Errorf("want one preset word (realistic or off), got %q", strings.Join(words, " "))
	case len(words) == 1 && words[0] == "realistic":
		c = sim.RealisticCosts()
	case len(words) == 1 && words[0] == "off":
		c = sim.Costs{}
	case len(words) == 1:
		return "", fmt.Errorf("%q: want realistic or off", words[0])
	}
	if err := readCosts(a, &c); err != nil {
		return "", err
	}
	w.SetCosts(c)
	return "costs: " + c.String(), nil
}
