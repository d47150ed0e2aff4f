package cluster

import (
	"mqsim/model/proto"
	"mqsim/sim"
)

// The events the cluster's harness puts in the trace.

// InvariantBroken marks the trace where an invariant of the brokers' state first broke
// for a partition and leader epoch (the InvariantViolation the harness keeps).
type InvariantBroken struct {
	Anomaly string // one of the invariant names (ReadAboveHW, ...)
	TP      proto.TP
	Epoch   int32
	Text    string // what was seen, in words
}

func (InvariantBroken) Kind() string     { return "invariant" }
func (e InvariantBroken) Detail() string { return e.Anomaly + ": " + e.Text }

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: InvariantBroken{}, About: "an invariant of the brokers' state broke (checked after every event)"},
	}
}
