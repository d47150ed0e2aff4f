package client

import (
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// A consume-transform-produce application (KIP-98's motivating case, KIP-447's fencing): a
// group member reads an input topic; for every input record it writes one output record
// with the input's value to the output topic, then commits its input positions.
//
// Transactional, each poll's output and input offsets go in one transaction: begin, the
// sends, sendOffsetsToTransaction with the member's generation and member id, commit. On
// an abort (an error, a stale generation refused by the group coordinator) it goes back to
// the group's committed offsets, so the input is processed again and the aborted output is
// never read by a read_committed consumer. Its consumer reads read_committed and its polls
// are micro-ops of its transactions, so a checker relates each output value to its input.
//
// Not transactional, it produces, waits for the acknowledgements, then commits the
// offsets with the consumer: a crash between the two writes the output again after the
// restart (at-least-once), which is the duplicate transactions remove.
//
// The consumer and the producer share the node as Kafka's application shares its process:
// the producer's timers are numbered from pipelineProducerTimers and its correlation ids
// with the pipelineProducerCorr bit set, so the node hands each answer and timer to its owner.

// PipelineConfig is what a pipeline application does.
type PipelineConfig struct {
	Group, From, To string
	Transactional   bool
	// PollEvery spaces the application's polls.
	PollEvery time.Duration
}

const (
	pipelineProducerTimers = 1000    // the producer's timers: kinds from here
	pipelineOwnTimers      = 2000    // the application's own timer: the next poll is due
	pipelineProducerCorr   = 1 << 40 // the producer's correlation ids have this bit set
)

// Pipeline application states.
const (
	pipeIdle      = iota // waiting for the next poll
	pipePolling          // a poll is in progress
	pipeInTxn            // the poll's transaction is running
	pipeProducing        // not transactional: waiting for the output's acknowledgements
	pipeStopped          // its producer was fenced or failed for good
)

// PipelineStats count what the application did, for views.
type PipelineStats struct {
	Polls, Processed, Committed, Aborted int
	State                                string
}

// Pipeline is the consume-transform-produce application node.
type Pipeline struct {
	cfg   PipelineConfig
	cons  *Consumer
	prod  *Producer
	state int
	polls int // the consumer's poll count when the current poll began
	txn   TxnStatus
	stats PipelineStats
	tick  bool // the next poll is due
}

// NewPipeline builds the application: consumer settings cc (its commits are the
// application's own; read_committed when transactional), producer settings pc
// (transactional.id set when transactional).
func NewPipeline(cfg PipelineConfig, cc proto.ConsumerConfig, pc proto.ProducerConfig, process int, brokers, controllers []string, rec *history.Recorder) *Pipeline {
	cc.Commit = proto.CommitManual
	if cfg.Transactional {
		cc.Isolation = proto.ReadCommitted
	} else {
		pc.TransactionalID = ""
	}
	c := NewConsumer(cc, process, brokers, rec)
	c.pollsInTxn, c.keepReads = cfg.Transactional, true
	c.Resubscribe(Subscribe{Group: cfg.Group, Topics: []string{cfg.From}})
	p := NewProducer(pc, process, brokers, controllers, rec)
	p.cl.timerBase, p.cl.corr = pipelineProducerTimers, pipelineProducerCorr
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 100 * time.Millisecond
	}
	return &Pipeline{cfg: cfg, cons: c, prod: p}
}

// Consumer and Producer are the application's clients, for views.
func (a *Pipeline) Consumer() *Consumer { return a.cons }
func (a *Pipeline) Producer() *Producer { return a.prod }

// Config is what the application does.
func (a *Pipeline) Config() PipelineConfig { return a.cfg }

// Stats are the application's counters.
func (a *Pipeline) Stats() PipelineStats {
	s := a.stats
	s.State = [...]string{"idle", "polling", "in transaction", "producing", "stopped"}[a.state]
	return s
}

// SetTransactionVersion is the producer's (Producer.SetTransactionVersion).
func (a *Pipeline) SetTransactionVersion(legacy bool) { a.prod.SetTransactionVersion(legacy) }

func (a *Pipeline) Start(env *sim.Env) {
	a.cons.Start(env)
	a.prod.Start(env)
	a.schedule(env)
}

func (a *Pipeline) schedule(env *sim.Env) {
	env.SetTimer(a.cfg.PollEvery, sim.TimerTag{Kind: pipelineOwnTimers})
}

func (a *Pipeline) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if producerAnswer(msg) {
		a.prod.Recv(env, from, msg)
	} else {
		a.cons.Recv(env, from, msg)
	}
	a.step(env)
}

// producerAnswer reports whether an answer is for the application's producer (its
// correlation ids have pipelineProducerCorr set).
func producerAnswer(msg sim.Message) bool {
	switch m := msg.(type) {
	case proto.MetadataResponse:
		return m.CorrelationID&pipelineProducerCorr != 0
	case proto.FindCoordinatorResponse:
		return m.CorrelationID&pipelineProducerCorr != 0
	case proto.ProduceResponse, proto.InitProducerIDResponse, proto.AddPartitionsToTxnResponse,
		proto.AddOffsetsToTxnResponse, proto.TxnOffsetCommitResponse, proto.EndTxnResponse:
		return true
	}
	return false
}

func (a *Pipeline) Timer(env *sim.Env, tag sim.TimerTag) {
	switch {
	case tag.Kind >= pipelineOwnTimers:
		a.tick = true
	case tag.Kind >= pipelineProducerTimers:
		a.prod.Timer(env, tag)
	default:
		a.cons.Timer(env, tag)
	}
	a.step(env)
}

// step moves the application on after anything happened.
func (a *Pipeline) step(env *sim.Env) {
	switch a.state {
	case pipeIdle:
		if a.tick && !a.cons.Polling() {
			a.tick = false
			a.polls = a.cons.Polls()
			a.state = pipePolling
			a.cons.Recv(env, env.Self(), Poll{})
		}
	case pipePolling:
		if a.cons.Polls() > a.polls {
			a.polled(env)
		}
	case pipeInTxn:
		a.watchTxn(env)
	case pipeProducing:
		if s := a.prod.Stats(); s.Queued+s.InFlight == 0 {
			a.cons.Recv(env, env.Self(), Commit{})
			a.idle(env)
		}
	}
}

func (a *Pipeline) idle(env *sim.Env) {
	a.state = pipeIdle
	a.schedule(env)
}

// polled hands the poll's records to the transformation.
func (a *Pipeline) polled(env *sim.Env) {
	a.stats.Polls++
	reads := a.cons.OwnedReads()
	n := 0
	for _, pr := range reads {
		n += len(pr.Records)
	}
	if n == 0 {
		a.idle(env)
		return
	}
	a.stats.Processed += n
	sends := make([]sim.Message, 0, n)
	for _, pr := range reads {
		for _, r := range pr.Records {
			sends = append(sends, Send{Topic: a.cfg.To, Value: r.Value, Partition: -1})
		}
	}
	if !a.cfg.Transactional {
		sim.Record(env, PipelineStep{Step: "produce", Records: n})
		for _, s := range sends {
			a.prod.Recv(env, env.Self(), s)
		}
		a.state = pipeProducing
		a.step(env)
		return
	}
	group, gen, _, _ := a.cons.Ownership()
	member, _ := a.cons.Member()
	offsets := make([]proto.PartitionOffset, 0, len(reads))
	for _, pr := range reads {
		last := pr.Records[len(pr.Records)-1].Offset
		offsets = append(offsets, proto.PartitionOffset{TP: proto.TP{Topic: pr.Topic, Partition: pr.Partition}, Offset: last + 1,
			LeaderEpoch: wal.UndefinedEpoch})
	}
	a.txn, _ = a.prod.Transaction()
	sim.Record(env, PipelineStep{Step: "transaction", Records: n})
	a.prod.Recv(env, env.Self(), BeginTxn{})
	a.prod.Recv(env, env.Self(), txnPoll{poll: history.PollValue{Group: group, Reads: reads, ReadCommitted: true}})
	for _, s := range sends {
		a.prod.Recv(env, env.Self(), s)
	}
	a.prod.Recv(env, env.Self(), SendOffsets{Group: group, Offsets: offsets, Generation: gen, MemberID: member.MemberID,
		InstanceID: member.InstanceID})
	a.prod.Recv(env, env.Self(), CommitTxn{})
	a.state = pipeInTxn
	a.watchTxn(env)
}

// watchTxn follows the poll's transaction to its end.
func (a *Pipeline) watchTxn(env *sim.Env) {
	st, _ := a.prod.Transaction()
	switch {
	case st.Committed > a.txn.Committed:
		a.stats.Committed++
		a.idle(env)
	case st.State == TxnFenced || st.State == TxnFatal:
		// The application closes, as Kafka's does on ProducerFencedException: its
		// consumer leaves the group, so that the partitions go to the instance that
		// fenced it (a stopped member that kept heartbeating would hold them for ever).
		a.state = pipeStopped
		sim.Record(env, PipelineStep{Step: "stop", Why: st.Why})
		a.cons.Recv(env, env.Self(), Leave{Reason: "the application stopped: " + st.Why})
	case st.State == TxnAbortable:
		a.prod.Recv(env, env.Self(), AbortTxn{})
	case st.Aborted > a.txn.Aborted || (st.State == TxnUninitialized && !a.prod.tx.open):
		// Aborted, or given up with an unknown outcome: read again from what the group
		// committed.
		a.stats.Aborted++
		sim.Record(env, PipelineStep{Step: "rewind", Why: st.Why})
		a.cons.rewindToCommitted(env)
		a.idle(env)
	}
}

// txnPoll gives the open transaction a poll of the application's consumer, in command
// order (Producer.AddPoll).
type txnPoll struct{ poll history.PollValue }

// rewindToCommitted goes back to the group's committed offsets in every owned partition,
// as an application does after aborting a transaction (it seeks to the committed offsets).
func (c *Consumer) rewindToCommitted(env *sim.Env) {
	if c.grp == nil {
		return
	}
	for _, tp := range c.assigned {
		p := c.pos[tp]
		p.offset, p.epoch = -1, wal.UndefinedEpoch
		if !slices.Contains(c.grp.unknown, tp) {
			c.grp.unknown = append(c.grp.unknown, tp)
		}
	}
	c.grp.fetchCommitted(env)
}
