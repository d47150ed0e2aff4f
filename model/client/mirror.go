package client

import (
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// MirrorConfig is what a Mirror replicates and how often it syncs and checkpoints
// (the package doc's "MirrorMaker 2" section says how it works and what it simplifies).
type MirrorConfig struct {
	// SourceAlias names the source cluster: the remote topic of topic T is SourceAlias.T.
	SourceAlias string
	// Partitions are the source partitions to replicate.
	Partitions []proto.TP
	// Groups are the consumer groups whose offsets are checkpointed.
	Groups []string
	// PollEvery spaces the source task's polls.
	PollEvery time.Duration
	// CheckpointEvery is emit.checkpoints.interval.seconds (Kafka: 60s).
	CheckpointEvery time.Duration
	// FlushEvery is Connect's offset.flush.interval.ms (60s), when delayed syncs go out.
	FlushEvery time.Duration
	// OffsetLagMax is offset.lag.max (100).
	OffsetLagMax int64
}

// DefaultMirrorConfig has MM2's and Connect's defaults.
func DefaultMirrorConfig(alias string) MirrorConfig {
	return MirrorConfig{SourceAlias: alias, PollEvery: 100 * time.Millisecond, CheckpointEvery: 60 * time.Second,
		FlushEvery: 60 * time.Second, OffsetLagMax: 100}
}

// RemoteTopic is DefaultReplicationPolicy.formatRemoteTopic: alias, separator ".", topic.
func RemoteTopic(alias, topic string) string { return alias + "." + topic }

// OffsetSync pairs an upstream offset with the downstream offset of the same record.
type OffsetSync struct{ Upstream, Downstream int64 }

// Checkpoint is a group's committed offset of a source partition and its translation
// to the remote topic, as of At.
type Checkpoint struct {
	Group                string
	TP                   proto.TP // the source partition
	Upstream, Downstream int64
	At                   sim.Time
}

// MirrorPartition is a replicated partition's state, for views.
type MirrorPartition struct {
	TP proto.TP
	// Replicated is one past the last upstream offset the target acknowledged.
	Replicated int64
	// Syncs are the offset syncs emitted, oldest first.
	Syncs []OffsetSync
}

type mirrorPart struct {
	inFlight   []int64 // upstream offsets of the sends not yet answered, in send order
	replicated int64
	// OffsetSyncWriter.PartitionState
	prevUp, prevDown, lastSyncDown int64
	should                         bool
	delayed                        *OffsetSync
	syncs                          []OffsetSync
}

const (
	mirrorTick       = 3000 // the application's timers: the next poll is due
	mirrorCheckpoint = 3001 // the checkpoint task's interval
	mirrorFlush      = 3002 // the source task's offset flush
	mirrorCorr       = 1 << 41
)

// Mirror is the replicator node: a consumer of the source cluster and a producer to the
// target cluster share it, as Pipeline's share an application.
type Mirror struct {
	cfg       MirrorConfig
	cons      *Consumer
	prod      *Producer
	parts     map[proto.TP]*mirrorPart
	producing bool // a poll's records are being written
	polls     int  // the consumer's poll count when the current poll began
	polling   bool
	// checkpoints: the latest per group and source partition.
	checkpoints []Checkpoint
	findCorr    int64
	fetchCorr   int64
	group       int // the group being checkpointed now (index into cfg.Groups)
}

// NewMirror builds the replicator: source and target are the two clusters' broker
// names, targetControllers the target's controllers (the idempotent producer's ids).
func NewMirror(cfg MirrorConfig, cc proto.ConsumerConfig, pc proto.ProducerConfig, process int, source, target, targetControllers []string, rec *history.Recorder) *Mirror {
	m := &Mirror{cfg: cfg, parts: map[proto.TP]*mirrorPart{}}
	cc.Commit = proto.CommitManual
	m.cons = NewConsumer(cc, process, source, rec)
	m.cons.keepReads = true
	m.prod = NewProducer(pc, process, target, targetControllers, rec)
	m.prod.cl.timerBase, m.prod.cl.corr = pipelineProducerTimers, pipelineProducerCorr
	m.prod.onDone = m.sent
	for _, tp := range cfg.Partitions {
		m.parts[tp] = &mirrorPart{prevUp: -1, prevDown: -1, lastSyncDown: -1}
	}
	return m
}

// Config is what the mirror replicates.
func (m *Mirror) Config() MirrorConfig { return m.cfg }

// Partitions are the replicated partitions' states, in the configured order.
func (m *Mirror) Partitions() []MirrorPartition {
	var out []MirrorPartition
	for _, tp := range m.cfg.Partitions {
		p := m.parts[tp]
		out = append(out, MirrorPartition{TP: tp, Replicated: p.replicated, Syncs: slices.Clone(p.syncs)})
	}
	return out
}

// Checkpoints are the latest checkpoint of each group and partition, sorted.
func (m *Mirror) Checkpoints() []Checkpoint { return slices.Clone(m.checkpoints) }

func (m *Mirror) Start(env *sim.Env) {
	m.cons.Start(env)
	m.prod.Start(env)
	m.cons.Recv(env, env.Self(), Assign{Partitions: slices.Clone(m.cfg.Partitions), FromBeginning: true})
	env.SetTimer(m.cfg.PollEvery, sim.TimerTag{Kind: mirrorTick})
	env.SetTimer(m.cfg.CheckpointEvery, sim.TimerTag{Kind: mirrorCheckpoint})
	env.SetTimer(m.cfg.FlushEvery, sim.TimerTag{Kind: mirrorFlush})
}

func (m *Mirror) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch r := msg.(type) {
	case proto.FindCoordinatorResponse:
		if r.CorrelationID&mirrorCorr != 0 {
			m.onCoordinator(env, r)
			return
		}
	case proto.OffsetFetchResponse:
		if r.CorrelationID&mirrorCorr != 0 {
			m.onOffsets(env, r)
			return
		}
	}
	if producerAnswer(msg) {
		m.prod.Recv(env, from, msg)
	} else {
		m.cons.Recv(env, from, msg)
	}
	m.step(env)
}

func (m *Mirror) Timer(env *sim.Env, tag sim.TimerTag) {
	switch {
	case tag.Kind == mirrorTick:
		env.SetTimer(m.cfg.PollEvery, sim.TimerTag{Kind: mirrorTick})
		if !m.polling && !m.producing && !m.cons.Polling() {
			m.polling, m.polls = true, m.cons.Polls()
			m.cons.Recv(env, env.Self(), Poll{})
		}
	case tag.Kind == mirrorCheckpoint:
		env.SetTimer(m.cfg.CheckpointEvery, sim.TimerTag{Kind: mirrorCheckpoint})
		m.group = 0
		m.findCoordinator(env)
	case tag.Kind == mirrorFlush:
		env.SetTimer(m.cfg.FlushEvery, sim.TimerTag{Kind: mirrorFlush})
		for _, tp := range m.cfg.Partitions {
			if p := m.parts[tp]; p.delayed != nil {
				m.emitSync(env, tp, p, *p.delayed)
			}
		}
	case tag.Kind >= pipelineProducerTimers:
		m.prod.Timer(env, tag)
	default:
		m.cons.Timer(env, tag)
	}
	m.step(env)
}

// step writes a finished poll's records to the target.
func (m *Mirror) step(env *sim.Env) {
	if m.producing {
		if s := m.prod.Stats(); s.Queued+s.InFlight == 0 {
			m.producing = false
		}
		return
	}
	if !m.polling || m.cons.Polls() == m.polls {
		return
	}
	m.polling = false
	n := 0
	for _, pr := range m.cons.lastReads {
		tp := proto.TP{Topic: pr.Topic, Partition: pr.Partition}
		p, ok := m.parts[tp]
		if !ok {
			continue
		}
		for _, r := range pr.Records {
			p.inFlight = append(p.inFlight, r.Offset)
			m.prod.Recv(env, env.Self(), Send{Topic: RemoteTopic(m.cfg.SourceAlias, tp.Topic), Partition: tp.Partition, Value: r.Value})
			n++
		}
	}
	m.producing = n > 0
}

// sent hears the outcome of one send to the target: an acknowledged record moves the
// partition's offset-sync state (OffsetSyncWriter.maybeQueueOffsetSyncs).
func (m *Mirror) sent(env *sim.Env, remote proto.TP, t history.Type, offset int64) {
	for _, tp := range m.cfg.Partitions {
		if RemoteTopic(m.cfg.SourceAlias, tp.Topic) != remote.Topic || tp.Partition != remote.Partition {
			continue
		}
		p := m.parts[tp]
		if len(p.inFlight) == 0 {
			return
		}
		up := p.inFlight[0]
		p.inFlight = p.inFlight[1:]
		if t != history.Ok || offset < 0 {
			return
		}
		p.replicated = max(p.replicated, up+1)
		if m.syncDue(p, up, offset) {
			m.emitSync(env, tp, p, OffsetSync{Upstream: up, Downstream: offset})
		} else {
			p.delayed = &OffsetSync{Upstream: up, Downstream: offset}
		}
		return
	}
}

// syncDue is OffsetSyncWriter.PartitionState.update.
func (m *Mirror) syncDue(p *mirrorPart, up, down int64) bool {
	if p.lastSyncDown == -1 || down-(p.lastSyncDown+1) >= m.cfg.OffsetLagMax || up-p.prevUp != 1 || down < p.prevDown {
		p.lastSyncDown = down
		p.should = true
	}
	p.prevUp, p.prevDown = up, down
	return p.should
}

func (m *Mirror) emitSync(env *sim.Env, tp proto.TP, p *mirrorPart, s OffsetSync) {
	p.should, p.delayed = false, nil
	p.syncs = append(p.syncs, s)
	sim.Record(env, MirrorOffsetSync{TP: tp, Upstream: s.Upstream, Downstream: s.Downstream})
}

// Translate is OffsetSyncStore.translateDownstream for source partition tp: the
// downstream offset a consumer of the remote topic starts from, or false when no sync
// at or before upstream is known.
func (m *Mirror) Translate(tp proto.TP, upstream int64) (int64, bool) {
	p, ok := m.parts[tp]
	if !ok {
		return 0, false
	}
	return translate(p.syncs, upstream)
}

func translate(syncs []OffsetSync, upstream int64) (int64, bool) {
	for i := len(syncs) - 1; i >= 0; i-- {
		if s := syncs[i]; s.Upstream <= upstream {
			if s.Upstream == upstream {
				return s.Downstream, true
			}
			return s.Downstream + 1, true
		}
	}
	return 0, false
}

func (m *Mirror) findCoordinator(env *sim.Env) {
	if m.group >= len(m.cfg.Groups) || len(m.cons.cl.brokers) == 0 {
		return
	}
	m.findCorr = m.cons.cl.newCorr() | mirrorCorr
	m.cons.cl.rotate() // a lost answer is not waited for: the next interval asks another broker
	env.Send(m.cons.cl.brokers[m.cons.cl.next], proto.FindCoordinator{CorrelationID: m.findCorr, Group: m.cfg.Groups[m.group]})
}

func (m *Mirror) onCoordinator(env *sim.Env, r proto.FindCoordinatorResponse) {
	if r.CorrelationID != m.findCorr || r.Error != proto.None || m.group >= len(m.cfg.Groups) {
		return
	}
	m.fetchCorr = m.cons.cl.newCorr() | mirrorCorr
	env.Send(r.Coordinator, proto.OffsetFetch{CorrelationID: m.fetchCorr, Group: m.cfg.Groups[m.group], Partitions: slices.Clone(m.cfg.Partitions)})
}

// onOffsets checkpoints the group's committed offsets that translate, then asks about
// the next group.
func (m *Mirror) onOffsets(env *sim.Env, r proto.OffsetFetchResponse) {
	if r.CorrelationID != m.fetchCorr || r.Error != proto.None {
		return
	}
	for _, o := range r.Offsets {
		if o.Offset < 0 {
			continue
		}
		down, ok := m.Translate(o.TP, o.Offset)
		if !ok {
			continue
		}
		cp := Checkpoint{Group: r.Group, TP: o.TP, Upstream: o.Offset, Downstream: down, At: env.Now()}
		i := slices.IndexFunc(m.checkpoints, func(c Checkpoint) bool { return c.Group == cp.Group && c.TP == cp.TP })
		if i < 0 {
			m.checkpoints = append(m.checkpoints, cp)
		} else {
			m.checkpoints[i] = cp
		}
		sim.Record(env, MirrorCheckpoint{Group: r.Group, TP: o.TP, Upstream: o.Offset, Downstream: down})
	}
	m.group++
	m.findCoordinator(env)
}
