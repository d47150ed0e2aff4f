// Package lab is the replicated-log lab: the learner writes the replica of one
// partition of a Kafka-style log, leader and follower in one state machine (append,
// replicate, high watermark, acknowledge, read), and a swarm of random runs with
// crashes, partitions and message loss judges what the clients saw with mqsim's log
// checkers and the linearizability checker.
//
// The learner implements Replica (in starter/, their copy); the rest of this package is
// the lab's world: the replica node that runs the learner's code over a durable log on
// the node's disk (node.go), the controller that names each epoch's leader
// (controller.go), and the clients that append and read and record the history the
// checkers judge (client.go). The reference solution is in solution/.
//
// The learner's code runs inside mqsim's deterministic simulation, so it obeys the
// model's rules (no goroutines, channels, clock, OS, global random source or map order),
// and imports nothing of mqsim but this package: mqsim lab checks both before it runs.
package lab

import (
	"embed"
	"time"
)

// Entry is one record of the log: its value and the epoch of the leader that appended
// it. Two logs that hold an entry of the same epoch at the same offset hold the same
// entries up to it, if every leader appends only at its log's end and every follower
// copies its leader's log.
type Entry struct {
	Epoch int64
	Value string
}

// Log is the replica's log on its node's disk: offsets 0, 1, ... Len()-1.
//
// What you append or truncate is durable before anything you send or answer after it
// leaves the node: the node fsyncs, and holds your messages and answers until the fsync
// is done. A crash loses the writes not yet fsynced, and the messages not yet sent.
type Log interface {
	// Len is the log end offset (LEO): the offset the next entry gets.
	Len() int64
	// At is the entry at offset, 0 <= offset < Len().
	At(offset int64) Entry
	// Append adds entries at the end.
	Append(entries ...Entry)
	// Truncate removes the entries from offset on (offset <= Len()).
	Truncate(offset int64)
}

// Message is what replicas send each other: Replicate or Replicated.
type Message interface{ replication() }

// Replicate is what a leader sends a follower: the entries of its log from offset From
// on (none: a heartbeat that carries the HW), PrevEpoch the epoch of the entry just
// before From (0 when From is 0), and the leader's high watermark.
type Replicate struct {
	Epoch     int64 // the leader's epoch
	From      int64
	PrevEpoch int64
	Entries   []Entry
	HW        int64
}

// Replicated is a follower's answer to Replicate: OK, its log now matches the leader's up
// to LEO; or not OK (its log does not hold the entry before From with PrevEpoch, or it
// knows a later epoch), and LEO is where the leader should try again from.
type Replicated struct {
	Epoch int64 // the follower's epoch
	OK    bool
	LEO   int64
}

func (Replicate) replication()  {}
func (Replicated) replication() {}

// Request is a client's request waiting for your answer: keep it until you answer it
// (Env.Acknowledge, Env.Give, Env.Refuse), once.
type Request struct {
	client string
	id     int64
}

// Env is what a replica can do, passed to each call.
type Env interface {
	// Self is this replica's name (r1, r2, ...); Peers the other replicas', sorted.
	Self() string
	Peers() []string
	// Log is the replica's durable log.
	Log() Log
	// Send sends m to replica peer. The network may delay, lose or duplicate it.
	Send(peer string, m Message)
	// Acknowledge answers an Append: the value is in the log at offset, and stays there
	// whatever fails afterwards.
	Acknowledge(req Request, offset int64)
	// Give answers a Read with the value at the offset the client asked for.
	Give(req Request, value string)
	// Refuse answers a request with no: you are not the leader (leader names the one
	// you know, or ""), or the offset is not readable yet. A refused Append must not
	// be in the log, then or later.
	Refuse(req Request, leader string)
}

// Replica is the code the learner writes: one replica of the partition, the leader or a
// follower as the controller says.
type Replica interface {
	// Role is the controller's word: epoch's leader is leader (you, when it is
	// env.Self()). Epochs only grow; a replica that (re)starts hears the current one
	// within HeartbeatEvery, and no request reaches it before.
	Role(env Env, epoch int64, leader string)
	// Append is a client asking to append value. Answer Acknowledge(req, offset) once
	// the value is safe, or Refuse.
	Append(env Env, req Request, value string)
	// Read is a client asking for the value at offset. Answer Give, or Refuse.
	Read(env Env, req Request, offset int64)
	// Receive is a message from peer replica from.
	Receive(env Env, from string, m Message)
	// Tick is called every TickEvery: resend what may have been lost.
	Tick(env Env)
}

// The lab's clocks.
const (
	// TickEvery is how often Replica.Tick runs.
	TickEvery = 50 * time.Millisecond
	// HeartbeatEvery is how often the controller tells each replica the epoch and its
	// leader.
	HeartbeatEvery = 100 * time.Millisecond
	// LeaderTimeout is how long the controller waits without news of the leader before
	// it names another leader, in a new epoch.
	LeaderTimeout = time.Second
	// RequestTimeout is how long a client waits for an answer before it gives up on
	// the request (the outcome of an Append is then unknown) and asks another replica.
	RequestTimeout = 500 * time.Millisecond
)

// Topic is the name of the partition's topic in the history: the clients record their
// appends as sends to partition 0 of it, and their reads as polls.
const Topic = "log"

// Sources are the Go files of the learner's code and of the reference solution, as
// compiled into this binary: mqsim lab checks them for the determinism rules.
//
//go:embed starter/*.go solution/*.go
var Sources embed.FS
