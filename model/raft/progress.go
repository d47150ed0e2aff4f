package raft

// progressState is how a leader replicates to one follower (etcd's tracker states).
type progressState uint8

const (
	// probing: the leader does not know where the follower's log matches its own; it
	// sends one append at a time and waits for the answer (or the next heartbeat).
	probing progressState = iota
	// replicating: the logs match up to match; the leader streams appends, up to
	// MaxInflight messages ahead of the acknowledgements.
	replicating
	// snapshotting: the follower needs entries the leader has compacted; a snapshot is
	// on its way.
	snapshotting
)

func (s progressState) String() string {
	switch s {
	case probing:
		return "probe"
	case replicating:
		return "replicate"
	case snapshotting:
		return "snapshot"
	}
	return "?"
}

// progress is the leader's view of one peer.
type progress struct {
	match, next int64
	state       progressState
	probeSent   bool    // probing: an append is out, wait for its answer or a heartbeat
	inflight    []int64 // replicating: last index of each append in flight, ascending
	pendingSnap int64   // snapshotting: the index of the snapshot sent
	snapTicks   int     // snapshotting: ticks since it was sent
	active      bool    // heard from in this check-quorum period
	readAck     uint64  // highest leadership-check round the peer has answered
}

func (p *progress) becomeProbe() {
	if p.state == snapshotting {
		p.next = max(p.match+1, p.pendingSnap+1)
	} else {
		p.next = p.match + 1
	}
	p.state, p.probeSent, p.inflight, p.pendingSnap, p.snapTicks = probing, false, p.inflight[:0], 0, 0
}

func (p *progress) becomeReplicate() {
	p.state, p.probeSent, p.inflight, p.pendingSnap = replicating, false, p.inflight[:0], 0
	p.next = p.match + 1
}

func (p *progress) becomeSnapshot(index int64) {
	p.state, p.probeSent, p.inflight, p.pendingSnap, p.snapTicks = snapshotting, false, p.inflight[:0], index, 0
}

// maybeUpdate records that the follower's log matches up to n. It reports whether match
// moved.
func (p *progress) maybeUpdate(n int64) bool {
	updated := n > p.match
	if updated {
		p.match = n
		p.probeSent = false
	}
	p.next = max(p.next, n+1)
	return updated
}

// freeInflight forgets the appends an acknowledgement of n covers.
func (p *progress) freeInflight(n int64) {
	i := 0
	for i < len(p.inflight) && p.inflight[i] <= n {
		i++
	}
	p.inflight = append(p.inflight[:0], p.inflight[i:]...)
}

// maybeDecrTo moves next back after a rejection of the append whose previous index was
// rejected; hint is where the follower suggests probing. It reports false for a stale
// rejection (etcd's Progress.MaybeDecrTo).
func (p *progress) maybeDecrTo(rejected, hint int64) bool {
	if p.state == replicating {
		if rejected <= p.match {
			return false
		}
		p.next = p.match + 1
		return true
	}
	if p.next-1 != rejected {
		return false
	}
	p.next = max(min(rejected, hint+1), p.match+1)
	p.probeSent = false
	return true
}

// paused reports whether the leader should hold further appends.
func (p *progress) paused(maxInflight int) bool {
	switch p.state {
	case probing:
		return p.probeSent
	case replicating:
		return len(p.inflight) >= maxInflight
	}
	return true
}
