// Package pingpong is the smallest system mqsim can simulate: clients that ping servers,
// and servers that answer, optionally only after writing each ping to a journal and
// fsyncing it. It exists to exercise the kernel end to end (network faults, crashes that
// lose unsynced writes, recovery from disk) before any queue is involved, and it is the
// example to read first when writing a new node.
package pingpong

import (
	"encoding/binary"
	"fmt"
	"time"

	"mqsim/sim"
)

// Ping asks a server to answer with the same number.
type Ping struct{ N int }

// Pong answers Ping N.
type Pong struct{ N int }

func (p Ping) String() string { return fmt.Sprintf("ping %d", p.N) }
func (p Pong) String() string { return fmt.Sprintf("pong %d", p.N) }

// journalFile is where a durable server keeps the pings it answered.
const journalFile = "journal"

// Server answers pings. A durable server first appends the ping to its journal and answers
// only when the fsync covering it completes, so every answered ping survives a crash.
type Server struct {
	Durable bool
	// Answered counts pings answered in this incarnation plus those recovered from the
	// journal.
	Answered int
	waiting  []pending // pings written but not yet synced, in journal order
}

type pending struct {
	from sim.NodeID
	n    int
	end  int64 // journal length once this ping is written
}

// Start recovers the number of journaled pings (8 bytes each; a torn last entry is cut).
func (s *Server) Start(env *sim.Env) {
	if !s.Durable {
		return
	}
	d := env.Disk()
	size := d.Size(journalFile)
	if size <= 0 {
		return
	}
	whole := size / 8 * 8
	if whole != size {
		d.Truncate(journalFile, whole)
		sim.Record(env, TornCut{Bytes: size - whole})
	}
	s.Answered = int(whole / 8)
	sim.Record(env, Recovered{Pings: s.Answered})
}

// Recv answers pings and completes durable answers when their fsync is done.
func (s *Server) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Ping:
		if !s.Durable {
			s.Answered++
			env.Send(from, Pong(m))
			return
		}
		var rec [8]byte
		binary.BigEndian.PutUint64(rec[:], uint64(m.N))
		end := env.Disk().Append(journalFile, rec[:]) + 8
		s.waiting = append(s.waiting, pending{from: from, n: m.N, end: end})
		sim.Record(env, Journaled{N: m.N, From: env.NameOf(from), At: end - 8})
		env.Fsync(journalFile)
	case sim.FsyncDone:
		done := 0
		for _, p := range s.waiting {
			if p.end > m.Size {
				break
			}
			s.Answered++
			env.Send(p.from, Pong{N: p.n})
			done++
		}
		s.waiting = s.waiting[done:]
		if done > 0 {
			sim.Record(env, Durable{Size: m.Size, Answered: done})
		}
	}
}

// Timer is unused: a server only reacts.
func (s *Server) Timer(env *sim.Env, tag sim.TimerTag) {}

// Start is the command that makes a client ping: Count pings to server To, one every
// Every.
type Start struct {
	To    string
	Count int
	Every time.Duration
}

func (s Start) String() string {
	return fmt.Sprintf("start %d pings to %s every %s", s.Count, s.To, s.Every)
}

// Client sends pings on command and records answers.
type Client struct {
	to      sim.NodeID
	left    int
	every   time.Duration
	next    int
	sentAt  map[int]sim.Time
	Sent    int
	Answers int
	// RTTs are the round-trip times of answered pings, in answer order.
	RTTs []time.Duration
}

// Start does nothing: a client waits for a Start command.
func (c *Client) Start(env *sim.Env) {}

// Recv takes Start commands from the scenario and pongs from servers.
func (c *Client) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Start:
		to, ok := env.Lookup(m.To)
		if !ok {
			sim.Record(env, NoServer{To: m.To})
			return
		}
		c.to, c.left, c.every = to, m.Count, m.Every
		if c.sentAt == nil {
			c.sentAt = map[int]sim.Time{}
		}
		c.ping(env)
	case Pong:
		at, ok := c.sentAt[m.N]
		if !ok {
			sim.Record(env, Ponged{N: m.N, Duplicate: true})
			return
		}
		delete(c.sentAt, m.N)
		rtt := env.Now().Sub(at)
		c.Answers++
		c.RTTs = append(c.RTTs, rtt)
		sim.Record(env, Ponged{N: m.N, RTT: rtt})
	}
}

// Timer sends the next ping.
func (c *Client) Timer(env *sim.Env, tag sim.TimerTag) { c.ping(env) }

func (c *Client) ping(env *sim.Env) {
	if c.left == 0 {
		return
	}
	c.left--
	c.next++
	c.Sent++
	c.sentAt[c.next] = env.Now()
	env.Send(c.to, Ping{N: c.next})
	if c.left > 0 {
		env.SetTimer(c.every, sim.TimerTag{})
	}
}

// Unanswered is how many pings got no answer yet.
func (c *Client) Unanswered() int { return len(c.sentAt) }
