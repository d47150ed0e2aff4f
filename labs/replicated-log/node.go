package lab

import (
	"bytes"
	"encoding/json"
	"fmt"

	"mqsim/sim"
)

// The replica node: it runs the learner's Replica over a log kept on the node's disk,
// one JSON line per entry, and keeps the Log's promise that what was written is durable
// before anything sent after it leaves: while writes wait for their fsync, the node
// holds every message and answer, and sends them, in order, once the fsync is done. A
// crash loses the unsynced writes with the held messages; a restart reads the log back
// up to its last complete line (a torn tail is cut) and builds a new Replica.

// LogFile is a replica's log on its disk.
const LogFile = "replica.log"

// What clients and the controller send a replica, and what it answers.
type (
	// AppendRequest asks a replica to append Value; ID numbers the request at its client.
	AppendRequest struct {
		ID    int64
		Value string
	}
	// ReadRequest asks a replica for the value at Offset.
	ReadRequest struct {
		ID     int64
		Offset int64
	}
	// Acknowledged answers an AppendRequest: Value is at Offset.
	Acknowledged struct {
		ID     int64
		Offset int64
	}
	// Given answers a ReadRequest with the value at its offset.
	Given struct {
		ID    int64
		Value string
	}
	// Refused answers a request with no; Leader is the leader the replica knows, or "".
	Refused struct {
		ID     int64
		Leader string
	}
	// Heartbeat is the controller's word to a replica: Epoch's leader is Leader.
	Heartbeat struct {
		Epoch  int64
		Leader string
	}
	// Alive is a replica's answer to a Heartbeat.
	Alive struct{}
)

// replicaTick is the timer of Replica.Tick.
const replicaTick = 1

// ReplicaNode is a replica of the lab: the learner's Replica and its durable log.
type ReplicaNode struct {
	code   Replica
	peers  []string // the other replicas, sorted
	epoch  int64    // the controller's latest word, 0 before the first
	leader string

	entries []Entry
	ends    []int64 // the byte where each entry's line ends in LogFile

	writes  int64 // changes made to the log by this incarnation
	durable int64 // changes an fsync has made durable
	syncing bool  // an fsync is under way, for the changes up to covers
	covers  int64
	held    []held           // messages that wait for the changes before them to be durable
	lastReq map[string]int64 // the last request id seen of each client
	env     *sim.Env
}

// held is a message sent while changes before it were not durable yet.
type held struct {
	to   sim.NodeID
	msg  sim.Message
	need int64 // the changes that must be durable first
}

// NewReplicaNode is a replica that runs code, with peers the other replicas' names.
func NewReplicaNode(code Replica, peers []string) *ReplicaNode {
	return &ReplicaNode{code: code, peers: peers, lastReq: map[string]int64{}}
}

// line is one entry of LogFile.
type line struct {
	Epoch int64  `json:"e"`
	Value string `json:"v"`
}

// Entries is the replica's log, for views and tests.
func (n *ReplicaNode) Entries() []Entry { return append([]Entry(nil), n.entries...) }

func (n *ReplicaNode) Start(env *sim.Env) {
	disk := env.Disk()
	data := disk.ReadAll(LogFile)
	good := int64(0)
	for len(data[good:]) > 0 {
		i := bytes.IndexByte(data[good:], '\n')
		var l line
		if i < 0 || json.Unmarshal(data[good:good+int64(i)], &l) != nil {
			break
		}
		good += int64(i) + 1
		n.entries = append(n.entries, Entry(l))
		n.ends = append(n.ends, good)
	}
	cut := int64(len(data)) - good
	if cut > 0 {
		disk.Truncate(LogFile, good)
	}
	sim.Record(env, ReplicaStarted{Entries: len(n.entries), Cut: cut})
	env.SetTimer(TickEvery, sim.TimerTag{Kind: replicaTick})
}

func (n *ReplicaNode) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case sim.FsyncDone:
		if m.File == LogFile {
			n.synced(env)
		}
		return
	case Heartbeat:
		env.Send(from, Alive{})
		if m.Epoch <= n.epoch {
			return
		}
		n.epoch, n.leader = m.Epoch, m.Leader
		sim.Record(env, RoleSet(m))
		n.call(env, func(e Env) { n.code.Role(e, m.Epoch, m.Leader) })
	case AppendRequest:
		n.request(env, from, m.ID, func(e Env, req Request) { n.code.Append(e, req, m.Value) })
	case ReadRequest:
		n.request(env, from, m.ID, func(e Env, req Request) { n.code.Read(e, req, m.Offset) })
	case Replicate:
		n.call(env, func(e Env) { n.code.Receive(e, env.NameOf(from), m) })
	case Replicated:
		n.call(env, func(e Env) { n.code.Receive(e, env.NameOf(from), m) })
	}
}

// request hands a client's request id to the code (serve), unless the network
// duplicated it; before the node has heard of any leader it refuses it itself.
func (n *ReplicaNode) request(env *sim.Env, from sim.NodeID, id int64, serve func(Env, Request)) {
	req := Request{client: env.NameOf(from), id: id}
	if n.duplicate(req) {
		return
	}
	if n.epoch == 0 {
		n.call(env, func(e Env) { e.Refuse(req, "") })
		return
	}
	n.call(env, func(e Env) { serve(e, req) })
}

// duplicate reports whether req was seen already: the network duplicated it. A client
// numbers its requests upwards and sends each once, so the node drops any request not
// above the last of its client (deduplicating appends is the subject of another lab).
func (n *ReplicaNode) duplicate(req Request) bool {
	if req.id <= n.lastReq[req.client] {
		return true
	}
	n.lastReq[req.client] = req.id
	return false
}

func (n *ReplicaNode) Timer(env *sim.Env, tag sim.TimerTag) {
	if tag.Kind != replicaTick {
		return
	}
	env.SetTimer(TickEvery, sim.TimerTag{Kind: replicaTick})
	if n.epoch > 0 {
		n.call(env, func(e Env) { n.code.Tick(e) })
	}
}

// call runs the learner's code, then starts the fsync its writes need. A panic in the
// code is the replica's crash: it is recorded, and the node keeps running on the state
// the code left (the checkers judge what follows).
func (n *ReplicaNode) call(env *sim.Env, f func(Env)) {
	n.env = env
	defer func() {
		if r := recover(); r != nil {
			sim.Record(env, CodePanicked{Why: fmt.Sprint(r)})
		}
		n.env = nil
		n.sync(env)
	}()
	f(replicaEnv{n})
}

// sync starts an fsync when changes wait for one and none is under way.
func (n *ReplicaNode) sync(env *sim.Env) {
	if n.syncing || n.durable == n.writes {
		return
	}
	n.syncing, n.covers = true, n.writes
	env.Fsync(LogFile)
}

// synced takes an fsync's completion: the changes it covered are durable, and the
// messages that waited for them leave.
func (n *ReplicaNode) synced(env *sim.Env) {
	n.syncing, n.durable = false, n.covers
	i := 0
	for i < len(n.held) && n.held[i].need <= n.durable {
		env.Send(n.held[i].to, n.held[i].msg)
		i++
	}
	n.held = n.held[i:]
	n.sync(env)
}

// send sends msg to the node named to, after the changes made so far are durable.
func (n *ReplicaNode) send(to string, msg sim.Message) {
	id, ok := n.env.Lookup(to)
	if !ok {
		return
	}
	if len(n.held) == 0 && n.durable == n.writes {
		n.env.Send(id, msg)
		return
	}
	n.held = append(n.held, held{to: id, msg: msg, need: n.writes})
}

// replicaEnv is the Env and the Log the learner's code gets.
type replicaEnv struct{ n *ReplicaNode }

func (e replicaEnv) Self() string    { return e.n.env.Name() }
func (e replicaEnv) Peers() []string { return append([]string(nil), e.n.peers...) }
func (e replicaEnv) Log() Log        { return e }

func (e replicaEnv) Send(peer string, m Message) {
	switch m := m.(type) {
	case Replicate:
		m.Entries = append([]Entry(nil), m.Entries...) // the message owns its entries
		e.n.send(peer, m)
	case Replicated:
		e.n.send(peer, m)
	}
}

func (e replicaEnv) Acknowledge(req Request, offset int64) {
	sim.Record(e.n.env, AppendAcknowledged{Client: req.client, Offset: offset})
	e.n.send(req.client, Acknowledged{ID: req.id, Offset: offset})
}

func (e replicaEnv) Give(req Request, value string) {
	e.n.send(req.client, Given{ID: req.id, Value: value})
}

func (e replicaEnv) Refuse(req Request, leader string) {
	e.n.send(req.client, Refused{ID: req.id, Leader: leader})
}

func (e replicaEnv) Len() int64 { return int64(len(e.n.entries)) }

func (e replicaEnv) At(offset int64) Entry {
	if offset < 0 || offset >= int64(len(e.n.entries)) {
		panic(fmt.Sprintf("Log.At(%d): the log holds offsets 0 to %d", offset, len(e.n.entries)-1))
	}
	return e.n.entries[offset]
}

func (e replicaEnv) Append(entries ...Entry) {
	n := e.n
	disk := n.env.Disk()
	for _, en := range entries {
		b, _ := json.Marshal(line(en)) // a number and a string: it does not fail
		b = append(b, '\n')
		end := disk.Append(LogFile, b) + int64(len(b))
		n.entries = append(n.entries, en)
		n.ends = append(n.ends, end)
	}
	if len(entries) > 0 {
		n.writes++
	}
}

func (e replicaEnv) Truncate(offset int64) {
	n := e.n
	if offset < 0 || offset > int64(len(n.entries)) {
		panic(fmt.Sprintf("Log.Truncate(%d): the log holds offsets 0 to %d", offset, len(n.entries)-1))
	}
	if offset == int64(len(n.entries)) {
		return
	}
	size := int64(0)
	if offset > 0 {
		size = n.ends[offset-1]
	}
	sim.Record(n.env, LogTruncated{From: offset, Removed: int64(len(n.entries)) - offset})
	n.env.Disk().Truncate(LogFile, size)
	n.entries, n.ends = n.entries[:offset], n.ends[:offset]
	n.writes++
}
