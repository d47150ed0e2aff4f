package txn

import (
	"slices"
	"strings"
	"time"

	"mqsim/model/keyedtimer"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Host is what a coordinator needs from the broker that runs it: the clock, the network,
// timers, the trace, appends to its own partition of the transaction state topic, and the
// leaders of the partitions its markers go to.
type Host interface {
	Now() sim.Time
	Send(to sim.NodeID, msg sim.Message)
	// Tracing says whether the trace keeps events; Record puts one in it. Events are built
	// and recorded through record, so nothing is described when the trace is off.
	Tracing() bool
	Record(e sim.Payload)
	NameOf(id sim.NodeID) string
	// SetTimer arranges for the broker to call Coordinator.Timer with key after d.
	SetTimer(d time.Duration, key int64) sim.TimerID
	CancelTimer(id sim.TimerID)
	// NewKey returns a key no other timer or request of the broker uses; the coordinator
	// uses it for its timers and as the correlation id of its WriteTxnMarkers.
	NewKey() int64
	// Append writes records to the coordinator's partition as its leader and returns the
	// offset after them: the high watermark that makes them committed. The broker calls
	// Coordinator.Committed as the high watermark advances. An error means nothing was
	// appended.
	Append(records []wal.Record) (next int64, err proto.Error)
	// Leader is the leader of a partition in the broker's metadata, if it has one.
	Leader(tp proto.TP) (sim.NodeID, bool)
}

// appendTimeout is how long a state change may take to replicate before its requester is
// answered COORDINATOR_NOT_AVAILABLE (Kafka's appendTransactionToLog waits
// request.timeout.ms, 30s, and maps REQUEST_TIMED_OUT so).
const appendTimeout = 30 * time.Second

// timer kinds of the coordinator
const (
	tkWrite = iota + 1
	tkMarkers
	tkCleanup
)

type timerRef struct {
	kind  int
	write *pendingWrite
	id    string // tkMarkers: the transactional id
}

// pendingWrite is a state change waiting for the high watermark (acks=all semantics).
type pendingWrite struct {
	e     *entry
	to    txnMeta
	next  int64
	timer sim.TimerID
	key   int64
	// done runs once the record is committed (err None) or could not be (an error).
	done func(h Host, err proto.Error)
}

// Coordinator is the transaction coordinator for one partition of the transaction state
// topic, run by the partition's leader. It is built by Load from the partition's log when
// the broker becomes leader, and thrown away (Unload) when it stops being leader.
type Coordinator struct {
	cfg       proto.TxnConfig
	offsets   int // partitions of the offsets topic, for AddOffsetsToTxn
	bugs      proto.Bugs
	legacy    proto.Legacy
	Partition int32
	Epoch     int32 // the leader epoch it was loaded in: the markers' coordinator epoch
	entries   []*entry
	nextPID   int64 // the counter of this partition's producer id range
	writes    []*pendingWrite
	timers    keyedtimer.Table[timerRef]
	// sent maps the correlation id of a WriteTxnMarkers in flight to its transactional id.
	sent         map[int64]string
	cleanup      sim.TimerID
	cleanupArmed bool
	cleanupKey   int64
	// loadEnd is the log end offset the coordinator was loaded from; until the high
	// watermark reaches it (loaded false) some of what it read may yet be taken back by a
	// failover, so it acts on none of it: requests are answered
	// COORDINATOR_LOAD_IN_PROGRESS and prepared transactions wait for their markers.
	loadEnd int64
	loaded  bool
	waited  bool // the high watermark was below loadEnd when the coordinator first heard it
}

// newCoordinator is an empty coordinator of a partition.
func newCoordinator(cfg proto.Config, partition, epoch int32) *Coordinator {
	return &Coordinator{cfg: cfg.Txn, offsets: cfg.Group.OffsetsTopicPartitions, bugs: cfg.Bugs, legacy: cfg.Legacy,
		Partition: partition, Epoch: epoch, sent: map[int64]string{}, loaded: true}
}

// Load builds the coordinator of a partition from its log: the latest record of every
// transactional id. Transactions found in PrepareCommit or PrepareAbort get their markers
// sent again (the prepare record is the commit point); Ongoing ones are subject to their
// timeout from now on.
func Load(h Host, cfg proto.Config, partition, epoch int32, log *wal.Log) *Coordinator {
	var records []wal.Record
	for off := log.LogStartOffset(); off < log.LogEndOffset(); {
		batches, err := log.Read(off, 1<<20)
		if err != nil || len(batches) == 0 {
			record(h, LoadFailed{Partition: partition, Offset: off, Err: err})
			break
		}
		for _, b := range batches {
			for i, r := range b.Records {
				if b.BaseOffset+int64(i) >= off {
					records = append(records, r)
				}
			}
			off = b.NextOffset()
		}
	}
	return load(h, cfg, partition, epoch, records, log.LogEndOffset())
}

// load builds the coordinator from the records of its partition, in log order, the last
// of them just below end.
func load(h Host, cfg proto.Config, partition, epoch int32, records []wal.Record, end int64) *Coordinator {
	c := newCoordinator(cfg, partition, epoch)
	c.loadEnd, c.loaded = end, false
	bad := 0
	for _, r := range records {
		m, err := decode(r)
		if err != nil {
			bad++
			continue
		}
		c.apply(m)
	}
	if h.Tracing() {
		loaded := Loaded{Partition: partition, Records: len(records), Epoch: epoch}
		for _, e := range c.entries {
			loaded.Txns = append(loaded.Txns, LoadedTxn{ID: e.id, ProducerID: e.pid, Epoch: e.epoch, State: e.state, Partitions: slices.Clone(e.partitions)})
		}
		h.Record(loaded)
	}
	if bad > 0 {
		record(h, Unreadable{Partition: partition, Bad: bad})
	}
	return c
}

// finishLoad makes the loaded state the coordinator's to act on, once the high watermark
// has reached the end of what it loaded: prepared transactions resume their markers, open
// ones their timeout. Only a coordinator that had to wait says so (LoadCommitted). Kafka's coordinator acts on its log up to the end as soon as it has
// read it (TransactionStateManager loads with FetchIsolation.LOG_END); a record there that
// no follower has yet can still be taken back by the next failover, and a marker or an
// answer it caused would then outlive it (a COMMIT written for a PrepareCommit the next
// coordinator never sees, a partition verified into a transaction it never ends). mqsim
// waits for its log end to be committed first, which closes that window.
func (c *Coordinator) finishLoad(h Host) {
	c.loaded = true
	if c.waited {
		record(h, LoadCommitted{Partition: c.Partition, End: c.loadEnd})
	}
	for _, e := range c.entries {
		if e.state == PrepareCommit || e.state == PrepareAbort {
			c.startMarkers(h, e, e.txnMeta, markersResumed)
		}
	}
	c.armCleanup(h)
}

// apply makes a record's metadata the id's committed state, and keeps the producer id
// counter past every id of this partition's range.
func (c *Coordinator) apply(m txnMeta) {
	e := c.entry(m.id, true)
	e.txnMeta = m.clone()
	base := ProducerIDBase + int64(c.Partition)*ProducerIDsPerPartition
	if n := m.pid - base; n >= 0 && n < ProducerIDsPerPartition && n >= c.nextPID {
		c.nextPID = n + 1
	}
}

// newProducerID allocates the next producer id of this partition's range.
func (c *Coordinator) newProducerID() int64 {
	pid := ProducerIDBase + int64(c.Partition)*ProducerIDsPerPartition + c.nextPID
	c.nextPID++
	return pid
}

// Unload ends the coordinator: every waiting request is answered NOT_COORDINATOR, markers
// stop, and every transactional id is Dead here (the partition's new leader loads them).
func (c *Coordinator) Unload(h Host, why string) {
	writes := c.writes
	c.writes = nil
	for _, w := range writes {
		h.CancelTimer(w.timer)
		w.e.pending = nil
		w.done(h, proto.NotCoordinator)
	}
	for _, e := range c.entries {
		if e.markers != nil {
			h.CancelTimer(e.markers.timer)
			e.markers = nil
		}
		e.state = Dead
	}
	if c.cleanupArmed {
		h.CancelTimer(c.cleanup)
		c.cleanupArmed = false
	}
	c.timers.Reset()
	c.sent = map[int64]string{}
	record(h, Unloaded{Partition: c.Partition, Txns: len(c.entries), Why: why})
}

// Transactions lists the transactional ids, sorted, as copies for views.
func (c *Coordinator) Transactions() []Txn {
	out := make([]Txn, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.view()
	}
	return out
}

// Transaction returns one transactional id, as a copy for views.
func (c *Coordinator) Transaction(id string) (Txn, bool) {
	if e := c.entry(id, false); e != nil {
		return e.view(), true
	}
	return Txn{}, false
}

func (c *Coordinator) entry(id string, create bool) *entry {
	i, found := slices.BinarySearchFunc(c.entries, id, func(e *entry, id string) int { return strings.Compare(e.id, id) })
	if found {
		return c.entries[i]
	}
	if !create {
		return nil
	}
	e := &entry{txnMeta: txnMeta{id: id, pid: wal.NoProducerID, epoch: wal.NoProducerEpoch, lastEpoch: wal.NoProducerEpoch}}
	c.entries = slices.Insert(c.entries, i, e)
	return e
}

func (c *Coordinator) dropEntry(e *entry) {
	c.entries = slices.DeleteFunc(c.entries, func(x *entry) bool { return x == e })
}

// --- timers ---

func (c *Coordinator) setTimer(h Host, d time.Duration, ref timerRef) (sim.TimerID, int64) {
	return c.timers.Set(h, d, ref)
}

func (c *Coordinator) cancel(h Host, id sim.TimerID, key int64) { c.timers.Cancel(h, id, key) }

// Owns reports whether a timer key is one of this coordinator's.
func (c *Coordinator) Owns(key int64) bool { return c.timers.Owns(key) }

// Timer runs one of the coordinator's timers.
func (c *Coordinator) Timer(h Host, key int64) {
	ref, ok := c.timers.Fired(key)
	if !ok {
		return
	}
	switch ref.kind {
	case tkWrite:
		w := ref.write
		i := slices.Index(c.writes, w)
		if i < 0 {
			return
		}
		c.writes = slices.Delete(c.writes, i, i+1)
		w.e.pending = nil
		record(h, WriteTimedOut{ID: w.e.id, To: w.to.state, After: appendTimeout})
		w.done(h, proto.CoordinatorNotAvailable)
	case tkMarkers:
		if e := c.entry(ref.id, false); e != nil && e.markers != nil && e.markers.timerKey == key {
			e.markers.armed = false
			c.markersDue(h, e)
		}
	case tkCleanup:
		if key == c.cleanupKey {
			c.cleanupArmed = false
			c.onCleanup(h)
		}
	}
}

// --- appends ---

// write appends the record of e's change to m and calls done once it is committed (with
// None; the change is applied just before) or could not be (with an error; nothing
// changes). appended, if not nil, runs right after a successful append: the
// markers-before-prepare bug hooks in there.
func (c *Coordinator) write(h Host, e *entry, m txnMeta, shown State, appended func(h Host), done func(h Host, err proto.Error)) {
	next, err := h.Append([]wal.Record{encode(m)})
	if err != proto.None {
		// appendTransactionToLog: a full ISR or a storage error is retriable elsewhere, the
		// partition's leadership gone is NOT_COORDINATOR.
		if err == proto.NotEnoughReplicas || err == proto.KafkaStorageError {
			err = proto.CoordinatorNotAvailable
		} else {
			err = proto.NotCoordinator
		}
		record(h, WriteFailed{ID: e.id, To: m.state, Err: err})
		done(h, err)
		return
	}
	w := &pendingWrite{e: e, to: m.clone(), next: next, done: done}
	e.pending, e.shown = w, shown
	w.timer, w.key = c.setTimer(h, appendTimeout, timerRef{kind: tkWrite, write: w})
	c.writes = append(c.writes, w)
	if appended != nil {
		appended(h)
	}
}

// Committed completes the state changes that the high watermark hw now covers, in the
// order they were written.
func (c *Coordinator) Committed(h Host, hw int64) {
	if !c.loaded {
		if hw < c.loadEnd {
			c.waited = true
			return
		}
		c.finishLoad(h)
	}
	for len(c.writes) > 0 && c.writes[0].next <= hw {
		w := c.writes[0]
		c.writes = c.writes[1:]
		c.cancel(h, w.timer, w.key)
		w.e.pending = nil
		from := w.e.state
		w.e.txnMeta = w.to.clone()
		if h.Tracing() {
			h.Record(StateChanged{ID: w.e.id, ProducerID: w.to.pid, Epoch: w.to.epoch, From: from, To: w.to.state, Partitions: slices.Clone(w.to.partitions)})
		}
		w.done(h, proto.None)
	}
}

// --- requests ---

// Handle serves one request or response; it reports whether msg was one of the
// coordinator's (a WriteTxnMarkersResponse is, when it answers one of its own requests).
func (c *Coordinator) Handle(h Host, from sim.NodeID, msg sim.Message) bool {
	if !c.loaded {
		return c.loadInProgress(h, from, msg)
	}
	switch m := msg.(type) {
	case proto.InitProducerID:
		c.onInitProducerID(h, from, m)
	case proto.AddPartitionsToTxn:
		c.onAddPartitions(h, from, m)
	case proto.AddOffsetsToTxn:
		c.onAddOffsets(h, from, m)
	case proto.EndTxn:
		c.onEndTxn(h, from, m)
	case proto.WriteTxnMarkersResponse:
		return c.onMarkersResponse(h, m)
	default:
		return false
	}
	return true
}

// loadInProgress answers a request COORDINATOR_LOAD_IN_PROGRESS while the loaded state is
// not committed yet; the client finds the coordinator again and retries.
func (c *Coordinator) loadInProgress(h Host, from sim.NodeID, msg sim.Message) bool {
	const e = proto.CoordinatorLoadInProgress
	no, noEpoch := wal.NoProducerID, wal.NoProducerEpoch
	switch m := msg.(type) {
	case proto.InitProducerID:
		c.refused(h, ReqInitProducerID, m.TransactionalID, c.entry(m.TransactionalID, false), m.ProducerID, m.ProducerEpoch, e)
		h.Send(from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: no, ProducerEpoch: noEpoch, Error: e, ActiveController: proto.NoController})
	case proto.AddPartitionsToTxn:
		c.refused(h, ReqAddPartitions, m.TransactionalID, c.entry(m.TransactionalID, false), m.ProducerID, m.ProducerEpoch, e)
		h.Send(from, proto.AddPartitionsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: e})
	case proto.AddOffsetsToTxn:
		c.refused(h, ReqAddOffsets, m.TransactionalID, c.entry(m.TransactionalID, false), m.ProducerID, m.ProducerEpoch, e)
		h.Send(from, proto.AddOffsetsToTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: e})
	case proto.EndTxn:
		c.refused(h, ReqEndTxn, m.TransactionalID, c.entry(m.TransactionalID, false), m.ProducerID, m.ProducerEpoch, e)
		h.Send(from, proto.EndTxnResponse{CorrelationID: m.CorrelationID, TransactionalID: m.TransactionalID, Error: e, ProducerID: no, ProducerEpoch: noEpoch})
	default:
		return false // a marker answer: none is in flight before the load completes
	}
	return true
}
