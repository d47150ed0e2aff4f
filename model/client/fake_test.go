package client

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// fakeCluster is the state every fake broker shares: one log per partition (perfectly
// replicated, so a leader change loses nothing unless a test truncates), leaders, and the
// idempotent producers' dedup state. Tests change it directly to script faults.
type fakeCluster struct {
	version  int64
	topics   []proto.TopicConfig
	parts    map[proto.TP]*fakePart
	brokers  []sim.NodeID
	produced []proto.ProduceRequest // every produce request a leader handled, in order

	// produceFaults answer the next produce requests with an error instead of appending
	// (or, with afterAppend, after appending).
	produceFaults []fakeFault
	// fetchFaults answer the next fetches with an error.
	fetchFaults []proto.Error
	noDedup     bool
	nextPID     int64
	// txn is the fake transaction and group coordinator (txnfake_test.go); nil: none.
	txn *fakeTxn
	// share is the fake share-group coordinator and share-partition leader
	// (sharefake_test.go); nil: none.
	share *fakeShare
}

type fakeFault struct {
	err         proto.Error
	afterAppend bool
}

type fakePart struct {
	leader   sim.NodeID
	epoch    int32
	logStart int64
	batches  []wal.Batch
	pids     map[int64]*fakePID
	// lso, when hasLSO, is the last stable offset a read_committed fetch stops at;
	// aborted are the aborted transactions it lists.
	lso     int64
	hasLSO  bool
	aborted []proto.AbortedTxn
}

// stable is where a read_committed consumer stops reading.
func (p *fakePart) stable() int64 {
	if p.hasLSO {
		return p.lso
	}
	return p.end()
}

type fakePID struct {
	epoch   int16
	lastSeq int32
	window  []fakeSeq // the last 5 batches
}

type fakeSeq struct {
	first, last int32
	offset      int64
}

func (p *fakePart) end() int64 {
	if len(p.batches) == 0 {
		return p.logStart
	}
	return p.batches[len(p.batches)-1].NextOffset()
}

func (p *fakePart) append(b wal.Batch) int64 {
	b.BaseOffset = p.end()
	b.LeaderEpoch = p.epoch
	b.Records = slices.Clone(b.Records)
	p.batches = append(p.batches, b)
	return b.BaseOffset
}

// values lists the partition's record values in offset order.
func (p *fakePart) values() []string {
	var out []string
	for _, b := range p.batches {
		for _, r := range b.Records {
			out = append(out, string(r.Value))
		}
	}
	return out
}

// truncate cuts the log to end at offset.
func (p *fakePart) truncate(offset int64) {
	var keep []wal.Batch
	for _, b := range p.batches {
		if b.BaseOffset >= offset {
			break
		}
		if b.NextOffset() > offset {
			b.Records = b.Records[:offset-b.BaseOffset]
		}
		keep = append(keep, b)
	}
	p.batches = keep
}

// epochEnd is the leader's answer for the largest epoch <= e: that epoch and where it
// ends (the start of the next epoch, or the log end).
func (p *fakePart) epochEnd(e int32) (int32, int64) {
	found := wal.UndefinedEpoch
	for _, b := range p.batches {
		if b.LeaderEpoch <= e {
			found = b.LeaderEpoch
		}
	}
	if found == wal.UndefinedEpoch {
		return wal.UndefinedEpoch, p.logStart
	}
	for _, b := range p.batches {
		if b.LeaderEpoch > found {
			return found, b.BaseOffset
		}
	}
	return found, p.end()
}

func newFakeCluster(topic string, partitions int) *fakeCluster {
	return &fakeCluster{
		version: 1,
		topics:  []proto.TopicConfig{{Name: topic, Partitions: partitions, ReplicationFactor: 1, MinInsyncReplicas: 1}},
		parts:   map[proto.TP]*fakePart{},
	}
}

func (fc *fakeCluster) part(tp proto.TP) *fakePart { return fc.parts[tp] }

// setLeader moves a partition's leadership (NoLeader: offline) and bumps the epoch.
func (fc *fakeCluster) setLeader(tp proto.TP, leader sim.NodeID) {
	p := fc.parts[tp]
	p.leader = leader
	p.epoch++
	fc.version++
}

func (fc *fakeCluster) metadata() proto.Metadata {
	md := proto.Metadata{Version: fc.version, LiveBrokers: slices.Clone(fc.brokers), Topics: slices.Clone(fc.topics)}
	var tps []proto.TP
	for tp := range fc.parts {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, proto.CompareTP)
	for _, tp := range tps {
		p := fc.parts[tp]
		md.Partitions = append(md.Partitions, proto.PartitionState{TP: tp, Leader: p.leader, LeaderEpoch: p.epoch,
			Replicas: slices.Clone(fc.brokers), ISR: slices.Clone(fc.brokers)})
	}
	return md
}

// fakeBroker answers Metadata, Produce, Fetch and ListOffsets from the shared fake state.
type fakeBroker struct{ fc *fakeCluster }

func (b *fakeBroker) Start(env *sim.Env)                   {}
func (b *fakeBroker) Timer(env *sim.Env, tag sim.TimerTag) {}

func (b *fakeBroker) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	fc := b.fc
	switch m := msg.(type) {
	case proto.MetadataRequest:
		env.Send(from, proto.MetadataResponse{CorrelationID: m.CorrelationID, Metadata: fc.metadata()})
	case proto.ProduceRequest:
		res := b.produce(env, m)
		if m.Acks != proto.AcksNone {
			env.Send(from, res)
		}
	case proto.FetchRequest:
		env.Send(from, b.fetch(env, m))
	case proto.ListOffsets:
		res := proto.ListOffsetsResponse{CorrelationID: m.CorrelationID, TP: m.TP, LeaderEpoch: wal.UndefinedEpoch}
		p := fc.parts[m.TP]
		switch {
		case p == nil:
			res.Error = proto.UnknownTopicOrPartition
		case p.leader != env.Self():
			res.Error = proto.NotLeaderOrFollower
		case m.Latest && m.Isolation == proto.ReadCommitted:
			res.Offset = p.stable()
		case m.Latest:
			res.Offset = p.end()
		default:
			res.Offset = p.logStart
		}
		env.Send(from, res)
	default:
		if fc.share != nil && fc.share.recv(env, from, msg) {
			return
		}
		if fc.txn != nil {
			fc.txn.recv(env, from, msg)
		}
	}
}

func (b *fakeBroker) produce(env *sim.Env, m proto.ProduceRequest) proto.ProduceResponse {
	fc := b.fc
	res := proto.ProduceResponse{CorrelationID: m.CorrelationID, TP: m.TP}
	p := fc.parts[m.TP]
	if p == nil {
		res.Error = proto.UnknownTopicOrPartition
		return res
	}
	if p.leader != env.Self() {
		res.Error = proto.NotLeaderOrFollower
		return res
	}
	fc.produced = append(fc.produced, m)
	var fault *fakeFault
	if len(fc.produceFaults) > 0 {
		f := fc.produceFaults[0]
		fc.produceFaults = fc.produceFaults[1:]
		if !f.afterAppend {
			res.Error = f.err
			return res
		}
		fault = &f
	}
	bt := m.Batch
	n := int32(len(bt.Records))
	if bt.ProducerID != wal.NoProducerID && !fc.noDedup {
		if p.pids == nil {
			p.pids = map[int64]*fakePID{}
		}
		st := p.pids[bt.ProducerID]
		switch {
		case st == nil || bt.ProducerEpoch > st.epoch:
			if bt.BaseSequence != 0 {
				res.Error = proto.OutOfOrderSequence
				return res
			}
			st = &fakePID{epoch: bt.ProducerEpoch, lastSeq: -1}
			p.pids[bt.ProducerID] = st
		case bt.ProducerEpoch < st.epoch:
			res.Error = proto.InvalidProducerEpoch
			return res
		}
		for _, w := range st.window {
			if w.first == bt.BaseSequence && w.last == bt.BaseSequence+n-1 {
				sim.Record(env, fakeDedup{TP: m.TP, Seq: bt.BaseSequence, At: w.offset})
				res.BaseOffset = w.offset
				return res
			}
		}
		if bt.BaseSequence != st.lastSeq+1 {
			res.Error = proto.OutOfOrderSequence
			return res
		}
		res.BaseOffset = p.append(bt)
		st.lastSeq = bt.BaseSequence + n - 1
		st.window = append(st.window, fakeSeq{first: bt.BaseSequence, last: st.lastSeq, offset: res.BaseOffset})
		if len(st.window) > 5 {
			st.window = st.window[1:]
		}
	} else {
		res.BaseOffset = p.append(bt)
	}
	sim.Record(env, fakeAppend{TP: m.TP, Records: n, At: res.BaseOffset})
	if fault != nil {
		res.Error = fault.err
	}
	return res
}

func (b *fakeBroker) fetch(env *sim.Env, m proto.FetchRequest) proto.FetchResponse {
	fc := b.fc
	res := proto.FetchResponse{CorrelationID: m.CorrelationID, TP: m.TP}
	p := fc.parts[m.TP]
	switch {
	case p == nil:
		res.Error = proto.UnknownTopicOrPartition
		return res
	case p.leader != env.Self():
		res.Error = proto.NotLeaderOrFollower
		return res
	case m.CurrentLeaderEpoch != wal.UndefinedEpoch && m.CurrentLeaderEpoch < p.epoch:
		res.Error = proto.FencedLeaderEpoch
		return res
	case m.CurrentLeaderEpoch > p.epoch:
		res.Error = proto.UnknownLeaderEpoch
		return res
	}
	if len(fc.fetchFaults) > 0 {
		res.Error = fc.fetchFaults[0]
		fc.fetchFaults = fc.fetchFaults[1:]
		return res
	}
	res.HighWatermark, res.LogStartOffset, res.LeaderEpoch = p.end(), p.logStart, p.epoch
	if m.LastFetchedEpoch != wal.UndefinedEpoch {
		if e, end := p.epochEnd(m.LastFetchedEpoch); e != m.LastFetchedEpoch || end < m.FetchOffset {
			res.DivergingEpoch = &proto.EpochEnd{Epoch: e, EndOffset: end}
			return res
		}
	}
	if m.FetchOffset < p.logStart || m.FetchOffset > p.end() {
		res.Error = proto.OffsetOutOfRange
		return res
	}
	res.LastStableOffset = p.stable()
	for _, bt := range p.batches {
		if m.Isolation == proto.ReadCommitted && bt.BaseOffset >= p.stable() {
			break
		}
		if bt.NextOffset() > m.FetchOffset {
			bt.Records = slices.Clone(bt.Records)
			res.Batches = append(res.Batches, bt)
		}
	}
	if m.Isolation == proto.ReadCommitted {
		res.AbortedTransactions = slices.Clone(p.aborted)
	}
	return res
}

// fakeController grants producer ids.
type fakeController struct{ fc *fakeCluster }

func (c *fakeController) Start(env *sim.Env)                   {}
func (c *fakeController) Timer(env *sim.Env, tag sim.TimerTag) {}
func (c *fakeController) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if m, ok := msg.(proto.InitProducerID); ok {
		c.fc.nextPID++
		env.Send(from, proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, ProducerID: 1000 + c.fc.nextPID})
	}
}

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Log(args ...any)
}

// harness is a world with fake brokers b1..bN, a fake controller and a shared recorder.
type harness struct {
	t       tb
	w       *sim.World
	fc      *fakeCluster
	rec     *history.Recorder
	names   []string
	brokers []sim.NodeID
}

func newHarness(t tb, seed uint64, brokers, partitions int) *harness {
	cfg := sim.DefaultConfig(seed)
	cfg.TraceMessages = true
	h := &harness{t: t, w: sim.NewWorld(cfg), fc: newFakeCluster("t", partitions), rec: history.NewRecorder()}
	for i := 1; i <= brokers; i++ {
		name := fmt.Sprintf("b%d", i)
		fc := h.fc
		id := h.w.MustAddNode(name, func() sim.Node { return &fakeBroker{fc: fc} })
		h.names = append(h.names, name)
		h.brokers = append(h.brokers, id)
	}
	h.fc.brokers = slices.Clone(h.brokers)
	fc := h.fc
	h.w.MustAddNode("ctl", func() sim.Node { return &fakeController{fc: fc} })
	for i := 0; i < partitions; i++ {
		h.fc.parts[proto.TP{Topic: "t", Partition: int32(i)}] = &fakePart{leader: h.brokers[i%brokers], epoch: 1}
	}
	return h
}

func tp(p int32) proto.TP { return proto.TP{Topic: "t", Partition: p} }

// producerConfig is Kafka's default producer, with a short linger and timeouts a test can
// wait out.
func producerConfig() proto.ProducerConfig {
	c := proto.DefaultConfig().Producer
	c.RequestTimeout = 300 * time.Millisecond
	c.DeliveryTimeout = 5 * time.Second
	return c
}

func consumerConfig() proto.ConsumerConfig {
	c := proto.DefaultConfig().Consumer
	c.RequestTimeout = 300 * time.Millisecond
	c.FetchMaxWait = 10 * time.Millisecond
	return c
}

func (h *harness) addProducer(name string, cfg proto.ProducerConfig, process int) sim.NodeID {
	names, rec := h.names, h.rec
	return h.w.MustAddNode(name, func() sim.Node { return NewProducer(cfg, process, names, []string{"ctl"}, rec) })
}

func (h *harness) addConsumer(name string, cfg proto.ConsumerConfig, process int) sim.NodeID {
	names, rec := h.names, h.rec
	return h.w.MustAddNode(name, func() sim.Node { return NewConsumer(cfg, process, names, rec) })
}

func (h *harness) producer(id sim.NodeID) *Producer { return h.w.Node(id).(*Producer) }
func (h *harness) consumer(id sim.NodeID) *Consumer { return h.w.Node(id).(*Consumer) }

func (h *harness) run(d time.Duration) { h.w.RunFor(d) }

// validate checks the history and that no send or poll is left open.
func (h *harness) validate() history.History {
	h.t.Helper()
	hist := h.rec.History()
	if err := hist.Validate(); err != nil {
		h.t.Fatalf("history invalid: %v", err)
	}
	done := map[int]bool{}
	for _, op := range hist {
		if op.Type != history.Invoke {
			done[op.Invoke] = true
		}
	}
	for _, op := range hist {
		if op.Type == history.Invoke && !done[op.Index] {
			h.t.Errorf("op %d (%s) never completed", op.Index, op.F)
		}
	}
	return hist
}

// fill appends a batch of values to a partition's log at its current leader epoch.
func (h *harness) fill(p int32, values ...string) {
	var recs []wal.Record
	for _, v := range values {
		recs = append(recs, wal.Record{Value: []byte(v)})
	}
	h.fc.part(tp(p)).append(wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch,
		BaseSequence: wal.NoSequence, Records: recs})
}

// sendOutcome is a send's completion, by value.
type sendOutcome struct {
	typ    history.Type
	tp     history.TopicPartition
	offset int64
	err    string
}

func sendOutcomes(hist history.History) map[string]sendOutcome {
	out := map[string]sendOutcome{}
	for _, op := range hist {
		if op.F == history.Send && op.Type != history.Invoke {
			out[op.Send.Value] = sendOutcome{op.Type, op.Send.TopicPartition, op.Send.Offset, op.Error}
		}
	}
	return out
}

// polls lists the completions of polls, in order.
func polls(hist history.History) []history.Op {
	var out []history.Op
	for _, op := range hist {
		if op.F == history.Poll && op.Type != history.Invoke {
			out = append(out, op)
		}
	}
	return out
}

// readValues flattens a poll's reads into "offset:value" strings.
func readValues(op history.Op) []string {
	var out []string
	for _, pr := range op.Poll.Reads {
		for _, r := range pr.Records {
			out = append(out, fmt.Sprintf("%s@%d:%s", pr.TopicPartition, r.Offset, r.Value))
		}
	}
	return out
}

func (h *harness) events(kind string) []string {
	var out []string
	for _, e := range h.w.Trace().Events() {
		if e.Kind == kind {
			out = append(out, e.Node+" "+e.Detail)
		}
	}
	return out
}

// The fake broker's events.

type fakeDedup struct {
	TP  proto.TP
	Seq int32
	At  int64
}

type fakeAppend struct {
	TP      proto.TP
	Records int32
	At      int64
}

func (fakeDedup) Kind() string      { return "dedup" }
func (e fakeDedup) Detail() string  { return fmt.Sprintf("%s seq=%d already at %d", e.TP, e.Seq, e.At) }
func (fakeAppend) Kind() string     { return "append" }
func (e fakeAppend) Detail() string { return fmt.Sprintf("%s %d records at %d", e.TP, e.Records, e.At) }
