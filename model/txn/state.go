package txn

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// State is a transactional id's state at its coordinator (Kafka's TransactionState).
type State uint8

const (
	// Empty: the id has a producer id and epoch and no transaction.
	Empty State = iota
	// Ongoing: a transaction is open; the partitions it wrote to are recorded.
	Ongoing
	// PrepareCommit: the commit is decided (the record is the commit point); the markers
	// are being written.
	PrepareCommit
	// PrepareAbort: the abort is decided; the markers are being written.
	PrepareAbort
	// CompleteCommit: every partition has its COMMIT marker.
	CompleteCommit
	// CompleteAbort: every partition has its ABORT marker.
	CompleteAbort
	// PrepareEpochFence: a new instance or the timeout is fencing the open transaction;
	// the PrepareAbort with the bumped epoch is being replicated (never a record itself).
	PrepareEpochFence
	// Dead: the coordinator no longer hosts the id (it lost the partition).
	Dead
)

var stateNames = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "PrepareEpochFence", "Dead"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// parseState reads a state name back from a record.
func parseState(s string) (State, bool) {
	i := slices.Index(stateNames[:], s)
	return State(i), i >= 0
}

// Request names the request an event is about.
type Request uint8

const (
	ReqInitProducerID Request = iota
	ReqAddPartitions
	ReqAddOffsets
	ReqEndTxn
	// ReqTimeout is the coordinator itself, aborting a transaction past its timeout.
	ReqTimeout
)

func (r Request) String() string {
	switch r {
	case ReqInitProducerID:
		return "InitProducerId"
	case ReqAddPartitions:
		return "AddPartitionsToTxn"
	case ReqAddOffsets:
		return "AddOffsetsToTxn"
	case ReqEndTxn:
		return "EndTxn"
	case ReqTimeout:
		return "transaction.timeout.ms"
	}
	return fmt.Sprintf("Request(%d)", uint8(r))
}

// Txn is one transactional id at its coordinator, as views see it (a copy).
type Txn struct {
	ID         string
	ProducerID int64
	Epoch      int16
	State      State
	// Partitions are the partitions of the open or ending transaction, sorted.
	Partitions []proto.TP
	// Start is when the open transaction began (its first AddPartitionsToTxn).
	Start   sim.Time
	Timeout time.Duration // transaction.timeout.ms
	// Pending is set while a state change is being replicated; Next is the state it goes to.
	Pending bool
	Next    State
	// Unacked lists the partitions whose marker is still outstanding while Prepare*.
	Unacked []proto.TP
}

// txnMeta is a transactional id's committed metadata: what a record holds.
type txnMeta struct {
	id         string
	pid        int64
	epoch      int16
	state      State
	partitions []proto.TP
	start      sim.Time
	timeout    time.Duration
	// lastEpoch is the epoch before a coordinator-made bump (a timeout), which its
	// producer may still name in InitProducerId to recover (KIP-588); else NoProducerEpoch.
	lastEpoch int16
}

func (m txnMeta) clone() txnMeta {
	m.partitions = slices.Clone(m.partitions)
	return m
}

// entry is one transactional id: its committed metadata, the change being replicated and
// the markers being written.
type entry struct {
	txnMeta
	pending *pendingWrite
	// shown is the state views see while pending (PrepareEpochFence for a fence).
	shown   State
	markers *markerRound
}

func (e *entry) view() Txn {
	t := Txn{ID: e.id, ProducerID: e.pid, Epoch: e.epoch, State: e.state, Partitions: slices.Clone(e.partitions),
		Start: e.start, Timeout: e.timeout}
	if e.pending != nil {
		t.Pending, t.Next = true, e.shown
	}
	if e.markers != nil {
		t.Unacked = slices.Clone(e.markers.remaining)
	}
	return t
}

// addPartitions returns the sorted union of tps and add, and which of add were new.
func addPartitions(tps, add []proto.TP) (all, added []proto.TP) {
	all = slices.Clone(tps)
	for _, tp := range add {
		i, found := slices.BinarySearchFunc(all, tp, proto.CompareTP)
		if !found {
			all = slices.Insert(all, i, tp)
			added = append(added, tp)
		}
	}
	slices.SortFunc(added, proto.CompareTP)
	added = slices.Compact(added)
	return all, added
}
