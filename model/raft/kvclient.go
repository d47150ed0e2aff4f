package raft

import (
	"fmt"
	"slices"
	"time"

	"mqsim/sim"
)

// KVDo tells a KVClient to run one operation (queued behind the ones before it).
type KVDo struct {
	Op    KVOp
	Key   string
	Value string
}

func (d KVDo) String() string { return fmt.Sprintf("do %s %s %s", d.Op, d.Key, d.Value) }

// KVWorkload tells a KVClient to run Ops random operations on Keys, one at a time, with
// Think between them: gets with probability GetPercent, else puts of unique values.
type KVWorkload struct {
	Ops        int
	Keys       []string
	GetPercent int
	Think      time.Duration
}

func (w KVWorkload) String() string {
	return fmt.Sprintf("workload %d ops on %v, %d%% gets", w.Ops, w.Keys, w.GetPercent)
}

// Outcome is what a client learned about an operation, as in Jepsen.
type Outcome uint8

const (
	// OutcomeOK: it took effect (a get: it read Value).
	OutcomeOK Outcome = iota + 1
	// OutcomeFail: it certainly did not take effect.
	OutcomeFail
	// OutcomeInfo: unknown (the client timed out): it may take effect, now or later.
	OutcomeInfo
)

func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeFail:
		return "fail"
	case OutcomeInfo:
		return "info"
	}
	return "?"
}

// KVRecord is one finished operation of a client's history.
type KVRecord struct {
	// Process is the client's process number: it changes after every timeout, so that
	// each process has at most one operation whose outcome is unknown (Jepsen's rule).
	Process int
	Op      KVOp
	Key     string
	Value   string // put: the value written; get: the value read
	Found   bool   // get: whether the key existed
	Call    sim.Time
	Return  sim.Time
	Outcome Outcome
	Err     KVErr
	Index   int64 // put, ok: the entry's index and term
	Term    int64
}

// String renders the record for the trace: "p0 put color=blue [0s,277ms] ok at 2/t1",
// "p0 get color -> blue [277ms,282ms] ok".
func (r KVRecord) String() string {
	what := fmt.Sprintf("%s %s=%s", r.Op, r.Key, r.Value)
	if r.Op == OpGet {
		what = fmt.Sprintf("%s %s", r.Op, r.Key)
		if r.Outcome == OutcomeOK {
			what += " -> none"
			if r.Found {
				what = fmt.Sprintf("%s %s -> %s", r.Op, r.Key, r.Value)
			}
		}
	}
	s := fmt.Sprintf("p%d %s [%s,%s] %s", r.Process, what, r.Call, r.Return, r.Outcome)
	switch {
	case r.Op == OpPut && r.Outcome == OutcomeOK:
		s += fmt.Sprintf(" at %d/t%d", r.Index, r.Term)
	case r.Err != ErrNone:
		s += ": " + r.Err.String()
	}
	return s
}

// KVClient runs operations against a group of KVNodes, one at a time, following leader
// hints, and records its history. A timed-out operation is recorded with OutcomeInfo.
// The history lives in the node value: a client that crashes forgets it.
type KVClient struct {
	Servers []string
	// Timeout bounds one operation, retries included.
	Timeout time.Duration
	// Retry is the pause before retrying after a not-leader answer.
	Retry time.Duration
	// MaxAttempts bounds the servers tried for one operation before it fails.
	MaxAttempts int
	History     []KVRecord

	ids      []sim.NodeID
	queue    []KVDo
	work     KVWorkload
	workLeft int
	cur      *kvCall
	opSeq    int64
	nextID   uint64
	target   int
	proc     int
	values   int
}

type kvCall struct {
	rec      KVRecord
	seq      int64
	id       uint64 // request id of the latest attempt
	attempts int
	timer    sim.TimerID
}

const (
	clientTimeout = iota + 1
	clientRetry
	clientNext
)

// NewKVClient makes a client of the named servers with a 500ms operation timeout, that
// retries every 20ms while no server knows a leader (for up to 25 attempts: long enough
// to outlast an election).
func NewKVClient(servers ...string) *KVClient {
	return &KVClient{Servers: slices.Clone(servers), Timeout: 500 * time.Millisecond, Retry: 20 * time.Millisecond, MaxAttempts: 25}
}

// Busy reports whether an operation is running or waiting.
func (c *KVClient) Busy() bool { return c.cur != nil || len(c.queue) > 0 || c.workLeft > 0 }

// Start resolves the servers' names.
func (c *KVClient) Start(env *sim.Env) {
	for _, s := range c.Servers {
		id, ok := env.Lookup(s)
		if !ok {
			panic(fmt.Sprintf("raft: kv client: no server %q", s))
		}
		c.ids = append(c.ids, id)
	}
	c.target = env.Rand().IntN(len(c.ids))
}

// Recv takes KVDo and KVWorkload commands and the servers' answers.
func (c *KVClient) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case KVDo:
		c.queue = append(c.queue, m)
		c.next(env)
	case KVWorkload:
		c.work, c.workLeft = m, m.Ops
		c.next(env)
	case KVResponse:
		if c.cur == nil || m.ID != c.cur.id {
			return // an answer to an attempt given up on
		}
		switch {
		case m.OK:
			c.cur.rec.Value, c.cur.rec.Found = resultValue(c.cur.rec, m), m.Found
			c.cur.rec.Index, c.cur.rec.Term = m.Index, m.Term
			c.finish(env, OutcomeOK, ErrNone)
		case m.Err == ErrNotLeader && c.cur.attempts < c.MaxAttempts:
			if i := slices.Index(c.Servers, m.Leader); i >= 0 && i != c.target {
				c.target = i
				c.attempt(env)
				return
			}
			c.target = (c.target + 1) % len(c.ids)
			env.SetTimer(c.Retry, sim.TimerTag{Kind: clientRetry, Arg: c.cur.seq})
		default:
			c.finish(env, OutcomeFail, m.Err)
		}
	}
}

// resultValue is what the record keeps as its value: the value read, or written.
func resultValue(rec KVRecord, m KVResponse) string {
	if rec.Op == OpGet {
		return m.Value
	}
	return rec.Value
}

// Timer handles operation timeouts, retries and think time.
func (c *KVClient) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case clientTimeout:
		if c.cur != nil && c.cur.seq == tag.Arg {
			c.cur.timer = 0
			c.target = (c.target + 1) % len(c.ids)
			c.proc++ // the next operation is another process's
			c.finish(env, OutcomeInfo, ErrNone)
		}
	case clientRetry:
		if c.cur != nil && c.cur.seq == tag.Arg {
			c.attempt(env)
		}
	case clientNext:
		c.next(env)
	}
}

func (c *KVClient) next(env *sim.Env) {
	if c.cur != nil || len(c.ids) == 0 {
		return
	}
	var do KVDo
	switch {
	case len(c.queue) > 0:
		do = c.queue[0]
		c.queue = c.queue[1:]
	case c.workLeft > 0:
		c.workLeft--
		r := env.Rand()
		do.Key = c.work.Keys[r.IntN(len(c.work.Keys))]
		do.Op = OpPut
		if r.IntN(100) < c.work.GetPercent {
			do.Op = OpGet
		}
	default:
		return
	}
	if do.Op == OpPut && do.Value == "" {
		c.values++
		do.Value = fmt.Sprintf("%s.%d", env.Name(), c.values)
	}
	c.opSeq++
	c.cur = &kvCall{seq: c.opSeq, rec: KVRecord{Process: c.proc, Op: do.Op, Key: do.Key, Value: do.Value, Call: env.Now()}}
	c.cur.timer = env.SetTimer(c.Timeout, sim.TimerTag{Kind: clientTimeout, Arg: c.opSeq})
	c.attempt(env)
}

func (c *KVClient) attempt(env *sim.Env) {
	c.nextID++
	c.cur.id = c.nextID
	c.cur.attempts++
	req := KVRequest{ID: c.nextID, Op: c.cur.rec.Op, Key: c.cur.rec.Key}
	if req.Op == OpPut {
		req.Value = c.cur.rec.Value
	}
	env.Send(c.ids[c.target], req)
}

func (c *KVClient) finish(env *sim.Env, o Outcome, err KVErr) {
	rec := c.cur.rec
	rec.Return, rec.Outcome, rec.Err = env.Now(), o, err
	c.History = append(c.History, rec)
	env.CancelTimer(c.cur.timer)
	c.cur = nil
	sim.Record(env, KVFinished{Record: rec})
	if len(c.queue) > 0 || c.workLeft > 0 {
		if c.work.Think > 0 && len(c.queue) == 0 {
			env.SetTimer(c.work.Think, sim.TimerTag{Kind: clientNext})
			return
		}
		c.next(env)
	}
}
