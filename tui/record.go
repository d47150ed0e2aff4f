package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"mqsim/checker"
	"mqsim/gateway"
	"mqsim/metrics"
	"mqsim/model/broker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/queue"
	"mqsim/model/wal"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// CheckpointEvery is how many trace events lie between two checkpoints of the view model:
// rebuilding the state at any event folds at most this many events' changes.
const CheckpointEvery = 64

// Run is one recorded run of a script: its trace, the changes of the view model at every
// trace event, checkpoints of the view model, and the checkers' report. A run is recorded
// once, synchronously, by executing the script in a fresh world; after that it is
// read-only, and every view of it (any event, forwards or backwards) is rebuilt from its
// checkpoints.
type Run struct {
	Name   string // "main", "fork-1", ...
	Script *script.Script
	Opts   runner.Options
	// Events is the whole trace.
	Events []sim.Event
	// Steps are the script's steps as executed; Outputs their outputs.
	Steps   []StepSpan
	Outputs []string
	// Err is the error that stopped the script, if one did; the run holds what happened
	// before it.
	Err  error
	Hash string
	// Brokers are the broker names (empty without a cluster).
	Brokers []string
	// QueueNodes are the queue broker's nodes q1..qN (empty without one), and Flavour
	// its flavour: "rabbit" or "sqs".
	QueueNodes []string
	Flavour    string
	// Kind is the system the run judges (0 when it started none).
	Kind runner.Kind
	// Verdict is the run's one verdict, the one mqsim run prints (nil when the run has
	// nothing to judge); Report is its report, and Checks place its violations.
	Verdict *runner.Verdict
	Report  *checker.Report
	Checks  []Check
	// Fork says where this run branched off its parent (nil for an original run).
	Fork *ForkInfo
	// Session is the mqsim serve session this run replays (RecordSession), nil for a
	// scenario's run: its steps after the script's are the clients' requests.
	Session *gateway.Session
	// Answers are the answers of the script's questions (script.Question), one per
	// question, computed while recording at each question's reveal point
	// (runner.Runner.Reveal), for the quiz mode (quiz.go).
	Answers []runner.Answer
	// QuizErr is why an answer could not be computed (the quiz then cannot be played).
	QuizErr error

	// metrics are the run's figures, computed when a view first asks (Run.Metrics).
	metrics *metrics.Timeline

	changes  []change
	chStart  []int32 // changes of event i: changes[chStart[i]:chStart[i+1]]
	ckpts    []State // ckpts[j]: the state before event j*CheckpointEvery
	final    State
	nodesEnd []string
}

// StepSpan is where one script step sits in the trace.
type StepSpan struct {
	Step script.Step
	// First and End delimit the trace events emitted while the step ran: [First, End).
	First, End int
	// Now is the virtual time when the step began; Nodes the nodes that existed then.
	Now   sim.Time
	Nodes []string
}

// Check is one finding of the checkers, placed on the trace.
type Check struct {
	V checker.Violation
	// Event is the first trace event of the kernel step where the anomaly began
	// (V.Step), or after it (-1 if the trace ends before it).
	Event int
}

// ForkInfo records where a fork left its parent.
type ForkInfo struct {
	Parent *Run
	// At is the parent's event the fork was made at; Action the fault, at that event's
	// time + 1ns; Inserted the index in Script.Steps of the "at" step that schedules it.
	At       int
	Action   sim.Action
	Inserted int
}

// Len is the number of trace events.
func (r *Run) Len() int { return len(r.Events) }

// Record executes the script in a fresh world and records it.
func Record(name string, s *script.Script, opts runner.Options) (*Run, error) {
	return RecordWatched(context.Background(), name, s, opts, nil)
}

// Progress is how far a recording has got.
type Progress struct {
	Command, Commands int // the script command being run (1-based), of how many
	Steps             uint64
	Now               sim.Time
}

// RecordWatched is Record that stops when ctx is done (the run then holds what happened
// before, and its Err says it was interrupted) and calls progress, if not nil, as it
// goes: at each command, and every few thousand events within one.
func RecordWatched(ctx context.Context, name string, s *script.Script, opts runner.Options, progress func(Progress)) (*Run, error) {
	return recordRun(ctx, name, s, opts, progress, nil)
}

// moreSteps gives the steps a run takes after its script's (a served session's requests,
// session.go), and the run's verdict at its end; nil for a plain script run.
type moreSteps func(rn *runner.Runner) (steps []extraStep, verdict func() (runner.Verdict, error))

// extraStep is a step of a run beyond its script: shown as Step, done by exec.
type extraStep struct {
	step script.Step
	exec func() (string, error)
}

func recordRun(ctx context.Context, name string, s *script.Script, opts runner.Options, progress func(Progress), more moreSteps) (*Run, error) {
	rc, verdict, err := recordSteps(ctx, name, s, opts, progress, more)
	if err != nil {
		return nil, err
	}
	if rc.w != nil {
		rc.w.RemoveObserver(rc)
	}
	return rc.snapshot(verdict), nil
}

// recordSteps runs a script's steps and then more's, watched by a recorder that stays
// attached to the world; it returns the recorder and how the run is judged.
func recordSteps(ctx context.Context, name string, s *script.Script, opts runner.Options, progress func(Progress), more moreSteps) (*recorder, func() (runner.Verdict, error), error) {
	if err := runner.Check(s); err != nil {
		return nil, nil, err
	}
	run := &Run{Name: name, Script: s, Opts: opts, Flavour: queueFlavour(s, opts)}
	rn := runner.NewRunner(opts)
	command := 0
	rn.Watch(ctx, func(steps uint64, now sim.Time) {
		if progress != nil {
			progress(Progress{Command: command, Commands: len(s.Steps), Steps: steps, Now: now})
		}
	})
	rc := &recorder{run: run, runner: rn}
	run.Answers = make([]runner.Answer, len(s.Questions))
	commands := len(s.Steps)
	// step runs one step of the run, watched; false when it failed (run.Err says why).
	step := func(st script.Step, exec func() (string, error)) bool {
		if progress != nil && rn.Started() {
			progress(Progress{Command: command, Commands: commands, Steps: rn.World().Steps(), Now: rn.World().Now()})
		}
		if !rn.Started() && st.Cmd != "world" {
			rn.World() // the world every other command would create; made now so it is observed from its first event
		}
		rc.attach()
		span := StepSpan{Step: st, First: rc.lastLen}
		if w := rc.w; w != nil {
			span.Now = w.Now()
			span.Nodes = nodeNames(w)
		}
		out, err := exec()
		rc.attach()
		rc.capture()
		span.End = rc.lastLen
		run.Steps = append(run.Steps, span)
		if err != nil {
			run.Err = err
			return false
		}
		run.Outputs = append(run.Outputs, out)
		return true
	}
	for k, st := range s.Steps {
		if _, err := rn.Reveal(s, k, run.Answers); err != nil && run.QuizErr == nil {
			run.QuizErr = err // the quiz cannot be played; the run goes on
		}
		command = k + 1
		if !step(st, func() (string, error) { return rn.Exec(st) }) {
			break
		}
	}
	if run.Err == nil && len(run.Steps) == len(s.Steps) {
		if _, err := rn.Reveal(s, len(s.Steps), run.Answers); err != nil && run.QuizErr == nil {
			run.QuizErr = err
		}
	}
	verdict := func() (runner.Verdict, error) {
		if v, ok := rn.Verdict(); ok {
			return v, nil
		}
		return runner.Verdict{}, errNoVerdict
	}
	if more != nil && run.Err == nil {
		var extra []extraStep
		extra, verdict = more(rn)
		commands += len(extra)
		for _, x := range extra {
			command++
			if !step(x.step, x.exec) {
				break
			}
		}
	}
	return rc, verdict, nil
}

// snapshot is the run as recorded so far, complete and read-only: what follows changes
// only the recorder's own run, never the snapshot's (its slices only grow past the
// snapshot's lengths). verdict, if not nil, judges it.
func (rc *recorder) snapshot(verdict func() (runner.Verdict, error)) *Run {
	rc.capture()
	run := *rc.run
	rn := rc.runner
	if rc.w != nil {
		run.Hash = rn.Hash()
		run.nodesEnd = nodeNames(rc.w)
	}
	// The closing entry goes into a copy: the recorder appends its next event's there.
	run.chStart = append(slices.Clip(run.chStart), int32(len(run.changes)))
	run.final = rc.cur.Clone()
	if q := rn.QueueBroker(); q != nil {
		run.QueueNodes = slices.Clone(q.Names)
	} else {
		run.Flavour = ""
	}
	if c := rn.Cluster(); c != nil {
		for _, id := range c.Brokers {
			run.Brokers = append(run.Brokers, c.W.Name(id))
		}
	}
	if sys := rn.System(); sys != nil {
		run.Kind = sys.Kind()
	}
	if verdict != nil {
		if v, err := verdict(); err == nil {
			run.placeChecks(v)
		}
	}
	return &run
}

// errNoVerdict: the run started no system to judge.
var errNoVerdict = errors.New("nothing to judge")

// placeChecks shows the run's verdict (runner.Runner.Verdict, the one mqsim run prints):
// each violation is placed at the first trace event of its kernel step or after it. The
// most telling first: a broken invariant (the cluster's own state gone wrong, where a
// planted bug first shows), then lost and phantom writes, then the rest.
func (r *Run) placeChecks(v runner.Verdict) {
	r.Verdict = &v
	r.Report = &r.Verdict.Report
	for _, x := range v.Report.Violations {
		r.Checks = append(r.Checks, Check{V: x, Event: r.EventAtStep(x.Step)})
	}
	rank := func(c Check) int {
		if c.V.Checker == checker.InvariantChecker {
			return -1
		}
		return checkRank(c.V.Anomaly)
	}
	slices.SortStableFunc(r.Checks, func(a, b Check) int { return rank(a) - rank(b) })
}

// eventAtTime is the first event at or after t, or -1.
func (r *Run) eventAtTime(t sim.Time) int {
	i, _ := slices.BinarySearchFunc(r.Events, t, func(e sim.Event, t sim.Time) int {
		switch {
		case e.Time < t:
			return -1
		case e.Time > t:
			return 1
		}
		return 0
	})
	if i >= len(r.Events) {
		return -1
	}
	return i
}

// stepName is the kernel step of event i, as mqsim run and the verdict number steps
// ("0" for an empty run).
func (r *Run) stepName(i int) string {
	if i < 0 || i >= len(r.Events) {
		return "0"
	}
	return thousands(int(r.Events[i].Step))
}

// EventAtStep is the first trace event of kernel step k or after it, or -1 (k is 0, or
// the trace ends before it).
func (r *Run) EventAtStep(k uint64) int {
	if k == 0 {
		return -1
	}
	i, _ := slices.BinarySearchFunc(r.Events, k, func(e sim.Event, k uint64) int {
		switch {
		case e.Step < k:
			return -1
		case e.Step > k:
			return 1
		}
		return 0
	})
	if i >= len(r.Events) {
		return -1
	}
	return i
}

// StateAt rebuilds the view model right after event i: a copy of the checkpoint at or
// before i, with the changes of the events since folded in. It costs at most
// CheckpointEvery folds, whichever way the user moves.
func (r *Run) StateAt(i int) State {
	if len(r.Events) == 0 {
		return r.final.Clone()
	}
	i = clamp(i, 0, len(r.Events)-1)
	j := (i + 1) / CheckpointEvery
	if j >= len(r.ckpts) {
		j = len(r.ckpts) - 1
	}
	s := r.ckpts[j].Clone()
	for e := j * CheckpointEvery; e <= i; e++ {
		for _, c := range r.changes[r.chStart[e]:r.chStart[e+1]] {
			s.apply(c)
		}
	}
	return s
}

// StepOf is the index of the script step during which event i was emitted.
func (r *Run) StepOf(i int) int {
	for k, sp := range r.Steps {
		if i < sp.End {
			return k
		}
	}
	return len(r.Steps) - 1
}

// Final is the state after the last event.
func (r *Run) Final() State { return r.final.Clone() }

// NodeNames are the nodes at the end of the run.
func (r *Run) NodeNames() []string { return r.nodesEnd }

func nodeNames(w *sim.World) []string {
	names := make([]string, w.NumNodes())
	for i := range names {
		names[i] = w.Name(sim.NodeID(i))
	}
	return names
}

// recorder samples the cluster's views after every kernel step that emitted trace
// events, and after every script step, and records the differences as changes.
type recorder struct {
	run     *Run
	runner  *runner.Runner
	w       *sim.World
	cur     State
	lastLen int
	tps     []proto.TP
	// netNodes is the number of nodes when the network was last sampled.
	netNodes int
	pending  []pendingChange
	// topo is the queue broker's topology when its exchanges were last sampled.
	topo *queue.Topology
}

// attach adds the recorder to the world's observers once the world exists. Other
// observers (the cluster's invariant checks) run too, so the run is the one `mqsim run`
// makes.
func (rc *recorder) attach() {
	if rc.w == nil && rc.runner.Started() {
		rc.w = rc.runner.World()
	}
	if rc.w != nil {
		rc.w.AddObserver(rc)
	}
}

// AfterStep is the world's observer hook. It only reads the world.
func (rc *recorder) AfterStep(w *sim.World) {
	if w.Trace().Len() > rc.lastLen {
		rc.capture()
	}
}

// capture samples the views and records what changed since the previous sample. The
// events emitted since then form a batch (one kernel step, or a whole command while
// another observer was installed); each change is recorded at the first event of the
// batch that concerns it (see target), and checkpoints are kept every CheckpointEvery
// events.
func (rc *recorder) capture() {
	if rc.w == nil {
		return
	}
	events := rc.w.Trace().Events()
	n := len(events)
	if n == rc.lastLen {
		return
	}
	if n < rc.w.Trace().Len() {
		panic("tui: the world does not keep its trace")
	}
	run := rc.run
	first := rc.lastLen
	batch := events[first:n]
	rc.pending = rc.pending[:0]
	rc.sample(batch)
	for k := range rc.pending {
		pc := &rc.pending[k]
		pc.at = first + target(pc.c, pc.node, pc.tp, batch)
		if pc.c.kind == chQueue {
			rc.splitQueue(k, first, batch) // may grow rc.pending: pc is not used after it
			continue
		}
		if pc.c.kind == chReplica {
			// Within one batch, the trace says when the HW moved: before the broker's hw
			// event its row shows the old HW.
			for h := pc.at - first + 1; h < len(batch); h++ {
				e := batch[h]
				if hw, ok := e.Data.(broker.HWAdvanced); ok && e.Node == pc.node && hw.TP.String() == pc.tp {
					before := pc.c.val.(ReplicaView)
					after := before
					before.HW = hw.From
					pc.c.val = before
					rc.pending = append(rc.pending, pendingChange{c: change{kind: chReplica, idx: pc.c.idx, val: after}, node: pc.node, at: first + h, tp: pc.tp})
					break
				}
			}
		}
	}
	slices.SortStableFunc(rc.pending, func(a, b pendingChange) int { return a.at - b.at })
	run.Events = append(run.Events, batch...)
	k := 0
	for i := first; i < n; i++ {
		if i%CheckpointEvery == 0 {
			run.ckpts = append(run.ckpts, rc.cur.Clone())
		}
		run.chStart = append(run.chStart, int32(len(run.changes)))
		for ; k < len(rc.pending) && rc.pending[k].at == i; k++ {
			run.changes = append(run.changes, rc.pending[k].c)
			rc.cur.apply(rc.pending[k].c)
		}
	}
	rc.lastLen = n
}

// splitQueue places the queue row change pending[k] event by event within its batch
// where the trace allows it (see queueSteps).
func (rc *recorder) splitQueue(k, first int, batch []sim.Event) {
	pc := rc.pending[k]
	idx := int(pc.c.idx)
	if idx >= len(rc.cur.Queues) || pc.node == "" {
		return
	}
	var evs []int
	for i, e := range batch {
		if e.Node == pc.node && queueOf(e) == pc.tp {
			evs = append(evs, i)
		}
	}
	rows := queueSteps(rc.cur.Queues[idx], pc.c.val.(QueueView), batch, evs)
	if len(rows) == 0 {
		return
	}
	for j, row := range rows {
		rc.pending = append(rc.pending, pendingChange{c: change{kind: chQueue, idx: pc.c.idx, val: row}, node: pc.node, tp: pc.tp, at: first + evs[j]})
	}
	rc.pending[k].at = first + evs[len(rows)]
}

// pendingChange is a change of the current batch, before it is placed on an event.
type pendingChange struct {
	c    change
	node string // the node the change is about ("" for the network)
	tp   string // the partition, for replica changes; the queue, for queue changes
	at   int
}

// replicaKinds are the events that change what a broker's replica view says.
var replicaKinds = []string{"leader", "follower", "append", "replicate", "hw", "fsync", "truncate", "recover", "offline", "isr-propose", "ack", "marker"}

// txnCoordKinds are the broker's events that change what its transaction coordinators
// hold (model/txn's kinds).
var txnCoordKinds = []string{"txn-coordinator", "txn-state", "txn-init", "txn-add", "txn-fence", "txn-timeout", "txn-markers",
	"txn-markers-done", "txn-marker-error", "txn-markers-deferred"}

// partKinds are the controller events that change its partition records.
var partKinds = []string{"topic", "election", "isr", "offline", "fence"}

// target is the index in the batch of the event that first shows change c about node:
// for a replica, the broker's first replica event; for the controller's records, its
// first partition event; for a broker's transaction coordinators, its first coordinator
// event; for a node's status, the fault that changed it; for a queue
// (tp names it), its first event; otherwise the node's first event, or the batch's
// first.
func target(c change, node, tp string, batch []sim.Event) int {
	find := func(ok func(e sim.Event) bool) int {
		return slices.IndexFunc(batch, ok)
	}
	var i int
	switch c.kind {
	case chReplica:
		i = find(func(e sim.Event) bool { return e.Node == node && slices.Contains(replicaKinds, e.Kind) })
	case chPart:
		i = find(func(e sim.Event) bool { return e.Node == node && slices.Contains(partKinds, e.Kind) })
	case chTxnCoord:
		i = find(func(e sim.Event) bool { return e.Node == node && slices.Contains(txnCoordKinds, e.Kind) })
	case chNode:
		// A node exists from the start of the batch, unless a fault changed it.
		return max(find(func(e sim.Event) bool { return e.Node == node && isFault(e.Kind) }), 0)
	case chNet:
		i = find(func(e sim.Event) bool { return netChanged([]sim.Event{e}) })
	case chQueue:
		// The queue's first event in the batch: the acting node's, else anyone's (a
		// crash of the node that acted for it is found below, as its first event).
		i = find(func(e sim.Event) bool { return e.Node == node && queueOf(e) == tp })
		if i < 0 {
			i = find(func(e sim.Event) bool { return queueOf(e) == tp })
		}
	default:
		i = -1
	}
	if i < 0 && node != "" {
		i = find(func(e sim.Event) bool { return e.Node == node })
	}
	return max(i, 0)
}

// emit notes a change about node, to be placed by capture.
func (rc *recorder) emit(kind changeKind, idx int, val any, node string) {
	pc := pendingChange{c: change{kind: kind, idx: int32(idx), val: val}, node: node}
	if c := rc.runner.Cluster(); kind == chReplica && c != nil && len(c.Brokers) > 0 {
		pc.tp = rc.tps[idx/len(c.Brokers)].String()
	}
	rc.pending = append(rc.pending, pc)
}

// sample reads every view and records what changed. fresh are the events emitted since
// the previous sample.
func (rc *recorder) sample(fresh []sim.Event) {
	w := rc.w
	c := rc.runner.Cluster()
	q := rc.runner.QueueBroker()
	// Nodes.
	for i := 0; i < w.NumNodes(); i++ {
		nv := NodeView{Name: w.Name(sim.NodeID(i)), Role: rc.runner.Role(sim.NodeID(i)), Status: w.Status(sim.NodeID(i)), Quorum: quorumOf(c, sim.NodeID(i))}
		if nv.Role == RoleQueueNode {
			nv.Quorum = queueLeads(q, nv.Name)
		}
		if i >= len(rc.cur.Nodes) || rc.cur.Nodes[i] != nv {
			rc.emit(chNode, i, nv, nv.Name)
		}
	}
	// Network: only fault events change it, and new nodes.
	if netChanged(fresh) || rc.netNodes != w.NumNodes() {
		rc.netNodes = w.NumNodes()
		var nv NetView
		for a := 0; a < w.NumNodes(); a++ {
			for b := 0; b < w.NumNodes(); b++ {
				if a == b {
					continue
				}
				l := Link{w.Name(sim.NodeID(a)), w.Name(sim.NodeID(b))}
				if w.IsCut(sim.NodeID(a), sim.NodeID(b)) {
					nv.Cuts = append(nv.Cuts, l)
				}
				if w.IsClogged(sim.NodeID(a), sim.NodeID(b)) {
					nv.Clogs = append(nv.Clogs, l)
				}
			}
		}
		if !nv.equal(rc.cur.Net) {
			rc.emit(chNet, 0, nv, "")
		}
	}
	if q != nil {
		rc.sampleQueues(q)
	}
	if c == nil {
		return
	}
	rc.samplePartitions(c, fresh)
	rc.sampleClients(c)
}

// netChanged reports whether any of the events is a fault that changes links.
func netChanged(es []sim.Event) bool {
	for _, e := range es {
		switch e.Kind {
		case "partition", "heal", "cut", "clog", "unclog":
			return true
		}
	}
	return false
}

// quorumOf is a quorum controller's Raft state ("" for any other node, and for the
// single controller): "★t2 @14" for the active controller in term 2 that applied the
// metadata log to offset 14, "t2 @14" for the others.
func quorumOf(c *cluster.Cluster, id sim.NodeID) string {
	if c == nil || len(c.Controllers) < 2 {
		return ""
	}
	ctl := c.ControllerNode(id)
	if ctl == nil {
		return ""
	}
	st := ctl.Status()
	mark := ""
	if st.Active {
		mark = "★"
	}
	return fmt.Sprintf("%st%d @%d", mark, st.Term, st.MetadataOffset)
}

func (rc *recorder) names(ids []sim.NodeID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = rc.w.Name(id)
	}
	return out
}

func (rc *recorder) samplePartitions(c *cluster.Cluster, fresh []sim.Event) {
	ctl := c.ControllerView()
	var states []proto.PartitionState
	if ctl != nil {
		states = ctl.Partitions()
	}
	for _, st := range states {
		if !slices.Contains(rc.tps, st.TP) {
			rc.tps = append(rc.tps, st.TP)
		}
	}
	nb := len(c.Brokers)
	for pi, tp := range rc.tps {
		// The controller's word.
		var pv PartView
		if pi < len(rc.cur.Parts) {
			pv = rc.cur.Parts[pi]
		}
		found := false
		for _, st := range states {
			if st.TP == tp {
				pv = PartView{Topic: tp.Topic, Partition: tp.Partition, Replicas: rc.names(st.Replicas),
					Epoch: st.LeaderEpoch, ISR: rc.names(st.ISR)}
				if st.Leader != proto.NoLeader {
					pv.Leader = rc.w.Name(st.Leader)
				}
				found = true
			}
		}
		if !found {
			pv.Stale = true
		}
		if pi >= len(rc.cur.Parts) || !pv.equal(rc.cur.Parts[pi]) {
			rc.emit(chPart, pi, pv, rc.w.Name(c.Controller))
		}
		// Each broker's replica.
		for bi := range c.Brokers {
			idx := pi*nb + bi
			var prev ReplicaView
			if idx < len(rc.cur.Replicas) {
				prev = rc.cur.Replicas[idx]
			}
			rv := rc.sampleReplica(c, bi, tp, prev, fresh)
			if idx >= len(rc.cur.Replicas) || !rv.equal(prev) {
				rc.emit(chReplica, idx, rv, rc.w.Name(c.Brokers[bi]))
			}
		}
	}
}

func (rc *recorder) sampleReplica(c *cluster.Cluster, bi int, tp proto.TP, prev ReplicaView, fresh []sim.Event) ReplicaView {
	b := c.Broker(bi)
	if b == nil {
		prev.Down = true
		return prev
	}
	rep, ok := b.Replica(tp)
	if !ok {
		return ReplicaView{}
	}
	rv := ReplicaView{Hosted: true, Leader: rep.Leader, Epoch: rep.LeaderEpoch, HW: rep.HighWatermark, LSO: rep.LastStableOffset,
		LEO: rep.LogEndOffset, LogStart: rep.LogStart, Synced: rep.SyncedOffset, ISR: rc.names(rep.ISR)}
	if slices.Equal(rv.ISR, prev.ISR) {
		rv.ISR = prev.ISR // share
	}
	name := rc.w.Name(c.Brokers[bi])
	rewritten := !prev.Hosted || prev.Down || rv.LEO < prev.LEO || rv.LogStart < prev.LogStart
	for _, e := range fresh {
		if e.Node == name && (e.Kind == "truncate" || e.Kind == "recover" || e.Kind == "start") {
			rewritten = true
		}
	}
	switch {
	case rewritten:
		rv.Recs = slices.Clip(readRecs(rep.Log, rv.LogStart, rv.LEO, nil))
	default:
		recs := prev.Recs
		if d := rv.LogStart - prev.LogStart; d > 0 {
			recs = recs[min(int(d), len(recs)):]
		}
		if rv.LEO > prev.LEO {
			recs = readRecs(rep.Log, prev.LEO, rv.LEO, recs)
		}
		rv.Recs = recs
	}
	return rv
}

// readRecs appends the records at offsets [from, to) of the log to dst.
func readRecs(l *wal.Log, from, to int64, dst []Rec) []Rec {
	if from >= to {
		return dst
	}
	batches, err := l.Read(from, 1<<30)
	if err != nil {
		// Unreadable (corrupt) bytes: show the offsets without contents.
		for o := from; o < to; o++ {
			dst = append(dst, Rec{Epoch: -1, Value: "?"})
		}
		return dst
	}
	next := from
	for bi := range batches {
		b := &batches[bi]
		var marker wal.Marker
		control := b.IsControl()
		if control {
			m, err := wal.BatchMarker(b)
			if err != nil {
				control = false // not a readable marker: shown as the record it is
			}
			marker = m
		}
		for k, r := range b.Records {
			off := b.OffsetOf(k)
			if off < next || off >= to {
				continue
			}
			rec := Rec{Epoch: b.LeaderEpoch, Key: string(r.Key), Value: string(r.Value)}
			if control {
				rec = Rec{Epoch: b.LeaderEpoch, Control: true, Marker: marker.Type}
			}
			dst = append(dst, rec)
			next = off + 1
		}
	}
	for ; next < to; next++ {
		dst = append(dst, Rec{Epoch: -1, Value: "?"})
	}
	return dst
}

func (rc *recorder) sampleClients(c *cluster.Cluster) {
	for i, cl := range c.Producers {
		pv := ProducerView{Name: cl.Name, Status: rc.w.Status(cl.ID)}
		if p := c.Producer(cl.Name); p != nil {
			pv.Live, pv.Stats = true, p.Stats()
			pv.Txn, pv.Transactional = p.Transaction()
		} else if i < len(rc.cur.Producers) {
			prev := rc.cur.Producers[i]
			pv.Stats, pv.Transactional, pv.Txn = prev.Stats, prev.Transactional, prev.Txn
		}
		if i >= len(rc.cur.Producers) || !pv.equal(rc.cur.Producers[i]) {
			rc.emit(chProducer, i, pv, cl.Name)
		}
	}
	for i, cl := range c.Pipelines {
		av := PipelineView{Name: cl.Name, Status: rc.w.Status(cl.ID)}
		if a := c.Pipeline(cl.Name); a != nil {
			av.Live, av.Config, av.Stats, av.Positions = true, a.Config(), a.Stats(), a.Consumer().Positions()
			av.Txn, av.Transactional = a.Producer().Transaction()
		} else if i < len(rc.cur.Pipelines) {
			prev := rc.cur.Pipelines[i]
			av.Config, av.Stats, av.Positions, av.Transactional, av.Txn = prev.Config, prev.Stats, prev.Positions, prev.Transactional, prev.Txn
		}
		if i >= len(rc.cur.Pipelines) || !av.equal(rc.cur.Pipelines[i]) {
			rc.emit(chPipeline, i, av, cl.Name)
		}
	}
	rc.sampleTxnCoordinators(c)
	for i, cl := range c.Consumers {
		cv := ConsumerView{Name: cl.Name, Status: rc.w.Status(cl.ID)}
		if cs := c.Consumer(cl.Name); cs != nil {
			cv.Live, cv.Positions, cv.Consumed, cv.Polls, cv.Polling = true, cs.Positions(), cs.Consumed(), cs.Polls(), cs.Polling()
		} else if i < len(rc.cur.Consumers) {
			prev := rc.cur.Consumers[i]
			cv.Positions, cv.Consumed, cv.Polls = prev.Positions, prev.Consumed, prev.Polls
		}
		if i >= len(rc.cur.Consumers) || !cv.equal(rc.cur.Consumers[i]) {
			rc.emit(chConsumer, i, cv, cl.Name)
		}
	}
	for i, name := range c.Groups() {
		gv := groupView(c.Group(name))
		if i >= len(rc.cur.Groups) || !gv.equal(rc.cur.Groups[i]) {
			rc.emit(chGroup, i, gv, name)
		}
	}
}

// sampleTxnCoordinators records what each broker's transaction coordinators hold. A
// broker that coordinates nothing, and never did, gets no row, so runs without
// transactions record nothing here.
func (rc *recorder) sampleTxnCoordinators(c *cluster.Cluster) {
	for bi, id := range c.Brokers {
		tv := TxnCoordView{Broker: rc.w.Name(id)}
		if b := c.Broker(bi); b != nil {
			tv.Txns = b.Transactions()
		}
		if bi >= len(rc.cur.TxnCoords) {
			if len(tv.Txns) == 0 {
				continue
			}
		} else if tv.equal(rc.cur.TxnCoords[bi]) {
			continue
		}
		rc.emit(chTxnCoord, bi, tv, tv.Broker)
	}
}

// groupView renders what the cluster reports of a group.
func groupView(g cluster.GroupInfo) GroupView {
	v := GroupView{Name: g.Name}
	switch {
	case !g.Loaded:
		v.Head = "no coordinator"
	default:
		v.Head = fmt.Sprintf("%s · generation %d · leader %s · coordinator %s · %d rebalances", g.State, g.Generation, orDash(g.Leader), g.Coordinator, g.Rebalances)
	}
	for _, m := range g.Members {
		v.Members = append(v.Members, fmt.Sprintf("%s (%s): %s", m.ID, m.ClientID, proto.TPList(m.Assignment)))
	}
	var lags []string
	for _, o := range g.Offsets {
		committed := "none"
		if o.Committed >= 0 {
			committed = fmt.Sprint(o.Committed)
		}
		lag := "?"
		if o.Lag >= 0 {
			lag = fmt.Sprint(o.Lag)
		}
		lags = append(lags, fmt.Sprintf("%s committed %s lag %s", o.TP, committed, lag))
	}
	lags = append(lags, fmt.Sprintf("total lag %d", g.TotalLag()))
	v.Lag = strings.Join(lags, " · ")
	return v
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return max(lo, min(v, hi))
}

func tpName(topic string, p int32) string { return fmt.Sprintf("%s/%d", topic, p) }

// checkRank orders anomalies for the Checks pane: writes lost or made up first.
func checkRank(a checker.Anomaly) int {
	order := []checker.Anomaly{checker.LostWrite, checker.G1a, checker.Unexpected, checker.Duplicate, checker.InconsistentOffsets, checker.Unseen}
	if i := slices.Index(order, a); i >= 0 {
		return i
	}
	return len(order)
}
