package raft

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"mqsim/internal/machinetest"
	"mqsim/sim"
)

// Raft's interaction tests, after etcd-io/raft's testdata: testdata/machine/*.txt run a
// group of members s1..sN in a world whose network hands every Raft message to the test
// instead of to the member, and whose ticks happen only when the test says. The test
// delivers (or drops) messages one at a time and sees, for each, what it caused: the
// member's trace events (as the trace prints them: node kind: text) and the messages it
// sent. Fsyncs complete on their own: a member answers only what is durable, as always.
// go test ./model/raft -run TestMachine -rewrite rewrites the expected output.
//
//	group n=N [no-pre-vote] [no-check-quorum] [bugs=(commit-on-minority)]
//	tick NODE [n=K]            K ticks of NODE's timer (1)
//	tick-election NODE         ticks until NODE starts a (pre-)election
//	tick-heartbeat NODE        HeartbeatTicks ticks: a leader sends heartbeats
//	deliver [from=NODE] [to=NODE] [drop]   the held messages that match, in order
//	stabilize                  deliver everything until no message is held
//	propose NODE VALUE
//	snapshot NODE              NODE snapshots its applied state and compacts its log
//	crash NODE | restart NODE
//	cut NODE | heal NODE       NODE's messages, both ways, are lost from now on / no longer
//	status                     every member's role, term, leader, commit, applied, log
//	log NODE                   NODE's log entries

func TestMachine(t *testing.T) {
	machinetest.Run(t, "testdata/machine", func() machinetest.Runner { return newRaftMachine().run })
}

// A file must catch a leader that commits what only it has (the commit-on-minority bug):
// in replication.txt the leader's own fsync already commits its first entry and the
// proposal (line 65), before any follower has them.
func TestMachineCatchesCommitOnMinority(t *testing.T) {
	m := newRaftMachine()
	m.bugs.CommitOnMinority = true
	const file = "testdata/machine/replication.txt"
	at := machinetest.Diverging(t, file, m.run)
	if !slices.Contains(at, file+":65") {
		t.Fatalf("a leader committing on its own diverged at %v, want at the proposal (line 65)", at)
	}
}

// heldMsg is a Raft message the network brought to a member, waiting for the test.
type heldMsg struct {
	from, to sim.NodeID
	msg      Message
}

// member is a node of the test world: a Raft whose messages from others wait in the
// machine's hold and whose tick timer is ignored (the test ticks it).
type member struct {
	m       *raftMachine
	r       *Raft
	applied []string
}

func (n *member) Start(env *sim.Env) { n.r.Start(env) }

func (n *member) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if rm, ok := msg.(Message); ok && from != env.Self() {
		n.m.held = append(n.m.held, heldMsg{from, env.Self(), rm})
		n.m.sent = append(n.m.sent, fmt.Sprintf("%s->%s %v", env.NameOf(from), env.Name(), rm))
		return
	}
	n.r.Step(env, from, msg) // fsync completions and a candidate's vote for itself
}

func (n *member) Timer(*sim.Env, sim.TimerTag) {}

func (n *member) Apply(env *sim.Env, e Entry) {
	if e.Type == EntryNormal {
		n.applied = append(n.applied, string(e.Data))
	}
}

func (n *member) Restore(env *sim.Env, s Snapshot) {
	n.applied = nil
	if len(s.Data) > 0 {
		n.applied = strings.Split(string(s.Data), ",")
	}
}

type raftMachine struct {
	bugs  Bugs // planted in every group the file makes
	w     *sim.World
	cfg   Config
	ids   []sim.NodeID
	held  []heldMsg
	cut   map[sim.NodeID]bool // members whose messages are lost (cut off the network)
	sent  []string            // messages that reached the hold since the last report
	trace int                 // trace events reported so far
}

func newRaftMachine() *raftMachine { return &raftMachine{} }

func (m *raftMachine) run(t testing.TB, d *datadriven.TestData) string {
	if d.Cmd == "group" {
		m.newGroup(t, d)
		return m.report()
	}
	if m.w == nil {
		d.Fatalf(t, "%s before any group command", d.Cmd)
	}
	var b strings.Builder
	switch d.Cmd {
	case "tick", "tick-election", "tick-heartbeat":
		id, n := m.node(t, d)
		switch d.Cmd {
		case "tick":
			for range machinetest.Int(t, d, "n", 1) {
				m.tick(id, n)
			}
		case "tick-heartbeat":
			for range m.cfg.HeartbeatTicks {
				m.tick(id, n)
			}
		default:
			term, role := n.r.Term(), n.r.Role()
			for i := 0; i < 2*m.cfg.ElectionTicks && n.r.Role() == role && n.r.Term() == term; i++ {
				m.tick(id, n)
			}
		}
		b.WriteString(m.report())
	case "deliver":
		m.deliver(t, d, &b)
	case "stabilize":
		for i := 0; len(m.held) > 0; i++ {
			if i == 100 {
				d.Fatalf(t, "stabilize: messages still flowing after 100 rounds")
			}
			m.deliver(t, d, &b)
		}
	case "propose":
		id, n := m.node(t, d)
		if len(d.CmdArgs) < 2 {
			d.Fatalf(t, "propose NODE VALUE")
		}
		if _, _, ok := n.r.Propose(m.w.Env(id), []byte(d.CmdArgs[1].Key)); !ok {
			b.WriteString("refused: not the leader\n")
		}
		m.settle()
		b.WriteString(m.report())
	case "snapshot":
		id, n := m.node(t, d)
		if err := n.r.Snapshot(m.w.Env(id), n.r.Applied(), []byte(strings.Join(n.applied, ","))); err != nil {
			fmt.Fprintf(&b, "refused: %v\n", err)
		}
		m.settle()
		b.WriteString(m.report())
	case "crash", "restart":
		id := m.lookup(t, d)
		if d.Cmd == "crash" {
			m.w.Crash(id)
			m.held = slices.DeleteFunc(m.held, func(h heldMsg) bool { return h.to == id })
		} else {
			m.w.Restart(id)
		}
		m.settle()
		b.WriteString(m.report())
	case "cut", "heal":
		m.cut[m.lookup(t, d)] = d.Cmd == "cut"
		b.WriteString("ok\n")
	case "status":
		for i, id := range m.ids {
			n, ok := m.w.Node(id).(*member)
			if !ok {
				fmt.Fprintf(&b, "%s down\n", m.cfg.Peers[i])
				continue
			}
			s := n.r.Status()
			lead := "none"
			if s.Leader != None {
				lead = m.w.Name(s.Leader)
			}
			fmt.Fprintf(&b, "%s %s term %d leader %s commit %d applied %d log %d..%d/t%d applied-values [%s]\n",
				m.cfg.Peers[i], s.Role, s.Term, lead, s.Commit, s.Applied, s.Snapshot.Index+1, s.Last, s.LastTerm, strings.Join(n.applied, " "))
		}
	case "log":
		_, n := m.node(t, d)
		for i := n.r.SnapshotIndex() + 1; i <= n.r.LastIndex(); i++ {
			e, _ := n.r.Entry(i)
			what := "noop"
			if e.Type == EntryNormal {
				what = string(e.Data)
			}
			fmt.Fprintf(&b, "%d/t%d %s\n", e.Index, e.Term, what)
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "(empty; snapshot at %d)\n", n.r.SnapshotIndex())
		}
	default:
		d.Fatalf(t, "unknown command %q: want group, tick, tick-election, tick-heartbeat, deliver, stabilize, propose, snapshot, crash, restart, status or log", d.Cmd)
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return b.String()
}

func (m *raftMachine) newGroup(t testing.TB, d *datadriven.TestData) {
	w := sim.NewWorld(sim.DefaultConfig(1))
	n := machinetest.Int(t, d, "n", 3)
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("s%d", i))
	}
	cfg := DefaultConfig(names...)
	cfg.PreVote, cfg.CheckQuorum, cfg.Bugs = !d.HasArg("no-pre-vote"), !d.HasArg("no-check-quorum"), m.bugs
	if arg, ok := d.Arg("bugs"); ok {
		for _, b := range arg.Vals {
			switch b {
			case "commit-on-minority":
				cfg.Bugs.CommitOnMinority = true
			case "unconfirmed-reads":
				cfg.Bugs.UnconfirmedReads = true
			default:
				d.Fatalf(t, "unknown raft bug %q: want commit-on-minority or unconfirmed-reads", b)
			}
		}
	}
	*m = raftMachine{bugs: m.bugs, w: w, cfg: cfg, cut: map[sim.NodeID]bool{}}
	for _, name := range names {
		m.ids = append(m.ids, w.MustAddNode(name, func() sim.Node {
			n := &member{m: m}
			r, err := New(cfg, n)
			if err != nil {
				panic(err) // cfg is DefaultConfig's, which is valid
			}
			n.r = r
			return n
		}))
	}
	m.settle()
}

// node is the running member named by the command's first argument.
func (m *raftMachine) node(t testing.TB, d *datadriven.TestData) (sim.NodeID, *member) {
	id := m.lookup(t, d)
	n, ok := m.w.Node(id).(*member)
	if !ok {
		d.Fatalf(t, "%s: %s is down", d.Cmd, m.w.Name(id))
	}
	return id, n
}

// lookup is the member named by the command's first argument, up or down.
func (m *raftMachine) lookup(t testing.TB, d *datadriven.TestData) sim.NodeID {
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "%s: want a member name (s1..s%d)", d.Cmd, len(m.ids))
	}
	id, ok := m.w.Lookup(d.CmdArgs[0].Key)
	if !ok {
		d.Fatalf(t, "%s: no member %q (want s1..s%d)", d.Cmd, d.CmdArgs[0].Key, len(m.ids))
	}
	return id
}

func (m *raftMachine) tick(id sim.NodeID, n *member) {
	n.r.HandleTimer(m.w.Env(id), sim.TimerTag{Kind: m.cfg.TimerKind, Arg: m.cfg.Group})
	m.settle()
}

// settle lets the world run until nothing is in flight: fsyncs complete, messages reach
// the hold. Member timers are ignored, so the world goes quiet.
func (m *raftMachine) settle() { m.w.Stabilize(time.Minute) }

// deliver steps the held messages that match the command (those held when it began),
// each followed by what it caused.
func (m *raftMachine) deliver(t testing.TB, d *datadriven.TestData, b *strings.Builder) {
	match := func(key string, id sim.NodeID) bool {
		arg, ok := d.Arg(key)
		return !ok || arg.SingleVal(t) == m.w.Name(id)
	}
	// Messages not delivered now keep their place ahead of those the delivered ones cause:
	// each link stays in order.
	var batch []heldMsg
	m.held = slices.DeleteFunc(m.held, func(h heldMsg) bool {
		if match("from", h.from) && match("to", h.to) {
			batch = append(batch, h)
			return true
		}
		return false
	})
	for _, h := range batch {
		n, up := m.w.Node(h.to).(*member)
		if d.HasArg("drop") || !up || m.cut[h.from] || m.cut[h.to] {
			fmt.Fprintf(b, "%s->%s %v dropped\n", m.w.Name(h.from), m.w.Name(h.to), h.msg)
			continue
		}
		fmt.Fprintf(b, "%s->%s %v\n", m.w.Name(h.from), m.w.Name(h.to), h.msg)
		n.r.Step(m.w.Env(h.to), h.from, h.msg)
		m.settle()
		for _, line := range strings.Split(strings.TrimSuffix(m.report(), "\n"), "\n") {
			if line != "" {
				b.WriteString("  " + line + "\n")
			}
		}
	}
}

// report renders what happened since the last report: trace events (node kind: text),
// then the messages that reached the hold.
func (m *raftMachine) report() string {
	var b strings.Builder
	for _, e := range m.w.Trace().Since(m.trace) {
		fmt.Fprintf(&b, "%s %s", e.Node, e.Kind)
		if e.Detail != "" {
			fmt.Fprintf(&b, ": %s", e.Detail)
		}
		b.WriteString("\n")
	}
	m.trace = m.w.Trace().Len()
	for _, s := range m.sent {
		fmt.Fprintf(&b, "sent %s\n", s)
	}
	m.sent = nil
	return b.String()
}
