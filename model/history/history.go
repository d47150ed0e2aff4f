package history

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// Type says whether an op is an invocation or, for a completion, what the
// client learned about its outcome.
type Type string

// Operation types, as in Jepsen.
const (
	Invoke Type = "invoke" // the client issued the operation
	Ok     Type = "ok"     // it took effect; the value carries the result
	Fail   Type = "fail"   // it certainly did not take effect
	Info   Type = "info"   // unknown: it may take effect, now or later
)

func (t Type) valid() bool { return t == Invoke || t == Ok || t == Fail || t == Info }

// Func names the client function an op called.
type Func string

// Client functions.
const (
	Send      Func = "send"
	Poll      Func = "poll"
	Commit    Func = "commit"
	Assign    Func = "assign"
	Subscribe Func = "subscribe"
	// Txn is one transaction of a transactional producer: its sends, the polls of the
	// consumer that feeds it, and the offsets it commits, all or nothing.
	Txn Func = "txn"
	// Seek moves a consumer's position, or with Reset a group's committed offsets, on
	// purpose: a declared re-read (moved back) or skip (moved forward).
	Seek Func = "seek"
	// Ack is a share consumer's acknowledgement of records it acquired (KIP-932).
	Ack Func = "ack"
)

func (f Func) valid() bool {
	return f == Send || f == Poll || f == Commit || f == Assign || f == Subscribe || f == Txn || f == Seek || f == Ack
}

// NoOffset marks a send whose offset the client did not learn: every send
// that is not ok, and an ok send with acks=0 (Kafka also answers -1 there).
const NoOffset int64 = -1

// TopicPartition names one partition: Jepsen's "key".
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// String renders the partition as Kafka does, "topic-3".
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.Itoa(int(tp.Partition))
}

// Compare orders partitions by topic, then partition number.
func (tp TopicPartition) Compare(o TopicPartition) int {
	if c := cmp.Compare(tp.Topic, o.Topic); c != 0 {
		return c
	}
	return cmp.Compare(tp.Partition, o.Partition)
}

// SendValue is the value of a send: one record for one partition.
type SendValue struct {
	TopicPartition
	Key   string
	Value string
	// Offset is the offset the broker assigned, known on ok completions only;
	// NoOffset everywhere else.
	Offset int64
}

// Record is one record as a consumer saw it.
type Record struct {
	Offset int64
	Value  string
	// DeliveryCount is, for a record a share consumer acquired, the share-partition
	// leader's count of its deliveries, this one included (1 on the first); 0 for a
	// record read by offset.
	DeliveryCount int
}

// PartitionRecords are the records a poll returned for one partition, in the
// order the client received them.
type PartitionRecords struct {
	TopicPartition
	Records []Record
}

// PollValue is the value of a poll. Reads is empty on the invocation.
type PollValue struct {
	Group string
	Reads []PartitionRecords
	// ReadCommitted says the consumer reads with isolation.level=read_committed: it
	// must never see a record of an aborted or still open transaction.
	ReadCommitted bool
	// Share says a share consumer acquired the records (KIP-932): Group is a share
	// group, and each record carries its delivery count.
	Share bool
}

// PartitionOffset is a committed offset: the next offset the group will read.
type PartitionOffset struct {
	TopicPartition
	Offset int64
}

// CommitValue is the value of a commit.
type CommitValue struct {
	Group   string
	Offsets []PartitionOffset
}

// AssignValue is the value of assign and subscribe ops.
type AssignValue struct {
	Group string
	// Topics are the subscribed topics (subscribe only).
	Topics []string
	// Partitions are the partitions the process consumes from now on: the
	// manual assignment, or for a subscribe completion the group's answer
	// (empty when the client did not learn it).
	Partitions []TopicPartition
	// SeekToBeginning (assign only) moves the consumer to the start of every
	// assigned partition.
	SeekToBeginning bool
}

// Covers reports whether, after this assignment, the process may still be
// consuming tp: listed partitions win; otherwise a subscription covers every
// partition of its topics.
func (a *AssignValue) Covers(tp TopicPartition) bool {
	if len(a.Partitions) > 0 {
		for _, p := range a.Partitions {
			if p == tp {
				return true
			}
		}
		return false
	}
	for _, t := range a.Topics {
		if t == tp.Topic {
			return true
		}
	}
	return false
}

// SeekValue is the value of a seek: where a consumer (KafkaConsumer.seek,
// seekToBeginning, seekToEnd, or a seek to offsetsForTimes' answer) or the group tool
// (kafka-consumer-groups --reset-offsets, Reset) moved each partition. An offset is the
// next offset to read, NoOffset on an invocation whose target the client still had to
// look up (earliest, latest, a time); an ok completion knows every offset.
type SeekValue struct {
	Group   string
	Offsets []PartitionOffset
	// Reset: the group tool committed Offsets as the group's offsets, the group having
	// no member; otherwise a consumer of Group (empty if none) moved its own position.
	Reset bool
}

// AckValue is the value of an ack: a share consumer's acknowledgement of records of one
// partition it acquired. An ok completion means the share-partition leader applied and
// persisted them; fail that it refused them (the lock was lost: INVALID_RECORD_STATE),
// info that the client does not know.
type AckValue struct {
	Group string
	TopicPartition
	Acks []RecordAck
}

// RecordAck acknowledges one record: Type is "accept", "release" or "reject"
// (proto.AckType's words).
type RecordAck struct {
	Offset int64
	Type   string
}

// MicroOp is one step inside a transaction: a send or a poll, as the client did it.
// A send carries the offset the broker assigned when the client learned it.
type MicroOp struct {
	F    Func // Send or Poll
	Send *SendValue
	Poll *PollValue
}

// TxnValue is the value of a txn op. The invocation names the transactional.id
// only; the completion lists what the transaction did, in the client's order, and
// the group offsets it committed (sendOffsetsToTransaction), if any. An ok
// completion means the transaction committed, fail that it aborted, info that the
// client does not know.
type TxnValue struct {
	ID      string // transactional.id
	Ops     []MicroOp
	Offsets *CommitValue
}

// Op is one entry of a history: an invocation or a completion. Exactly one of
// Send, Poll, Commit, Assign, Txn and Seek is set, matching F (Assign serves both
// assign and subscribe).
type Op struct {
	Index   int   // position in the history
	Time    int64 // virtual nanoseconds
	Process int
	Type    Type
	F       Func
	// Invoke is, on a completion, the index of the invocation it completes;
	// -1 on an invocation.
	Invoke int
	// Error optionally says why an op failed or is indeterminate.
	Error  string
	Send   *SendValue
	Poll   *PollValue
	Commit *CommitValue
	Assign *AssignValue
	Txn    *TxnValue
	Seek   *SeekValue
	Ack    *AckValue
}

// History is a sequence of ops ordered by index (and so by time).
type History []Op

// ValidationError says which op breaks which rule of a well-formed history.
type ValidationError struct {
	Index  int
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("history: op %d: %s", e.Index, e.Reason)
}

// Validate checks the invariants every checker relies on: indexes are
// positions; time never decreases; every completion completes an earlier,
// still open invocation of the same process and function and repeats its
// value; values fit their function and completion type. It returns the first
// violation as a *ValidationError.
func (h History) Validate() error {
	completed := make([]bool, len(h))
	for i := range h {
		if err := h.validateOp(i, completed); err != nil {
			return &ValidationError{Index: i, Reason: err.Error()}
		}
	}
	return nil
}

func (h History) validateOp(i int, completed []bool) error {
	op := &h[i]
	switch {
	case op.Index != i:
		return fmt.Errorf("index is %d, expected its position %d", op.Index, i)
	case i > 0 && op.Time < h[i-1].Time:
		return fmt.Errorf("time %d is before the previous op's time %d", op.Time, h[i-1].Time)
	case !op.Type.valid():
		return fmt.Errorf("type %q is not invoke, ok, fail or info", op.Type)
	case !op.F.valid():
		return fmt.Errorf("f %q is not send, poll, commit, assign, subscribe, txn, seek or ack", op.F)
	}
	if err := op.checkValueShape(); err != nil {
		return err
	}
	if op.Type == Invoke {
		if op.Invoke != -1 {
			return fmt.Errorf("an invocation has invoke %d, expected -1", op.Invoke)
		}
		return nil
	}
	j := op.Invoke
	switch {
	case j < 0 || j >= i:
		return fmt.Errorf("invoke %d does not name an earlier op", j)
	case h[j].Type != Invoke:
		return fmt.Errorf("invoke %d names a %s completion, not an invocation", j, h[j].Type)
	case completed[j]:
		return fmt.Errorf("invocation %d is completed twice", j)
	case h[j].Process != op.Process:
		return fmt.Errorf("process %d completes invocation %d of process %d", op.Process, j, h[j].Process)
	case h[j].F != op.F:
		return fmt.Errorf("f %s completes invocation %d of f %s", op.F, j, h[j].F)
	}
	completed[j] = true
	return op.checkRepeats(&h[j])
}

// checkValueShape checks that the value fits F and Type on its own.
func (op *Op) checkValueShape() error {
	set := 0
	for _, isSet := range [...]bool{op.Send != nil, op.Poll != nil, op.Commit != nil, op.Assign != nil, op.Txn != nil, op.Seek != nil, op.Ack != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("has %d values set, expected exactly one", set)
	}
	switch op.F {
	case Send:
		if op.Send == nil {
			return fmt.Errorf("f send without a send value")
		}
		if op.Send.Topic == "" || op.Send.Partition < 0 {
			return fmt.Errorf("send to invalid partition %q", op.Send.TopicPartition)
		}
		if op.Send.Offset < NoOffset {
			return fmt.Errorf("send offset %d is negative", op.Send.Offset)
		}
		if op.Send.Offset != NoOffset && op.Type != Ok {
			return fmt.Errorf("a %s send carries offset %d; only ok completions learn an offset", op.Type, op.Send.Offset)
		}
	case Poll:
		if op.Poll == nil {
			return fmt.Errorf("f poll without a poll value")
		}
		if op.Type == Invoke && len(op.Poll.Reads) > 0 {
			return fmt.Errorf("a poll invocation carries reads")
		}
		return checkReads(op.Poll.Reads)
	case Commit:
		if op.Commit == nil {
			return fmt.Errorf("f commit without a commit value")
		}
		for _, o := range op.Commit.Offsets {
			if o.Topic == "" || o.Partition < 0 || o.Offset < 0 {
				return fmt.Errorf("invalid committed offset %d for %q", o.Offset, o.TopicPartition)
			}
		}
	case Assign, Subscribe:
		if op.Assign == nil {
			return fmt.Errorf("f %s without an assign value", op.F)
		}
		if op.F == Assign && len(op.Assign.Topics) > 0 {
			return fmt.Errorf("assign lists topics; only subscribe does")
		}
		if op.F == Subscribe && op.Assign.SeekToBeginning {
			return fmt.Errorf("subscribe sets seek_to_beginning; only assign does")
		}
		if op.F == Subscribe && op.Type == Invoke && len(op.Assign.Partitions) > 0 {
			return fmt.Errorf("a subscribe invocation lists partitions; only its completion may")
		}
	case Txn:
		if op.Txn == nil {
			return fmt.Errorf("f txn without a txn value")
		}
		return op.Txn.checkShape(op.Type)
	case Seek:
		if op.Seek == nil {
			return fmt.Errorf("f seek without a seek value")
		}
		return op.Seek.checkShape(op.Type)
	case Ack:
		if op.Ack == nil {
			return fmt.Errorf("f ack without an ack value")
		}
		if op.Ack.Group == "" || op.Ack.Topic == "" || op.Ack.Partition < 0 || len(op.Ack.Acks) == 0 {
			return fmt.Errorf("an ack names no group, an invalid partition %q, or no records", op.Ack.TopicPartition)
		}
	}
	return nil
}

// checkShape checks a seek value: partitions named once; offsets known on an ok
// completion, NoOffset allowed elsewhere; a reset names its group.
func (v *SeekValue) checkShape(t Type) error {
	if v.Reset && v.Group == "" {
		return fmt.Errorf("a seek with reset names no group; the group tool resets a group's offsets")
	}
	for i, o := range v.Offsets {
		switch {
		case o.Topic == "" || o.Partition < 0:
			return fmt.Errorf("seek of invalid partition %q", o.TopicPartition)
		case o.Offset < NoOffset || t == Ok && o.Offset == NoOffset:
			return fmt.Errorf("seek of %s to offset %d; want an offset >= 0 (or -1, not yet known, except on an ok completion)", o.TopicPartition, o.Offset)
		}
		for _, earlier := range v.Offsets[:i] {
			if earlier.TopicPartition == o.TopicPartition {
				return fmt.Errorf("seek lists partition %s twice", o.TopicPartition)
			}
		}
	}
	return nil
}

// repeats reports whether a seek completion repeats its invocation: the same group,
// reset and partitions in the same order, and every offset the invocation knew.
func (v *SeekValue) repeats(inv *SeekValue) bool {
	if v.Group != inv.Group || v.Reset != inv.Reset || len(v.Offsets) != len(inv.Offsets) {
		return false
	}
	for i, o := range v.Offsets {
		want := inv.Offsets[i]
		if o.TopicPartition != want.TopicPartition || want.Offset != NoOffset && o.Offset != want.Offset {
			return false
		}
	}
	return true
}

// checkShape checks a txn value: the invocation names the transaction only; each
// micro-op is a valid send or poll.
func (v *TxnValue) checkShape(t Type) error {
	if v.ID == "" {
		return fmt.Errorf("txn without a transactional id")
	}
	if t == Invoke && (len(v.Ops) > 0 || v.Offsets != nil) {
		return fmt.Errorf("a txn invocation carries micro-ops or offsets; only its completion may")
	}
	for i, m := range v.Ops {
		inner := Op{Type: Ok, F: m.F, Send: m.Send, Poll: m.Poll}
		if m.F != Send && m.F != Poll {
			return fmt.Errorf("txn micro-op %d is a %q; want send or poll", i, m.F)
		}
		if err := inner.checkValueShape(); err != nil {
			return fmt.Errorf("txn micro-op %d: %v", i, err)
		}
	}
	if v.Offsets != nil {
		inner := Op{Type: Ok, F: Commit, Commit: v.Offsets}
		if err := inner.checkValueShape(); err != nil {
			return fmt.Errorf("txn offsets: %v", err)
		}
	}
	return nil
}

func checkReads(reads []PartitionRecords) error {
	for i, pr := range reads {
		if pr.Topic == "" || pr.Partition < 0 {
			return fmt.Errorf("poll read from invalid partition %q", pr.TopicPartition)
		}
		for _, earlier := range reads[:i] {
			if earlier.TopicPartition == pr.TopicPartition {
				return fmt.Errorf("poll lists partition %s twice", pr.TopicPartition)
			}
		}
		for _, r := range pr.Records {
			if r.Offset < 0 {
				return fmt.Errorf("poll read negative offset %d from %s", r.Offset, pr.TopicPartition)
			}
		}
	}
	return nil
}

// checkRepeats checks that a completion repeats what its invocation asked.
func (op *Op) checkRepeats(inv *Op) error {
	same := true
	switch op.F {
	case Send:
		a, b := *op.Send, *inv.Send
		a.Offset = NoOffset
		same = a == b
	case Poll:
		same = op.Poll.Group == inv.Poll.Group && op.Poll.ReadCommitted == inv.Poll.ReadCommitted && op.Poll.Share == inv.Poll.Share
	case Commit:
		same = op.Commit.Group == inv.Commit.Group && slices.Equal(op.Commit.Offsets, inv.Commit.Offsets)
	case Assign:
		same = op.Assign.Group == inv.Assign.Group && op.Assign.SeekToBeginning == inv.Assign.SeekToBeginning &&
			slices.Equal(op.Assign.Partitions, inv.Assign.Partitions)
	case Subscribe:
		same = op.Assign.Group == inv.Assign.Group && slices.Equal(op.Assign.Topics, inv.Assign.Topics)
	case Txn:
		same = op.Txn.ID == inv.Txn.ID
	case Seek:
		same = op.Seek.repeats(inv.Seek)
	case Ack:
		same = op.Ack.Group == inv.Ack.Group && op.Ack.TopicPartition == inv.Ack.TopicPartition && slices.Equal(op.Ack.Acks, inv.Ack.Acks)
	}
	if !same {
		return fmt.Errorf("completion's %s value differs from its invocation %d", op.F, inv.Index)
	}
	return nil
}
