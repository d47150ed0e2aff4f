package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"mqsim/model/queue"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// queueScenarios are the catalogue's queue-mode scenarios.
var queueScenarios = []string{
	"rabbit-consumer-crash-redelivery", "rabbit-poison-dlx", "rabbit-prefetch-fairness", "rabbit-quorum-leader-crash",
	"rabbit-routing", "sqs-fifo-group-blocking", "sqs-redrive-dlq", "sqs-visibility-timeout-duplicate",
}

// recordFixed records a catalogue scenario with the settings it names as its fix.
func recordFixed(t testing.TB, name string) *Run {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Fix) == 0 {
		t.Fatalf("%s names no fix", name)
	}
	r, err := Record("main", s, runner.Options{Set: s.Fix})
	if err != nil || r.Err != nil {
		t.Fatalf("%s --fix: %v %v", name, err, r.Err)
	}
	return r
}

func queueAt(t testing.TB, s State, name string) QueueView {
	t.Helper()
	q, ok := s.Queue(name)
	if !ok {
		t.Fatalf("no queue %s in the state", name)
	}
	return q
}

// TestQueueModeRun: a queue scenario records as a queue-mode run: its nodes, flavour,
// roles, and a checkers' report.
func TestQueueModeRun(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	if !r.queueMode() || !reflect.DeepEqual(r.QueueNodes, []string{"q1", "q2", "q3"}) || r.Flavour != "rabbit" || len(r.Brokers) != 0 {
		t.Fatalf("queue nodes %v flavour %q brokers %v", r.QueueNodes, r.Flavour, r.Brokers)
	}
	if r.Report == nil {
		t.Fatal("no checkers' report for a queue-mode run")
	}
	s := r.Final()
	roles := map[string]Role{}
	for _, n := range s.Nodes {
		roles[n.Name] = n.Role
	}
	want := map[string]Role{"q1": RoleQueueNode, "q2": RoleQueueNode, "q3": RoleQueueNode, "c1": RoleConsumer, "p1": RoleProducer, "p3": RoleProducer}
	if !reflect.DeepEqual(roles, want) {
		t.Errorf("roles %v, want %v", roles, want)
	}
	if sqs := record(t, "sqs-redrive-dlq"); sqs.Flavour != "sqs" || queueAt(t, sqs.Final(), "jobs").Type != "sqs" {
		t.Errorf("sqs-redrive-dlq: flavour %q", sqs.Flavour)
	}
	if fifo := record(t, "sqs-fifo-group-blocking"); queueAt(t, fifo.Final(), "orders").Type != "fifo" {
		t.Errorf("a FIFO queue is not shown as fifo")
	}
	if acks := record(t, "acks1-leader-crash"); acks.queueMode() || acks.Flavour != "" || len(acks.Final().Queues) != 0 {
		t.Errorf("a log cluster's run is in queue mode")
	}
}

// TestQueueStates checks what the view model says at the quorum-queue scenario's key
// moments: deliveries on the right consumer, the leader crash, the new leader, the
// redeliveries, and earlier counts when going back.
func TestQueueStates(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")

	// The second delivery fills c1's prefetch window of 2.
	first := find(t, r, 0, "q3", "deliver", `m0:"order-1" to c1 ch1 tag 1`)
	second := find(t, r, first, "q3", "deliver", `m1:"order-2" to c1 ch1 tag 2`)
	q := queueAt(t, r.StateAt(second), "orders")
	if q.Acting != "q3" || q.Term != 1 || q.Stale || q.Type != "quorum" || !reflect.DeepEqual(q.Where, []string{"q1", "q2", "q3"}) {
		t.Errorf("orders at the delivery: %+v", q)
	}
	want := []OutView{
		{Label: `m0:"order-1"`, Consumer: "c1", Channel: 1, Tag: 1, Receives: 1},
		{Label: `m1:"order-2"`, Consumer: "c1", Channel: 1, Tag: 2, Receives: 1},
	}
	if q.Unacked != 2 || !reflect.DeepEqual(q.Out, want) {
		t.Errorf("unacked %d: %+v, want %+v", q.Unacked, q.Out, want)
	}
	if !reflect.DeepEqual(q.Consumers, []QConsumerView{{Name: "c1", Channel: 1, Prefetch: 2, Unacked: 2}}) {
		t.Errorf("consumers %+v", q.Consumers)
	}
	// Going back: before the first delivery nothing is unacked.
	if before := queueAt(t, r.StateAt(first-1), "orders"); before.Unacked != 0 || len(before.Out) != 0 || before.Stats.Delivered != 0 {
		t.Errorf("before the first delivery: %+v", before)
	}
	if n := queueAt(t, r.StateAt(first), "orders"); n.Unacked != 1 || n.Out[0].Tag != 1 {
		t.Errorf("after the first delivery: %+v", n)
	}

	// The leader crashes: no node acts for the queue; the row keeps its last word.
	crash := find(t, r, second, "q3", "crash", "")
	s := r.StateAt(crash)
	if n, _ := s.Node("q3"); n.Status != sim.Down || n.Quorum != "" {
		t.Errorf("after the crash q3 is %v %q", n.Status, n.Quorum)
	}
	q = queueAt(t, s, "orders")
	if !q.Stale || q.Acting != "q3" || q.Ready != 4 || q.Unacked != 2 {
		t.Errorf("orders after its leader crashed: %+v", q)
	}
	if prev := queueAt(t, r.StateAt(crash-1), "orders"); prev.Stale {
		t.Errorf("stale before the crash")
	}

	// A new leader, with a higher term: the channel opened under q3 is closed and its two
	// deliveries requeued, marked as delivered before.
	lead := find(t, r, crash, "q1", "leader", "orders: q1 acts for the queue")
	s = r.StateAt(lead)
	q = queueAt(t, s, "orders")
	if q.Stale || q.Acting != "q1" || q.Term != 2 || q.Ready != 6 || q.Unacked != 0 || len(q.Consumers) != 0 {
		t.Errorf("orders under its new leader: %+v", q)
	}
	if h := q.ReadyHead; len(h) < 3 || !h[0].Delivered || !h[1].Delivered || h[2].Delivered || h[0].Label != `m0:"order-1"` {
		t.Errorf("ready head %+v", q.ReadyHead)
	}
	if n, _ := s.Node("q1"); n.Quorum != "★orders t2" {
		t.Errorf("q1 leads %q", n.Quorum)
	}
	if old := queueAt(t, r.StateAt(lead-1), "orders"); !old.Stale || old.Ready != 4 || old.Unacked != 2 {
		t.Errorf("the step before the new leader: %+v", old)
	}

	// The consumer reconnects to q1 and gets both again, redelivered.
	re := find(t, r, lead, "q1", "deliver", `m0:"order-1" to c1 ch2 tag 1 redelivered`)
	q = queueAt(t, r.StateAt(re), "orders")
	if len(q.Out) == 0 || !q.Out[0].Redelivered || q.Out[0].Channel != 2 || q.Out[0].Consumer != "c1" || q.Stats.Redelivered == 0 {
		t.Errorf("the redelivery: %+v", q)
	}

	// Clients: p3 never heard back; p1's publishes were all confirmed; c1 processed ten.
	f := r.Final()
	p1, _ := f.QClient("p1")
	p3, _ := f.QClient("p3")
	c1, _ := f.QClient("c1")
	if p1.Kind != queue.KindPublisher || p1.Pub.Published != 8 || p1.Pub.Confirmed != 8 || p3.Pub.Unknown != 1 || p3.Pub.Confirmed != 0 {
		t.Errorf("publishers: p1 %+v, p3 %+v", p1.Pub, p3.Pub)
	}
	if c1.Kind != queue.KindConsumer || c1.Queue != "orders" || c1.Processed != 10 || c1.Redelivered != 2 || c1.Channel != 2 {
		t.Errorf("c1 %+v", c1)
	}
	// While p3's publish waits for its confirm, it is in flight.
	pub := find(t, r, 0, "p3", "publish", "order-via-q3")
	if p, _ := r.StateAt(pub).QClient("p3"); p.InFlight != 1 || p.Pub.Unknown != 0 {
		t.Errorf("p3 right after publishing: %+v", p)
	}
}

// TestSQSStates: an SQS queue shows the message in flight with its receipt handle and
// visibility deadline, and the message back when the timeout runs out.
func TestSQSStates(t *testing.T) {
	r := record(t, "sqs-visibility-timeout-duplicate")
	recv := find(t, r, 0, "q1", "receive", `w1: m0:"job-1" as h0.1`)
	q := queueAt(t, r.StateAt(recv), "jobs")
	if q.Type != "sqs" || q.Unacked != 1 || q.Ready != 0 || len(q.Out) != 1 {
		t.Fatalf("jobs after the receive: %+v", q)
	}
	o := q.Out[0]
	// The visibility timeout (1s) runs from the receive command, which the trace shows
	// once it is applied.
	if rt := r.Events[recv].Time; o.Consumer != "w1" || o.Handle != "h0.1" || o.Receives != 1 || o.VisibleUntil <= rt || o.VisibleUntil > rt.Add(1_000_000_000) {
		t.Errorf("in flight %+v (received at %s, visibility 1s)", o, r.Events[recv].Time)
	}
	back := find(t, r, recv, "q1", "visibility", "visible again")
	if q := queueAt(t, r.StateAt(back), "jobs"); q.Unacked != 0 || q.Ready != 1 || !q.ReadyHead[0].Delivered {
		t.Errorf("jobs when the timeout ran out: %+v", q)
	}
	again := find(t, r, back, "q1", "receive", `w2: m0:"job-1" as h0.2`)
	if q := queueAt(t, r.StateAt(again), "jobs"); len(q.Out) != 1 || q.Out[0].Consumer != "w2" || q.Out[0].Receives != 2 {
		t.Errorf("jobs after the second receive: %+v", q)
	}
	stale := find(t, r, again, "q1", "delete", "stale receipt handle")
	if w1, _ := r.StateAt(stale + 1).QClient("w1"); w1.Kind != queue.KindWorker || w1.Queue != "jobs" || w1.Received != 1 {
		t.Errorf("w1 %+v", w1)
	}
	if w1, _ := r.Final().QClient("w1"); w1.StaleDeletes == 0 {
		t.Errorf("w1 made no stale delete: %+v", w1)
	}
}

// TestExchangesAndDeadLetters: exchanges with their bindings; a dead-lettered message
// counted on its queue and arriving in the dead-letter queue.
func TestExchangesAndDeadLetters(t *testing.T) {
	r := record(t, "rabbit-routing")
	xs := map[string]ExchangeView{}
	for _, x := range r.Final().Exchanges {
		xs[x.Name] = x
	}
	if x := xs["orders"]; x.Kind != "direct" || !reflect.DeepEqual(x.Bindings, []string{"eu -> eu-orders", "us -> us-orders"}) {
		t.Errorf("orders: %+v", x)
	}
	if x := xs["documents"]; x.Kind != "headers" || !slices.Contains(x.Bindings, "all(format=pdf type=report) -> pdf-reports") {
		t.Errorf("documents: %+v", x)
	}
	if x := xs["broadcast"]; !reflect.DeepEqual(x.Bindings, []string{"-> audit", "-> billing"}) {
		t.Errorf("broadcast: %+v", x)
	}
	// The exchanges are declared first, their bindings after the queues.
	if xs := r.StateAt(0).Exchanges; len(xs) != 4 || len(xs[0].Bindings)+len(xs[1].Bindings)+len(xs[2].Bindings)+len(xs[3].Bindings) != 0 {
		t.Errorf("at the first event (a queue's declaration): %+v", xs)
	}

	// With a delivery limit, the poison message is dead-lettered to dlx, which routes it
	// to orders-dlq.
	r = recordFixed(t, "rabbit-poison-dlx")
	dl := findKind(t, r, 0, "dead-letter", `orders: m2:"order-3" to exchange "dlx"`)
	before, after := queueAt(t, r.StateAt(stepStart(r, dl)-1), "orders"), queueAt(t, r.StateAt(dl), "orders")
	if before.Stats.DeadLettered != 0 || after.Stats.DeadLettered != 1 || after.DeadLetterTo != "dlx" {
		t.Errorf("orders before and after the dead-letter: %+v / %+v", before.Stats, after)
	}
	arrived := findKind(t, r, dl, "enqueue", "orders-dlq: ")
	if q := queueAt(t, r.StateAt(arrived), "orders-dlq"); q.Stats.Enqueued != 1 {
		t.Errorf("orders-dlq after the dead letter arrived: %+v", q)
	}
}

// stepStart is the first event of the kernel step that emitted event i.
func stepStart(r *Run, i int) int {
	for i > 0 && r.Events[i-1].Step == r.Events[i].Step {
		i--
	}
	return i
}

// findKind is the first event from index from on of a kind whose detail starts with
// prefix, whichever node emitted it.
func findKind(t testing.TB, r *Run, from int, kind, prefix string) int {
	t.Helper()
	for i := max(from, 0); i < r.Len(); i++ {
		if e := r.Events[i]; e.Kind == kind && strings.HasPrefix(e.Detail, prefix) {
			return i
		}
	}
	t.Fatalf("no %s event starting %q after %d", kind, prefix, from)
	return -1
}

// TestQueueStateAtIsAFold: as for the log cluster, the state rebuilt at any event from a
// checkpoint is the state folded event by event from the start.
func TestQueueStateAtIsAFold(t *testing.T) {
	for _, name := range []string{"rabbit-quorum-leader-crash", "rabbit-poison-dlx", "sqs-visibility-timeout-duplicate"} {
		t.Run(name, func(t *testing.T) {
			r := record(t, name)
			if r.Len() <= CheckpointEvery {
				t.Fatalf("%d events: too few to cross a checkpoint", r.Len())
			}
			var s State
			for i := 0; i < r.Len(); i++ {
				for _, c := range r.changes[r.chStart[i]:r.chStart[i+1]] {
					s.apply(c)
				}
				if i%7 == 0 || i%CheckpointEvery <= 1 || i == r.Len()-1 {
					if got := r.StateAt(i); !reflect.DeepEqual(got, s) {
						t.Fatalf("StateAt(%d) differs from the fold", i)
					}
				}
			}
		})
	}
}

// TestQueueExplanations: every event of every queue scenario (and of their fixes) is
// explained in queue-mode words with a note that exists; key events say the right thing.
func TestQueueExplanations(t *testing.T) {
	for _, n := range Notes {
		if _, err := os.Stat(filepath.Join("..", "notes", n)); err != nil {
			t.Errorf("the Explain pane points to notes/%s: %v", n, err)
		}
	}
	var runs []*Run
	for _, name := range queueScenarios {
		runs = append(runs, record(t, name))
		if s, _ := scenarios.Load(name); len(s.Fix) > 0 {
			runs = append(runs, recordFixed(t, name))
		}
	}
	for _, r := range runs {
		for i, e := range r.Events {
			s := r.StateAt(i)
			ex := Explain(r, i, &s)
			if ex.Note == "" || !slices.Contains(Notes, ex.Note) {
				t.Errorf("%s step %d %s: no note (%q)", r.Script.Name, i+1, e, ex.Text)
			}
		}
	}
	explain := func(r *Run, i int) Explanation {
		s := r.StateAt(i)
		return Explain(r, i, &s)
	}
	r := record(t, "rabbit-quorum-leader-crash")
	second := find(t, r, 0, "q3", "deliver", `m1:"order-2" to c1 ch1 tag 2`)
	crash := find(t, r, second, "q3", "crash", "")
	lead := find(t, r, crash, "q1", "leader", "orders: q1 acts")
	for _, tc := range []struct {
		r    *Run
		at   int
		note string
		want []string
	}{
		{r, second, NoteDelivery, []string{`pushes m1:"order-2" to c1 on channel 1, delivery tag 2`, "2 of its prefetch 2", "window is full"}},
		{r, crash, NoteFaults, []string{"It led orders", "elect a new leader"}},
		{r, lead, NoteQueues, []string{"q1 now acts for orders", "term 2"}},
		{r, find(t, r, lead, "q1", "channel-closed", "c1 ch1"), NoteDelivery, []string{"The 2 messages it held unacked go back", "leader"}},
		{r, findKind(t, r, crash, "election", "candidate for term 2"), NoteRaft, []string{"Raft group of orders", "majority"}},
		{r, find(t, r, 0, "p3", "timeout", ""), NoteIdempotence, []string{"unknown"}},
	} {
		ex := explain(tc.r, tc.at)
		if ex.Note != tc.note {
			t.Errorf("%s: note %s, want %s", tc.r.Events[tc.at], ex.Note, tc.note)
		}
		for _, w := range tc.want {
			if !strings.Contains(ex.Text, w) {
				t.Errorf("%s: %q lacks %q", tc.r.Events[tc.at], ex.Text, w)
			}
		}
	}
	sqs := record(t, "sqs-visibility-timeout-duplicate")
	if ex := explain(sqs, find(t, sqs, 0, "q1", "visibility", "visible again")); ex.Note != NoteDelivery || !strings.Contains(ex.Text, "at-least-once") {
		t.Errorf("visibility expiry: %+v", ex)
	}
	if ex := explain(sqs, find(t, sqs, 0, "q1", "delete", "stale")); !strings.Contains(ex.Text, "deletes nothing") {
		t.Errorf("stale delete: %+v", ex)
	}
	fifo := record(t, "sqs-fifo-group-blocking")
	if ex := explain(fifo, find(t, fifo, 0, "q1", "receive", "blocked")); ex.Note != NoteOrdering {
		t.Errorf("a blocked FIFO group: %+v", ex)
	}
	redrive := recordFixed(t, "sqs-redrive-dlq")
	if ex := explain(redrive, findKind(t, redrive, 0, "redrive", "")); ex.Note != NoteDLQ || !strings.Contains(ex.Text, "jobs-dlq") {
		t.Errorf("redrive: %+v", ex)
	}
	auto := record(t, "rabbit-consumer-crash-redelivery")
	if ex := explain(auto, find(t, auto, 0, "c1", "crash", "")); !strings.Contains(ex.Text, "auto-ack") || !strings.Contains(ex.Text, "lost") {
		t.Errorf("an auto-ack consumer's crash: %+v", ex)
	}
}

// queueKeyFrames are the quorum-queue scenario's moments the goldens show.
func queueKeyFrames(t testing.TB, r *Run) []struct {
	name string
	at   int
} {
	second := find(t, r, 0, "q3", "deliver", `m1:"order-2" to c1 ch1 tag 2`)
	crash := find(t, r, second, "q3", "crash", "")
	lead := find(t, r, crash, "q1", "leader", "orders: q1 acts")
	re := find(t, r, lead, "q1", "deliver", `m1:"order-2" to c1 ch2 tag 2 redelivered`)
	return []struct {
		name string
		at   int
	}{{"deliver", second}, {"crash", crash}, {"leader", lead}, {"redeliver", re}}
}

// TestGoldenQueueFrames are the quorum-queue scenario's key frames at 80x24 and 120x40.
// Before comparing, each frame is checked for what it must show.
func TestGoldenQueueFrames(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	must := map[string][]string{
		"deliver":   {"q3 ● up ★orders t1", "leader ★q3 t1 · ready 0 · unacked 2", `c1 ch1 prefetch 2: ●● full`, `m0:"order-1" tag 1, m1:"order-2" tag 2`, "Explain · notes/delivery-semantics.md"},
		"crash":     {"q3 ✖ down", "no leader (last: q3 t1)", "ready 4 · unacked 2", "It led orders"},
		"leader":    {"q1 ● up ★orders t2", "leader ★q1 t2", "ready 6 · unacked 0", `↻m0:"order-1" ↻m1:"order-2"`},
		"redeliver": {`c1 ch2 prefetch 2: ●● full`, `m0:"order-1" tag 1 ↻, m1:"order-2" tag 2 ↻`, "redelivery"},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, f := range queueKeyFrames(t, r) {
			t.Run(fmt.Sprintf("%dx%d-%s", size[0], size[1], f.name), func(t *testing.T) {
				m := sized(New(r, Options{}), size[0], size[1]).At(f.at)
				out := frameText(m)
				checkFrame(t, out, size[0], size[1])
				for _, w := range must[f.name] {
					if !strings.Contains(out, w) {
						t.Errorf("the frame lacks %q:\n%s", w, out)
					}
				}
				golden.RequireEqual(t, out)
			})
		}
	}
}

// TestGoldenSQSFrame: an SQS queue with a message in flight, its receipt handle and
// deadline, and the workers.
func TestGoldenSQSFrame(t *testing.T) {
	r := record(t, "sqs-visibility-timeout-duplicate")
	at := find(t, r, 0, "q1", "receive", `w2: m0:"job-1" as h0.2`)
	out := frameText(sized(New(r, Options{}), 120, 40).At(at))
	checkFrame(t, out, 120, 40)
	for _, w := range []string{"jobs sqs", "in flight 1", `in flight: m0:"job-1" -> w2 as h0.2 (receive 2) until 2.426955s`, "w1 ● worker on jobs", "ReceiveMessage"} {
		if !strings.Contains(out, w) {
			t.Errorf("the frame lacks %q:\n%s", w, out)
		}
	}
	golden.RequireEqual(t, out)
}

// TestQueueNoColor: in no-colour mode a queue frame sets no colour, keeps its markers,
// and says the same as the colour frame.
func TestQueueNoColor(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	frames := queueKeyFrames(t, r)
	for _, f := range frames {
		m := sized(New(r, Options{NoColor: true}), 100, 30).At(f.at)
		raw := m.View().Content
		if regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7]|38;|48;)`).MatchString(raw) {
			t.Errorf("%s: colour codes in no-colour mode: %q", f.name, raw)
		}
		plain := ansi.Strip(raw)
		if colour := frameText(sized(New(r, Options{}), 100, 30).At(f.at)); colour != plain {
			t.Errorf("%s: no-colour text differs from the colour text:\n%s\n---\n%s", f.name, plain, colour)
		}
		if f.name == "redeliver" {
			for _, w := range []string{"★", "●●", "↻", "▶"} {
				if !strings.Contains(plain, w) {
					t.Errorf("no %q in\n%s", w, plain)
				}
			}
		}
	}
}

// TestQueueKeys: the jump kinds follow the mode; t cycles queue groups, ] finds them.
func TestQueueKeys(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	m := sized(New(r, Options{}), 80, 24)
	m = press(t, m, "t", "]")
	if m.status != "" || r.Events[m.Pos()].Kind != "deliver" {
		t.Errorf("t then ]: at %s (%q)", r.Events[m.Pos()], m.status)
	}
	if out := frameText(m); !strings.Contains(out, "jump: deliver") {
		t.Errorf("the status line does not say the jump kind:\n%s", out)
	}
	m = press(t, m, "t", "t", "t", "t", "home", "]")
	if e := r.Events[m.Pos()]; e.Kind != "election" && e.Kind != "leader" && e.Kind != "epoch" {
		t.Errorf("the first leader event: %s", e)
	}
	m = press(t, m, "esc", "f")
	m = typeText(t, m, "dead-letter")
	if out := frameText(m); !strings.Contains(out, "deliver, ack, dead-letter") {
		t.Errorf("the filter prompt does not list queue groups:\n%s", out)
	}
	m = press(t, m, "esc", "x")
	if out := frameText(m); !strings.Contains(out, "crash q2") {
		t.Errorf("the fault prompt does not offer queue faults:\n%s", out)
	}
}

// TestQueueForkEquivalence: forking a queue scenario with a crash of a queue node gives
// exactly the run of the file with that crash at that time, and the fork's state shows
// it: with q2 down as well as q3, the queue has no majority and no leader, and p1's
// publishes in that window end unknown.
func TestQueueForkEquivalence(t *testing.T) {
	orig := record(t, "rabbit-quorum-leader-crash")
	var text string
	for _, e := range scenarios.Catalog() {
		if e.Name == "rabbit-quorum-leader-crash" {
			text = e.Text
		}
	}
	k := find(t, orig, 0, "q3", "deliver", "tag 1")
	act, err := sim.ParseAction([]string{"crash", "q2"})
	if err != nil {
		t.Fatal(err)
	}
	fork, err := Fork(orig, k, act, "fork-1")
	if err != nil {
		t.Fatal(err)
	}
	at := orig.Events[k].Time + 1
	s, err := script.Parse("fork.txt", withAt(t, text, "queue-broker ", "at "+at.String()+" crash q2"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Run(s, runner.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := res.Runner.World().Trace().Events(); !reflect.DeepEqual(fork.Events, want) || fork.Hash != res.Hash {
		t.Fatalf("fork: %d events, file: %d events; first difference at %d", fork.Len(), len(want), firstDiff(fork.Events, want))
	}
	if !reflect.DeepEqual(fork.Events[:k+1], orig.Events[:k+1]) {
		t.Errorf("the fork's past differs from the original at %d", firstDiff(fork.Events, orig.Events))
	}
	c := k + 1
	if e := fork.Events[c]; e.Kind != "crash" || e.Node != "q2" || e.Time != at {
		t.Fatalf("after the fork point comes %s, want crash q2 at %s", e, at)
	}
	if st := fork.StateAt(c); st.Nodes[1].Name != "q2" || st.Nodes[1].Status != sim.Down {
		t.Errorf("q2 after its crash: %+v", st.Nodes[1])
	}
	q3 := find(t, fork, c, "q3", "crash", "")
	if q := queueAt(t, fork.StateAt(q3), "orders"); !q.Stale {
		t.Errorf("orders with two of three members down: %+v", q)
	}
	// No leader until q3 restarts (at the end of the script).
	restart := find(t, fork, q3, "q3", "restart", "")
	for i := q3; i < restart; i++ {
		if e := fork.Events[i]; e.Kind == "leader" && strings.Contains(e.Detail, "acts for") {
			t.Errorf("a leader without a majority: %s", e)
		}
	}
	p1, _ := fork.Final().QClient("p1")
	p1orig, _ := orig.Final().QClient("p1")
	if p1.Pub.Unknown == 0 || p1orig.Pub.Unknown != 0 {
		t.Errorf("p1's unknown publishes: %d in the fork, %d in the original", p1.Pub.Unknown, p1orig.Pub.Unknown)
	}
}

// TestQueueForkFromKeys: x crash q2 forks a queue scenario from the keyboard.
func TestQueueForkFromKeys(t *testing.T) {
	r := record(t, "rabbit-quorum-leader-crash")
	m := sized(New(r, Options{}), 80, 24).At(find(t, r, 0, "q3", "deliver", "tag 1"))
	m = press(t, m, "x")
	m = typeText(t, m, "crash q2")
	m = press(t, m, "enter")
	if len(m.Runs()) != 2 || m.Run().Name != "fork-1" {
		t.Fatalf("no fork: %s", m.status)
	}
	if e := m.Run().Events[m.Pos()]; e.Kind != "crash" || e.Node != "q2" {
		t.Errorf("the fork starts at %s", e)
	}
	out := frameText(m)
	for _, w := range []string{"fork-1: crash q2 at", "q2 ✖ down", "★orders t1"} {
		if !strings.Contains(out, w) {
			t.Errorf("the fork's frame lacks %q:\n%s", w, out)
		}
	}
	m = press(t, m, "x")
	m = typeText(t, m, "crash q9")
	m = press(t, m, "enter")
	if len(m.Runs()) != 2 || !strings.Contains(m.status, `no node "q9"`) {
		t.Errorf("a fault on a node that does not exist: %q", m.status)
	}
}

// TestQueueRowsAreBounded: a long queue keeps only the head of its ready messages and the
// first deliveries in its row, with exact counts, and the pane says how many more there
// are.
func TestQueueRowsAreBounded(t *testing.T) {
	s, err := script.Parse("long-queue.txt", "queue-broker confirms=true\n----\n\nqueue name=jobs\n----\n\n"+
		"publish key=jobs count=100\n----\n\nsubscribe consumer=c1 queue=jobs prefetch=40 processing=10s\n----\n\n"+
		"publish key=jobs count=100\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record("main", s, runner.Options{})
	if err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	q := queueAt(t, r.Final(), "jobs")
	if q.Ready != 160 || q.Unacked != 40 || len(q.ReadyHead) != ReadyMax || len(q.Out) != UnackedMax {
		t.Fatalf("ready %d (head %d), unacked %d (rows %d)", q.Ready, len(q.ReadyHead), q.Unacked, len(q.Out))
	}
	if q.ReadyHead[0].Label != `m40:"m41"` || q.Out[0].Label != `m0:"m1"` || q.Consumers[0].Unacked != 40 {
		t.Errorf("heads: %+v / %+v", q.ReadyHead[0], q.Out[0])
	}
	out := frameText(sized(New(r, Options{}), 120, 40).At(r.Len() - 1))
	checkFrame(t, out, 120, 40)
	for _, w := range []string{"ready 160 · unacked 40", "c1 ch1 prefetch 40: 40 unacked full", `ready: m40:"m41" m41:"m42"`, "… +155", "… +36"} {
		if !strings.Contains(out, w) {
			t.Errorf("the frame lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "more unacked") {
		t.Errorf("deliveries counted twice:\n%s", out)
	}
}
