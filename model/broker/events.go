package broker

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/model/share"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The events a broker puts in the trace. Node names are names, not ids, so that a view
// needs no world to read them; lists of nodes are the broker's own copies.

// Started is a broker process starting, with its incarnation: the node's start count
// (sim.Env.Starts), new at every start.
type Started struct{ Incarnation int64 }

// ControllerMissing is a broker whose configuration names a controller node that does
// not exist (Name), or none at all (Name is "").
type ControllerMissing struct{ Name string }

// ControllerSilent is a broker giving up on a controller that did not answer its last
// heartbeat within Within, and trying Next.
type ControllerSilent struct {
	Silent, Next string
	Within       time.Duration
}

// ControllerRedirected is a broker told by Asked that Active is the active controller,
// and following the hint.
type ControllerRedirected struct{ Asked, Active string }

// ControllerUnknown is a broker told by Asked that it knows no active controller, trying
// Next.
type ControllerUnknown struct{ Asked, Next string }

// BelowMinISR is a leader refusing a write because its ISR is smaller than
// min.insync.replicas: an acks=all produce, or the group coordinator's own write.
type BelowMinISR struct {
	TP          proto.TP
	ISR         []string
	MinISR      int
	Coordinator bool // the group coordinator's write, not a producer's
}

// SequenceRejected is a leader refusing an idempotent producer's batch whose sequence
// number is out of order.
type SequenceRejected struct {
	TP         proto.TP
	ProducerID int64
	Seq        int32
	Err        proto.Error
}

// Deduplicated is a leader recognising a retried batch it already has at Offset.
type Deduplicated struct {
	TP         proto.TP
	ProducerID int64
	Seq        int32
	Offset     int64
}

// StorageOp is what a broker was doing with its log when the log failed.
type StorageOp int

const (
	OpOpen          StorageOp = iota // opening the partition's log
	OpAssignEpoch                    // stamping a new leader epoch
	OpTruncate                       // truncating to Offset
	OpReplicaAppend                  // appending a leader's batch as a follower
	OpAppend                         // appending a producer's or the coordinator's batch
	OpRelease                        // appending the release of the delayed message at Offset
	OpClean                          // compacting the log (cleaner.go)
)

// StorageFailed is the log refusing an operation (a full or failing disk).
type StorageFailed struct {
	TP     proto.TP
	Op     StorageOp
	Offset int64 // for OpTruncate and OpRelease
	Err    error
}

// Appended is a leader appending a batch: a producer's (acks and sender) or the group
// coordinator's.
type Appended struct {
	TP          proto.TP
	First, Last int64
	Epoch       int32
	Acks        proto.Acks
	From        string // the producer; "" for the coordinator
	Coordinator bool
	LEO         int64
	// Bytes is the batch's size on the disk (wal.AppendResult.Stored: compressed for a
	// compressed batch), for load views; not part of the event's text.
	Bytes int
}

// Acked is a leader answering a producer for the batch at Offset.
type Acked struct {
	TP     proto.TP
	Offset int64
	To     string
	Acks   proto.Acks
	HW     int64
}

// ProduceFailed is a leader answering a parked producer with an error (it stepped down,
// or the request timed out).
type ProduceFailed struct {
	TP     proto.TP
	Offset int64
	To     string
	Err    proto.Error
}

// Replicated is a follower appending what its fetch brought from Leader.
type Replicated struct {
	TP          proto.TP
	First, Last int64
	Leader      string
	LEO         int64
}

// HWAdvanced is a replica's high watermark rising: a leader's, from its ISR's progress
// (Leader is ""), or a follower's, learned from Leader's fetch response.
type HWAdvanced struct {
	TP       proto.TP
	From, To int64
	Leader   string
}

// FetchTimedOut is a follower whose fetch from Leader got no answer.
type FetchTimedOut struct {
	TP     proto.TP
	Leader string
}

// LogReset is a follower starting its log over at Offset: the leader's log start had
// passed it, or (Diverged) its log diverged below its own start.
type LogReset struct {
	TP       proto.TP
	Offset   int64
	Diverged bool
}

// TruncateRule names the rule that made a follower truncate.
type TruncateRule int

const (
	ToOwnHW         TruncateRule = iota // pre-KIP-101: a new follower cuts to its own HW (HW)
	PastLeaderEnd                       // its fetch offset (Offset) is past the leader's end (HW)
	BatchOverlap                        // the leader's batch at Offset straddles its log end
	LeaderEpochEnds                     // the leader's epoch Epoch ends at Offset
	NoSuchEpoch                         // no Epoch here; its own epoch OwnEpoch ends at Offset
)

// TruncateCause is why a follower truncated: a rule and the numbers it went by.
type TruncateCause struct {
	Rule            TruncateRule
	Offset, HW      int64
	Epoch, OwnEpoch int32
}

func (c TruncateCause) String() string {
	switch c.Rule {
	case ToOwnHW:
		return fmt.Sprintf("to its own HW %d (pre-KIP-101 rule)", c.HW)
	case PastLeaderEnd:
		return fmt.Sprintf("fetch offset %d is past the leader's end (its HW %d)", c.Offset, c.HW)
	case BatchOverlap:
		return fmt.Sprintf("leader's batch at %d overlaps our log end", c.Offset)
	case LeaderEpochEnds:
		return fmt.Sprintf("leader's epoch %d ends at %d", c.Epoch, c.Offset)
	default:
		return fmt.Sprintf("no epoch %d here; own epoch %d ends at %d", c.Epoch, c.OwnEpoch, c.Offset)
	}
}

// Truncated is a replica removing offsets From..To (inclusive) from its log.
type Truncated struct {
	TP       proto.TP
	Cause    TruncateCause
	From, To int64
}

// AppendRejected is a follower refusing a leader batch that straddles its log end
// (offsets Base..Next-1 against its LEO): its log and the leader's disagree where the
// epochs said they agree. It stops replicating the partition until the next leader change,
// as Kafka's fetcher does on UnexpectedAppendOffsetException.
type AppendRejected struct {
	TP              proto.TP
	Base, Next, LEO int64
	Leader          string
}

// ISRRetried is a leader sending its AlterPartition again: unanswered, or answered with
// an unexpected error (After).
type ISRRetried struct {
	TP    proto.TP
	ISR   []string    // the ISR it asks for
	After proto.Error // the unexpected error answered, or None if no answer came
}

// ISRProposed is a leader asking the controller to change the ISR (AlterPartition).
type ISRProposed struct {
	TP       proto.TP
	From, To []string
	Why      string // the request's reason, as sent to the controller
}

// ISRRejected is the controller refusing a leader's AlterPartition.
type ISRRejected struct {
	TP  proto.TP
	Err proto.Error
}

// Offline is a replica told that its partition has no leader.
type Offline struct {
	TP    proto.TP
	Epoch int32
}

// Recovered is a broker opening a partition's log from its disk after a restart.
type Recovered struct {
	TP       proto.TP
	Recovery wal.Recovery
	HW       int64 // from the checkpoint, capped at the log end
}

// Leading is a broker becoming a partition's leader.
type Leading struct {
	TP      proto.TP
	Epoch   int32
	LEO, HW int64
	ISR     []string
}

// Following is a broker becoming a follower of Leader.
type Following struct {
	TP      proto.TP
	Leader  string
	Epoch   int32
	LEO, HW int64
}

// Synced is a replica's fsync completing: the offsets below Below are on disk.
type Synced struct {
	TP    proto.TP
	Below int64
}

// RetentionApplied is a leader deleting old segments (never above its HW).
type RetentionApplied struct {
	TP       proto.TP
	Deletion wal.Deletion
	HW       int64
}

// LogCleaned is one pass of a replica's log cleaner over a compacted log (cleaner.go):
// what it cleaned, or why it cleaned nothing. LSO is the limit it was given.
type LogCleaned struct {
	TP       proto.TP
	Cleaning wal.Cleaning
	LSO      int64
}

// ScheduledAt is a delayed message held in a partition's log: its offset and due time.
type ScheduledAt struct {
	Offset int64
	Due    sim.Time
}

// DelayLoaded is a new leader reloading the pending delayed messages from its log.
type DelayLoaded struct {
	TP      proto.TP
	Epoch   int32
	Entries []ScheduledAt
}

// DelayUnloaded is a broker leaving its pending delayed messages to the next leader: it
// leads in a new epoch (NewEpoch), or (StillLeads false) no longer leads.
type DelayUnloaded struct {
	TP         proto.TP
	StillLeads bool
	NewEpoch   int32
	Pending    int
}

// DelayRejected is a leader refusing the cancellation of a delayed message it does not
// hold.
type DelayRejected struct {
	TP     proto.TP
	Target int64
	Err    proto.Error
}

// DelayCancelled is a delayed message cancelled by the marker at offset Marker.
type DelayCancelled struct {
	TP     proto.TP
	Target int64
	Due    sim.Time
	Marker int64
}

// Scheduled is a delayed message appended and held until Due.
type Scheduled struct {
	TP     proto.TP
	Value  string
	Offset int64
	Due    sim.Time
	Delay  time.Duration
}

// ReleaseMissing is a due delayed message no longer in the log (retention took it).
type ReleaseMissing struct {
	TP     proto.TP
	Offset int64
}

// Released is a due delayed message appended again for consumers, Late after its due
// time (0: on time).
type Released struct {
	TP     proto.TP
	Value  string
	From   int64 // the offset it was scheduled at
	Due    sim.Time
	Offset int64 // where the release was appended
	Late   time.Duration
	LEO    int64
}

func bracket(names []string) string { return "[" + strings.Join(names, " ") + "]" }

func (Started) Kind() string           { return "start" }
func (e Started) Detail() string       { return fmt.Sprintf("incarnation %d", e.Incarnation) }
func (ControllerMissing) Kind() string { return "error" }
func (e ControllerMissing) Detail() string {
	if e.Name == "" {
		return "no controller named"
	}
	return fmt.Sprintf("no controller node %q", e.Name)
}
func (ControllerSilent) Kind() string { return "discover" }
func (e ControllerSilent) Detail() string {
	return fmt.Sprintf("no answer from %s within %s; trying %s", e.Silent, e.Within, e.Next)
}
func (ControllerRedirected) Kind() string { return "discover" }
func (e ControllerRedirected) Detail() string {
	return fmt.Sprintf("%s is not the active controller; %s is", e.Asked, e.Active)
}
func (ControllerUnknown) Kind() string { return "discover" }
func (e ControllerUnknown) Detail() string {
	return fmt.Sprintf("%s knows no active controller; trying %s next", e.Asked, e.Next)
}
func (BelowMinISR) Kind() string { return "reject" }
func (e BelowMinISR) Detail() string {
	outcome := "NOT_ENOUGH_REPLICAS"
	if e.Coordinator {
		outcome = "the coordinator cannot write"
	}
	return fmt.Sprintf("%s: ISR %s is below min.insync.replicas=%d: %s", e.TP, bracket(e.ISR), e.MinISR, outcome)
}
func (SequenceRejected) Kind() string { return "reject" }
func (e SequenceRejected) Detail() string {
	return fmt.Sprintf("%s: pid %d seq %d: %s", e.TP, e.ProducerID, e.Seq, e.Err)
}
func (Deduplicated) Kind() string { return "dedup" }
func (e Deduplicated) Detail() string {
	return fmt.Sprintf("%s: pid %d seq %d is already at offset %d", e.TP, e.ProducerID, e.Seq, e.Offset)
}
func (StorageFailed) Kind() string { return "error" }
func (e StorageFailed) Detail() string {
	switch e.Op {
	case OpTruncate:
		return fmt.Sprintf("%s: truncate to %d: %v", e.TP, e.Offset, e.Err)
	case OpReplicaAppend:
		return fmt.Sprintf("%s: replica append: %v", e.TP, e.Err)
	case OpAppend:
		return fmt.Sprintf("%s: append: %v", e.TP, e.Err)
	case OpRelease:
		return fmt.Sprintf("%s: release of offset %d: %v", e.TP, e.Offset, e.Err)
	case OpClean:
		return fmt.Sprintf("%s: clean: %v", e.TP, e.Err)
	default:
		return fmt.Sprintf("%s: %v", e.TP, e.Err)
	}
}
func (Appended) Kind() string { return "append" }
func (e Appended) Detail() string {
	who := fmt.Sprintf("acks=%s from %s", e.Acks, e.From)
	if e.Coordinator {
		who = coordinatorOf(e.TP)
	}
	return fmt.Sprintf("%s: offsets %d..%d in epoch %d (%s), LEO %d", e.TP, e.First, e.Last, e.Epoch, who, e.LEO)
}

// coordinatorOf names the coordinator that writes to an internal partition.
func coordinatorOf(tp proto.TP) string {
	if tp.Topic == proto.TransactionStateTopic {
		return "transaction coordinator"
	}
	return "group coordinator"
}

func (Acked) Kind() string { return "ack" }
func (e Acked) Detail() string {
	return fmt.Sprintf("%s: offset %d to %s (acks=%s, HW %d)", e.TP, e.Offset, e.To, e.Acks, e.HW)
}
func (ProduceFailed) Kind() string { return "produce-error" }
func (e ProduceFailed) Detail() string {
	return fmt.Sprintf("%s: offset %d to %s: %s", e.TP, e.Offset, e.To, e.Err)
}
func (Replicated) Kind() string { return "replicate" }
func (e Replicated) Detail() string {
	return fmt.Sprintf("%s: offsets %d..%d from %s, LEO %d", e.TP, e.First, e.Last, e.Leader, e.LEO)
}
func (HWAdvanced) Kind() string { return "hw" }
func (e HWAdvanced) Detail() string {
	if e.Leader == "" {
		return fmt.Sprintf("%s: HW %d -> %d", e.TP, e.From, e.To)
	}
	return fmt.Sprintf("%s: HW %d -> %d (from %s)", e.TP, e.From, e.To, e.Leader)
}
func (FetchTimedOut) Kind() string { return "fetch-timeout" }
func (e FetchTimedOut) Detail() string {
	return fmt.Sprintf("%s: no answer from %s; fetching again", e.TP, e.Leader)
}
func (LogReset) Kind() string { return "truncate" }
func (e LogReset) Detail() string {
	if e.Diverged {
		return fmt.Sprintf("%s: diverged below log start; reset to %d", e.TP, e.Offset)
	}
	return fmt.Sprintf("%s: behind the leader's log start %d: log reset", e.TP, e.Offset)
}
func (Truncated) Kind() string { return "truncate" }
func (e Truncated) Detail() string {
	return fmt.Sprintf("%s: %s: removed offsets %d..%d", e.TP, e.Cause, e.From, e.To)
}
func (AppendRejected) Kind() string { return "append-rejected" }
func (e AppendRejected) Detail() string {
	return fmt.Sprintf("%s: %s's batch %d..%d straddles our log end %d: replication stopped", e.TP, e.Leader, e.Base, e.Next-1, e.LEO)
}
func (ISRRetried) Kind() string { return "isr-retry" }
func (e ISRRetried) Detail() string {
	if e.After != proto.None {
		return fmt.Sprintf("%s: AlterPartition %s answered %s; sending it again", e.TP, bracket(e.ISR), e.After)
	}
	return fmt.Sprintf("%s: no answer to AlterPartition %s; sending it again", e.TP, bracket(e.ISR))
}
func (ISRProposed) Kind() string { return "isr-propose" }
func (e ISRProposed) Detail() string {
	return fmt.Sprintf("%s: ISR %s -> %s (%s)", e.TP, bracket(e.From), bracket(e.To), e.Why)
}
func (ISRRejected) Kind() string     { return "isr-rejected" }
func (e ISRRejected) Detail() string { return fmt.Sprintf("%s: %s", e.TP, e.Err) }
func (Offline) Kind() string         { return "offline" }
func (e Offline) Detail() string     { return fmt.Sprintf("%s has no leader (epoch %d)", e.TP, e.Epoch) }
func (Recovered) Kind() string       { return "recover" }
func (e Recovered) Detail() string {
	return fmt.Sprintf("%s: %s; HW %d from checkpoint", e.TP, e.Recovery, e.HW)
}
func (Leading) Kind() string { return "leader" }
func (e Leading) Detail() string {
	return fmt.Sprintf("%s: leader in epoch %d, LEO %d, HW %d, ISR %s", e.TP, e.Epoch, e.LEO, e.HW, bracket(e.ISR))
}
func (Following) Kind() string { return "follower" }
func (e Following) Detail() string {
	return fmt.Sprintf("%s: follows %s in epoch %d, LEO %d, HW %d", e.TP, e.Leader, e.Epoch, e.LEO, e.HW)
}
func (Synced) Kind() string { return "fsync" }
func (e Synced) Detail() string {
	return fmt.Sprintf("%s: offsets below %d are on disk", e.TP, e.Below)
}
func (RetentionApplied) Kind() string { return "retention" }
func (e RetentionApplied) Detail() string {
	return fmt.Sprintf("%s: %s (only below the HW %d)", e.TP, e.Deletion, e.HW)
}
func (LogCleaned) Kind() string { return "clean" }
func (e LogCleaned) Detail() string {
	return fmt.Sprintf("%s: %s (only below the LSO %d)", e.TP, e.Cleaning, e.LSO)
}
func (DelayLoaded) Kind() string { return "delay-load" }
func (e DelayLoaded) Detail() string {
	text := make([]string, len(e.Entries))
	for i, s := range e.Entries {
		text[i] = fmt.Sprintf("%d (due %s)", s.Offset, s.Due)
	}
	return fmt.Sprintf("%s: leader in epoch %d reloads %d scheduled messages from its log: offsets %s", e.TP,
		e.Epoch, len(e.Entries), strings.Join(text, ", "))
}
func (DelayUnloaded) Kind() string { return "delay-unload" }
func (e DelayUnloaded) Detail() string {
	why := "no longer the leader"
	if e.StillLeads {
		why = fmt.Sprintf("new leader epoch %d", e.NewEpoch)
	}
	return fmt.Sprintf("%s: %s: %d scheduled messages left to the next leader, which reloads them from its log", e.TP, why, e.Pending)
}
func (DelayRejected) Kind() string { return "delay-reject" }
func (e DelayRejected) Detail() string {
	return fmt.Sprintf("%s: cancel of the delayed message at offset %d: not pending here: %s", e.TP, e.Target, e.Err)
}
func (DelayCancelled) Kind() string { return "delay-cancel" }
func (e DelayCancelled) Detail() string {
	return fmt.Sprintf("%s: the delayed message at offset %d (due %s) is cancelled by the marker at offset %d", e.TP, e.Target, e.Due, e.Marker)
}
func (Scheduled) Kind() string { return "schedule" }
func (e Scheduled) Detail() string {
	return fmt.Sprintf("%s: %s at offset %d is held until %s (delay %s), hidden from consumers", e.TP, e.Value, e.Offset, e.Due, e.Delay)
}
func (ReleaseMissing) Kind() string { return "error" }
func (e ReleaseMissing) Detail() string {
	return fmt.Sprintf("%s: the delayed message at offset %d is no longer in the log (retention?): not released", e.TP, e.Offset)
}
func (Released) Kind() string { return "release" }
func (e Released) Detail() string {
	late := ""
	if e.Late > 0 {
		late = fmt.Sprintf(", %s after its due time", e.Late)
	}
	return fmt.Sprintf("%s: %s (scheduled at offset %d, due %s) appended at offset %d%s, LEO %d", e.TP, e.Value,
		e.From, e.Due, e.Offset, late, e.LEO)
}

// EventDocs lists the broker's event types.
// ShutdownAsked is the operator's signal: the broker asks the controller for a
// controlled shutdown.
type ShutdownAsked struct{}

// ShutdownFlushing is the controller's grant: the broker flushes its logs (Files to
// fsync) before its process exits.
type ShutdownFlushing struct{ Files int }

// ReplicaRemoved is a reassignment taking a partition's replica off this broker.
type ReplicaRemoved struct{ TP proto.TP }

func (ShutdownAsked) Kind() string    { return "shutdown" }
func (ShutdownAsked) Detail() string  { return "asking the controller for a controlled shutdown" }
func (ShutdownFlushing) Kind() string { return "shutdown" }
func (e ShutdownFlushing) Detail() string {
	return fmt.Sprintf("granted: flushing %d files before stopping", e.Files)
}
func (ReplicaRemoved) Kind() string { return "removed" }
func (e ReplicaRemoved) Detail() string {
	return fmt.Sprintf("%s: no longer a replica here (reassigned)", e.TP)
}

// TxnVerifying is a leader holding a transactional producer's first batch of a
// transaction while it asks the producer's transaction coordinator whether the partition
// is in the transaction (KIP-890).
type TxnVerifying struct {
	TP              proto.TP
	TransactionalID string
	ProducerID      int64
	Epoch           int16
	Coordinator     string
}

// TxnVerifyFailed is a held transactional batch refused: the coordinator's error (or a
// timeout), and Answer, what the producer is told.
type TxnVerifyFailed struct {
	TP              proto.TP
	TransactionalID string
	ProducerID      int64
	Err, Answer     proto.Error
}

// MarkerAppended is a leader appending a transaction marker at Offset. TxnFirst is the
// first offset of the transaction it ends here, -1 if the producer had none open; LSO is
// the partition's last stable offset after it.
type MarkerAppended struct {
	TP               proto.TP
	ProducerID       int64
	Epoch            int16
	Marker           wal.ControlType
	CoordinatorEpoch int32
	Offset, TxnFirst int64
	LSO              int64
}

// MarkerRejected is a leader refusing a transaction marker.
type MarkerRejected struct {
	TP         proto.TP
	ProducerID int64
	Epoch      int16
	Marker     wal.ControlType
	Err        proto.Error
}

// MarkersAnswered is a leader answering a WriteTxnMarkers request, partition by
// partition, once every marker it appended is replicated.
type MarkersAnswered struct {
	ProducerID int64
	To         string
	Results    []proto.MarkerResult
}

func (TxnVerifying) Kind() string { return "txn-verify" }
func (e TxnVerifying) Detail() string {
	return fmt.Sprintf("%s: holding %s's first batch (pid %d epoch %d) while asking coordinator %s", e.TP, e.TransactionalID, e.ProducerID, e.Epoch, e.Coordinator)
}
func (TxnVerifyFailed) Kind() string { return "reject" }
func (e TxnVerifyFailed) Detail() string {
	if e.Answer != e.Err {
		return fmt.Sprintf("%s: %s (pid %d) not verified: %s, answered %s", e.TP, e.TransactionalID, e.ProducerID, e.Err, e.Answer)
	}
	return fmt.Sprintf("%s: %s (pid %d) not verified: %s", e.TP, e.TransactionalID, e.ProducerID, e.Err)
}
func (MarkerAppended) Kind() string { return "marker" }
func (e MarkerAppended) Detail() string {
	closes := "no transaction open here"
	if e.TxnFirst >= 0 {
		closes = fmt.Sprintf("ends the transaction from offset %d", e.TxnFirst)
	}
	return fmt.Sprintf("%s: %s pid %d epoch %d (coordinator epoch %d) at offset %d: %s, LSO %d", e.TP, e.Marker, e.ProducerID, e.Epoch, e.CoordinatorEpoch, e.Offset, closes, e.LSO)
}
func (MarkerRejected) Kind() string { return "reject" }
func (e MarkerRejected) Detail() string {
	return fmt.Sprintf("%s: %s marker pid %d epoch %d: %s", e.TP, e.Marker, e.ProducerID, e.Epoch, e.Err)
}
func (MarkersAnswered) Kind() string { return "markers-done" }
func (e MarkersAnswered) Detail() string {
	parts := make([]string, len(e.Results))
	for i, r := range e.Results {
		parts[i] = fmt.Sprintf("%s %s", r.TP, r.Error)
	}
	return fmt.Sprintf("pid %d to %s: %s", e.ProducerID, e.To, strings.Join(parts, ", "))
}

// Share groups (share.go, sharecoord.go).

// ShareAcquired is a share-partition leader giving Member the records of Ranges, each
// with its delivery count, under an acquisition lock until Until.
type ShareAcquired struct {
	Group  string
	TP     proto.TP
	Member string
	Ranges []proto.AcquiredRange
	Until  sim.Time
}

// ShareAckStaged is a share-partition leader accepting Member's acknowledgements as
// valid and waiting for the state write that makes them take effect.
type ShareAckStaged struct {
	Group   string
	TP      proto.TP
	Member  string
	Batches []proto.AckBatch
}

// ShareAckRefused is a share-partition leader refusing Member's acknowledgements of a
// partition, all of them (Err: INVALID_RECORD_STATE for a record the member does not
// hold, NOT_LEADER_OR_FOLLOWER, ...), or failing them because their state write failed
// (Rolled: the records are Acquired by the member again).
type ShareAckRefused struct {
	Group   string
	TP      proto.TP
	Member  string
	Batches []proto.AckBatch
	Err     proto.Error
	Rolled  bool
}

// ShareAckApplied is a share-partition leader applying acknowledgements or releases
// once their state write succeeded (Unpersisted: at once, the share-ack-before-persist
// bug). Start is the SPSO after them.
type ShareAckApplied struct {
	Group       string
	TP          proto.TP
	Changes     []share.Transition
	Start       int64
	Unpersisted bool
}

// ShareLockExpired is a share-partition leader ending acquisition locks whose time ran
// out: each record is Available again, or Archived (delivery count limit, log start).
type ShareLockExpired struct {
	Group   string
	TP      proto.TP
	Changes []share.Transition
}

// ArchiveReason says why a share-partition archived records.
type ArchiveReason int8

const (
	ArchiveRejected      ArchiveReason = iota // the consumer rejected them (or acknowledged a gap)
	ArchiveDeliveryLimit                      // released or expired at group.share.delivery.count.limit
	ArchiveLogStart                           // below the log start offset: retention deleted them
)

func (r ArchiveReason) String() string {
	switch r {
	case ArchiveRejected:
		return "rejected"
	case ArchiveDeliveryLimit:
		return "delivery count limit"
	}
	return "below the log start"
}

// ShareArchived is a share-partition leader archiving Offsets: they will never be
// delivered to the group again.
type ShareArchived struct {
	Group   string
	TP      proto.TP
	Offsets []int64
	Reason  ArchiveReason
}

// ShareStateWritten is a share-partition leader's persister hearing how its
// WriteShareGroupState ended (Err None: the share coordinator replicated it).
type ShareStateWritten struct {
	Group       string
	TP          proto.TP
	LeaderEpoch int32
	Start       int64
	Batches     int
	Err         proto.Error
}

// ShareStateRead is a new share-partition leader's window built from the share
// coordinator's state (Found), or from share.auto.offset.reset (not Found), starting at
// Start; or its read failing (Err).
type ShareStateRead struct {
	Group       string
	TP          proto.TP
	LeaderEpoch int32
	Found       bool
	Start       int64
	Err         proto.Error
}

// ShareWindowDropped is a broker dropping a share-partition's window: it no longer
// leads the partition (or leads it in a new epoch). Held records it dropped were
// Acquired: the next leader delivers them again.
type ShareWindowDropped struct {
	Group string
	TP    proto.TP
	Held  int
	Why   string
}

// ShareCoordinatorLoaded is a broker loading the share coordinator of a partition of the
// share-group state topic it now leads, from Records records, holding Keys share-partitions.
type ShareCoordinatorLoaded struct {
	Partition int32
	Epoch     int32
	Records   int
	Keys      int
}

// ShareStatePersisted is a share coordinator answering a WriteShareGroupState or
// ReadShareGroupState (Read) once its record is replicated, or refusing it (Err).
type ShareStatePersisted struct {
	Partition   int32
	Key         proto.SharePartitionKey
	Read        bool
	LeaderEpoch int32
	Err         proto.Error
}

func (ShareAcquired) Kind() string { return "share-acquire" }
func (e ShareAcquired) Detail() string {
	parts := make([]string, len(e.Ranges))
	for i, r := range e.Ranges {
		if r.First == r.Last {
			parts[i] = fmt.Sprintf("%d (delivery %d)", r.First, r.DeliveryCount)
		} else {
			parts[i] = fmt.Sprintf("%d-%d (delivery %d)", r.First, r.Last, r.DeliveryCount)
		}
	}
	return fmt.Sprintf("%s %s: %s acquired %s, locked until %s", e.Group, e.TP, e.Member, strings.Join(parts, ", "), e.Until)
}
func (ShareAckStaged) Kind() string { return "share-ack-staged" }
func (e ShareAckStaged) Detail() string {
	return fmt.Sprintf("%s %s: %s acknowledged %s, waiting for the state write", e.Group, e.TP, e.Member, ackList(e.Batches))
}
func (ShareAckRefused) Kind() string { return "share-ack-refused" }
func (e ShareAckRefused) Detail() string {
	if e.Rolled {
		return fmt.Sprintf("%s %s: %s's acknowledgements %s rolled back: state write failed with %s", e.Group, e.TP, e.Member, ackList(e.Batches), e.Err)
	}
	return fmt.Sprintf("%s %s: %s's acknowledgements %s refused: %s", e.Group, e.TP, e.Member, ackList(e.Batches), e.Err)
}
func (ShareAckApplied) Kind() string { return "share-ack" }
func (e ShareAckApplied) Detail() string {
	how := "persisted"
	if e.Unpersisted {
		how = "NOT persisted yet"
	}
	return fmt.Sprintf("%s %s: %s (%s), SPSO %d", e.Group, e.TP, transitionList(e.Changes), how, e.Start)
}
func (ShareLockExpired) Kind() string { return "share-lock-expired" }
func (e ShareLockExpired) Detail() string {
	return fmt.Sprintf("%s %s: lock expired: %s", e.Group, e.TP, transitionList(e.Changes))
}
func (ShareArchived) Kind() string { return "share-archive" }
func (e ShareArchived) Detail() string {
	parts := make([]string, len(e.Offsets))
	for i, o := range e.Offsets {
		parts[i] = fmt.Sprint(o)
	}
	return fmt.Sprintf("%s %s: archived %s (%s)", e.Group, e.TP, strings.Join(parts, ","), e.Reason)
}
func (ShareStateWritten) Kind() string { return "share-write" }
func (e ShareStateWritten) Detail() string {
	if e.Err != proto.None {
		return fmt.Sprintf("%s %s: state write (leader epoch %d) failed: %s", e.Group, e.TP, e.LeaderEpoch, e.Err)
	}
	return fmt.Sprintf("%s %s: state written (leader epoch %d): SPSO %d, %d batches", e.Group, e.TP, e.LeaderEpoch, e.Start, e.Batches)
}
func (ShareStateRead) Kind() string { return "share-read" }
func (e ShareStateRead) Detail() string {
	switch {
	case e.Err != proto.None:
		return fmt.Sprintf("%s %s: state read (leader epoch %d) failed: %s", e.Group, e.TP, e.LeaderEpoch, e.Err)
	case e.Found:
		return fmt.Sprintf("%s %s: state read (leader epoch %d): SPSO %d", e.Group, e.TP, e.LeaderEpoch, e.Start)
	}
	return fmt.Sprintf("%s %s: no state persisted (leader epoch %d): starts at %d", e.Group, e.TP, e.LeaderEpoch, e.Start)
}
func (ShareWindowDropped) Kind() string { return "share-window-dropped" }
func (e ShareWindowDropped) Detail() string {
	return fmt.Sprintf("%s %s: window dropped with %d acquired records (%s)", e.Group, e.TP, e.Held, e.Why)
}
func (ShareCoordinatorLoaded) Kind() string { return "share-coordinator-load" }
func (e ShareCoordinatorLoaded) Detail() string {
	return fmt.Sprintf("%s/%d: loaded %d records in epoch %d: %d share-partitions", proto.ShareGroupStateTopic, e.Partition, e.Records, e.Epoch, e.Keys)
}
func (ShareStatePersisted) Kind() string { return "share-state" }
func (e ShareStatePersisted) Detail() string {
	op := "write"
	if e.Read {
		op = "read"
	}
	if e.Err != proto.None {
		return fmt.Sprintf("%s/%d: %s %s (leader epoch %d) refused: %s", proto.ShareGroupStateTopic, e.Partition, op, e.Key, e.LeaderEpoch, e.Err)
	}
	return fmt.Sprintf("%s/%d: %s %s (leader epoch %d) replicated, answered", proto.ShareGroupStateTopic, e.Partition, op, e.Key, e.LeaderEpoch)
}

func ackList(bs []proto.AckBatch) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.String()
	}
	return strings.Join(parts, " ")
}

func transitionList(ts []share.Transition) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%d %s→%s", t.Offset, t.From, t.To)
	}
	return strings.Join(parts, ", ")
}

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: QuotaSet{}, About: "an operator set a client id's produce and fetch byte-rate quotas on this broker"},
		{Example: Throttled{}, About: "a client went over its byte-rate quota: the response carries a throttle time, and the broker mutes its channel that long"},
		{Example: HeldMuted{}, About: "a muted client's request waits at the broker until its throttle time is over"},
		{Example: ShareAcquired{}, About: "a share-partition leader gave a share consumer records under an acquisition lock (delivery count +1)"},
		{Example: ShareAckStaged{}, About: "a share-partition leader accepted acknowledgements as valid; they wait for the state write"},
		{Example: ShareAckRefused{}, About: "a share-partition leader refused acknowledgements, or rolled them back when their state write failed"},
		{Example: ShareAckApplied{}, About: "a share-partition leader applied acknowledgements or releases once persisted"},
		{Example: ShareLockExpired{}, About: "a share-partition leader ended acquisition locks whose time ran out"},
		{Example: ShareArchived{}, About: "a share-partition leader archived records: never delivered to the group again"},
		{Example: ShareStateWritten{}, About: "a share-partition leader's state write to the share coordinator ended"},
		{Example: ShareStateRead{}, About: "a new share-partition leader built its window from the persisted state (or the auto offset reset)"},
		{Example: ShareWindowDropped{}, About: "a broker dropped a share-partition window it no longer leads"},
		{Example: ShareCoordinatorLoaded{}, About: "a broker loaded the share coordinator of a share-group state partition it leads"},
		{Example: ShareStatePersisted{}, About: "a share coordinator answered a state read or write once replicated, or refused it"},
		{Example: TxnVerifying{}, About: "a leader held a transaction's first batch while asking the transaction coordinator (KIP-890)"},
		{Example: TxnVerifyFailed{}, About: "a leader refused a held transactional batch: the coordinator did not confirm the partition"},
		{Example: MarkerAppended{}, About: "a leader appended a transaction's COMMIT or ABORT marker"},
		{Example: MarkerRejected{}, About: "a leader refused a transaction marker (old producer or coordinator epoch, not leader)"},
		{Example: MarkersAnswered{}, About: "a leader answered the coordinator's WriteTxnMarkers once the markers were replicated"},
		{Example: Started{}, About: "a broker process started, as a new incarnation"},
		{Example: ShutdownAsked{}, About: "a broker asked the controller for a controlled shutdown"},
		{Example: ShutdownFlushing{}, About: "the controller granted a broker's shutdown: it flushes its logs, then stops"},
		{Example: ReplicaRemoved{}, About: "a reassignment took a partition's replica off a broker"},
		{Example: ControllerMissing{}, About: "a broker's configuration names no controller, or one that does not exist"},
		{Example: ControllerSilent{}, About: "a broker gave up on a silent controller and tries the next"},
		{Example: ControllerRedirected{}, About: "a controller told a broker which controller is active"},
		{Example: ControllerUnknown{}, About: "a controller knew no active controller; the broker tries the next"},
		{Example: BelowMinISR{}, About: "a leader refused a write: its ISR is below min.insync.replicas"},
		{Example: SequenceRejected{}, About: "a leader refused an idempotent producer's out-of-order batch"},
		{Example: Deduplicated{}, About: "a leader recognised a retried batch it already has"},
		{Example: StorageFailed{}, About: "a partition's log refused an operation"},
		{Example: Appended{}, About: "a leader appended a producer's or the group coordinator's batch"},
		{Example: Acked{}, About: "a leader acknowledged a produced batch"},
		{Example: ProduceFailed{}, About: "a leader answered a waiting producer with an error"},
		{Example: Replicated{}, About: "a follower appended what its fetch from the leader brought"},
		{Example: HWAdvanced{}, About: "a replica's high watermark rose (a leader's, or a follower's learned one)"},
		{Example: FetchTimedOut{}, About: "a follower's fetch got no answer; it fetches again"},
		{Example: LogReset{}, About: "a follower started its log over at the leader's log start"},
		{Example: Truncated{}, About: "a replica removed the tail of its log, and the rule why"},
		{Example: AppendRejected{}, About: "a follower refused a leader batch that straddles its log end, and stopped replicating (KAFKA-6361)"},
		{Example: ISRRetried{}, About: "a leader sent its AlterPartition again: unanswered, or answered with an unexpected error"},
		{Example: ISRProposed{}, About: "a leader asked the controller to change the ISR"},
		{Example: ISRRejected{}, About: "the controller refused a leader's ISR change"},
		{Example: Offline{}, About: "a replica learned that its partition has no leader"},
		{Example: Recovered{}, About: "a broker opened a partition's log from its disk"},
		{Example: Leading{}, About: "a broker became a partition's leader"},
		{Example: Following{}, About: "a broker became a follower of a partition's leader"},
		{Example: Synced{}, About: "a replica's fsync made its log durable up to an offset"},
		{Example: RetentionApplied{}, About: "a leader deleted old segments under its retention settings"},
		{Example: LogCleaned{}, About: "a replica's log cleaner compacted its log (or found it not dirty enough)"},
		{Example: DelayLoaded{}, About: "a new leader reloaded its pending delayed messages from its log"},
		{Example: DelayUnloaded{}, About: "a broker left its pending delayed messages to the next leader"},
		{Example: DelayRejected{}, About: "a leader refused to cancel a delayed message it does not hold"},
		{Example: DelayCancelled{}, About: "a delayed message was cancelled before its due time"},
		{Example: Scheduled{}, About: "a delayed message was appended and is held until its due time"},
		{Example: ReleaseMissing{}, About: "a due delayed message was no longer in the log"},
		{Example: Released{}, About: "a due delayed message was appended again, visible to consumers"},
	}
}

// QuotaSet is a client id's quotas set on this broker (0: none).
type QuotaSet struct {
	Quota proto.ClientQuota
}

// Throttled is a response to a client over its quota: the rate measured over the sample
// window, the quota, and how long the broker mutes the client (the response's throttle
// time). A throttled fetch answers empty.
type Throttled struct {
	Client      string
	Quota       string // "produce" or "fetch"
	Bytes       int
	Rate, Limit int64 // bytes per second
	For         time.Duration
}

// HeldMuted is a message from a muted client, held until its throttle time is over.
type HeldMuted struct {
	Client string
	Until  sim.Time
}

func (QuotaSet) Kind() string { return "quota" }
func (e QuotaSet) Detail() string {
	return fmt.Sprintf("client %s: producer_byte_rate=%s consumer_byte_rate=%s", e.Quota.ClientID,
		sim.FormatRate(e.Quota.ProducerByteRate), sim.FormatRate(e.Quota.ConsumerByteRate))
}
func (Throttled) Kind() string { return "throttle" }
func (e Throttled) Detail() string {
	return fmt.Sprintf("%s %s: %d bytes/s over the %s quota of %d bytes/s (this response %d bytes): muted for %s",
		e.Client, e.Quota, e.Rate, e.Quota, e.Limit, e.Bytes, e.For)
}
func (HeldMuted) Kind() string { return "muted" }
func (e HeldMuted) Detail() string {
	return fmt.Sprintf("request from %s held: its channel is muted until %s", e.Client, e.Until)
}
