package raft

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/sim"
)

// StateMachine is the host's side of the log: Raft calls it with what the group decided.
// Callbacks run inside Raft's handlers; they may call Propose, ReadIndex and Snapshot.
type StateMachine interface {
	// Apply is called once per committed entry, in index order, no-op entries included.
	// After a restart it is called again from the snapshot on: host state is volatile.
	Apply(env *sim.Env, e Entry)
	// Restore replaces the host's state with a snapshot's: at Start when the disk holds
	// one, and when the leader installs one.
	Restore(env *sim.Env, s Snapshot)
}

// ReadHandler is implemented by hosts that use ReadIndex.
type ReadHandler interface {
	// ReadDone reports a ReadIndex request: ok means the node was still the leader when
	// the request was made and has applied everything committed by then, so a read of
	// the host's state now is linearizable. !ok means it lost the leadership first.
	ReadDone(env *sim.Env, ctx int64, ok bool)
}

// RoleObserver is implemented by hosts that want to hear of role, term and leader
// changes (a controller becoming active, a queue leader failing its clients).
type RoleObserver interface {
	RoleChanged(env *sim.Env, role Role, term int64, leader sim.NodeID)
}

// Role is a node's part in its group.
type Role uint8

const (
	Follower Role = iota
	PreCandidate
	Candidate
	Leader
)

func (r Role) String() string {
	switch r {
	case Follower:
		return "follower"
	case PreCandidate:
		return "pre-candidate"
	case Candidate:
		return "candidate"
	case Leader:
		return "leader"
	}
	return "?"
}

// held is a message waiting until what it promises is durable: the term and vote of
// state generation needState, and the log up to needLog.
type held struct {
	to        sim.NodeID
	msg       Message
	needState uint64
	needLog   int64
}

// readReq is a ReadIndex request. seq is its leadership-check round, 0 while the leader
// has not yet committed an entry of its term (it does not know the commit index yet).
type readReq struct {
	ctx       int64
	index     int64
	seq       uint64
	confirmed bool
}

// Raft is one member of a Raft group, embedded in a host node. The host forwards its
// Start, the messages Step accepts and the timers HandleTimer accepts; everything else is
// the host's. Raft acts only through the *sim.Env it is handed.
type Raft struct {
	cfg    Config
	sm     StateMachine
	reader ReadHandler
	roles  RoleObserver

	self    sim.NodeID
	peers   []sim.NodeID
	selfIdx int
	quorum  int
	started bool

	term int64
	vote sim.NodeID
	role Role
	lead sim.NodeID

	commit  int64
	applied int64

	log   logStore
	state stateStore
	snap  Snapshot     // the durable snapshot (zero when none)
	saver *pendingSnap // a snapshot being written

	electionElapsed  int
	heartbeatElapsed int
	timeoutTicks     int // randomized election timeout

	votes []int8 // per peer: 0 unknown, 1 granted, -1 rejected
	prs   []progress

	held []held

	readSeq uint64
	reads   []readReq

	finishing bool
	notified  struct {
		role Role
		term int64
		lead sim.NodeID
	}

	truncations uint64
	matchBuf    []int64
}

// pendingSnap is a snapshot being made durable: the host's own (install false) or one
// from the leader.
type pendingSnap struct {
	snap    Snapshot
	file    string
	size    int64
	install bool
	from    sim.NodeID
	term    int64 // the term of the MsgSnap, to answer in
}

// New makes a group member. It does nothing until Start.
func New(cfg Config, sm StateMachine) (*Raft, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sm == nil {
		return nil, fmt.Errorf("raft: nil state machine")
	}
	r := &Raft{cfg: cfg, sm: sm, vote: None, lead: None}
	r.reader, _ = sm.(ReadHandler)
	r.roles, _ = sm.(RoleObserver)
	r.state.init(cfg.Dir)
	r.notified.lead = None
	return r, nil
}

// Config is the member's configuration.
func (r *Raft) Config() Config { return r.cfg }

// Start recovers the term, vote, snapshot and log from the disk, restores the host from
// the snapshot, and starts the tick. The host calls it from its own Start.
func (r *Raft) Start(env *sim.Env) {
	if r.started {
		invariant("Start called twice")
	}
	r.started = true
	r.self = env.Self()
	r.selfIdx = -1
	for i, name := range r.cfg.Peers {
		id, ok := env.Lookup(name)
		if !ok {
			panic(fmt.Sprintf("raft: peer %q is not a node of this world", name))
		}
		r.peers = append(r.peers, id)
		if id == r.self {
			r.selfIdx = i
		}
	}
	if r.selfIdx < 0 {
		panic(fmt.Sprintf("raft: node %s is not among the peers %v", env.Name(), r.cfg.Peers))
	}
	r.quorum = len(r.peers)/2 + 1
	r.votes = make([]int8, len(r.peers))

	d := env.Disk()
	stateFile, stateGen := r.state.load(d)
	r.term, r.vote = r.state.want.term, r.state.want.vote
	snap, invalidSnaps := loadSnapshot(d, r.cfg.Dir)
	r.snap = snap
	walRec, reset := r.log.open(env, r.cfg.Dir+"/log", r.cfg.WAL, snap.SnapshotMeta)
	loadedTerm, loadedVote := r.term, r.vote
	if lt := r.log.lastTerm(); lt > r.term {
		// The log's fsync completed before the term's: the log proves the term.
		r.term, r.vote = lt, None
		r.state.set(env, r.term, r.vote)
	}
	r.commit, r.applied = snap.Index, snap.Index
	sim.Record(env, Recovered{
		StateFile: stateFile, StateGen: stateGen, Term: loadedTerm, Vote: loadedVote,
		Snapshot: snap.SnapshotMeta, InvalidSnapshots: invalidSnaps,
		LogFirst: r.log.snap.Index + 1, LogLast: r.log.last(),
		WAL: walRec, WALRepaired: len(walRec.Cuts) > 0 || walRec.EpochsDropped > 0, Reset: reset,
	})
	if snap.Index > 0 {
		r.sm.Restore(env, snap)
	}
	r.becomeFollower(env, r.term, None)
	r.setTick(env)
	r.finish(env)
}

// ---- views ----

// Status is a member's state at a glance, for views and checkers.
type Status struct {
	Role     Role
	Term     int64
	Vote     sim.NodeID
	Leader   sim.NodeID
	Commit   int64
	Applied  int64
	Last     int64 // last index in the log
	LastTerm int64
	Snapshot SnapshotMeta // what the durable snapshot covers
	// Durable is the last index a crash now would keep (log or snapshot).
	Durable int64
	// Truncations counts the times this incarnation cut a divergent suffix off its log.
	Truncations uint64
}

// Status returns the member's state.
func (r *Raft) Status() Status {
	return Status{
		Role: r.role, Term: r.term, Vote: r.vote, Leader: r.lead, Commit: r.commit, Applied: r.applied,
		Last: r.log.last(), LastTerm: r.log.lastTerm(), Snapshot: r.log.snap, Durable: r.log.durable,
		Truncations: r.truncations,
	}
}

// Role is the member's role.
func (r *Raft) Role() Role { return r.role }

// IsLeader reports whether the member is the leader.
func (r *Raft) IsLeader() bool { return r.role == Leader }

// Term is the member's current term.
func (r *Raft) Term() int64 { return r.term }

// Leader is the leader the member knows of, or None.
func (r *Raft) Leader() sim.NodeID { return r.lead }

// Commit is the member's commit index.
func (r *Raft) Commit() int64 { return r.commit }

// Applied is the index of the last entry handed to the state machine.
func (r *Raft) Applied() int64 { return r.applied }

// LastIndex is the index of the last entry in the log.
func (r *Raft) LastIndex() int64 { return r.log.last() }

// SnapshotIndex is the index the durable snapshot covers (0 when there is none).
func (r *Raft) SnapshotIndex() int64 { return r.log.snap.Index }

// SnapshotPending reports whether a snapshot is being written.
func (r *Raft) SnapshotPending() bool { return r.saver != nil }

// Entry returns the entry at i if the log holds it (not compacted, not beyond the end).
func (r *Raft) Entry(i int64) (Entry, bool) {
	if i <= r.log.snap.Index || i > r.log.last() {
		return Entry{}, false
	}
	return r.log.entry(i), true
}

// Peers are the voters' node ids, in Config order (empty before Start).
func (r *Raft) Peers() []sim.NodeID { return slices.Clone(r.peers) }

// ---- host entry points ----

// Step handles a message the host received: a Message of this group, or the completion
// of an fsync of one of the group's files. It reports whether the message was Raft's.
func (r *Raft) Step(env *sim.Env, from sim.NodeID, msg sim.Message) bool {
	if !r.started {
		return false
	}
	switch m := msg.(type) {
	case Message:
		if m.Group != r.cfg.Group {
			return false
		}
		r.step(env, from, m)
	case sim.FsyncDone:
		if !r.onFsync(env, m) {
			return false
		}
	default:
		return false
	}
	r.finish(env)
	return true
}

// HandleTimer handles the group's tick and reports whether tag was it.
func (r *Raft) HandleTimer(env *sim.Env, tag sim.TimerTag) bool {
	if !r.started || tag.Kind != r.cfg.TimerKind || tag.Arg != r.cfg.Group {
		return false
	}
	r.setTick(env)
	r.tick(env)
	r.finish(env)
	return true
}

func (r *Raft) setTick(env *sim.Env) {
	env.SetTimer(r.cfg.Tick, sim.TimerTag{Kind: r.cfg.TimerKind, Arg: r.cfg.Group})
}

// maxEntryOverhead bounds what the wal adds to an entry's data in its batch.
const maxEntryOverhead = 64

// Propose appends data to the log if the member is the leader, not too far ahead of its
// commit index, and data fits a wal batch. It returns where the entry went: once an entry
// is applied at index with this term, the proposal is committed; an entry of another term
// applied at index means it was lost. Data is copied.
func (r *Raft) Propose(env *sim.Env, data []byte) (index, term int64, ok bool) {
	if r.role != Leader || r.log.last()-r.commit >= int64(r.cfg.MaxUncommitted) ||
		len(data) > r.cfg.WAL.MaxBatchBytes-maxEntryOverhead {
		return 0, 0, false
	}
	e := Entry{Index: r.log.last() + 1, Term: r.term, Type: EntryNormal, Data: slices.Clone(data)}
	if e.Data == nil {
		e.Data = []byte{}
	}
	r.appendLeader(env, e)
	r.finish(env)
	return e.Index, e.Term, true
}

// ReadIndex asks for a linearizable read: the host's ReadDone(ctx, true) comes once this
// leader has confirmed with a quorum that it still leads and has applied everything
// committed when the request was made. It returns false (and calls nothing back) when the
// member is not the leader or too many reads wait.
func (r *Raft) ReadIndex(env *sim.Env, ctx int64) bool {
	if r.role != Leader || len(r.reads) >= r.cfg.MaxPendingReads || r.reader == nil {
		return false
	}
	rr := readReq{ctx: ctx}
	switch {
	case r.cfg.Bugs.UnconfirmedReads:
		rr.index, rr.confirmed = r.commit, true
	case r.committedInTerm():
		rr.index = r.commit
		rr.seq = r.newReadRound(env)
	}
	r.reads = append(r.reads, rr)
	r.checkReads()
	r.finish(env)
	return true
}

// Snapshot tells Raft that data is the host's state after applying every entry up to
// index (at most Applied). Raft writes it, and once it is durable, drops the log up to
// index. One snapshot is written at a time; it returns an error when one is in flight or
// index is not after the current snapshot.
func (r *Raft) Snapshot(env *sim.Env, index int64, data []byte) error {
	switch {
	case r.saver != nil:
		return fmt.Errorf("raft: snapshot at %d is still being written", r.saver.snap.Index)
	case index <= r.log.snap.Index || index > r.applied:
		return fmt.Errorf("raft: snapshot at %d: want an index in (%d, %d]", index, r.log.snap.Index, r.applied)
	}
	t, _ := r.log.term(index)
	r.writeSnapshot(env, &pendingSnap{snap: Snapshot{SnapshotMeta{index, t}, slices.Clone(data)}})
	return nil
}

func (r *Raft) writeSnapshot(env *sim.Env, p *pendingSnap) {
	p.file = snapName(r.cfg.Dir, p.snap.Index)
	enc := encodeSnapshot(p.snap)
	d := env.Disk()
	d.Truncate(p.file, 0)
	d.Append(p.file, enc)
	p.size = int64(len(enc))
	env.Fsync(p.file)
	r.saver = p
}

// ---- persistence ----

func (r *Raft) onFsync(env *sim.Env, m sim.FsyncDone) bool {
	switch {
	case r.state.isFile(m.File):
		r.state.synced(env, m.Size)
	case r.log.isFile(m.File):
		r.log.synced(env)
		if r.role == Leader {
			r.prs[r.selfIdx].match = r.log.durable
			if r.maybeCommit(env) {
				r.bcastAppend(env, sendCommit)
			}
		}
	case r.saver != nil && m.File == r.saver.file:
		p := r.saver
		r.saver = nil
		if m.Size < p.size {
			sim.Record(env, SnapshotDropped{Snapshot: p.snap.SnapshotMeta, Durable: m.Size, Size: p.size})
			return true
		}
		r.snapshotDurable(env, p)
	case strings.HasPrefix(m.File, r.cfg.Dir+"/snap-"):
		// A snapshot file replaced since; nothing waits for it.
	default:
		return false
	}
	r.release(env)
	return true
}

// snapshotDurable makes a durable snapshot the current one: older snapshot files go, and
// the log is compacted (the host's snapshot) or replaced (one from the leader).
func (r *Raft) snapshotDurable(env *sim.Env, p *pendingSnap) {
	s := p.snap
	if s.Index <= r.log.snap.Index {
		if p.file != snapName(r.cfg.Dir, r.log.snap.Index) {
			env.Disk().Delete(p.file)
		}
		return
	}
	old := r.snap
	r.snap = s
	if old.Index > 0 {
		env.Disk().Delete(snapName(r.cfg.Dir, old.Index))
	}
	if !p.install {
		r.log.compact(s.SnapshotMeta)
		sim.Record(env, SnapshotTaken{Snapshot: s.SnapshotMeta, Bytes: len(s.Data)})
		return
	}
	// A leader's snapshot: keep the log after it if it agrees, else start over after it.
	if t, ok := r.log.term(s.Index); ok && t == s.Term && s.Index <= r.log.last() {
		r.log.compact(s.SnapshotMeta)
	} else {
		r.log.reset(s.SnapshotMeta)
		r.truncations++
		r.dropHeldAbove(s.Index)
	}
	if s.Index > r.commit {
		r.commit = s.Index
	}
	if s.Index > r.applied {
		r.applied = s.Index
		r.sm.Restore(env, s)
	}
	sim.Record(env, SnapshotInstalled{Snapshot: s.SnapshotMeta, Bytes: len(s.Data), From: env.NameOf(p.from)})
	if r.term == p.term && r.role == Follower {
		r.sendGated(env, p.from, Message{Type: MsgAppResp, Term: r.term, Index: s.Index}, s.Index)
	}
}

// sendGated sends m to `to` once everything it promises is durable: the current term
// and vote, and the log up to needLog. Messages wait in order.
func (r *Raft) sendGated(env *sim.Env, to sim.NodeID, m Message, needLog int64) {
	m.Group = r.cfg.Group
	h := held{to: to, msg: m, needState: r.state.want.gen, needLog: needLog}
	if len(r.held) == 0 && r.isDurable(h) {
		r.deliver(env, h)
		return
	}
	r.held = append(r.held, h)
}

func (r *Raft) isDurable(h held) bool {
	return r.state.durable >= h.needState && r.log.durable >= h.needLog
}

// release sends the held messages whose promises are durable now, oldest first.
func (r *Raft) release(env *sim.Env) {
	n := 0
	for n < len(r.held) && r.isDurable(r.held[n]) {
		n++
	}
	if n == 0 {
		return
	}
	ready := slices.Clone(r.held[:n])
	r.held = append(r.held[:0], r.held[n:]...)
	for _, h := range ready {
		r.deliver(env, h)
	}
}

func (r *Raft) deliver(env *sim.Env, h held) {
	if h.to == r.self {
		r.step(env, r.self, h.msg)
		return
	}
	env.Send(h.to, h.msg)
}

// dropHeldAbove forgets held answers that promise log entries above last, which a
// truncation just removed: they would be false once the new entries are durable.
func (r *Raft) dropHeldAbove(last int64) {
	r.held = slices.DeleteFunc(r.held, func(h held) bool { return h.needLog > last })
}

func (r *Raft) send(env *sim.Env, to sim.NodeID, m Message) {
	m.Group = r.cfg.Group
	env.Send(to, m)
}

// ---- the state machine ----

func (r *Raft) peerIndex(id sim.NodeID) int {
	for i, p := range r.peers {
		if p == id {
			return i
		}
	}
	return -1
}

func (r *Raft) resetElection(env *sim.Env) {
	r.electionElapsed = 0
	r.timeoutTicks = r.cfg.ElectionTicks + env.Rand().IntN(r.cfg.ElectionTicks)
}

func (r *Raft) setTerm(env *sim.Env, term int64, vote sim.NodeID) {
	r.term, r.vote = term, vote
	r.state.set(env, term, vote)
}

func (r *Raft) becomeFollower(env *sim.Env, term int64, lead sim.NodeID) {
	if term > r.term {
		r.setTerm(env, term, None)
	}
	r.role = Follower
	r.lead = lead
	r.heartbeatElapsed = 0
	r.prs = nil
	r.resetElection(env)
	r.failReads(env)
}

func (r *Raft) tick(env *sim.Env) {
	r.electionElapsed++
	if r.role != Leader {
		if r.electionElapsed >= r.timeoutTicks {
			r.electionElapsed = 0
			r.campaign(env, r.cfg.PreVote)
		}
		return
	}
	r.heartbeatElapsed++
	for i := range r.prs {
		if pr := &r.prs[i]; pr.state == snapshotting {
			if pr.snapTicks++; pr.snapTicks >= r.cfg.ElectionTicks {
				pr.becomeProbe() // the snapshot or its answer was lost: try again
			}
		}
	}
	if r.electionElapsed >= r.cfg.ElectionTicks {
		r.electionElapsed = 0
		if r.cfg.CheckQuorum {
			active := 0
			for i := range r.prs {
				if i == r.selfIdx || r.prs[i].active {
					active++
				}
				r.prs[i].active = false
			}
			if active < r.quorum {
				sim.Record(env, LostQuorum{Term: r.term, Active: active, Peers: len(r.peers)})
				r.becomeFollower(env, r.term, None)
				return
			}
		}
	}
	if r.heartbeatElapsed >= r.cfg.HeartbeatTicks {
		r.heartbeatElapsed = 0
		r.bcastAppend(env, sendHeartbeat)
	}
}

// campaign starts a pre-election (pre) or an election.
func (r *Raft) campaign(env *sim.Env, pre bool) {
	clear(r.votes)
	r.lead = None
	r.resetElection(env)
	typ, term := MsgVote, r.term+1
	if pre {
		r.role = PreCandidate
		typ = MsgPreVote
		sim.Record(env, PreCampaign{Term: term})
	} else {
		r.role = Candidate
		r.setTerm(env, term, r.self)
		sim.Record(env, Campaign{Term: term})
	}
	r.failReads(env)
	r.prs = nil
	for _, p := range r.peers {
		if p != r.self {
			r.send(env, p, Message{Type: typ, Term: term, Index: r.log.last(), LogTerm: r.log.lastTerm()})
		}
	}
	if pre {
		r.poll(env, r.selfIdx, true)
		return
	}
	// Our own vote counts once it is durable, like anybody's.
	r.sendGated(env, r.self, Message{Type: MsgVoteResp, Group: r.cfg.Group, Term: r.term}, 0)
}

// poll records a (pre-)vote answer and acts when the election is decided.
func (r *Raft) poll(env *sim.Env, idx int, granted bool) {
	if r.votes[idx] == 0 {
		if granted {
			r.votes[idx] = 1
		} else {
			r.votes[idx] = -1
		}
	}
	yes, no := 0, 0
	for _, v := range r.votes {
		switch v {
		case 1:
			yes++
		case -1:
			no++
		}
	}
	switch {
	case yes >= r.quorum:
		if r.role == PreCandidate {
			r.campaign(env, false)
		} else {
			r.becomeLeader(env)
		}
	case no > len(r.peers)-r.quorum:
		sim.Record(env, ElectionLost{Term: r.term + boolInt(r.role == PreCandidate), Rejected: no, Peers: len(r.peers)})
		r.becomeFollower(env, r.term, None)
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (r *Raft) becomeLeader(env *sim.Env) {
	r.role = Leader
	r.lead = r.self
	r.heartbeatElapsed, r.electionElapsed = 0, 0
	r.prs = make([]progress, len(r.peers))
	for i := range r.prs {
		r.prs[i] = progress{next: r.log.last() + 1}
	}
	r.prs[r.selfIdx].match = r.log.durable
	var voters []string
	for i, v := range r.votes {
		if v == 1 {
			voters = append(voters, env.NameOf(r.peers[i]))
		}
	}
	sim.Record(env, BecameLeader{Term: r.term, Voters: voters})
	r.appendLeader(env, Entry{Index: r.log.last() + 1, Term: r.term, Type: EntryNoop})
}

// appendLeader appends e to the leader's log and sends it to the followers.
func (r *Raft) appendLeader(env *sim.Env, e Entry) {
	r.log.append(env.Now(), []Entry{e})
	self := &r.prs[r.selfIdx]
	self.next = e.Index + 1
	sim.Record(env, LeaderAppended{Entry: e})
	r.bcastAppend(env, sendEntries)
}

// sendMode says when sendAppend sends a message without entries.
type sendMode uint8

const (
	sendEntries   sendMode = iota // only entries, within flow control
	sendCommit                    // entries, or an empty append carrying the commit index, within flow control
	sendHeartbeat                 // always, even when the flow is paused: an empty append at worst
)

func (r *Raft) bcastAppend(env *sim.Env, mode sendMode) {
	for i := range r.peers {
		if i != r.selfIdx {
			r.sendAppend(env, i, mode)
		}
	}
}

// sendAppend sends peer i the entries it is missing, or an empty append as mode says. It
// reports whether it sent entries.
func (r *Raft) sendAppend(env *sim.Env, i int, mode sendMode) bool {
	pr := &r.prs[i]
	paused := pr.paused(r.cfg.MaxInflight)
	if pr.state == snapshotting || (paused && mode != sendHeartbeat) {
		return false
	}
	prev := pr.next - 1
	prevTerm, ok := r.log.term(prev)
	if !ok {
		r.sendSnapshot(env, i)
		return false
	}
	var ents []Entry
	if !paused || pr.state == probing {
		if hi := min(r.log.last(), prev+int64(r.cfg.MaxEntriesPerMsg)); hi > prev {
			ents = r.log.slice(prev+1, hi)
		}
	}
	if len(ents) == 0 && mode == sendEntries {
		return false
	}
	r.send(env, r.peers[i], Message{Type: MsgApp, Term: r.term, Index: prev, LogTerm: prevTerm, Entries: ents, Commit: r.commit, Seq: r.readSeq})
	switch pr.state {
	case replicating:
		if n := len(ents); n > 0 {
			pr.next = ents[n-1].Index + 1
			pr.inflight = append(pr.inflight, ents[n-1].Index)
		}
	case probing:
		pr.probeSent = true
	}
	return len(ents) > 0
}

func (r *Raft) sendSnapshot(env *sim.Env, i int) {
	if r.snap.Index == 0 {
		invariant("peer %d needs entry %d, compacted, but there is no snapshot", i, r.prs[i].next-1)
	}
	s := r.snap
	r.prs[i].becomeSnapshot(s.Index)
	sim.Record(env, SnapshotSent{Snapshot: s.SnapshotMeta, To: env.NameOf(r.peers[i])})
	r.send(env, r.peers[i], Message{Type: MsgSnap, Term: r.term, Snapshot: &s})
}

// maybeCommit moves the commit index to the highest entry of the current term stored
// durably by a quorum, and reports whether it moved.
func (r *Raft) maybeCommit(env *sim.Env) bool {
	var n int64
	if r.cfg.Bugs.CommitOnMinority {
		n = r.prs[r.selfIdx].match
	} else {
		r.matchBuf = r.matchBuf[:0]
		for i := range r.prs {
			r.matchBuf = append(r.matchBuf, r.prs[i].match)
		}
		slices.Sort(r.matchBuf)
		n = r.matchBuf[len(r.matchBuf)-r.quorum]
	}
	if n <= r.commit {
		return false
	}
	if t, _ := r.log.term(n); t != r.term {
		return false // only entries of the current term are committed by counting
	}
	first := !r.committedInTerm()
	r.commitTo(env, n)
	if first {
		// The leader now knows the commit index: reads waiting for it can start.
		started := false
		for k := range r.reads {
			if rr := &r.reads[k]; rr.seq == 0 && !rr.confirmed {
				if !started {
					r.newReadRound(env)
					started = true
				}
				rr.index, rr.seq = r.commit, r.readSeq
			}
		}
		r.checkReads()
	}
	return true
}

func (r *Raft) committedInTerm() bool {
	t, _ := r.log.term(r.commit)
	return t == r.term
}

func (r *Raft) commitTo(env *sim.Env, n int64) {
	if n <= r.commit {
		return
	}
	if n > r.log.last() {
		invariant("commit %d beyond last index %d", n, r.log.last())
	}
	r.commit = n
	sim.Record(env, Committed{Index: n})
}

// step handles a Raft message from a peer, or from this node itself (its own vote).
func (r *Raft) step(env *sim.Env, from sim.NodeID, m Message) {
	idx := r.peerIndex(from)
	if idx < 0 {
		return
	}
	switch {
	case m.Term > r.term:
		if m.Type == MsgVote || m.Type == MsgPreVote {
			if r.cfg.CheckQuorum && r.lead != None && r.electionElapsed < r.cfg.ElectionTicks {
				return // we hear from a leader: its lease stands
			}
		}
		switch {
		case m.Type == MsgPreVote:
			// A pre-vote changes nobody's term.
		case m.Type == MsgPreVoteResp && !m.Reject:
			// A granted pre-vote carries the term we would campaign in.
		default:
			lead := None
			if m.Type == MsgApp || m.Type == MsgSnap {
				lead = from
			}
			if r.role == Leader {
				sim.Record(env, SteppedDown{Term: r.term, From: env.NameOf(from), NewTerm: m.Term})
			} else {
				sim.Record(env, TermSeen{Term: m.Term, Msg: m.Type, From: env.NameOf(from)})
			}
			r.becomeFollower(env, m.Term, lead)
		}
	case m.Term < r.term:
		if (r.cfg.CheckQuorum || r.cfg.PreVote) && (m.Type == MsgApp || m.Type == MsgSnap) {
			// Tell a deposed leader the term it missed.
			r.send(env, from, Message{Type: MsgAppResp, Term: r.term})
		} else if m.Type == MsgPreVote {
			r.send(env, from, Message{Type: MsgPreVoteResp, Term: r.term, Reject: true})
		}
		return
	}

	switch m.Type {
	case MsgPreVote, MsgVote:
		r.handleVote(env, from, m)
		return
	}
	switch r.role {
	case Leader:
		r.stepLeader(env, idx, m)
	case PreCandidate, Candidate:
		switch m.Type {
		case MsgApp, MsgSnap:
			r.becomeFollower(env, r.term, from)
			r.stepFollower(env, from, m)
		case MsgPreVoteResp:
			if r.role == PreCandidate && (m.Term == r.term+1 || m.Reject) {
				r.poll(env, idx, !m.Reject)
			}
		case MsgVoteResp:
			if r.role == Candidate {
				r.poll(env, idx, !m.Reject)
			}
		}
	case Follower:
		r.stepFollower(env, from, m)
	}
}

func (r *Raft) handleVote(env *sim.Env, from sim.NodeID, m Message) {
	pre := m.Type == MsgPreVote
	canVote := r.vote == from || (r.vote == None && r.lead == None) || (pre && m.Term > r.term)
	upToDate := m.LogTerm > r.log.lastTerm() || (m.LogTerm == r.log.lastTerm() && m.Index >= r.log.last())
	if !canVote || !upToDate {
		ev := Voted{Pre: pre, Candidate: env.NameOf(from), Term: m.Term, Why: LogBehind}
		if !canVote {
			ev.Why, ev.Other = VotedForOther, r.voteName(env)
			if r.vote == None {
				ev.Why, ev.Other = LeaderKnown, env.NameOf(r.lead)
			}
		}
		sim.Record(env, ev)
		resp := MsgVoteResp
		if pre {
			resp = MsgPreVoteResp
		}
		r.send(env, from, Message{Type: resp, Term: r.term, Reject: true})
		return
	}
	sim.Record(env, Voted{Pre: pre, Candidate: env.NameOf(from), Term: m.Term, Granted: true})
	if pre {
		r.send(env, from, Message{Type: MsgPreVoteResp, Term: m.Term})
		return
	}
	r.electionElapsed = 0
	r.setTerm(env, r.term, from)
	r.sendGated(env, from, Message{Type: MsgVoteResp, Group: r.cfg.Group, Term: r.term}, 0)
}

func (r *Raft) voteName(env *sim.Env) string {
	if r.vote == None {
		return "nobody"
	}
	return env.NameOf(r.vote)
}

func (r *Raft) stepFollower(env *sim.Env, from sim.NodeID, m Message) {
	switch m.Type {
	case MsgApp:
		r.electionElapsed = 0
		r.lead = from
		r.handleAppend(env, from, m)
	case MsgSnap:
		r.electionElapsed = 0
		r.lead = from
		r.handleSnapshot(env, from, m)
	}
}

func (r *Raft) handleAppend(env *sim.Env, from sim.NodeID, m Message) {
	resp := Message{Type: MsgAppResp, Group: r.cfg.Group, Term: r.term, Seq: m.Seq}
	if m.Index < r.commit {
		// Everything up to our commit index matches the leader's log.
		resp.Index = r.commit
		r.sendGated(env, from, resp, r.commit)
		return
	}
	if t, ok := r.log.term(m.Index); !ok || t != m.LogTerm {
		hint := min(m.Index, r.log.last())
		hint, hintTerm := r.findConflictByTerm(hint, m.LogTerm)
		resp.Reject, resp.Index, resp.Hint, resp.LogTerm = true, m.Index, hint, hintTerm
		r.send(env, from, resp)
		return
	}
	lastNew := m.Index + int64(len(m.Entries))
	for k, e := range m.Entries {
		if t, ok := r.log.term(e.Index); ok && t == e.Term {
			continue // already have it (a duplicate or a reordered append)
		}
		if e.Index <= r.log.last() {
			if e.Index <= r.commit {
				invariant("entry %d/t%d conflicts with committed entry", e.Index, e.Term)
			}
			old, _ := r.log.term(e.Index)
			sim.Record(env, Truncated{Index: e.Index, HadTerm: old, Leader: env.NameOf(from), LeaderTerm: e.Term})
			r.log.truncateFrom(e.Index)
			r.truncations++
			r.dropHeldAbove(e.Index - 1)
		}
		ents := m.Entries[k:]
		r.log.append(env.Now(), ents)
		sim.Record(env, FollowerAppended{First: ents[0].Index, Last: ents[len(ents)-1].Index, Term: ents[len(ents)-1].Term, From: env.NameOf(from)})
		break
	}
	r.commitTo(env, min(m.Commit, lastNew))
	resp.Index = lastNew
	r.sendGated(env, from, resp, lastNew)
}

// findConflictByTerm returns the highest index at or below index whose term is at most
// term, and that term (etcd's raftLog.findConflictByTerm). Below the snapshot it gives
// up and returns index with term 0.
func (r *Raft) findConflictByTerm(index, term int64) (int64, int64) {
	for ; index > 0; index-- {
		t, ok := r.log.term(index)
		if !ok {
			return index, 0
		}
		if t <= term {
			return index, t
		}
	}
	return 0, 0
}

func (r *Raft) handleSnapshot(env *sim.Env, from sim.NodeID, m Message) {
	s := m.Snapshot
	if s == nil {
		return
	}
	resp := Message{Type: MsgAppResp, Group: r.cfg.Group, Term: r.term}
	if s.Index <= r.commit {
		resp.Index = r.commit
		r.sendGated(env, from, resp, r.commit)
		return
	}
	if t, ok := r.log.term(s.Index); ok && t == s.Term {
		// The log already holds the snapshot's last entry: fast-forward.
		r.commitTo(env, s.Index)
		resp.Index = s.Index
		r.sendGated(env, from, resp, s.Index)
		return
	}
	if r.saver != nil {
		return // busy writing one; the leader retries
	}
	cp := Snapshot{s.SnapshotMeta, slices.Clone(s.Data)}
	sim.Record(env, SnapshotInstalling{Snapshot: s.SnapshotMeta, From: env.NameOf(from)})
	r.writeSnapshot(env, &pendingSnap{snap: cp, install: true, from: from, term: m.Term})
}

func (r *Raft) stepLeader(env *sim.Env, idx int, m Message) {
	if m.Type != MsgAppResp {
		return
	}
	pr := &r.prs[idx]
	pr.active = true
	if m.Seq > pr.readAck {
		pr.readAck = m.Seq
		r.checkReads()
	}
	if m.Index > r.log.last() {
		return // an answer about a log we no longer have
	}
	if m.Reject {
		hint := m.Hint
		if m.LogTerm > 0 {
			hint, _ = r.findConflictByTerm(m.Hint, m.LogTerm)
		}
		if pr.maybeDecrTo(m.Index, hint) {
			if pr.state == replicating {
				pr.becomeProbe()
			}
			r.sendAppend(env, idx, sendCommit)
		}
		return
	}
	wasPaused := pr.paused(r.cfg.MaxInflight)
	if pr.maybeUpdate(m.Index) {
		switch {
		case pr.state == probing:
			pr.becomeReplicate()
		case pr.state == snapshotting && pr.match >= pr.pendingSnap:
			pr.becomeReplicate()
		case pr.state == replicating:
			pr.freeInflight(m.Index)
		}
		if r.maybeCommit(env) {
			r.bcastAppend(env, sendCommit)
		} else if wasPaused {
			r.sendAppend(env, idx, sendCommit)
		}
	} else if pr.state == probing {
		pr.probeSent = false
	}
	for k := 0; k < r.cfg.MaxInflight && pr.match < r.log.last() && r.sendAppend(env, idx, sendEntries); k++ {
	}
}

// ---- reads ----

func (r *Raft) newReadRound(env *sim.Env) uint64 {
	r.readSeq++
	r.prs[r.selfIdx].readAck = r.readSeq
	r.bcastAppend(env, sendHeartbeat)
	return r.readSeq
}

// checkReads confirms the reads whose round a quorum has answered.
func (r *Raft) checkReads() {
	for k := range r.reads {
		rr := &r.reads[k]
		if rr.confirmed || rr.seq == 0 {
			continue
		}
		acks := 0
		for i := range r.prs {
			if r.prs[i].readAck >= rr.seq {
				acks++
			}
		}
		rr.confirmed = acks >= r.quorum
	}
}

func (r *Raft) serveReads(env *sim.Env) {
	n := 0
	for n < len(r.reads) && r.reads[n].confirmed && r.reads[n].index <= r.applied {
		n++
	}
	if n == 0 {
		return
	}
	done := slices.Clone(r.reads[:n])
	r.reads = append(r.reads[:0], r.reads[n:]...)
	for _, rr := range done {
		r.reader.ReadDone(env, rr.ctx, true)
	}
}

func (r *Raft) failReads(env *sim.Env) {
	if len(r.reads) == 0 {
		return
	}
	failed := r.reads
	r.reads = nil
	for _, rr := range failed {
		r.reader.ReadDone(env, rr.ctx, false)
	}
}

// finish ends every entry point: it applies what is committed, serves reads, starts the
// log fsync, sends what became durable and tells the host of role changes.
func (r *Raft) finish(env *sim.Env) {
	if r.finishing {
		return
	}
	r.finishing = true
	for r.applied < r.commit {
		r.applied++
		r.sm.Apply(env, r.log.entry(r.applied))
	}
	if len(r.reads) > 0 {
		r.serveReads(env)
	}
	r.log.sync(env)
	r.release(env)
	if r.roles != nil && (r.notified.role != r.role || r.notified.term != r.term || r.notified.lead != r.lead) {
		r.notified.role, r.notified.term, r.notified.lead = r.role, r.term, r.lead
		r.roles.RoleChanged(env, r.role, r.term, r.lead)
	}
	r.finishing = false
}

func invariant(format string, args ...any) {
	panic("raft: invariant: " + fmt.Sprintf(format, args...))
}
