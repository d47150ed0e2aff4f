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
	showSubjects["load"] = showLoad
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

// showLoad prints each partition's load (metrics.LoadOf): records, bytes and produce
// batches its leaders appended, fetch requests for it, over the run and over the last
// window (metrics.DefaultWindow), and the broker that leads it now.
func showLoad(r *Runner, a *Args, words []string) (string, error) {
	if len(words) > 0 {
		return "", fmt.Errorf("show load takes nothing more")
	}
	w := r.World()
	if w.Trace().Mode != sim.TraceKeep {
		return "", fmt.Errorf("show load needs the whole trace, and this run does not keep it")
	}
	l := metrics.LoadOf(w.Trace().Events(), w.Now(), 0)
	if len(l.Partitions) == 0 {
		return "no partitions yet", nil
	}
	return strings.Join(LoadLines(l), "\n"), nil
}

// LoadLines renders a load table: a header, then one line per partition with its share
// of the topic's records.
func LoadLines(l metrics.Load) []string {
	fetches := func(s metrics.Served) string {
		if !l.FetchesCounted {
			return "-"
		}
		return fmt.Sprint(s.Fetches)
	}
	topicRecords, topicRecent := map[string]int64{}, map[string]int64{}
	for _, p := range l.Partitions {
		topicRecords[p.TP.Topic] += p.Total.Records
		topicRecent[p.TP.Topic] += p.Recent.Records
	}
	recent := "last " + l.Window.String() + ":"
	lines := []string{fmt.Sprintf("%-9s %-6s %17s %9s %9s %8s | %s %17s %9s %9s %8s",
		"partition", "leader", "records (share)", "bytes", "produces", "fetches", recent, "records (share)", "bytes", "produces", "fetches")}
	for _, p := range l.Partitions {
		leader := p.Leader
		if leader == "" {
			leader = "none"
		}
		share := fmt.Sprintf("%d (%d%%)", p.Total.Records, metrics.Share(p.Total.Records, topicRecords[p.TP.Topic]))
		recentShare := fmt.Sprintf("%d (%d%%)", p.Recent.Records, metrics.Share(p.Recent.Records, topicRecent[p.TP.Topic]))
		lines = append(lines, fmt.Sprintf("%-9s %-6s %17s %9d %9d %8s | %*s %17s %9d %9d %8s",
			p.TP, leader, share, p.Total.Bytes, p.Total.Produces, fetches(p.Total),
			len(recent), "", recentShare, p.Recent.Bytes, p.Recent.Produces, fetches(p.Recent)))
	}
	if !l.FetchesCounted {
		lines = append(lines, "fetches: counted only when the trace keeps messages (world trace-messages=true)")
	}
	return lines
}
