package sim

import (
	"fmt"
	"reflect"
	"time"
)

// LinkConfig shapes one directed link. Delay is Latency plus a uniform draw in [0, Jitter];
// with InOrder false, independent draws let later messages overtake earlier ones.
type LinkConfig struct {
	Latency time.Duration
	Jitter  time.Duration
	// InOrder delivers messages in the order sent, as a TCP connection does.
	InOrder bool
	Drop    PPM // probability a message is lost
	Dup     PPM // probability a message is delivered twice
	// Capacity bounds the messages in flight on the link; a send beyond it is dropped as
	// overflow. 0 means unbounded.
	Capacity int
	// Bandwidth, in bytes per second, overrides the world's Costs.Bandwidth on this link
	// (a wide-area link between two clusters), with costs on or off; 0 keeps the world's.
	Bandwidth int64
}

// DefaultLink is a LAN link: 1ms plus up to 500us, in order, lossless, 10,000 in flight.
func DefaultLink() LinkConfig {
	return LinkConfig{Latency: time.Millisecond, Jitter: 500 * time.Microsecond, InOrder: true, Capacity: 10_000}
}

func (c LinkConfig) String() string {
	s := fmt.Sprintf("latency=%s jitter=%s in-order=%t drop=%dppm dup=%dppm capacity=%d",
		c.Latency, c.Jitter, c.InOrder, c.Drop, c.Dup, c.Capacity)
	if c.Bandwidth > 0 {
		s += " bandwidth=" + FormatRate(c.Bandwidth)
	}
	return s
}

// LinkStats counts what a link did with the messages sent on it.
type LinkStats struct {
	Sent       uint64
	Delivered  uint64
	Dropped    uint64 // lost at random
	Duplicated uint64
	Cut        uint64 // refused or discarded by a partition
	Overflow   uint64 // refused because the link was at capacity
	ToDown     uint64 // arrived at a crashed node
	Held       uint64 // held back by a clog, later released
}

// Add sums two counters.
func (s LinkStats) Add(o LinkStats) LinkStats {
	return LinkStats{s.Sent + o.Sent, s.Delivered + o.Delivered, s.Dropped + o.Dropped,
		s.Duplicated + o.Duplicated, s.Cut + o.Cut, s.Overflow + o.Overflow, s.ToDown + o.ToDown, s.Held + o.Held}
}

type link struct {
	cfg     LinkConfig
	cut     bool
	clogged bool
	// armed are the message faults waiting for their messages, in the order armed.
	armed    []msgFault
	inflight int
	lastAt   Time // latest delivery time scheduled, for in-order links
	txFree   Time // with a bandwidth cost: when the link has sent what is queued on it
	held     []event
	stats    LinkStats
}

// MsgOp is what an armed message fault does to a message it strikes.
type MsgOp uint8

const (
	MsgDrop      MsgOp = iota + 1 // the message is lost
	MsgDelay                      // the message arrives later, overtaken by those sent after it
	MsgDuplicate                  // the message arrives twice
)

// msgFault is a fault armed on a link: it strikes the next left messages sent on the
// link whose kind (MessageKind) is kind, or any message if kind is "".
type msgFault struct {
	op    MsgOp
	kind  string
	left  int
	delay time.Duration
}

// strike finds the first armed fault that matches msg, uses one of its count, and
// returns it. The message's kind is computed only when a fault names one.
func (l *link) strike(msg Message) (msgFault, bool) {
	kind, named := "", false
	for i := range l.armed {
		f := &l.armed[i]
		if f.kind != "" {
			if !named {
				kind, named = MessageKind(msg), true
			}
			if f.kind != kind {
				continue
			}
		}
		hit := *f
		if f.left--; f.left == 0 {
			l.armed = append(l.armed[:i], l.armed[i+1:]...)
		}
		return hit, true
	}
	return msgFault{}, false
}

// KindedMessage is a message whose Go type carries several kinds (a Raft message's Type
// field): it names its own kind.
type KindedMessage interface{ MessageType() string }

// MessageKind names a message's kind, as the message faults (drop-next kind=...) and the
// diagrams (--hide) match it: its Go type without the package ("AlterPartition",
// "LeaderAndIsr", "BrokerHeartbeat"), or the kind a KindedMessage names ("app", "vote").
func MessageKind(msg Message) string {
	if m, ok := msg.(KindedMessage); ok {
		return m.MessageType()
	}
	t := reflect.TypeOf(msg)
	if t == nil {
		return "nil"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return t.String()
	}
	return t.Name()
}

type network struct {
	n     int
	links []link // n*n, index from*n+to
	// traffic counts, per node, the messages it sent plus those delivered to it: what
	// NodeTraffic answers without summing a row and a column of links.
	traffic []uint64
	def     LinkConfig
	rand    *Rand
	nextID  uint64
}

func (n *network) init(seed uint64, def LinkConfig) {
	n.def = def
	n.rand = NewRand(seed, "network")
}

// grow re-lays the link table for size nodes, keeping existing links.
func (n *network) grow(size int) {
	links := make([]link, size*size)
	for i := range links {
		links[i].cfg = n.def
	}
	for from := 0; from < n.n; from++ {
		for to := 0; to < n.n; to++ {
			links[from*size+to] = n.links[from*n.n+to]
		}
	}
	n.links, n.n = links, size
	n.traffic = append(n.traffic, make([]uint64, size-len(n.traffic))...)
}

func (n *network) link(from, to NodeID) *link { return &n.links[int(from)*n.n+int(to)] }

func (n *network) arrived(from, to NodeID) { n.link(from, to).inflight-- }

// blocked says why a message on the link cannot be delivered now, or "" if it can.
func (n *network) blocked(from, to NodeID) string {
	l := n.link(from, to)
	switch {
	case l.cut:
		return "partitioned"
	case l.clogged:
		return "clogged"
	}
	return ""
}

func (n *network) hold(e event) {
	l := n.link(e.from, e.node)
	l.held = append(l.held, e)
	l.stats.Held++
}

func (n *network) count(from, to NodeID, what string) {
	if from == External {
		return
	}
	s := &n.link(from, to).stats
	switch what {
	case "delivered":
		s.Delivered++
		n.traffic[to]++
	case "partitioned":
		s.Cut++
	case "down":
		s.ToDown++
	}
}

func (w *World) send(from, to NodeID, msg Message) {
	if to == External {
		// An answer to a scenario command or a test: nobody inside the world hears it,
		// but the trace shows it.
		if w.cfg.TraceMessages {
			w.record(from, External, 0, Sent{Msg: msg, ToEnv: true})
		}
		return
	}
	if to < 0 || int(to) >= len(w.nodes) {
		panic(fmt.Sprintf("sim: %s sends to node id %d, which does not exist", w.Name(from), to))
	}
	n := &w.net
	l := n.link(from, to)
	l.stats.Sent++
	n.traffic[from]++
	n.nextID++
	id := n.nextID
	if w.cfg.TraceMessages {
		w.record(from, to, id, Sent{Msg: msg})
	}
	drop := ""
	var struck msgFault
	switch {
	case l.cut:
		l.stats.Cut++
		drop = "partitioned"
	case l.cfg.Capacity > 0 && l.inflight >= l.cfg.Capacity:
		l.stats.Overflow++
		drop = "overflow"
	default:
		if len(l.armed) > 0 {
			struck, _ = l.strike(msg)
		}
		switch {
		case struck.op == MsgDrop:
			l.stats.Dropped++
			drop = "dropped on purpose"
		case n.rand.Chance(l.cfg.Drop):
			l.stats.Dropped++
			drop = "lost"
		}
	}
	if drop != "" {
		if w.cfg.TraceMessages {
			w.record(to, from, id, Dropped{Msg: msg, Why: drop})
		}
		return
	}
	copies := 1
	if n.rand.Chance(l.cfg.Dup) || struck.op == MsgDuplicate {
		copies = 2
		l.stats.Duplicated++
	}
	if w.cfg.TraceMessages {
		switch struck.op {
		case MsgDelay:
			w.record(from, to, id, Delayed{Msg: msg, By: struck.delay})
		case MsgDuplicate:
			w.record(from, to, id, Duplicated{Msg: msg})
		}
	}
	// A busy sender sends when it is done (costs.go); a link with a bandwidth sends one
	// message after another.
	depart, size, bandwidth := w.now, 0, l.cfg.Bandwidth
	if w.ch.on {
		slot := &w.nodes[from]
		w.chargeReads(slot)
		depart = max(depart, slot.busyUntil)
		if bandwidth == 0 {
			bandwidth = w.ch.costs.Bandwidth
		}
	}
	if bandwidth > 0 {
		size = WireSize(msg)
	}
	for c := 0; c < copies; c++ {
		at := depart
		if size > 0 {
			l.txFree = max(l.txFree, depart).Add(perSecond(int64(size), bandwidth))
			at = l.txFree
		}
		at = at.Add(l.cfg.Latency + n.rand.Jitter(l.cfg.Jitter))
		if l.cfg.InOrder && at < l.lastAt {
			at = l.lastAt
		}
		if struck.op == MsgDelay {
			// Held back alone: the messages sent after it are not (as a request
			// stuck in a retransmission, or resent on a new connection).
			at = at.Add(struck.delay)
		} else {
			l.lastAt = at
		}
		l.inflight++
		w.schedule(event{at: at, kind: evDeliver, node: to, from: from, id: id, msg: msg, inc: w.nodes[to].inc})
	}
}

// SetLinks applies change to every link's configuration, and to the default that links of
// nodes added later start with.
func (w *World) SetLinks(change func(*LinkConfig) error) error {
	if err := change(&w.net.def); err != nil {
		return err
	}
	for i := range w.net.links {
		if err := change(&w.net.links[i].cfg); err != nil {
			return err
		}
	}
	return nil
}

// SetLink replaces the configuration of the directed link from -> to.
func (w *World) SetLink(from, to NodeID, cfg LinkConfig) { w.net.link(from, to).cfg = cfg }

// Link is the configuration of the directed link from -> to.
func (w *World) Link(from, to NodeID) LinkConfig { return w.net.link(from, to).cfg }

// LinkStats is the counters of the directed link from -> to.
func (w *World) LinkStats(from, to NodeID) LinkStats { return w.net.link(from, to).stats }

// NodeTraffic is the number of messages node id sent plus those delivered to it, over
// every link: equal to summing Sent on its outgoing links and Delivered on its incoming
// ones, in constant time. An observer that wants to know whether a node communicated
// since it last looked compares two readings.
func (w *World) NodeTraffic(id NodeID) uint64 { return w.net.traffic[id] }

// NetStats sums the counters of every link.
func (w *World) NetStats() LinkStats {
	var s LinkStats
	for i := range w.net.links {
		s = s.Add(w.net.links[i].stats)
	}
	return s
}

// InFlight is the number of messages on the directed link from -> to, including those a
// clog is holding.
func (w *World) InFlight(from, to NodeID) int {
	l := w.net.link(from, to)
	return l.inflight + len(l.held)
}

// Cut blocks the directed link from -> to: messages on it are discarded, including those
// already in flight when they arrive. The reverse direction is untouched.
func (w *World) Cut(from, to NodeID) {
	w.net.link(from, to).cut = true
	fault(w, from, to, LinkCut{})
}

// Partition cuts every link between nodes of different groups, both ways. Nodes named in
// no group keep all their links.
func (w *World) Partition(groups ...[]NodeID) {
	var parts [][]string
	for gi, g := range groups {
		var names []string
		for _, a := range g {
			names = append(names, w.Name(a))
			for gj, h := range groups {
				if gi == gj {
					continue
				}
				for _, b := range h {
					w.net.link(a, b).cut = true
				}
			}
		}
		parts = append(parts, names)
	}
	fault(w, External, External, Partitioned{Groups: parts})
}

// Heal restores every cut link. Clogs are separate and stay.
func (w *World) Heal() {
	for i := range w.net.links {
		w.net.links[i].cut = false
	}
	fault(w, External, External, Healed{All: true})
}

// HealLink restores the directed link from -> to.
func (w *World) HealLink(from, to NodeID) {
	w.net.link(from, to).cut = false
	fault(w, from, to, Healed{})
}

// IsCut reports whether the directed link from -> to is cut.
func (w *World) IsCut(from, to NodeID) bool { return w.net.link(from, to).cut }

// Clog holds every message on the directed link from -> to until Unclog, then releases
// them in the order they arrived.
func (w *World) Clog(from, to NodeID) {
	w.net.link(from, to).clogged = true
	fault(w, from, to, LinkClogged{})
}

// IsClogged reports whether the directed link from -> to is clogged.
func (w *World) IsClogged(from, to NodeID) bool { return w.net.link(from, to).clogged }

// Unclog releases a clogged link: held messages are delivered now, in order.
func (w *World) Unclog(from, to NodeID) {
	l := w.net.link(from, to)
	l.clogged = false
	held := l.held
	l.held = nil
	fault(w, from, to, LinkUnclogged{Released: len(held)})
	for _, e := range held {
		e.at = w.now
		w.schedule(e)
	}
}

// DropNext arranges for the next n messages sent on the directed link from -> to to be
// lost.
func (w *World) DropNext(from, to NodeID, n int) { w.DropNextKind(from, to, "", n) }

// DropNextKind arranges for the next n messages of one kind (MessageKind; "" for any)
// sent on the directed link from -> to to be lost.
func (w *World) DropNextKind(from, to NodeID, kind string, n int) {
	w.arm(from, to, msgFault{op: MsgDrop, kind: kind, left: n})
	fault(w, from, to, DropNext{N: n, MsgKind: kind})
}

// DelayNext arranges for the next n messages of one kind ("" for any) sent on the
// directed link from -> to to arrive d later than the link would deliver them. Each is
// delayed alone: messages sent after it may overtake it, even on an in-order link.
func (w *World) DelayNext(from, to NodeID, kind string, n int, d time.Duration) {
	w.arm(from, to, msgFault{op: MsgDelay, kind: kind, left: n, delay: d})
	fault(w, from, to, DelayNext{N: n, MsgKind: kind, By: d})
}

// DuplicateNext arranges for the next n messages of one kind ("" for any) sent on the
// directed link from -> to to arrive twice.
func (w *World) DuplicateNext(from, to NodeID, kind string, n int) {
	w.arm(from, to, msgFault{op: MsgDuplicate, kind: kind, left: n})
	fault(w, from, to, DuplicateNext{N: n, MsgKind: kind})
}

// arm adds a message fault to a link; a count below one arms nothing.
func (w *World) arm(from, to NodeID, f msgFault) {
	if f.left > 0 {
		l := w.net.link(from, to)
		l.armed = append(l.armed, f)
	}
}

// Release delivers now some of the messages a clogged link holds: the first n of one
// kind (MessageKind; "" for any), or all of that kind if n is 0. The link stays clogged,
// and the rest stay held, in order.
func (w *World) Release(from, to NodeID, kind string, n int) {
	l := w.net.link(from, to)
	var out, kept []event
	for _, e := range l.held {
		if (n == 0 || len(out) < n) && (kind == "" || MessageKind(e.msg) == kind) {
			out = append(out, e)
			continue
		}
		kept = append(kept, e)
	}
	l.held = kept
	fault(w, from, to, HeldReleased{Released: len(out), MsgKind: kind, Left: len(kept)})
	for _, e := range out {
		e.at, e.released = w.now, true
		w.schedule(e)
	}
}
