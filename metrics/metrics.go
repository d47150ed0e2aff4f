package metrics

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"mqsim/sim"
)

// Level is what a figure describes.
type Level uint8

// The levels, in the order views list them.
const (
	Cluster Level = iota
	Controller
	Broker
	Partition
	Consumer
)

var levelNames = [...]string{"cluster", "controller", "broker", "partition", "consumer"}

func (l Level) String() string { return levelNames[l] }

// Kind says how a figure is measured.
type Kind uint8

const (
	// Gauge is a value at an instant.
	Gauge Kind = iota
	// Rate is events per second (per hour for rebalance-rate-per-hour) over the last
	// Window of virtual time.
	Rate
)

// Metric is one of the figures, named as Kafka names it.
type Metric uint8

// The metrics, in the order views list them within a level.
const (
	ActiveControllerCount Metric = iota
	OfflinePartitionsCount
	LeaderElectionRate
	UncleanLeaderElectionsPerSec
	UnderReplicatedPartitions
	UnderMinIsrPartitionCount
	IsrShrinksPerSec
	IsrExpandsPerSec
	TotalProduceRequestsPerSec
	FailedProduceRequestsPerSec
	TotalFetchRequestsPerSec
	UnderReplicated
	UnderMinIsr
	InSyncReplicasCount
	RecordsLagMax
	RebalanceRatePerHour
	numMetrics
)

type metricInfo struct {
	name  string
	kind  Kind
	about string
	// alert is the threshold an operator alerts on (nil: none): at the cluster level
	// for ActiveControllerCount, whose healthy sum is exactly 1.
	alert func(v float64) bool
}

func above0(v float64) bool { return v > 0 }

var infos = [numMetrics]metricInfo{
	ActiveControllerCount:        {"ActiveControllerCount", Gauge, "controllers acting as the active one (the cluster's sum must be exactly 1)", func(v float64) bool { return v != 1 }},
	OfflinePartitionsCount:       {"OfflinePartitionsCount", Gauge, "partitions with no leader: nobody can produce to or fetch from them", above0},
	LeaderElectionRate:           {"LeaderElectionRate", Rate, "leader elections per second (LeaderElectionRateAndTimeMs)", nil},
	UncleanLeaderElectionsPerSec: {"UncleanLeaderElectionsPerSec", Rate, "elections of a replica outside the ISR per second: acknowledged writes may be lost", above0},
	UnderReplicatedPartitions:    {"UnderReplicatedPartitions", Gauge, "partitions this broker leads whose ISR is smaller than the replica set", above0},
	UnderMinIsrPartitionCount:    {"UnderMinIsrPartitionCount", Gauge, "partitions this broker leads whose ISR is below min.insync.replicas: acks=all produces fail", above0},
	IsrShrinksPerSec:             {"IsrShrinksPerSec", Rate, "ISR shrinks per second, marked on the leader whose AlterPartition was accepted", nil},
	IsrExpandsPerSec:             {"IsrExpandsPerSec", Rate, "ISR expansions per second, marked on the leader", nil},
	TotalProduceRequestsPerSec:   {"TotalProduceRequestsPerSec", Rate, "producer batches per second this broker took or refused as a partition's leader", nil},
	FailedProduceRequestsPerSec:  {"FailedProduceRequestsPerSec", Rate, "producer batches per second this broker refused (NOT_ENOUGH_REPLICAS, a sequence error, a failed disk)", nil},
	TotalFetchRequestsPerSec:     {"TotalFetchRequestsPerSec", Rate, "fetch requests per second this broker received, from followers and consumers (needs trace-messages=true)", nil},
	UnderReplicated:              {"UnderReplicated", Gauge, "1 when the partition's ISR is smaller than its replica set", above0},
	UnderMinIsr:                  {"UnderMinIsr", Gauge, "1 when the partition's ISR is below min.insync.replicas", above0},
	InSyncReplicasCount:          {"InSyncReplicasCount", Gauge, "the size of the partition's ISR", nil},
	RecordsLagMax:                {"records-lag-max", Gauge, "the most records any of the consumer's partitions has above its position (leader HW minus position)", nil},
	RebalanceRatePerHour:         {"rebalance-rate-per-hour", Rate, "generations the consumer joined, per hour", nil},
}

func (m Metric) String() string { return infos[m].name }

// Kind says whether the metric is a gauge or a rate.
func (m Metric) Kind() Kind { return infos[m].kind }

// About says in one line what the metric counts.
func (m Metric) About() string { return infos[m].about }

// HasAlert reports whether an operator alerts on the metric.
func (m Metric) HasAlert() bool { return infos[m].alert != nil }

// Key names one figure: a metric of one scope (a broker, a partition "t/0", a consumer,
// a controller, or "cluster").
type Key struct {
	Level  Level
	Scope  string
	Metric Metric
}

func (k Key) String() string { return k.Metric.String() + " " + k.Scope }

// Alert reports whether value v crosses the key's alert threshold.
func (k Key) Alert(v float64) bool {
	f := infos[k.Metric].alert
	if f == nil || (k.Metric == ActiveControllerCount && k.Level != Cluster) {
		return false // one controller's 0 is normal: only the cluster's sum must be 1
	}
	return f(v)
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Metric, b.Metric))
}

// DefaultWindow is the virtual time over which rates count events.
const DefaultWindow = 10 * time.Second

// point is a gauge's value from the event at index idx on.
type point struct {
	idx int
	v   float64
}

// Timeline is every figure of a run at every event of its trace.
type Timeline struct {
	window time.Duration
	times  []sim.Time
	steps  []uint64
	keys   []Key
	gauges map[Key][]point
	// occurs lists, for a rate, the indexes of the events it counts.
	occurs map[Key][]int
}

// Build reads a run's trace and computes its figures, rates counted over window (0 for
// DefaultWindow).
func Build(events []sim.Event, window time.Duration) *Timeline {
	if window <= 0 {
		window = DefaultWindow
	}
	t := &Timeline{window: window, gauges: map[Key][]point{}, occurs: map[Key][]int{}}
	f := newFold(t)
	for i, e := range events {
		t.times = append(t.times, e.Time)
		t.steps = append(t.steps, e.Step)
		f.observe(i, e)
	}
	slices.SortFunc(t.keys, compareKeys)
	return t
}

// Window is the virtual time over which rates count events.
func (t *Timeline) Window() time.Duration { return t.window }

// Len is the number of events the timeline read.
func (t *Timeline) Len() int { return len(t.times) }

// Keys lists the figures the run has, in view order.
func (t *Timeline) Keys() []Key { return t.keys }

func (t *Timeline) known(k Key) bool {
	_, g := t.gauges[k]
	_, r := t.occurs[k]
	return g || r
}

func (t *Timeline) setGauge(i int, k Key, v float64) {
	ps, ok := t.gauges[k]
	if !ok {
		t.keys = append(t.keys, k)
	}
	if len(ps) > 0 && ps[len(ps)-1].v == v {
		return
	}
	if len(ps) > 0 && ps[len(ps)-1].idx == i {
		ps = ps[:len(ps)-1]
		if len(ps) > 0 && ps[len(ps)-1].v == v {
			t.gauges[k] = ps
			return
		}
	}
	t.gauges[k] = append(ps, point{i, v})
}

func (t *Timeline) mark(i int, k Key) {
	if !t.known(k) {
		t.keys = append(t.keys, k)
	}
	t.occurs[k] = append(t.occurs[k], i)
}

// Value is the figure k after event i (0 before it first appears).
func (t *Timeline) Value(k Key, i int) float64 {
	if ps, ok := t.gauges[k]; ok {
		j, _ := slices.BinarySearchFunc(ps, i+1, func(p point, x int) int { return cmp.Compare(p.idx, x) })
		if j == 0 {
			return 0
		}
		return ps[j-1].v
	}
	return t.rateAt(t.occurs[k], k.Metric, i, t.times[i])
}

// rateAt counts the occurrences at or before event i within the window ending at now.
func (t *Timeline) rateAt(occ []int, m Metric, i int, now sim.Time) float64 {
	hi, _ := slices.BinarySearch(occ, i+1)
	from := now - sim.Time(t.window)
	lo, _ := slices.BinarySearchFunc(occ[:hi], from, func(idx int, x sim.Time) int {
		if t.times[idx] <= x {
			return -1
		}
		return 1
	})
	return perUnit(m, hi-lo, t.window)
}

// perUnit turns a count over window into the metric's unit: per second, or per hour.
func perUnit(m Metric, n int, window time.Duration) float64 {
	unit := time.Second
	if m == RebalanceRatePerHour {
		unit = time.Hour
	}
	return float64(n) * float64(unit) / float64(window)
}

// Figure is one figure's value after an event.
type Figure struct {
	Key
	Value float64
	// Before is the value at the end of the previous kernel step; Changed says the step
	// of the event moved it.
	Before  float64
	Changed bool
	Alert   bool
}

// At lists every figure known after event i, in view order, with what its kernel step
// changed.
func (t *Timeline) At(i int) []Figure {
	if i < 0 || i >= len(t.times) {
		return nil
	}
	prev := i
	for prev >= 0 && t.steps[prev] == t.steps[i] {
		prev--
	}
	var out []Figure
	for _, k := range t.keys {
		if !t.seenBy(k, i) {
			continue
		}
		f := Figure{Key: k, Value: t.Value(k, i)}
		if prev >= 0 {
			f.Before = t.Value(k, prev)
		}
		f.Changed = f.Before != f.Value
		f.Alert = k.Alert(f.Value)
		out = append(out, f)
	}
	return out
}

// seenBy reports whether figure k has appeared by event i.
func (t *Timeline) seenBy(k Key, i int) bool {
	if ps, ok := t.gauges[k]; ok {
		return ps[0].idx <= i
	}
	occ := t.occurs[k]
	return len(occ) > 0 && occ[0] <= i
}

// Sample is a figure's new value at an instant: a gauge's change, a rate's count rising
// with an event or falling as one leaves the window.
type Sample struct {
	Time sim.Time
	// Step is the kernel step of the event that moved it, or, for a rate falling, of the
	// last event before that instant.
	Step  uint64
	Key   Key
	Value float64
	Alert bool
}

// Samples lists every change of every figure, in time order (then view order), up to
// the run's last event.
func (t *Timeline) Samples() []Sample {
	if len(t.times) == 0 {
		return nil
	}
	end := t.times[len(t.times)-1]
	var out []Sample
	for _, k := range t.keys {
		if ps, ok := t.gauges[k]; ok {
			for _, p := range ps {
				out = append(out, Sample{Time: t.times[p.idx], Step: t.steps[p.idx], Key: k, Value: p.v, Alert: k.Alert(p.v)})
			}
			continue
		}
		out = append(out, t.rateSamples(k, end)...)
	}
	slices.SortStableFunc(out, func(a, b Sample) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), compareKeys(a.Key, b.Key))
	})
	return out
}

// rateSamples are a rate's changes: at each counted event, and a window after each.
func (t *Timeline) rateSamples(k Key, end sim.Time) []Sample {
	occ := t.occurs[k]
	var instants []sim.Time
	for _, idx := range occ {
		instants = append(instants, t.times[idx])
		if out := t.times[idx] + sim.Time(t.window); out <= end {
			instants = append(instants, out)
		}
	}
	slices.Sort(instants)
	instants = slices.Compact(instants)
	var out []Sample
	last := -1.0
	for _, at := range instants {
		n := t.countUpTo(occ, at) - t.countUpTo(occ, at-sim.Time(t.window))
		v := perUnit(k.Metric, n, t.window)
		if v == last {
			continue
		}
		last = v
		j, _ := slices.BinarySearch(t.times, at+1)
		out = append(out, Sample{Time: at, Step: t.steps[max(j-1, 0)], Key: k, Value: v, Alert: k.Alert(v)})
	}
	return out
}

// countUpTo counts the occurrences at or before instant at.
func (t *Timeline) countUpTo(occ []int, at sim.Time) int {
	n, _ := slices.BinarySearchFunc(occ, at, func(idx int, x sim.Time) int {
		if t.times[idx] <= x {
			return -1
		}
		return 1
	})
	return n
}

// Format writes a value as views show it: an integer as one, a rate with what decimals
// it needs.
func Format(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Line is a figure as one line of text: "UnderMinIsrPartitionCount b1 = 1 ALERT".
func (f Figure) Line() string {
	s := fmt.Sprintf("%s %s = %s", f.Metric, f.Scope, Format(f.Value))
	if f.Changed {
		s += " (was " + Format(f.Before) + ")"
	}
	if f.Alert {
		s += " ALERT"
	}
	return s
}

// Now lists every figure after the last event, its rates counted over the window ending
// at now (the clock may have run on past the last event), with Before the value in
// shown (the figures a previous view showed; nil: none) and Changed when it differs.
func (t *Timeline) Now(now sim.Time, shown map[Key]float64) []Figure {
	if len(t.times) == 0 {
		return nil
	}
	last := len(t.times) - 1
	var out []Figure
	for _, k := range t.keys {
		f := Figure{Key: k, Value: t.Value(k, last)}
		if occ, ok := t.occurs[k]; ok {
			f.Value = t.rateAt(occ, k.Metric, last, now)
		}
		if shown != nil {
			f.Before = shown[k]
			f.Changed = f.Before != f.Value
		}
		f.Alert = k.Alert(f.Value)
		out = append(out, f)
	}
	return out
}
