package gateway_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"mqsim/checker"
	"mqsim/gateway"
	"mqsim/model/history"
)

// wireOps is the history a served session recorded.
func wireOps(t *testing.T, w *gateway.World) history.History {
	t.Helper()
	h := w.Runner.Cluster().History.History()
	if err := h.Validate(); err != nil {
		t.Fatalf("the wire history is not well formed: %v", err)
	}
	return h
}

// A kgo client produces and consumes in a group through the gateway: the history holds a
// send per record, ok with the offset the client was told, the group's polls with what
// the client received, and its commit; the verdict is valid, and the replay records the
// same history and reaches the same verdict.
func TestWireHistoryOfKgoProduceConsumeCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	srv, stop, logs := serve(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.DefaultProduceTopic("t"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	type placed struct {
		tp     history.TopicPartition
		offset int64
	}
	sent := map[string]placed{}
	for i := range 8 {
		r := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%3)), Value: []byte(fmt.Sprintf("v%d", i))}
		if err := prod.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce v%d: %v\nlog:\n%s", i, err, logs)
		}
		sent[string(r.Value)] = placed{history.TopicPartition{Topic: r.Topic, Partition: r.Partition}, r.Offset}
	}
	prod.Close()

	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()...), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.FetchMaxWait(300*time.Millisecond), kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[string]placed{}
	for len(got) < len(sent) && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			got[string(r.Value)] = placed{history.TopicPartition{Topic: r.Topic, Partition: r.Partition}, r.Offset}
		})
	}
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("consumed %v, want %v", got, sent)
	}
	if err := cons.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	cons.Close()
	s := stop()

	w := srv.World()
	h := wireOps(t, w)
	acked, polled := map[string]placed{}, map[string]placed{}
	var commits int
	for _, op := range h {
		switch {
		case op.Type == history.Ok && op.F == history.Send:
			acked[op.Send.Value] = placed{op.Send.TopicPartition, op.Send.Offset}
		case op.Type == history.Ok && op.F == history.Poll:
			if op.Poll.Group != "g" {
				t.Errorf("op %d: a poll of group %q; the consumer's fetches belong to group g", op.Index, op.Poll.Group)
			}
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					polled[r.Value] = placed{pr.TopicPartition, r.Offset}
				}
			}
		case op.Type == history.Ok && op.F == history.Commit:
			if op.Commit.Group != "g" || len(op.Commit.Offsets) == 0 {
				t.Errorf("op %d: commit %+v, want group g's offsets", op.Index, op.Commit)
			}
			commits++
		case op.Type != history.Invoke:
			t.Errorf("op %d: %s %s (%s): every operation of this session succeeded", op.Index, op.Type, op.F, op.Error)
		}
	}
	if !reflect.DeepEqual(acked, sent) {
		t.Errorf("ok sends in the history %v\nwant what the producer was told %v", acked, sent)
	}
	if !reflect.DeepEqual(polled, sent) {
		t.Errorf("polls in the history read %v\nwant what the consumer received %v", polled, sent)
	}
	if commits == 0 {
		t.Error("no ok commit in the history")
	}
	v, err := w.Verdict()
	if err != nil {
		t.Fatal(err)
	}
	if v.Report.Result != checker.Valid || len(v.Report.Violations) != 0 {
		t.Fatalf("verdict of a healthy session:\n%s", v.Report)
	}

	rw, err := gateway.Replay(s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wireOps(t, rw), h) {
		t.Error("the replay recorded another history")
	}
	rv, err := rw.Verdict()
	if err != nil {
		t.Fatal(err)
	}
	if rv.Report.String() != v.Report.String() {
		t.Errorf("replay verdict:\n%s\nsession verdict:\n%s", rv.Report, v.Report)
	}
}

// The planted bug hw-from-leader-only acknowledges acks=all writes before any follower
// has them. A kgo producer writes "lost" while the followers are cut off from the
// leader b1, b1 crashes, and the producer's next write lands at the same offset on the
// new leader: the wire history alone shows the acknowledged write lost.
func TestWireVerdictCatchesPlantedLostWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets and runs a few seconds")
	}
	sc := gateway.Scenario{Name: "planted", Seed: 1, Text: `cluster brokers=3 partitions=1 rf=3 min-isr=2 flush=every-batch session-timeout=3s heartbeat=1s bugs=(hw-from-leader-only)
----
`}
	srv, stop, logs := serveScenario(t, 4, sc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A producer for each write: kgo gives up on a broker that closes a new connection,
	// as the gateway does for a crashed one, and the last write goes to b2 and b3 only.
	produce := func(v string, seeds []string) {
		t.Helper()
		prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("t"),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.MetadataMinAge(50*time.Millisecond),
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		defer prod.Close()
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("produce %s: %v\nlog:\n%s", v, err, logs)
		}
	}
	exec := func(cmd string) {
		t.Helper()
		if _, err := srv.Exec(ctx, cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	produce("before", srv.Addrs())
	exec("partition b1 | b2 b3")
	produce("lost", srv.Addrs()) // acknowledged by b1 alone: the bug
	exec("crash b1")
	exec("heal")
	// The controller elects b2 once b1's session (3s) expired: 1.5s of wall time is 6s.
	time.Sleep(1500 * time.Millisecond)
	produce("after", srv.Addrs()[1:]) // on b2, which never had "lost"

	cons, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()[1:]...), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for !slices.Contains(got, "after") && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	cons.Close()
	if !slices.Equal(got, []string{"before", "after"}) {
		t.Fatalf("read %v, want [before after]: the new leader does not have \"lost\"", got)
	}
	stop()

	v, err := srv.World().Verdict()
	if err != nil {
		t.Fatal(err)
	}
	failures, _ := v.Classify()
	var fromHistory []checker.Anomaly
	for _, x := range v.Report.Violations {
		if x.Checker != checker.InvariantChecker && slices.Contains(x.Values, "lost") {
			fromHistory = append(fromHistory, x.Anomaly)
		}
	}
	if !slices.Contains(fromHistory, checker.LostWrite) || len(failures) == 0 {
		t.Fatalf("the wire verdict does not report \"lost\" as a lost write (found %v):\n%s", fromHistory, v.Report)
	}
}
