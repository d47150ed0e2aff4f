package lab

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/model/history"
)

// sendOps is a history in which p1 sent each of ids to topic t; those in acked were
// acknowledged (at offsets 0, 1, ...), the others stayed unknown.
func sendOps(ids []string, acked ...string) history.History {
	var h history.History
	off := int64(0)
	for _, id := range ids {
		sv := &history.SendValue{TopicPartition: history.TopicPartition{Topic: "t"}, Value: id, Offset: history.NoOffset}
		h = append(h, history.Op{Index: len(h), Process: 1, Type: history.Invoke, F: history.Send, Invoke: -1, Send: sv})
		if slices.Contains(acked, id) {
			done := *sv
			done.Offset = off
			off++
			h = append(h, history.Op{Index: len(h), Time: 10, Process: 1, Type: history.Ok, F: history.Send, Invoke: len(h) - 1, Send: &done})
		}
	}
	return h
}

// credit is the credit a correct Handler makes for payment id at time at.
func credit(id string, at int64) Credit {
	account, amount := Terms(id)
	return Credit{PaymentID: id, Account: account, Amount: amount, At: at}
}

func texts(r checker.Report) string {
	var lines []string
	for _, v := range r.Violations {
		lines = append(lines, fmt.Sprintf("%s %d: %s", v.Anomaly, v.Time, v.Text))
	}
	return strings.Join(lines, "\n")
}

// Each payment credited once: valid, whatever the order of the credits.
func TestCheckPassesEachPaymentOnce(t *testing.T) {
	h := sendOps([]string{"v1", "v2", "v3"}, "v1", "v2")
	// v3 was never acknowledged: credited or not, it is fine (once).
	for _, ledger := range [][]Credit{{credit("v2", 5), credit("v1", 6)}, {credit("v1", 5), credit("v3", 6), credit("v2", 7)}} {
		r := Check(h, "t", Log{Credits: ledger})
		if r.Result != checker.Valid {
			t.Errorf("ledger %v: %s", ledger, texts(r))
		}
	}
}

// The planted bugs: a redelivery credited twice, a payment never credited, a credit for
// a payment nobody sent, and a wrong amount.
func TestCheckCatchesPlantedBugs(t *testing.T) {
	h := sendOps([]string{"v1", "v2", "v3"}, "v1", "v2", "v3")
	a1, m1 := Terms("v1")
	cases := []struct {
		name   string
		ledger []Credit
		ran    []Ran
		want   string
	}{
		{"redelivery applied again", []Credit{credit("v1", 5), credit("v2", 6), credit("v3", 7), credit("v2", 9)}, nil,
			fmt.Sprintf("double-applied 9: payment v2 (%d to %s) credited a second time at 9ns: another delivery of the same payment applied it again", mustAmount("v2"), mustAccount("v2"))},
		{"payment lost", []Credit{credit("v1", 5), credit("v3", 7)}, nil,
			"payment-lost 10: payment v2 acknowledged at t-0@1, never credited: the database never committed a transaction for it"},
		{"payment skipped", []Credit{credit("v1", 5), credit("v3", 7)}, []Ran{{"v1", 5}, {"v2", 6}, {"v3", 7}, {"v2", 8}},
			"payment-lost 6: payment v2 acknowledged at t-0@1, never credited: the database committed your Handler's transaction for it 2 times, first at 6ns, and it credited nothing"},
		{"credit for nothing sent", []Credit{credit("v1", 5), credit("v2", 6), credit("v3", 7), credit("v9", 8)}, nil,
			fmt.Sprintf("wrong-credit 8: %d credited to %s for payment v9, which no producer sent", mustAmount("v9"), mustAccount("v9"))},
		{"wrong amount", []Credit{{PaymentID: "v1", Account: a1, Amount: m1 + 1, At: 5}, credit("v2", 6), credit("v3", 7)}, nil,
			fmt.Sprintf("wrong-credit 5: payment v1 credited %d to %s: the payment is %d to %s", m1+1, a1, m1, a1)},
	}
	for _, c := range cases {
		r := Check(h, "t", Log{Credits: c.ledger, Ran: c.ran})
		if got := texts(r); got != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.name, got, c.want)
		}
	}
}

func mustAccount(id string) string { a, _ := Terms(id); return a }
func mustAmount(id string) int64   { _, m := Terms(id); return m }

// The notes give the sums the property is about.
func TestCheckNotesTheSums(t *testing.T) {
	h := sendOps([]string{"v1", "v2"}, "v1", "v2")
	r := Check(h, "t", Log{Credits: []Credit{credit("v1", 5), credit("v2", 6), credit("v2", 7)}})
	want := fmt.Sprintf("3 credits summing to %d; 2 acknowledged payments summing to %d",
		mustAmount("v1")+2*mustAmount("v2"), mustAmount("v1")+mustAmount("v2"))
	if len(r.Notes) != 1 || r.Notes[0].Text != want {
		t.Errorf("notes %v, want %q", r.Notes, want)
	}
}

// A log whose last entry was torn by a crash reads back up to the last complete entry.
func TestReadLogCutsATornTail(t *testing.T) {
	data := []byte(`{"p":"v1","at":3,"w":[{"k":"applied/v1","v":"1"}],"c":[{"id":"v1","account":"bob","amount":7,"at":3}]}` + "\n" + `{"p":"v2","c":[{"id":"v2","acc`)
	l := ReadLog(data)
	if len(l.Credits) != 1 || l.Credits[0] != (Credit{PaymentID: "v1", Account: "bob", Amount: 7, At: 3}) || l.Table["applied/v1"] != "1" ||
		!slices.Equal(l.Ran, []Ran{{"v1", 3}}) || l.Good != int64(strings.IndexByte(string(data), '\n')+1) {
		t.Errorf("%+v", l)
	}
}
