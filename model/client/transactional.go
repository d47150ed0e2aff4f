package client

import (
	"fmt"
	"slices"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The transactional producer: a Producer with a transactional.id runs Kafka's
// TransactionManager (clients/src/main/java/org/apache/kafka/clients/producer/internals/
// TransactionManager.java). It finds its transaction coordinator (FindCoordinator with key
// type TRANSACTION), gets its producer id and epoch there (InitProducerId with the
// transactional.id: the coordinator bumps the epoch, fencing every older instance), then
// runs the transactions the scenario's commands open and close.
//
// Requests to the coordinators go one at a time, in Kafka's priority order (its
// TransactionManager.Priority): FindCoordinator, InitProducerId, AddPartitionsToTxn and
// AddOffsetsToTxn (then TxnOffsetCommit to the group's coordinator), EndTxn. EndTxn waits
// until every batch of the transaction has completed (TransactionManager.nextRequest).
//
// Two modes, as the client knows its broker's transaction version (Legacy.NoTxnVerification):
// before KIP-890 the producer adds each partition to the transaction itself
// (AddPartitionsToTxn) before its first batch there; with KIP-890 part 2 (transaction
// version 2) the partition leader adds it on the producer's behalf, and every EndTxn
// answer carries a bumped epoch the producer uses from the next transaction on.
//
// Simplified: one transaction at a time and one request to a coordinator at a time (as
// Kafka); max.block.ms, which bounds Kafka's blocking calls, is delivery.timeout.ms here.

// BeginTxn is the scenario's command to a transactional producer: begin a transaction
// (KafkaProducer.beginTransaction).
type BeginTxn struct{}

func (BeginTxn) String() string { return "begin transaction" }

// CommitTxn commits the open transaction: flush its batches, then EndTxn commit.
type CommitTxn struct{}

func (CommitTxn) String() string { return "commit transaction" }

// AbortTxn aborts the open transaction: its unsent batches fail, then EndTxn abort.
type AbortTxn struct{}

func (AbortTxn) String() string { return "abort transaction" }

// SendOffsets is sendOffsetsToTransaction: the group's offsets, committed with the
// transaction, and the consumer's group metadata the group coordinator fences with
// (KIP-447).
type SendOffsets struct {
	Group      string
	Offsets    []proto.PartitionOffset
	Generation int32
	MemberID   string
	InstanceID string
}

func (s SendOffsets) String() string {
	return fmt.Sprintf("send offsets %s to the transaction (group %s gen %d)", offsetsText(s.Offsets), s.Group, s.Generation)
}

// TxnState is a transactional producer's state (Kafka's TransactionManager.State).
type TxnState uint8

const (
	TxnUninitialized TxnState = iota // no producer id: InitProducerId at the next begin
	TxnInitializing                  // finding the coordinator, InitProducerId in flight
	TxnReady                         // no transaction open
	TxnInTransaction                 // a transaction is open
	TxnCommitting                    // flushing, then EndTxn commit
	TxnAborting                      // EndTxn abort
	TxnAbortable                     // an error: the open transaction can only be aborted
	TxnFenced                        // a newer instance took the transactional.id: closed for good
	TxnFatal                         // an error the producer cannot recover from: closed for good
)

func (s TxnState) String() string {
	return [...]string{"uninitialized", "initializing", "ready", "in transaction", "committing", "aborting",
		"must abort", "fenced", "failed"}[s]
}

// busy reports whether commands wait: the producer is initialising or ending a transaction.
func (s TxnState) busy() bool {
	return s == TxnInitializing || s == TxnCommitting || s == TxnAborting
}

// Transactional producer timers.
const (
	ptTxnRequest = ptCancelRetry + 1 + iota // a coordinator request got no answer; Arg = correlation id
	ptTxnRetry                              // the backoff before the next coordinator request is over
)

// txnReqKind is a coordinator request, in priority order.
type txnReqKind uint8

const (
	trFind txnReqKind = iota
	trInit
	trAddPartitions
	trAddOffsets
	trOffsetCommit
	trEndTxn
)

func (k txnReqKind) String() string {
	return [...]string{"FindCoordinator", "InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn"}[k]
}

// txnReq is one coordinator request, from its first attempt to its answer.
type txnReq struct {
	kind    txnReqKind
	corr    int64
	to      sim.NodeID
	timer   sim.TimerID
	first   sim.Time // first attempt: retries stop delivery.timeout.ms later
	tried   bool
	parts   []proto.TP  // AddPartitionsToTxn
	commit  bool        // EndTxn
	offsets SendOffsets // AddOffsetsToTxn, TxnOffsetCommit
	group   bool        // FindCoordinator: for the group's coordinator
}

// txnManager is the transactional producer's state.
type txnManager struct {
	id     string
	legacy bool // Legacy.NoTxnVerification: before KIP-890
	state  TxnState
	why    string // why the producer must abort, or stopped

	coord      sim.NodeID
	hasCoord   bool
	groupCoord sim.NodeID
	groupOf    string // the group groupCoord coordinates; "" when unknown

	cmds     []sim.Message // commands waiting for the producer to be free
	pending  []*txnReq     // in priority order
	inflight *txnReq
	retryT   sim.TimerID

	// The open transaction.
	h          history.Handle
	open       bool
	started    bool       // the coordinator knows of it: EndTxn is needed
	commitSent bool       // an EndTxn commit went out: its outcome may be unknown
	partitions []proto.TP // in the transaction, sorted
	newParts   []proto.TP // legacy: to add before their first batch
	adding     []proto.TP // legacy: in the AddPartitionsToTxn in flight
	ops        []history.MicroOp
	sendOp     map[int64]int // record number -> index in ops
	offsets    *history.CommitValue

	// bumpNeeded: a batch with a sequence ended without success. Before KIP-890 the
	// producer bumps its epoch once the transaction ended (InitProducerId with its id and
	// epoch, KIP-360) so the broker takes sequence 0 again; with KIP-890 every EndTxn bumps.
	bumpNeeded bool

	committed, aborted int
}

// TxnStatus is a transactional producer's state, for views.
type TxnStatus struct {
	ID         string
	State      TxnState
	PID        int64
	Epoch      int16
	Partitions []proto.TP // in the open transaction
	Committed  int
	Aborted    int
	Why        string // why it must abort, or stopped
}

// Transaction is the producer's transaction state, and false if it is not transactional.
func (p *Producer) Transaction() (TxnStatus, bool) {
	if p.tx == nil {
		return TxnStatus{}, false
	}
	t := p.tx
	return TxnStatus{ID: t.id, State: t.state, PID: p.pid, Epoch: p.pidEpoch, Partitions: slices.Clone(t.partitions),
		Committed: t.committed, Aborted: t.aborted, Why: t.why}, true
}

// TxnSends are the open transaction's sends so far, in order, each with the offset its
// partition's leader gave it once acknowledged (history.NoOffset before); none when no
// transaction is open. For views: it copies.
func (p *Producer) TxnSends() []history.SendValue {
	if p.tx == nil || !p.tx.open {
		return nil
	}
	var sends []history.SendValue
	for _, op := range p.tx.ops {
		if op.F == history.Send {
			sends = append(sends, *op.Send)
		}
	}
	return sends
}

// SetTransactionVersion tells a transactional producer whether its brokers run KIP-890
// (transaction version 2) or not (legacy: Legacy.NoTxnVerification), as Kafka's client
// learns it from the brokers' ApiVersions.
func (p *Producer) SetTransactionVersion(legacy bool) {
	if p.tx != nil {
		p.tx.legacy = legacy
	}
}

func newTxnManager(cfg proto.ProducerConfig) *txnManager {
	if cfg.TransactionalID == "" {
		return nil
	}
	return &txnManager{id: cfg.TransactionalID, sendOp: map[int64]int{}}
}

func (p *Producer) txnID() string {
	if p.tx == nil {
		return ""
	}
	return p.tx.id
}

// txnStart initialises the transactions at start (KafkaProducer.initTransactions): a
// restarted instance re-initialises, which fences its previous life.
func (p *Producer) txnStart(env *sim.Env) {
	p.txnInit(env, false)
	p.txnRun(env)
}

// txnInit asks for a producer id; bump keeps the current one (KIP-360's epoch bump).
func (p *Producer) txnInit(env *sim.Env, bump bool) {
	t := p.tx
	t.state = TxnInitializing
	p.pidReady = false
	if !bump {
		p.pid, p.pidEpoch = wal.NoProducerID, wal.NoProducerEpoch
	}
	t.enqueue(&txnReq{kind: trInit})
}

// txnRecv takes commands and the coordinators' answers; it reports whether msg was one.
func (p *Producer) txnRecv(env *sim.Env, from sim.NodeID, msg sim.Message) bool {
	t := p.tx
	switch m := msg.(type) {
	case Send, BeginTxn, CommitTxn, AbortTxn, SendOffsets, txnPoll:
		t.cmds = append(t.cmds, m)
	case proto.FindCoordinatorResponse:
		if r := p.txnAnswer(env, m.CorrelationID); r != nil {
			p.onTxnCoordinator(env, r, m)
		}
	case proto.InitProducerIDResponse:
		if r := p.txnAnswer(env, m.CorrelationID); r != nil {
			p.txnResult(env, r, m.Error, func() {
				p.pid, p.pidEpoch, p.pidReady = m.ProducerID, m.ProducerEpoch, true
				t.state, t.why = TxnReady, ""
				sim.Record(env, TxnInitialized{ID: t.id, PID: m.ProducerID, Epoch: m.ProducerEpoch})
			})
		}
	case proto.AddPartitionsToTxnResponse:
		if r := p.txnAnswer(env, m.CorrelationID); r != nil {
			p.txnResult(env, r, m.Error, func() {
				t.started = true
				t.adding = nil
				if env.Tracing() {
					sim.Record(env, TxnPartitionsAdded{ID: t.id, Partitions: slices.Clone(r.parts)})
				}
				p.drain(env)
			})
		}
	case proto.AddOffsetsToTxnResponse:
		if r := p.txnAnswer(env, m.CorrelationID); r != nil {
			p.txnResult(env, r, m.Error, func() {
				t.started = true
				t.enqueue(&txnReq{kind: trOffsetCommit, offsets: r.offsets})
			})
		}
	case proto.TxnOffsetCommitResponse:
		if r := p.txnAnswer(env, m.CorrelationID); r != nil {
			p.txnResult(env, r, m.Error, func() { p.txnOffsetsCommitted(env, r.offsets) })
		}
	case proto.EndTxnResponse:
		if r := p.txnAnswer(env, m.CorrelationID); r != nil {
			p.txnResult(env, r, m.Error, func() { p.txnEnded(env, r.commit, m) })
		}
	default:
		return false
	}
	return true
}

// txnTimer handles the transaction timers; it reports whether tag was one.
func (p *Producer) txnTimer(env *sim.Env, tag sim.TimerTag) bool {
	t := p.tx
	switch tag.Kind {
	case ptTxnRequest:
		if r := t.inflight; r != nil && r.corr == tag.Arg {
			t.inflight = nil
			p.txnRetry(env, r, proto.RequestTimedOut, true)
		}
	case ptTxnRetry:
		t.retryT = 0
	default:
		return false
	}
	return true
}

// txnRun carries out the waiting commands while the producer is free, then sends the next
// coordinator request. It runs after every message and timer.
func (p *Producer) txnRun(env *sim.Env) {
	t := p.tx
	for len(t.cmds) > 0 && !t.state.busy() {
		cmd := t.cmds[0]
		t.cmds = t.cmds[1:]
		p.txnCommand(env, cmd)
	}
	p.txnNext(env)
}

func (p *Producer) txnRefuse(env *sim.Env, cmd fmt.Stringer) {
	sim.Record(env, TxnRefused{ID: p.tx.id, Cmd: cmd, State: p.tx.state})
}

func (p *Producer) txnCommand(env *sim.Env, cmd sim.Message) {
	t := p.tx
	switch m := cmd.(type) {
	case BeginTxn:
		switch t.state {
		case TxnUninitialized:
			// A producer that gave up on its coordinator initialises again, keeping its
			// id (KIP-360): the coordinator finishes what it left open.
			p.txnInit(env, p.pid != wal.NoProducerID)
			t.cmds = slices.Insert(t.cmds, 0, cmd)
		case TxnReady:
			t.state, t.open, t.started, t.commitSent = TxnInTransaction, true, false, false
			t.ops, t.offsets, t.partitions, t.newParts = nil, nil, nil, nil
			clear(t.sendOp)
			if p.rec != nil {
				t.h = p.rec.InvokeTxn(p.now(env), p.process, t.id)
			}
			sim.Record(env, TxnBegun{ID: t.id, PID: p.pid, Epoch: p.pidEpoch})
		default:
			p.txnRefuse(env, m)
		}
	case Send:
		if t.state != TxnInTransaction || m.Delay > 0 {
			p.txnRefuse(env, m)
			return
		}
		p.onSend(env, m)
	case txnPoll:
		p.AddPoll(m.poll)
	case SendOffsets:
		if t.state != TxnInTransaction || len(m.Offsets) == 0 {
			p.txnRefuse(env, m)
			return
		}
		m.Offsets = slices.Clone(m.Offsets)
		t.enqueue(&txnReq{kind: trAddOffsets, offsets: m})
	case CommitTxn:
		if t.state != TxnInTransaction {
			p.txnRefuse(env, m)
			return
		}
		t.state = TxnCommitting
		p.flush(env)
		t.enqueue(&txnReq{kind: trEndTxn, commit: true})
	case AbortTxn:
		if t.state != TxnInTransaction && t.state != TxnAbortable {
			p.txnRefuse(env, m)
			return
		}
		t.state = TxnAborting
		t.newParts = nil
		p.dropUnsent(env, "transaction aborted")
		t.enqueue(&txnReq{kind: trEndTxn})
	}
}

// flush makes every waiting batch ready to go now (KafkaProducer.flush, which
// commitTransaction calls).
func (p *Producer) flush(env *sim.Env) {
	for _, tp := range p.partOrder {
		for _, b := range p.parts[tp].queue {
			b.lingered = true
		}
	}
	p.drain(env)
}

// dropUnsent fails every batch not sent yet, as Kafka's Sender aborts the undrained
// batches of a transaction being aborted (RecordAccumulator.abortUndrainedBatches).
func (p *Producer) dropUnsent(env *sim.Env, why string) {
	for _, tp := range p.partOrder {
		for _, b := range slices.Clone(p.parts[tp].queue) {
			if !b.inflight && !b.done {
				p.finish(env, b, why)
			}
		}
	}
	for _, r := range p.waiting {
		env.CancelTimer(r.timer)
		p.stats.Failed++
	}
	p.waiting = nil
}

// unsettled reports whether a batch of the producer has not completed.
func (p *Producer) unsettled() bool {
	if len(p.waiting) > 0 {
		return true
	}
	for _, tp := range p.partOrder {
		ps := p.parts[tp]
		if len(ps.queue) > 0 || slices.ContainsFunc(ps.inflight, func(b *batch) bool { return !b.done }) {
			return true
		}
	}
	return false
}

func (t *txnManager) enqueue(r *txnReq) {
	i := 0
	for i < len(t.pending) && t.pending[i].kind <= r.kind {
		i++
	}
	t.pending = slices.Insert(t.pending, i, r)
}

// requeue puts a request back first among its kind, to be tried again.
func (t *txnManager) requeue(r *txnReq) {
	i := 0
	for i < len(t.pending) && t.pending[i].kind < r.kind {
		i++
	}
	t.pending = slices.Insert(t.pending, i, r)
}

// txnNext sends the next coordinator request, if one may go.
func (p *Producer) txnNext(env *sim.Env) {
	t := p.tx
	if len(p.cl.brokers) == 0 {
		return
	}
	if t.legacy && len(t.newParts) > 0 && len(t.adding) == 0 && (t.state == TxnInTransaction || t.state == TxnCommitting) {
		t.adding, t.newParts = t.newParts, nil
		t.enqueue(&txnReq{kind: trAddPartitions, parts: slices.Clone(t.adding)})
	}
	for t.inflight == nil && t.retryT == 0 && len(t.pending) > 0 {
		r := t.pending[0]
		if r.kind == trEndTxn {
			if p.unsettled() {
				return // Kafka's nextRequest: EndTxn waits for the transaction's batches
			}
			if !t.started {
				// The coordinator never heard of the transaction: it ends here.
				t.pending = t.pending[1:]
				p.txnEnded(env, r.commit, proto.EndTxnResponse{ProducerID: p.pid, ProducerEpoch: wal.NoProducerEpoch})
				continue
			}
		}
		group := r.kind == trOffsetCommit
		if (group && t.groupOf != r.offsets.Group) || (!group && !t.hasCoord && r.kind != trFind) {
			f := &txnReq{kind: trFind, group: group, offsets: r.offsets}
			t.enqueue(f)
			continue
		}
		t.pending = t.pending[1:]
		p.txnSend(env, r)
	}
}

func (p *Producer) txnSend(env *sim.Env, r *txnReq) {
	t := p.tx
	if !r.tried {
		r.tried, r.first = true, env.Now()
	}
	r.corr = p.cl.newCorr()
	var msg sim.Message
	switch r.kind {
	case trFind:
		if len(p.cl.brokers) == 0 {
			return
		}
		r.to = p.cl.brokers[p.cl.next]
		if r.group {
			msg = proto.FindCoordinator{CorrelationID: r.corr, Group: r.offsets.Group, KeyType: proto.GroupCoordinator}
		} else {
			msg = proto.FindCoordinator{CorrelationID: r.corr, Group: t.id, KeyType: proto.TransactionCoordinator}
		}
	case trInit:
		r.to = t.coord
		msg = proto.InitProducerID{CorrelationID: r.corr, TransactionalID: t.id, TransactionTimeout: p.cfg.TransactionTimeout,
			ProducerID: p.pid, ProducerEpoch: p.pidEpoch}
	case trAddPartitions:
		r.to = t.coord
		msg = proto.AddPartitionsToTxn{CorrelationID: r.corr, TransactionalID: t.id, ProducerID: p.pid, ProducerEpoch: p.pidEpoch,
			Partitions: slices.Clone(r.parts)}
	case trAddOffsets:
		r.to = t.coord
		msg = proto.AddOffsetsToTxn{CorrelationID: r.corr, TransactionalID: t.id, ProducerID: p.pid, ProducerEpoch: p.pidEpoch,
			Group: r.offsets.Group}
	case trOffsetCommit:
		r.to = t.groupCoord
		o := r.offsets
		msg = proto.TxnOffsetCommit{CorrelationID: r.corr, TransactionalID: t.id, Group: o.Group, ProducerID: p.pid,
			ProducerEpoch: p.pidEpoch, Generation: o.Generation, MemberID: o.MemberID, InstanceID: o.InstanceID,
			Offsets: slices.Clone(o.Offsets)}
	case trEndTxn:
		r.to = t.coord
		t.commitSent = t.commitSent || r.commit
		msg = proto.EndTxn{CorrelationID: r.corr, TransactionalID: t.id, ProducerID: p.pid, ProducerEpoch: p.pidEpoch, Commit: r.commit}
	}
	env.Send(r.to, msg)
	r.timer = env.SetTimer(p.cfg.RequestTimeout, sim.TimerTag{Kind: p.cl.timerBase + ptTxnRequest, Arg: r.corr})
	t.inflight = r
}

// txnAnswer ends the coordinator request an answer belongs to; nil if none awaits it.
func (p *Producer) txnAnswer(env *sim.Env, corr int64) *txnReq {
	t := p.tx
	r := t.inflight
	if r == nil || r.corr != corr {
		return nil
	}
	env.CancelTimer(r.timer)
	t.inflight = nil
	return r
}

func (p *Producer) onTxnCoordinator(env *sim.Env, r *txnReq, m proto.FindCoordinatorResponse) {
	t := p.tx
	if m.Error != proto.None {
		p.cl.rotate()
		p.txnRetry(env, r, m.Error, false)
		return
	}
	if r.group {
		t.groupCoord, t.groupOf = m.Coordinator, r.offsets.Group
	} else {
		t.coord, t.hasCoord = m.Coordinator, true
	}
	sim.Record(env, TxnCoordinatorFound{ID: t.id, Group: groupKey(r), Coordinator: env.NameOf(m.Coordinator)})
}

func groupKey(r *txnReq) string {
	if r.group {
		return r.offsets.Group
	}
	return ""
}

// txnResult acts on a coordinator's answer as Kafka's TxnRequestHandlers do: success;
// fenced (fatal); the coordinator moved (find it again and retry); retriable (retry after
// the backoff); abortable; anything else fatal.
func (p *Producer) txnResult(env *sim.Env, r *txnReq, e proto.Error, ok func()) {
	switch e {
	case proto.None:
		ok()
	case proto.ProducerFenced, proto.InvalidProducerEpoch:
		p.txnFence(env, e)
	case proto.NotCoordinator, proto.CoordinatorNotAvailable:
		p.txnRetry(env, r, e, true)
	case proto.ConcurrentTransactions, proto.CoordinatorLoadInProgress, proto.RequestTimedOut, proto.UnknownTopicOrPartition,
		proto.NotEnoughReplicas, proto.NotEnoughReplicasAfterAppend, proto.NetworkException:
		p.txnRetry(env, r, e, false)
	case proto.TransactionAbortable, proto.InvalidProducerIDMapping, proto.IllegalGeneration, proto.UnknownMemberID,
		proto.FencedInstanceID:
		p.txnAbortable(env, fmt.Sprintf("%s: %s", r.kind, e))
	default:
		p.txnFatal(env, fmt.Sprintf("%s: %s", r.kind, e))
	}
}

// txnRetry tries a request again after retry.backoff.ms, finding its coordinator again
// first if it moved, until delivery.timeout.ms after its first attempt.
func (p *Producer) txnRetry(env *sim.Env, r *txnReq, e proto.Error, moved bool) {
	t := p.tx
	if moved {
		if r.kind == trOffsetCommit || (r.kind == trFind && r.group) {
			t.groupOf = ""
		} else {
			t.hasCoord = false
		}
		if r.kind == trFind {
			p.cl.rotate()
		}
	}
	if env.Now() >= r.first.Add(p.cfg.DeliveryTimeout) {
		p.txnGiveUp(env, r, e)
		return
	}
	sim.Record(env, TxnRetry{ID: t.id, Request: r.kind.String(), Err: e, After: p.cfg.RetryBackoff})
	t.requeue(r)
	t.retryT = env.SetTimer(p.cfg.RetryBackoff, sim.TimerTag{Kind: p.cl.timerBase + ptTxnRetry})
}

// txnGiveUp ends a request that kept failing. A FindCoordinator gives up the request it
// was for.
func (p *Producer) txnGiveUp(env *sim.Env, r *txnReq, e proto.Error) {
	t := p.tx
	if r.kind == trFind && len(t.pending) > 0 {
		r = t.pending[0]
		t.pending = t.pending[1:]
	}
	why := fmt.Sprintf("%s: %s for %s", r.kind, e, p.cfg.DeliveryTimeout)
	sim.Record(env, TxnGaveUp{ID: t.id, Request: r.kind.String(), Err: e, After: p.cfg.DeliveryTimeout})
	switch r.kind {
	case trInit:
		t.state, t.why = TxnUninitialized, why
	case trEndTxn:
		// The outcome is the coordinator's now: a commit may have happened. The next
		// begin initialises again, and the coordinator completes or aborts what is open.
		p.txnComplete(env, t.commitSent, false, why)
		t.pending = nil
		t.state, t.why = TxnUninitialized, why
		p.pidReady = false
	default:
		p.txnAbortable(env, why)
	}
}

// txnAbortable: the open transaction can no longer commit; the application must abort it.
func (p *Producer) txnAbortable(env *sim.Env, why string) {
	t := p.tx
	if t.state != TxnInTransaction && t.state != TxnCommitting {
		return
	}
	t.state, t.why = TxnAbortable, why
	t.pending = slices.DeleteFunc(t.pending, func(r *txnReq) bool { return r.kind == trEndTxn || r.kind == trOffsetCommit || r.kind == trAddOffsets })
	sim.Record(env, TxnMustAbort{ID: t.id, Why: why})
}

// txnFence closes the producer for good: a newer instance holds the transactional.id.
func (p *Producer) txnFence(env *sim.Env, e proto.Error) {
	p.txnStop(env, TxnFenced, fmt.Sprintf("fenced: %s", e))
}

func (p *Producer) txnFatal(env *sim.Env, why string) { p.txnStop(env, TxnFatal, why) }

func (p *Producer) txnStop(env *sim.Env, state TxnState, why string) {
	t := p.tx
	if t.state == TxnFenced || t.state == TxnFatal {
		return
	}
	t.state, t.why = state, why
	sim.Record(env, TxnStopped{ID: t.id, PID: p.pid, Epoch: p.pidEpoch, Why: why, Fenced: state == TxnFenced})
	p.txnComplete(env, t.commitSent, false, why)
	if t.inflight != nil {
		env.CancelTimer(t.inflight.timer)
		t.inflight = nil
	}
	t.pending = nil
	p.pidReady = false
	p.dropUnsent(env, why)
	for _, c := range t.cmds {
		if s, ok := c.(fmt.Stringer); ok {
			p.txnRefuse(env, s)
		}
	}
	t.cmds = nil
}

// txnEnded completes the transaction after EndTxn's answer. With KIP-890 the answer
// carries the epoch to use from now on; the sequences start at 0 under it.
func (p *Producer) txnEnded(env *sim.Env, commit bool, m proto.EndTxnResponse) {
	t := p.tx
	if !t.legacy && m.ProducerEpoch != wal.NoProducerEpoch && m.ProducerID != wal.NoProducerID {
		p.pid, p.pidEpoch = m.ProducerID, m.ProducerEpoch
	}
	p.txnComplete(env, false, commit, "")
	t.state, t.why = TxnReady, ""
	if t.bumpNeeded {
		t.bumpNeeded = false
		if t.legacy {
			p.txnInit(env, true)
		}
	}
}

// txnComplete records the end of the open transaction: committed, aborted, or (unknown)
// with an outcome the producer cannot know.
func (p *Producer) txnComplete(env *sim.Env, unknown, commit bool, why string) {
	t := p.tx
	if !t.open {
		return
	}
	t.open = false
	now := p.now(env)
	outcome := history.Fail
	switch {
	case unknown:
		outcome = history.Info
	case commit:
		outcome = history.Ok
		t.committed++
	default:
		t.aborted++
	}
	if why == "" && !commit {
		why = "aborted"
	}
	if p.rec != nil {
		res := history.Result{TxnOps: t.ops, TxnOffsets: t.offsets}
		if outcome != history.Ok {
			res.Error = why
		}
		switch outcome {
		case history.Ok:
			p.rec.Ok(now, t.h, res)
		case history.Info:
			p.rec.Info(now, t.h, res)
		default:
			p.rec.Fail(now, t.h, res)
		}
	}
	if env.Tracing() {
		// Sends counts the sends only: a pipeline's transaction also holds its poll.
		sends := 0
		for _, op := range t.ops {
			if op.F == history.Send {
				sends++
			}
		}
		sim.Record(env, TxnEnded{ID: t.id, Outcome: outcome, Sends: sends, PID: p.pid, Epoch: p.pidEpoch, Why: why})
	}
	t.partitions, t.newParts, t.adding = nil, nil, nil
}

func (p *Producer) txnOffsetsCommitted(env *sim.Env, o SendOffsets) {
	t := p.tx
	if t.offsets == nil || t.offsets.Group != o.Group {
		t.offsets = &history.CommitValue{Group: o.Group}
	}
	for _, po := range o.Offsets {
		h := history.PartitionOffset{TopicPartition: htp(po.TP), Offset: po.Offset}
		if i := slices.IndexFunc(t.offsets.Offsets, func(x history.PartitionOffset) bool { return x.TopicPartition == h.TopicPartition }); i >= 0 {
			t.offsets.Offsets[i] = h
		} else {
			t.offsets.Offsets = append(t.offsets.Offsets, h)
		}
	}
	p.txnProgress()
	if env.Tracing() {
		sim.Record(env, TxnOffsetsAdded{ID: t.id, Group: o.Group, Offsets: slices.Clone(o.Offsets)})
	}
}

// AddPoll gives the open transaction a poll of the consumer that feeds it, as a micro-op
// of its history op (a consume-transform-produce application).
func (p *Producer) AddPoll(poll history.PollValue) {
	if p.tx == nil || !p.tx.open {
		return
	}
	p.tx.ops = append(p.tx.ops, history.MicroOp{F: history.Poll,
		Poll: &history.PollValue{Group: poll.Group, Reads: poll.Reads, ReadCommitted: poll.ReadCommitted}})
	p.txnProgress()
}

// txnProgress tells the history what the open transaction did so far, so that a
// crash inside it still leaves its sends and polls in the history (as an info
// transaction: Recorder.Final).
func (p *Producer) txnProgress() {
	if t := p.tx; p.rec != nil && t.open {
		p.rec.TxnProgress(t.h, history.Result{TxnOps: t.ops, TxnOffsets: t.offsets})
	}
}

// --- hooks the producer calls ---

// txnSending takes a send into the open transaction: a micro-op, and (legacy) a
// partition to add.
func (p *Producer) txnSending(r *record) {
	t := p.tx
	t.sendOp[r.n] = len(t.ops)
	t.ops = append(t.ops, history.MicroOp{F: history.Send,
		Send: &history.SendValue{TopicPartition: htp(r.tp), Key: r.key, Value: r.value, Offset: history.NoOffset}})
	p.txnProgress()
	i, found := slices.BinarySearchFunc(t.partitions, r.tp, proto.CompareTP)
	if !found {
		t.partitions = slices.Insert(t.partitions, i, r.tp)
		if t.legacy {
			t.newParts = append(t.newParts, r.tp)
		}
	}
}

// txnMaySend reports whether a batch to tp may go: before KIP-890, only once the
// coordinator added its partition to the transaction.
func (p *Producer) txnMaySend(tp proto.TP) bool {
	t := p.tx
	return !t.legacy || (!slices.Contains(t.newParts, tp) && !slices.Contains(t.adding, tp))
}

// txnBatchSent notes that a transactional batch left: with KIP-890 the leader adds its
// partition, so the coordinator knows of the transaction.
func (p *Producer) txnBatchSent() {
	if !p.tx.legacy {
		p.tx.started = true
	}
}

// sendDone completes one send: a history op of its own, or a micro-op of the open
// transaction. A transactional send that did not succeed makes the transaction abortable.
func (p *Producer) sendDone(env *sim.Env, r *record, t history.Type, res history.Result) {
	if p.onDone != nil {
		p.onDone(env, r.tp, t, res.Offset)
	}
	if p.tx == nil {
		if p.rec == nil {
			return
		}
		switch t {
		case history.Ok:
			p.rec.Ok(p.now(env), r.h, res)
		case history.Info:
			p.rec.Info(p.now(env), r.h, res)
		default:
			p.rec.Fail(p.now(env), r.h, res)
		}
		return
	}
	i, ok := p.tx.sendOp[r.n]
	if !ok || !p.tx.open {
		return
	}
	delete(p.tx.sendOp, r.n)
	if t == history.Ok {
		p.tx.ops[i].Send.Offset = res.Offset
		p.txnProgress()
		return
	}
	p.txnAbortable(env, "send failed: "+res.Error)
}

// fencedError reports whether a produce error means a newer producer instance took over.
// Only PRODUCER_FENCED does: a batch refused with INVALID_PRODUCER_EPOCH (the leader has
// seen a newer epoch of this producer id) fails like any failed batch, and the
// transaction must abort (KIP-588; TransactionManager.maybeTransitionToErrorState makes
// InvalidProducerEpochException abortable, ProducerFencedException fatal). The fence then
// comes from the coordinator, which answers the abort's EndTxn with PRODUCER_FENCED.
func fencedError(e proto.Error) bool {
	return e == proto.ProducerFenced
}

// TxnBusy reports whether a transactional producer holds commands it has not carried out.
func (p *Producer) TxnBusy() bool { return p.tx != nil && len(p.tx.cmds) > 0 }

// CrashedInTxn completes, as indeterminate, the transaction this instance had open when
// its node crashed, at time now: a crashed node runs no code, so the cluster calls it when
// the node restarts as a new instance. The history names a transaction's sends and polls
// only in its completion, and without one the checkers would know nothing of records the
// coordinator may still commit (an EndTxn commit already sent) or the partitions hold
// until the abort (read by read_uncommitted consumers meanwhile).
func (p *Producer) CrashedInTxn(now int64) {
	t := p.tx
	if t == nil || !t.open || p.rec == nil {
		return
	}
	t.open = false
	p.rec.Info(now, t.h, history.Result{TxnOps: t.ops, TxnOffsets: t.offsets, Error: "the producer crashed"})
}
