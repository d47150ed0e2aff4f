package lab

import (
	"fmt"

	"mqsim/sim"
)

// The events the lab's replicas and controller put in the trace.

// ReplicaStarted is a replica that (re)started and read its log back.
type ReplicaStarted struct {
	Entries int
	Cut     int64 // bytes of a torn tail cut off
}

// RoleSet is a replica that heard of a new epoch from the controller.
type RoleSet struct {
	Epoch  int64
	Leader string
}

// LeaderNamed is the controller naming a new leader.
type LeaderNamed struct {
	Epoch  int64
	Leader string
}

// AppendAcknowledged is the learner's code acknowledging an append to a client (the
// answer leaves once the log is durable).
type AppendAcknowledged struct {
	Client string
	Offset int64
}

// LogTruncated is the learner's code removing entries from its log.
type LogTruncated struct {
	From, Removed int64
}

// CodePanicked is the learner's code panicking in a call: the call stops there.
type CodePanicked struct {
	Why string
}

func (ReplicaStarted) Kind() string { return "replica-start" }
func (e ReplicaStarted) Detail() string {
	s := fmt.Sprintf("log of %d entries", e.Entries)
	if e.Cut > 0 {
		s += fmt.Sprintf(", cut %dB torn tail", e.Cut)
	}
	return s
}
func (RoleSet) Kind() string { return "replica-role" }
func (e RoleSet) Detail() string {
	return fmt.Sprintf("epoch %d, leader %s", e.Epoch, e.Leader)
}
func (LeaderNamed) Kind() string { return "leader-named" }
func (e LeaderNamed) Detail() string {
	return fmt.Sprintf("epoch %d: leader %s", e.Epoch, e.Leader)
}
func (AppendAcknowledged) Kind() string { return "replica-ack" }
func (e AppendAcknowledged) Detail() string {
	return fmt.Sprintf("offset %d to %s", e.Offset, e.Client)
}
func (LogTruncated) Kind() string { return "replica-truncate" }
func (e LogTruncated) Detail() string {
	return fmt.Sprintf("from offset %d: %d entries removed", e.From, e.Removed)
}
func (CodePanicked) Kind() string     { return "replica-panic" }
func (e CodePanicked) Detail() string { return e.Why }

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: ReplicaStarted{}, About: "a replicated-log lab replica (re)started and read its log back"},
		{Example: RoleSet{}, About: "a replicated-log lab replica heard of a new epoch and its leader from the controller"},
		{Example: LeaderNamed{}, About: "the replicated-log lab's controller named a new leader, in a new epoch"},
		{Example: AppendAcknowledged{}, About: "the learner's replica acknowledged an append (the answer leaves once the log is durable)"},
		{Example: LogTruncated{}, About: "the learner's replica removed entries from the end of its log"},
		{Example: CodePanicked{}, About: "the learner's replica code panicked; the call stopped there"},
	}
}
