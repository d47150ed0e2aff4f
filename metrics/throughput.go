package metrics

import (
	"slices"
	"time"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Throughput is what a workload delivered over a stretch of simulated time, measured from
// the run's typed trace (the producers' BatchSent events) and its client history (sends
// and polls with their times): the figures of a producer benchmark (Kafka's
// kafka-producer-perf-test prints records/s, MB/s and latency percentiles) and the
// producer's batch-size-avg and requests rate, from the model rather than from a table.
//
// What it counts, for ops that completed in (From, To]:
//   - produce: sends acknowledged (ok), their key and value bytes, and their latency from
//     the application's send to its acknowledgement;
//   - batches: the produce requests the producers sent (one batch each: mqsim's request
//     carries one partition), their records, and their bytes on the wire, compressed or
//     not, beside the records' size uncompressed;
//   - consume: records polled, and their end-to-end latency from the send of each record
//     (values are unique) to the end of the poll that read it; and the latency of each
//     poll that brought records, from its start to its end (what a fetch took).
//
// A rate divides by the span of the ops it counts (first invocation to last completion),
// not by the window, so that the idle time after a workload does not dilute it.
type Throughput struct {
	From, To sim.Time

	Acked, AckedBytes int64
	Failed            int64 // sends completed fail or unknown
	SendSpan          time.Duration
	ProduceLatency    Percentiles

	Batches, BatchRecords int64
	WireBytes, RawBytes   int64 // produce requests on the wire; their records uncompressed
	Retries               int64 // batches sent again
	// StoredBytes are what the partitions' leaders appended to their logs for these
	// producers, compressed as the batches came (broker.Appended.Bytes); each follower
	// stores as much again.
	StoredBytes int64

	// Partitions are the acknowledged sends per partition, by topic and partition: a
	// hot partition is the one whose latency grows while its throughput stops growing.
	Partitions []PartitionThroughput

	Read, ReadBytes int64
	ReadSpan        time.Duration
	EndToEnd        Percentiles
	Fetch           Percentiles // polls that brought records
}

// PartitionThroughput is what one partition acknowledged of the producers' sends.
type PartitionThroughput struct {
	TP           proto.TP
	Acked, Bytes int64 // sends acknowledged, and their key and value bytes
	SendSpan     time.Duration
	// WireBytes are the produce requests sent to its leader (BatchSent), retries too:
	// what the producer's link to that broker carried for it.
	WireBytes      int64
	ProduceLatency Percentiles
}

// Percentiles of a latency, by nearest rank; N is how many were measured.
type Percentiles struct {
	N             int
	P50, P99, Max time.Duration
}

// percentiles sorts ds and takes its percentiles.
func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	slices.Sort(ds)
	rank := func(p int) time.Duration { return ds[(p*len(ds)+99)/100-1] }
	return Percentiles{N: len(ds), P50: rank(50), P99: rank(99), Max: ds[len(ds)-1]}
}

// Scope says whose figures to take: the producers (trace node names and their history
// processes) and consumers (history processes) named, or every one when a list is nil.
type Scope struct {
	Producers         []string
	ProducerProcesses []int
	ConsumerProcesses []int
	From, To          sim.Time
}

func among[T comparable](list []T, v T) bool { return list == nil || slices.Contains(list, v) }

// Measure reads the trace's events and the history and measures what was delivered in
// the scope's window (From, To].
func Measure(events []sim.Event, h history.History, s Scope) Throughput {
	t := Throughput{From: s.From, To: s.To}
	type partitionSends struct {
		PartitionThroughput
		first, last int64
		latencies   []time.Duration
	}
	perPartition := map[proto.TP]*partitionSends{}
	partition := func(tp proto.TP) *partitionSends {
		ps := perPartition[tp]
		if ps == nil {
			ps = &partitionSends{PartitionThroughput: PartitionThroughput{TP: tp}, first: -1, last: -1}
			perPartition[tp] = ps
		}
		return ps
	}
	in := func(at int64) bool { return at > int64(s.From) && at <= int64(s.To) }
	for _, e := range events {
		if e.Time > s.To {
			break
		}
		if d, ok := e.Data.(client.BatchSent); ok && e.Time > s.From && among(s.Producers, e.Node) {
			t.Batches++
			t.BatchRecords += int64(d.Records)
			t.WireBytes += int64(d.Bytes)
			t.RawBytes += int64(d.Raw)
			partition(d.TP).WireBytes += int64(d.Bytes)
			if d.Attempt > 1 {
				t.Retries++
			}
		}
		if d, ok := e.Data.(broker.Appended); ok && e.Time > s.From && !d.Coordinator && among(s.Producers, d.From) {
			t.StoredBytes += int64(d.Bytes)
		}
	}
	sentAt := map[string]int64{} // value → when its first send was invoked
	keyOf := map[string]string{} // value → its key
	var sends, e2e, fetch []time.Duration
	var sendFirst, sendLast, readFirst, readLast int64 = -1, -1, -1, -1
	span := func(first, last *int64, from, to int64) {
		if *first < 0 || from < *first {
			*first = from
		}
		*last = max(*last, to)
	}
	for _, op := range h {
		switch {
		case op.F == history.Send && op.Type == history.Invoke:
			if _, seen := sentAt[op.Send.Value]; !seen {
				sentAt[op.Send.Value] = op.Time
				keyOf[op.Send.Value] = op.Send.Key
			}
		case op.F == history.Send && in(op.Time) && among(s.ProducerProcesses, op.Process):
			if op.Type != history.Ok {
				t.Failed++
				continue
			}
			start := h[op.Invoke].Time
			t.Acked++
			t.AckedBytes += int64(len(op.Send.Key) + len(op.Send.Value))
			sends = append(sends, time.Duration(op.Time-start))
			span(&sendFirst, &sendLast, start, op.Time)
			ps := partition(proto.TP{Topic: op.Send.Topic, Partition: op.Send.Partition})
			ps.Acked++
			ps.Bytes += int64(len(op.Send.Key) + len(op.Send.Value))
			ps.latencies = append(ps.latencies, time.Duration(op.Time-start))
			span(&ps.first, &ps.last, start, op.Time)
		case op.F == history.Poll && op.Type == history.Ok && in(op.Time) && among(s.ConsumerProcesses, op.Process):
			n := 0
			for _, pr := range op.Poll.Reads {
				for _, rec := range pr.Records {
					n++
					t.ReadBytes += int64(len(keyOf[rec.Value]) + len(rec.Value))
					if at, ok := sentAt[rec.Value]; ok {
						e2e = append(e2e, time.Duration(op.Time-at))
					}
				}
			}
			if n == 0 {
				continue // an empty poll waited for data: not a fetch's cost
			}
			t.Read += int64(n)
			start := h[op.Invoke].Time
			fetch = append(fetch, time.Duration(op.Time-start))
			span(&readFirst, &readLast, start, op.Time)
		}
	}
	if sendFirst >= 0 {
		t.SendSpan = time.Duration(sendLast - sendFirst)
	}
	if readFirst >= 0 {
		t.ReadSpan = time.Duration(readLast - readFirst)
	}
	t.ProduceLatency, t.EndToEnd, t.Fetch = percentiles(sends), percentiles(e2e), percentiles(fetch)
	for _, ps := range perPartition {
		if ps.first >= 0 {
			ps.SendSpan = time.Duration(ps.last - ps.first)
		}
		ps.ProduceLatency = percentiles(ps.latencies)
		t.Partitions = append(t.Partitions, ps.PartitionThroughput)
	}
	slices.SortFunc(t.Partitions, func(a, b PartitionThroughput) int { return proto.CompareTP(a.TP, b.TP) })
	return t
}

// PerSecond is n over d, per second (0 when d is 0).
func PerSecond(n int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return n * int64(time.Second) / int64(d) // a run's counts stay far below overflow
}
