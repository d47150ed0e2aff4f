package proto

import (
	"fmt"

	"mqsim/sim"
)

// Operator requests: what an administrator asks of a cluster (kafka-leader-election.sh,
// kafka-reassign-partitions.sh, a broker's SIGTERM). Scenario commands send them from
// outside the world; the controller records what it did in the trace.

// Errors of the operator requests, as Kafka names them.
const (
	ElectionNotNeeded           Error = "ELECTION_NOT_NEEDED"
	PreferredLeaderNotAvailable Error = "PREFERRED_LEADER_NOT_AVAILABLE"
	EligibleLeadersNotAvailable Error = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
	InvalidReplicaAssignment    Error = "INVALID_REPLICA_ASSIGNMENT"
	// ReassignmentInProgress refuses a second reassignment of a partition (mqsim; Kafka
	// replaces the first).
	ReassignmentInProgress Error = "REASSIGNMENT_IN_PROGRESS"
)

// ElectLeaders asks the controller for an election on one partition (Kafka's
// ElectLeaders, API 43, with ElectionType PREFERRED): the first replica of the
// assignment leads if it is alive and in the ISR. Leader, when set, names the ISR member
// to elect instead: Kafka has no such election type (an operator reorders the replicas
// with a reassignment, then asks for the preferred one); mqsim offers it to show a chosen
// move in one step.
type ElectLeaders struct {
	TP     TP
	Leader sim.NodeID // NoLeader: the preferred replica
}

func (m ElectLeaders) String() string {
	if m.Leader == NoLeader {
		return fmt.Sprintf("ElectLeaders %s preferred", m.TP)
	}
	return fmt.Sprintf("ElectLeaders %s leader=%s", m.TP, nodeName(m.Leader))
}

// ElectLeadersResponse says whether the election was held.
type ElectLeadersResponse struct {
	TP    TP
	Error Error
}

func (m ElectLeadersResponse) String() string {
	return fmt.Sprintf("ElectLeaders %s %s", m.TP, errText(m.Error))
}

// AlterPartitionReassignments asks the controller to move a partition to Replicas
// (Kafka's API 45).
type AlterPartitionReassignments struct {
	TP       TP
	Replicas []sim.NodeID
}

func (m AlterPartitionReassignments) String() string {
	return fmt.Sprintf("AlterPartitionReassignments %s replicas=%s", m.TP, nodeList(m.Replicas))
}

// AlterPartitionReassignmentsResponse says whether the reassignment started.
type AlterPartitionReassignmentsResponse struct {
	TP     TP
	Error  Error
	Detail string
}

func (m AlterPartitionReassignmentsResponse) String() string {
	return fmt.Sprintf("AlterPartitionReassignments %s %s", m.TP, errText(m.Error))
}

// ShutdownBroker is the operator's signal to a broker (SIGTERM): shut down in a
// controlled way, asking the controller to move its leaderships away first.
type ShutdownBroker struct{}

func (ShutdownBroker) String() string { return "shutdown" }

func errText(e Error) string {
	if e == None {
		return "ok"
	}
	return string(e)
}

func cloneIDs(ids []sim.NodeID) []sim.NodeID {
	if ids == nil {
		return nil
	}
	return append([]sim.NodeID(nil), ids...)
}
