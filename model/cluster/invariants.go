package cluster

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/broker"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Invariant names: what a broker's state must never show, at any step. The checkers judge
// what clients saw; these judge what the brokers believe, after every event.
const (
	// TwoLeaders: two brokers lead the same partition in the same leader epoch at the
	// same moment. The epoch is what fences a deposed leader; if two share one, nothing
	// can tell their histories apart.
	TwoLeaders = "two-leaders"
	// HWRegression: a leader's high watermark is below the HW a leader already reached
	// in the same epoch. A consumer may have read the records in between; within an
	// epoch they must stay committed.
	HWRegression = "hw-regression"
	// ReadAboveHW: an ok poll returned a record at or above the partition's HW: the
	// highest HW any leader had reached by the time the poll completed, so the record
	// was surely not committed when it was served.
	ReadAboveHW = "read-above-hw"
	// ISROutsideReplicas: a leader's ISR names a broker that is not a replica.
	ISROutsideReplicas = "isr-outside-replicas"
	// LeaderOutsideISR: a leader is not in its own ISR.
	LeaderOutsideISR = "leader-outside-isr"
	// LeaderIncomplete: a leader's log ends below the HW a leader of an earlier epoch
	// reached: the new leader lacks committed records (Raft's leader completeness).
	// Checked only where the configuration promises it: every batch fsynced before it
	// counts, no unclean election for the topic, and epoch-based truncation (the
	// pre-KIP-101 rule, truncation=hw, loses committed records by design).
	LeaderIncomplete = "leader-incomplete"
)

// InvariantViolation is one broken invariant, reported once per partition, invariant and
// leader epoch, at the step where it first broke.
type InvariantViolation struct {
	Anomaly string
	TP      proto.TP
	Epoch   int32 // the leader epoch it concerns
	Time    sim.Time
	Step    uint64 // the world step after which it was first seen
	Text    string
}

func (v InvariantViolation) String() string {
	return fmt.Sprintf("%s %s at %s (step %d): %s", v.Anomaly, v.TP, v.Time, v.Step, v.Text)
}

// Invariants is the observer that checks the invariants after every event. It reads the
// brokers through their read-only views, never changes the world, and emits an
// "invariant" trace event when something breaks.
//
// Reading every replica of every broker after every event would cost more than the
// events themselves, so the observer keeps each broker's last view of each partition
// (broker.Role: no allocation, no disk) and reads again only what the last event may
// have changed:
//
//   - leadership, leader epoch and ISR come from the controller, so a broker's views are
//     read again when the controller's messages to it were delivered, or it restarted;
//   - a leader's log end grows only when it handles a produce, and its HW rises when it
//     handles a message (a follower's fetch, a produce) or, under a flush-every-batch
//     policy, when one of its fsyncs completes; a rise nobody has been told of cannot
//     have misled anyone, and whoever is told learns it from a message the leader
//     sends. So a leader is read again when its broker received or sent a message.
//
// Messages are counted by the network (sim.World.NodeTraffic); messages injected
// from outside the world are not, and nothing injects any into a broker.
//
// Within those moments only the replicas whose role may have changed are read: the
// broker lists every replica whose leadership, controller state, HW or log end (as a
// leader) it changed (broker.TakeTouched), and any other replica would read the same as
// kept. So the cost of a step is the replicas it changed, not every partition of the
// broker. A test reads every view at every event as well and fails if a kept one ever
// differs from it in anything but a HW rise not yet told, or, right after the broker was
// read, in anything a full read would have changed.
//
// The judgement is incremental in the same way: a partition is judged again only when a
// leader's view of it was read in this step (it is "dirty"), or while it is unsettled (its
// replica set is not known yet, or a leader's ISR names a broker outside it, so that the
// controller's answer may change the verdict). That is complete: judge is a function of
// the partition's leader views, its replica set and what earlier judgements of it
// recorded, so judging a partition none of whose inputs changed finds nothing new (a
// repeated report is dropped by report anyway). Each partition keeps the brokers whose
// view of it leads (leadBy), so judging it does not ask every broker either.
// BenchmarkInvariantOverhead measures the whole cost against the same run without the
// observer.
type Invariants struct {
	c       *Cluster
	parts   []watch
	topics  int // how many of c.topics parts covers
	brokers []brokerWatch
	leaders []leaderView
	polls   int // client history ops already examined
	// dirty lists the partitions (indexes into parts) a leader view of which was read in
	// this step; unsettled, those judged again at every step that reads (watch.unsettled).
	dirty, unsettled []int
	// unknown lists the partitions whose replica set the controller has not given yet.
	unknown []int
	found   []InvariantViolation
	seen    map[seenKey]bool
	allDown []ReplicasDown  // convergence.go
	down    []downSpan      // by broker index (convergence.go)
	ctls    controllerWatch // a controller quorum's (controllers.go)
	// logEnd reads an ISR member's log end for the ISR contract (memberLogEnd; the
	// rule tests give made-up ones).
	logEnd func(w *sim.World, id sim.NodeID, tp proto.TP) (int64, bool)
	// paranoid, for tests, reads every view at every event and records where the kept
	// views differ.
	paranoid    bool
	divergences []string
}

// brokerWatch is the observer's last view of one broker.
type brokerWatch struct {
	node *broker.Broker // the incarnation seen; nil while down
	// fromCtl counts the messages delivered to it from the controller, traffic those
	// delivered to it or sent by it, when it was last read.
	fromCtl, traffic uint64
	views            []replicaView // by index in Invariants.parts
	// led lists the partitions whose kept view leads, in no particular order: all a
	// message may change short of the controller's word.
	led []int
	// partOf maps node's replica references (broker.TakeTouched) to partitions (-1: not
	// watched, unresolved: not looked up yet); touched is TakeTouched's buffer.
	partOf, touched []int
}

// replicaView is what the observer keeps of one replica.
type replicaView struct {
	leader  bool
	epoch   int32
	hw, leo int64
	isr     []sim.NodeID
}

// read replaces v with the broker's role, keeping v's ISR buffer so that reading again
// allocates nothing once the buffer has grown.
func (v *replicaView) read(r broker.Role, ok bool) {
	if !ok {
		*v = replicaView{isr: v.isr[:0]}
		return
	}
	*v = replicaView{leader: r.Leader, epoch: r.LeaderEpoch, hw: r.HighWatermark, leo: r.LogEndOffset,
		isr: append(v.isr[:0], r.ISR...)}
}

// current reports whether kept, a view kept since the broker last communicated, is as
// good as fresh, read now: they agree on the role, epoch and ISR of every replica, and
// on the log end of a leader, whose kept HW may only trail a rise nobody was told of yet.
// (A follower's HW and log end matter only once it leads, when it is read again.)
func current(kept, fresh replicaView) bool {
	return kept.leader == fresh.leader && kept.epoch == fresh.epoch && slices.Equal(kept.isr, fresh.isr) &&
		(!kept.leader || (kept.leo == fresh.leo && kept.hw <= fresh.hw))
}

// watch is what the invariants remember about one partition.
type watch struct {
	tp       proto.TP
	replicas []sim.NodeID // from the controller, once it is seen; nil until then
	// complete says whether leader completeness is promised for this partition.
	complete bool
	// epochs holds, per leader epoch seen, the highest HW a leader reached in it.
	epochs []epochHW
	// maxHW is the highest HW any leader reached, in any epoch; epoch is the latest
	// epoch a leader was seen in.
	maxHW int64
	epoch int32
	// allDown says that every replica was down at once at some step (convergence.go).
	allDown bool
	// committedReads are the records ok polls read below the HW (convergence.go judges
	// them against the log at the end).
	committedReads []committedRead
	// dirty marks the partition listed in Invariants.dirty in this step; unsettled, in
	// Invariants.unsettled.
	dirty, unsettled bool
	// leadBy lists, in order, the brokers (indexes into Cluster.Brokers) whose kept view
	// of the partition leads: what judge gathers, without asking every broker.
	leadBy []int
}

type epochHW struct {
	epoch  int32
	hw     int64
	broker int // who reached it (index into Cluster.Brokers)
	step   uint64
}

type leaderView struct {
	broker   int
	brokerID sim.NodeID
	*replicaView
}

type seenKey struct {
	anomaly string
	tp      proto.TP
	epoch   int32
}

// CheckInvariants turns the invariant checks on or off. They are on from New; a
// benchmark that measures the system alone turns them off. Turning them on again keeps
// what was found before.
func (c *Cluster) CheckInvariants(on bool) {
	if !on {
		if c.inv != nil {
			c.W.RemoveObserver(c.inv)
		}
		return
	}
	if c.inv == nil {
		c.inv = &Invariants{c: c, seen: map[seenKey]bool{}, logEnd: memberLogEnd}
	}
	c.W.AddObserver(c.inv)
}

// InvariantViolations lists what the invariant checks found so far, in the order found.
func (c *Cluster) InvariantViolations() []InvariantViolation {
	if c.inv == nil {
		return nil
	}
	return slices.Clone(c.inv.found)
}

// AfterStep checks every invariant against the state the last event left.
func (inv *Invariants) AfterStep(w *sim.World) {
	c := inv.c
	if inv.topics < len(c.topics) {
		inv.addTopics()
	}
	for len(inv.brokers) < len(c.Brokers) { // a broker added to the running cluster
		inv.brokers = append(inv.brokers, brokerWatch{views: make([]replicaView, len(inv.parts))})
	}
	read := false
	for bi := range inv.brokers {
		read = inv.readBroker(w, bi) || read
	}
	if read {
		inv.judgeChanged(w)
	}
	if read {
		inv.noteAllDown(w)
	}
	if c.History != nil {
		inv.checkPolls(w, c.History)
	}
	if c.groups != nil {
		c.groups.afterStep(inv, w)
	}
	inv.checkControllers(w)
}

// judgeChanged judges, in partition order, the partitions marked dirty in this step and
// the unsettled ones, having first asked the controller for the replica sets still
// unknown.
func (inv *Invariants) judgeChanged(w *sim.World) {
	inv.learnUnknownReplicas()
	todo := inv.dirty
	for _, i := range inv.unsettled {
		if !inv.parts[i].dirty {
			todo = append(todo, i)
		}
	}
	slices.Sort(todo)
	inv.unsettled = inv.unsettled[:0]
	for _, i := range todo {
		p := &inv.parts[i]
		p.dirty, p.unsettled = false, false
		inv.leaders = inv.leaders[:0]
		for _, bi := range p.leadBy {
			inv.leaders = append(inv.leaders, leaderView{broker: bi, brokerID: inv.c.Brokers[bi], replicaView: &inv.brokers[bi].views[i]})
		}
		restless := false
		if len(inv.leaders) > 0 {
			restless = inv.judge(w, p) && len(inv.leaders) > 1
		}
		inv.settle(i, restless)
	}
	inv.dirty = todo[:0]
}

// settle lists partition i as unsettled when its verdict may change without any of its
// views changing: a leader's ISR names a broker outside its replica set (learnReplicas,
// asked at every judgement, may learn of a reassignment), or the judgement was restless:
// with several leaders, one raised an epoch's record after another was held to it (a
// leader of epoch 0 with HW 14 judged before one of the same epoch with HW 17), so the
// next judgement may find what this one could not. A judgement that moves no record
// leaves the next one with the same inputs: that one settles. A partition whose replica
// set is unknown is asked about at every step that reads, and judged once it is learned
// (learnUnknownReplicas).
func (inv *Invariants) settle(i int, restless bool) {
	p := &inv.parts[i]
	unsettled := restless
	for _, bi := range p.leadBy {
		for _, id := range inv.brokers[bi].views[i].isr {
			if p.replicas != nil && !slices.Contains(p.replicas, id) {
				unsettled = true
			}
		}
	}
	if unsettled && !p.unsettled {
		p.unsettled = true
		inv.unsettled = append(inv.unsettled, i)
	}
}

// readView replaces broker bi's kept view of partition pi with its role, and reports
// whether it leads. A leader view makes the partition dirty; the partition's leadBy
// follows the view. The broker's led list is the caller's to keep.
func (inv *Invariants) readView(bi, pi int, r broker.Role, ok bool) bool {
	p, v := &inv.parts[pi], &inv.brokers[bi].views[pi]
	was := v.leader
	v.read(r, ok)
	p.noteLeader(bi, was, v.leader)
	if v.leader && !p.dirty {
		p.dirty = true
		inv.dirty = append(inv.dirty, pi)
	}
	return v.leader
}

// noteLeader keeps leadBy in step with broker bi's view, which led (was) and leads (now).
func (p *watch) noteLeader(bi int, was, now bool) {
	i, found := slices.BinarySearch(p.leadBy, bi)
	switch {
	case now && !found:
		p.leadBy = slices.Insert(p.leadBy, i, bi)
	case !now && found:
		p.leadBy = slices.Delete(p.leadBy, i, i+1)
	}
}

// readBroker reads again the views of broker bi that the last event may have changed,
// and reports whether it read any. After a restart it reads every view. After the
// controller's word it reads the replicas the broker lists as touched
// (broker.TakeTouched: those whose role, HW or log end changed since the last read);
// after another message to or from the broker, those of them it leads. Every other view
// would read the same as kept, but for a follower's HW and log end, which the invariants
// do not judge.
func (inv *Invariants) readBroker(w *sim.World, bi int) bool {
	c, bw := inv.c, &inv.brokers[bi]
	id := c.Brokers[bi]
	b, _ := w.Node(id).(*broker.Broker)
	if b == nil {
		if bw.node != nil {
			bw.node = nil
			for _, pi := range bw.led {
				inv.parts[pi].noteLeader(bi, true, false)
			}
			clear(bw.views)
			bw.led = bw.led[:0]
			return true
		}
		return false
	}
	fromCtl := c.fromControllers(w, id)
	traffic := w.NodeTraffic(id)
	restarted := b != bw.node
	told := fromCtl != bw.fromCtl
	active := traffic != bw.traffic
	bw.node, bw.fromCtl, bw.traffic = b, fromCtl, traffic
	read := false
	switch {
	case restarted:
		bw.touched = b.TakeTouched(bw.touched) // every view is read below
		bw.partOf = bw.partOf[:0]              // a new broker value numbers its replicas anew
		inv.readAll(bi, b)
		read = true
	case told || active:
		bw.touched = b.TakeTouched(bw.touched)
		for _, ref := range bw.touched {
			pi := inv.partitionOf(bw, b, ref)
			if pi < 0 || !told && !bw.views[pi].leader {
				continue
			}
			was := bw.views[pi].leader
			switch now := inv.readView(bi, pi, b.RoleAt(ref), true); {
			case now && !was:
				bw.led = append(bw.led, pi)
			case was && !now:
				bw.led = slices.DeleteFunc(bw.led, func(i int) bool { return i == pi })
			}
		}
		read = told || len(bw.led) > 0
	}
	if inv.paranoid {
		inv.checkKept(w, bi, b, restarted || told || active)
	}
	return read
}

// partitionOf is the partition (index into parts) of broker b's replica reference, -1
// if its topic is not watched; bw.partOf remembers the answers.
func (inv *Invariants) partitionOf(bw *brokerWatch, b *broker.Broker, ref int) int {
	for len(bw.partOf) <= ref {
		bw.partOf = append(bw.partOf, unresolved)
	}
	if bw.partOf[ref] == unresolved {
		bw.partOf[ref] = inv.partIndex(b.TPAt(ref))
	}
	return bw.partOf[ref]
}

// unresolved marks a replica reference partitionOf has not looked up yet.
const unresolved = -2

// readAll reads every view of broker bi, and makes its led list again.
func (inv *Invariants) readAll(bi int, b *broker.Broker) {
	bw := &inv.brokers[bi]
	bw.led = bw.led[:0]
	for pi := range inv.parts {
		ref, ok := b.ReplicaRef(inv.parts[pi].tp)
		var r broker.Role
		if ok {
			r = b.RoleAt(ref)
		}
		if inv.readView(bi, pi, r, ok) {
			bw.led = append(bw.led, pi)
		}
	}
}

// checkKept (paranoid mode, for tests) reads every view of broker bi afresh and records
// where the kept one differs. Right after the broker was read (read), a leader's kept
// view must be exactly what the full read of every led partition would have given;
// otherwise its HW may trail a rise nobody was told of yet.
func (inv *Invariants) checkKept(w *sim.World, bi int, b *broker.Broker, read bool) {
	bw := &inv.brokers[bi]
	for pi := range inv.parts {
		v := &bw.views[pi]
		var fresh replicaView
		fresh.read(b.Role(inv.parts[pi].tp))
		if current(*v, fresh) && (!read || !v.leader || v.hw == fresh.hw) {
			continue
		}
		inv.divergences = append(inv.divergences, fmt.Sprintf("step %d: %s %s: kept %+v, now %+v",
			w.Steps(), w.Name(inv.c.Brokers[bi]), inv.parts[pi].tp, *v, fresh))
		inv.parts[pi].noteLeader(bi, v.leader, fresh.leader)
		if fresh.leader && !v.leader {
			bw.led = append(bw.led, pi)
		}
		*v = fresh
	}
}

// addTopics starts watching the partitions of topics created since the last step.
func (inv *Invariants) addTopics() {
	c := inv.c
	for _, t := range c.topics[inv.topics:] {
		complete := !t.UncleanLeaderElection && c.Cfg.Broker.Log.Flush == wal.FlushEveryBatch &&
			c.Cfg.Broker.Truncation == proto.TruncateByEpoch
		for p := 0; p < t.Partitions; p++ {
			inv.parts = append(inv.parts, watch{tp: proto.TP{Topic: t.Name, Partition: int32(p)}, complete: complete, epoch: -1})
		}
	}
	inv.topics = len(c.topics)
	slices.SortFunc(inv.parts, func(a, b watch) int {
		switch {
		case a.tp.Less(b.tp):
			return -1
		case b.tp.Less(a.tp):
			return 1
		}
		return 0
	})
	// Partition indexes moved: the lists of them are made again, and every view is read
	// again at once (below), so no partition has a leader view yet.
	inv.unknown, inv.unsettled = inv.unknown[:0], inv.unsettled[:0]
	for i := range inv.parts {
		inv.parts[i].leadBy = nil
		if p := &inv.parts[i]; p.replicas == nil {
			inv.unknown = append(inv.unknown, i)
		} else if p.unsettled {
			inv.unsettled = append(inv.unsettled, i)
		}
	}
	// Partition indexes moved: every view is read again at once.
	inv.brokers = make([]brokerWatch, len(c.Brokers))
	for i := range inv.brokers {
		inv.brokers[i].views = make([]replicaView, len(inv.parts))
	}
}

// learnReplicas reads a partition's replica set from the controller. A reassignment
// changes it, and a leader may hold the old set for a while, so the watch keeps every
// replica the partition was ever assigned: an ISR outside that is wrong at any moment.
func (inv *Invariants) learnReplicas(p *watch) {
	ctl := inv.c.ControllerView()
	if ctl == nil {
		return
	}
	if st, ok := ctl.Partition(p.tp); ok {
		for _, id := range st.Replicas {
			if !slices.Contains(p.replicas, id) {
				p.replicas = append(p.replicas, id)
			}
		}
	}
}

// learnUnknownReplicas asks the controller for the replica sets not known yet; a
// partition learned now is judged in this step, as its ISR can now be checked.
func (inv *Invariants) learnUnknownReplicas() {
	kept := inv.unknown[:0]
	for _, i := range inv.unknown {
		p := &inv.parts[i]
		if inv.learnReplicas(p); p.replicas == nil {
			kept = append(kept, i)
		} else if !p.dirty {
			p.dirty = true
			inv.dirty = append(inv.dirty, i)
		}
	}
	inv.unknown = kept
}

// judge checks the leaders of one partition, gathered in inv.leaders, and reports whether
// it moved an epoch's record (started one, or raised its HW).
func (inv *Invariants) judge(w *sim.World, p *watch) (moved bool) {
	ls := inv.leaders
	for i := range ls {
		for j := i + 1; j < len(ls); j++ {
			if ls[i].epoch == ls[j].epoch {
				inv.report(w, TwoLeaders, p.tp, ls[i].epoch, fmt.Sprintf("%s and %s both lead %s in epoch %d",
					inv.name(ls[i].broker), inv.name(ls[j].broker), p.tp, ls[i].epoch))
			}
		}
	}
	for i := range ls {
		l := &ls[i]
		if p.replicas != nil {
			for _, id := range l.isr {
				if !slices.Contains(p.replicas, id) {
					inv.learnReplicas(p) // reassigned since
				}
				if !slices.Contains(p.replicas, id) {
					inv.report(w, ISROutsideReplicas, p.tp, l.epoch, fmt.Sprintf("%s leads %s in epoch %d with ISR %s, but %s is not a replica (replicas %s)",
						inv.name(l.broker), p.tp, l.epoch, names(w, l.isr), w.Name(id), names(w, p.replicas)))
				}
			}
		}
		if !slices.Contains(l.isr, l.brokerID) {
			inv.report(w, LeaderOutsideISR, p.tp, l.epoch, fmt.Sprintf("%s leads %s in epoch %d but is not in its ISR %s",
				inv.name(l.broker), p.tp, l.epoch, names(w, l.isr)))
		}
		records := len(p.epochs)
		e := p.epochHW(l.epoch, l.broker, w.Steps())
		moved = moved || len(p.epochs) != records
		if l.hw < e.hw {
			inv.report(w, HWRegression, p.tp, l.epoch, fmt.Sprintf("%s leads %s in epoch %d with HW %d, below the HW %d that %s reached in the same epoch (step %d)",
				inv.name(l.broker), p.tp, l.epoch, l.hw, e.hw, inv.name(e.broker), e.step))
		} else if l.hw > e.hw {
			e.hw, e.broker, e.step = l.hw, l.broker, w.Steps()
			moved = true
			if p.complete {
				inv.checkISRContract(w, p, l)
			}
		}
		if p.complete {
			if before := p.committedBefore(l.epoch); before != nil && l.leo < before.hw {
				inv.report(w, LeaderIncomplete, p.tp, l.epoch, fmt.Sprintf("%s leads %s in epoch %d with its log ending at %d, below the HW %d that %s reached in epoch %d (step %d): committed records are missing",
					inv.name(l.broker), p.tp, l.epoch, l.leo, before.hw, inv.name(before.broker), before.epoch, before.step))
			}
		}
		p.maxHW = max(p.maxHW, l.hw)
		p.epoch = max(p.epoch, l.epoch)
	}
	return moved
}

// epochHW finds (or starts) the record of one leader epoch.
func (p *watch) epochHW(epoch int32, b int, step uint64) *epochHW {
	i, found := slices.BinarySearchFunc(p.epochs, epoch, func(e epochHW, ep int32) int {
		switch {
		case e.epoch < ep:
			return -1
		case e.epoch > ep:
			return 1
		}
		return 0
	})
	if !found {
		p.epochs = slices.Insert(p.epochs, i, epochHW{epoch: epoch, hw: -1, broker: b, step: step})
	}
	return &p.epochs[i]
}

// committedBefore is the record with the highest HW among epochs before epoch, or nil.
func (p *watch) committedBefore(epoch int32) *epochHW {
	var best *epochHW
	for i := range p.epochs {
		e := &p.epochs[i]
		if e.epoch >= epoch {
			break
		}
		if best == nil || e.hw > best.hw {
			best = e
		}
	}
	return best
}

// checkPolls compares the records of ok polls recorded since the last step with the
// highest HW seen. A record below every HW a leader reached until now may have been
// served legitimately; one at or above it was surely not committed when served, since
// within an epoch a leader's HW only rises (HWRegression watches that).
func (inv *Invariants) checkPolls(w *sim.World, rec *history.Recorder) {
	defer func() { inv.polls = rec.Len() }() // every op recorded so far was looked at
	for i, op := rec.NextOp(inv.polls); op != nil; i, op = rec.NextOp(i + 1) {
		if op.F != history.Poll || op.Type != history.Ok {
			continue
		}
		for _, pr := range op.Poll.Reads {
			p := inv.watchOf(proto.TP{Topic: pr.Topic, Partition: pr.Partition})
			if p == nil {
				continue
			}
			var above []string
			for _, rec := range pr.Records {
				if rec.Offset >= p.maxHW {
					above = append(above, fmt.Sprintf("%d:%s", rec.Offset, rec.Value))
				} else {
					p.committedReads = append(p.committedReads, committedRead{rec: rec, op: op.Index, process: op.Process, time: sim.Time(op.Time)})
				}
			}
			if len(above) > 0 {
				inv.report(w, ReadAboveHW, p.tp, p.epoch, fmt.Sprintf("poll (op %d) by process %d read %s at or above the HW %d",
					op.Index, op.Process, strings.Join(above, " "), p.maxHW))
			}
		}
	}
}

// watchOf finds tp's watch in parts, or nil.
func (inv *Invariants) watchOf(tp proto.TP) *watch {
	if i := inv.partIndex(tp); i >= 0 {
		return &inv.parts[i]
	}
	return nil
}

// partIndex is tp's index in parts, kept sorted by TP, or -1.
func (inv *Invariants) partIndex(tp proto.TP) int {
	i, found := slices.BinarySearchFunc(inv.parts, tp, func(w watch, tp proto.TP) int { return proto.CompareTP(w.tp, tp) })
	if !found {
		return -1
	}
	return i
}

// report records a violation the first time it is seen for its partition and epoch, and
// marks the trace.
func (inv *Invariants) report(w *sim.World, anomaly string, tp proto.TP, epoch int32, text string) {
	k := seenKey{anomaly, tp, epoch}
	if inv.seen[k] {
		return
	}
	inv.seen[k] = true
	inv.found = append(inv.found, InvariantViolation{Anomaly: anomaly, TP: tp, Epoch: epoch, Time: w.Now(), Step: w.Steps(), Text: text})
	sim.RecordWorld(w, InvariantBroken{Anomaly: anomaly, TP: tp, Epoch: epoch, Text: text})
}

func (inv *Invariants) name(b int) string { return inv.c.W.Name(inv.c.Brokers[b]) }

func names(w *sim.World, ids []sim.NodeID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = w.Name(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}
