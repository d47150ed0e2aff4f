package client

import (
	"fmt"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// SeekTarget says where a Seek moves a position.
type SeekTarget uint8

// Seek targets, as KafkaConsumer names them.
const (
	SeekOffset   SeekTarget = iota // seek(tp, offset): Seek.Offset
	SeekEarliest                   // seekToBeginning: the log start
	SeekLatest                     // seekToEnd: the high watermark (the LSO at read_committed)
	// SeekTime is seek(tp, offsetsForTimes(tp: Time)): the first offset whose timestamp is
	// at or after Time. When no record is that recent, offsetsForTimes answers null; the
	// application here then seeks to the end, as the group tool falls back to it.
	SeekTime
)

func (t SeekTarget) String() string {
	switch t {
	case SeekOffset:
		return "offset"
	case SeekEarliest:
		return "earliest"
	case SeekLatest:
		return "latest"
	case SeekTime:
		return "time"
	}
	return fmt.Sprintf("SeekTarget(%d)", uint8(t))
}

// Seek is the scenario's command to a Consumer, manual or a group member: move its
// position in an assigned partition. Like Kafka's, it queues behind a poll in progress;
// a seek to an offset takes effect at once, the others are looked up with ListOffsets at
// the next poll (seekToBeginning and seekToEnd are lazy in Kafka too). It is recorded as
// a history seek op, completed when the offset is known: a declared move.
type Seek struct {
	TP     proto.TP
	To     SeekTarget
	Offset int64    // SeekOffset only
	Time   sim.Time // SeekTime only
}

func (s Seek) String() string {
	switch s.To {
	case SeekOffset:
		return fmt.Sprintf("seek %s to offset %d", s.TP, s.Offset)
	case SeekTime:
		return fmt.Sprintf("seek %s to time %s", s.TP, s.Time)
	}
	return fmt.Sprintf("seek %s to %s", s.TP, s.To)
}

// pendingSeek is a seek whose offset the next poll looks up.
type pendingSeek struct {
	to SeekTarget
	at sim.Time
	h  history.Handle
	// recorded: h is a history invocation (no recorder, nothing recorded).
	recorded bool
}

// seek moves the position of m.TP, or refuses as Kafka's seek throws: the partition is
// not assigned (IllegalStateException), the offset is negative (IllegalArgumentException).
func (c *Consumer) seek(env *sim.Env, m Seek) {
	p := c.pos[m.TP]
	switch {
	case p == nil:
		sim.Record(env, SeekRefused{Seek: m, Why: "no current assignment for partition " + m.TP.String()})
		return
	case m.To == SeekOffset && m.Offset < 0:
		sim.Record(env, SeekRefused{Seek: m, Why: "seek offset must not be a negative number"})
		return
	case m.To > SeekTime:
		sim.Record(env, BadCommand{Cmd: m})
		return
	}
	c.dropPendingSeek(env, p, "superseded by another seek before its offset was looked up")
	target := history.NoOffset
	if m.To == SeekOffset {
		target = m.Offset
	}
	ps := &pendingSeek{to: m.To, at: m.Time}
	if c.rec != nil {
		ps.h, ps.recorded = c.rec.InvokeSeek(c.now(env), c.process, c.group(),
			[]history.PartitionOffset{{TopicPartition: htp(m.TP), Offset: target}}, false), true
	}
	sim.Record(env, Sought{Seek: m, Group: c.group()})
	if m.To == SeekOffset {
		p.offset, p.epoch, p.sought = m.Offset, wal.UndefinedEpoch, ps
		c.seekDone(env, m.TP, p)
		return
	}
	p.offset, p.epoch, p.sought = -1, wal.UndefinedEpoch, ps
}

// seekDone completes the position's seek, now that its offset is known.
func (c *Consumer) seekDone(env *sim.Env, tp proto.TP, p *position) {
	ps := p.sought
	p.sought = nil
	if ps == nil || !ps.recorded {
		return
	}
	c.rec.Ok(c.now(env), ps.h, history.Result{SeekOffsets: []history.PartitionOffset{{TopicPartition: htp(tp), Offset: p.offset}}})
}

// dropPendingSeek ends a seek whose lookup will not happen, as info: the position was
// moved (to be looked up), and then moved again.
func (c *Consumer) dropPendingSeek(env *sim.Env, p *position, why string) {
	if ps := p.sought; ps != nil && ps.recorded {
		c.rec.Info(c.now(env), ps.h, history.Result{Error: why})
	}
	p.sought = nil
}

// listOffsetsFor is the ListOffsets request that finds p's position: a pending seek's
// target, else auto.offset.reset's.
func (c *Consumer) listOffsetsFor(corr int64, tp proto.TP, p *position) proto.ListOffsets {
	req := proto.ListOffsets{CorrelationID: corr, TP: tp, Latest: p.reset == "latest", Isolation: c.cfg.Isolation}
	if ps := p.sought; ps != nil {
		req.Latest = ps.to == SeekLatest
		req.ByTime, req.Time = ps.to == SeekTime, ps.at
	}
	return req
}
