package export

import (
	"encoding/csv"
	"io"
	"strconv"

	"mqsim/metrics"
)

// WriteMetrics writes the run's figures (package metrics) as a CSV time series, one row
// per change of one figure: a gauge's new value, a rate rising with the event it counts or
// falling as that event leaves the window. time_ns is virtual nanoseconds; step is the
// kernel step of the event that moved the figure (for a rate falling, of the last event
// before); alert is true while the value crosses the figure's threshold. The run traces
// messages, so TotalFetchRequestsPerSec is there.
func (r *Run) WriteMetrics(w io.Writer) error {
	tl := metrics.Build(r.Events, 0)
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"time_ns", "time", "step", "level", "scope", "metric", "value", "alert"}); err != nil {
		return err
	}
	for _, s := range tl.Samples() {
		row := []string{
			strconv.FormatInt(int64(s.Time), 10), s.Time.String(), strconv.FormatUint(s.Step, 10),
			s.Key.Level.String(), s.Key.Scope, s.Key.Metric.String(), metrics.Format(s.Value), strconv.FormatBool(s.Alert),
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
