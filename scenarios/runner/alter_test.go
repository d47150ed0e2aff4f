package runner

import (
	"strings"
	"testing"

	"mqsim/model/client"
)

// alter grows a topic and the controller refuses what Kafka refuses, with Kafka's
// messages; bad arguments are errors.
func TestAlterPartitions(t *testing.T) {
	r, outs := execAll(t, opsCluster,
		"alter topic=t partitions=3",
		"alter topic=t partitions=3",
		"alter topic=t partitions=2",
		"alter topic=nope partitions=2",
		"show partitions")
	for i, want := range []string{
		"ctl partitions: t grows from 1 to 3 partitions",
		"ctl partitions: t: not growing to 3 partitions: INVALID_PARTITIONS: Topic already has 3 partition(s).",
		"ctl partitions: t: not growing to 2 partitions: INVALID_PARTITIONS: The topic t currently has 3 partition(s); 2 would not be an increase.",
		"ctl partitions: nope: not growing to 2 partitions: UNKNOWN_TOPIC_OR_PARTITION: no such topic",
		"t/2: leader b3, epoch 0, isr [b3 b1 b2]",
	} {
		if !strings.Contains(outs[i+1], want) {
			t.Errorf("output %d: %q, want %q in it", i+1, outs[i+1], want)
		}
	}
	// The new partitions were placed round robin from their own index, as a new topic's.
	if !strings.Contains(outs[5], "t/1: leader b2, epoch 0, isr [b2 b3 b1]") {
		t.Errorf("show partitions:\n%s", outs[5])
	}
	n := 0
	for _, p := range r.Cluster().Partitions() {
		if p.TP.Topic == "t" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("the controller has %d partitions of t, want 3", n)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"alter topic=t", "usage: alter topic=T partitions=N"},
		{"alter partitions=2", "usage: alter topic=T partitions=N"},
		{"alter topic=t partitions=0", "partitions=0: want 1 to 10000"},
	} {
		if err := execErr(t, []string{opsCluster}, tc.cmd); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.cmd, err, tc.want)
		}
	}
}

// A producer learns the new count at its first send after metadata.max.age.ms, and that
// send still goes by the count it had; with the age at 0 it never refreshes for age.
func TestProducerRefreshesOldMetadataAtSend(t *testing.T) {
	if client.KeyPartition([]byte("k1"), 2) != 1 {
		t.Fatal("k1 no longer hashes to partition 1 of 2: pick another key")
	}
	for _, tc := range []struct {
		age  string
		want []string
	}{
		{"10s", []string{"a: ok t/0@1", "b: ok t/1@0"}},
		{"0s", []string{"a: ok t/0@1", "b: ok t/0@2"}},
	} {
		_, outs := execAll(t, opsCluster+" metadata-max-age="+tc.age,
			"produce key=k1 value=first",
			"run for=1s",
			"alter topic=t partitions=2",
			"run for=10s",
			"produce key=k1 value=a",
			"produce key=k1 value=b")
		if outs[5] != tc.want[0] || outs[6] != tc.want[1] {
			t.Errorf("metadata-max-age=%s: %q, %q; want %q", tc.age, outs[5], outs[6], tc.want)
		}
	}
}

// A classic group's leader rejoins when its refreshed metadata shows a subscribed topic
// with more partitions than it assigned, so the new partition gets an owner; with
// metadata.max.age.ms at 0 it never refreshes and the partition stays unowned.
func TestClassicLeaderRejoinsOnNewPartitions(t *testing.T) {
	for _, tc := range []struct{ age, want string }{
		{"10s", "c1-1=[t/0 t/1]"},
		{"0s", "c1-1=[t/0]"},
	} {
		_, outs := execAll(t, opsCluster+" consumer-metadata-max-age="+tc.age,
			"join consumer=c1 group=g poll-every=100ms",
			"alter topic=t partitions=2",
			"run for=20s",
			"trace kinds=(assignment)")
		last := outs[4][strings.LastIndex(outs[4], "\n")+1:]
		if !strings.HasSuffix(last, tc.want) {
			t.Errorf("consumer-metadata-max-age=%s: last assignment %q, want it to end %q", tc.age, last, tc.want)
		}
	}
}

// The direction of add-partitions-breaks-key-order: the same workload reads key k1 in
// order on one partition, and out of order once a partition is added between its sends.
func TestAddingAPartitionBreaksKeyOrder(t *testing.T) {
	run := func(alter bool) string {
		cmds := []string{
			"cluster brokers=3 partitions=1 rf=3 min-isr=2 auto-offset-reset=earliest processing=1s max-poll-records=1 metadata-max-age=10s consumer-metadata-max-age=10s",
			"join consumer=c1 group=g poll-every=100ms",
			"join consumer=c2 group=g poll-every=100ms",
			"produce key=k1 values=(k1-a)",
			"run for=1s",
		}
		if alter {
			cmds = append(cmds, "alter topic=t partitions=2")
		}
		cmds = append(cmds, "run for=10s", "produce key=k1 values=(k1-b, k1-c, k1-d, k1-e, k1-f)",
			"produce key=k1 values=(k1-g, k1-h)", "run for=15s", "check order=key")
		_, outs := execAll(t, cmds...)
		return outs[len(outs)-1]
	}
	if out := run(false); !strings.HasPrefix(out, "result: valid") {
		t.Errorf("one partition throughout: want key order kept, got\n%s", out)
	}
	out := run(true)
	if !strings.Contains(out, "violation key-order reordered") || !strings.Contains(out, `read "k1-g" (t/1@0) before "k1-f" (t/0@5)`) {
		t.Errorf("a partition added between k1's sends: want k1-g (new partition) read before k1-f (old one), got\n%s", out)
	}
}
