package raft

import (
	"encoding/binary"
	"fmt"
	"slices"

	"mqsim/sim"
)

// KVOp is a key-value operation.
type KVOp uint8

const (
	OpPut KVOp = iota + 1
	OpGet
)

func (o KVOp) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpGet:
		return "get"
	}
	return "?"
}

// KVErr says why a request failed.
type KVErr uint8

const (
	ErrNone KVErr = iota
	// ErrNotLeader: the node is not the leader (or lost the leadership before a read was
	// confirmed). The request had no effect; Leader names the leader if known.
	ErrNotLeader
	// ErrLost: another entry was committed where the put was appended. It had no effect.
	ErrLost
	// ErrBusy: the leader refused the put (too many uncommitted entries). No effect.
	ErrBusy
)

func (e KVErr) String() string {
	switch e {
	case ErrNone:
		return "none"
	case ErrNotLeader:
		return "not-leader"
	case ErrLost:
		return "lost"
	case ErrBusy:
		return "busy"
	}
	return "?"
}

// KVRequest asks a KVNode to put or get a key.
type KVRequest struct {
	ID    uint64
	Op    KVOp
	Key   string
	Value string
}

func (r KVRequest) String() string {
	if r.Op == OpPut {
		return fmt.Sprintf("kv#%d put %s=%s", r.ID, r.Key, r.Value)
	}
	return fmt.Sprintf("kv#%d get %s", r.ID, r.Key)
}

// KVResponse answers a KVRequest. A put that succeeded tells where its entry is.
type KVResponse struct {
	ID     uint64
	OK     bool
	Err    KVErr
	Leader string // the leader the node knows of, on ErrNotLeader
	Value  string // get: the value
	Found  bool   // get: whether the key exists
	Index  int64  // put: the entry's index
	Term   int64  // put: the entry's term
}

func (r KVResponse) String() string {
	switch {
	case !r.OK && r.Leader != "":
		return fmt.Sprintf("kv#%d %s (leader %s)", r.ID, r.Err, r.Leader)
	case !r.OK:
		return fmt.Sprintf("kv#%d %s", r.ID, r.Err)
	case r.Index > 0:
		return fmt.Sprintf("kv#%d ok at %d/t%d", r.ID, r.Index, r.Term)
	case !r.Found:
		return fmt.Sprintf("kv#%d ok: not found", r.ID)
	}
	return fmt.Sprintf("kv#%d ok: %s", r.ID, r.Value)
}

// KVNode is the smallest Raft host: a replicated string map. Puts go through the log;
// gets are served by the leader after a ReadIndex round. It snapshots its map every
// SnapshotEvery applied entries. It exists for the package's tests and for scenarios.
type KVNode struct {
	Raft *Raft
	// SnapshotEvery takes a snapshot once this many entries were applied after the last
	// one; 0 never does.
	SnapshotEvery int64

	data    map[string]string
	writes  []kvWrite // proposals awaiting their entry's application, by index
	reads   []kvRead  // reads awaiting ReadDone, by ctx
	nextCtx int64
	// Applied counts the commands this incarnation applied (not via a snapshot).
	Applied int
}

type kvWrite struct {
	index, term int64
	from        sim.NodeID
	id          uint64
}

type kvRead struct {
	ctx  int64
	from sim.NodeID
	req  KVRequest
}

// NewKVNode makes a KV host with a Raft member configured by cfg.
func NewKVNode(cfg Config) (*KVNode, error) {
	n := &KVNode{data: map[string]string{}}
	r, err := New(cfg, n)
	if err != nil {
		return nil, err
	}
	n.Raft = r
	return n, nil
}

// Get returns the value of key in this node's copy of the map.
func (n *KVNode) Get(key string) (string, bool) {
	v, ok := n.data[key]
	return v, ok
}

// Len is the number of keys in this node's copy of the map.
func (n *KVNode) Len() int { return len(n.data) }

// Encode renders the node's map in its snapshot form (keys sorted), so two copies can be
// compared byte for byte.
func (n *KVNode) Encode() []byte {
	keys := make([]string, 0, len(n.data))
	for k := range n.data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p := binary.AppendUvarint(nil, uint64(len(keys)))
	for _, k := range keys {
		p = appendString(p, k)
		p = appendString(p, n.data[k])
	}
	return p
}

// encodePut is a put's log entry: the op byte, then key and value, each length-prefixed.
func encodePut(key, value string) []byte {
	return appendString(appendString([]byte{byte(OpPut)}, key), value)
}

func appendString(p []byte, s string) []byte {
	p = binary.AppendUvarint(p, uint64(len(s)))
	return append(p, s...)
}

func readString(p []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || uint64(len(p)-k) < n {
		return "", nil, false
	}
	return string(p[k : k+int(n)]), p[k+int(n):], true
}

// Start recovers the Raft member (which restores the map from its snapshot).
func (n *KVNode) Start(env *sim.Env) { n.Raft.Start(env) }

// Recv hands Raft its messages and serves KVRequests.
func (n *KVNode) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if n.Raft.Step(env, from, msg) {
		n.maybeSnapshot(env)
		return
	}
	req, ok := msg.(KVRequest)
	if !ok {
		return
	}
	if !n.Raft.IsLeader() {
		n.reply(env, from, KVResponse{ID: req.ID, Err: ErrNotLeader})
		return
	}
	switch req.Op {
	case OpPut:
		index, term, ok := n.Raft.Propose(env, encodePut(req.Key, req.Value))
		if !ok {
			n.reply(env, from, KVResponse{ID: req.ID, Err: ErrBusy})
			return
		}
		n.writes = append(n.writes, kvWrite{index: index, term: term, from: from, id: req.ID})
	case OpGet:
		n.nextCtx++
		n.reads = append(n.reads, kvRead{ctx: n.nextCtx, from: from, req: req})
		if !n.Raft.ReadIndex(env, n.nextCtx) {
			n.reads = n.reads[:len(n.reads)-1]
			n.reply(env, from, KVResponse{ID: req.ID, Err: ErrBusy})
		}
	}
	n.maybeSnapshot(env)
}

// Timer hands Raft its tick.
func (n *KVNode) Timer(env *sim.Env, tag sim.TimerTag) {
	if n.Raft.HandleTimer(env, tag) {
		n.maybeSnapshot(env)
	}
}

func (n *KVNode) reply(env *sim.Env, to sim.NodeID, resp KVResponse) {
	if !resp.OK && resp.Err == ErrNotLeader {
		if l := n.Raft.Leader(); l != None {
			resp.Leader = env.NameOf(l)
		}
	}
	env.Send(to, resp)
}

func (n *KVNode) maybeSnapshot(env *sim.Env) {
	r := n.Raft
	if n.SnapshotEvery > 0 && !r.SnapshotPending() && r.Applied()-r.SnapshotIndex() >= n.SnapshotEvery {
		if err := r.Snapshot(env, r.Applied(), n.Encode()); err != nil {
			invariant("kv snapshot: %v", err)
		}
	}
}

// Apply executes a committed put and answers its client if this node proposed it.
func (n *KVNode) Apply(env *sim.Env, e Entry) {
	if e.Type == EntryNormal {
		p := e.Data
		if len(p) == 0 || KVOp(p[0]) != OpPut {
			invariant("entry %d holds no put", e.Index)
		}
		k, rest, ok1 := readString(p[1:])
		v, _, ok2 := readString(rest)
		if !ok1 || !ok2 {
			invariant("entry %d: bad put encoding", e.Index)
		}
		n.data[k] = v
		n.Applied++
	}
	for len(n.writes) > 0 && n.writes[0].index <= e.Index {
		w := n.writes[0]
		n.writes = n.writes[1:]
		if w.index < e.Index {
			continue // skipped by a snapshot: outcome unknown, the client times out
		}
		if w.term == e.Term {
			n.reply(env, w.from, KVResponse{ID: w.id, OK: true, Index: e.Index, Term: e.Term})
		} else {
			n.reply(env, w.from, KVResponse{ID: w.id, Err: ErrLost})
		}
	}
}

// Restore replaces the map with a snapshot's.
func (n *KVNode) Restore(env *sim.Env, s Snapshot) {
	p := s.Data
	count, k := binary.Uvarint(p)
	if k <= 0 {
		invariant("snapshot %d: bad encoding", s.Index)
	}
	p = p[k:]
	data := make(map[string]string, count)
	for i := uint64(0); i < count; i++ {
		key, rest, ok1 := readString(p)
		v, rest, ok2 := readString(rest)
		if !ok1 || !ok2 {
			invariant("snapshot %d: bad encoding", s.Index)
		}
		data[key] = v
		p = rest
	}
	n.data = data
	for len(n.writes) > 0 && n.writes[0].index <= s.Index {
		n.writes = n.writes[1:]
	}
}

// ReadDone answers a get once the leader confirmed it may serve it.
func (n *KVNode) ReadDone(env *sim.Env, ctx int64, ok bool) {
	i := slices.IndexFunc(n.reads, func(r kvRead) bool { return r.ctx == ctx })
	if i < 0 {
		return
	}
	rd := n.reads[i]
	n.reads = slices.Delete(n.reads, i, i+1)
	if !ok {
		n.reply(env, rd.from, KVResponse{ID: rd.req.ID, Err: ErrNotLeader})
		return
	}
	v, found := n.data[rd.req.Key]
	n.reply(env, rd.from, KVResponse{ID: rd.req.ID, OK: true, Value: v, Found: found})
}
