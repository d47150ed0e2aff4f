package controller

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

// The controller's interaction tests: testdata/machine/*.txt run the controller (the
// single "ctl", or a quorum c1..cN) in a world whose brokers b1..bN and client "cli" are
// stand-ins that send only what the test says and print what they receive. Each command
// prints, in order, the controllers' trace events (as the trace prints them: node kind:
// text) and every message a stand-in received ("b1 <- ctl: ..."). go test
// ./model/controller -run TestMachine -rewrite rewrites the expected output.
//
//	cluster [brokers=3] [controllers=1] [elr=true|false] [bugs=(no-epoch-bump)] [hide=(KIND,...)]
//	                              hide leaves those event kinds out (a quorum's Raft chatter)
//	heartbeat BROKER... [incarnation=N] [to=CONTROLLER]   each broker sends a heartbeat
//	                              (requests go to the active controller unless to= says)
//	                              (incarnation 1 unless set; the newest metadata it received)
//	create-topic NAME [partitions=1] [rf=3] [min-isr=1] [unclean]
//	alter BROKER TOPIC/N isr=(BROKER,...) [leader-epoch=N] [partition-epoch=N]
//	                              the epochs default to the broker's last LeaderAndIsr
//	init-producer-id | metadata-request   from cli
//	run for=D [alive=(BROKER,...)]    time passes; the brokers named heartbeat every interval
//	                              (to the active controller)
//	crash NODE | restart NODE
//	partitions                    the active controller's view of every partition
//
// A command that sends something then runs the world for 100ms: long enough for every
// fsync and answer, far shorter than any timeout.

func TestMachine(t *testing.T) {
	machinetest.Run(t, "testdata/machine", func() machinetest.Runner { return newMachine().run })
}

// A file must catch a controller that elects a new leader without bumping the leader
// epoch (the no-epoch-bump bug): the unclean election in elections.txt keeps epoch 0.
func TestMachineCatchesMissingEpochBump(t *testing.T) {
	m := newMachine()
	m.bugs.NoEpochBump = true
	const file = "testdata/machine/elections.txt"
	at := machinetest.Diverging(t, file, m.run)
	if !slices.Contains(at, file+":70") {
		t.Fatalf("a controller that keeps the leader epoch diverged at %v, want at the failover (line 70)", at)
	}
}

// standIn is a broker or client node that only records what it receives.
type standIn struct {
	m    *machine
	name string
	// meta is the newest metadata version received; lai the last LeaderAndIsr per
	// partition (what a broker's next heartbeat or AlterPartition says).
	meta int64
	lai  map[proto.TP]proto.LeaderAndIsr
}

func (s *standIn) Start(*sim.Env)               {}
func (s *standIn) Timer(*sim.Env, sim.TimerTag) {}
func (s *standIn) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case proto.Metadata:
		s.meta = max(s.meta, m.Version)
	case proto.LeaderAndIsr:
		s.lai[m.State.TP] = m
	}
	s.m.received = append(s.m.received, receipt{at: s.m.w.Trace().Len(), line: fmt.Sprintf("%s <- %s: %s", s.name, env.NameOf(from), describeMsg(env, msg))})
}

// receipt is a message a stand-in received, with the trace position it came at, so that
// it prints among the trace events in order.
type receipt struct {
	at   int
	line string
}

type machine struct {
	bugs        proto.Bugs // planted in every cluster the file makes
	w           *sim.World
	cfg         proto.Config
	controllers []sim.NodeID
	brokers     map[string]*standIn
	cli         sim.NodeID
	hide        []string
	received    []receipt
	trace       int
	corr        int64
}

func newMachine() *machine { return &machine{} }

func (m *machine) run(t testing.TB, d *datadriven.TestData) string {
	if d.Cmd == "cluster" {
		m.newCluster(t, d)
		m.w.RunFor(100 * time.Millisecond)
		return m.report()
	}
	if m.w == nil {
		d.Fatalf(t, "%s before any cluster command", d.Cmd)
	}
	switch d.Cmd {
	case "heartbeat":
		to := m.controllerArg(t, d)
		inc := int64(machinetest.Int(t, d, "incarnation", 1))
		for _, arg := range d.CmdArgs {
			if arg.Vals == nil {
				b := m.broker(t, d, arg.Key)
				m.send(b.name, to, proto.BrokerHeartbeat{Broker: m.id(b.name), Incarnation: inc, MetadataVersion: b.meta})
			}
		}
	case "create-topic":
		if len(d.CmdArgs) == 0 {
			d.Fatalf(t, "create-topic NAME [partitions=N] [rf=N] [min-isr=N] [unclean]")
		}
		m.corr++
		m.send("cli", m.controllerArg(t, d), proto.CreateTopic{CorrelationID: m.corr, Config: proto.TopicConfig{
			Name: d.CmdArgs[0].Key, Partitions: machinetest.Int(t, d, "partitions", 1), ReplicationFactor: machinetest.Int(t, d, "rf", 3),
			MinInsyncReplicas: machinetest.Int(t, d, "min-isr", 1), UncleanLeaderElection: d.HasArg("unclean")}})
	case "alter":
		m.alter(t, d)
	case "init-producer-id":
		m.corr++
		m.send("cli", m.controllerArg(t, d), proto.InitProducerID{CorrelationID: m.corr})
	case "metadata-request":
		m.corr++
		m.send("cli", m.controllerArg(t, d), proto.MetadataRequest{CorrelationID: m.corr})
	case "run":
		m.runFor(t, d)
		return m.report()
	case "crash", "restart":
		if len(d.CmdArgs) == 0 {
			d.Fatalf(t, "%s NODE", d.Cmd)
		}
		id := m.id(d.CmdArgs[0].Key)
		if id < 0 {
			d.Fatalf(t, "%s: no node %q", d.Cmd, d.CmdArgs[0].Key)
		}
		if d.Cmd == "crash" {
			m.w.Crash(id)
		} else {
			m.w.Restart(id)
		}
	case "partitions":
		return m.partitions()
	case "elect":
		m.elect(t, d)
	case "want-shutdown":
		for _, arg := range d.CmdArgs {
			b := m.broker(t, d, arg.Key)
			m.send(b.name, m.controllerArg(t, d), proto.BrokerHeartbeat{Broker: m.id(b.name), Incarnation: 1, MetadataVersion: b.meta, WantShutDown: true})
		}
	case "reassign":
		m.reassign(t, d)
	default:
		d.Fatalf(t, "unknown command %q: want cluster, heartbeat, create-topic, alter, init-producer-id, metadata-request, run, crash, restart, partitions, elect, want-shutdown or reassign", d.Cmd)
	}
	m.w.RunFor(100 * time.Millisecond)
	return m.report()
}

func (m *machine) newCluster(t testing.TB, d *datadriven.TestData) {
	cfg := proto.DefaultConfig()
	cfg.Brokers = machinetest.Int(t, d, "brokers", 3)
	cfg.Controllers = machinetest.Int(t, d, "controllers", 1)
	if arg, ok := d.Arg("elr"); ok {
		cfg.Broker.EligibleLeaderReplicas = arg.Vals[0] == "true"
	}
	cfg.Bugs = m.bugs
	if arg, ok := d.Arg("bugs"); ok {
		for _, name := range arg.Vals {
			if err := cfg.Bugs.Set(name); err != nil {
				d.Fatalf(t, "%v", err)
			}
		}
	}
	var hide []string
	if arg, ok := d.Arg("hide"); ok {
		hide = arg.Vals
	}
	w := sim.NewWorld(sim.DefaultConfig(1))
	*m = machine{bugs: m.bugs, w: w, cfg: cfg, brokers: map[string]*standIn{}, hide: hide}
	for _, name := range Names(cfg.Controllers) {
		m.controllers = append(m.controllers, w.MustAddNode(name, func() sim.Node { return New(cfg) }))
	}
	for i := 1; i <= cfg.Brokers; i++ {
		b := &standIn{m: m, name: BrokerName(i), lai: map[proto.TP]proto.LeaderAndIsr{}}
		m.brokers[b.name] = b
		w.MustAddNode(b.name, func() sim.Node { return b })
	}
	m.cli = w.MustAddNode("cli", func() sim.Node { return &standIn{m: m, name: "cli", lai: map[proto.TP]proto.LeaderAndIsr{}} })
}

func (m *machine) id(name string) sim.NodeID {
	id, ok := m.w.Lookup(name)
	if !ok {
		return -1
	}
	return id
}

func (m *machine) broker(t testing.TB, d *datadriven.TestData, name string) *standIn {
	b, ok := m.brokers[name]
	if !ok {
		d.Fatalf(t, "%s: no broker %q (want b1..b%d)", d.Cmd, name, m.cfg.Brokers)
	}
	return b
}

// controllerArg is the controller a request goes to: to=NAME, else the active one (the
// first controller when none is active).
func (m *machine) controllerArg(t testing.TB, d *datadriven.TestData) sim.NodeID {
	def := m.controllers[0]
	for _, id := range m.controllers {
		if c, ok := m.w.Node(id).(*Controller); ok && c.active {
			def = id
			break
		}
	}
	name := machinetest.String(t, d, "to", m.w.Name(def))
	id := m.id(name)
	if !slices.Contains(m.controllers, id) {
		d.Fatalf(t, "to=%s: not a controller (want one of %s)", name, strings.Join(Names(m.cfg.Controllers), ", "))
	}
	return id
}

func (m *machine) send(from string, to sim.NodeID, msg sim.Message) {
	m.w.Env(m.id(from)).Send(to, msg)
}

func (m *machine) alter(t testing.TB, d *datadriven.TestData) {
	if len(d.CmdArgs) < 2 {
		d.Fatalf(t, "alter BROKER TOPIC/N isr=(BROKER,...)")
	}
	b := m.broker(t, d, d.CmdArgs[0].Key)
	tp, err := proto.ParseTP(d.CmdArgs[1].Key)
	if err != nil {
		d.Fatalf(t, "alter: %v", err)
	}
	last := b.lai[tp].State
	req := proto.AlterPartition{Broker: m.id(b.name), TP: tp, Reason: "test",
		LeaderEpoch:    int32(machinetest.Int(t, d, "leader-epoch", int(last.LeaderEpoch))),
		PartitionEpoch: int32(machinetest.Int(t, d, "partition-epoch", int(last.PartitionEpoch)))}
	arg, _ := d.Arg("isr")
	for _, name := range arg.Vals {
		req.NewISR = append(req.NewISR, m.id(m.broker(t, d, name).name))
	}
	m.send(b.name, m.controllerArg(t, d), req)
}

// elect sends ElectLeaders from the client: elect T/P [leader=B].
func (m *machine) elect(t testing.TB, d *datadriven.TestData) {
	if len(d.CmdArgs) < 1 {
		d.Fatalf(t, "elect TOPIC/N [leader=BROKER]")
	}
	tp, err := proto.ParseTP(d.CmdArgs[0].Key)
	if err != nil {
		d.Fatalf(t, "elect: %v", err)
	}
	req := proto.ElectLeaders{TP: tp, Leader: proto.NoLeader}
	if arg, ok := d.Arg("leader"); ok {
		req.Leader = m.id(m.broker(t, d, arg.Vals[0]).name)
	}
	m.send("cli", m.controllerArg(t, d), req)
}

// reassign sends AlterPartitionReassignments from the client: reassign T/P replicas=(B,...).
func (m *machine) reassign(t testing.TB, d *datadriven.TestData) {
	if len(d.CmdArgs) < 2 {
		d.Fatalf(t, "reassign TOPIC/N replicas=(BROKER,...)")
	}
	tp, err := proto.ParseTP(d.CmdArgs[0].Key)
	if err != nil {
		d.Fatalf(t, "reassign: %v", err)
	}
	req := proto.AlterPartitionReassignments{TP: tp}
	arg, _ := d.Arg("replicas")
	for _, name := range arg.Vals {
		req.Replicas = append(req.Replicas, m.id(m.broker(t, d, name).name))
	}
	m.send("cli", m.controllerArg(t, d), req)
}

// runFor lets time pass; the brokers named in alive heartbeat every heartbeat interval,
// as running brokers do.
func (m *machine) runFor(t testing.TB, d *datadriven.TestData) {
	end := m.w.Now().Add(machinetest.Duration(t, d, "for", 0))
	arg, _ := d.Arg("alive")
	for m.w.Now() < end {
		for _, name := range arg.Vals {
			b := m.broker(t, d, name)
			m.send(b.name, m.controllerArg(t, d), proto.BrokerHeartbeat{Broker: m.id(b.name), Incarnation: 1, MetadataVersion: b.meta})
		}
		m.w.RunUntilTime(min(end, m.w.Now().Add(m.cfg.Broker.HeartbeatInterval)))
	}
}

// partitions is the active controller's view.
func (m *machine) partitions() string {
	var b strings.Builder
	for _, id := range m.controllers {
		c, ok := m.w.Node(id).(*Controller)
		if !ok || !c.active {
			continue
		}
		env := m.w.Env(id)
		fmt.Fprintf(&b, "%s: controller epoch %d, metadata v%d\n", m.w.Name(id), c.st.ControllerEpoch, c.st.Version)
		for _, p := range c.Partitions() {
			fmt.Fprintf(&b, "%s\n", describePartition(env, p))
		}
	}
	if b.Len() == 0 {
		return "no active controller"
	}
	return b.String()
}

// describeMsg renders what a stand-in received; a LeaderAndIsr and a Metadata in full,
// since they are the controller's decisions.
func describeMsg(env *sim.Env, msg sim.Message) string {
	switch m := msg.(type) {
	case proto.LeaderAndIsr:
		return fmt.Sprintf("LeaderAndIsr %s (controller epoch %d, broker epoch %d)", describePartition(env, m.State), m.ControllerEpoch, m.BrokerEpoch)
	case proto.Metadata:
		return describeMetadata(env, m)
	case proto.MetadataResponse:
		return "MetadataResponse " + describeMetadata(env, m.Metadata)
	case proto.AlterPartitionResponse:
		if m.Error != proto.None {
			return fmt.Sprintf("AlterPartitionResponse %s %s", m.TP, m.Error)
		}
		return fmt.Sprintf("AlterPartitionResponse NONE: %s", describePartition(env, m.State))
	case proto.BrokerHeartbeatResponse:
		if m.Error != proto.None {
			return fmt.Sprintf("BrokerHeartbeatResponse %s (active %s)", m.Error, controllerName(env, m.ActiveController))
		}
		if m.ShouldShutDown {
			return "BrokerHeartbeatResponse NONE, ShouldShutDown"
		}
		return "BrokerHeartbeatResponse NONE"
	case proto.InitProducerIDResponse:
		if m.Error != proto.None {
			return fmt.Sprintf("InitProducerIdResponse %s (active %s)", m.Error, controllerName(env, m.ActiveController))
		}
		return m.String()
	case proto.CreateTopicResponse:
		return strings.TrimSpace(m.String())
	}
	return fmt.Sprint(msg)
}

func describeMetadata(env *sim.Env, m proto.Metadata) string {
	ps := []string{"no partitions"}
	if len(m.Partitions) > 0 {
		ps = ps[:0]
	}
	for _, p := range m.Partitions {
		ps = append(ps, fmt.Sprintf("%s leader %s", p.TP, nodeName(env, p.Leader)))
	}
	return fmt.Sprintf("Metadata v%d live %s: %s", m.Version, names(env, m.LiveBrokers), strings.Join(ps, ", "))
}

func describePartition(env *sim.Env, p proto.PartitionState) string {
	s := fmt.Sprintf("%s leader %s epoch %d isr %s replicas %s partition-epoch %d",
		p.TP, nodeName(env, p.Leader), p.LeaderEpoch, names(env, p.ISR), names(env, p.Replicas), p.PartitionEpoch)
	if len(p.ELR) > 0 {
		s += fmt.Sprintf(" elr %s", names(env, p.ELR))
	}
	if len(p.LastKnownELR) > 0 {
		s += fmt.Sprintf(" last-known-leader %s", names(env, p.LastKnownELR))
	}
	if len(p.AddingReplicas)+len(p.RemovingReplicas) > 0 {
		s += fmt.Sprintf(" adding %s removing %s", names(env, p.AddingReplicas), names(env, p.RemovingReplicas))
	}
	return s
}

func controllerName(env *sim.Env, id sim.NodeID) string {
	if id == proto.NoController {
		return "unknown"
	}
	return env.NameOf(id)
}

func nodeName(env *sim.Env, id sim.NodeID) string {
	if id == proto.NoLeader {
		return "none"
	}
	return env.NameOf(id)
}

// report renders what happened since the last report: the controllers' trace events
// (less the hidden kinds) and the stand-ins' receipts, in order.
func (m *machine) report() string {
	var b strings.Builder
	events := m.w.Trace().Since(m.trace)
	r := 0
	flush := func(upTo int) {
		for ; r < len(m.received) && m.received[r].at <= upTo; r++ {
			b.WriteString(m.received[r].line + "\n")
		}
	}
	for _, e := range events {
		flush(e.Index)
		if slices.Contains(m.hide, e.Kind) {
			continue
		}
		fmt.Fprintf(&b, "%s %s", e.Node, e.Kind)
		if e.Detail != "" {
			fmt.Fprintf(&b, ": %s", e.Detail)
		}
		b.WriteString("\n")
	}
	flush(m.w.Trace().Len())
	m.trace, m.received = m.w.Trace().Len(), nil
	if b.Len() == 0 {
		return "(nothing)"
	}
	return b.String()
}
