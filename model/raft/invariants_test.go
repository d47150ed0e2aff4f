package raft

import (
	"fmt"
	"hash/fnv"

	"mqsim/sim"
)

// invariants is a sim.Observer that checks Raft's safety properties after every event
// (Raft paper, Figure 3): election safety, log matching, leader completeness and state
// machine safety, plus a commit index that never goes back within an incarnation. It
// keeps the first violation.
type invariants struct {
	c   *cluster
	err error

	leaders map[int64]int // term -> server that led it
	// entries maps (index, term) to the entry's data hash and the term of the entry
	// before it: two logs with equal (index, term) must agree on both, which by induction
	// makes their prefixes identical (log matching).
	entries map[[2]int64]entryFact
	// committed[i] is the first entry seen committed at index i, and the highest term of
	// a node that had it committed then.
	committed []commitFact
	views     []nodeView
	events    uint64
	// What the run exercised.
	snapshots, truncations int
}

type entryFact struct {
	hash     uint64
	prevTerm int64
}

type commitFact struct {
	known  bool
	term   int64
	hash   uint64
	atTerm int64
}

// nodeView is what the checker has verified of one server's current incarnation.
type nodeView struct {
	node        *KVNode
	truncations uint64
	checkedLast int64 // log entries verified up to here
	commit      int64
	applied     int64
	leaderTerm  int64 // the term in which it was last checked as a leader
	snapshot    int64
}

func newInvariants(c *cluster) *invariants {
	return &invariants{c: c, leaders: map[int64]int{}, entries: map[[2]int64]entryFact{}, views: make([]nodeView, len(c.servers))}
}

func entryHash(e Entry) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(e.Type)})
	h.Write(e.Data)
	return h.Sum64()
}

func (v *invariants) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("after event %d at %s: %s", v.events, v.c.w.Now(), fmt.Sprintf(format, args...))
	}
}

// termAt is the term of entry i in r's log, or false when r does not hold it.
func termAt(r *Raft, i int64) (int64, bool) {
	if i == r.log.snap.Index {
		return r.log.snap.Term, true
	}
	e, ok := r.Entry(i)
	return e.Term, ok
}

func (v *invariants) AfterStep(w *sim.World) {
	v.events++
	if v.err != nil {
		return
	}
	for i := range v.c.servers {
		n := v.c.kv(i)
		if n == nil || !n.Raft.started {
			continue
		}
		v.checkNode(i, n)
	}
}

func (v *invariants) checkNode(i int, n *KVNode) {
	r := n.Raft
	st := r.Status()
	view := &v.views[i]
	if view.node != n {
		*view = nodeView{node: n, truncations: st.Truncations, checkedLast: st.Snapshot.Index, commit: st.Commit, applied: st.Applied, snapshot: st.Snapshot.Index}
	}
	if st.Snapshot.Index > view.snapshot {
		view.snapshot = st.Snapshot.Index
		v.snapshots++
	}
	name := v.c.names[i]

	// Election safety: at most one leader per term.
	if st.Role == Leader {
		if other, ok := v.leaders[st.Term]; ok && other != i {
			v.fail("election safety: %s and %s both led term %d", v.c.names[other], name, st.Term)
			return
		}
		v.leaders[st.Term] = i
	}

	// Log matching, incrementally: re-verify from the snapshot after a truncation.
	if st.Truncations != view.truncations {
		v.truncations += int(st.Truncations - view.truncations)
		view.truncations = st.Truncations
		view.checkedLast = st.Snapshot.Index
	}
	view.checkedLast = max(min(view.checkedLast, st.Last), st.Snapshot.Index)
	for idx := view.checkedLast + 1; idx <= st.Last; idx++ {
		e, _ := r.Entry(idx)
		prev, ok := termAt(r, idx-1)
		if !ok {
			v.fail("%s: no term for entry %d before %d", name, idx-1, idx)
			return
		}
		f := entryFact{hash: entryHash(e), prevTerm: prev}
		key := [2]int64{idx, e.Term}
		if old, seen := v.entries[key]; seen && old != f {
			v.fail("log matching: %s has %d/t%d (hash %x, prev t%d), another log had (hash %x, prev t%d)",
				name, idx, e.Term, f.hash, f.prevTerm, old.hash, old.prevTerm)
			return
		} else if !seen {
			v.entries[key] = f
		}
		if e.Term > st.Term {
			v.fail("%s: entry %d has term %d above the node's term %d", name, idx, e.Term, st.Term)
			return
		}
	}
	view.checkedLast = st.Last

	// Commits: never back within an incarnation, and one entry per index.
	if st.Commit < view.commit {
		v.fail("%s: commit index went back from %d to %d", name, view.commit, st.Commit)
		return
	}
	for idx := max(view.commit, st.Snapshot.Index) + 1; idx <= st.Commit; idx++ {
		e, ok := r.Entry(idx)
		if !ok {
			v.fail("%s: committed entry %d is not in its log (%d..%d)", name, idx, st.Snapshot.Index+1, st.Last)
			return
		}
		v.noteCommitted(name, idx, e, st.Term)
		if v.err != nil {
			return
		}
	}
	view.commit = st.Commit

	// State machine safety: what a node applies at an index is what was committed there.
	for idx := max(view.applied, st.Snapshot.Index) + 1; idx <= st.Applied; idx++ {
		e, _ := r.Entry(idx)
		if c := v.committedAt(idx); !c.known || c.term != e.Term || c.hash != entryHash(e) {
			v.fail("state machine safety: %s applied %s at %d, committed there: %+v", name, e, idx, c)
			return
		}
	}
	view.applied = st.Applied
	if st.Applied > st.Commit {
		v.fail("%s: applied %d beyond commit %d", name, st.Applied, st.Commit)
		return
	}

	// Leader completeness: a leader holds every entry committed in an earlier term.
	if st.Role == Leader && view.leaderTerm != st.Term {
		view.leaderTerm = st.Term
		for idx := int64(1); idx < int64(len(v.committed)); idx++ {
			if c := v.committed[idx]; c.known && c.atTerm < st.Term {
				v.leaderHas(i, r, idx, c)
			}
		}
	}
}

func (v *invariants) committedAt(idx int64) commitFact {
	if idx < int64(len(v.committed)) {
		return v.committed[idx]
	}
	return commitFact{}
}

func (v *invariants) noteCommitted(name string, idx int64, e Entry, term int64) {
	f := commitFact{known: true, term: e.Term, hash: entryHash(e), atTerm: term}
	for int64(len(v.committed)) <= idx {
		v.committed = append(v.committed, commitFact{})
	}
	old := v.committed[idx]
	if !old.known {
		v.committed[idx] = f
		// Leaders of later terms that exist now must already hold it.
		for j := range v.c.servers {
			if n := v.c.kv(j); n != nil && n.Raft.started && n.Raft.IsLeader() && n.Raft.Term() > term {
				v.leaderHas(j, n.Raft, idx, f)
			}
		}
		return
	}
	if old.term != f.term || old.hash != f.hash {
		v.fail("state machine safety: %s committed %s at %d, where t%d (hash %x) was committed before", name, e, idx, old.term, old.hash)
	}
}

func (v *invariants) leaderHas(j int, r *Raft, idx int64, c commitFact) {
	if idx <= r.log.snap.Index {
		return // inside its snapshot, which holds only committed entries
	}
	e, ok := r.Entry(idx)
	if !ok || e.Term != c.term || entryHash(e) != c.hash {
		v.fail("leader completeness: %s leads term %d without the entry t%d committed at %d (by term %d); it has %v (present %t)",
			v.c.names[j], r.Term(), c.term, idx, c.atTerm, e, ok)
	}
}
