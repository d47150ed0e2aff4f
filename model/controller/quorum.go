package controller

import (
	"encoding/json"
	"fmt"
	"hash/fnv"

	"mqsim/model/proto"
	"mqsim/model/raft"
	"mqsim/sim"
)

// quorum is a quorum controller's persistence: the metadata log is a Raft log
// (__cluster_metadata, as KRaft names it), replicated to every controller. The active
// controller proposes each batch of records; every controller, the active one included,
// applies a batch to its committed state (applied) when Raft commits it. The active
// controller's working state (Controller.st) already holds its own proposals: what it
// decides next builds on them.
type quorum struct {
	c    *Controller
	raft *raft.Raft

	// term is the Raft term this controller is active in; 0 while it is not.
	term int64
	// proposed is the index of the last batch this controller proposed while active.
	proposed int64
	// lastTerm is the term of the last applied entry.
	lastTerm int64
	every    int64 // snapshot every this many applied entries

	hashAt int64 // the applied index hash was computed at (-1: never)
	hash   uint64
}

// metadataDir is the Raft group's directory on a controller's disk.
const metadataDir = "__cluster_metadata-0"

// raftConfig is the controllers' Raft configuration: peers c1..cN, KRaft's election
// timeout, pre-vote and check-quorum (KIP-996's pre-vote; a leader that cannot reach a
// majority resigns, as KRaft's does).
func raftConfig(cfg proto.Config) raft.Config {
	rc := raft.DefaultConfig(Names(cfg.Controllers)...)
	rc.Dir = metadataDir
	rc.ElectionTicks = 20
	rc.Tick = cfg.Quorum.ElectionTimeout / 20
	rc.HeartbeatTicks = 4
	return rc
}

func newQuorum(c *Controller) *quorum {
	q := &quorum{c: c, every: int64(c.cfg.Quorum.SnapshotEvery), hashAt: -1}
	r, err := raft.New(raftConfig(c.cfg), (*stateMachine)(q))
	if err != nil {
		panic(err) // the cluster's configuration was validated
	}
	q.raft = r
	return q
}

// append proposes a batch. The entry's index is the metadata's new version.
func (q *quorum) append(env *sim.Env, st *state, recs []record) bool {
	if len(recs) == 0 {
		return true
	}
	index, _, ok := q.raft.Propose(env, encodeRecords(recs))
	if !ok {
		return false
	}
	q.proposed = index
	st.Version = index
	return true
}

func (q *quorum) end() int64 { return q.proposed }

func (q *quorum) done(*sim.Env) int64 { return q.raft.Applied() }

// stateMachine is the quorum's raft.StateMachine: the controller's committed state.
type stateMachine quorum

// Apply applies a committed batch to the committed state, on every controller.
func (m *stateMachine) Apply(env *sim.Env, e raft.Entry) {
	q := (*quorum)(m)
	c := q.c
	q.lastTerm = e.Term
	c.applied.Version = e.Index
	if e.Type != raft.EntryNormal {
		return
	}
	recs, err := decodeRecords(e.Data)
	if err != nil {
		panic(fmt.Sprintf("controller: metadata entry %d: %v", e.Index, err))
	}
	for _, r := range recs {
		c.applied.apply(r)
	}
	if env.Tracing() {
		sim.Record(env, Applied{Index: e.Index, Term: e.Term, Records: describe(env, recs)})
	}
}

// Restore replaces the committed state with a snapshot's.
func (m *stateMachine) Restore(env *sim.Env, s raft.Snapshot) {
	q := (*quorum)(m)
	var st state
	if err := json.Unmarshal(s.Data, &st); err != nil {
		panic(fmt.Sprintf("controller: snapshot %d: %v", s.Index, err))
	}
	st.grow(len(q.c.brokers) - 1)
	q.c.applied = &st
	q.lastTerm = s.Term
	if q.term == 0 {
		q.c.st = q.c.applied
	}
}

// tend runs after everything Raft handled: it makes this controller active once it leads
// and has applied its whole log (its predecessors' entries and its own term's first),
// resigns when it no longer leads, sends what became committed, and takes snapshots.
func (q *quorum) tend(env *sim.Env) {
	c, r := q.c, q.raft
	if q.term != 0 && (!r.IsLeader() || r.Term() != q.term) {
		c.resign(env, NotLeader)
	}
	if q.term == 0 && r.IsLeader() && r.Applied() == r.LastIndex() && q.lastTerm == r.Term() {
		q.term = r.Term()
		q.proposed = r.Applied()
		c.activate(env, int32(r.Term()), r.Applied())
	}
	c.release(env)
	if !r.SnapshotPending() && r.Applied()-r.SnapshotIndex() >= q.every {
		data, err := json.Marshal(c.applied)
		if err != nil {
			panic(err)
		}
		if err := r.Snapshot(env, r.Applied(), data); err != nil {
			panic(err)
		}
	}
}

// stateHash is a hash of the committed state and the index it is at, for the invariant
// that controllers which applied the same entries hold the same metadata.
func (q *quorum) stateHash() (int64, uint64) {
	at := q.raft.Applied()
	if at != q.hashAt {
		b, err := json.Marshal(q.c.applied)
		if err != nil {
			panic(err)
		}
		h := fnv.New64a()
		h.Write(b)
		q.hashAt, q.hash = at, h.Sum64()
	}
	return q.hashAt, q.hash
}
