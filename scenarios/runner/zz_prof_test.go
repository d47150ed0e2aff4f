package runner

import (
	"testing"
	"time"
)

func TestZZProf(t *testing.T) {
	start := time.Now()
	r, outs := execAll(t, "cluster brokers=3 partitions=1 rf=3 min-isr=2 costs=realistic", "producer name=p0 linger=0s",
		"produce producer=p0 rate=50000/s for=200ms size=200B", "measure", "consume", "measure")
	t.Log(outs[2], outs[3], outs[5], time.Since(start))
	var s Settings
	v, err := r.Judge(s)
	t.Log(len(v.Report.String()), err, time.Since(start))
}
