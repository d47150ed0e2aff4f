package tui

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/group"
	"mqsim/model/txn"
	"mqsim/model/wal"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// recordText records a script given as text.
func recordText(t testing.TB, name, text string) *Run {
	t.Helper()
	s, err := script.Parse(name, text)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record("main", s, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Err != nil {
		t.Fatalf("%s stopped: %v", name, r.Err)
	}
	return r
}

// txnCommitScript opens a transaction, writes two records in it, commits it, and lets
// the markers land.
const txnCommitScript = `cluster brokers=3 partitions=1 rf=3 min-isr=2
----

producer name=tp transactional-id=tx-1
----

run for=2s
----

begin-txn producer=tp
----

produce producer=tp values=(a, b)
----

commit-txn producer=tp wait=false
----

run for=1s
----
`

// plainLines are a pane's lines without styles.
func plainLines(p pane) []string {
	out := make([]string, len(p.lines))
	for i, l := range p.lines {
		out[i] = ansi.Strip(l)
	}
	return out
}

// With a transaction open, the leader's strip shows the LSO at the transaction's first
// record below the HW, the producer is "in transaction" on t/0 and its coordinator has it
// Ongoing; after the commit the strip ends with the COMMIT marker and the LSO is gone.
func TestScreenShowsAnOpenTransactionThenItsMarker(t *testing.T) {
	r := recordText(t, "txn-commit.txt", txnCommitScript)
	at := func(command string) Model {
		for _, sp := range r.Steps {
			if sp.Step.Cmd == command {
				return New(r, Options{NoColor: true}).At(sp.End - 1)
			}
		}
		t.Fatalf("no %s step", command)
		return Model{}
	}
	expect := func(when string, lines []string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !slices.Contains(lines, w) {
				t.Errorf("%s: no line %q in\n%s", when, w, strings.Join(lines, "\n"))
			}
		}
	}
	open := at("produce")
	expect("open", plainLines(open.clusterPane(100)),
		"  b1 ★ e0  0:a* 1:b*┃ LSO 0 HW 2 LEO 2 disk 0",
		"transaction coordinator b1",
		"  tx-1 Ongoing · pid 1000000000 epoch 0 · [t/0]")
	expect("open", plainLines(open.clientsPane()),
		"  transactional.id tx-1: in transaction · pid 1000000000 epoch 0 · [t/0] · 0 committed · 0 aborted")

	done := New(r, Options{NoColor: true}).At(r.Len() - 1)
	expect("committed", plainLines(done.clusterPane(100)),
		"  b1 ★ e0  0:a* 1:b* 2:COMMIT*┃ HW 3 LEO 3 disk 0",
		"  tx-1 CompleteCommit · pid 1000000000 epoch 1")
	expect("committed", plainLines(done.clientsPane()),
		"  transactional.id tx-1: ready · pid 1000000000 epoch 1 · 1 committed · 0 aborted")
}

// A marker never reads as a record: with values it is named, without them it carries the
// initial of its type.
func TestMarkerLabels(t *testing.T) {
	commit := Rec{Control: true, Marker: wal.ControlCommit}
	abort := Rec{Control: true, Marker: wal.ControlAbort}
	rec := Rec{Value: "a-very-long-value"}
	for _, c := range []struct {
		r      Rec
		values bool
		want   string
	}{
		{commit, true, "7:COMMIT"}, {commit, false, "7C"},
		{abort, true, "7:ABORT"}, {abort, false, "7A"},
		{rec, true, "7:a-very-long…"}, {rec, false, "7"},
	} {
		if got := c.r.label(7, c.values); got != c.want {
			t.Errorf("%+v values=%v: %q, want %q", c.r, c.values, got, c.want)
		}
	}
}

// txnFenceScript: tx-1 commits, then a second instance with the same transactional.id
// fences the first while its next transaction is open.
const txnFenceScript = txnCommitScript + `
begin-txn producer=tp
----

produce producer=tp values=(c)
----

producer name=tp2 transactional-id=tx-1
----

run for=2s
----

abort-txn producer=tp
----
`

// ] jumps to the next event of the chosen transaction group; t cycles to it.
func TestJumpToTransactionEvents(t *testing.T) {
	r := recordText(t, "txn-fence.txt", txnFenceScript)
	m := sized(New(r, Options{NoColor: true}), 120, 40).At(0)
	for m.jumpGroup().Name != "txn-begin" {
		m = press(t, m, "t")
		if m.jump == 0 {
			t.Fatal("no txn-begin jump group")
		}
	}
	want := map[string]func(e sim.Event) bool{
		"txn-begin":  func(e sim.Event) bool { _, ok := e.Data.(client.TxnBegun); return ok },
		"txn-commit": func(e sim.Event) bool { d, ok := e.Data.(txn.StateChanged); return ok && d.To == txn.PrepareCommit },
		"txn-abort":  func(e sim.Event) bool { d, ok := e.Data.(txn.StateChanged); return ok && d.To == txn.PrepareAbort },
		"txn-marker": func(e sim.Event) bool { d, ok := e.Data.(txn.MarkersSent); return ok && d.Commit },
		"txn-fence":  func(e sim.Event) bool { d, ok := e.Data.(txn.Fenced); return ok && d.By == txn.ReqInitProducerID },
	}
	for _, name := range []string{"txn-begin", "txn-commit", "txn-abort", "txn-marker", "txn-fence"} {
		if m.jumpGroup().Name != name {
			t.Fatalf("jump group %q, want %q", m.jumpGroup().Name, name)
		}
		j := press(t, m.At(0), "]")
		e := r.Events[j.Pos()]
		if !want[name](e) {
			t.Errorf("%s: jumped to %s (%T)", name, e, e.Data)
		}
		m = press(t, m, "t")
	}
}

// txnNotes are the notes transaction events point to.
var txnNotes = []string{NoteTransactions, NoteExactlyOnce, NoteReadCommitted}

// Every transaction event type the broker, the clients and the group coordinator declare
// is explained by its type and points to a transactions note (the coordinator's own,
// model/txn, are checked by TestEveryTxnEventIsExplained).
func TestTxnEventTypesPointToTxnNotes(t *testing.T) {
	var docs []sim.EventDoc
	docs = append(docs, broker.EventDocs()...)
	docs = append(docs, client.EventDocs()...)
	docs = append(docs, group.EventDocs()...)
	docs = append(docs, txn.EventDocs()...)
	n := 0
	for _, doc := range docs {
		if !isTxnType(doc.Example) {
			continue
		}
		n++
		r := typedRun(sim.Event{Node: "x1", Data: doc.Example})
		ex := Explain(r, 0, &State{})
		generic := fmt.Sprintf("x1 %s: %s.", r.Events[0].Kind, r.Events[0].Detail)
		if ex.Text == generic || !slices.Contains(txnNotes, ex.Note) {
			t.Errorf("%T: %q (note %q)", doc.Example, ex.Text, ex.Note)
		}
	}
	if n < 40 {
		t.Errorf("only %d transaction event types found", n)
	}
}

// isTxnType reports an event type of transactions: every type of model/txn, and the
// transaction types of the broker, the clients and the group coordinator.
func isTxnType(p sim.Payload) bool {
	if reflect.TypeOf(p).PkgPath() == "mqsim/model/txn" {
		return true
	}
	switch p.(type) {
	case broker.TxnVerifying, broker.TxnVerifyFailed, broker.MarkerAppended, broker.MarkerRejected, broker.MarkersAnswered,
		client.TxnCoordinatorFound, client.TxnInitialized, client.TxnBegun, client.TxnRefused, client.TxnPartitionsAdded,
		client.TxnOffsetsAdded, client.TxnRetry, client.TxnGaveUp, client.TxnMustAbort, client.TxnStopped, client.TxnEnded,
		client.ReadCommittedSkipped, client.PipelineStep,
		group.TxnCommitRejected, group.TxnCommitUnfenced, group.TxnCommitFailed, group.TxnOffsetsPending, group.TxnOffsetsCompleted:
		return true
	}
	return false
}

// Every event of the transaction smoke runs (testdata/txn: a committed and an aborted
// transaction read at both isolation levels; a consume-transform-produce pipeline) is
// explained by its type, with a note that exists in the list; the transaction events
// point to a transactions note.
func TestTxnSmokeRunsAreExplained(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range []string{"txn-basics.txt", "pipeline.txt"} {
		text, err := os.ReadFile("testdata/txn/" + name)
		if err != nil {
			t.Fatal(err)
		}
		r := recordText(t, name, string(text))
		for i, e := range r.Events {
			st := r.StateAt(i)
			ex := Explain(r, i, &st)
			generic := fmt.Sprintf("%s %s: %s.", e.Node, e.Kind, e.Detail)
			if ex.Text == generic || ex.Note != "" && !slices.Contains(Notes, ex.Note) {
				t.Errorf("%s event %d %s: %q (note %q)", name, i, e, ex.Text, ex.Note)
			}
			if e.Data != nil && isTxnType(e.Data) {
				seen[fmt.Sprintf("%T", e.Data)] = true
				if !slices.Contains(txnNotes, ex.Note) {
					t.Errorf("%s event %d %s: note %q, want a transactions note", name, i, e, ex.Note)
				}
			}
		}
	}
	for _, typ := range []string{"txn.StateChanged", "txn.MarkersSent", "txn.MarkersWritten", "broker.MarkerAppended",
		"client.TxnBegun", "client.TxnEnded", "client.ReadCommittedSkipped", "group.TxnOffsetsPending", "group.TxnOffsetsCompleted"} {
		if !seen[typ] {
			t.Errorf("the smoke runs have no %s event: the test no longer covers it", typ)
		}
	}
}

// A transactional pipeline's row says what it reads and writes, where it reads, its state
// and counts, and its producer's transaction.
func TestClientsPaneShowsAPipeline(t *testing.T) {
	text, err := os.ReadFile("testdata/txn/pipeline.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := recordText(t, "pipeline.txt", string(text))
	lines := plainLines(New(r, Options{NoColor: true}).At(r.Len() - 1).clientsPane())
	for _, w := range []string{
		"app ● pipeline  group g: t → out · at t/0@5 · polling · 29 polls · 2 processed · 1 committed · 0 aborted",
		"  transactional.id app: ready · pid 1000000000 epoch 1 · 1 committed · 0 aborted",
	} {
		if !slices.Contains(lines, w) {
			t.Errorf("no line %q in\n%s", w, strings.Join(lines, "\n"))
		}
	}
}

// The coordinator's row changes at its own event: the state change, not an earlier event
// of the broker in the same kernel step; the marker shows in the strip from the marker's
// append on.
func TestTxnRowsChangeAtTheirEvents(t *testing.T) {
	r := recordText(t, "txn-commit.txt", txnCommitScript)
	ongoing := slices.IndexFunc(r.Events, func(e sim.Event) bool { d, ok := e.Data.(txn.StateChanged); return ok && d.To == txn.Ongoing })
	if ongoing < 1 || r.Events[ongoing-1].Step != r.Events[ongoing].Step {
		t.Fatalf("want the Ongoing record's state change after another event of its step, at %d", ongoing)
	}
	stateOf := func(i int) txn.State {
		st := r.StateAt(i)
		return st.TxnCoords[0].Txns[0].State
	}
	if before, at := stateOf(ongoing-1), stateOf(ongoing); before != txn.Empty || at != txn.Ongoing {
		t.Errorf("coordinator row: %s before the txn-state event, %s at it; want Empty, Ongoing", before, at)
	}
	marker := slices.IndexFunc(r.Events, func(e sim.Event) bool {
		d, ok := e.Data.(broker.MarkerAppended)
		return ok && e.Node == "b1" && d.TP.Topic == "t"
	})
	lastRec := func(i int) Rec {
		st := r.StateAt(i)
		recs := st.Replicas[0].Recs // t/0 on b1
		return recs[len(recs)-1]
	}
	if before, at := lastRec(marker-1), lastRec(marker); before.Control || !at.Control || at.Marker != wal.ControlCommit {
		t.Errorf("b1's last record before the marker event %+v, at it %+v", before, at)
	}
}

// A strip whose replica shows an LSO keeps room for it: fewer offsets fit than without.
func TestStripColumnsKeepRoomForTheLSO(t *testing.T) {
	recs := make([]Rec, 40)
	rv := ReplicaView{Hosted: true, HW: 40, LSO: 40, LEO: 40, Synced: 40, Recs: recs}
	without := stripColumns(80, []string{"b1"}, []ReplicaView{rv})
	rv.LSO = 3
	with := stripColumns(80, []string{"b1"}, []ReplicaView{rv})
	if with.from-without.from != 3 { // " LSO 40" is 7 wide: three columns of 3 ("38 ")
		t.Errorf("first offset shown: %d with an LSO, %d without; want 3 more hidden with it", with.from, without.from)
	}
}
