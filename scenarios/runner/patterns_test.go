package runner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/model/proto"
)

// scriptOf joins commands into a scenario without outputs.
func scriptOf(cmds ...string) string {
	var b strings.Builder
	for _, c := range cmds {
		fmt.Fprintf(&b, "%s\n----\n\n", c)
	}
	return b.String()
}

// sendsOf lists, per topic-partition, the values an ok (or info) send put there, in order.
func sendsOf(r *Runner) map[string][]string {
	out := map[string][]string{}
	for _, op := range r.Cluster().History.History() {
		if op.F == history.Send && op.Type == history.Ok {
			tp := tpName(op.Send.TopicPartition)
			out[tp] = append(out[tp], op.Send.Value)
		}
	}
	return out
}

// firstRead is the history index of the first ok poll that returned value from topic.
func firstRead(r *Runner, topic, value string) int {
	for _, op := range r.Cluster().History.History() {
		if op.F != history.Poll || op.Type != history.Ok {
			continue
		}
		for _, pr := range op.Poll.Reads {
			for _, rec := range pr.Records {
				if pr.Topic == topic && rec.Value == value {
					return op.Index
				}
			}
		}
	}
	return -1
}

const retryTopics = "topic name=t.retry.1\n----\n\ntopic name=t.retry.2\n----\n\ntopic name=t.dlq\n----\n\n"

// Non-blocking retries: a poison message goes through both retry topics to the DLQ (three
// attempts), a transient failure succeeds on its retry, and the records behind them are
// processed at once.
func TestRetryTopicsAndDeadLetter(t *testing.T) {
	r := runScript(t, scriptOf("cluster brokers=3 min-isr=2 auto-offset-reset=earliest")+retryTopics+scriptOf(
		"join consumer=c1 group=g commit=after poll-every=500ms poison=(v3, v5:1) retry-delays=(1s, 5s) dlq=true",
		"produce count=8",
		"run for=12s",
		"consume consumer=ops partitions=(t.dlq/0)",
		"check",
	), Options{})
	sends := sendsOf(r)
	for tp, want := range map[string][]string{"t.retry.1/0": {"v3", "v5"}, "t.retry.2/0": {"v3"}, "t.dlq/0": {"v3"}} {
		if !slices.Equal(sends[tp], want) {
			t.Errorf("%s got %v, want %v", tp, sends[tp], want)
		}
	}
	if a, b := firstRead(r, "t", "v8"), firstRead(r, "t.retry.1", "v3"); a < 0 || b < 0 || a > b {
		t.Errorf("v8 read at op %d, v3's retry at op %d: the main partition waited for the retry", a, b)
	}
	cs := r.Cluster().Consumer("c1")
	if st := cs.PatternStats(); st.Failures != 4 || st.Retried != 3 || st.DeadLettered != 1 || st.InPlace != 0 {
		t.Errorf("stats %+v", st)
	}
	g := r.Cluster().Group("g")
	if g.TotalLag() != 0 {
		t.Errorf("lag %d: %+v", g.TotalLag(), g.Offsets)
	}
	if rep := lastReport(t, r); len(rep.Violations) != 0 {
		t.Errorf("violations:\n%s", rep)
	}
}

// Without retry topics a poison message blocks: the poll never completes, nothing behind
// it is read by an ok poll or committed, and the checker sees the records unseen.
func TestBlockingRetryStallsThePartition(t *testing.T) {
	r := runScript(t, scriptOf(
		"cluster brokers=3 min-isr=2 auto-offset-reset=earliest",
		"join consumer=c1 group=g commit=after poll-every=500ms poison=(v3)",
		"produce count=5",
		"run for=20s",
		"check",
	), Options{})
	st := r.Cluster().Consumer("c1").PatternStats()
	if st.InPlace < 3 || st.Retried != 0 {
		t.Errorf("stats %+v", st)
	}
	if lag := r.Cluster().Group("g").TotalLag(); lag != 5 {
		t.Errorf("lag %d, want 5: nothing of the blocked poll is committed", lag)
	}
	if rep := lastReport(t, r); rep.Counts[checker.Unseen] == 0 {
		t.Errorf("the stalled records are not reported unseen:\n%s", rep)
	}
	// A transient failure only delays the partition.
	r = runScript(t, scriptOf(
		"cluster brokers=3 min-isr=2 auto-offset-reset=earliest",
		"join consumer=c1 group=g commit=after poll-every=500ms poison=(v3:2)",
		"produce count=5",
		"run for=20s",
		"check",
	), Options{})
	if lag := r.Cluster().Group("g").TotalLag(); lag != 0 {
		t.Errorf("lag %d after a transient failure", lag)
	}
	if rep := lastReport(t, r); len(rep.Violations) != 0 {
		t.Errorf("violations:\n%s", rep)
	}
}

// Broker-side and client-side tag filters deliver the same records; the broker's fetches
// carry fewer bytes. Filtered consumers skip offsets: poll-skip is allowed, nothing else.
func TestTagFilterBrokerVsClient(t *testing.T) {
	r := runScript(t, scriptOf(
		"cluster brokers=3 min-isr=2 auto-offset-reset=earliest",
		"produce values=(o1, o2) tags=(orders)",
		"produce values=(p1, p2, p3, p4) tags=(payments)",
		"produce values=(o3) tags=(orders, vip)",
		"join consumer=cb group=gb tags=(orders) tag-filter=broker",
		"join consumer=cc group=gc tags=(orders) tag-filter=client",
		"join consumer=ca group=ga",
		"consume consumer=cb",
		"consume consumer=cc",
		"consume consumer=ca",
		"check",
	), Options{})
	read := func(proc int) []string {
		var vs []string
		for _, op := range r.Cluster().History.History() {
			if op.F == history.Poll && op.Type == history.Ok && op.Process == proc {
				for _, pr := range op.Poll.Reads {
					for _, rec := range pr.Records {
						vs = append(vs, rec.Value)
					}
				}
			}
		}
		return vs
	}
	cb, cc := r.Cluster().Consumer("cb"), r.Cluster().Consumer("cc")
	if got := read(cb.Process()); !slices.Equal(got, []string{"o1", "o2", "o3"}) {
		t.Errorf("broker filter read %v", got)
	}
	if got := read(cc.Process()); !slices.Equal(got, []string{"o1", "o2", "o3"}) {
		t.Errorf("client filter read %v", got)
	}
	b, c := cb.PatternStats(), cc.PatternStats()
	if b.FetchedBytes >= c.FetchedBytes || b.FetchedRecords != 3 || c.FetchedRecords != 7 || c.Filtered != 4 {
		t.Errorf("broker %+v, client %+v", b, c)
	}
	// Both positions moved past the last record, filtered or not.
	for _, name := range []string{"cb", "cc"} {
		if pos := r.Cluster().Consumer(name).Positions(); len(pos) != 1 || pos[0].Offset != 7 {
			t.Errorf("%s positions %v", name, pos)
		}
	}
	rep := lastReport(t, r)
	if len(rep.Violations) != 0 {
		t.Errorf("violations:\n%s", rep)
	}
	for _, v := range rep.Allowed {
		if v.Anomaly != checker.IntPollSkip && v.Anomaly != checker.PollSkip {
			t.Errorf("allowed %s", v.Anomaly)
		}
	}
}

// A delayed message is hidden until it is released, released in due order, and the
// history records it as info under a process of its own; a cancelled one never appears.
func TestDelayedMessagesEndToEnd(t *testing.T) {
	r := runScript(t, scriptOf(
		"cluster brokers=3 min-isr=2",
		"delay value=d1 after=3s",
		"delay value=d2 after=1s",
		"delay value=d3 after=2s",
		"produce value=now",
		"delay cancel=t/0@2",
		"consume",
		"run for=4s",
		"consume",
		"check",
	), Options{})
	var polls [][]string
	procs := map[int]bool{}
	for _, op := range r.Cluster().History.History() {
		switch {
		case op.F == history.Poll && op.Type == history.Ok && len(op.Poll.Reads) > 0:
			var vs []string
			for _, rec := range op.Poll.Reads[0].Records {
				vs = append(vs, rec.Value)
			}
			polls = append(polls, vs)
		case op.F == history.Send && op.Type == history.Info:
			if !strings.HasPrefix(op.Error, "scheduled as t/0@") {
				t.Errorf("delayed send completed as %q", op.Error)
			}
			procs[op.Process] = true
		}
	}
	if want := [][]string{{"now"}, {"d2", "d1"}}; fmt.Sprint(polls) != fmt.Sprint(want) {
		t.Errorf("polls %v, want %v", polls, want)
	}
	if len(procs) != 3 {
		t.Errorf("delayed sends recorded under %d processes, want one each", len(procs))
	}
	if rep := lastReport(t, r); len(rep.Violations) != 0 {
		t.Errorf("violations:\n%s", rep)
	}
}

// C10: retention deletes segments a stopped group had not read; when it comes back its
// committed offset is out of range and auto.offset.reset decides where it resumes.
func TestRetentionOvertakesStoppedConsumer(t *testing.T) {
	run := func(reset string) *Runner {
		return runScript(t, scriptOf(
			"cluster brokers=3 min-isr=2 batch-size=1 segment-bytes=200 retention-bytes=400 retention-check=1s",
			"join consumer=c1 group=g commit=after auto-offset-reset=earliest",
			"produce count=4",
			"consume consumer=c1",
			"leave consumer=c1",
			"produce count=20",
			"run for=2s",
			"join consumer=c1 group=g commit=after auto-offset-reset="+reset,
			"consume consumer=c1 polls=3",
			"produce count=2",
			"consume consumer=c1",
			"check",
		), Options{})
	}
	for _, c := range []struct {
		reset string
		first string // the first value read after the return
	}{{"earliest", "v16"}, {"latest", "v25"}} {
		r := run(c.reset)
		var after []string
		left := false
		for _, op := range r.Cluster().History.History() {
			if op.F == history.Subscribe && op.Type == history.Ok {
				left = op.Index > 10
			}
			if left && op.F == history.Poll && op.Type == history.Ok {
				for _, pr := range op.Poll.Reads {
					for _, rec := range pr.Records {
						after = append(after, rec.Value)
					}
				}
			}
		}
		if len(after) == 0 || after[0] != c.first {
			t.Errorf("reset %s: read %v after the return, want to start at %s", c.reset, after, c.first)
		}
		rep := lastReport(t, r)
		if rep.Counts[checker.LostWrite]+rep.Counts[checker.Unseen] == 0 {
			t.Errorf("reset %s: the deleted records are not reported:\n%s", c.reset, rep)
		}
		rp, _ := r.Cluster().Broker(0).Replica(proto.TP{Topic: "t"})
		if rp.LogStart == 0 {
			t.Errorf("reset %s: no segment deleted", c.reset)
		}
	}
	r := runScript(t, scriptOf(
		"cluster brokers=3 min-isr=2 batch-size=1 segment-bytes=200 retention-bytes=-1 retention-check=1s",
		"join consumer=c1 group=g commit=after auto-offset-reset=earliest",
		"produce count=4",
		"consume consumer=c1",
		"leave consumer=c1",
		"produce count=20",
		"run for=2s",
		"join consumer=c1 group=g commit=after",
		"consume consumer=c1",
		"check",
	), Options{})
	if rep := lastReport(t, r); len(rep.Violations) != 0 {
		t.Errorf("without retention: %s", rep)
	}
}
