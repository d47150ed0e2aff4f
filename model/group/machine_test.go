package group

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"mqsim/internal/machinetest"
	"mqsim/model/proto"
	"mqsim/sim"
)

// The coordinator's interaction tests: testdata/machine/*.txt drive one Coordinator
// through a fake broker (machineHost) and print, in order, the trace events it emits (as
// the trace prints them: kind: text) and the responses it sends ("-> client: ...").
// go test ./model/group -run TestMachine -rewrite rewrites the expected output.
//
// Clients are named (a, b, ...); each remembers the member id and generation it was last
// told, which join, sync, heartbeat, leave and commit send unless member= or gen= say
// otherwise (member=none sends the empty id of a first join).
//
//	coordinator [bugs=(NAME,...)] [partitions=N]   a fresh coordinator; topic t has N partitions (3), u one
//	join client=C [instance=I] [assignor=range] [owned=(t/0,...)] [session=D] [rebalance=D]
//	sync client=C [assign]                         the leader with assign runs the group's assignor
//	                                               (and, when cooperative, the revoke-first rule)
//	heartbeat client=C | leave client=C
//	commit client=C offsets=(t/0@5,...) | fetch client=C partitions=(t/0,...)
//	txncommit client=C pid=N epoch=N offsets=(t/0@5,...)   TxnOffsetCommit (member, gen, instance as for commit)
//	marker pid=N commit|abort                      the transaction's marker reached the partition
//	replicate                                      the high watermark reaches the log's end
//	advance by=D                                   time passes; due timers fire in order
//	group                                          the group's state, members and offsets
//	share client=C [epoch=N] [topics=(t,...)]      ShareGroupHeartbeat (epoch: the last one the client
//	                                               was told; -1 leaves; topics default to (t))
//	sharegroup                                     the share group's epochs, members and assignments

func TestMachine(t *testing.T) {
	machinetest.Run(t, "testdata/machine", func() machinetest.Runner { return newMachine().run })
}

// A file must catch a coordinator without generation fencing (the no-generation-fencing
// bug): the zombie's commit in fencing.txt (line 67) is accepted instead of refused.
func TestMachineCatchesMissingGenerationFencing(t *testing.T) {
	m := newMachine()
	m.bugs.NoGenerationFencing = true
	const file = "testdata/machine/fencing.txt"
	at := machinetest.Diverging(t, file, m.run)
	if !slices.Contains(at, file+":67") {
		t.Fatalf("a coordinator without generation fencing diverged at %v, want at the zombie's commit (line 67)", at)
	}
}

// A file must catch a coordinator that takes transactional commits from stale members
// (the no-txn-offset-fencing bug): the zombie's TxnOffsetCommit in txn_offsets.txt
// (line 72) is taken instead of refused.
func TestMachineCatchesMissingTxnOffsetFencing(t *testing.T) {
	m := newMachine()
	m.bugs.NoTxnOffsetFencing = true
	const file = "testdata/machine/txn_offsets.txt"
	at := machinetest.Diverging(t, file, m.run)
	if !slices.Contains(at, file+":72") {
		t.Fatalf("a coordinator without transactional offset fencing diverged at %v, want at the zombie's commit (line 72)", at)
	}
}

// machineHost is the broker a coordinator runs on, for the interaction tests: fakeHost's
// clock, timers and log, with what the coordinator says (sent messages and trace events)
// kept in order as printed lines. Only Send, NameOf and Record differ from fakeHost.
type machineHost struct {
	*fakeHost
	names []string // client node id - 1 -> name
	out   []string
	// answers are the messages sent, for the clients to learn from.
	answers []answer
}

type answer struct {
	to  sim.NodeID
	msg sim.Message
}

func (h *machineHost) Send(to sim.NodeID, msg sim.Message) {
	h.out = append(h.out, fmt.Sprintf("-> %s: %v", h.NameOf(to), msg))
	h.answers = append(h.answers, answer{to, msg})
}

func (h *machineHost) Record(p sim.Payload) {
	h.out = append(h.out, p.Kind()+": "+p.Detail())
}

func (h *machineHost) NameOf(id sim.NodeID) string {
	if id >= 1 && int(id) <= len(h.names) {
		return h.names[id-1]
	}
	return fmt.Sprint(id)
}

// advance moves the clock by d, firing every timer due on the way in deadline order.
func (h *machineHost) advance(c *Coordinator, d time.Duration) {
	end := h.now.Add(d)
	for {
		var key int64 = -1
		var at sim.Time
		for k, t := range h.timers {
			if t <= end && (key < 0 || t < at || t == at && k < key) {
				key, at = k, t
			}
		}
		if key < 0 {
			break
		}
		delete(h.timers, key)
		h.now = at
		c.Timer(h, key)
	}
	h.now = end
}

// client is what one client knows: its member id, generation, and (as leader) the members.
type client struct {
	id         sim.NodeID
	member     string
	instance   string
	generation int32
	members    []proto.GroupMember
	corr       int64
}

type machine struct {
	h          *machineHost
	c          *Coordinator
	bugs       proto.Bugs // planted on every coordinator the file makes
	partitions int
	clients    map[string]*client
}

func newMachine() *machine { return &machine{} }

func (m *machine) run(t testing.TB, d *datadriven.TestData) string {
	if d.Cmd == "coordinator" {
		m.h = &machineHost{fakeHost: newFakeHost()}
		m.clients = map[string]*client{}
		bugs := m.bugs
		if arg, ok := d.Arg("bugs"); ok {
			for _, name := range arg.Vals {
				if err := bugs.Set(name); err != nil {
					d.Fatalf(t, "%v", err)
				}
			}
		}
		m.partitions = machinetest.Int(t, d, "partitions", 3)
		m.h.topics = map[string]int{"t": m.partitions, "u": 1}
		m.c = &Coordinator{cfg: testConfig(), bugs: bugs}
		if names := bugs.Names(); len(names) > 0 {
			return "bugs: " + strings.Join(names, ", ")
		}
		return "ok"
	}
	if m.c == nil {
		d.Fatalf(t, "%s before any coordinator command", d.Cmd)
	}
	m.h.out = nil
	switch d.Cmd {
	case "join", "sync", "heartbeat", "leave", "commit", "fetch", "txncommit", "share":
		cl := m.client(t, d)
		msg := m.request(t, d, cl)
		m.c.Handle(m.h, cl.id, msg)
	case "replicate":
		m.c.Committed(m.h, int64(len(m.h.log)))
	case "marker":
		m.c.CompleteTxn(m.h, int64(machinetest.Int(t, d, "pid", 0)), d.HasArg("commit"))
	case "advance":
		m.h.advance(m.c, machinetest.Duration(t, d, "by", 0))
	case "group":
		return m.describe()
	case "sharegroup":
		return m.describeShare()
	default:
		d.Fatalf(t, "unknown command %q: want coordinator, join, sync, heartbeat, leave, commit, txncommit, fetch, marker, replicate, advance or group", d.Cmd)
	}
	m.learn()
	if len(m.h.out) == 0 {
		return "(nothing)"
	}
	return strings.Join(m.h.out, "\n")
}

// learn updates what each client knows from the responses it was sent.
func (m *machine) learn() {
	for _, a := range m.h.answers {
		cl := m.clients[m.h.NameOf(a.to)]
		switch r := a.msg.(type) {
		case proto.JoinGroupResponse:
			if r.MemberID != "" {
				cl.member = r.MemberID
			}
			if r.Error == proto.None {
				cl.generation, cl.members = r.Generation, r.Members
			}
		case proto.SyncGroupResponse:
			if r.Error == proto.None {
				cl.generation = r.Generation
			}
		case proto.ShareGroupHeartbeatResponse:
			if r.Error == proto.None {
				cl.member, cl.generation = r.MemberID, r.MemberEpoch
			}
		}
	}
	m.h.answers = nil
}

func (m *machine) client(t testing.TB, d *datadriven.TestData) *client {
	name := machinetest.String(t, d, "client", "")
	if name == "" {
		d.Fatalf(t, "%s: client=NAME is required", d.Cmd)
	}
	cl, ok := m.clients[name]
	if !ok {
		m.h.names = append(m.h.names, name)
		cl = &client{id: sim.NodeID(len(m.h.names))}
		m.clients[name] = cl
	}
	return cl
}

// request builds the message a client sends, from what it knows and the arguments.
func (m *machine) request(t testing.TB, d *datadriven.TestData, cl *client) sim.Message {
	cl.corr++
	member := machinetest.String(t, d, "member", cl.member)
	if member == "none" {
		member = ""
	}
	gen := int32(machinetest.Int(t, d, "gen", int(cl.generation)))
	name := machinetest.String(t, d, "client", "")
	switch d.Cmd {
	case "join":
		cl.instance = machinetest.String(t, d, "instance", cl.instance)
		return proto.JoinGroup{CorrelationID: cl.corr, Group: "g", MemberID: member, InstanceID: cl.instance, ClientID: name,
			SessionTimeout:   machinetest.Duration(t, d, "session", 10*time.Second),
			RebalanceTimeout: machinetest.Duration(t, d, "rebalance", time.Minute),
			Assignor:         machinetest.String(t, d, "assignor", "range"),
			Subscription:     proto.Subscription{Topics: []string{"t"}, Owned: tps(t, d, "owned")}}
	case "sync":
		msg := proto.SyncGroup{CorrelationID: cl.corr, Group: "g", MemberID: member, InstanceID: cl.instance, Generation: gen}
		if d.HasArg("assign") {
			msg.Assignments = m.assign(t, d, cl)
		}
		return msg
	case "heartbeat":
		return proto.Heartbeat{CorrelationID: cl.corr, Group: "g", MemberID: member, InstanceID: cl.instance, Generation: gen}
	case "leave":
		return proto.LeaveGroup{CorrelationID: cl.corr, Group: "g", MemberID: member, InstanceID: cl.instance, Reason: "the consumer is closing"}
	case "commit":
		return proto.OffsetCommit{CorrelationID: cl.corr, Group: "g", MemberID: member, InstanceID: cl.instance, Generation: gen,
			Offsets: offsetArgs(t, d)}
	case "txncommit":
		return proto.TxnOffsetCommit{CorrelationID: cl.corr, TransactionalID: name + "-txn", Group: "g",
			ProducerID: int64(machinetest.Int(t, d, "pid", 0)), ProducerEpoch: int16(machinetest.Int(t, d, "epoch", 0)),
			MemberID: member, InstanceID: cl.instance, Generation: gen, Offsets: offsetArgs(t, d)}
	case "share":
		topics := []string{"t"}
		if arg, ok := d.Arg("topics"); ok {
			topics = arg.Vals
		}
		return proto.ShareGroupHeartbeat{CorrelationID: cl.corr, Group: "g", MemberID: member,
			MemberEpoch: int32(machinetest.Int(t, d, "epoch", int(cl.generation))), Subscribed: topics}
	default: // fetch
		return proto.OffsetFetch{CorrelationID: cl.corr, Group: "g", Partitions: tps(t, d, "partitions")}
	}
}

// assign is what a group leader computes for its SyncGroup: the group's assignor over the
// members of its join response, and for a cooperative assignor the revoke-first rule
// (unless the no-revoke-first bug is planted).
func (m *machine) assign(t testing.TB, d *datadriven.TestData, cl *client) []proto.MemberAssignment {
	g := m.c.Group("g")
	if g == nil || len(cl.members) == 0 {
		d.Fatalf(t, "sync assign: this client is not the leader of a generation")
	}
	a, err := AssignorByName(g.Assignor)
	if err != nil {
		d.Fatalf(t, "%v", err)
	}
	var members []Member
	for _, gm := range cl.members {
		members = append(members, Member{ID: gm.MemberID, InstanceID: gm.InstanceID, Topics: gm.Subscription.Topics, Owned: gm.Subscription.Owned})
	}
	var parts []proto.TP
	for p := 0; p < m.partitions; p++ {
		parts = append(parts, proto.TP{Topic: "t", Partition: int32(p)})
	}
	result := a.Assign(members, parts)
	var held []proto.TP
	if a.Cooperative() && !m.c.bugs.NoRevokeFirst {
		result, held = RevokeFirst(result, members)
	}
	var out []proto.MemberAssignment
	var said []string
	for _, mem := range members {
		out = append(out, proto.MemberAssignment{MemberID: mem.ID, Partitions: result[mem.ID]})
		said = append(said, mem.ID+" "+proto.TPList(result[mem.ID]))
	}
	line := fmt.Sprintf("leader %s assigns (%s): %s", cl.member, a.Name(), strings.Join(said, ", "))
	if len(held) > 0 {
		line += ", held back " + proto.TPList(held)
	}
	m.h.out = append(m.h.out, line)
	return out
}

// offsetArgs reads offsets=(t/0@5,...).
func offsetArgs(t testing.TB, d *datadriven.TestData) []proto.PartitionOffset {
	var out []proto.PartitionOffset
	arg, _ := d.Arg("offsets")
	for _, v := range arg.Vals {
		tpText, offText, ok := strings.Cut(v, "@")
		var off int64
		tp, err := proto.ParseTP(tpText)
		if _, serr := fmt.Sscan(offText, &off); !ok || err != nil || serr != nil {
			d.Fatalf(t, "offsets: %q: want TOPIC/N@OFFSET, e.g. t/0@5", v)
		}
		out = append(out, proto.PartitionOffset{TP: tp, Offset: off})
	}
	return out
}

func tps(t testing.TB, d *datadriven.TestData, key string) []proto.TP {
	arg, _ := d.Arg(key)
	var out []proto.TP
	for _, v := range arg.Vals {
		tp, err := proto.ParseTP(v)
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		out = append(out, tp)
	}
	return out
}

func (m *machine) describe() string {
	g := m.c.Group("g")
	if g == nil {
		return "no group g"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "group g %s generation %d leader %q assignor %q, %d rebalances\n", g.State, g.Generation, g.Leader, g.Assignor, g.Rebalances)
	for _, mem := range g.Members() {
		inst := ""
		if mem.InstanceID != "" {
			inst = " instance " + mem.InstanceID
		}
		fmt.Fprintf(&b, "  member %s%s: %s\n", mem.ID, inst, proto.TPList(mem.Assignment))
	}
	for _, o := range g.Offsets() {
		fmt.Fprintf(&b, "  offset %s@%d (generation %d)\n", o.TP, o.Offset, o.Generation)
	}
	for _, p := range m.c.PendingTxnOffsets() {
		fmt.Fprintf(&b, "  pending (pid %d) %s@%d (generation %d)\n", p.ProducerID, p.Offset.TP, p.Offset.Offset, p.Offset.Generation)
	}
	for _, s := range m.c.Stale {
		fmt.Fprintf(&b, "  stale commit accepted: %+v\n", s)
	}
	return b.String()
}

func (m *machine) describeShare() string {
	g := m.c.Group("g")
	if g == nil || g.Share == nil {
		return "no share group g"
	}
	sg := g.Share
	var b strings.Builder
	fmt.Fprintf(&b, "share group g %s epoch %d assignment epoch %d, %d assignments\n", sg.StateName(), sg.Epoch, sg.AssignmentEpoch, sg.Rebalances)
	for _, mem := range sg.Members() {
		fmt.Fprintf(&b, "  member %s epoch %d (previous %d) %v: %s\n", mem.ID, mem.Epoch, mem.PreviousEpoch, mem.Subscribed, proto.TPList(mem.Assigned))
	}
	return b.String()
}
