package runner

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/metrics"
	"mqsim/sim"
)

// show metrics: the figures an operator watches (package metrics), computed from the
// run's trace so far.

func init() {
	showSubjects["metrics"] = showMetrics
}

var metricLevels = []metrics.Level{metrics.Cluster, metrics.Controller, metrics.Broker, metrics.Partition, metrics.Consumer}

// showMetrics prints every figure now, those of the levels named (cluster, controller,
// broker, partition, consumer) when some are: "(was N)" marks a figure that changed since
// the previous show metrics, ALERT one past its threshold.
func showMetrics(r *Runner, a *Args, words []string) (string, error) {
	var only []metrics.Level
	for _, w := range words {
		i := slices.IndexFunc(metricLevels, func(l metrics.Level) bool { return l.String() == w })
		if i < 0 {
			return "", fmt.Errorf("show metrics %s: want levels among cluster, controller, broker, partition, consumer", w)
		}
		only = append(only, metricLevels[i])
	}
	w := r.World()
	if w.Trace().Mode != sim.TraceKeep {
		return "", fmt.Errorf("show metrics needs the whole trace, and this run does not keep it")
	}
	tl := metrics.Build(w.Trace().Events(), 0)
	figs := tl.Now(w.Now(), r.metricsShown)
	if r.metricsShown == nil {
		r.metricsShown = map[metrics.Key]float64{}
	}
	var lines []string
	for _, f := range figs {
		r.metricsShown[f.Key] = f.Value
		if len(only) > 0 && !slices.Contains(only, f.Level) {
			continue
		}
		lines = append(lines, f.Line())
	}
	if len(lines) == 0 {
		return "no figures yet", nil
	}
	return fmt.Sprintf("rates over the last %s\n%s", tl.Window(), strings.Join(lines, "\n")), nil
}
