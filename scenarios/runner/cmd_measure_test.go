package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"mqsim/metrics"
	"mqsim/scenarios/script"
)

// measured runs a workload on a fresh cluster with realistic costs and returns the
// measurement of what it delivered.
func measured(t *testing.T, cluster string, cmds ...string) metrics.Throughput {
	t.Helper()
	r, _ := execAll(t, append([]string{cluster}, cmds...)...)
	c := r.cluster
	return metrics.Measure(c.W.Trace().Events(), c.History.History(), metrics.Scope{To: c.W.Now()})
}

const costlyCluster = "cluster brokers=3 partitions=1 rf=3 min-isr=2 costs=realistic"

// ratio is a/b, for bounds that read as "x times".
func ratio(a, b int64) float64 { return float64(a) / float64(b) }

func TestMoreLingerBiggerBatchesFewerRequestsHigherP99(t *testing.T) {
	load := "produce rate=20000/s for=200ms size=100B"
	l0 := measured(t, costlyCluster+" linger=0s", load)
	l20 := measured(t, costlyCluster+" linger=20ms", load)
	if l0.Acked != 4000 || l20.Acked != 4000 {
		t.Fatalf("acked %d and %d, want 4000 each", l0.Acked, l20.Acked)
	}
	size0, size20 := l0.BatchRecords/l0.Batches, l20.BatchRecords/l20.Batches
	if r := ratio(size20, size0); r < 3 {
		t.Errorf("records per batch %d (linger 0) and %d (linger 20ms): want at least 3 times bigger, got %.1f", size0, size20, r)
	}
	if r := ratio(l0.Batches, l20.Batches); r < 3 {
		t.Errorf("requests %d (linger 0) and %d (linger 20ms): want at least 3 times fewer, got %.1f", l0.Batches, l20.Batches, r)
	}
	if l20.ProduceLatency.P99 < l0.ProduceLatency.P99+l0.ProduceLatency.P99/2 {
		t.Errorf("p99 %s (linger 0) and %s (linger 20ms): want linger to add at least half again", l0.ProduceLatency.P99, l20.ProduceLatency.P99)
	}
	// Neither is saturated: both deliver what they are given, give or take the last
	// batch's linger at the end of the span.
	tp0, tp20 := metrics.PerSecond(l0.Acked, l0.SendSpan), metrics.PerSecond(l20.Acked, l20.SendSpan)
	if tp20 < tp0*85/100 || tp0 < 18000 {
		t.Errorf("throughput %d (linger 0) and %d (linger 20ms) records/s: want both near the 20000/s offered", tp0, tp20)
	}
}

func TestBiggerBatchSizeRaisesThroughputUnderSaturation(t *testing.T) {
	load := "produce rate=200000/s for=25ms size=100B"
	small := measured(t, costlyCluster+" linger=0s", load)
	big := measured(t, costlyCluster+" linger=0s batch-size=65536", load)
	tps, tpb := metrics.PerSecond(small.Acked, small.SendSpan), metrics.PerSecond(big.Acked, big.SendSpan)
	if r := ratio(tpb, tps); r < 1.3 {
		t.Errorf("throughput %d (16 KiB) and %d (64 KiB) records/s: want at least 1.3 times, got %.2f", tps, tpb, r)
	}
	if big.BatchRecords/big.Batches <= small.BatchRecords/small.Batches {
		t.Errorf("records per batch %d (16 KiB) and %d (64 KiB): want bigger", small.BatchRecords/small.Batches, big.BatchRecords/big.Batches)
	}
	if big.ProduceLatency.P99 >= small.ProduceLatency.P99 {
		t.Errorf("p99 %s (16 KiB) and %s (64 KiB): a saturated producer drains its backlog sooner with bigger batches", small.ProduceLatency.P99, big.ProduceLatency.P99)
	}
}

func TestCompressionShrinksBytesOnTheWireByItsRatio(t *testing.T) {
	load := "produce rate=20000/s for=50ms size=200B"
	none := measured(t, costlyCluster, load)
	if none.WireBytes <= none.RawBytes {
		t.Fatalf("uncompressed: %dB on the wire for %dB of records: want the headers on top", none.WireBytes, none.RawBytes)
	}
	prev := none.WireBytes
	// In the order of their ratios, lowest first: each codec sends fewer bytes.
	for _, codec := range []string{"snappy", "lz4", "gzip", "zstd"} {
		m := measured(t, costlyCluster+" compression="+codec, load)
		if m.RawBytes != none.RawBytes {
			t.Fatalf("%s: %dB of records, want the same %dB", codec, m.RawBytes, none.RawBytes)
		}
		if m.WireBytes >= prev {
			t.Errorf("%s: %dB on the wire, want fewer than the codec before (%dB)", codec, m.WireBytes, prev)
		}
		if r := ratio(none.WireBytes, m.WireBytes); r < 1.8 || r > 3.2 {
			t.Errorf("%s: %.2f times fewer bytes than none, want between 1.8 and 3.2 (the codec's ratio, less the headers)", codec, r)
		}
		prev = m.WireBytes
	}
}

func TestCompressionCostsCPU(t *testing.T) {
	// CPU costs alone (no bandwidth, so smaller batches save nothing): gzip compresses at
	// 95 MB/s at the producer and decompresses at 400 MB/s at the leader, so a full 16 KiB
	// batch waits about 170µs + 40µs more; with no costs at all it waits nothing more.
	load := "produce rate=2000/s for=100ms size=2000B"
	cpu := "cluster brokers=1 partitions=1 rf=1 min-isr=1 cpu-request=1us"
	plain := measured(t, cpu, load)
	gz := measured(t, cpu+" compression=gzip", load)
	if d := gz.ProduceLatency.P50 - plain.ProduceLatency.P50; d < 100*time.Microsecond {
		t.Errorf("p50 %s without compression, %s with gzip: want compressing to add at least 100µs", plain.ProduceLatency.P50, gz.ProduceLatency.P50)
	}
	free := "cluster brokers=1 partitions=1 rf=1 min-isr=1"
	if a, b := measured(t, free, load), measured(t, free+" compression=gzip", load); a.ProduceLatency != b.ProduceLatency {
		t.Errorf("without costs, gzip changed latency: %+v against %+v", b.ProduceLatency, a.ProduceLatency)
	}
}

func TestLaggingConsumerFetchesFromDiskAndSlower(t *testing.T) {
	cmds := []string{}
	for i := 0; i < 4; i++ {
		cmds = append(cmds, "produce rate=5000/s for=200ms size=500B", "consume consumer=live from=earliest summary=true")
	}
	r, _ := execAll(t, append([]string{costlyCluster + " page-cache=1MiB disk-read=125MB/s"}, cmds...)...)
	c := r.cluster
	procOf := func(name string) []int { return []int{c.Consumer(name).Process()} }
	live := metrics.Measure(c.W.Trace().Events(), c.History.History(), metrics.Scope{To: c.W.Now(), Producers: []string{}, ProducerProcesses: []int{}, ConsumerProcesses: procOf("live")})
	b1, _ := c.W.Lookup("b1")
	if _, disk := c.W.Disk(b1).ReadStats(); disk != 0 {
		t.Errorf("b1 read %dB from disk for a consumer that keeps up, want 0", disk)
	}
	mark := c.W.Now()
	execOn(t, r, "consume consumer=late from=earliest summary=true")
	late := metrics.Measure(c.W.Trace().Events(), c.History.History(), metrics.Scope{From: mark, To: c.W.Now(), Producers: []string{}, ProducerProcesses: []int{}, ConsumerProcesses: procOf("late")})
	if live.Read != 4000 || late.Read != 4000 {
		t.Fatalf("read %d (live) and %d (late), want 4000 each", live.Read, late.Read)
	}
	if _, disk := c.W.Disk(b1).ReadStats(); disk < 1_000_000 {
		t.Errorf("b1 read %dB from disk for the lagging consumer, want more than the 1 MiB cache misses", disk)
	}
	if r := ratio(int64(late.Fetch.P50), int64(live.Fetch.P50)); r < 1.5 {
		t.Errorf("fetch p50 %s (live) and %s (late): want the disk to make late's at least 1.5 times slower, got %.2f", live.Fetch.P50, late.Fetch.P50, r)
	}
}

func TestMeasureNeedsTheTraceAndNamesClients(t *testing.T) {
	_, outs := execAll(t, "cluster brokers=1 partitions=1 rf=1", "measure")
	if !strings.Contains(outs[1], "nothing delivered") {
		t.Errorf("measure before any workload: %q, want nothing delivered", outs[1])
	}
	if err := execErr(t, []string{"cluster brokers=1 partitions=1 rf=1"}, "measure producer=nobody"); err == nil || !strings.Contains(err.Error(), "no such producer") {
		t.Errorf("measure producer=nobody: %v, want no such producer", err)
	}
	for cmd, want := range map[string]string{
		"produce rate=1000/s":                 "for=D",
		"produce rate=fast for=1s":            "records per second",
		"produce rate=1000000/s for=1s":       "want 1 to 100000",
		"produce rate=100/s for=1s count=3":   "leave out count=",
		"produce rate=100/s for=1s size=2GiB": "value size",
	} {
		if err := execErr(t, []string{"cluster brokers=1 partitions=1 rf=1"}, cmd); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", cmd, err, want)
		}
	}
}

// execOn runs one more command on a runner, failing the test on an error.
func execOn(t *testing.T, r *Runner, cmd string) string {
	t.Helper()
	s, err := script.Parse("inline", scriptOf(cmd))
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Exec(s.Steps[0])
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return out
}

func TestCompressedBatchesAreStoredCompressed(t *testing.T) {
	// One batch of ten 200-byte values on one broker: stored as encoded without
	// compression; with gzip, its 48-byte log header as it is and the rest by gzip's
	// ratio, 2.743, rounded up.
	one := "cluster brokers=1 partitions=1 rf=1 min-isr=1"
	load := "produce count=10 size=200B"
	none := measured(t, one, load)
	gz := measured(t, one+" compression=gzip", load)
	if none.Batches != 1 || gz.Batches != 1 {
		t.Fatalf("batches %d and %d, want one each", none.Batches, gz.Batches)
	}
	if none.StoredBytes != 2088 {
		t.Errorf("uncompressed: %dB on disk, want 2088 (48 of header, 10 records of 204: the value and 4 bytes of lengths)", none.StoredBytes)
	}
	if gz.StoredBytes != 48+744 { // 2040 * 1000 / 2743 = 743.7
		t.Errorf("gzip: %dB on disk, want 792", gz.StoredBytes)
	}
}

// hotAndOthers finds the partition with the most records acknowledged, and the worst
// p99 of the others.
func hotAndOthers(t *testing.T, m metrics.Throughput) (hot metrics.PartitionThroughput, others time.Duration) {
	t.Helper()
	if len(m.Partitions) != 3 {
		t.Fatalf("%d partitions measured, want 3", len(m.Partitions))
	}
	for _, p := range m.Partitions {
		if p.Acked > hot.Acked {
			hot = p
		}
	}
	for _, p := range m.Partitions {
		if p.TP != hot.TP {
			others = max(others, p.ProduceLatency.P99)
		}
	}
	return hot, others
}

func TestHotKeySaturatesOnePartition(t *testing.T) {
	// Three partitions behind 5 MB/s links, 10 MB/s offered: spread keys load each link
	// at most about 80%, Zipf keys (s=2) offer the hot partition about 6.4 MB/s, more than
	// its link carries. The hot partition's p99 must be well above the others' (3 times
	// at least: it is about 15 in the run) and its throughput must stop near the link's
	// bandwidth while the others deliver what they are offered.
	cluster := "cluster brokers=3 partitions=3 rf=3 min-isr=2 costs=realistic bandwidth=5MB/s"
	producer := "producer name=p1 acks=1 idempotence=false batch-size=65536"
	even := measured(t, cluster, producer, "produce producer=p1 keys=100 rate=10000/s for=500ms size=1KB")
	skewed := measured(t, cluster, producer, "produce producer=p1 keys=100 skew=zipf(s=2) rate=10000/s for=500ms size=1KB")
	hot, others := hotAndOthers(t, even)
	if r := float64(hot.ProduceLatency.P99) / float64(others); r > 1.5 {
		t.Errorf("spread keys: the busiest partition's p99 %s is %.1f times the others' worst %s, want them alike", hot.ProduceLatency.P99, r, others)
	}
	hot, others = hotAndOthers(t, skewed)
	if share := metrics.Share(hot.Acked, skewed.Acked); share < 50 {
		t.Errorf("Zipf keys: the hot partition took %d%% of the records, want more than half", share)
	}
	if r := float64(hot.ProduceLatency.P99) / float64(others); r < 3 {
		t.Errorf("Zipf keys: the hot partition's p99 %s is %.1f times the others' worst %s, want at least 3", hot.ProduceLatency.P99, r, others)
	}
	// Saturated: what the hot partition delivered is close to, and not above, what its
	// link carries (records only: the link also carries the headers).
	if rate := metrics.PerSecond(hot.Bytes, hot.SendSpan); rate > 5_000_000 || rate < 4_000_000 {
		t.Errorf("Zipf keys: the hot partition delivered %dB/s, want between 4 and 5 MB/s, the link's bandwidth", rate)
	}
	if busy := metrics.Share(metrics.PerSecond(hot.WireBytes, hot.SendSpan), 5_000_000); busy < 90 {
		t.Errorf("Zipf keys: the hot partition's link was %d%% busy, want at least 90", busy)
	}
}

func TestHotKeySaturatesItsLeadersDiskOnlyWithoutReplicasElsewhere(t *testing.T) {
	// The same skewed load with fast links and slow disks: 5 MB/s of writes, an fsync
	// after every batch, acks=1 (the leader answers once its fsync is done). With rf=1
	// each broker's disk holds its own partition: the hot leader's disk saturates
	// alone. With rf=3 on three brokers every disk holds every partition, so every disk
	// takes the whole topic (9.8 MB/s here) and the cold partitions wait too.
	producer := "producer name=p1 acks=1 idempotence=false batch-size=65536"
	load := "produce producer=p1 keys=100 skew=zipf(s=2) rate=10000/s for=500ms size=1KB"
	cluster := func(rf int) string {
		return fmt.Sprintf("cluster brokers=3 partitions=3 rf=%d min-isr=1 flush=every-batch costs=realistic disk-write=5MB/s", rf)
	}
	alone := measured(t, cluster(1), producer, load)
	hot, others := hotAndOthers(t, alone)
	if r := float64(hot.ProduceLatency.P99) / float64(others); r < 3 {
		t.Errorf("rf=1: the hot partition's p99 %s is %.1f times the others' worst %s, want at least 3", hot.ProduceLatency.P99, r, others)
	}
	_, othersReplicated := hotAndOthers(t, measured(t, cluster(3), producer, load))
	if r := float64(othersReplicated) / float64(others); r < 3 {
		t.Errorf("rf=3: the cold partitions' p99 %s is %.1f times what it is with rf=1 (%s), want at least 3: every disk holds the hot partition",
			othersReplicated, r, others)
	}
}
