package sim

import (
	"strings"
	"time"
)

// Env is a node's only handle on the world: the clock, the network, timers, its disk, its
// random stream and the trace. The world hands the same *Env to every handler of a node.
type Env struct {
	w  *World
	id NodeID
}

// Self is this node's id.
func (e *Env) Self() NodeID { return e.id }

// Name is this node's name.
func (e *Env) Name() string { return e.w.nodes[e.id].name }

// Now is the current virtual time.
func (e *Env) Now() Time { return e.w.now }

// Lookup finds another node by name. A node whose name has a site prefix (all up to its
// last dot: "west." of "west.b1") looks in its own site first, as a DNS search domain
// does, so that a second cluster's controller and brokers name each other "ctl" and "b1"
// as a single cluster's do; a name not found there is looked up as given.
func (e *Env) Lookup(name string) (NodeID, bool) {
	self := e.w.nodes[e.id].name
	if i := strings.LastIndexByte(self, '.'); i >= 0 {
		if id, ok := e.w.Lookup(self[:i+1] + name); ok {
			return id, true
		}
	}
	return e.w.Lookup(name)
}

// NameOf is another node's name.
func (e *Env) NameOf(id NodeID) string { return e.w.Name(id) }

// Rand is this node's random stream.
func (e *Env) Rand() *Rand { return e.w.nodes[e.id].rand }

// Disk is this node's disk.
func (e *Env) Disk() *Disk { return e.w.nodes[e.id].disk }

// Send puts msg on the network to node to. Whether, when and how often it arrives is up
// to the link between the two nodes.
func (e *Env) Send(to NodeID, msg Message) {
	e.w.send(e.id, to, msg)
}

// SetTimer arranges for the node's Timer handler to run with tag after d. A crash cancels
// every timer of the node.
func (e *Env) SetTimer(d time.Duration, tag TimerTag) TimerID {
	w := e.w
	w.timerSeq++
	id := TimerID(w.timerSeq)
	w.schedule(event{at: w.now.Add(d), kind: evTimer, node: e.id, inc: w.nodes[e.id].inc, id: uint64(id), tag: tag})
	return id
}

// CancelTimer stops a timer that has not fired yet. Cancelling one that already fired is
// a no-op.
func (e *Env) CancelTimer(id TimerID) {
	if id != 0 {
		e.w.cancelled[id] = struct{}{}
	}
}

// Fsync asks the disk to make everything written to file so far durable. When the disk's
// latency has passed, the node receives FsyncDone from itself. A crash before then loses
// the unsynced bytes.
func (e *Env) Fsync(file string) {
	w := e.w
	slot := &w.nodes[e.id]
	size, wseq, gen := slot.disk.syncPoint(file)
	lat := slot.disk.cfg.FsyncLatency + slot.rand.Jitter(slot.disk.cfg.FsyncJitter)
	written := w.now
	if rate := w.ch.costs.DiskWrite; rate > 0 {
		written = slot.disk.queueWrite(file, w.now, rate)
	}
	w.schedule(event{at: written.Add(lat), kind: evFsync, node: e.id, inc: slot.inc, file: file, size: size, wseq: wseq, id: gen})
}

// Work spends d of the node's CPU on something its handler does beyond receiving a
// message (a producer compressing a batch before it sends it): with CPU costs on
// (Costs.CPU), the node is busy d longer, so what it sends from now on leaves later;
// without, it costs nothing, as every cost is off by default.
func (e *Env) Work(d time.Duration) {
	w := e.w
	if !w.ch.on || !w.ch.costs.CPU() || d <= 0 {
		return
	}
	slot := &w.nodes[e.id]
	slot.busyUntil = max(slot.busyUntil, w.now).Add(d)
}

// Starts is how many times this node has started, this start included: the value no
// earlier start of the node had, known without the disk. It stands in for a process's
// random incarnation id (Kafka's broker draws incarnationId = Uuid.randomUuid() at every
// start and keeps it nowhere), which a counter on the node's disk cannot replace: a bump
// not yet fsynced when the power goes is lost, and the next start reuses the number.
func (e *Env) Starts() int64 { return int64(e.w.nodes[e.id].inc) + 1 }

// Tracing says whether the trace keeps anything: code that does work only to describe an
// event (beyond building its payload) skips it when the trace is off.
func (e *Env) Tracing() bool { return e.w.trace.Mode != TraceOff }
