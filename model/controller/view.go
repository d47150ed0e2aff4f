package controller

import (
	"mqsim/model/proto"
	"mqsim/model/raft"
	"mqsim/sim"
)

// Partitions is the controller's committed view of every partition (the single
// controller's state, whose writes are durable before anyone hears of them), for views
// and checkers.
func (c *Controller) Partitions() []proto.PartitionState {
	if c.applied == nil {
		return nil
	}
	var out []proto.PartitionState
	for _, p := range c.applied.Partitions {
		out = append(out, p.Clone())
	}
	return out
}

// Partition is the controller's committed view of one partition, found without listing
// them all. It is read-only: its slices are the controller's own (the invariant checks
// read it after every event, so it copies nothing).
func (c *Controller) Partition(tp proto.TP) (proto.PartitionState, bool) {
	if c.applied == nil {
		return proto.PartitionState{}, false
	}
	i, found := c.applied.search(tp)
	if !found {
		return proto.PartitionState{}, false
	}
	return c.applied.Partitions[i], true
}

// Alive reports whether the controller considers a broker alive (in its working state).
func (c *Controller) Alive(id sim.NodeID) bool {
	if c.st == nil {
		return false
	}
	return c.isAlive(id)
}

// Registered reports whether the committed metadata holds broker id as registered and not
// fenced.
func (c *Controller) Registered(id sim.NodeID) bool {
	i := c.brokerIndex(id)
	return c.applied != nil && i >= 0 && c.applied.Incarnations[i] != 0 && !c.applied.Fenced[i]
}

// Status is a controller at a glance, for `show controllers` and the TUI.
type Status struct {
	Quorum bool // a quorum member (else the single controller)
	Active bool // the active controller: it decides and answers brokers
	// ControllerEpoch is the active controller's epoch (the Raft term it is active in).
	ControllerEpoch int32
	// MetadataOffset is the version of the committed metadata: the last applied Raft
	// index (quorum), the count of the file's writes (single).
	MetadataOffset int64
	// The quorum member's Raft state (zero in single mode).
	Role     raft.Role
	Term     int64
	Leader   sim.NodeID // raft.None when unknown
	Commit   int64
	LastLog  int64
	Snapshot int64
	// Pending counts answers and pushes waiting for the log.
	Pending int
}

// Status returns the controller's status.
func (c *Controller) Status() Status {
	s := Status{Active: c.active, Pending: len(c.queue), Leader: raft.None}
	if c.st != nil {
		s.ControllerEpoch = c.st.ControllerEpoch
	}
	if c.applied != nil {
		s.MetadataOffset = c.applied.Version
	}
	if c.q == nil {
		return s
	}
	rs := c.q.raft.Status()
	s.Quorum, s.Role, s.Term, s.Leader, s.Commit, s.LastLog, s.Snapshot = true, rs.Role, rs.Term, rs.Leader, rs.Commit, rs.Last, rs.Snapshot.Index
	if !c.active {
		s.ControllerEpoch = 0
	}
	return s
}

// MetadataHash is a hash of a quorum member's committed metadata and the log index it
// is at (ok false for the single controller), for the invariant that controllers which
// applied the same entries hold the same metadata.
func (c *Controller) MetadataHash() (index int64, hash uint64, ok bool) {
	if c.q == nil || c.applied == nil {
		return 0, 0, false
	}
	index, hash = c.q.stateHash()
	return index, hash, true
}
