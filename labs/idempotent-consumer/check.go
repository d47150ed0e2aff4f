package lab

import (
	"fmt"
	"time"

	"mqsim/checker"
	"mqsim/model/history"
)

// What the lab's checker finds.
const (
	// DoubleApplied: one payment credited more than once.
	DoubleApplied checker.Anomaly = "double-applied"
	// PaymentLost: an acknowledged payment never credited.
	PaymentLost checker.Anomaly = "payment-lost"
	// WrongCredit: a credit for a payment no producer sent, or of another account or
	// amount than the payment's.
	WrongCredit checker.Anomaly = "wrong-credit"
)

// CheckerName names the lab's checker in reports.
const CheckerName = "idempotent-consumer"

// Check judges the database's final log against the producers' history h: each
// payment acknowledged on topic is credited exactly once, with its account and amount;
// a payment sent but not acknowledged is credited at most once; nothing else is
// credited. Then the balances add up to the acknowledged payments (and those of the
// others that made it), which the notes say in figures.
func Check(h history.History, topic string, log Log) checker.Report {
	ledger := log.Credits
	sent := map[string]bool{}
	var acked []history.Op // ok sends, in completion order
	for _, op := range h {
		if op.F != history.Send || op.Send == nil || op.Send.Topic != topic {
			continue
		}
		sent[op.Send.Value] = true
		if op.Type == history.Ok {
			acked = append(acked, op)
		}
	}
	var vs []checker.Violation
	credits := map[string]int{}
	var total int64
	for _, c := range ledger {
		total += c.Amount
		credits[c.PaymentID]++
		account, amount := Terms(c.PaymentID)
		switch {
		case !sent[c.PaymentID]:
			vs = append(vs, violation(WrongCredit, c.PaymentID, c.At,
				fmt.Sprintf("%d credited to %s for payment %s, which no producer sent", c.Amount, c.Account, c.PaymentID)))
		case c.Account != account || c.Amount != amount:
			vs = append(vs, violation(WrongCredit, c.PaymentID, c.At,
				fmt.Sprintf("payment %s credited %d to %s: the payment is %d to %s", c.PaymentID, c.Amount, c.Account, amount, account)))
		case credits[c.PaymentID] == 2:
			vs = append(vs, violation(DoubleApplied, c.PaymentID, c.At,
				fmt.Sprintf("payment %s (%d to %s) credited a second time at %s: another delivery of the same payment applied it again", c.PaymentID, amount, account, time.Duration(c.At))))
		}
	}
	var want int64
	for _, op := range acked {
		id := op.Send.Value
		_, amount := Terms(id)
		want += amount
		if credits[id] > 0 {
			continue
		}
		lost := fmt.Sprintf("payment %s acknowledged at %s@%d, never credited", id, op.Send.TopicPartition, op.Send.Offset)
		if runs := ranFor(log.Ran, id); len(runs) > 0 {
			// Where the Handler skipped it is where the TUI should open.
			vs = append(vs, violation(PaymentLost, id, runs[0].At, fmt.Sprintf("%s: the database committed your Handler's transaction for it %s, first at %s, and it credited nothing",
				lost, times(len(runs)), time.Duration(runs[0].At))))
			continue
		}
		vs = append(vs, violation(PaymentLost, id, op.Time, lost+": the database never committed a transaction for it"))
	}
	notes := []checker.Note{{Checker: CheckerName, Text: fmt.Sprintf("%d credits summing to %d; %d acknowledged payments summing to %d",
		len(ledger), total, len(acked), want)}}
	return checker.Collect(vs, notes)
}

// ranFor are the committed transactions that ran for payment id.
func ranFor(ran []Ran, id string) []Ran {
	var out []Ran
	for _, r := range ran {
		if r.Payment == id {
			out = append(out, r)
		}
	}
	return out
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func violation(a checker.Anomaly, id string, at int64, text string) checker.Violation {
	return checker.Violation{Checker: CheckerName, Anomaly: a, Values: []string{id}, Time: at, Text: text}
}
