package tui

import (
	"strings"
	"testing"

	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/sim"
)

// No catalogue scenario has a transactional client yet, so TestEveryCatalogueEventIsExplained
// sees no transaction event: every type the coordinator declares is checked here, through
// Explain as the Explain pane calls it.
func TestEveryTxnEventIsExplained(t *testing.T) {
	for _, doc := range txn.EventDocs() {
		r := typedRun(sim.Event{Node: "b1", Data: doc.Example})
		own, ok := explainTxn(r, 0, &State{})
		if !ok || own.Text == "" || own.Note == "" {
			t.Errorf("%T is not explained: %+v", doc.Example, own)
		}
		if ex := Explain(r, 0, &State{}); ex != own {
			t.Errorf("%T: an explainer before explainTxn answers %q", doc.Example, ex.Text)
		}
	}
}

func TestExplainTxnEventsUseTheirFields(t *testing.T) {
	tps := []proto.TP{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}
	r := typedRun(
		sim.Event{Node: "b2", Data: txn.Fenced{ID: "tx", ProducerID: 1000000000, Epoch: 3, NewEpoch: 4, By: txn.ReqInitProducerID, Partitions: tps}},
		sim.Event{Node: "b2", Data: txn.Fenced{ID: "tx", ProducerID: 1000000000, Epoch: 4, NewEpoch: 5, By: txn.ReqTimeout, Partitions: tps}},
		sim.Event{Node: "b2", Data: txn.MarkersSent{ID: "tx", ProducerID: 1000000000, Epoch: 5, Commit: true, Leader: "b3", Partitions: tps, Attempt: 2, Early: true}},
		sim.Event{Node: "b2", Data: txn.Refused{ID: "tx", By: txn.ReqEndTxn, ProducerID: 1000000000, Epoch: 3, Err: proto.ProducerFenced, Known: true, State: txn.Ongoing, Current: 4}},
	)
	for i, want := range [][]string{
		{"A new instance of the same transactional id", "from 3 to 4", "[t/0 t/1]"},
		{"longer than its transaction.timeout.ms", "from 4 to 5"},
		{"asks b3 to write a COMMIT marker for tx", "(attempt 2)", "BEFORE the prepare record is replicated"},
		{"refused EndTxn from transactional id tx (producer id 1000000000, epoch 3) with PRODUCER_FENCED", "(4)"},
	} {
		ex := Explain(r, i, &State{})
		for _, w := range want {
			if !strings.Contains(ex.Text, w) {
				t.Errorf("event %d (%s): %q does not say %q", i, r.Events[i].Kind, ex.Text, w)
			}
		}
	}
}
