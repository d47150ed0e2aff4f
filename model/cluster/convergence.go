package cluster

import (
	"fmt"
	"math"
	"slices"

	"mqsim/model/broker"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Checks of what the replicas hold when the run is judged, rather than after every event:
// the damage Kafka's historical replication bugs did (diverged logs, records a consumer
// read and the log took back, a transaction no marker will end: hanging.go), and the one
// loss no configuration could have prevented.
const (
	// Diverged: a replica's log differs from its leader's at an offset both of them
	// count as committed (below both high watermarks). Replication must make every
	// replica's committed log a prefix of the leader's; KIP-101's second scenario,
	// KAFKA-6361 and a replica that skipped a truncation leave them different for good.
	Diverged = "diverged"
	// PhantomRead: an ok poll read a record that the partition's log no longer holds at
	// its offset (truncated away, or replaced by another record), though it was served
	// below the high watermark: a consumer acted on a write that the system took back.
	PhantomRead = "phantom-read"
)

// Convergence judges the replicas and the consumers' reads against the logs as they are
// now. Call it when the run is over (the swarm's liveness phase lets the cluster
// converge first); mid-run, a follower between a crash and its truncation is not yet
// judged fairly.
func (c *Cluster) Convergence() []InvariantViolation {
	var found []InvariantViolation
	for _, p := range c.Partitions() {
		tp := p.TP
		leader, lb, ok := c.currentLeader(tp)
		if !ok {
			continue // offline: nothing to compare against
		}
		if v, ok := c.divergedFrom(tp, leader, lb); ok {
			found = append(found, v)
		}
		if v, ok := c.phantomRead(tp, leader, lb); ok {
			found = append(found, v)
		}
	}
	return append(found, c.hangingTransactions()...)
}

// currentLeader is the live broker that leads tp in the highest leader epoch.
func (c *Cluster) currentLeader(tp proto.TP) (broker.Replica, sim.NodeID, bool) {
	var best broker.Replica
	var id sim.NodeID
	found := false
	for _, bid := range c.Brokers {
		b, _ := c.W.Node(bid).(*broker.Broker)
		if b == nil {
			continue
		}
		if r, ok := b.Replica(tp); ok && r.Leader && (!found || r.LeaderEpoch > best.LeaderEpoch) {
			best, id, found = r, bid, true
		}
	}
	return best, id, found
}

// divergedFrom finds the first live replica of tp whose committed records differ from
// the leader's, comparing below the lower of the two high watermarks.
func (c *Cluster) divergedFrom(tp proto.TP, leader broker.Replica, lb sim.NodeID) (InvariantViolation, bool) {
	for _, bid := range c.Brokers {
		b, _ := c.W.Node(bid).(*broker.Broker)
		if b == nil || bid == lb {
			continue
		}
		r, ok := b.Replica(tp)
		if !ok {
			continue
		}
		from := max(r.LogStart, leader.LogStart)
		to := min(r.HighWatermark, leader.HighWatermark, r.LogEndOffset, leader.LogEndOffset)
		var rc, lc logCursor
		for off := from; off < to; off++ {
			mine, ok1, gap1 := rc.at(r.Log, off)
			theirs, ok2, gap2 := lc.at(leader.Log, off)
			if gap1 || gap2 {
				continue // compacted away on one side: each replica compacts its own log
			}
			if ok1 && ok2 && followedValue(&mine) == followedValue(&theirs) && string(mine.Key) == string(theirs.Key) {
				continue
			}
			return InvariantViolation{Anomaly: Diverged, TP: tp, Epoch: leader.LeaderEpoch, Time: c.W.Now(), Step: c.W.Steps(),
				Text: fmt.Sprintf("%s's log of %s differs from leader %s's (epoch %d) at offset %d, below both high watermarks (%d, %d): %s against %s",
					c.W.Name(bid), tp, c.W.Name(lb), leader.LeaderEpoch, off, r.HighWatermark, leader.HighWatermark,
					valueText(mine, ok1), valueText(theirs, ok2))}, true
		}
	}
	return InvariantViolation{}, false
}

// committedRead is a record an ok poll read below the highest HW seen by then.
type committedRead struct {
	rec     history.Record
	op      int
	process int
	time    sim.Time
}

// phantomRead finds the first record an ok poll read from tp below the high watermark
// that the leader's log no longer holds at that offset. (A read above the HW is
// read-above-hw's finding.) Its step is the poll's, placed by its time.
func (c *Cluster) phantomRead(tp proto.TP, leader broker.Replica, lb sim.NodeID) (InvariantViolation, bool) {
	if c.inv == nil {
		return InvariantViolation{}, false
	}
	p := c.inv.watchOf(tp)
	if p == nil {
		return InvariantViolation{}, false
	}
	var lc logCursor // reads come mostly in offset order: the cursor reads each batch once
	for _, r := range p.committedReads {
		if r.rec.Offset < leader.LogStart {
			continue // deleted by retention, not taken back
		}
		now, ok, gap := lc.at(leader.Log, r.rec.Offset)
		if gap || (ok && followedValue(&now) == r.rec.Value) {
			continue // compacted away is not taken back
		}
		return InvariantViolation{Anomaly: PhantomRead, TP: tp, Epoch: leader.LeaderEpoch, Time: r.time,
			Text: fmt.Sprintf("poll (op %d) by process %d read %q at offset %d below the HW; leader %s (epoch %d) now holds %s there",
				r.op, r.process, r.rec.Value, r.rec.Offset, c.W.Name(lb), leader.LeaderEpoch, valueText(now, ok))}, true
	}
	return InvariantViolation{}, false
}

// logCursor reads a log's records one offset after another, keeping the batches of its
// last read, so that a walk over a log decodes each batch once, not once per record.
type logCursor struct{ batches []wal.Batch }

// at is the record at offset (ok), or a gap the cleaner left (gap), or neither.
func (c *logCursor) at(l *wal.Log, offset int64) (rec wal.Record, ok, gap bool) {
	if offset < l.LogStartOffset() || offset >= l.LogEndOffset() {
		return wal.Record{}, false, false
	}
	for range 2 {
		for _, b := range c.batches {
			if b.BaseOffset <= offset && offset < b.NextOffset() {
				for i := range b.Records {
					if b.OffsetOf(i) == offset {
						return b.Records[i], true, false
					}
				}
				return wal.Record{}, false, b.Compacted()
			}
		}
		// Not in what was read: read on from offset, a few batches at a time (Read
		// returns at least the one that holds it; reading to the log's end for every
		// offset made a walk quadratic).
		var err error
		if c.batches, err = l.Read(offset, 64<<10); err != nil {
			return wal.Record{}, false, false
		}
	}
	return wal.Record{}, false, false
}

// followedValue is the value the history follows a record by: its value, or a
// tombstone's name.
func followedValue(r *wal.Record) string {
	if label, ok := proto.TombstoneLabel(r); ok {
		return label
	}
	return string(r.Value)
}

func valueText(r wal.Record, ok bool) string {
	if !ok {
		return "nothing"
	}
	return fmt.Sprintf("%q", followedValue(&r))
}

// AllReplicasDown lists, per partition, the first step at which every one of its
// replicas was down at once. Whatever only their page caches held is then gone from
// every copy: a loss Kafka's contract (N-1 failures tolerated) never promised to
// prevent, which the verdict names as such rather than as the system's fault.
func (c *Cluster) AllReplicasDown() []ReplicasDown {
	if c.inv == nil {
		return nil
	}
	return slices.Clone(c.inv.allDown)
}

// ReplicasDown is a moment at which every replica of a partition was down.
type ReplicasDown struct {
	TP   proto.TP
	Time sim.Time
	Step uint64
}

// downSpan is the observer's record of one broker's latest time down: the steps at which
// it was first seen down and first seen up again (to is math.MaxUint64 while it is down).
// A broker that crashed and restarted between two steps is down for that one step.
type downSpan struct {
	node     *broker.Broker // the incarnation last seen; nil while down
	seen     bool           // it has been seen up at least once
	crashed  bool           // from and to hold a span
	from, to uint64
}

// noteAllDown follows each broker's crashes and restarts and records the partitions
// whose replicas' latest times down overlap: every replica was down at once. A replica
// that is back up but not yet back in the partition's ISR still counts as down: what it
// held before its crash is gone, and it has not caught up, so when the last holder of a
// record crashes then, every copy is lost as surely as if all were down together.
func (inv *Invariants) noteAllDown(w *sim.World) {
	c := inv.c
	if len(inv.down) < len(c.Brokers) {
		inv.down = append(inv.down, make([]downSpan, len(c.Brokers)-len(inv.down))...)
	}
	changed := false
	for bi, id := range c.Brokers {
		b, _ := w.Node(id).(*broker.Broker)
		s := &inv.down[bi]
		if b == s.node {
			continue
		}
		switch {
		case !s.seen:
			s.seen = b != nil // it starts
		case b == nil:
			s.crashed, s.from, s.to = true, w.Steps(), math.MaxUint64
		case s.node == nil:
			s.to = w.Steps() // back after being seen down
		default:
			s.crashed, s.from, s.to = true, w.Steps(), w.Steps() // crashed and back between two steps
		}
		s.node = b
		changed = true
	}
	if !changed {
		return
	}
	states := c.Partitions()
	for i := range inv.parts {
		p := &inv.parts[i]
		if p.replicas == nil || p.allDown {
			continue
		}
		var isr []sim.NodeID
		if j, ok := slices.BinarySearchFunc(states, p.tp, func(s proto.PartitionState, tp proto.TP) int { return proto.CompareTP(s.TP, tp) }); ok {
			isr = states[j].ISR // the controller lists partitions sorted by TP
		}
		lo, hi, all := uint64(0), uint64(math.MaxUint64), true
		for _, id := range p.replicas {
			bi := slices.Index(c.Brokers, id)
			if bi < 0 || !inv.down[bi].crashed {
				all = false
				break
			}
			to := inv.down[bi].to
			if to != math.MaxUint64 && !slices.Contains(isr, id) {
				// Back up but not back in the ISR: it has not caught up since its crash,
				// so it holds no copy of what the others may still lose. (Were it to
				// rejoin and fall out again in between, this counts it down throughout:
				// the excuse is only ever used for a loss the flush policy allows.)
				to = w.Steps()
			}
			lo, hi = max(lo, inv.down[bi].from), min(hi, to)
		}
		if all && lo <= hi {
			p.allDown = true
			inv.allDown = append(inv.allDown, ReplicasDown{TP: p.tp, Time: w.Now(), Step: lo})
		}
	}
}
