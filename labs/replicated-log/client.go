package lab

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/sim"
)

// The clients: a writer appends a new value every Every (one request at a time) and
// records it as a send to partition 0 of Topic: ok with the offset the replica
// acknowledged, fail when refused, info when no answer came within RequestTimeout. A
// reader reads the log from offset 0 on, one offset at a time, and records each read as
// a poll: ok with the record it was given (and reads the next offset at once), ok and
// empty when refused, info without an answer. Both ask the leader they last heard of (a refusal names it), and the next
// replica when a request timed out or no leader was named.

// Client timers.
const (
	clientTick    = 1 // the next request is due
	clientTimeout = 2 // Arg = the request's id
)

// ClientMode is what a client does.
type ClientMode string

const (
	Writer ClientMode = "append"
	Reader ClientMode = "read"
)

// Client is a lab client node.
type Client struct {
	mode     ClientMode
	every    time.Duration
	replicas []string
	process  int
	rec      *history.Recorder

	target string // the replica it asks
	id     int64  // the last request's id
	open   bool   // a request waits for its answer
	handle history.Handle
	next   int64 // a reader's next offset; a writer's next value number
}

var tp = history.TopicPartition{Topic: Topic}

// NewClient is a client of mode that sends a request every every to replicas,
// recording as process in rec.
func NewClient(mode ClientMode, every time.Duration, replicas []string, process int, rec *history.Recorder) *Client {
	return &Client{mode: mode, every: every, replicas: slices.Sorted(slices.Values(replicas)), process: process, rec: rec}
}

func (c *Client) Start(env *sim.Env) {
	c.target = c.replicas[0]
	env.SetTimer(c.every, sim.TimerTag{Kind: clientTick})
}

func (c *Client) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case clientTick:
		env.SetTimer(c.every, sim.TimerTag{Kind: clientTick})
		if !c.open {
			c.request(env)
		}
	case clientTimeout:
		if c.open && tag.Arg == c.id {
			c.finish(env, history.Info, history.Result{Error: "no answer"})
			c.target = c.replicas[(slices.Index(c.replicas, c.target)+1)%len(c.replicas)]
		}
	}
}

// request sends the next request to the target replica.
func (c *Client) request(env *sim.Env) {
	to, ok := env.Lookup(c.target)
	if !ok {
		return
	}
	now := int64(env.Now())
	// Ids grow across the client's restarts too (its start in the high bits): a replica
	// takes a request whose id is not above the client's last for a duplicate.
	c.id = max(c.id+1, env.Starts()<<32)
	c.open = true
	if c.mode == Writer {
		// The value is unique in the run: the client's name, its start and a counter.
		c.next++
		value := fmt.Sprintf("%s-%d.%d", env.Name(), env.Starts(), c.next)
		c.handle = c.rec.InvokeSend(now, c.process, tp, "", value)
		env.Send(to, AppendRequest{ID: c.id, Value: value})
	} else {
		c.handle = c.rec.InvokePoll(now, c.process, "")
		env.Send(to, ReadRequest{ID: c.id, Offset: c.next})
	}
	env.SetTimer(RequestTimeout, sim.TimerTag{Kind: clientTimeout, Arg: c.id})
}

func (c *Client) Recv(env *sim.Env, _ sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Acknowledged:
		if c.current(m.ID) && c.mode == Writer {
			c.finish(env, history.Ok, history.Result{Offset: m.Offset})
		}
	case Given:
		if c.current(m.ID) && c.mode == Reader {
			rec := history.Record{Offset: c.next, Value: m.Value}
			c.finish(env, history.Ok, history.Result{Reads: []history.PartitionRecords{{TopicPartition: tp, Records: []history.Record{rec}}}})
			c.next++
			c.request(env) // catching up: the next offset at once
		}
	case Refused:
		if !c.current(m.ID) {
			return
		}
		if c.mode == Writer {
			c.finish(env, history.Fail, history.Result{Error: "refused"})
		} else {
			c.finish(env, history.Ok, history.Result{})
		}
		// A refusal names the leader (the replica itself when the offset is not readable
		// yet); without a name, the client tries the next replica.
		if slices.Contains(c.replicas, m.Leader) {
			c.target = m.Leader
		} else {
			c.target = c.replicas[(slices.Index(c.replicas, c.target)+1)%len(c.replicas)]
		}
	}
}

// current reports whether id is the open request's.
func (c *Client) current(id int64) bool { return c.open && id == c.id }

func (c *Client) finish(env *sim.Env, t history.Type, res history.Result) {
	c.open = false
	switch t {
	case history.Ok:
		c.rec.Ok(int64(env.Now()), c.handle, res)
	case history.Fail:
		c.rec.Fail(int64(env.Now()), c.handle, res)
	default:
		c.rec.Info(int64(env.Now()), c.handle, res)
	}
}
