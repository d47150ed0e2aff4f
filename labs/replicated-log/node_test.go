package lab

import (
	"slices"
	"testing"
	"time"

	"mqsim/sim"
)

// appender is a Replica that, told it leads, appends one entry and sends it to r2.
type appender struct{}

func (appender) Role(env Env, epoch int64, leader string) {
	if leader == env.Self() {
		env.Log().Append(Entry{Epoch: epoch, Value: "a"})
		env.Send("r2", Replicate{Epoch: epoch, Entries: []Entry{{Epoch: epoch, Value: "a"}}})
	}
}
func (appender) Append(env Env, req Request, value string) {}
func (appender) Read(env Env, req Request, offset int64)   {}
func (appender) Receive(env Env, from string, m Message)   {}
func (appender) Tick(env Env)                              {}

// inbox keeps what it receives; as the controller stand-in it names r1 leader of epoch 1.
type inbox struct {
	got []sim.Message
	ctl bool
}

func (b *inbox) Start(env *sim.Env) {
	if id, ok := env.Lookup("r1"); ok && b.ctl {
		env.Send(id, Heartbeat{Epoch: 1, Leader: "r1"})
	}
}
func (b *inbox) Recv(env *sim.Env, from sim.NodeID, m sim.Message) { b.got = append(b.got, m) }
func (b *inbox) Timer(*sim.Env, sim.TimerTag)                      {}

func world(t *testing.T) (*sim.World, sim.NodeID, *inbox) {
	w := sim.NewWorld(sim.DefaultConfig(1))
	r1, err := w.AddNode("r1", func() sim.Node { return NewReplicaNode(appender{}, []string{"r2"}) })
	if err != nil {
		t.Fatal(err)
	}
	r2 := &inbox{}
	w.AddNode("r2", func() sim.Node { return r2 })
	w.AddNode("ctl", func() sim.Node { return &inbox{ctl: true} })
	return w, r1, r2
}

// A message sent after an append leaves only once the fsync made the append durable.
func TestSendsWaitForTheFsync(t *testing.T) {
	w, r1, r2 := world(t)
	if !w.RunUntil(func(w *sim.World) bool { return w.Disk(r1).Size(LogFile) > 0 }, 1000) {
		t.Fatal("r1 never appended")
	}
	w.RunFor(1900 * time.Microsecond) // a message arrives within 1.5ms; the fsync takes 2ms
	if len(r2.got) != 0 || w.Disk(r1).Unsynced() == 0 {
		t.Fatalf("r2 got %v before the fsync", r2.got)
	}
	w.RunFor(10 * time.Millisecond)
	if len(r2.got) != 1 {
		t.Fatalf("r2 got %v after the fsync", r2.got)
	}
	w.Crash(r1)
	w.Restart(r1)
	w.RunFor(time.Millisecond)
	if got := w.Node(r1).(*ReplicaNode).Entries(); !slices.Equal(got, []Entry{{1, "a"}}) {
		t.Errorf("after the restart the log holds %v", got)
	}
}

// A crash before the fsync loses the append and the message that waited for it.
func TestACrashBeforeTheFsyncLosesBoth(t *testing.T) {
	w, r1, r2 := world(t)
	w.RunUntil(func(w *sim.World) bool { return w.Disk(r1).Size(LogFile) > 0 }, 1000)
	w.Crash(r1)
	w.RunFor(10 * time.Millisecond)
	w.Restart(r1)
	w.RunFor(time.Millisecond)
	if len(r2.got) != 0 {
		t.Errorf("r2 got %v from a crashed replica", r2.got)
	}
	if got := w.Node(r1).(*ReplicaNode).Entries(); len(got) != 0 {
		t.Errorf("after the crash the log holds %v", got)
	}
}

// A restart reads the log up to its last complete line and cuts a torn tail.
func TestRestartCutsATornTail(t *testing.T) {
	w := sim.NewWorld(sim.DefaultConfig(1))
	id, _ := w.AddNode("r1", func() sim.Node { return NewReplicaNode(appender{}, nil) })
	whole := `{"e":2,"v":"x"}` + "\n"
	w.Disk(id).Append(LogFile, []byte(whole+`{"e":2,"v`))
	w.RunFor(time.Millisecond)
	if got := w.Node(id).(*ReplicaNode).Entries(); !slices.Equal(got, []Entry{{2, "x"}}) || w.Disk(id).Size(LogFile) != int64(len(whole)) {
		t.Errorf("log %v, file %d bytes", got, w.Disk(id).Size(LogFile))
	}
}

// The controller names the first replica that answers, then, when the leader falls
// silent for LeaderTimeout, the next live one in a new epoch.
func TestControllerNamesTheNextLiveReplica(t *testing.T) {
	w := sim.NewWorld(sim.DefaultConfig(1))
	names := []string{"r1", "r2", "r3"}
	ids := map[string]sim.NodeID{}
	for _, n := range names {
		ids[n], _ = w.AddNode(n, func() sim.Node { return NewReplicaNode(appender{}, nil) })
	}
	ctl, _ := w.AddNode("elector", func() sim.Node { return NewController(names) })
	c := func() *Controller { return w.Node(ctl).(*Controller) }
	w.RunFor(time.Second)
	if c().epoch != 1 || c().leader != "r1" {
		t.Fatalf("epoch %d leader %s, want 1 r1", c().epoch, c().leader)
	}
	w.Pause(ids["r1"])
	w.RunFor(LeaderTimeout / 2)
	if c().epoch != 1 {
		t.Fatalf("a new leader before the timeout: epoch %d", c().epoch)
	}
	w.RunFor(LeaderTimeout)
	if c().epoch != 2 || c().leader != "r2" {
		t.Errorf("epoch %d leader %s, want 2 r2", c().epoch, c().leader)
	}
	if n := w.Node(ids["r3"]).(*ReplicaNode); n.epoch != 2 || n.leader != "r2" {
		t.Errorf("r3 knows epoch %d leader %s", n.epoch, n.leader)
	}
}
