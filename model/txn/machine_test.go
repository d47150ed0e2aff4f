package txn

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"mqsim/internal/machinetest"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The coordinator's interaction tests: testdata/machine/*.txt drive one Coordinator
// through a fake broker (machineHost) and print, in order, the trace events it emits (as
// the trace prints them: kind: text) and the messages it sends ("-> node: ...").
// go test ./model/txn -run TestMachine -rewrite rewrites the expected output.
//
// Producers are named (p, q, ...) and all use transactional id "tx" unless id= says
// otherwise; each remembers the producer id and epoch it was last given, which add,
// offsets and end send unless pid= or epoch= say otherwise. Partition t/N is led by
// broker bN+1 (b1, b2, b3, b1, ...), the offsets topic's partitions by b1.
//
//	coordinator [bugs=(NAME,...)] [producer-fencing=off] [txn-verification=off]
//	init client=C [id=X] [timeout=D] [pid=N epoch=N]   InitProducerId (pid/epoch: KIP-360's)
//	add client=C partitions=(t/0,...) [broker]          AddPartitionsToTxn (broker: the leader's, KIP-890)
//	offsets client=C group=G                            AddOffsetsToTxn
//	end client=C commit|abort                           EndTxn
//	replicate                                           the high watermark reaches the log's end
//	markers [to=bN] [errors=(t/0=ERROR,...)]            leaders answer the WriteTxnMarkers outstanding
//	                                                    (to one broker only with to=), with NONE
//	                                                    except the errors listed
//	lose-markers                                        every outstanding WriteTxnMarkers is lost
//	leader tp=t/0 node=bN|none                          the broker's metadata changes
//	advance by=D                                        time passes; due timers fire in order
//	failover [lose]                                     the coordinator is unloaded and a new one
//	                                                    loads the log (lose: only up to the HW)
//	append-error err=ERROR|none                         the next appends fail so
//	txns                                                the coordinator's transactional ids

func TestMachine(t *testing.T) {
	machinetest.Run(t, "testdata/machine", func() machinetest.Runner { return newMachine().run })
}

// The failover file must catch markers sent before the prepare record is replicated: with
// the bug planted, the COMMIT markers go out at EndTxn (line 32 of failover.txt), before
// the replicate that should release them.
func TestMachineCatchesMarkersBeforePrepare(t *testing.T) {
	m := newMachine()
	m.bugs.MarkersBeforePrepare = true
	const file = "testdata/machine/failover.txt"
	at := machinetest.Diverging(t, file, m.run)
	if len(at) == 0 || at[0] != file+":32" {
		t.Fatalf("a coordinator that sends markers before the prepare record is replicated diverged at %v, want first at the EndTxn (line 32)", at)
	}
}

// The fencing file must catch a coordinator without epoch checks: the zombie's
// AddPartitionsToTxn (line 62 of fencing.txt) is accepted instead of PRODUCER_FENCED.
func TestMachineCatchesMissingFencing(t *testing.T) {
	m := newMachine()
	m.legacy.NoProducerFencing = true
	const file = "testdata/machine/fencing.txt"
	at := machinetest.Diverging(t, file, m.run)
	if len(at) == 0 || at[0] != file+":62" {
		t.Fatalf("a coordinator without producer fencing diverged at %v, want first at the zombie's add (line 62)", at)
	}
}

// machineHost is the broker a coordinator runs on: a clock, timers, a log of records and
// its high watermark, leaders of the partitions; what the coordinator says (sent messages
// and trace events) is kept in order as printed lines.
type machineHost struct {
	now     sim.Time
	log     []wal.Record
	hw      int
	timers  map[int64]sim.Time
	keys    int64
	appendE proto.Error
	leaders map[proto.TP]sim.NodeID // overrides of the default layout; -1 is no leader
	names   []string                // node id - 1 -> name; brokers are b1..b3 (ids 1-3)
	out     []string
	sent    []sentMsg
}

type sentMsg struct {
	to  sim.NodeID
	msg sim.Message
}

func newMachineHost() *machineHost {
	return &machineHost{timers: map[int64]sim.Time{}, leaders: map[proto.TP]sim.NodeID{}, names: []string{"b1", "b2", "b3"}}
}

func (h *machineHost) Now() sim.Time { return h.now }
func (h *machineHost) Send(to sim.NodeID, msg sim.Message) {
	h.out = append(h.out, fmt.Sprintf("-> %s: %v", h.NameOf(to), msg))
	h.sent = append(h.sent, sentMsg{to, msg})
}
func (h *machineHost) Tracing() bool              { return true }
func (h *machineHost) Record(p sim.Payload)       { h.out = append(h.out, p.Kind()+": "+p.Detail()) }
func (h *machineHost) CancelTimer(id sim.TimerID) { delete(h.timers, int64(id)) }
func (h *machineHost) NewKey() int64              { h.keys++; return h.keys }
func (h *machineHost) SetTimer(d time.Duration, key int64) sim.TimerID {
	h.timers[key] = h.now.Add(d)
	return sim.TimerID(key)
}
func (h *machineHost) Append(records []wal.Record) (int64, proto.Error) {
	if h.appendE != proto.None {
		return -1, h.appendE
	}
	h.log = append(h.log, records...)
	return int64(len(h.log)), proto.None
}
func (h *machineHost) NameOf(id sim.NodeID) string {
	if id >= 1 && int(id) <= len(h.names) {
		return h.names[id-1]
	}
	return fmt.Sprint(id)
}
func (h *machineHost) Leader(tp proto.TP) (sim.NodeID, bool) {
	if l, ok := h.leaders[tp]; ok {
		return l, l >= 0
	}
	if tp.Topic == proto.OffsetsTopic {
		return 1, true
	}
	return sim.NodeID(tp.Partition%3 + 1), true
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

// producer is what one producer instance knows.
type producer struct {
	node  sim.NodeID
	id    string
	pid   int64
	epoch int16
	corr  int64
}

type machine struct {
	h         *machineHost
	c         *Coordinator
	cfg       proto.Config
	bugs      proto.Bugs   // planted on every coordinator the file makes
	legacy    proto.Legacy // switched on every coordinator the file makes
	producers map[string]*producer
	// outstanding are the WriteTxnMarkers sent and not answered yet, in order.
	outstanding []sentMsg
}

func newMachine() *machine { return &machine{} }

func (m *machine) run(t testing.TB, d *datadriven.TestData) string {
	if d.Cmd == "coordinator" {
		m.h = newMachineHost()
		m.producers = map[string]*producer{}
		m.outstanding = nil
		m.cfg = proto.DefaultConfig()
		m.cfg.Bugs, m.cfg.Legacy = m.bugs, m.legacy
		if arg, ok := d.Arg("bugs"); ok {
			for _, name := range arg.Vals {
				if err := m.cfg.Bugs.Set(name); err != nil {
					d.Fatalf(t, "%v", err)
				}
			}
		}
		for _, f := range proto.LegacyFixes {
			if d.HasArg(f.Key) {
				if err := f.Set(&m.cfg, machinetest.String(t, d, f.Key, "")); err != nil {
					d.Fatalf(t, "%v", err)
				}
			}
		}
		m.c = newCoordinator(m.cfg, 0, 1)
		// Only what the file asks for is printed: a test that plants a switch on every
		// coordinator must see the file diverge where the switch acts, not here.
		var said []string
		if arg, ok := d.Arg("bugs"); ok {
			said = append(said, arg.Vals...)
		}
		for _, f := range proto.LegacyFixes {
			if d.HasArg(f.Key) {
				said = append(said, f.Key+"="+machinetest.String(t, d, f.Key, ""))
			}
		}
		if len(said) > 0 {
			return "switched: " + strings.Join(said, ", ")
		}
		return "ok"
	}
	if m.c == nil {
		d.Fatalf(t, "%s before any coordinator command", d.Cmd)
	}
	m.h.out = nil
	switch d.Cmd {
	case "init", "add", "offsets", "end":
		p := m.producer(t, d)
		m.c.Handle(m.h, p.node, m.request(t, d, p))
	case "replicate":
		m.h.hw = len(m.h.log)
		m.c.Committed(m.h, int64(m.h.hw))
	case "markers":
		m.answerMarkers(t, d)
	case "lose-markers":
		m.outstanding = nil
		return "lost"
	case "leader":
		tp, err := proto.ParseTP(machinetest.String(t, d, "tp", ""))
		if err != nil {
			d.Fatalf(t, "leader: tp=%v", err)
		}
		node := machinetest.String(t, d, "node", "")
		if node == "none" {
			m.h.leaders[tp] = -1
		} else if i := slices.Index(m.h.names[:3], node); i >= 0 {
			m.h.leaders[tp] = sim.NodeID(i + 1)
		} else {
			d.Fatalf(t, "leader: node=%q: want b1, b2, b3 or none", node)
		}
		return "ok"
	case "advance":
		m.h.advance(m.c, machinetest.Duration(t, d, "by", 0))
	case "failover":
		m.c.Unload(m.h, "failover")
		if d.HasArg("lose") {
			m.h.log = m.h.log[:m.h.hw]
		}
		// behind=N: the new leader's last N records are not replicated yet.
		m.h.hw = len(m.h.log) - machinetest.Int(t, d, "behind", 0)
		m.h.timers = map[int64]sim.Time{}
		m.outstanding = nil
		m.c = load(m.h, m.cfg, 0, m.c.Epoch+1, slices.Clone(m.h.log), int64(len(m.h.log)))
		m.c.Committed(m.h, int64(m.h.hw))
	case "append-error":
		e := machinetest.String(t, d, "err", "none")
		m.h.appendE = proto.Error(e)
		if e == "none" {
			m.h.appendE = proto.None
		}
		return "ok"
	case "txns":
		return m.describe()
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	m.learn()
	if len(m.h.out) == 0 {
		return "(nothing)"
	}
	return strings.Join(m.h.out, "\n")
}

// learn updates what each producer knows from the responses it was sent, and keeps the
// markers sent for the leaders to answer.
func (m *machine) learn() {
	for _, s := range m.h.sent {
		switch r := s.msg.(type) {
		case proto.InitProducerIDResponse:
			if r.Error == proto.None {
				p := m.byNode(s.to)
				p.pid, p.epoch = r.ProducerID, r.ProducerEpoch
			}
		case proto.EndTxnResponse:
			if r.Error == proto.None {
				m.byNode(s.to).epoch = r.ProducerEpoch
			}
		case proto.WriteTxnMarkers:
			m.outstanding = append(m.outstanding, s)
		}
	}
	m.h.sent = nil
}

func (m *machine) byNode(n sim.NodeID) *producer {
	for _, p := range m.producers {
		if p.node == n {
			return p
		}
	}
	panic("no producer at node " + fmt.Sprint(n))
}

func (m *machine) producer(t testing.TB, d *datadriven.TestData) *producer {
	name := machinetest.String(t, d, "client", "")
	if name == "" {
		d.Fatalf(t, "%s: client=NAME is required", d.Cmd)
	}
	p, ok := m.producers[name]
	if !ok {
		m.h.names = append(m.h.names, name)
		p = &producer{node: sim.NodeID(len(m.h.names)), id: "tx", pid: wal.NoProducerID, epoch: wal.NoProducerEpoch}
		m.producers[name] = p
	}
	p.id = machinetest.String(t, d, "id", p.id)
	return p
}

// request builds the message a producer (or, for add with broker, a partition leader on
// its behalf) sends, from what it knows and the arguments.
func (m *machine) request(t testing.TB, d *datadriven.TestData, p *producer) sim.Message {
	p.corr++
	pid := int64(machinetest.Int(t, d, "pid", int(p.pid)))
	epoch := int16(machinetest.Int(t, d, "epoch", int(p.epoch)))
	switch d.Cmd {
	case "init":
		msg := proto.InitProducerID{CorrelationID: p.corr, TransactionalID: p.id, TransactionTimeout: machinetest.Duration(t, d, "timeout", time.Minute),
			ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch}
		if d.HasArg("pid") {
			msg.ProducerID, msg.ProducerEpoch = pid, epoch
		}
		return msg
	case "add":
		return proto.AddPartitionsToTxn{CorrelationID: p.corr, TransactionalID: p.id, ProducerID: pid, ProducerEpoch: epoch,
			Partitions: tps(t, d, "partitions"), FromBroker: d.HasArg("broker")}
	case "offsets":
		return proto.AddOffsetsToTxn{CorrelationID: p.corr, TransactionalID: p.id, ProducerID: pid, ProducerEpoch: epoch,
			Group: machinetest.String(t, d, "group", "g")}
	default: // end
		if d.HasArg("commit") == d.HasArg("abort") {
			d.Fatalf(t, "end: say commit or abort")
		}
		return proto.EndTxn{CorrelationID: p.corr, TransactionalID: p.id, ProducerID: pid, ProducerEpoch: epoch, Commit: d.HasArg("commit")}
	}
}

// answerMarkers has the leaders answer the outstanding WriteTxnMarkers.
func (m *machine) answerMarkers(t testing.TB, d *datadriven.TestData) {
	to := machinetest.String(t, d, "to", "")
	errs := map[proto.TP]proto.Error{}
	if arg, ok := d.Arg("errors"); ok {
		for _, v := range arg.Vals {
			tpText, e, ok := strings.Cut(v, "=")
			tp, err := proto.ParseTP(tpText)
			if !ok || err != nil {
				d.Fatalf(t, "errors: %q: want TOPIC/N=ERROR", v)
			}
			errs[tp] = proto.Error(e)
		}
	}
	var kept []sentMsg
	for _, s := range m.outstanding {
		if to != "" && m.h.NameOf(s.to) != to {
			kept = append(kept, s)
			continue
		}
		w := s.msg.(proto.WriteTxnMarkers)
		resp := proto.WriteTxnMarkersResponse{CorrelationID: w.CorrelationID, ProducerID: w.ProducerID}
		for _, tp := range w.Partitions {
			e, ok := errs[tp]
			if !ok {
				e = proto.None
			}
			resp.Results = append(resp.Results, proto.MarkerResult{TP: tp, Error: e})
		}
		m.h.out = append(m.h.out, fmt.Sprintf("%s answers %v", m.h.NameOf(s.to), resp))
		if !m.c.Handle(m.h, s.to, resp) {
			m.h.out = append(m.h.out, "(not the coordinator's)")
		}
	}
	m.outstanding = kept
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
	var b strings.Builder
	for _, x := range m.c.Transactions() {
		fmt.Fprintf(&b, "%s pid=%d epoch=%d %s %s start=%s timeout=%s", x.ID, x.ProducerID, x.Epoch, x.State, proto.TPList(x.Partitions), x.Start, x.Timeout)
		if x.Pending {
			fmt.Fprintf(&b, " (pending -> %s)", x.Next)
		}
		if len(x.Unacked) > 0 {
			fmt.Fprintf(&b, " markers outstanding %s", proto.TPList(x.Unacked))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "no transactional ids"
	}
	return b.String()
}
