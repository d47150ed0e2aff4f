package labs

import (
	"fmt"
	"strconv"
	"testing"

	"mqsim/checker"
	lab "mqsim/labs/idempotent-consumer"
)

// The answers learners try before the textbook one also fail within 200 seeds, each in
// its own way; so does a Handler that panics.

// inMemory remembers the payments it applied in its own fields: the database's crash
// forgets them.
type inMemory struct{ applied map[string]bool }

func (h *inMemory) Process(tx lab.Tx, p lab.Payment) error {
	if h.applied[p.ID] {
		return nil
	}
	h.applied[p.ID] = true
	tx.Credit(p.Account, p.Amount, p.ID)
	return nil
}

// lastOffset keeps, in the transaction, the highest offset applied per partition: a
// payment resent after a lost answer arrives after later ones and is skipped.
type lastOffset struct{}

func (lastOffset) Process(tx lab.Tx, p lab.Payment) error {
	key := fmt.Sprintf("offset/%s/%d", p.Topic, p.Partition)
	if v, ok := tx.Get(key); ok {
		if last, _ := strconv.ParseInt(v, 10, 64); p.Offset <= last {
			return nil
		}
	}
	tx.Credit(p.Account, p.Amount, p.ID)
	tx.Upsert(key, strconv.FormatInt(p.Offset, 10))
	return nil
}

type panics struct{}

func (panics) Process(tx lab.Tx, p lab.Payment) error {
	panic("a bug in the Handler")
}

func TestWrongAnswersFailWithin200Seeds(t *testing.T) {
	l, _ := Find("idempotent-consumer")
	for _, c := range []struct {
		code Code
		h    func() lab.Handler
		seed uint64
		want checker.Anomaly
	}{
		{"in-memory", func() lab.Handler { return &inMemory{applied: map[string]bool{}} }, 15, lab.DoubleApplied},
		{"last-offset", func() lab.Handler { return lastOffset{} }, 13, lab.PaymentLost},
		{"panics", func() lab.Handler { return panics{} }, 1, lab.PaymentLost},
	} {
		handlers[c.code] = c.h
		var res Result
		for seed := uint64(1); seed <= 200 && !res.Failed(); seed++ {
			res = l.RunSeed(seed, c.code)
		}
		delete(handlers, c.code)
		if res.Seed != c.seed || res.Err != nil || len(res.Failures) == 0 || res.Failures[0] != c.want {
			t.Errorf("%s: first failing seed %d with %v (err %v), want seed %d with %s", c.code, res.Seed, res.Failures, res.Err, c.seed, c.want)
		}
	}
}
