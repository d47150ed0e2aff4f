package runner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"mqsim/metrics"
	"mqsim/model/history"
	"mqsim/sim"
)

// Throughput in simulated time: the produce command's paced workload (rate=, for=,
// size=) and the measure command, which prints what a workload delivered
// (metrics.Measure) from the trace and the history.
//
// measure is a scenario command rather than a CLI subcommand (mqsim bench-scenario NAME)
// because a measurement belongs beside the settings it compares: a scenario measures
// linger.ms=0, then 20ms, in one transcript, golden and narrated, which mqsim run, the TUI
// and the notes' excerpts show as they show every other output; a subcommand would give
// one figure per run and a second way to run scenarios.

func init() {
	register(&Command{
		Name:  "measure",
		Usage: "measure [producer=NAME] [consumer=NAME] [by=partition]",
		Help: "print what was delivered since the previous measure (or the start): records/s and bytes/s acknowledged and read, " +
			"p50/p99 produce latency (send to ack), end-to-end latency (send to the poll that read it) and fetch latency (polls that brought records), " +
			"batches and requests per second, records per batch, bytes on the wire and in the leaders' logs; producer= and consumer= keep one client's figures; " +
			"by=partition adds each partition's acknowledged sends, rate and produce latency",
		Keys: []string{"producer", "consumer", "by"},
		Run:  cmdMeasure,
	})
}

// MaxWorkloadRecords bounds one paced produce (rate= × for=): enough for a throughput
// lesson, few enough that a scenario runs in well under a second of CPU.
const MaxWorkloadRecords = 100_000

// pace is a produce command's paced workload: count records, one every period.
type pace struct {
	rate  int64         // records per second; 0: all at once
	span  time.Duration // for=
	count int
	size  int // value bytes (0: the value's name alone)
}

// readPace reads rate=N/s for=D [size=SIZE]; rate= without for= (or the reverse) is an
// error.
func readPace(a *Args) (pace, error) {
	var p pace
	if a.Has("size") {
		s, _ := a.String("size", "")
		n, err := sim.ParseSize(s)
		if err != nil || n < 1 || n > 1<<20 {
			return p, fmt.Errorf("size=%s: want a value size from 1B to 1MiB, such as 200B or 1KiB", s)
		}
		p.size = int(n)
	}
	if !a.Has("rate") && !a.Has("for") {
		return p, nil
	}
	s, _ := a.String("rate", "")
	rate, err := strconv.ParseInt(strings.TrimSuffix(s, "/s"), 10, 64)
	if err != nil || rate < 1 || rate > 10_000_000 {
		return p, fmt.Errorf("rate=%s: want records per second such as 20000/s (1 to 10000000), with for=D", s)
	}
	span, err := a.Duration("for", 0)
	if err != nil || span <= 0 {
		return p, fmt.Errorf("rate= sends for a while: give for=D (such as for=500ms)")
	}
	n := rate * int64(span) / int64(time.Second)
	if n < 1 || n > MaxWorkloadRecords {
		return p, fmt.Errorf("rate=%s for=%s makes %d records: want 1 to %d", s, span, n, MaxWorkloadRecords)
	}
	p.rate, p.span, p.count = rate, span, int(n)
	return p, nil
}

// at is when record i is handed to the producer, after the command.
func (p pace) at(i int) time.Duration {
	if p.rate == 0 {
		return 0
	}
	return time.Duration(int64(i) * int64(time.Second) / p.rate)
}

// value pads a value's name to the workload's size with dots, so that records are as
// large as the lesson wants and still unique.
func (p pace) value(name string) string {
	if len(name) >= p.size {
		return name
	}
	return name + strings.Repeat(".", p.size-len(name))
}

// paceSummary says how a paced workload's sends ended, in counts (the values are too
// many to list one by one).
func paceSummary(name string, p pace, h history.History, values []string, wait bool) string {
	head := fmt.Sprintf("%s: %d records at %d/s for %s", name, p.count, p.rate, p.span)
	if p.size > 0 {
		head += fmt.Sprintf(", values of %dB", p.size)
	}
	if !wait {
		return head + " handed to the producer"
	}
	want := make(map[string]bool, len(values))
	for _, v := range values {
		want[v] = true
	}
	counts := map[history.Type]int{}
	for _, op := range h {
		if op.F == history.Send && op.Type != history.Invoke && want[op.Send.Value] {
			counts[op.Type]++
		}
	}
	return fmt.Sprintf("%s: %d ok, %d failed, %d unknown", head, counts[history.Ok], counts[history.Fail], counts[history.Info])
}

func cmdMeasure(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	w := c.W
	if w.Trace().Mode != sim.TraceKeep {
		return "", fmt.Errorf("measure needs the whole trace, and this run does not keep it")
	}
	s := metrics.Scope{From: r.measuredAt, To: w.Now()}
	if name, _ := a.String("producer", ""); name != "" {
		p := c.Producer(name)
		if p == nil {
			return "", fmt.Errorf("producer=%s: no such producer (or it is down)", name)
		}
		s.Producers, s.ProducerProcesses, s.ConsumerProcesses = []string{name}, []int{p.Process()}, []int{}
	}
	if name, _ := a.String("consumer", ""); name != "" {
		cs := c.Consumer(name)
		if cs == nil {
			return "", fmt.Errorf("consumer=%s: no such consumer (or it is down)", name)
		}
		if s.Producers == nil {
			s.Producers, s.ProducerProcesses = []string{}, []int{}
		}
		s.ConsumerProcesses = []int{cs.Process()}
	}
	byPartition := false
	if a.Has("by") {
		if by, _ := a.String("by", ""); by != "partition" {
			return "", fmt.Errorf("by=%s: want by=partition", by)
		}
		byPartition = true
	}
	t := metrics.Measure(w.Trace().Events(), c.History.History(), s)
	r.measuredAt = w.Now()
	lines := MeasureLines(t)
	if byPartition {
		lines = append(lines, PartitionLines(t, w.Costs().Bandwidth)...)
	}
	return strings.Join(lines, "\n"), nil
}

// MeasureLines renders a measurement: produce, batches, consume, each a line or two.
func MeasureLines(t metrics.Throughput) []string {
	lines := []string{fmt.Sprintf("from %s to %s", t.From, t.To)}
	if t.Acked+t.Failed > 0 {
		lines = append(lines,
			fmt.Sprintf("produced: %d records acknowledged in %s: %d records/s, %s/s (%d failed or unknown)",
				t.Acked, roundDuration(t.SendSpan), metrics.PerSecond(t.Acked, t.SendSpan),
				bytesText(metrics.PerSecond(t.AckedBytes, t.SendSpan)), t.Failed),
			"  produce latency (send to ack): "+latencyText(t.ProduceLatency))
	}
	if t.Batches > 0 {
		lines = append(lines,
			fmt.Sprintf("batches: %d (%d records each on average), %d requests/s, %d retried",
				t.Batches, t.BatchRecords/t.Batches, metrics.PerSecond(t.Batches, t.SendSpan), t.Retries),
			fmt.Sprintf("  on the wire: %s in produce requests (records %s uncompressed)", bytesText(t.WireBytes), bytesText(t.RawBytes)),
			fmt.Sprintf("  on disk: %s appended by the leaders (each follower stores as much)", bytesText(t.StoredBytes)))
	}
	if t.Read > 0 {
		lines = append(lines,
			fmt.Sprintf("consumed: %d records read in %s: %d records/s, %s/s", t.Read, roundDuration(t.ReadSpan),
				metrics.PerSecond(t.Read, t.ReadSpan), bytesText(metrics.PerSecond(t.ReadBytes, t.ReadSpan))),
			"  end to end (send to read): "+latencyText(t.EndToEnd),
			fmt.Sprintf("  fetch (%d polls that brought records): %s", t.Fetch.N, latencyText(t.Fetch)))
	}
	if len(lines) == 1 {
		lines = append(lines, "nothing delivered")
	}
	return lines
}

// PartitionLines renders each partition's share of the acknowledged sends: a hot
// partition shows as the one with the most records and the highest latency. With a
// link bandwidth (bytes per second, 0 for none), each line also says how busy the
// producer's link to the partition's leader was over the partition's sends: its
// produce requests' bytes over what the link carries in that time (a link that also
// carries other traffic is busier than this says).
func PartitionLines(t metrics.Throughput, bandwidth int64) []string {
	if len(t.Partitions) == 0 {
		return []string{"by partition: nothing sent"}
	}
	lines := []string{"by partition (acknowledged sends, their rate over their own span, produce latency):"}
	for _, p := range t.Partitions {
		line := fmt.Sprintf("  %s: %d records (%d%%) in %s: %d records/s, %s/s; p50 %s, p99 %s",
			p.TP, p.Acked, metrics.Share(p.Acked, t.Acked), roundDuration(p.SendSpan), metrics.PerSecond(p.Acked, p.SendSpan),
			bytesText(metrics.PerSecond(p.Bytes, p.SendSpan)), roundDuration(p.ProduceLatency.P50), roundDuration(p.ProduceLatency.P99))
		if bandwidth > 0 && p.SendSpan > 0 {
			line += fmt.Sprintf("; link to its leader %d%% busy", metrics.Share(metrics.PerSecond(p.WireBytes, p.SendSpan), bandwidth))
		}
		lines = append(lines, line)
	}
	return lines
}

func latencyText(p metrics.Percentiles) string {
	return fmt.Sprintf("p50 %s, p99 %s, max %s", roundDuration(p.P50), roundDuration(p.P99), roundDuration(p.Max))
}

// roundDuration keeps a measured duration to 10µs, enough to compare and short to read.
func roundDuration(d time.Duration) string { return sim.FormatDuration(d.Round(10 * time.Microsecond)) }

// bytesText writes a byte count in B, KB or MB with one decimal (decimal units, as rates
// are).
func bytesText(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%d.%dMB", n/1_000_000, n%1_000_000/100_000)
	case n >= 1_000:
		return fmt.Sprintf("%d.%dKB", n/1_000, n%1_000/100)
	}
	return fmt.Sprintf("%dB", n)
}
