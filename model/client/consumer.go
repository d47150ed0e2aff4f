package client

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Assign is the scenario's command to a Consumer: consume these partitions from now on
// (KafkaConsumer.assign), from the beginning, or, for partitions without a position yet,
// from where auto.offset.reset says. Partitions kept from the previous assignment keep
// their position unless FromBeginning.
type Assign struct {
	Partitions    []proto.TP
	FromBeginning bool
}

func (a Assign) String() string {
	var s []string
	for _, tp := range a.Partitions {
		s = append(s, tp.String())
	}
	from := ""
	if a.FromBeginning {
		from = " from beginning"
	}
	return fmt.Sprintf("assign [%s]%s", strings.Join(s, ","), from)
}

// Poll is the scenario's command for one consumer poll.
type Poll struct{}

func (Poll) String() string { return "poll" }

// PollLoop polls Count times, starting a poll every Every (or as soon as the previous one
// ends, if that is later): "consume for a while". A new PollLoop replaces one running.
type PollLoop struct {
	Every time.Duration
	Count int
}

func (l PollLoop) String() string { return fmt.Sprintf("poll %d times every %s", l.Count, l.Every) }

// loopTick is a PollLoop's next poll, queued like a command.
type loopTick struct{ gen int64 }

// FetchMaxBytes is what a consumer fetch asks for per partition: Kafka's
// max.partition.fetch.bytes (1 MiB).
const FetchMaxBytes = 1 << 20

// Consumer timers.
const (
	ctRequest = firstOwnTimer + iota // a ListOffsets or Fetch got no answer; Arg = correlation id
	ctMeta                           // a poll waited too long for the first metadata
	ctProcess                        // the application finished the poll's records
	ctLoop                           // a PollLoop's next poll is due; Arg = loop generation
)

// Poll phases.
const (
	phaseMeta    = iota // waiting for metadata
	phaseOffsets        // ListOffsets for partitions without a position
	phaseFetch          // fetches in flight
	phaseProcess        // the application works through the records
)

// position is where the consumer stands in one partition.
type position struct {
	offset int64 // next offset to read; -1 while unknown
	epoch  int32 // leader epoch of the last record consumed, or wal.UndefinedEpoch
	// committedEpoch is the leader epoch the group's committed offset came with, or
	// wal.UndefinedEpoch. Like Kafka's Metadata.lastSeenLeaderEpochs (updated from the
	// OffsetFetch answer in ConsumerCoordinator.refreshCommittedOffsets, KIP-320), it makes
	// the consumer distrust metadata naming a leader of an older epoch: such a leader is
	// stale, its log may end below the committed offset, and its OFFSET_OUT_OF_RANGE would
	// reset the position to auto.offset.reset and commit the group's offset backwards.
	committedEpoch int32
	reset          string
	// sought is a seek whose offset the next poll looks up (seek.go); nil if none.
	sought *pendingSeek
}

// PartitionPosition is one partition's position, for views.
type PartitionPosition struct {
	TP     proto.TP
	Offset int64 // next offset to read; -1 while unknown
	Epoch  int32 // leader epoch of the last record consumed; wal.UndefinedEpoch if none
}

type fetched struct {
	offset  int64
	value   string
	epoch   int32
	key     string
	headers []wal.Header
}

type consumerReq struct {
	corr   int64
	tp     proto.TP
	to     sim.NodeID
	timer  sim.TimerID
	offset int64 // the fetch offset (fetches only)
}

// pollOp is the poll in progress.
type pollOp struct {
	h     history.Handle
	began sim.Time
	loop  bool
	phase int
	reqs  map[int64]*consumerReq
	got   map[proto.TP][]fetched
	errs  []string
	fail  string
	metaT sim.TimerID
	reads []history.PartitionRecords
	pat   pollPatterns // tags.go, retry.go
}

// Consumer is a Kafka-style consumer node in assign mode (no group): it keeps a position
// per assigned partition, fetches from each partition's leader with the leader epoch
// fencing and the last fetched epoch of KIP-320, detects log truncation, and records one
// history op per poll. Commands that arrive during a poll wait for it to end.
type Consumer struct {
	cfg proto.ConsumerConfig
	// throttled holds the brokers whose fetch quota throttles this consumer (throttle.go).
	throttled throttles
	process   int
	rec       *history.Recorder
	cl        cluster
	started   bool

	assigned []proto.TP // sorted
	pos      map[proto.TP]*position
	cmds     []sim.Message
	poll     *pollOp

	loopGen   int64
	loopLeft  int
	loopEvery time.Duration

	consumed int
	polls    int

	// grp is the group membership of a subscribed consumer (group.go); nil in assign mode.
	grp   *member
	resub *Subscribe
	// pat is the state of the delivery patterns: filter, retries, counters (tags.go, retry.go).
	pat consumerPatterns
	// pollsInTxn: the consumer feeds a transactional pipeline (pipeline.go), whose
	// transactions record its polls. keepReads keeps what the last poll returned in
	// lastReads, for a pipeline.
	pollsInTxn bool
	keepReads  bool
	lastReads  []history.PartitionRecords
}

// consumerRetryBackoff spaces metadata refreshes: Kafka's retry.backoff.ms default
// (proto.ConsumerConfig has no field for it).
const consumerRetryBackoff = 100 * time.Millisecond

// NewConsumer builds a consumer that records its operations as process in rec (nil
// records nothing). brokers are the names of the brokers to ask for metadata.
func NewConsumer(cfg proto.ConsumerConfig, process int, brokers []string, rec *history.Recorder) *Consumer {
	return &Consumer{
		cfg:     cfg,
		process: process,
		rec:     rec,
		cl:      newCluster(brokers, nil, cfg.RequestTimeout, consumerRetryBackoff),
		pos:     map[proto.TP]*position{},
	}
}

// Config is the consumer's configuration.
func (c *Consumer) Config() proto.ConsumerConfig { return c.cfg }

// Process is the history process the consumer records as.
func (c *Consumer) Process() int { return c.process }

// Assignment is the partitions assigned, sorted.
func (c *Consumer) Assignment() []proto.TP { return slices.Clone(c.assigned) }

// Position is the next offset the consumer reads from tp, and false while it has none.
func (c *Consumer) Position(tp proto.TP) (int64, bool) {
	p := c.pos[tp]
	if p == nil || p.offset < 0 {
		return -1, false
	}
	return p.offset, true
}

// Positions lists every assigned partition's position, in partition order.
func (c *Consumer) Positions() []PartitionPosition {
	out := make([]PartitionPosition, 0, len(c.assigned))
	for _, tp := range c.assigned {
		p := c.pos[tp]
		out = append(out, PartitionPosition{TP: tp, Offset: p.offset, Epoch: p.epoch})
	}
	return out
}

// Consumed is the number of records polls have returned.
func (c *Consumer) Consumed() int { return c.consumed }

// Polls is the number of polls completed.
func (c *Consumer) Polls() int { return c.polls }

// Polling reports whether a poll is in progress.
func (c *Consumer) Polling() bool { return c.poll != nil }

// Start resolves the broker names; metadata is asked for at the first poll.
func (c *Consumer) Start(env *sim.Env) {
	c.cl.start(env)
	if c.resub != nil {
		s := *c.resub
		c.resub = nil
		c.subscribe(env, s)
		c.run(env)
	}
}

// Recv takes commands and the answers of brokers.
func (c *Consumer) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Assign, Poll, PollLoop, Subscribe, Leave, Commit, Seek:
		c.cmds = append(c.cmds, m)
		c.run(env)
	case SetTags:
		c.setTags(env, m)
	case proto.ProduceResponse:
		c.onRepublished(env, m)
	case proto.MetadataResponse:
		if c.cl.onResponse(env, from, m) && c.poll != nil && c.poll.phase == phaseMeta {
			env.CancelTimer(c.poll.metaT)
			c.listOffsets(env)
		}
		if c.grp != nil {
			c.grp.onMetadata(env)
		}
	case proto.FindCoordinatorResponse, proto.JoinGroupResponse, proto.SyncGroupResponse, proto.HeartbeatResponse,
		proto.OffsetCommitResponse, proto.OffsetFetchResponse, proto.LeaveGroupResponse, proto.ConsumerGroupHeartbeatResponse:
		if c.grp != nil && c.grp.recv(env, from, m) {
			c.run(env)
		}
	case proto.ListOffsetsResponse:
		c.onListOffsets(env, m)
	case proto.FetchResponse:
		c.throttled.note(env, from, m.ThrottleTime)
		c.onFetch(env, m)
	}
}

// Timer handles request timeouts, processing time and poll loops.
func (c *Consumer) Timer(env *sim.Env, tag sim.TimerTag) {
	if c.cl.onTimer(env, tag) {
		return
	}
	if tag.Kind >= rtFirst {
		c.patternTimer(env, tag)
		return
	}
	if tag.Kind >= gtRequest {
		if c.grp != nil && c.grp.timer(env, tag) {
			c.run(env)
		}
		return
	}
	op := c.poll
	switch tag.Kind {
	case ctRequest:
		if op == nil {
			return
		}
		r := op.reqs[tag.Arg]
		if r == nil {
			return
		}
		delete(op.reqs, r.corr)
		op.errs = append(op.errs, fmt.Sprintf("%s: no answer from %s", r.tp, env.NameOf(r.to)))
		sim.Record(env, FetchTimeout{TP: r.tp, To: env.NameOf(r.to)})
		c.cl.avoid(r.to)
		c.cl.refresh(env)
		c.step(env)
	case ctMeta:
		if op != nil && op.phase == phaseMeta {
			op.errs = append(op.errs, "no metadata")
			c.gather(env)
		}
	case ctProcess:
		if op != nil && op.phase == phaseProcess {
			c.complete(env)
		}
	case ctLoop:
		if tag.Arg == c.loopGen {
			c.cmds = append(c.cmds, loopTick{gen: tag.Arg})
			c.run(env)
		}
	}
}

// run executes queued commands until one starts a poll.
func (c *Consumer) run(env *sim.Env) {
	for c.poll == nil && len(c.cmds) > 0 {
		if c.grp != nil {
			c.grp.advance(env)
			if c.poll != nil || c.grp.blocked() {
				return // the application waits in commitSync
			}
		}
		cmd := c.cmds[0]
		c.cmds = c.cmds[1:]
		switch m := cmd.(type) {
		case Subscribe:
			c.subscribe(env, m)
		case Leave:
			if c.grp != nil {
				c.grp.leave(env, m.Reason)
			}
		case Commit:
			if c.grp == nil {
				sim.Record(env, NotMember{})
				continue
			}
			c.grp.commitNow(env)
		case Assign:
			if c.grp != nil && c.grp.active() {
				sim.Record(env, AssignRefused{Group: c.grp.group()})
				continue
			}
			c.assign(env, m)
		case Seek:
			c.seek(env, m)
		case Poll:
			c.startPoll(env, false)
		case PollLoop:
			if m.Count < 1 || m.Every < 0 {
				sim.Record(env, BadCommand{Cmd: m})
				continue
			}
			c.loopGen++
			c.loopLeft, c.loopEvery = m.Count-1, m.Every
			c.startPoll(env, true)
		case loopTick:
			if m.gen == c.loopGen && c.loopLeft > 0 {
				c.loopLeft--
				c.startPoll(env, true)
			}
		}
	}
}

func (c *Consumer) now(env *sim.Env) int64 { return int64(env.Now()) }

func (c *Consumer) assign(env *sim.Env, m Assign) {
	parts := slices.Clone(m.Partitions)
	slices.SortFunc(parts, proto.CompareTP)
	parts = slices.Compact(parts)
	reset := c.cfg.AutoOffsetReset
	if m.FromBeginning {
		reset = "earliest"
	}
	pos := map[proto.TP]*position{}
	var hparts []history.TopicPartition
	for _, tp := range parts {
		hparts = append(hparts, htp(tp))
		if old := c.pos[tp]; old != nil && !m.FromBeginning {
			pos[tp] = old
			continue
		}
		pos[tp] = &position{offset: -1, epoch: wal.UndefinedEpoch, committedEpoch: wal.UndefinedEpoch, reset: reset}
	}
	c.assigned, c.pos = parts, pos
	if c.rec != nil {
		h := c.rec.InvokeAssign(c.now(env), c.process, "", hparts, m.FromBeginning)
		c.rec.Ok(c.now(env), h, history.Result{})
	}
	if env.Tracing() {
		sim.Record(env, Assigned{Partitions: slices.Clone(parts), FromBeginning: m.FromBeginning, Reset: reset})
	}
}

func (c *Consumer) startPoll(env *sim.Env, loop bool) {
	if !c.started {
		c.started = true
		c.cl.refresh(env)
	}
	op := &pollOp{began: env.Now(), loop: loop, reqs: map[int64]*consumerReq{}, got: map[proto.TP][]fetched{}}
	switch {
	case c.rec == nil || c.pollsInTxn:
	case c.cfg.Isolation == proto.ReadCommitted:
		op.h = c.rec.InvokeReadCommittedPoll(c.now(env), c.process, c.group())
	default:
		op.h = c.rec.InvokePoll(c.now(env), c.process, c.group())
	}
	c.poll = op
	if c.groupPoll(env) {
		return
	}
	if len(c.assigned) == 0 {
		if c.grp == nil {
			op.fail = "no partitions assigned"
		}
		c.gather(env)
		return
	}
	c.fetchWhenKnown(env)
}

// fetchWhenKnown goes on with the poll once the client knows where to fetch: it waits for
// metadata first if it has none yet, or if a partition's leader just stopped answering
// (Kafka's poll blocks on the metadata update rather than ask the dead leader again).
func (c *Consumer) fetchWhenKnown(env *sim.Env) {
	wait := !c.cl.known
	for _, tp := range c.assigned {
		wait = wait || c.cl.leaderUnreachable(tp)
	}
	if wait {
		c.poll.phase = phaseMeta
		c.poll.metaT = env.SetTimer(c.cfg.RequestTimeout, sim.TimerTag{Kind: ctMeta})
		c.cl.refresh(env)
		return
	}
	c.listOffsets(env)
}

// listOffsets finds a position for every partition that has none, as auto.offset.reset
// (or FromBeginning) says.
func (c *Consumer) listOffsets(env *sim.Env) {
	op := c.poll
	op.phase = phaseOffsets
	for _, tp := range c.assigned {
		if p := c.pos[tp]; p.offset < 0 && p.reset == "none" {
			op.fail = fmt.Sprintf("%s: no position and auto.offset.reset=none", tp)
			c.gather(env)
			return
		}
	}
	for _, tp := range c.assigned {
		p := c.pos[tp]
		if p.offset >= 0 {
			continue
		}
		leader, _, ok := c.cl.leader(tp)
		if !ok {
			op.errs = append(op.errs, fmt.Sprintf("%s: no leader", tp))
			c.cl.refresh(env)
			continue
		}
		r := c.request(env, tp, leader, -1)
		env.Send(leader, c.listOffsetsFor(r.corr, tp, p))
	}
	c.step(env)
}

func (c *Consumer) request(env *sim.Env, tp proto.TP, to sim.NodeID, offset int64) *consumerReq {
	r := &consumerReq{corr: c.cl.newCorr(), tp: tp, to: to, offset: offset}
	r.timer = env.SetTimer(c.cfg.RequestTimeout+c.cfg.FetchMaxWait, sim.TimerTag{Kind: ctRequest, Arg: r.corr})
	c.poll.reqs[r.corr] = r
	return r
}

// step moves the poll on once every request of its phase has ended.
func (c *Consumer) step(env *sim.Env) {
	op := c.poll
	if len(op.reqs) > 0 {
		return
	}
	switch op.phase {
	case phaseOffsets:
		c.fetch(env)
	case phaseFetch:
		c.gather(env)
	}
}

// fetch sends one fetch to the leader of every partition with a position.
func (c *Consumer) fetch(env *sim.Env) {
	op := c.poll
	op.phase = phaseFetch
	for _, tp := range c.assigned {
		p := c.pos[tp]
		if p.offset < 0 || c.held(env, tp) {
			continue
		}
		leader, epoch, ok := c.cl.leader(tp)
		if ok && c.throttled.active(env, leader) {
			continue // the leader throttles this consumer (quota, KIP-219): nothing from it this poll
		}
		if !ok {
			op.errs = append(op.errs, fmt.Sprintf("%s: no leader", tp))
			c.cl.refresh(env)
			continue
		}
		if epoch < p.committedEpoch {
			// Kafka's Metadata.partitionMetadataIfCurrent: metadata older than a known
			// leader epoch names no leader.
			op.errs = append(op.errs, fmt.Sprintf("%s: metadata names a leader of epoch %d, older than the committed offset's %d", tp, epoch, p.committedEpoch))
			c.cl.refresh(env)
			continue
		}
		r := c.request(env, tp, leader, p.offset)
		env.Send(leader, proto.FetchRequest{
			CorrelationID:      r.corr,
			ReplicaID:          proto.ConsumerReplica,
			TP:                 tp,
			FetchOffset:        p.offset,
			LastFetchedEpoch:   p.epoch,
			CurrentLeaderEpoch: epoch,
			MaxBytes:           FetchMaxBytes,
			MaxWait:            c.cfg.FetchMaxWait,
			Tags:               c.brokerTags(),
			Isolation:          c.cfg.Isolation,
		})
	}
	c.step(env)
}

// answer finds and ends the request an answer belongs to; nil if it belongs to no
// request of the poll in progress.
func (c *Consumer) answer(env *sim.Env, corr int64) *consumerReq {
	if c.poll == nil {
		return nil
	}
	r := c.poll.reqs[corr]
	if r == nil {
		return nil
	}
	env.CancelTimer(r.timer)
	delete(c.poll.reqs, corr)
	return r
}

func (c *Consumer) onListOffsets(env *sim.Env, m proto.ListOffsetsResponse) {
	r := c.answer(env, m.CorrelationID)
	if r == nil {
		return
	}
	p := c.pos[r.tp]
	if m.Error != proto.None {
		c.poll.errs = append(c.poll.errs, fmt.Sprintf("%s: list offsets: %s", r.tp, m.Error))
		if needsRefresh(m.Error) {
			c.cl.refresh(env)
		}
	} else if p != nil && p.offset < 0 && p.sought != nil && p.sought.to == SeekTime && m.Offset == proto.UnknownOffset {
		// No record that recent: offsetsForTimes answers null, and the application seeks
		// to the end instead (the group tool's fallback too).
		sim.Record(env, PositionFound{TP: r.tp, Offset: m.Offset, Reset: "time", At: p.sought.at})
		p.sought.to = SeekLatest
		if leader, _, ok := c.cl.leader(r.tp); ok {
			next := c.request(env, r.tp, leader, -1)
			env.Send(leader, c.listOffsetsFor(next.corr, r.tp, p))
		}
	} else if p != nil && p.offset < 0 {
		p.offset, p.epoch = m.Offset, wal.UndefinedEpoch
		found := PositionFound{TP: r.tp, Offset: m.Offset, Reset: p.reset}
		if ps := p.sought; ps != nil {
			found.Reset, found.At = "seek to "+ps.to.String(), ps.at
		}
		sim.Record(env, found)
		c.seekDone(env, r.tp, p)
	}
	c.step(env)
}

func (c *Consumer) onFetch(env *sim.Env, m proto.FetchResponse) {
	r := c.answer(env, m.CorrelationID)
	if r == nil {
		return
	}
	op := c.poll
	p := c.pos[r.tp]
	switch {
	case p == nil || p.offset != r.offset:
		// Reassigned or moved while the fetch was out: its records are not for us.
	case m.Error == proto.None && m.DivergingEpoch != nil:
		c.diverged(env, r, p, *m.DivergingEpoch)
	case m.Error == proto.None:
		got, skipTo, skipEpoch := c.readable(env, r, m)
		if skipTo > m.SkippedTo {
			// What the consumer left out moves the position as what the leader left out does.
			m.SkippedTo, m.SkippedEpoch = skipTo, skipEpoch
		}
		op.got[r.tp] = c.shapeFetched(env, r, m, got)
	case m.Error == proto.OffsetOutOfRange:
		if c.cfg.AutoOffsetReset == "none" {
			op.fail = fmt.Sprintf("%s: offset %d out of range and auto.offset.reset=none", r.tp, r.offset)
			sim.Record(env, OutOfRange{TP: r.tp, Offset: r.offset, Reset: "none"})
			break
		}
		p.offset, p.epoch, p.reset = -1, wal.UndefinedEpoch, c.cfg.AutoOffsetReset
		sim.Record(env, OutOfRange{TP: r.tp, Offset: r.offset, Reset: p.reset})
	default:
		op.errs = append(op.errs, fmt.Sprintf("%s: %s", r.tp, m.Error))
		if needsRefresh(m.Error) {
			c.cl.refresh(env)
		}
	}
	c.step(env)
}

// diverged handles a leader's DivergingEpoch (KIP-320): the log the consumer read was
// truncated under it if the leader's end of that epoch is below the position.
func (c *Consumer) diverged(env *sim.Env, r *consumerReq, p *position, d proto.EpochEnd) {
	if d.EndOffset >= r.offset {
		p.epoch = d.Epoch
		return
	}
	if c.cfg.AutoOffsetReset == "none" {
		sim.Record(env, TruncationDetected{TP: r.tp, Epoch: d.Epoch, EndOffset: d.EndOffset, Position: r.offset})
		c.poll.fail = fmt.Sprintf("%s: log truncated below position %d (epoch %d ends at %d) and auto.offset.reset=none",
			r.tp, r.offset, d.Epoch, d.EndOffset)
		return
	}
	sim.Record(env, TruncationDetected{TP: r.tp, Epoch: d.Epoch, EndOffset: d.EndOffset, Position: r.offset, Resumed: true})
	p.offset, p.epoch = d.EndOffset, d.Epoch
}

// gather hands the fetched records to the application, at most max.poll.records, in
// partition order, and moves the positions past them. A failed poll returns nothing.
func (c *Consumer) gather(env *sim.Env) {
	op := c.poll
	for _, r := range op.reqs {
		env.CancelTimer(r.timer)
	}
	op.reqs = map[int64]*consumerReq{}
	if op.fail != "" {
		c.complete(env)
		return
	}
	left := max(1, c.cfg.MaxPollRecords)
	n := 0
	for _, tp := range c.assigned {
		p := c.pos[tp]
		var recs []history.Record
		for _, f := range op.got[tp] {
			if left == 0 {
				break
			}
			if f.offset < p.offset {
				continue
			}
			recs = append(recs, history.Record{Offset: f.offset, Value: f.value})
			p.offset, p.epoch = f.offset+1, f.epoch
			left--
		}
		c.skipFiltered(tp, p)
		if len(recs) > 0 {
			op.reads = append(op.reads, history.PartitionRecords{TopicPartition: htp(tp), Records: recs})
			n += len(recs)
		}
	}
	c.consumed += n
	if c.grp != nil && c.grp.beforeProcessing(env, n, op.reads) {
		return
	}
	c.startProcessing(env, n)
}

// startProcessing has the application work through the poll's n records, ProcessingTime each.
func (c *Consumer) startProcessing(env *sim.Env, n int) {
	if n > 0 && c.cfg.ProcessingTime > 0 {
		c.poll.phase = phaseProcess
		env.SetTimer(time.Duration(n)*c.cfg.ProcessingTime, sim.TimerTag{Kind: ctProcess})
		return
	}
	c.complete(env)
}

// complete records the poll's outcome: fail if it returned nothing because of an error
// the application must see, info if it returned nothing and a fetch failed or went
// unanswered, ok otherwise.
func (c *Consumer) complete(env *sim.Env) {
	if c.processingFailed(env) {
		return // the application is still at it: retrying in place, or republishing (retry.go)
	}
	op := c.poll
	c.poll = nil
	c.polls++
	n := 0
	for _, pr := range op.reads {
		n += len(pr.Records)
	}
	polled := Polled{Fail: op.fail, Records: n, Errs: op.errs}
	if env.Tracing() {
		polled.Spans = spansOf(op.reads)
	}
	now := c.now(env)
	if c.keepReads {
		c.lastReads = op.reads
	}
	switch {
	case op.fail != "":
		if c.rec != nil && !c.pollsInTxn {
			c.rec.Fail(now, op.h, history.Result{Error: op.fail})
		}
		polled.Outcome = PollFail
		sim.Record(env, polled)
	case len(op.errs) > 0 && n == 0:
		// A poll that returned records is ok, a group member's or not: the application
		// has them and the consumer's positions are past them, as Kafka's poll() returns
		// what it has; the errors of other partitions are in the trace. (Recorded as info,
		// the next poll would start after records the history says may not have been
		// seen, a poll-skip: txn swarm seed 67.)
		why := strings.Join(op.errs, "; ")
		if c.rec != nil && !c.pollsInTxn {
			c.rec.Info(now, op.h, history.Result{Reads: op.reads, Error: why})
		}
		polled.Outcome = PollInfo
		sim.Record(env, polled)
	default:
		if c.rec != nil && !c.pollsInTxn {
			c.rec.Ok(now, op.h, history.Result{Reads: op.reads})
		}
		sim.Record(env, polled)
	}
	if op.loop && c.loopLeft > 0 {
		due := op.began.Add(c.loopEvery)
		env.SetTimer(max(0, due.Sub(env.Now())), sim.TimerTag{Kind: ctLoop, Arg: c.loopGen})
	}
	if c.grp != nil {
		c.grp.afterPoll(env, n)
	}
	c.run(env)
}

// KeepReads makes the consumer keep what each poll returned, for OwnedReads: an
// application that processes the records itself (a pipeline, a lab's application).
func (c *Consumer) KeepReads() { c.keepReads = true }

// OwnedReads are the poll's records of the partitions the consumer still owns. A member
// that learnt, as its poll ended, that it lost its membership (or a partition) must not
// process what it read there, as Kafka's Fetcher drops the records of partitions no
// longer assigned: another member reads them from the committed offsets, and the
// transaction's offsets, sent without a generation to fence them, would be taken
// (txn swarm seed 419: the same input written twice).
func (c *Consumer) OwnedReads() []history.PartitionRecords {
	_, gen, owned, ok := c.Ownership()
	if !ok {
		return c.lastReads
	}
	if gen < 0 {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(c.lastReads), func(pr history.PartitionRecords) bool {
		return !slices.Contains(owned, proto.TP{Topic: pr.Topic, Partition: pr.Partition})
	})
}
