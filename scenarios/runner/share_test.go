package runner

import (
	"strings"
	"testing"

	"mqsim/scenarios/script"
)

const shareCluster = "cluster brokers=3 partitions=2 rf=3 min-isr=2 acks=all"

// The share-consumer command refuses bad input with an error naming the bad value.
func TestShareConsumerCommandRefusesBadArguments(t *testing.T) {
	setup := []string{shareCluster}
	for _, tc := range []struct{ cmd, want string }{
		{"share-consumer group=g topics=(t)", "name"},
		{"share-consumer name=s1 topics=(t)", "group"},
		{"share-consumer name=s1 group=g", "topics=(T, ...) is required"},
		{"share-consumer name=s1 group=g topics=(nope)", `no topic "nope"`},
		{"share-consumer name=s1 group=g topics=(t) ack=sometimes", "ack=sometimes: want explicit or implicit"},
		{"share-consumer name=s1 group=g topics=(t) reject-poison=true", "reject-poison=true needs ack=explicit"},
		{"share-consumer name=s1 group=g topics=(t) poison=(key=)", `poison "key="`},
		{"share-consumer name=s1 group=g topics=(t) max-poll-records=0", "max-poll-records"},
		{"share-consumer name=b1 group=g topics=(t)", "a node named b1 exists already"},
		{"share-close s9", "s9 is not a share consumer"},
		{"show share-group", "usage: show share-group NAME"},
	} {
		err := execErr(t, setup, tc.cmd)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.cmd, err, tc.want)
		}
	}
}

// The command starts the consumer: it finds the coordinator and joins, the simple assignor
// gives two consumers of a two-partition topic one partition each, and close leaves the
// group. (Without share-partition leaders its ShareFetches go unanswered.)
func TestShareConsumerCommandJoinsAndCloses(t *testing.T) {
	_, outs := execAll(t, shareCluster,
		"share-consumer name=s1 group=g topics=(t) ack=explicit poison=(v3) processing=5ms max-poll-records=10",
		"share-consumer name=s2 group=g topics=(t)",
		"run for=6s",
		"show share-group g",
		"share-close s1 wait=false",
		"run for=6s",
		"show share-group g")
	if want := "share consumer s1: share group g, topics t, acknowledgement explicit, processing=5ms max-poll-records=10, poison (v3) released"; outs[1] != want {
		t.Errorf("share-consumer: %q, want %q", outs[1], want)
	}
	for _, want := range []string{
		"share group g: Stable, group epoch 2, target assignment epoch 2, assignor simple, 2 target assignments; coordinator ",
		"  member s1-1 (client s1): epoch 2, [t/0]",
		"  member s2-2 (client s2): epoch 2, [t/1]",
		"  share consumer s1: running, member s1-1, epoch 2, fetches from [t/0]",
		"  share consumer s2: running, member s2-2, epoch 2, fetches from [t/1]",
	} {
		if !strings.Contains(outs[4], want) {
			t.Errorf("show share-group:\n%s\nwant a line with %q", outs[4], want)
		}
	}
	for _, want := range []string{
		"share group g: Stable, group epoch 3",
		"  member s2-2 (client s2): epoch 3, [t/0 t/1]",
		"  share consumer s1: closed",
	} {
		if !strings.Contains(outs[7], want) {
			t.Errorf("show share-group after close:\n%s\nwant a line with %q", outs[7], want)
		}
	}
}

// The cluster command sets the share-group keys, prints them when they differ from
// Kafka's defaults, and refuses values outside Kafka's ranges naming the key.
func TestClusterShareSettings(t *testing.T) {
	_, outs := execAll(t, "cluster brokers=3 share-lock-duration=2s share-delivery-limit=3 share-max-record-locks=4 share-auto-offset-reset=earliest")
	if want := "share groups: record lock 2s, delivery count limit 3, max record locks 4, session timeout 45s, heartbeat 5s, auto offset reset earliest"; !strings.Contains(outs[0], want) {
		t.Errorf("cluster:\n%s\nwant a line %q", outs[0], want)
	}
	_, outs = execAll(t, "cluster brokers=3")
	if strings.Contains(outs[0], "share groups") {
		t.Errorf("cluster with Kafka's share defaults printed a share line:\n%s", outs[0])
	}
	for _, tc := range []struct{ cmd, want string }{
		{"cluster share-lock-duration=500ms", "group.share.record.lock.duration.ms=500ms: want 1s to 1h"},
		{"cluster share-delivery-limit=1", "share-delivery-limit=1: want 2 to 10"},
		{"cluster share-delivery-limit=11", "share-delivery-limit=11: want 2 to 10"},
		{"cluster share-max-record-locks=0", "share-max-record-locks=0: want 1 to 10000"},
		{"cluster share-auto-offset-reset=by_duration", "share-auto-offset-reset=by_duration: want latest or earliest"},
		{"cluster share-heartbeat=50s", "group.share.heartbeat.interval.ms=50s: want positive and below the session timeout 45s"},
	} {
		s, err := script.Parse("inline", scriptOf(tc.cmd))
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewRunner(Options{}).Exec(s.Steps[0])
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.cmd, err, tc.want)
		}
	}
	if err := CheckClusterSettings([]string{"share-delivery-limit=3"}); err != nil {
		t.Errorf("--set share-delivery-limit=3: %v", err)
	}
	if err := CheckClusterSettings([]string{"share-lock-duration=0s"}); err == nil || !strings.Contains(err.Error(), "group.share.record.lock.duration.ms") {
		t.Errorf("--set share-lock-duration=0s: %v, want the lock duration refused", err)
	}
}

// show share-partition prints the leader's window: with share.auto.offset.reset=earliest
// a record produced before the consumer joined is delivered; while the consumer works on
// it, it is acquired with delivery count 1, and once accepted the SPSO has passed it.
func TestShowSharePartition(t *testing.T) {
	_, outs := execAll(t, "cluster brokers=3 partitions=1 rf=3 min-isr=2 acks=all share-auto-offset-reset=earliest",
		"show share-partition work t/0",
		"produce values=(a, b)",
		"share-consumer name=s1 group=work topics=(t) ack=explicit processing=2s max-poll-records=1",
		"run for=2s",
		"show share-partition work t/0",
		"run for=5s",
		"show share-partition work t/0",
		"show share-partition work t/9")
	if want := "share-partition work:t/0: leader b1 keeps no window for it (no share consumer fetched it yet, or its state is not read yet)"; outs[1] != want {
		t.Errorf("before any fetch: %q, want %q", outs[1], want)
	}
	if want := "share-partition work:t/0 at leader b1: SPSO 0, SPEO 0, 1 in flight\n  0: acquired, delivery count 1, held by s1-1"; outs[5] != want {
		t.Errorf("while processing:\n%s\nwant\n%s", outs[5], want)
	}
	if want := "share-partition work:t/0 at leader b1: SPSO 2, SPEO 2, 0 in flight"; outs[7] != want {
		t.Errorf("after both accepts:\n%s\nwant\n%s", outs[7], want)
	}
	if want := "share-partition work:t/9: t/9 has no leader"; outs[8] != want {
		t.Errorf("unknown partition: %q, want %q", outs[8], want)
	}
}

// A share consumer may start while the controller is down (swarm share seed 61): the
// topic it names was created, though no active controller can say so now; it joins once
// the controller is back. (The first share consumer of a cluster creates the offsets and
// share-group state topics, which needs the controller.) The share-group settings of the cluster command reach the
// brokers' configuration.
func TestShareConsumerStartsWhileTheControllerIsDown(t *testing.T) {
	r, outs := execAll(t, shareCluster+" share-lock-duration=2s share-delivery-limit=3 share-auto-offset-reset=earliest share-session-timeout=6s share-heartbeat=1s",
		"share-consumer name=s0 group=g topics=(t)",
		"crash ctl",
		"share-consumer name=s1 group=g topics=(t)",
		"restart ctl",
		"run for=10s",
		"show share-group g")
	if !strings.Contains(outs[6], "(client s1)") {
		t.Errorf("show share-group:\n%s\nwant s1 a member", outs[6])
	}
	c, _ := r.needCluster()
	if s := c.Cfg.Share; s.RecordLockDuration.String() != "2s" || s.DeliveryCountLimit != 3 || s.AutoOffsetReset != "earliest" ||
		s.SessionTimeout.String() != "6s" || s.HeartbeatInterval.String() != "1s" {
		t.Errorf("share settings %+v, want the cluster line's", s)
	}
}
