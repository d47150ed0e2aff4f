package lab

import (
	"fmt"

	"mqsim/sim"
)

// The events the lab's database and application put in the trace.

// Recovered is a database that (re)started and read its log back.
type Recovered struct {
	Credits, Keys int
	Cut           int64 // bytes of a torn tail cut off
}

// Committed is a transaction the database ran and wrote to its log; its answer waits
// for the fsync.
type Committed struct {
	From, Payment   string
	Credits, Writes int
}

// Aborted is a transaction whose Handler returned an error (or panicked).
type Aborted struct {
	From, Payment, Why string
}

// Durable is an fsync that made the log durable and let the database answer.
type Durable struct {
	Size     int64
	Answered int
}

// Sending is an application sending a poll's payments to the database, or again those
// whose answers did not come.
type Sending struct {
	Payments int
	Retry    bool
}

// Applied is an application whose poll's payments were all committed: it commits the
// poll's offsets.
type Applied struct{}

func (Recovered) Kind() string { return "db-recover" }
func (e Recovered) Detail() string {
	s := fmt.Sprintf("%d credits, %d keys", e.Credits, e.Keys)
	if e.Cut > 0 {
		s += fmt.Sprintf(", cut %dB torn tail", e.Cut)
	}
	return s
}
func (Committed) Kind() string { return "db-commit" }
func (e Committed) Detail() string {
	return fmt.Sprintf("payment %s from %s: %d credits, %d writes", e.Payment, e.From, e.Credits, e.Writes)
}
func (Aborted) Kind() string { return "db-abort" }
func (e Aborted) Detail() string {
	return fmt.Sprintf("payment %s from %s: %s", e.Payment, e.From, e.Why)
}
func (Durable) Kind() string { return "db-fsync" }
func (e Durable) Detail() string {
	return fmt.Sprintf("log durable to byte %d, answered %d", e.Size, e.Answered)
}
func (Sending) Kind() string { return "app-send" }
func (e Sending) Detail() string {
	if e.Retry {
		return fmt.Sprintf("%d payments again (no answer)", e.Payments)
	}
	return fmt.Sprintf("%d payments", e.Payments)
}
func (Applied) Kind() string     { return "app-applied" }
func (e Applied) Detail() string { return "every payment of the poll committed: commit offsets" }

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: Recovered{}, About: "the lab's database (re)started and read its log back"},
		{Example: Committed{}, About: "the lab's database ran a transaction and wrote it to its log; the answer waits for the fsync"},
		{Example: Aborted{}, About: "the lab's Handler returned an error (or panicked): the transaction wrote nothing"},
		{Example: Durable{}, About: "an fsync made the lab database's log durable and it answered the transactions below it"},
		{Example: Sending{}, About: "a lab application sent a poll's payments to the database (again, for those not answered)"},
		{Example: Applied{}, About: "every payment of a lab application's poll was committed: it commits the poll's offsets"},
	}
}
