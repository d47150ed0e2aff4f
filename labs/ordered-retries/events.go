package lab

import (
	"fmt"

	"mqsim/model/history"
	"mqsim/sim"
)

// The events the lab's producer puts in the trace.

// Handed is the application handing a record over to the producer.
type Handed struct {
	Key, Value string
	Partition  int32
}

// Requested is a request the Sender made leaving for its partition's leader (at once,
// or once the leader was known and the backoff over).
type Requested struct {
	Request   int64
	Partition int32
	To        string
	Values    []string
}

// Answered is a request's answer given to the Sender: ok at Offset, or Error (a
// broker's, or the timeout's).
type Answered struct {
	Request   int64
	Partition int32
	Values    []string
	Error     string
	Offset    int64
}

// Late is a leader's answer to a request that had timed out already: the producer drops
// it, and the Sender never learns that those records were appended (or not).
type Late struct {
	From      string
	Partition int32
	Error     string
}

// Acknowledged is the Sender telling the application that a record is in the log.
type Acknowledged struct {
	Key, Value string
	Offset     int64 // where the latest ok answer put it, or history.NoOffset
}

// Panicked is the Sender panicking in one of its methods: the producer goes on.
type Panicked struct {
	In, Why string
}

func (Handed) Kind() string { return "app-hand" }
func (e Handed) Detail() string {
	return fmt.Sprintf("%s=%s for partition %d", e.Key, e.Value, e.Partition)
}
func (Requested) Kind() string { return "request" }
func (e Requested) Detail() string {
	return fmt.Sprintf("request %d to %s: partition %d %v", e.Request, e.To, e.Partition, e.Values)
}
func (Answered) Kind() string { return "answer" }
func (e Answered) Detail() string {
	if e.Error != "" {
		return fmt.Sprintf("request %d partition %d %v: %s", e.Request, e.Partition, e.Values, e.Error)
	}
	return fmt.Sprintf("request %d partition %d %v: ok at offset %d", e.Request, e.Partition, e.Values, e.Offset)
}
func (Late) Kind() string { return "late-answer" }
func (e Late) Detail() string {
	if e.Error != "" {
		return fmt.Sprintf("from %s for partition %d (%s), after its request timed out: dropped", e.From, e.Partition, e.Error)
	}
	return fmt.Sprintf("from %s for partition %d (ok), after its request timed out: dropped", e.From, e.Partition)
}
func (Acknowledged) Kind() string { return "app-ack" }
func (e Acknowledged) Detail() string {
	if e.Offset == history.NoOffset {
		return fmt.Sprintf("%s=%s acknowledged to the application, though no ok answer covered it", e.Key, e.Value)
	}
	return fmt.Sprintf("%s=%s acknowledged to the application (offset %d)", e.Key, e.Value, e.Offset)
}
func (Panicked) Kind() string     { return "sender-panic" }
func (e Panicked) Detail() string { return fmt.Sprintf("your %s panicked: %s", e.In, e.Why) }

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: Handed{}, About: "the ordered-retries lab's application handed a record over to the producer"},
		{Example: Requested{}, About: "a request of the lab's Sender left for its partition's leader"},
		{Example: Answered{}, About: "the lab's Sender got a request's answer: ok at an offset, a broker's error, or the timeout"},
		{Example: Late{}, About: "a leader's answer came after its request timed out: the lab's producer dropped it"},
		{Example: Acknowledged{}, About: "the lab's Sender told the application a record is in the log"},
		{Example: Panicked{}, About: "the lab's Sender panicked in one of its methods; the producer goes on"},
	}
}
