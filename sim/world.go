package sim

import (
	"fmt"
	"time"
)

// NodeID names a node inside one world: an index into the world's node table.
type NodeID int32

// External is the sender of messages that come from outside the simulated cluster: a
// scenario command or a test injecting a request.
const External NodeID = -1

// Message is anything one node sends another. Messages are immutable values: once sent, a
// message is never modified, and no node keeps a reference into one that another node may
// also hold. A message that implements fmt.Stringer is rendered that way in the trace;
// otherwise the trace shows its type.
type Message any

// TimerTag tells a node which of its timers fired. Kind is the node's own code for the
// timer; Arg distinguishes instances (a partition number, a request id).
type TimerTag struct {
	Kind int
	Arg  int64
}

// TimerID identifies one scheduled timer so it can be cancelled.
type TimerID uint64

// Node is a state machine run by the world. Handlers run one at a time and act only
// through env. A crash throws the node value away; a restart builds a fresh one with the
// node's factory, whose Start recovers from what the disk kept.
type Node interface {
	Start(env *Env)
	Recv(env *Env, from NodeID, msg Message)
	Timer(env *Env, tag TimerTag)
}

// NodeFactory builds a node value, for the first start and for every restart.
type NodeFactory func() Node

// FsyncDone is delivered to a node, from itself, when an fsync it requested completes.
// Size is the length of the file's durable prefix now (0 if the file was deleted since).
type FsyncDone struct {
	File string
	Size int64
}

// Status is a node's process state.
type Status uint8

const (
	Up Status = iota
	Down
	Paused
)

func (s Status) String() string {
	switch s {
	case Up:
		return "up"
	case Down:
		return "down"
	case Paused:
		return "paused"
	}
	return "unknown"
}

// nodeSlot is everything the world keeps per node.
type nodeSlot struct {
	name    string
	factory NodeFactory
	node    Node
	status  Status
	inc     uint32 // incarnation: bumped by every crash so stale timers and fsyncs die
	// started is false from a restart (or the node's creation) until its Start has run:
	// messages that arrive meanwhile wait in held, as a process accepts no connection
	// before it has started.
	started bool
	held    []event
	env     Env
	rand    *Rand
	disk    *Disk
	// busyUntil is when the node is done with the CPU work and disk reads it was
	// charged (costs.go); messages that arrive before then wait, and what it sends
	// leaves then.
	busyUntil Time
}

// Config is everything that shapes a world before it starts. Fault knobs are plain fields
// so a run can print them all at its start.
type Config struct {
	Seed uint64
	// Link is the default for every directed link; SetLink overrides one.
	Link LinkConfig
	// Disk is the default for every node's disk.
	Disk DiskConfig
	// TraceMessages records every send, delivery and drop in the trace, not only the
	// model's own events and the faults.
	TraceMessages bool
	// Costs are what links, disks and CPUs charge in time; zero charges nothing.
	Costs Costs
}

// DefaultConfig is a quiet, reliable world: 1ms links with 500us jitter in order, no loss,
// fsyncs that take 2ms.
func DefaultConfig(seed uint64) Config {
	return Config{
		Seed: seed,
		Link: DefaultLink(),
		Disk: DefaultDisk(),
	}
}

// World is one run: virtual time, pending events, nodes, network, disks, trace.
type World struct {
	cfg      Config
	now      Time
	seq      uint64
	steps    uint64
	queue    eventQueue
	nodes    []nodeSlot
	byName   map[string]NodeID
	net      network
	timerSeq uint64
	// cancelled holds ids of timers cancelled before they fired; an entry is removed when
	// the timer's event comes up.
	cancelled map[TimerID]struct{}
	plan      []Action
	lastFault Time // when the last fault was applied (emitFault)
	trace     Trace
	diskRand  *Rand
	stepHash  uint64
	observers []Observer
	ch        charging // what the hardware charges (costs.go); every disk points here
}

// Observer is called after every executed event: the hook for invariants that must hold
// at every step ("one leader per epoch", "the HW never goes back"). It may read the world
// and emit trace events, never change it.
type Observer interface {
	AfterStep(w *World)
}

// AddObserver adds an observer; observers run in the order added. Adding one twice has
// no effect.
func (w *World) AddObserver(o Observer) {
	for _, x := range w.observers {
		if x == o {
			return
		}
	}
	w.observers = append(w.observers, o)
}

// RemoveObserver removes an observer.
func (w *World) RemoveObserver(o Observer) {
	for i, x := range w.observers {
		if x == o {
			w.observers = append(w.observers[:i:i], w.observers[i+1:]...)
			return
		}
	}
}

// NewWorld makes an empty world at time zero.
func NewWorld(cfg Config) *World {
	w := &World{
		cfg:       cfg,
		byName:    map[string]NodeID{},
		cancelled: map[TimerID]struct{}{},
		diskRand:  NewRand(cfg.Seed, "disk"),
		stepHash:  fnvOffset,
		ch:        charging{costs: cfg.Costs, on: !cfg.Costs.Zero(), handler: External},
	}
	w.net.init(cfg.Seed, cfg.Link)
	w.trace.init()
	return w
}

// Config returns the configuration the world was made with.
func (w *World) Config() Config { return w.cfg }

// Seed returns the run seed.
func (w *World) Seed() uint64 { return w.cfg.Seed }

// Now is the current virtual time.
func (w *World) Now() Time { return w.now }

// Steps is the number of events executed so far.
func (w *World) Steps() uint64 { return w.steps }

// Pending is the number of events waiting in the queue.
func (w *World) Pending() int { return w.queue.Len() }

// NextAt is the time of the next pending event, and false when none is pending.
func (w *World) NextAt() (Time, bool) {
	if w.queue.Len() == 0 {
		return 0, false
	}
	return w.queue.peek().at, true
}

// Trace is the run's trace so far.
func (w *World) Trace() *Trace { return &w.trace }

// StepHash is a running 64-bit hash over every executed event's time, kind and node. It
// costs nothing to keep and changes if any scheduling decision changes, so two runs of the
// same seed must end with the same value even when the trace is not recorded.
func (w *World) StepHash() uint64 { return w.stepHash }

// AddNode registers a node under a unique name and schedules its Start now. Names are how
// scenarios, fault plans and the trace refer to nodes.
func (w *World) AddNode(name string, factory NodeFactory) (NodeID, error) {
	if name == "" {
		return 0, fmt.Errorf("node name is empty")
	}
	if _, dup := w.byName[name]; dup {
		return 0, fmt.Errorf("node %q already exists", name)
	}
	id := NodeID(len(w.nodes))
	w.nodes = append(w.nodes, nodeSlot{
		name:    name,
		factory: factory,
		status:  Up,
		rand:    NewRand(w.cfg.Seed, "node/"+name),
		disk:    newDisk(w.cfg.Disk, &w.ch, id),
	})
	// Envs point into the slots; re-point them all since append may have moved the table.
	for i := range w.nodes {
		w.nodes[i].env = Env{w: w, id: NodeID(i)}
	}
	w.byName[name] = id
	w.net.grow(len(w.nodes))
	w.nodes[id].node = factory()
	w.schedule(event{at: w.now, kind: evStart, node: id, inc: 0})
	return id, nil
}

// MustAddNode is AddNode for callers whose names are known to be fresh (tests, generators).
func (w *World) MustAddNode(name string, factory NodeFactory) NodeID {
	id, err := w.AddNode(name, factory)
	if err != nil {
		panic(err)
	}
	return id
}

// Lookup finds a node by name.
func (w *World) Lookup(name string) (NodeID, bool) {
	id, ok := w.byName[name]
	return id, ok
}

// Name is the node's name; External is "env".
func (w *World) Name(id NodeID) string {
	if id == External {
		return "env"
	}
	if id < 0 || int(id) >= len(w.nodes) {
		return fmt.Sprintf("node#%d", id)
	}
	return w.nodes[id].name
}

// NumNodes is how many nodes the world has.
func (w *World) NumNodes() int { return len(w.nodes) }

// Status is the node's process state.
func (w *World) Status(id NodeID) Status { return w.nodes[id].status }

// Node is the node's current state machine, or nil while it is down. Views and checkers
// may read it; only the world may call its handlers.
func (w *World) Node(id NodeID) Node { return w.nodes[id].node }

// Disk is the node's disk (kept across crashes).
func (w *World) Disk(id NodeID) *Disk { return w.nodes[id].disk }

// Env is the node's handle on the world, for drivers that act on a node's behalf.
func (w *World) Env(id NodeID) *Env { return &w.nodes[id].env }

func (w *World) schedule(e event) {
	w.seq++
	e.seq = w.seq
	w.queue.push(e)
}

// Inject delivers msg to node to, from External, after delay. It is how scenario commands
// and tests hand requests to client nodes; it bypasses the network's faults.
func (w *World) Inject(to NodeID, msg Message, delay time.Duration) {
	w.schedule(event{at: w.now.Add(delay), kind: evDeliver, node: to, from: External, msg: msg, inc: w.nodes[to].inc})
}

// Step executes the next event. It returns false when nothing is pending.
func (w *World) Step() bool {
	if w.queue.Len() == 0 {
		return false
	}
	e := w.queue.pop()
	w.now = e.at
	w.steps++
	w.stepHash = hashStep(w.stepHash, uint64(e.at), uint64(e.kind), uint64(uint32(e.node)))
	w.dispatch(e)
	for _, o := range w.observers {
		o.AfterStep(w)
	}
	return true
}

// RunFor executes every event up to and including now+d, then sets the clock to now+d.
func (w *World) RunFor(d time.Duration) {
	w.RunUntilTime(w.now.Add(d))
}

// RunUntilTime executes every event at or before t, then sets the clock to t.
func (w *World) RunUntilTime(t Time) {
	for w.queue.Len() > 0 && w.queue.peek().at <= t {
		w.Step()
	}
	if t > w.now {
		w.now = t
	}
}

// RunUntil steps until done reports true (checked before each step) or maxSteps events
// have run. It reports whether done became true.
func (w *World) RunUntil(done func(*World) bool, maxSteps uint64) bool {
	for n := uint64(0); n < maxSteps; n++ {
		if done(w) {
			return true
		}
		if !w.Step() {
			return done(w)
		}
	}
	return done(w)
}

// RunUntilBy steps until done reports true (checked after each step) or the next event
// lies after t; in that case it sets the clock to t. It reports whether done became true.
func (w *World) RunUntilBy(done func(*World) bool, t Time) bool {
	for w.queue.Len() > 0 && w.queue.peek().at <= t {
		w.Step()
		if done(w) {
			return true
		}
	}
	if t > w.now {
		w.now = t
	}
	return false
}

// RunToStep executes events until Steps() == step or nothing is pending.
func (w *World) RunToStep(step uint64) {
	for w.steps < step && w.Step() {
	}
}

// Stabilize runs until no event is pending, or until virtual time would pass now+limit,
// or StabilizeSteps events have run. It reports whether the world went quiet. Nodes with
// periodic timers never go quiet; the limit bounds them, and the step bound bounds nodes
// that keep sending to each other at one instant.
func (w *World) Stabilize(limit time.Duration) bool {
	end := w.now.Add(limit)
	for n := 0; w.queue.Len() > 0; n++ {
		if w.queue.peek().at > end {
			w.now = end
			return false
		}
		if n == StabilizeSteps {
			return false
		}
		w.Step()
	}
	return true
}

// StabilizeSteps bounds Stabilize in events.
const StabilizeSteps = 50_000_000

// Bound limits a wait for the world to settle: at most Steps events, and no event later
// than Until. Both are needed: a node that keeps sending at one instant never reaches a
// time bound, and periodic timers never let a step bound count quietly down to nothing.
type Bound struct {
	Steps uint64
	Until Time
}

// NotSettledError reports a wait that hit its bound before the world settled.
type NotSettledError struct {
	What   string // what was awaited, e.g. "c2's poll to complete"
	Bound  Bound
	Steps  uint64 // events run by the wait
	Now    Time
	ByTime bool // the time bound was hit (else the step bound)
}

func (e *NotSettledError) Error() string {
	if e.ByTime {
		return fmt.Sprintf("%s did not settle within the virtual time bound %s (now %s, %d steps run)", e.What, e.Bound.Until, e.Now, e.Steps)
	}
	return fmt.Sprintf("%s did not settle within %d steps (now %s)", e.What, e.Bound.Steps, e.Now)
}

// Settle steps until done reports true (checked before each step) or nothing is pending,
// within the bound. It reports whether done became true; the error is a
// *NotSettledError when the bound was hit first. When the time bound stops it, the
// clock is left at the last event (the next one lies beyond Until).
func (w *World) Settle(what string, done func(*World) bool, b Bound) (bool, error) {
	for n := uint64(0); ; n++ {
		if done(w) {
			return true, nil
		}
		if w.queue.Len() == 0 {
			return false, nil
		}
		if n >= b.Steps || w.queue.peek().at > b.Until {
			return false, &NotSettledError{What: what, Bound: b, Steps: n, Now: w.now, ByTime: n < b.Steps}
		}
		w.Step()
	}
}

func (w *World) dispatch(e event) {
	if e.kind == evAction {
		w.apply(w.plan[e.id])
		return
	}
	slot := &w.nodes[e.node]
	switch e.kind {
	case evDeliver:
		if e.from != External && !e.arrived {
			w.net.arrived(e.from, e.node)
			e.arrived = true
		}
		w.deliver(e, slot)
		return
	}
	// Start, timers and fsync completions belong to one incarnation of the node.
	if e.inc != slot.inc {
		return
	}
	if e.kind == evTimer {
		if _, gone := w.cancelled[TimerID(e.id)]; gone {
			delete(w.cancelled, TimerID(e.id))
			return
		}
	}
	if slot.status == Paused {
		slot.held = append(slot.held, e)
		return
	}
	w.handle(e.node)
	switch e.kind {
	case evStart:
		slot.node.Start(&slot.env)
		slot.started = true
		w.charge(slot)
		w.release(slot)
	case evTimer:
		slot.node.Timer(&slot.env, e.tag)
		w.charge(slot)
	case evFsync:
		size := slot.disk.synced(e.file, e.size, e.wseq, e.id)
		slot.node.Recv(&slot.env, e.node, FsyncDone{File: e.file, Size: size})
		w.charge(slot)
	}
}

func (w *World) deliver(e event, slot *nodeSlot) {
	if e.from != External && !e.waited {
		if reason := w.net.blocked(e.from, e.node); reason != "" && !(reason == "clogged" && e.released) {
			if reason == "clogged" {
				w.net.hold(e)
				return
			}
			w.net.count(e.from, e.node, reason)
			w.traceDrop(e, reason)
			return
		}
	}
	switch {
	case slot.status == Down:
		w.net.count(e.from, e.node, "down")
		w.traceDrop(e, "node down")
		return
	case e.from != External && e.inc != slot.inc:
		// Sent to an incarnation that has crashed since: its connections died with it,
		// so the restarted process never sees what was on the way to the old one.
		w.net.count(e.from, e.node, "down")
		w.traceDrop(e, "sent before the node restarted")
		return
	case slot.status == Paused || !slot.started:
		slot.held = append(slot.held, e)
		return
	case slot.busyUntil > w.now:
		// The node is busy (costs.go): the message waits at the node, past the network.
		e.at, e.waited = slot.busyUntil, true
		w.schedule(e)
		return
	}
	if e.from != External {
		w.net.count(e.from, e.node, "delivered")
	}
	if w.cfg.TraceMessages {
		w.record(e.node, e.from, e.id, Received{Msg: e.msg})
	}
	if c := &w.ch.costs; w.ch.on && c.CPU() && e.from != External { // a scenario's command is no request on the wire
		cost := c.CPUPerRequest
		if n, ok := e.msg.(Counted); ok {
			cost += time.Duration(n.RecordCount()) * c.CPUPerRecord
		}
		if l, ok := e.msg.(Laboured); ok {
			cost += l.ExtraCPU()
		}
		slot.busyUntil = w.now.Add(cost)
	}
	w.handle(e.node)
	slot.node.Recv(&slot.env, e.from, e.msg)
	w.charge(slot)
}

func (w *World) traceDrop(e event, reason string) {
	if w.cfg.TraceMessages {
		w.record(e.node, e.from, e.id, Dropped{Msg: e.msg, Why: reason})
	}
}

// Crash kills a node: its state machine is thrown away, its timers and pending fsyncs die,
// and its disk loses every byte that was not synced (or keeps a torn prefix of it, if a
// torn write is armed or drawn). Messages already in flight stay in the network.
func (w *World) Crash(id NodeID) {
	slot := &w.nodes[id]
	if slot.status == Down {
		return
	}
	slot.status = Down
	slot.node = nil
	slot.held = nil
	slot.inc++
	slot.busyUntil = 0
	lost := slot.disk.crash(w.diskRand)
	fault(w, id, External, NodeCrashed{Lost: lost})
}

// Kill ends a node's process (kill -9, an OOM kill, a clean exit) but not its machine:
// the state machine, timers and pending fsync completions go as with Crash, while the
// disk keeps every byte written, synced or not. On Linux a write(2) returns once the data
// is in the page cache, which belongs to the kernel, not the process; the kernel writes
// dirty pages back later (vm.dirty_expire_centisecs, 30 s by default) whether or not the
// process lives, and a restarted process reads them back from the cache. Only a power
// loss or a kernel crash (Crash) loses them. Unsynced bytes stay unsynced here: a Crash
// of the same node later still loses what no fsync covered (mqsim has no background
// writeback), and an armed torn write waits for that crash.
func (w *World) Kill(id NodeID) {
	slot := &w.nodes[id]
	if slot.status == Down {
		return
	}
	slot.status = Down
	slot.node = nil
	slot.held = nil
	slot.inc++
	slot.busyUntil = 0
	fault(w, id, External, NodeKilled{Unsynced: slot.disk.Unsynced()})
}

// Restart builds a fresh state machine for a crashed node and schedules its Start, which
// recovers from the disk.
func (w *World) Restart(id NodeID) {
	slot := &w.nodes[id]
	if slot.status != Down {
		return
	}
	slot.status = Up
	slot.started = false
	slot.node = slot.factory()
	fault(w, id, External, NodeRestarted{})
	w.schedule(event{at: w.now, kind: evStart, node: id, inc: slot.inc})
}

// Pause freezes a node, as a long GC pause or a stopped VM would: it receives nothing and
// no timer fires until Resume; what arrives meanwhile waits, in order.
func (w *World) Pause(id NodeID) {
	slot := &w.nodes[id]
	if slot.status != Up {
		return
	}
	slot.status = Paused
	fault(w, id, External, NodePaused{})
}

// Resume unfreezes a paused node; everything that waited is executed now, in order.
func (w *World) Resume(id NodeID) {
	slot := &w.nodes[id]
	if slot.status != Paused {
		return
	}
	slot.status = Up
	fault(w, id, External, NodeResumed{Waiting: len(slot.held)})
	w.release(slot)
}

// release schedules now, in order, the events a node held while paused or not started.
func (w *World) release(slot *nodeSlot) {
	for _, e := range slot.held {
		e.at = w.now
		w.schedule(e)
	}
	slot.held = nil
}

// Describe renders a message as the trace does: its String, or its type.
func Describe(m Message) string {
	if s, ok := m.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%T", m)
}
