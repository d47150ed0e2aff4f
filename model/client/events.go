package client

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The events producers and consumers put in the trace. Node names are names (not ids),
// so that views can show them as they are.

// --- both clients ---

// NoBroker is a bootstrap broker name that names no node.
type NoBroker struct{ Name string }

// NoController is a controller name that names no node.
type NoController struct{ Name string }

// MetadataTimeout is a metadata request that got no answer.
type MetadataTimeout struct{ From string }

// MetadataLearned is newer cluster metadata (leaders, partitions) from a broker.
type MetadataLearned struct {
	Version int64
	From    string
}

// BadCommand is a scenario command the client cannot carry out as given.
type BadCommand struct{ Cmd fmt.Stringer }

// --- producer ---

// Sending is a send taken by the producer; Waiting is one that waits for the topic's
// metadata to choose its partition (TP.Partition is then meaningless).
type Sending struct {
	Key, Value string
	TP         proto.TP
	Waiting    bool
}

// NoMetadata is a send dropped because the topic's metadata never came.
type NoMetadata struct {
	Key, Value, Topic string
	Within            time.Duration
}

// NoSuchPartition is a send to a partition the topic does not have.
type NoSuchPartition struct {
	TP         proto.TP
	Partitions int
}

// BatchSent is a batch sent to the partition's leader; Seq is its base sequence when the
// producer is idempotent.
type BatchSent struct {
	TP         proto.TP
	Records    int
	Idempotent bool
	Seq        int32
	Attempt    int
	To         string
	// Bytes is the produce request's size on the wire (compressed when Codec is not
	// none), and Raw its records uncompressed, for throughput views; not part of the
	// event's text. Both are 0 when the trace is off.
	Bytes, Raw int
	Codec      string
}

// RequestTimeout is a produce request that got no answer within request.timeout.ms.
type RequestTimeout struct {
	TP    proto.TP
	To    string
	After time.Duration
}

// PIDTimeout is an InitProducerId that got no answer.
type PIDTimeout struct{ From string }

// LateAnswer is a produce answer that came after the producer gave up on its request, or
// for a batch already completed.
type LateAnswer struct {
	TP        proto.TP
	Err       proto.Error
	Completed bool // the request was in flight, its batch already done
}

// InLog is a batch refused OUT_OF_ORDER_SEQUENCE although a later sequence is
// acknowledged: it is in the log, only its answer was lost.
type InLog struct {
	TP         proto.TP
	Seq, Acked int32
	Err        proto.Error
}

// Retrying is a batch that failed and will be sent again after retry.backoff.ms.
type Retrying struct {
	TP      proto.TP
	Records int
	Seq     int32 // wal.NoSequence when the batch has none
	Why     string
	Backoff time.Duration
}

// Disconnected is the producer giving up on a broker: its requests in flight are abandoned.
type Disconnected struct {
	From      string
	Abandoned int
}

// Acked is a batch acknowledged: at Base (one or more records), or at an unknown offset
// (Base < 0: acks=0, or a batch known to be in the log).
type Acked struct {
	TP      proto.TP
	Base    int64
	Records int
}

// BatchEnded is a batch completed without success: failed, or unknown when an attempt
// may have been appended.
type BatchEnded struct {
	TP      proto.TP
	Records int
	Why     string
	Unknown bool
}

// PIDReset is an idempotent producer starting an epoch bump because a batch with a
// sequence ended without success (its gap would be refused forever).
type PIDReset struct {
	PID      int64
	TP       proto.TP
	Seq      int32
	InFlight int // requests that must end first
}

// NotController is an InitProducerId answered by a controller that is not the active one.
type NotController struct{ Asked, Next string }

// DiscoverRetry is an InitProducerId that failed; the producer asks Next after a backoff.
type DiscoverRetry struct {
	Asked string
	Err   proto.Error
	Next  string
	After time.Duration
}

// PIDAssigned is the producer id and epoch the producer sends with from now on: granted by
// InitProducerId, or, Bumped, the same id with the next epoch (KIP-360).
type PIDAssigned struct {
	PID    int64
	Epoch  int16
	Bumped bool
}

// Scheduled is a delayed send the leader accepted: its scheduled entry is at Offset
// (Offset < 0: unknown, acks=0).
type Scheduled struct {
	TP     proto.TP
	Value  string
	Offset int64
	Delay  time.Duration
}

// CancelAsked is a cancellation of a delayed message sent to the partition's leader.
type CancelAsked struct {
	TP      proto.TP
	Offset  int64
	Leader  string
	Attempt int
}

// CancelTimeout is a cancellation that got no answer.
type CancelTimeout struct {
	TP     proto.TP
	Offset int64
}

// CancelResult is what became of a cancellation: "cancelled", or why not.
type CancelResult struct {
	TP      proto.TP
	Offset  int64
	Outcome string
}

// --- consumer ---

// Span is the offsets First..Last of a partition, read by one poll.
type Span struct {
	TP          proto.TP
	First, Last int64
}

func (s Span) String() string { return fmt.Sprintf("%s@%d..%d", s.TP, s.First, s.Last) }

// spansOf lists the offsets a poll read, partition by partition.
func spansOf(reads []history.PartitionRecords) []Span {
	spans := make([]Span, len(reads))
	for i, pr := range reads {
		spans[i] = Span{TP: proto.TP{Topic: pr.Topic, Partition: pr.Partition}, First: pr.Records[0].Offset, Last: pr.Records[len(pr.Records)-1].Offset}
	}
	return spans
}

func spansText(spans []Span) string {
	s := make([]string, len(spans))
	for i, x := range spans {
		s[i] = x.String()
	}
	return strings.Join(s, " ")
}

// FetchTimeout is a fetch or list-offsets request that got no answer.
type FetchTimeout struct {
	TP proto.TP
	To string
}

// AssignRefused is an assign() of a consumer that is subscribed to a group.
type AssignRefused struct{ Group string }

// Assigned is a manual assign(): the partitions and where they start.
type Assigned struct {
	Partitions    []proto.TP
	FromBeginning bool
	Reset         string
}

// PositionFound is a position found by ListOffsets as auto.offset.reset, or a pending
// seek, says. Reset is the policy, or "seek to earliest|latest|time"; At is a time
// seek's target. A time lookup that found nothing has Reset "time" and Offset -1: the
// consumer then looks up the end.
type PositionFound struct {
	TP     proto.TP
	Offset int64
	Reset  string
	At     sim.Time
}

// Sought is a consumer's seek (KafkaConsumer.seek, seekToBeginning, seekToEnd, or a seek
// to offsetsForTimes' answer): a declared move of its position. Group is its group, if
// any; a target other than an offset is looked up at the next poll.
type Sought struct {
	Seek  Seek
	Group string
}

// OffsetsReset is the group tool (kafka-consumer-groups --reset-offsets) committing
// new offsets for an empty group: a declared re-read or skip for the group. Was holds
// each partition's committed offset before (-1: none).
type OffsetsReset struct {
	Group   string
	Offsets []proto.PartitionOffset
	Was     []int64
}

// ResetRefused is the group tool refusing to reset the offsets of a group that is not
// empty: its members would go on from their own positions and overwrite the reset.
type ResetRefused struct {
	Group string
	State string
}

// SeekRefused is a seek the consumer refused, as Kafka's seek throws.
type SeekRefused struct {
	Seek Seek
	Why  string
}

// OutOfRange is a fetch position the log no longer (or not yet) has; Reset is
// auto.offset.reset ("none": the poll fails).
type OutOfRange struct {
	TP     proto.TP
	Offset int64
	Reset  string
}

// TruncationDetected is the log a consumer read cut back below its position (KIP-320):
// the leader's Epoch ends at EndOffset, below Position. Resumed says the consumer goes on
// from EndOffset (otherwise auto.offset.reset is none and the poll fails).
type TruncationDetected struct {
	TP                  proto.TP
	Epoch               int32
	EndOffset, Position int64
	Resumed             bool
}

// PollOutcome is how a poll ended.
type PollOutcome uint8

const (
	// PollOK: the poll returned its records.
	PollOK PollOutcome = iota
	// PollInfo: a fetch failed or went unanswered; the poll returned what it had.
	PollInfo
	// PollFail: the poll failed with an error the application sees.
	PollFail
)

// Polled is a poll's end: its outcome, the records it returned, the errors of partitions.
type Polled struct {
	Outcome PollOutcome
	Fail    string // PollFail: why
	Records int
	Spans   []Span
	Errs    []string
}

// --- consumer patterns (tags, retries, dead letters) ---

// TagFilter is a consumer's tag filter set, or removed (no Tags).
type TagFilter struct {
	Tags []string
	At   string // where the filter runs: proto.FilterAtBroker or at the client
}

// RetryWait is a partition paused on a record of a retry topic that is not due yet.
type RetryWait struct {
	TP     proto.TP
	Offset int64
	Value  string
	Due    sim.Time
}

// Processed is a record that the application processed after failing before.
type Processed struct {
	TP      proto.TP
	Offset  int64
	Value   string
	Attempt int
}

// FailAction is what a consumer does with a record whose processing failed.
type FailAction uint8

const (
	// RetryInPlace: blocking retry, the partition waits.
	RetryInPlace FailAction = iota
	// DropRecord: attempts exhausted and no dead-letter topic.
	DropRecord
	// SendToRetryTopic: non-blocking retry through a retry topic.
	SendToRetryTopic
	// SendToDeadLetter: attempts exhausted, the record goes to the dead-letter topic.
	SendToDeadLetter
)

// ProcessFailed is a record whose processing failed, and what the consumer does about it.
type ProcessFailed struct {
	TP      proto.TP
	Offset  int64
	Value   string
	Attempt int
	Action  FailAction
	Wait    time.Duration // RetryInPlace: the backoff; SendToRetryTopic: the delay
	Topic   string        // the retry or dead-letter topic
}

// RepublishLost is a failed record that could not be sent to its retry or dead-letter topic.
type RepublishLost struct {
	TP     proto.TP
	Offset int64
	Value  string
	Topic  string
	Why    string
}

// Republished is a failed record written to a retry topic (due at Due) or, DeadLetter,
// to the dead-letter topic.
type Republished struct {
	From       proto.TP
	Offset     int64
	Value      string
	To         proto.TP
	At         int64
	DeadLetter bool
	Due        sim.Time
}

// RepublishTimeout is a republish that got no answer.
type RepublishTimeout struct {
	Value string
	To    proto.TP
}

// --- consumer-group member ---

// SubscribeFailed is a subscription naming an assignor that does not exist.
type SubscribeFailed struct{ Err error }

// Subscribed is a consumer subscribing to a group.
type Subscribed struct {
	Group      string
	Topics     []string
	InstanceID string
	Assignor   string
	Protocol   string
	Commit     proto.CommitMode
}

// Left is a member leaving its group: with LeaveGroup, or silently (a static member).
type Left struct {
	Group, Member, Why string
	Static             bool
}

// PartitionsLost is a member that learnt it is no longer one: it drops its partitions
// without committing (someone else may own them).
type PartitionsLost struct {
	Group, Why string
	Partitions []proto.TP
}

// CoordinatorLost is a member forgetting its coordinator (an error, no answer).
type CoordinatorLost struct {
	Group, Coordinator, Why string
}

// CoordinatorFound is FindCoordinator's answer.
type CoordinatorFound struct{ Group, Coordinator string }

// JoinError is a join refused because the member or generation is unknown: the member
// rejoins as a new one.
type JoinError struct {
	Group string
	Err   proto.Error
}

// CannotJoin is a join the coordinator refuses for good (assignor, session timeout).
type CannotJoin struct {
	Group string
	Err   proto.Error
}

// EpochAssigned is a consumer-protocol member's heartbeat answered with a new member
// epoch or an assignment that differs from what it owns (KIP-848).
type EpochAssigned struct {
	Group, Member string
	Epoch         int32
	Assignment    []proto.TP
	Share         bool // a share-group member (not shown in the text)
}

func (EpochAssigned) Kind() string { return "member-epoch" }
func (e EpochAssigned) Detail() string {
	return fmt.Sprintf("%s: %s at epoch %d, assignment %s", e.Group, e.Member, e.Epoch, proto.TPList(e.Assignment))
}

// Joined is a member's JoinGroup answered: its id, generation and leader.
type Joined struct {
	Group, Member string
	Generation    int32
	Leader        string
}

// LeaderAssigned is the group leader's assignment of a generation; Held are partitions a
// cooperative leader holds back until their owners revoke them.
type LeaderAssigned struct {
	Group, Leader, Assignor string
	Generation              int32
	Assignment              []proto.MemberAssignment
	Held                    []proto.TP
	NoRevokeFirst           bool // the planted bug: a cooperative leader hands moving partitions over at once
}

// PartitionsAssigned is the partitions a member consumes from now on, and why.
type PartitionsAssigned struct {
	Group      string
	Partitions []proto.TP
	Why        string
}

// StartOffset is where a member starts in a partition: the group's committed offset, or
// none (Offset < 0) and auto.offset.reset decides.
type StartOffset struct {
	TP     proto.TP
	Offset int64
	Reset  string
}

// CommittedOffsets is the committed offsets a member fetched for its new partitions.
type CommittedOffsets struct {
	Group   string
	Offsets []StartOffset
}

// MustRejoin is a heartbeat answered REBALANCE_IN_PROGRESS: the member must rejoin.
type MustRejoin struct {
	Group, Member string
	Generation    int32
}

// MetadataChangedRejoin is a classic group's leader that found a subscribed topic's
// partition count changed since it assigned: it rejoins, so the group rebalances.
type MetadataChangedRejoin struct {
	Group, Member string
	Topic         string
	Before, After int
}

// HeartbeatFenced is a heartbeat refused: the member or its generation is no longer known.
type HeartbeatFenced struct {
	Group, Member string
	Generation    int32
	Err           proto.Error
}

// Fenced is a member stopping for good (another instance has its group.instance.id, or
// the coordinator refuses its configuration).
type Fenced struct {
	Group string
	Err   proto.Error
}

// MaxPollExceeded is a member whose application spent more than max.poll.interval.ms on
// one poll: it leaves the group (KIP-62).
type MaxPollExceeded struct {
	Group, Member string
	Interval      time.Duration
}

// Processing is a poll's records handed to a group member's application.
type Processing struct {
	Group   string
	Records int
	Spans   []Span
	Time    time.Duration // of processing, in all
}

// CommitSent is a member's offset commit on its way (Why: when or why it commits).
type CommitSent struct {
	Group, Member string
	Generation    int32
	Offsets       []proto.PartitionOffset
	Why           string
}

// CommitFailed is a commit the coordinator refused (CommitFailedException).
type CommitFailed struct {
	Group      string
	Offsets    []proto.PartitionOffset
	Member     string
	Generation int32
	Err        proto.Error
}

// NotMember is a Commit command to a consumer that is not a group member.
type NotMember struct{}

func (NoBroker) Kind() string            { return "error" }
func (e NoBroker) Detail() string        { return fmt.Sprintf("no broker %q", e.Name) }
func (NoController) Kind() string        { return "error" }
func (e NoController) Detail() string    { return fmt.Sprintf("no controller %q", e.Name) }
func (MetadataTimeout) Kind() string     { return "timeout" }
func (e MetadataTimeout) Detail() string { return "metadata from " + e.From }
func (MetadataLearned) Kind() string     { return "metadata" }
func (e MetadataLearned) Detail() string { return fmt.Sprintf("v%d from %s", e.Version, e.From) }
func (BadCommand) Kind() string          { return "error" }
func (e BadCommand) Detail() string      { return fmt.Sprintf("bad command: %s", e.Cmd) }
func (Sending) Kind() string             { return "send" }
func (e Sending) Detail() string {
	if e.Waiting {
		return fmt.Sprintf("%s to %s: waiting for metadata", kv(e.Key, e.Value), e.TP.Topic)
	}
	return fmt.Sprintf("%s to %s", kv(e.Key, e.Value), e.TP)
}
func (NoMetadata) Kind() string { return "fail" }
func (e NoMetadata) Detail() string {
	return fmt.Sprintf("%s to %s: no metadata for the topic within %s (not recorded: no partition)", kv(e.Key, e.Value), e.Topic, e.Within)
}
func (NoSuchPartition) Kind() string { return "fail" }
func (e NoSuchPartition) Detail() string {
	return fmt.Sprintf("%s: topic has %d partitions", e.TP, e.Partitions)
}
func (BatchSent) Kind() string { return "batch" }
func (e BatchSent) Detail() string {
	seq := ""
	if e.Idempotent {
		seq = fmt.Sprintf(" seq=%d", e.Seq)
	}
	return fmt.Sprintf("%s %d records%s attempt %d to %s", e.TP, e.Records, seq, e.Attempt, e.To)
}
func (RequestTimeout) Kind() string { return "timeout" }
func (e RequestTimeout) Detail() string {
	return fmt.Sprintf("%s request to %s after %s", e.TP, e.To, e.After)
}
func (PIDTimeout) Kind() string     { return "timeout" }
func (e PIDTimeout) Detail() string { return "InitProducerId from " + e.From }
func (LateAnswer) Kind() string     { return "late" }
func (e LateAnswer) Detail() string {
	if e.Completed {
		return fmt.Sprintf("%s answer %s for a batch already completed", e.TP, e.Err)
	}
	return fmt.Sprintf("%s answer %s ignored: no such request in flight (abandoned or duplicate)", e.TP, e.Err)
}
func (InLog) Kind() string { return "in-log" }
func (e InLog) Detail() string {
	return fmt.Sprintf("%s seq=%d: %s, yet seq %d is acknowledged: the batch is in the log", e.TP, e.Seq, e.Err, e.Acked)
}
func (Retrying) Kind() string { return "retry" }
func (e Retrying) Detail() string {
	seq := ""
	if e.Seq != wal.NoSequence {
		seq = fmt.Sprintf(" seq=%d", e.Seq)
	}
	return fmt.Sprintf("%s %d records%s: %s; again in %s", e.TP, e.Records, seq, e.Why, e.Backoff)
}
func (Disconnected) Kind() string { return "disconnect" }
func (e Disconnected) Detail() string {
	return fmt.Sprintf("%s: %d requests abandoned", e.From, e.Abandoned)
}
func (Acked) Kind() string { return "ack" }
func (e Acked) Detail() string {
	switch {
	case e.Base >= 0 && e.Records == 1:
		return fmt.Sprintf("%s offset %d", e.TP, e.Base)
	case e.Base >= 0:
		return fmt.Sprintf("%s offsets %d..%d", e.TP, e.Base, e.Base+int64(e.Records)-1)
	}
	return fmt.Sprintf("%s %d records, offset unknown", e.TP, e.Records)
}
func (e BatchEnded) Kind() string {
	if e.Unknown {
		return "unknown"
	}
	return "fail"
}
func (e BatchEnded) Detail() string { return fmt.Sprintf("%s %d records: %s", e.TP, e.Records, e.Why) }
func (PIDReset) Kind() string       { return "reset" }
func (e PIDReset) Detail() string {
	return fmt.Sprintf("producer id %d: %s seq=%d ended without success; epoch bump after %d requests end", e.PID, e.TP, e.Seq, e.InFlight)
}
func (NotController) Kind() string { return "discover" }
func (e NotController) Detail() string {
	return fmt.Sprintf("%s is not the active controller; asking %s", e.Asked, e.Next)
}
func (DiscoverRetry) Kind() string { return "discover" }
func (e DiscoverRetry) Detail() string {
	return fmt.Sprintf("%s: %s; asking %s after %s", e.Asked, e.Err, e.Next, e.After)
}
func (PIDAssigned) Kind() string { return "pid" }
func (e PIDAssigned) Detail() string {
	if e.Bumped {
		return fmt.Sprintf("producer id %d epoch %d (epoch bumped; sequences from 0)", e.PID, e.Epoch)
	}
	return fmt.Sprintf("producer id %d epoch %d", e.PID, e.Epoch)
}
func (Scheduled) Kind() string { return "scheduled" }
func (e Scheduled) Detail() string {
	if e.Offset < 0 {
		return fmt.Sprintf("%s %s: scheduled (id unknown: acks=0)", e.TP, e.Value)
	}
	return fmt.Sprintf("%s %s: scheduled as %s@%d: the leader appends it %s after it stored it", e.TP, e.Value, e.TP, e.Offset, e.Delay)
}
func (CancelAsked) Kind() string { return "cancel" }
func (e CancelAsked) Detail() string {
	return fmt.Sprintf("%s@%d: asks %s to cancel the delayed message (attempt %d)", e.TP, e.Offset, e.Leader, e.Attempt)
}
func (CancelTimeout) Kind() string { return "timeout" }
func (e CancelTimeout) Detail() string {
	return fmt.Sprintf("%s@%d: cancellation got no answer", e.TP, e.Offset)
}
func (CancelResult) Kind() string     { return "cancel-result" }
func (e CancelResult) Detail() string { return fmt.Sprintf("%s@%d: %s", e.TP, e.Offset, e.Outcome) }
func (FetchTimeout) Kind() string     { return "timeout" }
func (e FetchTimeout) Detail() string { return fmt.Sprintf("%s request to %s", e.TP, e.To) }
func (AssignRefused) Kind() string    { return "error" }
func (e AssignRefused) Detail() string {
	return fmt.Sprintf("assign: the consumer is subscribed to %s (IllegalStateException)", e.Group)
}
func (Assigned) Kind() string { return "assign" }
func (e Assigned) Detail() string {
	return fmt.Sprintf("%s (reset %s)", Assign{Partitions: e.Partitions, FromBeginning: e.FromBeginning}, e.Reset)
}
func (PositionFound) Kind() string { return "position" }
func (e PositionFound) Detail() string {
	switch {
	case e.Reset == "time":
		return fmt.Sprintf("%s: no record at or after %s, look up the end", e.TP, e.At)
	case e.Reset == "seek to time":
		return fmt.Sprintf("%s at %d (first record at or after %s)", e.TP, e.Offset, e.At)
	}
	return fmt.Sprintf("%s at %d (%s)", e.TP, e.Offset, e.Reset)
}
func (Sought) Kind() string { return "seek" }
func (e Sought) Detail() string {
	s := e.Seek.String()
	if e.Seek.To != SeekOffset {
		s += " (looked up at the next poll)"
	}
	if e.Group != "" {
		s += " in group " + e.Group
	}
	return s
}
func (OffsetsReset) Kind() string { return "offsets-reset" }
func (e OffsetsReset) Detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "group %s:", e.Group)
	for i, o := range e.Offsets {
		was := "none"
		if i < len(e.Was) && e.Was[i] >= 0 {
			was = strconv.FormatInt(e.Was[i], 10)
		}
		fmt.Fprintf(&b, " %s %s->%d", o.TP, was, o.Offset)
	}
	return b.String()
}
func (ResetRefused) Kind() string { return "reset-refused" }
func (e ResetRefused) Detail() string {
	return fmt.Sprintf("group %s is %s, not empty", e.Group, e.State)
}
func (SeekRefused) Kind() string     { return "seek-refused" }
func (e SeekRefused) Detail() string { return fmt.Sprintf("%s: %s", e.Seek, e.Why) }
func (OutOfRange) Kind() string      { return "reset" }
func (e OutOfRange) Detail() string {
	if e.Reset == "none" {
		return fmt.Sprintf("%s offset %d out of range: no reset policy", e.TP, e.Offset)
	}
	return fmt.Sprintf("%s offset %d out of range: reset to %s", e.TP, e.Offset, e.Reset)
}
func (TruncationDetected) Kind() string { return "truncation" }
func (e TruncationDetected) Detail() string {
	then := "no reset policy"
	if e.Resumed {
		then = fmt.Sprintf("resume at %d", e.EndOffset)
	}
	return fmt.Sprintf("truncation detected on %s: epoch %d ends at %d, below position %d; %s", e.TP, e.Epoch, e.EndOffset, e.Position, then)
}
func (Polled) Kind() string { return "poll" }
func (e Polled) Detail() string {
	if e.Outcome == PollFail {
		return "fail: " + e.Fail
	}
	detail := fmt.Sprintf("%d records", e.Records)
	if len(e.Spans) > 0 {
		detail += " " + spansText(e.Spans)
	}
	if e.Outcome == PollInfo {
		return fmt.Sprintf("info: %s (%s)", detail, strings.Join(e.Errs, "; "))
	}
	if len(e.Errs) > 0 {
		detail += " (" + strings.Join(e.Errs, "; ") + ")"
	}
	return "ok: " + detail
}
func (TagFilter) Kind() string { return "tags" }
func (e TagFilter) Detail() string {
	if len(e.Tags) == 0 {
		return "no filter: every record"
	}
	return fmt.Sprintf("filter (%s) at the %s", strings.Join(e.Tags, ","), e.At)
}
func (RetryWait) Kind() string { return "retry-wait" }
func (e RetryWait) Detail() string {
	return fmt.Sprintf("%s@%d %s is due at %s: the partition waits until then (paused)", e.TP, e.Offset, e.Value, e.Due)
}
func (Processed) Kind() string { return "processed" }
func (e Processed) Detail() string {
	return fmt.Sprintf("%s@%d %s: processing succeeded at attempt %d", e.TP, e.Offset, e.Value, e.Attempt)
}
func (ProcessFailed) Kind() string { return "process-failed" }
func (e ProcessFailed) Detail() string {
	what := fmt.Sprintf("%s@%d %s: processing failed (attempt %d)", e.TP, e.Offset, e.Value, e.Attempt)
	switch e.Action {
	case RetryInPlace:
		return fmt.Sprintf("%s: retried in place in %s; nothing else is processed meanwhile (blocking retry)", what, e.Wait)
	case DropRecord:
		return what + ": attempts exhausted and no dead-letter topic: dropped"
	case SendToRetryTopic:
		return fmt.Sprintf("%s: sent on to %s, due in %s; the partition carries on", what, e.Topic, e.Wait)
	}
	return fmt.Sprintf("%s: sent to the dead-letter topic %s", what, e.Topic)
}
func (RepublishLost) Kind() string { return "error" }
func (e RepublishLost) Detail() string {
	return fmt.Sprintf("%s@%d %s: could not be sent to %s (%s): lost", e.TP, e.Offset, e.Value, e.Topic, e.Why)
}
func (e Republished) Kind() string {
	if e.DeadLetter {
		return "dead-letter"
	}
	return "retry-topic"
}
func (e Republished) Detail() string {
	s := fmt.Sprintf("%s@%d %s is in %s at offset %d", e.From, e.Offset, e.Value, e.To, e.At)
	if !e.DeadLetter {
		s += fmt.Sprintf(", due at %s", e.Due)
	}
	return s
}
func (RepublishTimeout) Kind() string { return "timeout" }
func (e RepublishTimeout) Detail() string {
	return fmt.Sprintf("republish of %s to %s got no answer", e.Value, e.To)
}
func (SubscribeFailed) Kind() string     { return "error" }
func (e SubscribeFailed) Detail() string { return fmt.Sprintf("subscribe: %v", e.Err) }
func (Subscribed) Kind() string          { return "subscribe" }
func (e Subscribed) Detail() string {
	s := Subscribe{Group: e.Group, Topics: e.Topics, InstanceID: e.InstanceID}
	return fmt.Sprintf("%s (assignor %s, %s protocol, commit %s%s)", s, e.Assignor, e.Protocol, e.Commit, staticText(e.InstanceID))
}
func (Left) Kind() string { return "leave" }
func (e Left) Detail() string {
	if e.Static {
		return fmt.Sprintf("%s: %s stops consuming; a static member sends no LeaveGroup (%s)", e.Group, e.Member, e.Why)
	}
	return fmt.Sprintf("%s: %s leaves (%s)", e.Group, e.Member, e.Why)
}
func (PartitionsLost) Kind() string { return "partitions-lost" }
func (e PartitionsLost) Detail() string {
	return fmt.Sprintf("%s: no longer a member (%s): drops %s without committing", e.Group, e.Why, proto.TPList(e.Partitions))
}
func (CoordinatorLost) Kind() string { return "coordinator-lost" }
func (e CoordinatorLost) Detail() string {
	return fmt.Sprintf("%s: %s (%s)", e.Group, e.Coordinator, e.Why)
}
func (CoordinatorFound) Kind() string { return "coordinator" }
func (e CoordinatorFound) Detail() string {
	return fmt.Sprintf("%s: coordinator %s", e.Group, e.Coordinator)
}
func (JoinError) Kind() string { return "join-error" }
func (e JoinError) Detail() string {
	return fmt.Sprintf("%s: %s: rejoining as a new member", e.Group, e.Err)
}
func (CannotJoin) Kind() string     { return "error" }
func (e CannotJoin) Detail() string { return fmt.Sprintf("%s: cannot join: %s", e.Group, e.Err) }
func (Joined) Kind() string         { return "joined" }
func (e Joined) Detail() string {
	return fmt.Sprintf("%s: %s in generation %d (leader %s)", e.Group, e.Member, e.Generation, e.Leader)
}
func (LeaderAssigned) Kind() string { return "assignment" }
func (e LeaderAssigned) Detail() string {
	text := make([]string, len(e.Assignment))
	for i, a := range e.Assignment {
		text[i] = fmt.Sprintf("%s=%s", a.MemberID, proto.TPList(a.Partitions))
	}
	note := ""
	if e.NoRevokeFirst {
		note = "; no-revoke-first: moving partitions handed over at once"
	} else if len(e.Held) > 0 {
		note = fmt.Sprintf("; held back until their owners revoke them: %s", proto.TPList(e.Held))
	}
	return fmt.Sprintf("%s: leader %s assigns (%s) generation %d: %s%s", e.Group, e.Leader, e.Assignor, e.Generation, strings.Join(text, " "), note)
}
func (PartitionsAssigned) Kind() string { return "assigned" }
func (e PartitionsAssigned) Detail() string {
	return fmt.Sprintf("%s: %s (%s)", e.Group, proto.TPList(e.Partitions), e.Why)
}
func (CommittedOffsets) Kind() string { return "committed-offsets" }
func (e CommittedOffsets) Detail() string {
	text := make([]string, len(e.Offsets))
	for i, o := range e.Offsets {
		if o.Offset >= 0 {
			text[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
		} else {
			text[i] = fmt.Sprintf("%s none (%s)", o.TP, o.Reset)
		}
	}
	return fmt.Sprintf("%s: %s", e.Group, strings.Join(text, " "))
}
func (MustRejoin) Kind() string { return "rebalance" }
func (e MustRejoin) Detail() string {
	return fmt.Sprintf("%s: %s must rejoin (generation %d)", e.Group, e.Member, e.Generation)
}
func (MetadataChangedRejoin) Kind() string { return "rebalance" }
func (e MetadataChangedRejoin) Detail() string {
	return fmt.Sprintf("%s: leader %s sees %s with %d partitions, not the %d it assigned: it rejoins", e.Group, e.Member, e.Topic, e.After, e.Before)
}
func (HeartbeatFenced) Kind() string { return "fenced" }
func (e HeartbeatFenced) Detail() string {
	return fmt.Sprintf("%s: heartbeat of %s (generation %d): %s", e.Group, e.Member, e.Generation, e.Err)
}
func (Fenced) Kind() string          { return "fenced" }
func (e Fenced) Detail() string      { return fmt.Sprintf("%s: %s: stops consuming", e.Group, e.Err) }
func (MaxPollExceeded) Kind() string { return "max-poll-exceeded" }
func (e MaxPollExceeded) Detail() string {
	return fmt.Sprintf("%s: %s spent more than max.poll.interval.ms=%s on one poll: leaves the group", e.Group, e.Member, e.Interval)
}
func (Processing) Kind() string { return "process" }
func (e Processing) Detail() string {
	return fmt.Sprintf("%s: %d records %s handed to the application (%s of processing)", e.Group, e.Records, spansText(e.Spans), e.Time)
}
func (CommitSent) Kind() string { return "commit" }
func (e CommitSent) Detail() string {
	return fmt.Sprintf("%s: %s (generation %d) commits %s %s", e.Group, orNone(e.Member), e.Generation, offsetsText(e.Offsets), e.Why)
}
func (CommitFailed) Kind() string { return "commit-failed" }
func (e CommitFailed) Detail() string {
	return fmt.Sprintf("%s: commit of %s by %s (generation %d): %s (CommitFailedException)", e.Group, offsetsText(e.Offsets),
		orNone(e.Member), e.Generation, e.Err)
}
func (NotMember) Kind() string   { return "error" }
func (NotMember) Detail() string { return "commit: not a group member" }

// --- transactional producer (transactional.go) ---

// TxnCoordinatorFound is the coordinator a transactional producer found: its transaction
// coordinator, or (Group set) the coordinator of the group it sends offsets to.
type TxnCoordinatorFound struct {
	ID          string
	Group       string
	Coordinator string
}

// TxnInitialized is a transactional producer's producer id and epoch from its
// transaction coordinator (InitProducerId): older instances are fenced.
type TxnInitialized struct {
	ID    string
	PID   int64
	Epoch int16
}

// TxnBegun is a transaction begun.
type TxnBegun struct {
	ID    string
	PID   int64
	Epoch int16
}

// TxnRefused is a transaction command or send the producer's state does not allow.
type TxnRefused struct {
	ID    string
	Cmd   fmt.Stringer
	State TxnState
}

// TxnPartitionsAdded is AddPartitionsToTxn answered (before KIP-890).
type TxnPartitionsAdded struct {
	ID         string
	Partitions []proto.TP
}

// TxnOffsetsAdded is TxnOffsetCommit answered: the offsets commit with the transaction.
type TxnOffsetsAdded struct {
	ID      string
	Group   string
	Offsets []proto.PartitionOffset
}

// TxnRetry is a coordinator request tried again after a backoff.
type TxnRetry struct {
	ID      string
	Request string
	Err     proto.Error
	After   time.Duration
}

// TxnGaveUp is a coordinator request that kept failing for delivery.timeout.ms.
type TxnGaveUp struct {
	ID      string
	Request string
	Err     proto.Error
	After   time.Duration
}

// TxnMustAbort is an error that leaves the open transaction only one way out: abort.
type TxnMustAbort struct {
	ID  string
	Why string
}

// TxnStopped is a transactional producer closed for good: fenced by a newer instance, or
// a fatal error.
type TxnStopped struct {
	ID     string
	PID    int64
	Epoch  int16
	Why    string
	Fenced bool
}

// TxnEnded is a transaction's end: committed (ok), aborted (fail) or unknown (info). PID
// and Epoch are what the producer uses from now on.
type TxnEnded struct {
	ID      string
	Outcome history.Type
	Sends   int
	PID     int64
	Epoch   int16
	Why     string
}

// ReadCommittedSkipped is what a consumer left out of a fetch: the records of aborted
// transactions (read_committed) and control batches (every consumer).
type ReadCommittedSkipped struct {
	TP      proto.TP
	Aborted int
	Control int
}

// --- consume-transform-produce (pipeline.go) ---

// PipelineStep is a step of a consume-transform-produce application.
type PipelineStep struct {
	Step    string
	Records int
	Why     string
}

func (TxnCoordinatorFound) Kind() string { return "txn-coordinator" }
func (e TxnCoordinatorFound) Detail() string {
	if e.Group != "" {
		return fmt.Sprintf("%s: group %s's coordinator is %s", e.ID, e.Group, e.Coordinator)
	}
	return fmt.Sprintf("%s: transaction coordinator is %s", e.ID, e.Coordinator)
}
func (TxnInitialized) Kind() string { return "txn-init" }
func (e TxnInitialized) Detail() string {
	return fmt.Sprintf("%s: producer id %d epoch %d", e.ID, e.PID, e.Epoch)
}
func (TxnBegun) Kind() string { return "txn-begin" }
func (e TxnBegun) Detail() string {
	return fmt.Sprintf("%s: producer id %d epoch %d", e.ID, e.PID, e.Epoch)
}
func (TxnRefused) Kind() string { return "error" }
func (e TxnRefused) Detail() string {
	return fmt.Sprintf("%s: %s refused while %s", e.ID, e.Cmd, e.State)
}
func (TxnPartitionsAdded) Kind() string { return "txn-add" }
func (e TxnPartitionsAdded) Detail() string {
	return fmt.Sprintf("%s: %v added to the transaction", e.ID, e.Partitions)
}
func (TxnOffsetsAdded) Kind() string { return "txn-offsets" }
func (e TxnOffsetsAdded) Detail() string {
	return fmt.Sprintf("%s: group %s offsets %s commit with the transaction", e.ID, e.Group, offsetsText(e.Offsets))
}
func (TxnRetry) Kind() string { return "txn-retry" }
func (e TxnRetry) Detail() string {
	return fmt.Sprintf("%s: %s %s; again after %s", e.ID, e.Request, e.Err, e.After)
}
func (TxnGaveUp) Kind() string { return "txn-gave-up" }
func (e TxnGaveUp) Detail() string {
	return fmt.Sprintf("%s: %s failed (%s) for %s", e.ID, e.Request, e.Err, e.After)
}
func (TxnMustAbort) Kind() string     { return "txn-abortable" }
func (e TxnMustAbort) Detail() string { return fmt.Sprintf("%s: must abort: %s", e.ID, e.Why) }
func (e TxnStopped) Kind() string {
	if e.Fenced {
		return "txn-fenced"
	}
	return "txn-fatal"
}
func (e TxnStopped) Detail() string {
	return fmt.Sprintf("%s: producer id %d epoch %d stops: %s", e.ID, e.PID, e.Epoch, e.Why)
}
func (TxnEnded) Kind() string { return "txn-end" }
func (e TxnEnded) Detail() string {
	word := map[history.Type]string{history.Ok: "committed", history.Fail: "aborted", history.Info: "outcome unknown"}[e.Outcome]
	noun := "sends"
	if e.Sends == 1 {
		noun = "send"
	}
	s := fmt.Sprintf("%s: %s, %d %s; next epoch %d", e.ID, word, e.Sends, noun, e.Epoch)
	if e.Why != "" && e.Outcome != history.Ok {
		s += " (" + e.Why + ")"
	}
	return s
}
func (ReadCommittedSkipped) Kind() string { return "skip" }
func (e ReadCommittedSkipped) Detail() string {
	return fmt.Sprintf("%s: %d aborted records, %d control records left out", e.TP, e.Aborted, e.Control)
}
func (PipelineStep) Kind() string { return "pipeline" }
func (e PipelineStep) Detail() string {
	s := fmt.Sprintf("%s %d records", e.Step, e.Records)
	if e.Why != "" {
		s += ": " + e.Why
	}
	return s
}

// ShareAcquired is records a share consumer acquired from a share-partition leader: each
// range with its delivery count (KIP-932).
type ShareAcquired struct {
	Group  string
	TP     proto.TP
	Ranges []proto.AcquiredRange
}

// ShareAckOutcome is the leader's answer to a share consumer's acknowledgements of one
// partition: applied (Err none), refused (Err), or unknown (no answer).
type ShareAckOutcome struct {
	Group   string
	TP      proto.TP
	Acks    []proto.AckBatch
	Err     proto.Error
	Unknown bool
}

// ShareRecordFailed is a record whose processing failed (a poison rule): the share
// consumer releases it, or rejects it.
type ShareRecordFailed struct {
	Group         string
	TP            proto.TP
	Offset        int64
	DeliveryCount int16
	Ack           proto.AckType
}

// ShareSessionReset is a share session with a leader the consumer starts again from
// epoch 0 (the leader lost it, or a request went unanswered).
type ShareSessionReset struct {
	Group, Leader string
	Err           proto.Error
}

// ShareClosing is a share consumer closing: it releases the records it still held.
type ShareClosing struct {
	Group, Member string
	Released      int
}

func shareRanges(rs []proto.AcquiredRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d-%d (delivery %d)", r.First, r.Last, r.DeliveryCount)
		if r.First == r.Last {
			parts[i] = fmt.Sprintf("%d (delivery %d)", r.First, r.DeliveryCount)
		}
	}
	return strings.Join(parts, ", ")
}

func ackBatches(bs []proto.AckBatch) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	return strings.Join(parts, " ")
}

func (ShareAcquired) Kind() string { return "share-acquired" }
func (e ShareAcquired) Detail() string {
	return fmt.Sprintf("%s: %s acquired %s", e.Group, e.TP, shareRanges(e.Ranges))
}
func (ShareAckOutcome) Kind() string { return "share-ack" }
func (e ShareAckOutcome) Detail() string {
	switch {
	case e.Unknown:
		return fmt.Sprintf("%s: %s [%s] unknown (no answer)", e.Group, e.TP, ackBatches(e.Acks))
	case e.Err == proto.RequestTimedOut:
		// The leader's state write may have landed: unknown, as the history records it.
		return fmt.Sprintf("%s: %s [%s] unknown: %s", e.Group, e.TP, ackBatches(e.Acks), e.Err)
	case e.Err != proto.None:
		return fmt.Sprintf("%s: %s [%s] refused: %s", e.Group, e.TP, ackBatches(e.Acks), e.Err)
	}
	return fmt.Sprintf("%s: %s [%s] applied", e.Group, e.TP, ackBatches(e.Acks))
}
func (ShareRecordFailed) Kind() string { return "process-failed" }
func (e ShareRecordFailed) Detail() string {
	return fmt.Sprintf("%s: %s@%d (delivery %d) failed: %s", e.Group, e.TP, e.Offset, e.DeliveryCount, e.Ack)
}
func (ShareSessionReset) Kind() string { return "share-session" }
func (e ShareSessionReset) Detail() string {
	return fmt.Sprintf("%s: session with %s reopens from epoch 0 (%s)", e.Group, e.Leader, e.Err)
}
func (ShareClosing) Kind() string { return "closing" }
func (e ShareClosing) Detail() string {
	return fmt.Sprintf("%s: %s closes, releasing %d held records", e.Group, e.Member, e.Released)
}

// EventDocs lists the clients' event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: EpochAssigned{}, About: "a consumer-protocol or share-group member's heartbeat brought a new member epoch or assignment (KIP-848, KIP-932)"},
		{Example: ShareAcquired{}, About: "a share consumer acquired records from a share-partition leader, each range with its delivery count (KIP-932)"},
		{Example: ShareAckOutcome{}, About: "a share-partition leader answered a share consumer's acknowledgements of one partition: applied, refused, or no answer"},
		{Example: ShareRecordFailed{}, About: "a share consumer failed to process a record (a poison rule) and releases or rejects it"},
		{Example: ShareSessionReset{}, About: "a share consumer reopens its share session with a leader from epoch 0 (session lost, or no answer)"},
		{Example: ShareClosing{}, About: "a share consumer closes: it acknowledges what is pending and releases what it still held"},
		{Example: NoBroker{}, About: "a client's bootstrap list names a broker that does not exist"},
		{Example: NoController{}, About: "a producer's controller list names a node that does not exist"},
		{Example: MetadataTimeout{}, About: "a client's metadata request got no answer; it asks another broker"},
		{Example: MetadataLearned{}, About: "a client learnt newer cluster metadata (partitions and their leaders)"},
		{Example: BadCommand{}, About: "a scenario command a client cannot carry out as given"},
		{Example: Sending{}, About: "a producer took a send (or holds it until the topic's metadata comes)"},
		{Example: NoMetadata{}, About: "a send was dropped: the topic's metadata never came"},
		{Example: NoSuchPartition{}, About: "a send named a partition the topic does not have"},
		{Example: BatchSent{}, About: "a producer sent a batch to the partition's leader"},
		{Example: RequestTimeout{}, About: "a produce request got no answer: its outcome is in doubt"},
		{Example: PIDTimeout{}, About: "an InitProducerId request got no answer"},
		{Example: LateAnswer{}, About: "a produce answer came for a request the producer no longer waits for"},
		{Example: InLog{}, About: "an idempotent batch refused out of order is in the log: a later one was acknowledged"},
		{Example: Retrying{}, About: "a batch failed and will be sent again after retry.backoff.ms"},
		{Example: Disconnected{}, About: "a producer gave up on a broker: its requests in flight are in doubt"},
		{Example: Acked{}, About: "a producer got the acknowledgement of a batch"},
		{Example: BatchEnded{}, About: "a batch ended without success: failed, or unknown if it may be in the log"},
		{Example: ThrottledBy{}, About: "a broker's answer carried a throttle time (quota): the client sends it nothing until it is over"},
		{Example: SendBlocked{}, About: "an application's send found buffer.memory full and blocks (max.block.ms); its later sends wait behind it"},
		{Example: SendUnblocked{}, About: "a blocked send got buffer memory back from completed batches and entered the accumulator"},
		{Example: BufferExhausted{}, About: "a blocked send failed after max.block.ms without memory (BufferExhaustedException): never sent"},
		{Example: PIDReset{}, About: "an idempotent producer starts an epoch bump (same producer id) after a batch was lost"},
		{Example: NotController{}, About: "a producer asked a controller that is not the active one"},
		{Example: DiscoverRetry{}, About: "an InitProducerId failed; the producer asks again after a backoff"},
		{Example: PIDAssigned{}, About: "a producer got its producer id and epoch (idempotence)"},
		{Example: Scheduled{}, About: "a delayed send was accepted: the leader appends it when it is due"},
		{Example: CancelAsked{}, About: "a producer asked the leader to cancel a delayed message"},
		{Example: CancelTimeout{}, About: "a cancellation of a delayed message got no answer"},
		{Example: CancelResult{}, About: "what became of a cancellation of a delayed message"},
		{Example: FetchTimeout{}, About: "a consumer's fetch or list-offsets request got no answer"},
		{Example: AssignRefused{}, About: "assign() was refused: the consumer is subscribed to a group"},
		{Example: Assigned{}, About: "a consumer was assigned partitions by hand (no group)"},
		{Example: PositionFound{}, About: "a consumer found its start position as auto.offset.reset, or a pending seek, says"},
		{Example: Sought{}, About: "a consumer moved its position on purpose (seek): a declared re-read or skip"},
		{Example: OffsetsReset{}, About: "the group tool committed new offsets for an empty group (reset-offsets): a declared re-read or skip"},
		{Example: ResetRefused{}, About: "the group tool refused to reset the offsets of a group that has members"},
		{Example: SeekRefused{}, About: "a consumer refused a seek: the partition is not assigned to it, or the offset is negative"},
		{Example: OutOfRange{}, About: "a consumer's position is out of the log's range: reset, or the poll fails"},
		{Example: TruncationDetected{}, About: "a consumer found the log it read cut back below its position (KIP-320)"},
		{Example: Polled{}, About: "a poll ended: ok, info (a fetch failed) or fail"},
		{Example: TagFilter{}, About: "a consumer's tag filter was set or removed"},
		{Example: RetryWait{}, About: "a consumer pauses a retry topic's partition until its record is due"},
		{Example: Processed{}, About: "a record's processing succeeded after failing before"},
		{Example: ProcessFailed{}, About: "a record's processing failed: retried in place, sent on to a retry or dead-letter topic, or dropped"},
		{Example: RepublishLost{}, About: "a failed record could not be sent to its retry or dead-letter topic"},
		{Example: Republished{}, About: "a failed record is in its retry topic (due later) or in the dead-letter topic"},
		{Example: RepublishTimeout{}, About: "sending a failed record to a retry or dead-letter topic got no answer"},
		{Example: SubscribeFailed{}, About: "a subscription named an assignor that does not exist"},
		{Example: Subscribed{}, About: "a consumer subscribed to a group"},
		{Example: Left{}, About: "a member left its group (a static member leaves silently)"},
		{Example: PartitionsLost{}, About: "a member is no longer one: it drops its partitions without committing"},
		{Example: CoordinatorLost{}, About: "a member forgot its group coordinator and will look for it again"},
		{Example: CoordinatorFound{}, About: "a member found its group coordinator"},
		{Example: JoinError{}, About: "a join was refused (unknown member or generation): the member rejoins as a new one"},
		{Example: CannotJoin{}, About: "a join was refused for good (assignor, session timeout)"},
		{Example: Joined{}, About: "a member joined a generation of its group"},
		{Example: LeaderAssigned{}, About: "the group leader computed the generation's assignment"},
		{Example: PartitionsAssigned{}, About: "a member's partitions changed"},
		{Example: CommittedOffsets{}, About: "a member fetched the group's committed offsets for its new partitions"},
		{Example: MustRejoin{}, About: "a heartbeat said a rebalance is on: the member must rejoin"},
		{Example: MetadataChangedRejoin{}, About: "a classic group's leader saw a subscribed topic's partition count change: it rejoins to rebalance"},
		{Example: HeartbeatFenced{}, About: "a heartbeat was refused: the member or its generation is stale"},
		{Example: Fenced{}, About: "a member stopped for good (its instance id is taken, or its configuration refused)"},
		{Example: MaxPollExceeded{}, About: "a member's application spent more than max.poll.interval.ms on one poll: it leaves"},
		{Example: Processing{}, About: "a poll's records were handed to a member's application"},
		{Example: CommitSent{}, About: "a member committed its offsets"},
		{Example: CommitFailed{}, About: "a member's commit was refused (CommitFailedException)"},
		{Example: NotMember{}, About: "a Commit command to a consumer that is not a group member"},
		{Example: TxnCoordinatorFound{}, About: "a transactional producer found its transaction coordinator, or the group coordinator it sends offsets to"},
		{Example: TxnInitialized{}, About: "a transactional producer got its producer id and a bumped epoch from its coordinator, fencing older instances"},
		{Example: TxnBegun{}, About: "a transactional producer began a transaction"},
		{Example: TxnRefused{}, About: "a transaction command or send the producer's state does not allow"},
		{Example: TxnPartitionsAdded{}, About: "the coordinator added partitions to the transaction (AddPartitionsToTxn, before KIP-890)"},
		{Example: TxnOffsetsAdded{}, About: "a group's offsets will commit with the transaction (sendOffsetsToTransaction)"},
		{Example: TxnRetry{}, About: "a transaction request failed and is tried again after a backoff"},
		{Example: TxnGaveUp{}, About: "a transaction request kept failing: the producer gave up on it"},
		{Example: TxnMustAbort{}, About: "an error leaves the open transaction only one way out: abort"},
		{Example: TxnStopped{}, About: "a transactional producer stopped for good: fenced by a newer instance, or a fatal error"},
		{Example: TxnEnded{}, About: "a transaction ended: committed, aborted, or with an outcome the producer cannot know"},
		{Example: ReadCommittedSkipped{}, About: "a consumer left out aborted transactions' records (read_committed) and control records"},
		{Example: PipelineStep{}, About: "a step of a consume-transform-produce application"},
		{Example: MirrorOffsetSync{}, About: "a MirrorMaker 2 offset sync: an upstream offset and the downstream offset of the same record"},
		{Example: MirrorCheckpoint{}, About: "a MirrorMaker 2 checkpoint: a group's committed upstream offset translated to the remote topic"},
	}
}

func staticText(inst string) string {
	if inst == "" {
		return ""
	}
	return ", static"
}

func orNone(s string) string {
	if s == "" {
		return "(no member id)"
	}
	return s
}

func offsetsText(os []proto.PartitionOffset) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("%s@%d", o.TP, o.Offset)
	}
	return strings.Join(s, " ")
}

// SendBlocked is an application send that finds buffer.memory full: it waits up to
// max.block.ms for completed batches to give memory back.
type SendBlocked struct {
	Key, Value string
	TP         proto.TP
	// Need is what its new batch takes; Used of Total is taken now.
	Need, Used, Total int64
	MaxBlock          time.Duration
}

// SendUnblocked is a blocked send that got its memory after waiting.
type SendUnblocked struct {
	Value  string
	TP     proto.TP
	Waited time.Duration
}

// BufferExhausted is a blocked send that failed after max.block.ms (Kafka's
// BufferExhaustedException): it never entered the accumulator.
type BufferExhausted struct {
	Value           string
	TP              proto.TP
	Need, Available int64
	MaxBlock        time.Duration
}

func (SendBlocked) Kind() string { return "blocked" }
func (e SendBlocked) Detail() string {
	return fmt.Sprintf("%s to %s: buffer.memory full (%d of %d bytes taken, a new batch needs %d): send() waits up to max.block.ms=%s",
		kv(e.Key, e.Value), e.TP, e.Used, e.Total, e.Need, e.MaxBlock)
}
func (SendUnblocked) Kind() string { return "unblocked" }
func (e SendUnblocked) Detail() string {
	return fmt.Sprintf("%s to %s: memory freed after %s", e.Value, e.TP, e.Waited)
}
func (BufferExhausted) Kind() string { return "fail" }
func (e BufferExhausted) Detail() string {
	return fmt.Sprintf("%s to %s: BufferExhaustedException: failed to allocate %d bytes within max.block.ms=%s (%d available)",
		e.Value, e.TP, e.Need, e.MaxBlock, e.Available)
}

// ThrottledBy is a response with a throttle time: the client sends that broker nothing
// until it is over (KIP-219).
type ThrottledBy struct {
	Broker string
	For    time.Duration
}

func (ThrottledBy) Kind() string { return "throttled" }
func (e ThrottledBy) Detail() string {
	return fmt.Sprintf("by %s: sends it nothing for %s (quota)", e.Broker, e.For)
}

// MirrorOffsetSync is an offset sync the mirror emitted (MM2's OffsetSync): the record at
// Upstream of TP is at Downstream of the remote topic.
type MirrorOffsetSync struct {
	TP                   proto.TP
	Upstream, Downstream int64
}

func (MirrorOffsetSync) Kind() string { return "offset-sync" }
func (e MirrorOffsetSync) Detail() string {
	return fmt.Sprintf("%s: upstream %d is downstream %d", e.TP, e.Upstream, e.Downstream)
}

// MirrorCheckpoint is a checkpoint the mirror emitted (MM2's Checkpoint): Group's
// committed offset Upstream of TP translates to Downstream of the remote topic.
type MirrorCheckpoint struct {
	Group                string
	TP                   proto.TP
	Upstream, Downstream int64
}

func (MirrorCheckpoint) Kind() string { return "mirror-checkpoint" }
func (e MirrorCheckpoint) Detail() string {
	return fmt.Sprintf("group %s %s: committed %d translates to %d", e.Group, e.TP, e.Upstream, e.Downstream)
}
