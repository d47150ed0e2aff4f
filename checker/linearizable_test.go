package checker

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
)

func TestLinearizable(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *builder)
		want  []want
	}{
		{name: "concurrent sends, a poll that sees both", build: func(b *builder) {
			s1 := b.r.InvokeSend(b.tick(), 1, t0, "", "a")
			s2 := b.r.InvokeSend(b.tick(), 2, t0, "", "b")
			b.r.Ok(b.tick(), s2, history.Result{Offset: 0}) // b won the race
			b.r.Ok(b.tick(), s1, history.Result{Offset: 1})
			b.read(3, t0, at(0, "b"), at(1, "a"))
			b.read(3, t0, at(1, "a")) // a later poll may return a shorter run
		}},
		{name: "info send read later, info send never read, pending poll", build: func(b *builder) {
			b.send(1, t0, "maybe", history.Info, 0)
			b.send(1, t0, "never", history.Info, 0)
			b.ok(1, t0, "c", 1)
			b.read(2, t0, at(0, "maybe"), at(1, "c"))
			b.r.InvokePoll(b.tick(), 2, "")
		}},
		{name: "poll concurrent with the send it reads", build: func(b *builder) {
			s := b.r.InvokeSend(b.tick(), 1, t0, "", "a")
			p := b.r.InvokePoll(b.tick(), 2, "")
			b.r.Ok(b.tick(), p, history.Result{Reads: []history.PartitionRecords{rd(t0, at(0, "a"))}})
			b.r.Ok(b.tick(), s, history.Result{Offset: 0})
		}},
		{name: "partitions are independent", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t1, "x", 0)
			b.poll(2, "", history.Ok, rd(t1, at(0, "x")), rd(t0, at(0, "a")))
		}},
		{name: "offset assigned twice", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(2, t0, "b", 0)
		}, want: []want{{anomaly: Nonlinearizable, tp: t0, values: []string{"b"}, offsets: []int64{0}}}},
		{name: "a poll misses an acknowledged value an earlier poll saw", build: func(b *builder) {
			b.ok(1, t0, "a", 0)
			b.ok(1, t0, "b", 1)
			b.read(2, t0, at(0, "a"), at(1, "b"))
			b.send(1, t0, "c", history.Info, 0) // after a failover, c took offset 1
			b.read(3, t0, at(0, "a"), at(1, "c"))
		}, want: []want{{anomaly: Nonlinearizable, tp: t0, values: []string{"c"}}}},
		{name: "a poll reads a value before its send began", build: func(b *builder) {
			b.read(2, t0, at(0, "a"))
			b.ok(1, t0, "a", 0)
		}, want: []want{{anomaly: Nonlinearizable, tp: t0, values: []string{"a"}}}},
		{name: "aborted read: a failed send never happened", build: func(b *builder) {
			b.send(1, t0, "a", history.Fail, 0)
			b.read(2, t0, at(0, "a"))
		}, want: []want{{anomaly: Nonlinearizable, tp: t0, values: []string{"a"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			r, err := CheckLinearizable(b.history(), LinearizabilityOptions{})
			if err != nil {
				t.Fatal(err)
			}
			expectExactly(t, r.Violations, tt.want)
			if len(tt.want) == 0 && r.Result != Valid {
				t.Errorf("result %s, want valid", r.Result)
			}
			if t.Failed() {
				t.Log("\n" + r.String())
			}
		})
	}
}

// Thirty concurrent sends acknowledged without an offset (acks=0) and a
// poll that reads a value nobody sent: refuting it means trying every order of the sends, far more
// than any budget allows. The verdict must be Unknown, not Valid.
func TestLinearizableBudgetIsHonest(t *testing.T) {
	r := history.NewRecorder()
	var hs []history.Handle
	for i := range 30 {
		hs = append(hs, r.InvokeSend(int64(i), i, t0, "", string(rune('a'+i))))
	}
	p := r.InvokePoll(100, 99, "")
	r.Ok(101, p, history.Result{Reads: []history.PartitionRecords{rd(t0, at(0, "nobody"))}})
	for _, h := range hs {
		r.Ok(200, h, history.Result{Offset: history.NoOffset})
	}
	rep, err := CheckLinearizable(r.History(), LinearizabilityOptions{Budget: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Unknown || len(rep.Violations) != 0 || !noteContaining(rep, "budget") {
		t.Fatalf("want an honest unknown:\n%s", rep)
	}
}

func TestVisualisationIsSelfContained(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(2, t0, "b", 0) // illegal, so the page shows partial linearizations
	b.read(3, t1, at(0, "x"))
	var html bytes.Buffer
	_, err := CheckLinearizable(b.history(), LinearizabilityOptions{
		HTML:        &html,
		Annotations: []Annotation{{Time: 15, Text: "crash broker b1"}, {Time: 25, End: 45, Text: "partition b2 | b3"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	page := html.String()
	if !strings.HasPrefix(page, "<!doctype html>") || !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
		t.Fatal("not an HTML document")
	}
	for _, tag := range []string{"html", "head", "body", "script", "style"} {
		if open, closed := strings.Count(page, "<"+tag), strings.Count(page, "</"+tag+">"); open != closed || open == 0 {
			t.Errorf("<%s> opened %d times, closed %d times", tag, open, closed)
		}
	}
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|<link\b|@import|url\(\s*["']?https?:`)
	if m := external.FindString(page); m != "" {
		t.Errorf("page loads an external resource: %q", m)
	}
	// The embedded data must be valid JSON holding our annotations.
	_, data, found := strings.Cut(page, "const data = ")
	data, _, _ = strings.Cut(data, "\n")
	if !found || !json.Valid([]byte(data)) {
		t.Fatalf("embedded data is not JSON: %.200s", data)
	}
	for _, s := range []string{"crash broker b1", "partition b2 | b3", `t-0: send \"a\" -\u003e 0`} {
		if !strings.Contains(data, s) {
			t.Errorf("visualisation lacks %q", s)
		}
	}
}

// The model's persistent log finds any offset through its jump pointers,
// however sparse the offsets and wherever records without one sit.
func TestLogNodeFind(t *testing.T) {
	offsetOf := func(i int64) int64 { // sparse, starting high, a few unknown
		if i%7 == 3 {
			return history.NoOffset
		}
		return 100 + 3*i
	}
	s := emptyLog
	for i := range int64(1000) {
		s = s.push(string(rune('a'+i%26)), offsetOf(i), i)
	}
	for _, i := range []int64{0, 1, 2, 511, 512, 998, 999} {
		off := offsetOf(i)
		if off == history.NoOffset {
			continue
		}
		if got := s.tail.find(off); got == nil || got.offset != off || got.value != string(rune('a'+i%26)) {
			t.Fatalf("find(%d) = %+v", off, got)
		}
		if got := s.tail.find(off + 1); got != nil {
			t.Fatalf("find(%d) found a record at an offset nobody holds", off+1)
		}
	}
	other := emptyLog
	for i := range int64(1000) {
		other = other.push(string(rune('a'+i%26)), offsetOf(i), i)
	}
	if !s.equal(other) || s.equal(other.push("x", history.NoOffset, -1)) {
		t.Fatal("equal logs built apart must be equal; different ones not")
	}
}

// A long sequential partition is cut at its quiet moments, so the search
// stays linear: 100,000 sends and polls on one partition are decided within
// the default budget (one search over all of them needs 100,000^2/8 bytes,
// over a gigabyte, and runs out of time).
func TestLinearizableLongSequentialHistoryIsDecided(t *testing.T) {
	b := newBuilder()
	for i := range 50_000 {
		v := "v" + strconv.Itoa(i)
		b.ok(1, t0, v, int64(3*i+100)) // sparse, starting at 100
		b.read(2, t0, at(int64(3*i+100), v))
	}
	r, err := CheckLinearizable(b.history(), LinearizabilityOptions{Budget: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Result != Valid {
		t.Fatalf("want valid:\n%s", r)
	}
}

// Operations that all overlap leave no quiet moment to cut at; a memory
// budget too small for the search makes the verdict an honest unknown that
// names the budget, never valid.
func TestLinearizableMemoryBudgetIsHonest(t *testing.T) {
	r := history.NewRecorder()
	var hs []history.Handle
	for i := range 200 {
		hs = append(hs, r.InvokeSend(int64(i), i, t0, "", "v"+strconv.Itoa(i)))
	}
	for i, h := range hs {
		r.Ok(int64(1000+i), h, history.Result{Offset: int64(i)})
	}
	rep, err := CheckLinearizable(r.History(), LinearizabilityOptions{MemoryBudget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Result != Unknown || len(rep.Violations) != 0 || !noteContaining(rep, "memory budget") {
		t.Fatalf("want an honest unknown naming the memory budget:\n%s", rep)
	}
}
