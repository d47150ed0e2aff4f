package queue

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"time"

	"mqsim/model/raft"
	"mqsim/sim"
)

// Config shapes the broker's nodes.
type Config struct {
	// Nodes is the number of broker nodes, q1..qN.
	Nodes int
	// Heartbeat is the AMQP heartbeat interval, used in both directions: a consumer
	// whose broker was silent for two intervals reconnects, and the node acting for a
	// queue closes the channel of a consumer silent for two intervals and requeues its
	// unacknowledged messages. A crashed or cut-off consumer is noticed this way only.
	Heartbeat time.Duration
	// ForwardRetry is how often a node resends a routed message to a queue's leader that
	// has not answered; ForwardTimeout is when it gives up (the publisher then hears
	// nothing and counts the publish as unknown).
	ForwardRetry   time.Duration
	ForwardTimeout time.Duration
	// Bugs are deliberate mistakes planted for the checkers to catch (bugs.go); none
	// by default.
	Bugs []Bug
}

// DefaultConfig is one node with a 500ms heartbeat (RabbitMQ's default is 60s: shorter
// here so scenarios stay short).
func DefaultConfig() Config {
	return Config{Nodes: 1, Heartbeat: 500 * time.Millisecond, ForwardRetry: 100 * time.Millisecond, ForwardTimeout: 10 * time.Second}
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	var errs []string
	if c.Nodes < 1 || c.Nodes > 9 {
		errs = append(errs, fmt.Sprintf("nodes=%d: want 1 to 9", c.Nodes))
	}
	// Both re-arm themselves: the heartbeat on every node, the forward retry while a
	// queue's leader does not answer.
	for _, err := range []error{sim.CheckTimerPeriod("heartbeat", c.Heartbeat), sim.CheckTimerPeriod("forward-retry", c.ForwardRetry)} {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if c.ForwardTimeout < c.ForwardRetry {
		errs = append(errs, fmt.Sprintf("forward retry %s / timeout %s: want retry <= timeout", c.ForwardRetry, c.ForwardTimeout))
	}
	for _, b := range c.Bugs {
		if _, err := ParseBug(string(b)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// NodeName is the name of broker node i (from 1).
func NodeName(i int) string { return fmt.Sprintf("q%d", i) }

// Timer kinds of a node. Raft's tick is raft.DefaultTimerKind with the group as Arg.
const (
	timerHeartbeat = 1
	timerDeadline  = 2 // Arg: the queue's group
	timerForward   = 3
)

// Node is one broker node: it routes what its publishers send, hosts the classic queues
// whose home it is and a member of every quorum queue it belongs to, and acts for the
// queues it leads: deliveries, confirms, dead letters, channel liveness.
type Node struct {
	cfg   Config
	topo  *Topology
	env   *sim.Env
	name  string
	hosts []*host
	// pending are the routed publishes waiting for their queues' answers.
	pending      []*pendingPub
	forwardArmed bool
	hints        map[string]string // queue -> a leader another node named
	// qseq is the last QSeq given per enqueuer and queue ("p1#1@q1.3f2a|orders").
	qseq map[string]int64
	// incarnation tells this run of the node from earlier ones, in enqueuer names: a
	// restarted node numbers its enqueues from 1 again.
	incarnation string
	// taken are the publishes this node has routed, per publisher incarnation (see
	// takePublish).
	taken map[string]*seqSet
}

// NewNode makes a node that starts with topology topo.
func NewNode(cfg Config, topo *Topology) *Node {
	return &Node{cfg: cfg, topo: topo, hints: map[string]string{}, qseq: map[string]int64{}, taken: map[string]*seqSet{}}
}

// Start opens (and recovers) every queue the node hosts and starts the heartbeat.
func (n *Node) Start(env *sim.Env) {
	n.env, n.name = env, env.Name()
	n.incarnation = fmt.Sprintf("%s.%08x", n.name, uint32(env.Rand().Uint64()))
	n.syncHosts()
	env.SetTimer(n.cfg.Heartbeat, sim.TimerTag{Kind: timerHeartbeat})
}

// Topology is the node's current topology.
func (n *Node) Topology() *Topology { return n.topo }

// syncHosts creates a host for every queue of the topology the node holds and has none yet.
func (n *Node) syncHosts() {
	for i, q := range n.topo.Queues {
		if n.host(q.Name) != nil {
			continue
		}
		if (q.Type == Classic && q.Home == n.name) || (q.Type == Quorum && slices.Contains(q.Members, n.name)) {
			st := NewState(q)
			st.SetTracing(n.env.Tracing())
			h := &host{n: n, cfg: q, gid: int64(i + 1), st: st, channels: map[int64]*channelInfo{}}
			n.hosts = append(n.hosts, h)
			h.start()
		}
	}
}

func (n *Node) host(queue string) *host {
	for _, h := range n.hosts {
		if h.cfg.Name == queue {
			return h
		}
	}
	return nil
}

// Recv handles Raft's messages, the fsyncs of journals, and the protocol.
func (n *Node) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case raft.Message:
		for _, h := range n.hosts {
			if h.raft != nil && h.gid == m.Group {
				h.raft.Step(env, from, m)
				h.afterRaft()
				return
			}
		}
	case sim.FsyncDone:
		for _, h := range n.hosts {
			if h.raft != nil && h.raft.Step(env, from, m) {
				h.afterRaft()
				return
			}
			if h.raft == nil && m.File == h.file {
				h.onSynced(m.Size)
				return
			}
		}
	case Declare:
		n.topo = m.Topo
		n.syncHosts()
	case Publish:
		n.onPublish(from, m)
	case EnqueueReq:
		n.onEnqueueReq(from, m)
	case EnqueueResp:
		n.onEnqueueResp(m)
	case Subscribe:
		if h := n.acting(from, m.Queue, m.Req); h != nil {
			h.propose(Command{Op: OpCheckout, Consumer: env.NameOf(from), Req: m.Req, Prefetch: m.Prefetch, AutoAck: m.AutoAck})
		}
	case Heartbeat:
		n.channelHost(from, m.Queue, m.Channel, m.Frame)
	case Ack:
		if h := n.channelHost(from, m.Queue, m.Channel, m.Frame); h != nil {
			h.propose(Command{Op: OpAck, Channel: m.Channel, Tag: m.Tag})
		}
	case Reject:
		if h := n.channelHost(from, m.Queue, m.Channel, m.Frame); h != nil {
			h.propose(Command{Op: OpReject, Channel: m.Channel, Tag: m.Tag, Requeue: m.Requeue, Nack: m.Nack})
		}
	case Cancel:
		if h := n.host(m.Queue); h != nil && h.active && h.st.HasChannel(m.Channel) {
			h.closeBroken(m.Channel, "reset by the consumer")
		}
	case ReceiveReq:
		if h := n.acting(from, m.Queue, m.Req); h != nil {
			h.propose(Command{Op: OpReceive, Consumer: env.NameOf(from), Req: m.Req, Max: m.Max, Visibility: m.Visibility})
		}
	case DeleteReq:
		if h := n.acting(from, m.Queue, m.Req); h != nil {
			h.propose(Command{Op: OpDelete, Consumer: env.NameOf(from), Req: m.Req, Handle: m.Handle})
		}
	case VisibilityReq:
		if h := n.acting(from, m.Queue, m.Req); h != nil {
			h.propose(Command{Op: OpVisibility, Consumer: env.NameOf(from), Req: m.Req, Handle: m.Handle, Visibility: m.Timeout})
		}
	}
}

// acting returns the host of queue if this node acts for it, and otherwise answers the
// client with NotLeader.
func (n *Node) acting(from sim.NodeID, queue string, req int64) *host {
	h := n.host(queue)
	if h != nil && h.active {
		return h
	}
	n.env.Send(from, NotLeader{Queue: queue, Req: req, Leader: n.leaderHint(queue)})
	return nil
}

// channelHost returns the host acting for queue if channel is open on it and frame is
// the next one, and otherwise tells the consumer its channel is closed (or, on a missing
// frame, closes it: the connection broke).
func (n *Node) channelHost(from sim.NodeID, queue string, channel int64, frame uint64) *host {
	h := n.host(queue)
	if h != nil && h.active && h.st.HasChannel(channel) {
		ch := h.channel(channel)
		if ch.broken {
			return nil
		}
		if frame != ch.inFrame+1 {
			h.closeBroken(channel, fmt.Sprintf("connection broken: frame %d came after frame %d", frame, ch.inFrame))
			return nil
		}
		ch.inFrame = frame
		ch.lastHeard = n.env.Now()
		return h
	}
	reason := "unknown channel"
	if h == nil || !h.active {
		reason = n.name + " does not lead " + queue
	}
	n.env.Send(from, ChannelClosed{Queue: queue, Channel: channel, Reason: reason, Leader: n.leaderHint(queue)})
	return nil
}

// leaderHint is the node this node believes acts for queue, "" if it knows none.
func (n *Node) leaderHint(queue string) string {
	q, ok := n.topo.Queue(queue)
	if !ok {
		return ""
	}
	if q.Type == Classic {
		return q.Home
	}
	if h := n.host(queue); h != nil {
		if l := h.raft.Leader(); l != raft.None {
			return n.env.NameOf(l)
		}
		return ""
	}
	return n.hints[queue]
}

// Timer handles Raft ticks, the heartbeat, queue deadlines and forward retries.
func (n *Node) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case raft.DefaultTimerKind:
		for _, h := range n.hosts {
			if h.raft != nil && h.raft.HandleTimer(env, tag) {
				h.afterRaft()
				return
			}
		}
	case timerHeartbeat:
		env.SetTimer(n.cfg.Heartbeat, sim.TimerTag{Kind: timerHeartbeat})
		for _, h := range n.hosts {
			h.heartbeat()
		}
	case timerDeadline:
		for _, h := range n.hosts {
			if h.gid == tag.Arg {
				h.onDeadline()
			}
		}
	case timerForward:
		n.forwardArmed = false
		n.retryForwards()
	}
}

// ---- routing ----

// noPublisher is the "publisher" of dead letters: nobody to confirm to.
const noPublisher = sim.External

// pendingPub is a routed publish waiting for its queues' answers.
type pendingPub struct {
	from     sim.NodeID // the publisher; noPublisher for a dead letter
	seq      int64
	confirm  bool
	msg      Message
	queues   []string
	msgs     []Message // msg as forwarded to each queue, with its QSeq
	sentAt   []sim.Time
	done     []bool
	tries    []int
	ok       int
	failed   string
	deadline sim.Time
}

func (n *Node) onPublish(from sim.NodeID, p Publish) {
	env := n.env
	if !n.takePublish(p) {
		sim.Record(env, PublishDuplicate{Value: p.Value, PubID: p.PubID, Seq: p.Seq})
		return
	}
	queues, found := n.topo.Route(p.Exchange, p.Key, p.Headers)
	switch {
	case !found:
		sim.Record(env, NoExchange{Value: p.Value, PubID: p.PubID, Exchange: p.Exchange, Seq: p.Seq})
		if p.Confirm {
			env.Send(from, Confirm{PubID: p.PubID, Seq: p.Seq, Certain: true, Reason: "NOT_FOUND: no " + ExchangeText(p.Exchange)})
		}
		return
	case len(queues) == 0:
		sim.Record(env, Unroutable{Value: p.Value, PubID: p.PubID, Exchange: p.Exchange, Seq: p.Seq, Mandatory: p.Mandatory})
		if p.Mandatory {
			env.Send(from, Returned{PubID: p.PubID, Seq: p.Seq, Reason: "NO_ROUTE"})
		}
		if p.Confirm {
			env.Send(from, Confirm{PubID: p.PubID, Seq: p.Seq, OK: true})
		}
		return
	}
	if env.Tracing() {
		sim.Record(env, Routed{From: env.NameOf(from), Value: p.Value, PubID: p.PubID, Seq: p.Seq, Exchange: p.Exchange, Key: p.Key,
			Headers: slices.Clone(p.Headers), Queues: slices.Clone(queues)})
	}
	msg := Message{Value: p.Value, Key: p.Key, Exchange: p.Exchange, Headers: slices.Clone(p.Headers), PubID: p.PubID, Seq: p.Seq,
		TTL: p.TTL, Delay: p.Delay, Group: p.Group, DedupID: p.DedupID}
	n.route(&pendingPub{from: from, seq: p.Seq, confirm: p.Confirm && !n.confirmOnRoute(from, p), msg: msg, queues: queues})
}

// confirmOnRoute is the bug BugConfirmOnRoute: the publish is confirmed now, before any
// queue has it. It reports whether it confirmed.
func (n *Node) confirmOnRoute(from sim.NodeID, p Publish) bool {
	if !p.Confirm || !n.cfg.has(BugConfirmOnRoute) {
		return false
	}
	sim.Record(n.env, ConfirmedOnRoute{Value: p.Value, PubID: p.PubID, Seq: p.Seq})
	n.env.Send(from, Confirm{PubID: p.PubID, Seq: p.Seq, OK: true})
	return true
}

// takePublish reports whether a publish is new to this node, and remembers it. A
// publisher's channel is a TCP connection, which hands each frame over once; the
// simulated network may duplicate a message, and a copy routed again would be enqueued
// twice (under a fresh enqueuer number). The node therefore takes each (publisher
// incarnation, publish sequence number) once, in whatever order they arrive.
func (n *Node) takePublish(p Publish) bool {
	s := n.taken[p.PubID]
	if s == nil {
		s = &seqSet{}
		n.taken[p.PubID] = s
	}
	return s.add(p.Seq)
}

// seqSet is a set of sequence numbers from 1 that mostly arrive in order: every number
// up to low, and the sorted ones above it.
type seqSet struct {
	low   int64
	above []int64
}

// add inserts seq and reports whether it was new.
func (s *seqSet) add(seq int64) bool {
	if seq <= s.low {
		return false
	}
	i, found := slices.BinarySearch(s.above, seq)
	if found {
		return false
	}
	s.above = slices.Insert(s.above, i, seq)
	for len(s.above) > 0 && s.above[0] == s.low+1 {
		s.low++
		s.above = s.above[1:]
	}
	return true
}

func (n *Node) route(pp *pendingPub) {
	pp.done = make([]bool, len(pp.queues))
	pp.tries = make([]int, len(pp.queues))
	pp.sentAt = make([]sim.Time, len(pp.queues))
	enq := pp.msg.PubID + "@" + n.incarnation
	for _, q := range pp.queues {
		k := enq + "|" + q
		n.qseq[k]++
		m := pp.msg
		m.Enqueuer, m.QSeq = enq, n.qseq[k]
		pp.msgs = append(pp.msgs, m)
	}
	pp.deadline = n.env.Now().Add(n.cfg.ForwardTimeout)
	n.pending = append(n.pending, pp)
	for i := range pp.queues {
		n.forward(pp, i)
	}
	n.armForward()
}

// deadLetter republishes a message a queue dead-lettered, from the node acting for it.
func (n *Node) deadLetter(e Effect, source string) {
	queues, _ := n.topo.Route(e.Exchange, e.Key, e.Msg.Headers)
	if len(queues) == 0 {
		sim.Record(n.env, DeadLetterUnrouted{Msg: e.Msg, Source: source, Exchange: e.Exchange, Key: e.Key})
		return
	}
	m := e.Msg
	m.Exchange, m.Key = e.Exchange, e.Key
	m.PubID, m.Seq = "dlx:"+source, e.Msg.ID
	m.TTL, m.Delay = 0, 0 // RabbitMQ removes the expiration of a dead-lettered message
	n.route(&pendingPub{from: noPublisher, msg: m, queues: queues})
}

func (n *Node) forward(pp *pendingPub, i int) {
	q := pp.queues[i]
	target := n.leaderHint(q)
	if target == "" {
		cfg, ok := n.topo.Queue(q)
		if !ok {
			return
		}
		target = cfg.Members[pp.tries[i]%len(cfg.Members)]
	}
	pp.tries[i]++
	pp.sentAt[i] = n.env.Now()
	req := EnqueueReq{Queue: q, Msg: pp.msgs[i], Via: n.name}
	if target == n.name {
		n.onEnqueueReq(n.env.Self(), req)
		return
	}
	if id, ok := n.env.Lookup(target); ok {
		n.env.Send(id, req)
	}
}

func (n *Node) armForward() {
	if !n.forwardArmed && len(n.pending) > 0 {
		n.forwardArmed = true
		n.env.SetTimer(n.cfg.ForwardRetry, sim.TimerTag{Kind: timerForward})
	}
}

func (n *Node) retryForwards() {
	now := n.env.Now()
	n.pending = slices.DeleteFunc(n.pending, func(pp *pendingPub) bool {
		if now >= pp.deadline {
			if n.env.Tracing() {
				sim.Record(n.env, ForwardAbandoned{Value: pp.msg.Value, PubID: pp.msg.PubID, Seq: pp.msg.Seq, Waiting: pp.waiting(), After: n.cfg.ForwardTimeout})
			}
			return true
		}
		return false
	})
	for _, pp := range slices.Clone(n.pending) {
		for i, d := range pp.done {
			if !d && now.Sub(pp.sentAt[i]) >= n.cfg.ForwardRetry {
				n.forward(pp, i)
			}
		}
	}
	n.armForward()
}

func (pp *pendingPub) waiting() []string {
	var w []string
	for i, d := range pp.done {
		if !d {
			w = append(w, pp.queues[i])
		}
	}
	return w
}

func (n *Node) onEnqueueReq(from sim.NodeID, req EnqueueReq) {
	h := n.host(req.Queue)
	if h == nil || !h.leading() {
		n.answerEnqueue(req.Via, EnqueueResp{Queue: req.Queue, PubID: req.Msg.PubID, Seq: req.Msg.Seq, Status: EnqueueRetry, Leader: n.leaderHint(req.Queue)})
		return
	}
	msg := req.Msg
	if !h.propose(Command{Op: OpEnqueue, Msg: &msg, Via: req.Via}) {
		n.answerEnqueue(req.Via, EnqueueResp{Queue: req.Queue, PubID: req.Msg.PubID, Seq: req.Msg.Seq, Status: EnqueueRetry, Leader: n.leaderHint(req.Queue)})
		return
	}
	n.confirmBeforeCommit(h, req)
}

// confirmBeforeCommit is the bug BugConfirmBeforeCommit: a quorum queue's leader answers
// an enqueue it has only appended to its own log. (The answer the commit brings later
// finds the publish settled and is ignored.)
func (n *Node) confirmBeforeCommit(h *host, req EnqueueReq) {
	if h.raft == nil || !n.cfg.has(BugConfirmBeforeCommit) {
		return
	}
	sim.Record(n.env, EnqueueAnsweredEarly{Queue: req.Queue, Value: req.Msg.Value, PubID: req.Msg.PubID, Seq: req.Msg.Seq})
	n.answerEnqueue(req.Via, EnqueueResp{Queue: req.Queue, PubID: req.Msg.PubID, Seq: req.Msg.Seq, Status: EnqueueOK})
}

func (n *Node) answerEnqueue(via string, resp EnqueueResp) {
	if via == n.name {
		n.onEnqueueResp(resp)
		return
	}
	if id, ok := n.env.Lookup(via); ok {
		n.env.Send(id, resp)
	}
}

func (n *Node) onEnqueueResp(r EnqueueResp) {
	i := slices.IndexFunc(n.pending, func(pp *pendingPub) bool { return pp.msg.PubID == r.PubID && pp.msg.Seq == r.Seq })
	if i < 0 {
		return
	}
	pp := n.pending[i]
	qi := slices.Index(pp.queues, r.Queue)
	if qi < 0 || pp.done[qi] {
		return
	}
	switch r.Status {
	case EnqueueRetry:
		if r.Leader != "" {
			n.hints[r.Queue] = r.Leader
		}
		return
	case EnqueueOK:
		pp.ok++
	case EnqueueFail:
		pp.failed = r.Reason
	}
	pp.done[qi] = true
	if slices.Contains(pp.done, false) {
		return
	}
	n.pending = slices.Delete(n.pending, i, i+1)
	if pp.from == noPublisher || !pp.confirm {
		return
	}
	if pp.failed == "" {
		sim.Record(n.env, PublishConfirmed{Value: pp.msg.Value, PubID: pp.msg.PubID, Seq: pp.seq, Queues: pp.queues})
		n.env.Send(pp.from, Confirm{PubID: pp.msg.PubID, Seq: pp.seq, OK: true})
		return
	}
	sim.Record(n.env, PublishNacked{Value: pp.msg.Value, PubID: pp.msg.PubID, Seq: pp.seq, Reason: pp.failed, Certain: pp.ok == 0})
	n.env.Send(pp.from, Confirm{PubID: pp.msg.PubID, Seq: pp.seq, Certain: pp.ok == 0, Reason: pp.failed})
}

// ---- one queue on one node ----

// host is one queue on one node: the state machine and what keeps it durable (a Raft
// member, or a journal), and while the node acts for the queue, its consumers' channels.
type host struct {
	n   *Node
	cfg QueueConfig
	gid int64
	st  *State
	// raft is a quorum queue's member; nil for a classic queue.
	raft *raft.Raft
	// A classic queue's journal: every command, framed and CRC'd, in file.
	file            string
	written, synced int64
	syncing         bool
	waiting         []heldEffect
	// active: the node acts for the queue (a quorum leader whose epoch is applied, or
	// a classic queue's home once recovered).
	active      bool
	needEpoch   bool
	channels    map[int64]*channelInfo
	tickPending bool
	deadlineAt  sim.Time
}

type heldEffect struct {
	at int64 // journal size that must be durable first
	e  Effect
}

// channelInfo is what the acting node knows of a consumer's channel (its connection).
type channelInfo struct {
	lastHeard sim.Time
	// inFrame is the last frame received, outFrame the last sent.
	inFrame, outFrame uint64
	// broken: the node proposed to close the channel; nothing more is taken from it.
	broken bool
}

func (h *host) channel(id int64) *channelInfo {
	ch := h.channels[id]
	if ch == nil {
		ch = &channelInfo{lastHeard: h.env().Now()}
		h.channels[id] = ch
	}
	return ch
}

// closeBroken closes a channel whose connection broke (or was reset): its unacked
// messages go back to the queue, counted as failed deliveries.
func (h *host) closeBroken(id int64, reason string) {
	ch := h.channel(id)
	if ch.broken {
		return
	}
	ch.broken = true
	h.propose(Command{Op: OpDown, Channel: id, Reason: reason})
}

func (h *host) env() *sim.Env { return h.n.env }

func (h *host) start() {
	env := h.env()
	if h.cfg.Type == Quorum {
		rc := raft.DefaultConfig(h.cfg.Members...)
		rc.Dir = "queue/" + h.cfg.Name
		rc.Group = h.gid
		r, err := raft.New(rc, h)
		if err != nil {
			panic("queue: " + err.Error())
		}
		h.raft = r
		r.Start(env)
		h.afterRaft()
		return
	}
	h.file = "queue/" + h.cfg.Name + "/journal"
	h.recover()
	h.active = true
	h.propose(Command{Op: OpEpoch})
}

// leading reports whether the node may propose for the queue (a quorum leader may
// before its epoch is applied: its entries follow the epoch).
func (h *host) leading() bool {
	if h.raft != nil {
		return h.raft.IsLeader()
	}
	return h.active
}

// propose hands a command to the queue's log: Raft for a quorum queue (it takes effect
// when committed), the journal for a classic queue (it takes effect now).
func (h *host) propose(c Command) bool {
	env := h.env()
	c.At = env.Now()
	if h.raft != nil {
		if !h.raft.IsLeader() {
			return false
		}
		_, _, ok := h.raft.Propose(env, c.Encode())
		h.afterRaft()
		return ok
	}
	p := c.Encode()
	rec := make([]byte, 8, 8+len(p))
	binary.BigEndian.PutUint32(rec[0:4], uint32(len(p)))
	binary.BigEndian.PutUint32(rec[4:8], crc32.ChecksumIEEE(p))
	rec = append(rec, p...)
	off := env.Disk().Append(h.file, rec)
	h.written = off + int64(len(rec))
	h.exec(c, h.st.Apply(c), h.written)
	if !h.syncing {
		h.syncing = true
		env.Fsync(h.file)
	}
	return true
}

// recover replays a classic queue's journal, cutting a torn or corrupt tail.
func (h *host) recover() {
	env := h.env()
	d := env.Disk()
	data := d.ReadAll(h.file)
	off, n := 0, 0
	for off+8 <= len(data) {
		size := int(binary.BigEndian.Uint32(data[off : off+4]))
		sum := binary.BigEndian.Uint32(data[off+4 : off+8])
		if off+8+size > len(data) || crc32.ChecksumIEEE(data[off+8:off+8+size]) != sum {
			break
		}
		c, err := DecodeCommand(data[off+8 : off+8+size])
		if err != nil {
			break
		}
		h.st.Apply(c)
		off += 8 + size
		n++
	}
	torn := len(data) - off
	if torn > 0 {
		d.Truncate(h.file, int64(off))
	}
	h.written, h.synced = int64(off), int64(off)
	if n > 0 || torn > 0 {
		sim.Record(env, JournalRecovered{Queue: h.cfg.Name, Commands: n, TornBytes: torn, Ready: len(h.st.ready), WasUnacked: len(h.st.out)})
	}
}

func (h *host) onSynced(size int64) {
	env := h.env()
	h.syncing = false
	h.synced = max(h.synced, size)
	n := 0
	for n < len(h.waiting) && h.waiting[n].at <= h.synced {
		n++
	}
	ready := slices.Clone(h.waiting[:n])
	h.waiting = slices.Delete(h.waiting, 0, n)
	if len(ready) > 0 {
		sim.Record(env, JournalSynced{Queue: h.cfg.Name, Size: h.synced, Released: len(ready)})
	}
	for _, w := range ready {
		h.answer(w.e)
	}
	if h.written > h.synced {
		h.syncing = true
		env.Fsync(h.file)
	}
}

// afterRaft runs after every call into Raft: a new leader proposes its epoch.
func (h *host) afterRaft() {
	if h.needEpoch && h.raft.IsLeader() {
		h.needEpoch = false
		h.propose(Command{Op: OpEpoch, Term: h.raft.Term()})
	}
}

// Apply is raft.StateMachine: every member applies every committed command; the leader
// acts on the effects.
func (h *host) Apply(env *sim.Env, e raft.Entry) {
	if e.Type != raft.EntryNormal {
		return
	}
	c, err := DecodeCommand(e.Data)
	if err != nil {
		panic(fmt.Sprintf("queue %s: entry %d: %v", h.cfg.Name, e.Index, err))
	}
	effects := h.st.Apply(c)
	if c.Op == OpTick {
		h.tickPending = false
	}
	if !h.raft.IsLeader() {
		return
	}
	if c.Op == OpEpoch && c.Term == h.raft.Term() {
		h.active = true
		clear(h.channels)
		sim.Record(env, ActingStarted{Queue: h.cfg.Name, Node: env.Name(), Epoch: h.st.epoch, Term: c.Term, Ready: len(h.st.ready), Unsettled: len(h.st.out)})
	}
	h.exec(c, effects, 0)
}

// Restore is raft.StateMachine's; queues take no snapshots (their logs are replayed
// from the start), so it is never called.
func (h *host) Restore(env *sim.Env, s raft.Snapshot) {
	panic("queue: quorum queues take no snapshots")
}

// RoleChanged is raft.RoleObserver: a new leader proposes an epoch; a leader that lost
// its place closes its consumers' channels, so they find the new one.
func (h *host) RoleChanged(env *sim.Env, role raft.Role, term int64, leader sim.NodeID) {
	if role == raft.Leader {
		h.needEpoch = true
		return
	}
	h.needEpoch = false
	if !h.active {
		return
	}
	h.active, h.tickPending, h.deadlineAt = false, false, 0
	hint := ""
	if leader != raft.None {
		hint = env.NameOf(leader)
	}
	for _, c := range h.st.consumers {
		if id, ok := env.Lookup(c.name); ok {
			env.Send(id, ChannelClosed{Queue: h.cfg.Name, Channel: c.channel, Reason: env.Name() + " stopped leading " + h.cfg.Name, Leader: hint})
		}
	}
	clear(h.channels)
	sim.Record(env, ActingStopped{Queue: h.cfg.Name, Node: env.Name(), Term: term})
}

// exec carries out a command's effects on the acting node. Confirms of a classic queue
// wait until the journal is durable up to the command (durableAt).
func (h *host) exec(c Command, effects []Effect, durableAt int64) {
	env := h.env()
	for _, e := range effects {
		switch e.Kind {
		case EffTrace:
			sim.Record(env, e.Event)
		case EffEnqueued:
			if h.raft == nil && durableAt > h.synced {
				h.waiting = append(h.waiting, heldEffect{at: durableAt, e: e})
				continue
			}
			h.answer(e)
		case EffDeadLetter:
			h.n.deadLetter(e, h.cfg.Name)
		default:
			if h.active {
				h.answer(e)
			}
		}
	}
	h.arm()
}

// answer sends an effect's message.
func (h *host) answer(e Effect) {
	env := h.env()
	q := h.cfg.Name
	if e.Kind == EffEnqueued {
		r := EnqueueResp{Queue: q, PubID: e.PubID, Seq: e.Seq, Status: EnqueueOK}
		switch {
		case e.Retry:
			r.Status = EnqueueRetry
		case !e.OK:
			r.Status, r.Reason = EnqueueFail, e.Reason
		}
		h.n.answerEnqueue(e.To, r)
		return
	}
	to, ok := env.Lookup(e.To)
	if !ok {
		return
	}
	switch e.Kind {
	case EffSubscribed:
		h.channels[e.Channel] = &channelInfo{lastHeard: env.Now()}
		env.Send(to, Subscribed{Queue: q, Req: e.Req, Channel: e.Channel})
	case EffDeliver:
		ch := h.channel(e.Channel)
		ch.outFrame++
		env.Send(to, Delivery{Queue: q, Channel: e.Channel, Frame: ch.outFrame, Tag: e.Tag, Msg: e.Msg, Redelivered: e.Msg.AcquiredCount > 1})
	case EffClosed:
		delete(h.channels, e.Channel)
		env.Send(to, ChannelClosed{Queue: q, Channel: e.Channel, Reason: e.Reason})
	case EffReceived:
		env.Send(to, ReceiveResp{Queue: q, Req: e.Req, Msgs: e.Msgs, Handles: e.Handles})
	case EffDeleted:
		env.Send(to, DeleteResp{Queue: q, Req: e.Req, OK: e.OK, Deleted: e.Deleted, Reason: e.Reason})
	case EffChanged:
		env.Send(to, VisibilityResp{Queue: q, Req: e.Req, OK: e.OK, Reason: e.Reason})
	}
}

// heartbeat runs every interval on the acting node: a heartbeat to every consumer, and
// a channel closed (its unacked messages requeued) for every consumer silent for two.
func (h *host) heartbeat() {
	if !h.active {
		return
	}
	env := h.env()
	now := env.Now()
	dead := 2 * h.n.cfg.Heartbeat
	for _, c := range slices.Clone(h.st.consumers) {
		ch := h.channel(c.channel)
		if ch.broken {
			continue
		}
		if now.Sub(ch.lastHeard) > dead {
			h.closeBroken(c.channel, fmt.Sprintf("no heartbeat from %s for %s (connection lost)", c.name, now.Sub(ch.lastHeard)))
			continue
		}
		if id, ok := env.Lookup(c.name); ok {
			ch.outFrame++
			env.Send(id, Heartbeat{Queue: h.cfg.Name, Channel: c.channel, Frame: ch.outFrame})
		}
	}
}

// arm sets the deadline timer for the next moment a tick would change something.
func (h *host) arm() {
	if !h.active {
		return
	}
	env := h.env()
	d := h.st.NextDeadline()
	if len(h.st.consumers) > 0 {
		if v := h.st.NextVisible(env.Now()); v > 0 && (d == 0 || v < d) {
			d = v
		}
	}
	if d == 0 || (h.deadlineAt != 0 && h.deadlineAt <= d) {
		return
	}
	h.deadlineAt = d
	env.SetTimer(max(0, d.Sub(env.Now())), sim.TimerTag{Kind: timerDeadline, Arg: h.gid})
}

func (h *host) onDeadline() {
	env := h.env()
	now := env.Now()
	if h.deadlineAt != 0 && h.deadlineAt <= now {
		h.deadlineAt = 0
	}
	if !h.active || h.tickPending {
		return
	}
	d := h.st.NextDeadline()
	if (d > 0 && d <= now) || (len(h.st.consumers) > 0 && h.st.dueVisible(now)) {
		if h.raft != nil {
			h.tickPending = true
		}
		if !h.propose(Command{Op: OpTick}) {
			h.tickPending = false
		}
	}
	h.arm()
}

// ---- views ----

// QueueView is what a node knows of one queue it hosts.
type QueueView struct {
	State  *State
	Active bool // the node acts for the queue
	Role   string
	Term   int64
	Leader string
	Commit int64
}

// Queue returns the node's view of a queue it hosts.
func (n *Node) Queue(name string) (QueueView, bool) {
	h := n.host(name)
	if h == nil {
		return QueueView{}, false
	}
	v := QueueView{State: h.st, Active: h.active, Role: "home"}
	if h.raft != nil {
		st := h.raft.Status()
		v.Role, v.Term, v.Commit = st.Role.String(), st.Term, st.Commit
		if st.Leader != raft.None {
			v.Leader = h.n.env.NameOf(st.Leader)
		}
	}
	return v, true
}

// Pending is the number of routed publishes waiting for queues' answers.
func (n *Node) Pending() int { return len(n.pending) }
