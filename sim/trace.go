package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Event is one thing that happened, as the trace records it: model events a node emits
// ("append", "hw", "ack"), faults the world applies ("crash", "partition"), and, when the
// world traces messages, every send, receipt and drop.
type Event struct {
	Index  int    `json:"index"` // position in the trace
	Step   uint64 `json:"step"`  // the kernel step that produced it
	Time   Time   `json:"time"`  // virtual nanoseconds
	Node   string `json:"node"`  // where it happened ("env" for world-wide faults)
	Kind   string `json:"kind"`
	Peer   string `json:"peer,omitempty"` // the other end of a message
	Msg    uint64 `json:"msg,omitempty"`  // message id, shared by its send, recv and drop
	Detail string `json:"detail,omitempty"`
	// Data is the event's typed value: Kind and Detail are its text form. Views switch on
	// its type.
	Data Payload `json:"-"`
}

// String is the event's one stable text form, used in transcripts and for the hash.
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", e.Time, e.Node, e.Kind)
	if e.Peer != "" {
		arrow := "->"
		if e.Kind == "recv" || e.Kind == "drop" {
			arrow = "<-"
		}
		fmt.Fprintf(&b, " %s%s", arrow, e.Peer)
	}
	if e.Msg != 0 {
		fmt.Fprintf(&b, " #%d", e.Msg)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Trace is the ordered list of a run's events and a 64-bit hash over all of them. The hash
// is updated as events arrive, so it is available even when Keep is off.
type Trace struct {
	events []Event
	hash   uint64
	count  int
	// Mode says how much of the trace to keep.
	Mode TraceMode
}

// TraceMode says how much of the trace a world keeps.
type TraceMode uint8

const (
	// TraceKeep keeps every event and the hash: for scenarios, the TUI and exports.
	TraceKeep TraceMode = iota
	// TraceHashOnly keeps the hash and the count but not the events.
	TraceHashOnly
	// TraceOff records nothing, and model code skips formatting its events: for
	// benchmarks and swarm runs that judge the client history. World.StepHash still
	// fingerprints the run.
	TraceOff
)

func (t *Trace) init() { t.hash = fnvOffset }

// Len is the number of events recorded.
func (t *Trace) Len() int { return t.count }

// Events returns the events kept, in order. The slice must not be modified.
func (t *Trace) Events() []Event { return t.events }

// Since returns the kept events from index i on.
func (t *Trace) Since(i int) []Event {
	if i >= len(t.events) {
		return nil
	}
	return t.events[i:]
}

// Hash is the 64-bit FNV-1a hash of the trace's stable form. Two runs with the same seed
// and inputs must give the same hash.
func (t *Trace) Hash() uint64 { return t.hash }

// HashString renders the hash as 16 hex digits.
func (t *Trace) HashString() string { return fmt.Sprintf("%016x", t.hash) }

func (t *Trace) add(e Event) {
	e.Index = t.count
	t.count++
	h := t.hash
	h = hashUint(h, e.Step)
	h = hashUint(h, uint64(e.Time))
	h = hashString(h, e.Node)
	h = hashString(h, e.Kind)
	h = hashString(h, e.Peer)
	h = hashUint(h, e.Msg)
	h = hashString(h, e.Detail)
	t.hash = h
	if t.Mode == TraceKeep {
		t.events = append(t.events, e)
	}
}

// WriteJSONLines writes the kept events as JSON, one object per line.
func (t *Trace) WriteJSONLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, e := range t.events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

// record puts a typed event in the trace: its kind and detail come from the payload.
func (w *World) record(node, peer NodeID, msg uint64, p Payload) {
	if w.trace.Mode == TraceOff {
		return
	}
	e := Event{Step: w.steps, Time: w.now, Node: w.Name(node), Kind: p.Kind(), Msg: msg, Detail: p.Detail(), Data: p}
	if peer != External {
		e.Peer = w.Name(peer)
	}
	w.trace.add(e)
}

// fault records a fault the world applies (a crash, a restart, a link or disk fault, a
// heal) and remembers when it happened, whatever the trace mode: the checkers judge
// recovery from the last fault on (LastFault).
func fault[P Payload](w *World, node, peer NodeID, p P) {
	w.lastFault = w.now
	if w.trace.Mode == TraceOff {
		return
	}
	w.record(node, peer, 0, p)
}

// LastFault is the time of the last fault the world applied so far (0 if none).
func (w *World) LastFault() Time { return w.lastFault }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashUint(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h ^= v & 0xFF
		h *= fnvPrime
		v >>= 8
	}
	return h
}

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	// A terminator keeps ("ab","c") and ("a","bc") apart.
	h ^= 0xFF
	h *= fnvPrime
	return h
}

func hashStep(h, at, kind, node uint64) uint64 {
	return hashUint(hashUint(hashUint(h, at), kind), node)
}
