package sim

import (
	"fmt"
	"strings"
	"time"
)

// Payload is the typed value of a trace event. Each model package declares the events it
// emits as Go types (its events.go); the trace keeps the value, and the event's text form,
// which the trace hash covers, comes from the value's own methods. Views switch on the
// type; nothing reads the text back.
type Payload interface {
	// Kind is the event's short stable word ("append", "hw", "crash").
	Kind() string
	// Detail is the event's text after the kind. It goes into the trace hash, so a change
	// to it changes every trace that holds the event.
	Detail() string
}

// Record puts a typed event from a node in the trace. It is generic so that the payload
// is boxed only when the trace keeps something: with the trace off, recording an event
// costs the model no allocation.
func Record[P Payload](env *Env, p P) {
	if env.w.trace.Mode == TraceOff {
		return
	}
	env.w.record(env.id, External, 0, p)
}

// RecordWorld puts a typed world-level event in the trace (a scenario's annotation, an
// invariant violation the harness found), as Record does for a node.
func RecordWorld[P Payload](w *World, p P) {
	if w.trace.Mode == TraceOff {
		return
	}
	w.record(External, External, 0, p)
}

// EventDoc describes one event type for the generated list of event kinds.
type EventDoc struct {
	// Example is a zero value of the type; its Kind names the kind.
	Example Payload
	// About says in one line what happened when the event is in a trace.
	About string
}

// The kernel's own events: messages (when the world traces them) and the faults it applies.

// Sent is a message leaving its sender (Event.Peer is the receiver, Event.Msg its id).
type Sent struct {
	Msg   Message
	ToEnv bool // an answer to a scenario command: nobody in the world hears it
}

// Received is a message delivered to its receiver (Event.Peer is the sender).
type Received struct{ Msg Message }

// Dropped is a message the network or a dead receiver lost, and why.
type Dropped struct {
	Msg Message
	Why string // "partitioned", "lost", "overflow", "dropped on purpose", "receiver down" ...
}

// NodeCrashed is a node's crash: its state is gone, its disk lost what Lost says.
type NodeCrashed struct{ Lost string }

// NodeKilled is a node's process killed: its state is gone, its disk (the page cache
// included) kept everything, Unsynced bytes of it not yet on the platter.
type NodeKilled struct{ Unsynced int64 }

// NodeRestarted is a crashed node built again from its disk.
type NodeRestarted struct{}

// NodePaused is a node frozen, as by a long GC pause.
type NodePaused struct{}

// NodeResumed is a paused node running again with the events that waited.
type NodeResumed struct{ Waiting int }

// LinkCut is a one-way link cut (Event.Node to Event.Peer).
type LinkCut struct{}

// Partitioned splits the network into groups that cannot reach each other.
type Partitioned struct{ Groups [][]string }

// Healed restores one link (Event.Node to Event.Peer), or all of them.
type Healed struct{ All bool }

// LinkClogged holds every message on a link until it is unclogged.
type LinkClogged struct{}

// LinkUnclogged releases a clogged link's held messages.
type LinkUnclogged struct{ Released int }

// DropNext arms a link to drop its next N messages, or its next N of one kind.
type DropNext struct {
	N       int
	MsgKind string // a message kind (MessageKind), or "" for any message
}

// DelayNext arms a link to delay its next N messages (of one kind) by By each.
type DelayNext struct {
	N       int
	MsgKind string
	By      time.Duration
}

// DuplicateNext arms a link to deliver its next N messages (of one kind) twice.
type DuplicateNext struct {
	N       int
	MsgKind string
}

// HeldReleased is some of a clogged link's held messages delivered, the link still
// clogged.
type HeldReleased struct {
	Released int
	MsgKind  string // the kind released, or "" for any
	Left     int    // still held
}

// Delayed is a message an armed delay-next fault holds back (traced with messages).
type Delayed struct {
	Msg Message
	By  time.Duration
}

// Duplicated is a message an armed dup-next fault delivers twice (traced with messages).
type Duplicated struct{ Msg Message }

// TornArmed arms a node's disk: its next crash tears unsynced writes.
type TornArmed struct{}

// Corrupted flips bytes of a synced file, or says why it could not.
type Corrupted struct {
	File     string
	Off, Len int64
	Err      string // not empty when the fault was not applied
}

func (Sent) Kind() string { return "send" }
func (s Sent) Detail() string {
	if s.ToEnv {
		return "to env: " + Describe(s.Msg)
	}
	return Describe(s.Msg)
}
func (Received) Kind() string        { return "recv" }
func (r Received) Detail() string    { return Describe(r.Msg) }
func (Dropped) Kind() string         { return "drop" }
func (d Dropped) Detail() string     { return d.Why + ": " + Describe(d.Msg) }
func (NodeCrashed) Kind() string     { return "crash" }
func (c NodeCrashed) Detail() string { return c.Lost }
func (NodeKilled) Kind() string      { return "kill" }
func (k NodeKilled) Detail() string {
	return fmt.Sprintf("process gone, page cache kept (%dB not yet synced)", k.Unsynced)
}
func (NodeRestarted) Kind() string   { return "restart" }
func (NodeRestarted) Detail() string { return "" }
func (NodePaused) Kind() string      { return "pause" }
func (NodePaused) Detail() string    { return "" }
func (NodeResumed) Kind() string     { return "resume" }
func (r NodeResumed) Detail() string { return fmt.Sprintf("%d waiting events", r.Waiting) }
func (LinkCut) Kind() string         { return "cut" }
func (LinkCut) Detail() string       { return "" }
func (Partitioned) Kind() string     { return "partition" }
func (p Partitioned) Detail() string {
	parts := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		parts[i] = strings.Join(g, " ")
	}
	return strings.Join(parts, " | ")
}
func (Healed) Kind() string { return "heal" }
func (h Healed) Detail() string {
	if h.All {
		return "all links"
	}
	return ""
}
func (LinkClogged) Kind() string       { return "clog" }
func (LinkClogged) Detail() string     { return "" }
func (LinkUnclogged) Kind() string     { return "unclog" }
func (u LinkUnclogged) Detail() string { return fmt.Sprintf("%d held messages released", u.Released) }
func (DropNext) Kind() string          { return "drop-next" }
func (d DropNext) Detail() string      { return "next " + countOf(d.N, d.MsgKind) }
func (DelayNext) Kind() string         { return "delay-next" }
func (d DelayNext) Detail() string {
	return fmt.Sprintf("next %s by %s", countOf(d.N, d.MsgKind), FormatDuration(d.By))
}
func (DuplicateNext) Kind() string     { return "dup-next" }
func (d DuplicateNext) Detail() string { return "next " + countOf(d.N, d.MsgKind) }
func (HeldReleased) Kind() string      { return "release" }
func (r HeldReleased) Detail() string {
	what := "held messages"
	if r.MsgKind != "" {
		what = "held " + r.MsgKind
	}
	return fmt.Sprintf("%d %s released, %d still held", r.Released, what, r.Left)
}
func (Delayed) Kind() string { return "delay" }
func (d Delayed) Detail() string {
	return fmt.Sprintf("by %s: %s", FormatDuration(d.By), Describe(d.Msg))
}
func (Duplicated) Kind() string     { return "dup" }
func (d Duplicated) Detail() string { return Describe(d.Msg) }
func (TornArmed) Kind() string      { return "torn-armed" }
func (TornArmed) Detail() string    { return "the next crash tears unsynced writes" }
func (Corrupted) Kind() string      { return "corrupt" }
func (c Corrupted) Detail() string {
	if c.Err != "" {
		return "not applied: " + c.Err
	}
	return fmt.Sprintf("%s [%d,%d) flipped", c.File, c.Off, c.Off+c.Len)
}

// countOf is "3", or "3 AlterPartition" for a fault aimed at one kind of message.
func countOf(n int, kind string) string {
	if kind == "" {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d %s", n, kind)
}

// EventDocs lists the kernel's event types.
func EventDocs() []EventDoc {
	return []EventDoc{
		{Sent{}, "a message left its sender (traced when the world traces messages)"},
		{Received{}, "a message reached its receiver"},
		{Dropped{}, "the network or a dead receiver lost a message, and why"},
		{NodeCrashed{}, "a node crashed: its state is gone and its disk lost its unsynced bytes"},
		{NodeKilled{}, "a node's process was killed: its state is gone, the page cache keeps every written byte"},
		{NodeRestarted{}, "a crashed or killed node restarts and recovers from its disk"},
		{NodePaused{}, "a node is frozen (a long GC pause, a stopped VM)"},
		{NodeResumed{}, "a paused node runs again, with what waited"},
		{LinkCut{}, "a one-way link is cut"},
		{Partitioned{}, "the network splits into groups that cannot reach each other"},
		{Healed{}, "a link, or every link, works again"},
		{LinkClogged{}, "a link holds every message until it is unclogged"},
		{LinkUnclogged{}, "a clogged link releases what it held"},
		{DropNext{}, "a link will drop its next messages, or its next messages of one kind"},
		{DelayNext{}, "a link will delay its next messages (of one kind), each alone"},
		{DuplicateNext{}, "a link will deliver its next messages (of one kind) twice"},
		{HeldReleased{}, "a clogged link delivers some of what it holds (the next N, or one kind) and stays clogged"},
		{Delayed{}, "an armed delay-next fault held a message back"},
		{Duplicated{}, "an armed dup-next fault delivered a message twice"},
		{TornArmed{}, "a node's next crash tears its unsynced writes"},
		{Corrupted{}, "bytes of a synced file flipped (bit rot)"},
	}
}
