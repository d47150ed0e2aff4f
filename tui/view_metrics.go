package tui

import (
	"fmt"
	"strings"

	"mqsim/metrics"
)

// Metrics returns the run's figures (package metrics), computed from its trace the first
// time a view asks.
func (r *Run) Metrics() *metrics.Timeline {
	if r.metrics == nil {
		r.metrics = metrics.Build(r.Events, 0)
	}
	return r.metrics
}

// metricsPane shows the figures an operator watches at the current event: first those
// the event's kernel step changed (▲ rose, ▼ fell, with the value before), then the load
// per partition (show load's figures), then the others; ✖ marks a figure past its alert
// threshold.
func (m Model) metricsPane() pane {
	r := m.Run()
	p := pane{id: PaneMetrics, title: "Metrics"}
	if r.Len() == 0 {
		p.summary = "no events"
		p.lines = []string{p.summary}
		return p
	}
	tl := r.Metrics()
	figs := tl.At(m.Pos())
	if len(figs) == 0 {
		p.summary = "no figures yet"
		p.lines = []string{p.summary}
		return p
	}
	var changed, alerts []string
	var moved, rest []string
	for _, f := range figs {
		line := m.metricLine(f)
		if f.Alert {
			alerts = append(alerts, f.Key.String())
		}
		if f.Changed {
			changed = append(changed, fmt.Sprintf("%s %s→%s", f.Key, metrics.Format(f.Before), metrics.Format(f.Value)))
			moved = append(moved, line)
		} else {
			rest = append(rest, line)
		}
	}
	p.title = fmt.Sprintf("Metrics · %d changed at step %d, %s · rates over %s", len(moved), r.Events[m.Pos()].Step, plural(len(alerts), "alert"), tl.Window())
	summary := []string{fmt.Sprintf("%d changed at this step", len(changed))}
	if len(changed) > 0 {
		summary[0] += " (" + strings.Join(changed, ", ") + ")"
	}
	if len(alerts) > 0 {
		summary = append(summary, m.st.warn.Render(fmt.Sprintf("✖ %s: %s", plural(len(alerts), "alert"), strings.Join(alerts, ", "))))
	}
	p.summary = strings.Join(summary, " · ")
	// The load per partition goes between what changed and the rest, so that it shows.
	load := loadLines(metrics.LoadOf(r.Events[:m.Pos()+1], r.Events[m.Pos()].Time, tl.Window()))
	p.lines = append(append(moved, load...), rest...)
	return p
}

// loadLines is the per-partition load at the current event (show load's figures): each
// partition's leader, the records its leaders appended with its share of the topic's and
// their bytes over the run, and the records and share over the last window.
func loadLines(l metrics.Load) []string {
	if len(l.Partitions) == 0 {
		return nil
	}
	all, recent := map[string]int64{}, map[string]int64{}
	for _, p := range l.Partitions {
		all[p.TP.Topic] += p.Total.Records
		recent[p.TP.Topic] += p.Recent.Records
	}
	lines := []string{fmt.Sprintf("  Load: records (share), bytes · last %s", l.Window)}
	for _, p := range l.Partitions {
		leader := p.Leader
		if leader == "" {
			leader = "none"
		}
		lines = append(lines, fmt.Sprintf("  %-6s %-4s %6d (%3d%%) %8dB · %6d (%3d%%)", p.TP, leader,
			p.Total.Records, metrics.Share(p.Total.Records, all[p.TP.Topic]), p.Total.Bytes,
			p.Recent.Records, metrics.Share(p.Recent.Records, recent[p.TP.Topic])))
	}
	return append(lines, "")
}

// metricLine is one figure: its mark, name, scope and value.
func (m Model) metricLine(f metrics.Figure) string {
	mark := " "
	switch {
	case f.Changed && f.Value > f.Before:
		mark = "▲"
	case f.Changed:
		mark = "▼"
	}
	s := fmt.Sprintf("%s %-28s %-8s %s", mark, f.Metric, f.Scope, metrics.Format(f.Value))
	if f.Changed {
		s += m.st.dim.Render(" (was " + metrics.Format(f.Before) + ")")
	}
	if f.Alert {
		s = m.st.warn.Render(s + " ✖ alert")
	}
	return s
}
