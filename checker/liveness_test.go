package checker

import (
	"strings"
	"testing"

	"mqsim/model/history"
)

func TestLiveness(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *builder)
		opts  LivenessOptions
		want  []want
		note  string // a note that must be present
	}{
		{
			name: "every reader reads everything in time",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.ok(1, t0, "b", 1)
				b.assign(2, history.Ok, true, t0)
				b.read(2, t0, at(0, "a"), at(1, "b"))
				b.now += 1000
				b.read(2, t0)
			},
			opts: LivenessOptions{HealedAt: 50, Within: 100},
		},
		{
			name: "a value never read by an active reader",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.ok(1, t0, "b", 1)
				b.assign(2, history.Ok, true, t0)
				b.read(2, t0, at(0, "a"))
				b.now += 1000
				b.read(2, t0)
			},
			opts: LivenessOptions{HealedAt: 50, Within: 100},
			want: []want{{anomaly: Unconsumed, tp: t0, offsets: []int64{1}, values: []string{"b"}}},
		},
		{
			name: "a value read after its deadline",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.assign(2, history.Ok, true, t0)
				b.now += 1000
				b.read(2, t0, at(0, "a"))
			},
			opts: LivenessOptions{HealedAt: 50, Within: 100},
			want: []want{{anomaly: Unconsumed, tp: t0, values: []string{"a"}}},
		},
		{
			name: "a deadline after the end of the history is undecided",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.assign(2, history.Ok, true, t0)
				b.read(2, t0)
			},
			opts: LivenessOptions{HealedAt: 50, Within: 1000},
			note: "process 2 on t-0: 1 acknowledged value not read yet",
		},
		{
			name: "an unrecoverable partition is noted, not judged",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.ok(1, t1, "x", 0)
				b.assign(2, history.Ok, true, t0, t1)
				b.poll(2, "", history.Ok, rd(t1, at(0, "x")))
				b.now += 1000
				b.poll(2, "", history.Ok)
			},
			opts: LivenessOptions{HealedAt: 50, Within: 100,
				Unrecoverable: []Unrecoverable{{TopicPartition: t0, Why: "every replica is down"}}},
			note: "t-0 is unrecoverable (every replica is down): its 1 acknowledged value not judged",
		},
		{
			name: "a reader that stopped before the heal is not judged",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.assign(2, history.Ok, true, t0)
				b.read(2, t0)
				b.now += 1000
				b.ok(1, t0, "b", 1)
				b.now += 1000
			},
			opts: LivenessOptions{HealedAt: 500, Within: 100},
			note: "no reader polled at or after the heal",
		},
		{
			name: "a reader that starts at the log end owes nothing before it",
			build: func(b *builder) {
				b.ok(1, t0, "old", 0)
				b.assign(2, history.Ok, false, t0)
				b.read(2, t0)
				b.ok(1, t0, "new", 1)
				b.read(2, t0, at(1, "new"))
				b.now += 1000
				b.read(2, t0)
			},
			opts: LivenessOptions{HealedAt: 0, Within: 100},
		},
		{
			name: "a write acknowledged behind a reader's position is owed",
			build: func(b *builder) {
				b.assign(2, history.Ok, false, t0)
				b.read(2, t0)
				b.ok(1, t0, "late", 0)
				b.now += 1000
				b.read(2, t0)
			},
			opts: LivenessOptions{HealedAt: 0, Within: 100},
			want: []want{{anomaly: Unconsumed, tp: t0, offsets: []int64{0}, values: []string{"late"}}},
		},
		{
			name: "each reader is judged alone, groups by name",
			build: func(b *builder) {
				b.ok(1, t0, "a", 0)
				b.assign(2, history.Ok, true, t0)
				b.read(2, t0, at(0, "a"))
				b.assign(3, history.Ok, true, t0)
				b.poll(4, "g", history.Ok)
				b.now += 1000
				b.read(3, t0)
				b.poll(4, "g", history.Ok)
				b.read(2, t0)
			},
			opts: LivenessOptions{HealedAt: 50, Within: 100},
			want: []want{{anomaly: Unconsumed, tp: t0, values: []string{"a"}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder()
			tc.build(b)
			r, err := CheckLiveness(b.history(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			expectExactly(t, r.Violations, tc.want)
			if tc.note != "" && !noteContaining(r, tc.note) {
				t.Errorf("no note %q in:\n%s", tc.note, r)
			}
		})
	}
}

func TestLivenessViolationNamesTheReader(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.assign(2, history.Ok, true, t0)
	b.now += 1000
	b.read(2, t0, at(0, "a"))
	r, err := CheckLiveness(b.history(), LivenessOptions{HealedAt: 100, Within: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) != 1 {
		t.Fatalf("want one violation:\n%s", r)
	}
	v := r.Violations[0]
	if v.Checker != LivenessChecker || v.Time != 300 ||
		v.Text != `process 2 did not read 2 acknowledged values within 200ns of max(ack, heal at t=100ns) (1 read late): "a", "b"` {
		t.Errorf("violation: %+v", v)
	}
	if _, err := CheckLiveness(b.history(), LivenessOptions{}); err == nil || !strings.Contains(err.Error(), "Within or AckWithin must be positive") {
		t.Errorf("no bound: err %v", err)
	}
	merged, err := Check(b.history(), Options{Liveness: &LivenessOptions{HealedAt: 100, Within: 200}})
	if err != nil || merged.Counts[Unconsumed] != 1 || merged.Result != Invalid {
		t.Errorf("Check with liveness: %v\n%s", err, merged)
	}
}

// Writers are judged from the heal on: each send must be acknowledged within AckWithin;
// one that failed, is unknown, or was answered late is unavailable, one still waiting
// before its deadline is undecided.
func TestLivenessJudgesWrites(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "before-heal", 0) // invoked before the heal: not judged
	b.send(1, t0, "failed-before", history.Fail, 0)
	b.now = 100
	b.ok(1, t0, "fast", 1)
	b.send(1, t1, "failed", history.Fail, 0)
	b.send(1, t1, "unknown", history.Info, 0)
	late := b.r.InvokeSend(b.tick(), 2, t0, "", "late")
	b.now += 500
	b.r.Ok(b.tick(), late, history.Result{Offset: 2})
	b.r.InvokeSend(b.tick(), 3, t0, "", "never") // never answered, past its deadline
	b.now += 300
	b.r.InvokeSend(b.tick(), 4, t0, "", "pending") // never answered, deadline after the end
	r, err := CheckLiveness(b.history(), LivenessOptions{HealedAt: 100, AckWithin: 200})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, r.Violations, []want{
		{anomaly: Unavailable, tp: t0, values: []string{"late", "never"}},
		{anomaly: Unavailable, tp: t1, values: []string{"failed", "unknown"}},
	})
	if !noteContaining(r, "1 send invoked after the heal at t=100ns still waiting") {
		t.Errorf("no undecided note:\n%s", r)
	}
	if !strings.Contains(r.String(), `2 sends invoked after the heal at t=100ns not acknowledged within 200ns: "late", "never" (ok after 510ns, no answer)`) ||
		!strings.Contains(r.String(), `"failed", "unknown" (failed after 10ns, unknown after 10ns)`) {
		t.Errorf("text:\n%s", r)
	}
	if _, err := CheckLiveness(b.history(), LivenessOptions{HealedAt: 100, AckWithin: -1, Within: 5}); err == nil {
		t.Error("a negative bound was accepted")
	}
}

func TestCollect(t *testing.T) {
	vs := []Violation{
		{Checker: InvariantChecker, Anomaly: "two-leaders", TopicPartition: t1, Time: 5, Step: 9, Text: "b"},
		{Checker: InvariantChecker, Anomaly: "hw-regression", TopicPartition: t0, Time: 7, Step: 12, Text: "a"},
	}
	r := Collect(vs, nil)
	if r.Result != Invalid || r.Counts["two-leaders"] != 1 || r.Violations[0].Anomaly != "hw-regression" {
		t.Errorf("Collect: %+v", r)
	}
	if !strings.Contains(r.String(), "violation invariant two-leaders t-1 at t=5ns (step 9): b") {
		t.Errorf("text:\n%s", r)
	}
	if empty := Collect(nil, nil); empty.Result != Valid || empty.Violations == nil {
		t.Errorf("empty: %+v", empty)
	}
}
