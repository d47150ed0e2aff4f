// Package lab is the idempotent-consumer lab: payments arrive on a topic, a consumer
// group reads them at least once, and the learner's code applies each one to a
// simulated database exactly once, through rebalances, consumer crashes, redeliveries,
// database crashes and broker failovers.
//
// The learner implements Handler (in starter/, their copy); the rest of this package is
// the lab's world: the database node (db.go), the application node that polls the
// topic and sends each payment to the database (app.go), and the checker that judges
// the database's final table (check.go). The reference solution is in solution/.
//
// The learner's code runs inside mqsim's deterministic simulation, so it obeys the
// model's rules (no goroutines, channels, clock, OS, global random source or map order),
// and imports nothing of mqsim but this package: mqsim lab checks both before it runs.
package lab

import (
	"embed"
	"hash/fnv"

	"mqsim/model/history"
)

// Payment is one payment as the consumer read it from the topic.
type Payment struct {
	// ID is unique per payment (the record's value): the same payment delivered twice
	// has the same ID.
	ID string
	// Account is the account the payment credits, Amount what it adds to its balance.
	Account string
	Amount  int64
	// Topic, Partition and Offset say where the record sits in the log: a redelivery of
	// a payment has the same place.
	Topic     string
	Partition int32
	Offset    int64
}

// Tx is one database transaction. What Process writes through it commits atomically
// when Process returns nil, and not at all when it returns an error (or the database
// crashes before the commit is on its disk).
type Tx interface {
	// Get reads a key of the database's table: the value and true, or "" and false
	// when the key has never been written.
	Get(key string) (value string, ok bool)
	// Upsert writes a key of the table (insert, or update if present).
	Upsert(key, value string)
	// Credit adds amount to account's balance on behalf of payment paymentID: the
	// effect the payment is for. The checker reads the credits and nothing else.
	Credit(account string, amount int64, paymentID string)
}

// Handler is the code the learner writes: how one delivery of a payment changes the
// database.
type Handler interface {
	// Process applies payment p through tx. The database runs it as one transaction
	// (a stored procedure: the whole function runs in the database, one transaction
	// at a time, so nothing else changes the table while it runs).
	//
	// A payment may come more than once: the consumer commits its offsets only after
	// the database answered, so a consumer crash, a rebalance, a lost answer or a
	// retry brings the same payment back. Each must be credited once.
	//
	// A Handler lives in the database process: its fields are lost when the database
	// crashes; only what a committed transaction wrote survives.
	Process(tx Tx, p Payment) error
}

// Sources are the Go files of the learner's code and of the reference solution, as
// compiled into this binary: mqsim lab checks them for the determinism rules.
//
//go:embed starter/*.go solution/*.go
var Sources embed.FS

// accounts are the accounts payments credit.
var accounts = []string{"alice", "bob", "carol"}

// PaymentOf is the payment a record of partition tp holds: its value is the payment's
// ID, and the account and amount follow from the ID (so the checker knows them from the
// producer's history).
func PaymentOf(tp history.TopicPartition, rec history.Record) Payment {
	account, amount := Terms(rec.Value)
	return Payment{ID: rec.Value, Account: account, Amount: amount, Topic: tp.Topic, Partition: tp.Partition, Offset: rec.Offset}
}

// Terms are the account and amount (1 to 100) of payment id.
func Terms(id string) (account string, amount int64) {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	return accounts[x%uint64(len(accounts))], 1 + int64(x>>8%100)
}
