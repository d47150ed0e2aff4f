// Package solution is the reference solution of the idempotent-consumer lab. Try the lab
// before you read it: the lesson is in finding why the starter fails.
package solution

import lab "mqsim/labs/idempotent-consumer"

// New returns the idempotent Handler.
func New() lab.Handler { return handler{} }

type handler struct{}

// Process credits each payment once. The mark that a payment was applied is written in
// the same transaction as its credit, so both commit or neither does: a redelivered
// payment finds its mark and changes nothing. A mark kept anywhere else (the consumer's
// memory, the handler's fields, a second transaction) can be lost or written apart
// from the credit by a crash between the two.
func (handler) Process(tx lab.Tx, p lab.Payment) error {
	key := "applied/" + p.ID
	if _, done := tx.Get(key); done {
		return nil
	}
	tx.Credit(p.Account, p.Amount, p.ID)
	tx.Upsert(key, "1")
	return nil
}
