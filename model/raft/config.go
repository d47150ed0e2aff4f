package raft

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/wal"
	"mqsim/sim"
)

// Config shapes one Raft group member. Every voter of a group must have the same Peers,
// Group, Dir layout and timing; each runs it on its own node. Durations and tick counts
// carry their unit last.
type Config struct {
	// Peers names the voters, this node included, in a fixed order (the same on every
	// voter). Names are resolved to node ids in Start. Membership is fixed.
	Peers []string
	// Dir is the directory of the group's files on the node's disk: the log (a wal.Log in
	// Dir/log), the term and vote (Dir/state.0, Dir/state.1) and snapshots
	// (Dir/snap-INDEX).
	Dir string
	// Group tells this group's messages and timers apart from other groups run by the
	// same host (quorum queues run one group per queue). Messages carry it; the tick timer
	// carries it as TimerTag.Arg.
	Group int64
	// TimerKind is the TimerTag.Kind of the group's tick timer. The host keeps its own
	// timer kinds away from it.
	TimerKind int

	// Tick is the period of the group's one timer. Elections and heartbeats count ticks.
	Tick time.Duration
	// ElectionTicks is the election timeout: a follower that hears from no leader for a
	// random number of ticks in [ElectionTicks, 2*ElectionTicks) starts an election; a
	// leader with CheckQuorum checks its quorum every ElectionTicks.
	ElectionTicks int
	// HeartbeatTicks is how often a leader sends its followers an (often empty) append.
	HeartbeatTicks int
	// PreVote makes a node win a pre-election before it bumps its term, so a node that was
	// cut off cannot disrupt a working leader when it comes back (Raft thesis §9.6).
	PreVote bool
	// CheckQuorum makes a leader step down when it has not heard from a quorum within an
	// election timeout, and makes followers ignore vote requests while they hear from a
	// leader (the leader "lease").
	CheckQuorum bool

	// MaxEntriesPerMsg bounds the entries of one append message.
	MaxEntriesPerMsg int
	// MaxInflight bounds the append messages with entries in flight to one follower.
	MaxInflight int
	// MaxUncommitted bounds the entries a leader holds above its commit index; Propose
	// refuses more.
	MaxUncommitted int
	// MaxPendingReads bounds the reads waiting for a leadership check.
	MaxPendingReads int

	// WAL configures the log's segments. Its Flush policy is ignored: Raft fsyncs the log
	// itself before it acknowledges anything.
	WAL wal.Config

	// Bugs are planted mistakes, off by default, for tests and teaching.
	Bugs Bugs
}

// Bugs are deliberate mistakes a test or a scenario turns on, each a named mode.
type Bugs struct {
	// CommitOnMinority lets a leader commit an entry as soon as the entry is durable on
	// its own disk, as Kafka's acks=1 acknowledges: an entry a majority never stored can
	// be committed, applied and then replaced by the next leader.
	CommitOnMinority bool
	// UnconfirmedReads lets ReadIndex answer at once from the leader's state, without the
	// heartbeat round that confirms the node is still the leader: a deposed leader that
	// has not noticed yet serves stale reads.
	UnconfirmedReads bool
}

// Names lists the bugs turned on, for a run's header.
func (b Bugs) Names() []string {
	var out []string
	if b.CommitOnMinority {
		out = append(out, "commit-on-minority")
	}
	if b.UnconfirmedReads {
		out = append(out, "unconfirmed-reads")
	}
	return out
}

// DefaultTimerKind is the TimerTag.Kind of Raft's tick unless the Config says otherwise.
const DefaultTimerKind = 7000

// DefaultConfig is a voter of the group of the named peers with the Raft paper's timing
// (election timeout 150-300ms, heartbeats every 50ms), pre-vote and check-quorum on, and
// 16 KiB log segments so that snapshots can delete whole segments.
func DefaultConfig(peers ...string) Config {
	w := wal.DefaultConfig()
	w.SegmentBytes = 16 << 10
	w.IndexIntervalBytes = 1024
	w.RetentionAge = -1
	return Config{
		Peers:            slices.Clone(peers),
		Dir:              "raft",
		TimerKind:        DefaultTimerKind,
		Tick:             10 * time.Millisecond,
		ElectionTicks:    15,
		HeartbeatTicks:   5,
		PreVote:          true,
		CheckQuorum:      true,
		MaxEntriesPerMsg: 64,
		MaxInflight:      16,
		MaxUncommitted:   4096,
		MaxPendingReads:  1024,
		WAL:              w,
	}
}

// Validate reports every field out of range.
func (c Config) Validate() error {
	var errs []error
	if len(c.Peers) == 0 {
		errs = append(errs, errors.New("no peers"))
	}
	for i, p := range c.Peers {
		if p == "" {
			errs = append(errs, fmt.Errorf("peer %d has an empty name", i))
		}
		if slices.Index(c.Peers, p) != i {
			errs = append(errs, fmt.Errorf("peer %q is listed twice", p))
		}
	}
	if c.Dir == "" || strings.HasSuffix(c.Dir, "/") {
		errs = append(errs, fmt.Errorf("dir %q must be non-empty and not end in /", c.Dir))
	}
	if c.Tick <= 0 {
		errs = append(errs, fmt.Errorf("tick %s must be positive", c.Tick))
	}
	if c.HeartbeatTicks <= 0 || c.ElectionTicks <= c.HeartbeatTicks {
		errs = append(errs, fmt.Errorf("want 0 < HeartbeatTicks (%d) < ElectionTicks (%d)", c.HeartbeatTicks, c.ElectionTicks))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxEntriesPerMsg", c.MaxEntriesPerMsg}, {"MaxInflight", c.MaxInflight}, {"MaxUncommitted", c.MaxUncommitted}, {"MaxPendingReads", c.MaxPendingReads}} {
		if f.v <= 0 {
			errs = append(errs, fmt.Errorf("%s %d must be positive", f.name, f.v))
		}
	}
	if err := c.WAL.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("raft config: %w", errors.Join(errs...))
	}
	return nil
}

// String renders the configuration on one line, to print at the start of a run.
func (c Config) String() string {
	s := fmt.Sprintf("peers=%s dir=%s group=%d tick=%s election=%d-%d ticks heartbeat=%d ticks prevote=%t checkquorum=%t max.entries.per.msg=%d max.inflight=%d max.uncommitted=%d",
		strings.Join(c.Peers, ","), c.Dir, c.Group, sim.FormatDuration(c.Tick), c.ElectionTicks, 2*c.ElectionTicks-1, c.HeartbeatTicks,
		c.PreVote, c.CheckQuorum, c.MaxEntriesPerMsg, c.MaxInflight, c.MaxUncommitted)
	if bugs := c.Bugs.Names(); len(bugs) > 0 {
		s += " bugs=" + strings.Join(bugs, ",")
	}
	return s
}
