package broker_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"mqsim/model/broker"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// patternClient sends delayed produces, cancellations and consumer fetches to a named
// broker, and keeps the answers.
type patternClient struct {
	produced []proto.ProduceResponse
	fetched  []proto.FetchResponse
	corr     int64
}

type delayCmd struct {
	to    string
	val   string
	delay time.Duration
	tags  string
}

type cancelCmd struct {
	to     string
	offset int64
}

type fetchCmd struct {
	to   string
	from int64
	tags []string
}

func (c *patternClient) Start(env *sim.Env)                   {}
func (c *patternClient) Timer(env *sim.Env, tag sim.TimerTag) {}
func (c *patternClient) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	tp := proto.TP{Topic: "t"}
	batch := func(rec wal.Record) wal.Batch {
		return wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence,
			Records: []wal.Record{rec}}
	}
	c.corr++
	switch m := msg.(type) {
	case delayCmd:
		to, _ := env.Lookup(m.to)
		rec := wal.Record{Value: []byte(m.val)}
		if m.tags != "" {
			rec.Headers = []wal.Header{{Key: proto.HeaderTags, Value: []byte(m.tags)}}
		}
		env.Send(to, proto.ProduceRequest{CorrelationID: c.corr, TP: tp, Acks: proto.AcksAll, Timeout: 5 * time.Second,
			Batch: batch(rec), Delay: m.delay})
	case cancelCmd:
		to, _ := env.Lookup(m.to)
		rec := wal.Record{Headers: []wal.Header{{Key: proto.HeaderDelayCancel, Value: []byte(strconv.FormatInt(m.offset, 10))}}}
		env.Send(to, proto.ProduceRequest{CorrelationID: c.corr, TP: tp, Acks: proto.AcksAll, Timeout: 5 * time.Second, Batch: batch(rec)})
	case fetchCmd:
		to, _ := env.Lookup(m.to)
		env.Send(to, proto.FetchRequest{CorrelationID: c.corr, ReplicaID: proto.ConsumerReplica, TP: tp, FetchOffset: m.from,
			LastFetchedEpoch: wal.UndefinedEpoch, CurrentLeaderEpoch: wal.UndefinedEpoch, MaxBytes: 1 << 20, Tags: m.tags})
	case proto.ProduceResponse:
		c.produced = append(c.produced, m)
	case proto.FetchResponse:
		c.fetched = append(c.fetched, m)
	}
}

func newPatternCluster(t *testing.T, cfg proto.Config) (*testCluster, sim.NodeID, *patternClient) {
	t.Helper()
	tc := newCluster(t, cfg, 1)
	pc := &patternClient{}
	id := tc.w.MustAddNode("pc", func() sim.Node { return pc })
	tc.w.RunFor(10 * time.Millisecond)
	return tc, id, pc
}

// values lists a replica's records from offset 0: value, and "@N" for a release of the
// entry at N, "~" for a scheduled entry, "x" for a cancellation marker.
func values(t *testing.T, tc *testCluster, b int) []string {
	t.Helper()
	r := tc.replica(t, b)
	batches, err := r.Log.Read(r.LogStart, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, bt := range batches {
		for _, rec := range bt.Records {
			s := string(rec.Value)
			for _, h := range rec.Headers {
				switch h.Key {
				case proto.HeaderDeliverAt:
					s += "~"
				case proto.HeaderDelayedFrom:
					s += "@" + string(h.Value)
				case proto.HeaderDelayCancel:
					s = "x" + string(h.Value)
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// Delayed messages enter the log in due order, ties in the order they were scheduled, at
// (not before) their due time.
func TestDelayedReleasedInDueOrder(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	tc, pc, _ := newPatternCluster(t, cfg)
	start := tc.w.Now()
	for _, d := range []struct {
		val   string
		delay time.Duration
	}{{"d1", 300 * time.Millisecond}, {"d2", 100 * time.Millisecond}, {"d3", 200 * time.Millisecond}, {"d4", 100 * time.Millisecond}} {
		tc.w.Inject(pc, delayCmd{to: "b1", val: d.val, delay: d.delay}, 0)
	}
	tc.w.RunFor(50 * time.Millisecond)
	if got := strings.Join(values(t, tc, 0), " "); got != "d1~ d2~ d3~ d4~" {
		t.Fatalf("before any is due: %s", got)
	}
	tc.w.RunFor(time.Second)
	for b := 0; b < 3; b++ {
		if got := strings.Join(values(t, tc, b), " "); got != "d1~ d2~ d3~ d4~ d2@1 d4@3 d3@2 d1@0" {
			t.Errorf("b%d: %s\n%s", b+1, got, dump(tc.w))
		}
	}
	for _, e := range tc.w.Trace().Events() {
		if e.Kind != "release" {
			continue
		}
		var want time.Duration
		switch {
		case strings.Contains(e.Detail, "d1"):
			want = 300 * time.Millisecond
		case strings.Contains(e.Detail, "d3"):
			want = 200 * time.Millisecond
		default:
			want = 100 * time.Millisecond
		}
		if e.Time < start.Add(want) {
			t.Errorf("released before its delay %s: %s", want, e)
		}
	}
}

// A cancellation removes a pending message; a second one, or one after the release, is
// refused.
func TestDelayedCancel(t *testing.T) {
	tc, pc, cl := newPatternCluster(t, proto.DefaultConfig())
	tc.w.Inject(pc, delayCmd{to: "b1", val: "keep", delay: 200 * time.Millisecond}, 0)
	tc.w.Inject(pc, delayCmd{to: "b1", val: "drop", delay: 200 * time.Millisecond}, 0)
	tc.w.RunFor(50 * time.Millisecond)
	tc.w.Inject(pc, cancelCmd{to: "b1", offset: 1}, 0)
	tc.w.RunFor(50 * time.Millisecond)
	tc.w.Inject(pc, cancelCmd{to: "b1", offset: 1}, 0)
	tc.w.RunFor(time.Second)
	tc.w.Inject(pc, cancelCmd{to: "b1", offset: 0}, 0)
	tc.w.RunFor(100 * time.Millisecond)
	var errs []string
	for _, r := range cl.produced {
		errs = append(errs, r.Error.String())
	}
	if got := strings.Join(errs, " "); got != "NONE NONE NONE DELAY_NOT_PENDING DELAY_NOT_PENDING" {
		t.Errorf("answers: %s", got)
	}
	if got := strings.Join(values(t, tc, 0), " "); got != "keep~ drop~ x1 keep@0" {
		t.Errorf("log: %s\n%s", got, dump(tc.w))
	}
}

// The scheduled entries are in the replicated log: a new leader rebuilds its wheel from
// it and releases each message once, and the old leader, back as a follower, agrees.
func TestDelayedSurvivesLeaderFailover(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	cfg.Broker.SessionTimeout = 3 * time.Second
	cfg.Broker.HeartbeatInterval = time.Second
	tc, pc, cl := newPatternCluster(t, cfg)
	tc.w.Inject(pc, delayCmd{to: "b1", val: "d1", delay: 5 * time.Second}, 0)
	tc.w.Inject(pc, delayCmd{to: "b1", val: "d2", delay: 8 * time.Second}, 0)
	tc.w.RunFor(200 * time.Millisecond)
	if len(cl.produced) != 2 || cl.produced[1].Error != proto.None {
		t.Fatalf("not acknowledged: %v", cl.produced)
	}
	tc.w.Crash(tc.brokers[0])
	tc.w.RunFor(4 * time.Second)
	leader := -1
	for b := 1; b < 3; b++ {
		if r := tc.replica(t, b); r.Leader {
			leader = b
		}
	}
	if leader < 0 {
		t.Fatalf("no new leader\n%s", dump(tc.w))
	}
	held := tc.w.Node(tc.brokers[leader]).(*broker.Broker).Scheduled()
	if len(held) != 2 {
		t.Fatalf("the new leader holds %v, want both scheduled messages", held)
	}
	tc.w.RunFor(6 * time.Second)
	tc.w.Restart(tc.brokers[0])
	tc.w.RunFor(5 * time.Second)
	for b := 0; b < 3; b++ {
		if got := strings.Join(values(t, tc, b), " "); got != "d1~ d2~ d1@0 d2@1" {
			t.Errorf("b%d: %s\n%s", b+1, got, dump(tc.w))
		}
	}
}

// A consumer never sees scheduled entries, and with tags only the matching records: the
// response cuts batches into runs and says how far the position may skip.
func TestConsumerFetchHidesEntriesAndFiltersTags(t *testing.T) {
	tc, pc, cl := newPatternCluster(t, proto.DefaultConfig())
	tc.w.Inject(pc, delayCmd{to: "b1", val: "a", tags: "red"}, 0)
	tc.w.Inject(pc, delayCmd{to: "b1", val: "later", delay: time.Hour, tags: "red"}, 0)
	tc.w.Inject(pc, delayCmd{to: "b1", val: "b", tags: "blue"}, 0)
	tc.w.Inject(pc, delayCmd{to: "b1", val: "c", tags: "red,blue"}, 0)
	tc.w.RunFor(100 * time.Millisecond)
	tc.w.Inject(pc, fetchCmd{to: "b1"}, 0)
	tc.w.Inject(pc, fetchCmd{to: "b1", tags: []string{"red"}}, 0)
	tc.w.RunFor(100 * time.Millisecond)
	if len(cl.fetched) != 2 {
		t.Fatalf("fetch answers: %v", cl.fetched)
	}
	render := func(m proto.FetchResponse) string {
		var s []string
		for _, b := range m.Batches {
			for i, r := range b.Records {
				s = append(s, strconv.FormatInt(b.BaseOffset+int64(i), 10)+":"+string(r.Value))
			}
		}
		return strings.Join(s, " ") + " skip " + strconv.FormatInt(m.SkippedTo, 10)
	}
	if got := render(cl.fetched[0]); got != "0:a 2:b 3:c skip 4" {
		t.Errorf("all tags: %s", got)
	}
	if got := render(cl.fetched[1]); got != "0:a 3:c skip 4" {
		t.Errorf("tag red: %s", got)
	}
	size := func(m proto.FetchResponse) (n int) {
		for _, b := range m.Batches {
			n += b.EncodedSize()
		}
		return n
	}
	if size(cl.fetched[1]) >= size(cl.fetched[0]) {
		t.Errorf("the filtered fetch is %d bytes, the unfiltered %d", size(cl.fetched[1]), size(cl.fetched[0]))
	}
}

// Retention deletes whole segments below the high watermark, on every replica, once the
// check runs; without a retention limit nothing is ever deleted.
func TestRetentionDeletesCommittedSegments(t *testing.T) {
	cfg := proto.DefaultConfig()
	cfg.Topic.MinInsyncReplicas = 2
	cfg.Broker.Log.SegmentBytes = 200
	cfg.Broker.Log.RetentionBytes = 300
	cfg.Broker.RetentionCheckInterval = time.Second
	tc, pc, _ := newPatternCluster(t, cfg)
	for i := 0; i < 20; i++ {
		tc.w.Inject(pc, delayCmd{to: "b1", val: "v" + strconv.Itoa(i)}, 0)
		tc.w.RunFor(20 * time.Millisecond)
	}
	tc.w.RunFor(2 * time.Second)
	for b := 0; b < 3; b++ {
		r := tc.replica(t, b)
		if r.LogStart == 0 || r.LogStart > r.HighWatermark {
			t.Errorf("b%d: log start %d, HW %d: want retention to have deleted committed segments\n%s", b+1, r.LogStart, r.HighWatermark, dump(tc.w))
		}
		if size := r.Log.SizeBytes(); size-r.Log.Segments()[0].SizeBytes >= cfg.Broker.Log.RetentionBytes {
			t.Errorf("b%d: %d bytes left, retention.bytes %d", b+1, size, cfg.Broker.Log.RetentionBytes)
		}
	}

	cfg.Broker.Log.RetentionBytes = -1
	tc, pc, _ = newPatternCluster(t, cfg)
	for i := 0; i < 20; i++ {
		tc.w.Inject(pc, delayCmd{to: "b1", val: "v" + strconv.Itoa(i)}, 0)
		tc.w.RunFor(20 * time.Millisecond)
	}
	tc.w.RunFor(10 * time.Minute)
	if r := tc.replica(t, 0); r.LogStart != 0 {
		t.Errorf("without retention the log start moved to %d", r.LogStart)
	}
	for _, e := range tc.w.Trace().Events() {
		if e.Kind == "retention" {
			t.Errorf("retention without a limit: %s", e)
		}
	}
}
