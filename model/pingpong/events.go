package pingpong

import (
	"fmt"
	"time"

	"mqsim/sim"
)

// The events a pingpong server and client put in the trace.

// TornCut is a restarted server cutting a torn journal entry.
type TornCut struct{ Bytes int64 }

// Recovered is a restarted server counting the pings its journal holds.
type Recovered struct{ Pings int }

// Journaled is a ping written to the journal, waiting for its fsync.
type Journaled struct {
	N    int
	From string
	At   int64 // byte offset of the entry
}

// Durable is an fsync that made the journal durable and let the server answer.
type Durable struct {
	Size     int64
	Answered int
}

// NoServer is a Start command naming a node that does not exist.
type NoServer struct{ To string }

// Ponged is a client receiving an answer: RTT after its ping, or a duplicate.
type Ponged struct {
	N         int
	RTT       time.Duration
	Duplicate bool
}

func (TornCut) Kind() string       { return "recover" }
func (e TornCut) Detail() string   { return fmt.Sprintf("cut %dB torn entry", e.Bytes) }
func (Recovered) Kind() string     { return "recover" }
func (e Recovered) Detail() string { return fmt.Sprintf("%d pings in journal", e.Pings) }
func (Journaled) Kind() string     { return "append" }
func (e Journaled) Detail() string {
	return fmt.Sprintf("ping %d from %s at byte %d", e.N, e.From, e.At)
}
func (Durable) Kind() string { return "fsync" }
func (e Durable) Detail() string {
	return fmt.Sprintf("journal durable to byte %d, answered %d", e.Size, e.Answered)
}
func (NoServer) Kind() string     { return "error" }
func (e NoServer) Detail() string { return fmt.Sprintf("no node %q to ping", e.To) }
func (Ponged) Kind() string       { return "pong" }
func (e Ponged) Detail() string {
	if e.Duplicate {
		return fmt.Sprintf("%d again (duplicate)", e.N)
	}
	return fmt.Sprintf("%d after %s", e.N, e.RTT)
}

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: TornCut{}, About: "a restarted pingpong server cut a torn journal entry"},
		{Example: Recovered{}, About: "a restarted pingpong server counted the pings its journal holds"},
		{Example: Journaled{}, About: "a pingpong server wrote a ping to its journal; the answer waits for the fsync"},
		{Example: Durable{}, About: "an fsync made the journal durable and the server answered the pings below it"},
		{Example: NoServer{}, About: "a ping command named a node that does not exist"},
		{Example: Ponged{}, About: "a pingpong client got an answer (or a duplicate of one)"},
	}
}
