package txn

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The events a transaction coordinator puts in the trace. The coordinator reaches the
// trace through its Host; record keeps an event from being boxed when the trace is off.

// record puts an event in the trace if the host keeps one.
func record[P sim.Payload](h Host, p P) {
	if h.Tracing() {
		h.Record(p)
	}
}

// LoadFailed is a read of the transaction state partition that failed while loading it.
type LoadFailed struct {
	Partition int32
	Offset    int64
	Err       error // nil when the read returned nothing
}

// LoadedTxn is one transactional id as a coordinator found it in its partition's log.
type LoadedTxn struct {
	ID         string
	ProducerID int64
	Epoch      int16
	State      State
	Partitions []proto.TP
}

// Loaded is a coordinator built from its partition's log.
type Loaded struct {
	Partition int32
	Records   int
	Epoch     int32
	Txns      []LoadedTxn
}

// LoadCommitted is a loaded coordinator taking up its state: the high watermark reached the
// log end it loaded, so nothing it read can be taken back by a failover any more.
type LoadCommitted struct {
	Partition int32
	End       int64
}

// Unreadable counts records of the transaction state partition that could not be decoded.
type Unreadable struct {
	Partition int32
	Bad       int
}

// Unloaded is a coordinator ending: its broker no longer leads the partition.
type Unloaded struct {
	Partition int32
	Txns      int
	Why       string
}

// Refused is a request the coordinator answered with an error. Known says whether the id
// had a producer id; State and Current are then its state and epoch.
type Refused struct {
	ID         string
	By         Request
	ProducerID int64
	Epoch      int16
	Err        proto.Error
	Known      bool
	State      State
	Current    int16
}

// Unfenced is a request from an older epoch that went on because producer fencing is off
// (producer-fencing=off): a zombie's request landed.
type Unfenced struct {
	ID         string
	By         Request
	ProducerID int64
	Epoch      int16 // the request's
	Current    int16 // the id's
}

// WriteFailed is a state change whose record could not be appended.
type WriteFailed struct {
	ID  string
	To  State
	Err proto.Error
}

// WriteTimedOut is a state change whose record was not replicated in time; its requester
// is answered COORDINATOR_NOT_AVAILABLE and the state stays as it was.
type WriteTimedOut struct {
	ID    string
	To    State
	After time.Duration
}

// StateChanged is a state change taking effect: its record is replicated.
type StateChanged struct {
	ID         string
	ProducerID int64
	Epoch      int16
	From, To   State
	Partitions []proto.TP
}

// Initialized is an InitProducerId answered: the id's producer id and its new epoch, which
// fences every older instance. New is a first InitProducerId for the id; Rotated a new
// producer id because the epoch was exhausted.
type Initialized struct {
	ID         string
	ProducerID int64
	Epoch      int16
	New        bool
	Rotated    bool
}

// Fenced is an open transaction being aborted with a bumped epoch, by a new instance's
// InitProducerId or by the transaction timeout (PrepareEpochFence).
type Fenced struct {
	ID              string
	ProducerID      int64
	Epoch, NewEpoch int16
	By              Request
	Partitions      []proto.TP
}

// TimedOut is an Ongoing transaction open longer than its transaction.timeout.ms.
type TimedOut struct {
	ID         string
	ProducerID int64
	Epoch      int16
	Open       time.Duration
	Timeout    time.Duration
}

// PartitionsAdded is partitions recorded in a transaction (replicated). Began says the
// transaction began with them; FromBroker that a partition leader added them for the
// producer (KIP-890 part 2); Group that they are a group's offsets (AddOffsetsToTxn).
type PartitionsAdded struct {
	ID         string
	ProducerID int64
	Epoch      int16
	By         Request
	Partitions []proto.TP
	Began      bool
	FromBroker bool
	Group      string
}

// MarkersSent is a WriteTxnMarkers sent to a partition leader. Early says it went out
// before the prepare record was replicated (markers-before-prepare).
type MarkersSent struct {
	ID         string
	ProducerID int64
	Epoch      int16
	Commit     bool
	Leader     string
	Partitions []proto.TP
	Attempt    int
	Early      bool
}

// MarkerFailed is a partition that answered its marker with an error. Dropped says the
// partition needs no marker (a newer epoch is there); otherwise it is sent again.
type MarkerFailed struct {
	ID      string
	TP      proto.TP
	Leader  string
	Err     proto.Error
	Dropped bool
}

// MarkersUnanswered is a WriteTxnMarkers that got no answer in time; its partitions are
// sent again.
type MarkersUnanswered struct {
	ID         string
	Leader     string
	Partitions []proto.TP
	After      time.Duration
}

// MarkersNoLeader lists partitions whose leader the broker does not know: their markers
// wait MarkerRetryBackoff.
type MarkersNoLeader struct {
	ID         string
	Partitions []proto.TP
}

// MarkersDeferred is a transaction whose markers were sent markerAttempts times in a row
// without every partition taking them, or whose Complete record failed as often (then
// Partitions is empty): it waits for the next cleanup tick.
type MarkersDeferred struct {
	ID         string
	Partitions []proto.TP
	Attempts   int
	Interval   time.Duration // of the cleanup tick
}

// MarkersResumed is a transaction's markers starting again: found Prepare* at load (a
// failover), or after being deferred.
type MarkersResumed struct {
	ID         string
	ProducerID int64
	Epoch      int16
	Commit     bool
	Partitions []proto.TP
	Deferred   bool
}

// MarkersWritten is every partition of a transaction holding its marker. Early says the
// prepare record is not replicated yet (markers-before-prepare).
type MarkersWritten struct {
	ID         string
	ProducerID int64
	Epoch      int16
	Commit     bool
	Early      bool
}

func outcome(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

func (LoadFailed) Kind() string { return "error" }
func (e LoadFailed) Detail() string {
	return fmt.Sprintf("transaction state partition %d: read at %d: %v", e.Partition, e.Offset, e.Err)
}
func (LoadCommitted) Kind() string { return "txn-coordinator" }
func (e LoadCommitted) Detail() string {
	return fmt.Sprintf("%s/%d: the HW reached %d, the log end it loaded: acting on its state", proto.TransactionStateTopic, e.Partition, e.End)
}

func (Loaded) Kind() string { return "txn-coordinator" }
func (e Loaded) Detail() string {
	detail := "no transactional ids"
	if len(e.Txns) > 0 {
		names := make([]string, len(e.Txns))
		for i, t := range e.Txns {
			names[i] = fmt.Sprintf("%s (pid %d epoch %d, %s)", t.ID, t.ProducerID, t.Epoch, t.State)
		}
		detail = strings.Join(names, "; ")
	}
	return fmt.Sprintf("%s/%d: loaded %d records in epoch %d: %s", proto.TransactionStateTopic, e.Partition, e.Records, e.Epoch, detail)
}
func (Unreadable) Kind() string { return "error" }
func (e Unreadable) Detail() string {
	return fmt.Sprintf("transaction state partition %d: %d records unreadable", e.Partition, e.Bad)
}
func (Unloaded) Kind() string { return "txn-coordinator" }
func (e Unloaded) Detail() string {
	return fmt.Sprintf("%s/%d: unloaded %d transactional ids (%s)", proto.TransactionStateTopic, e.Partition, e.Txns, e.Why)
}
func (Refused) Kind() string { return "txn-refused" }
func (e Refused) Detail() string {
	if !e.Known {
		return fmt.Sprintf("%s: %s pid=%d epoch=%d: %s (no producer id for it here)", e.ID, e.By, e.ProducerID, e.Epoch, e.Err)
	}
	return fmt.Sprintf("%s: %s pid=%d epoch=%d: %s (%s, epoch %d)", e.ID, e.By, e.ProducerID, e.Epoch, e.Err, e.State, e.Current)
}
func (Unfenced) Kind() string { return "txn-unfenced" }
func (e Unfenced) Detail() string {
	return fmt.Sprintf("%s: %s with epoch %d, current %d: would be PRODUCER_FENCED, accepted (producer-fencing=off)", e.ID, e.By, e.Epoch, e.Current)
}
func (WriteFailed) Kind() string { return "txn-write-failed" }
func (e WriteFailed) Detail() string {
	return fmt.Sprintf("%s: %s not written: %s", e.ID, e.To, e.Err)
}
func (WriteTimedOut) Kind() string { return "txn-write-failed" }
func (e WriteTimedOut) Detail() string {
	return fmt.Sprintf("%s: %s not replicated within %s", e.ID, e.To, e.After)
}
func (StateChanged) Kind() string { return "txn-state" }
func (e StateChanged) Detail() string {
	return fmt.Sprintf("%s: %s -> %s pid=%d epoch=%d %s", e.ID, e.From, e.To, e.ProducerID, e.Epoch, proto.TPList(e.Partitions))
}
func (Initialized) Kind() string { return "txn-init" }
func (e Initialized) Detail() string {
	what := "epoch bumped: older instances fenced"
	switch {
	case e.New:
		what = "new transactional id"
	case e.Rotated:
		what = "epoch exhausted: new producer id"
	}
	return fmt.Sprintf("%s: pid=%d epoch=%d (%s)", e.ID, e.ProducerID, e.Epoch, what)
}
func (Fenced) Kind() string { return "txn-fence" }
func (e Fenced) Detail() string {
	return fmt.Sprintf("%s: %s fences pid=%d epoch %d -> %d, aborting %s", e.ID, e.By, e.ProducerID, e.Epoch, e.NewEpoch, proto.TPList(e.Partitions))
}
func (TimedOut) Kind() string { return "txn-timeout" }
func (e TimedOut) Detail() string {
	return fmt.Sprintf("%s: pid=%d epoch=%d open for %s, transaction.timeout.ms=%s", e.ID, e.ProducerID, e.Epoch, e.Open, e.Timeout)
}
func (PartitionsAdded) Kind() string { return "txn-add" }
func (e PartitionsAdded) Detail() string {
	s := fmt.Sprintf("%s: pid=%d epoch=%d %s %s", e.ID, e.ProducerID, e.Epoch, e.By, proto.TPList(e.Partitions))
	if e.Group != "" {
		s += " (group " + e.Group + ")"
	}
	if e.FromBroker {
		s += " (from the partition leader)"
	}
	if e.Began {
		s += ": transaction begins"
	}
	return s
}
func (MarkersSent) Kind() string { return "txn-markers" }
func (e MarkersSent) Detail() string {
	s := fmt.Sprintf("%s: %s pid=%d epoch=%d to %s %s (attempt %d)", e.ID, outcome(e.Commit), e.ProducerID, e.Epoch, e.Leader, proto.TPList(e.Partitions), e.Attempt)
	if e.Early {
		s += " before the prepare record is replicated"
	}
	return s
}
func (MarkerFailed) Kind() string { return "txn-marker-error" }
func (e MarkerFailed) Detail() string {
	then := "retry"
	if e.Dropped {
		then = "not needed"
	}
	return fmt.Sprintf("%s: %s at %s: %s (%s)", e.ID, e.TP, e.Leader, e.Err, then)
}
func (MarkersUnanswered) Kind() string { return "txn-marker-error" }
func (e MarkersUnanswered) Detail() string {
	return fmt.Sprintf("%s: %s did not answer for %s within %s (retry)", e.ID, e.Leader, proto.TPList(e.Partitions), e.After)
}
func (MarkersNoLeader) Kind() string { return "txn-marker-error" }
func (e MarkersNoLeader) Detail() string {
	return fmt.Sprintf("%s: no leader known for %s (retry)", e.ID, proto.TPList(e.Partitions))
}
func (MarkersDeferred) Kind() string { return "txn-markers-deferred" }
func (e MarkersDeferred) Detail() string {
	if len(e.Partitions) == 0 {
		return fmt.Sprintf("%s: Complete record not written after %d attempts: waiting for the next cleanup tick (every %s)", e.ID, e.Attempts, e.Interval)
	}
	return fmt.Sprintf("%s: %s still without markers after %d attempts: waiting for the next cleanup tick (every %s)", e.ID, proto.TPList(e.Partitions), e.Attempts, e.Interval)
}
func (MarkersResumed) Kind() string { return "txn-markers" }
func (e MarkersResumed) Detail() string {
	if e.Deferred && len(e.Partitions) == 0 {
		return fmt.Sprintf("%s: the Complete record of %s pid=%d epoch=%d tried again (deferred)", e.ID, outcome(e.Commit), e.ProducerID, e.Epoch)
	}
	why := "found prepared at load"
	if e.Deferred {
		why = "deferred"
	}
	return fmt.Sprintf("%s: %s pid=%d epoch=%d %s resumed (%s)", e.ID, outcome(e.Commit), e.ProducerID, e.Epoch, proto.TPList(e.Partitions), why)
}
func (MarkersWritten) Kind() string { return "txn-markers-done" }
func (e MarkersWritten) Detail() string {
	s := fmt.Sprintf("%s: every %s marker of pid=%d epoch=%d written", e.ID, outcome(e.Commit), e.ProducerID, e.Epoch)
	if e.Early {
		s += " before the prepare record is replicated"
	}
	return s
}

// EventDocs lists the transaction coordinator's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: LoadFailed{}, About: "a transaction coordinator could not read its transaction state partition while loading it"},
		{Example: Loaded{}, About: "a broker became leader of a transaction state partition and loaded its transactional ids from the log"},
		{Example: LoadCommitted{}, About: "a loaded transaction coordinator takes up its state once the high watermark reaches the log end it loaded"},
		{Example: Unreadable{}, About: "records of a transaction state partition could not be decoded at load"},
		{Example: Unloaded{}, About: "a broker lost the leadership of a transaction state partition: its transactional ids are gone from it"},
		{Example: Refused{}, About: "the transaction coordinator answered a request with an error (fenced, concurrent, wrong state, unknown id)"},
		{Example: Unfenced{}, About: "a request from an older producer epoch was accepted because producer fencing is off"},
		{Example: WriteFailed{}, About: "a transaction state change could not be appended to the transaction state partition"},
		{Example: WriteTimedOut{}, About: "a transaction state change was not replicated in time; its requester is told to retry"},
		{Example: StateChanged{}, About: "a transactional id's state change took effect: its record is replicated"},
		{Example: Initialized{}, About: "InitProducerId answered: the producer id and the bumped epoch that fences older instances"},
		{Example: Fenced{}, About: "an open transaction is aborted with a bumped epoch, by a new instance or by the timeout"},
		{Example: TimedOut{}, About: "a transaction stayed open longer than its transaction.timeout.ms"},
		{Example: PartitionsAdded{}, About: "partitions (or a group's offsets) were recorded in a transaction"},
		{Example: MarkersSent{}, About: "the coordinator sent COMMIT or ABORT markers to a partition leader"},
		{Example: MarkerFailed{}, About: "a partition answered its marker with an error"},
		{Example: MarkersUnanswered{}, About: "a partition leader did not answer a marker request in time"},
		{Example: MarkersNoLeader{}, About: "a partition of a transaction has no known leader: its marker waits"},
		{Example: MarkersDeferred{}, About: "markers were retried too often in a row: the transaction waits for the next cleanup tick"},
		{Example: MarkersResumed{}, About: "a transaction's markers start again: found prepared at load (failover) or after a deferral"},
		{Example: MarkersWritten{}, About: "every partition of a transaction holds its marker: the Complete record follows"},
	}
}
