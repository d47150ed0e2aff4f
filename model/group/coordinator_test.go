package group

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

func TestPartitionForIsKafkas(t *testing.T) {
	for _, c := range []struct {
		group string
		hash  int32
	}{
		{"g", 103}, {"hello", 99162322}, {"abc", 96354}, {"my-group", -1906497762},
		{"polygenelubricants", -1 << 31}, // String.hashCode() == Integer.MIN_VALUE; Utils.abs gives 0
	} {
		if h := javaHashCode(c.group); h != c.hash {
			t.Errorf("hashCode(%q) = %d, want %d", c.group, h, c.hash)
		}
	}
	if p := PartitionFor("my-group", 50); p != 12 { // abs(-1906497762) % 50
		t.Errorf("PartitionFor(my-group, 50) = %d, want 12", p)
	}
	if p := PartitionFor("polygenelubricants", 50); p != 0 {
		t.Errorf("PartitionFor(polygenelubricants, 50) = %d, want 0", p)
	}
}

// fakeHost is a broker for one coordinator: appends go to a list, the high watermark
// moves when the test says so, messages and timers are recorded.
type fakeHost struct {
	now     sim.Time
	log     []wal.Record
	sent    []sim.Message
	timers  map[int64]sim.Time
	keys    int64
	appendE proto.Error
	events  []sim.Payload
	epochs  map[int64]int16 // per producer id, the highest epoch of a transactional append
	topics  map[string]int  // partition counts, for consumer-protocol groups
}

func (h *fakeHost) TopicPartitions(topic string) int { return h.topics[topic] }

func newFakeHost() *fakeHost { return &fakeHost{timers: map[int64]sim.Time{}} }

func (h *fakeHost) Now() sim.Time                       { return h.now }
func (h *fakeHost) Send(to sim.NodeID, msg sim.Message) { h.sent = append(h.sent, msg) }
func (h *fakeHost) Tracing() bool                       { return true }
func (h *fakeHost) Record(e sim.Payload)                { h.events = append(h.events, e) }
func (h *fakeHost) NameOf(id sim.NodeID) string         { return fmt.Sprint(id) }
func (h *fakeHost) CancelTimer(id sim.TimerID)          { delete(h.timers, int64(id)) }
func (h *fakeHost) NewKey() int64                       { h.keys++; return h.keys }
func (h *fakeHost) SetTimer(d time.Duration, key int64) sim.TimerID {
	h.timers[key] = h.now.Add(d)
	return sim.TimerID(key)
}
func (h *fakeHost) Append(records []wal.Record) (int64, proto.Error) {
	if h.appendE != proto.None {
		return -1, h.appendE
	}
	h.log = append(h.log, records...)
	return int64(len(h.log)), proto.None
}

// AppendTransactional appends like Append, refusing an epoch below the producer's
// highest, as the partition's producer state does.
func (h *fakeHost) AppendTransactional(pid int64, epoch int16, records []wal.Record) (int64, proto.Error) {
	if h.appendE != proto.None {
		return -1, h.appendE
	}
	if epoch < h.epochs[pid] {
		return -1, proto.InvalidProducerEpoch
	}
	if h.epochs == nil {
		h.epochs = map[int64]int16{}
	}
	h.epochs[pid] = epoch
	h.log = append(h.log, records...)
	return int64(len(h.log)), proto.None
}

// take returns and forgets the messages sent so far.
func (h *fakeHost) take() []sim.Message {
	m := h.sent
	h.sent = nil
	return m
}

// fire runs every timer due by now+d, in deadline order, then moves the clock.
func (h *fakeHost) fire(c *Coordinator, d time.Duration) {
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

func testConfig() proto.GroupConfig { return proto.DefaultConfig().Group }

func join(id, inst string, corr int64, owned ...proto.TP) proto.JoinGroup {
	return proto.JoinGroup{CorrelationID: corr, Group: "g", MemberID: id, InstanceID: inst, ClientID: "c", SessionTimeout: 10 * time.Second,
		RebalanceTimeout: time.Minute, Assignor: "range", Subscription: proto.Subscription{Topics: []string{"t"}, Owned: owned}}
}

// stable brings group g to a stable generation with one member and returns its id.
func stable(t *testing.T, h *fakeHost, c *Coordinator) string {
	t.Helper()
	c.Handle(h, 7, join("", "", 1))
	r := h.take()[0].(proto.JoinGroupResponse)
	if r.Error != proto.MemberIDRequired {
		t.Fatalf("first join: %v, want MEMBER_ID_REQUIRED", r)
	}
	c.Handle(h, 7, join(r.MemberID, "", 2))
	if len(h.sent) != 0 {
		t.Fatalf("the first rebalance of an empty group answered before its initial delay: %v", h.sent)
	}
	h.fire(c, 3*time.Second)
	jr := h.take()[0].(proto.JoinGroupResponse)
	if jr.Error != proto.None || jr.Generation != 1 || jr.Leader != r.MemberID || len(jr.Members) != 1 {
		t.Fatalf("join response %v", jr)
	}
	tp := proto.TP{Topic: "t", Partition: 0}
	c.Handle(h, 7, proto.SyncGroup{CorrelationID: 3, Group: "g", MemberID: r.MemberID, Generation: 1,
		Assignments: []proto.MemberAssignment{{MemberID: r.MemberID, Partitions: []proto.TP{tp}}}})
	if len(h.sent) != 0 {
		t.Fatalf("sync answered before the group metadata was replicated: %v", h.sent)
	}
	c.Committed(h, int64(len(h.log)))
	sr := h.take()[0].(proto.SyncGroupResponse)
	if sr.Error != proto.None || len(sr.Partitions) != 1 || c.Group("g").State != Stable {
		t.Fatalf("sync response %v, state %s", sr, c.Group("g").State)
	}
	return r.MemberID
}

func commit(id string, gen int32, off int64) proto.OffsetCommit {
	return proto.OffsetCommit{CorrelationID: 9, Group: "g", MemberID: id, Generation: gen,
		Offsets: []proto.PartitionOffset{{TP: proto.TP{Topic: "t", Partition: 0}, Offset: off}}}
}

func TestCommitWaitsForTheHighWatermarkAndIsFenced(t *testing.T) {
	h := newFakeHost()
	c := &Coordinator{cfg: testConfig()}
	id := stable(t, h, c)

	c.Handle(h, 7, commit(id, 1, 5))
	if len(h.sent) != 0 {
		t.Fatalf("commit answered before replication: %v", h.sent)
	}
	c.Committed(h, int64(len(h.log)))
	if r := h.take()[0].(proto.OffsetCommitResponse); r.Error != proto.None {
		t.Fatalf("commit: %v", r)
	}
	if off := c.Group("g").Offset(proto.TP{Topic: "t", Partition: 0}); off != 5 {
		t.Fatalf("committed %d, want 5", off)
	}
	for _, tc := range []struct {
		id   string
		gen  int32
		want proto.Error
	}{{id, 0, proto.IllegalGeneration}, {"someone", 1, proto.UnknownMemberID}, {"", -1, proto.UnknownMemberID}} {
		c.Handle(h, 7, commit(tc.id, tc.gen, 3))
		if r := h.take()[0].(proto.OffsetCommitResponse); r.Error != tc.want {
			t.Errorf("commit by %q generation %d: %s, want %s", tc.id, tc.gen, r.Error, tc.want)
		}
	}
	if off := c.Group("g").Offset(proto.TP{Topic: "t", Partition: 0}); off != 5 || len(c.Stale) != 0 {
		t.Fatalf("a fenced commit changed the offset to %d (stale %v)", off, c.Stale)
	}

	// Commits time out when the high watermark does not move.
	c.Handle(h, 7, commit(id, 1, 6))
	h.fire(c, 5*time.Second)
	if r := h.take()[0].(proto.OffsetCommitResponse); r.Error != proto.RequestTimedOut {
		t.Fatalf("unreplicated commit: %v, want REQUEST_TIMED_OUT", r)
	}
}

func TestBugsAcceptStaleCommitsAndAckBeforeReplication(t *testing.T) {
	h := newFakeHost()
	c := &Coordinator{cfg: testConfig(), bugs: proto.Bugs{NoGenerationFencing: true, OffsetsAcks1: true}}
	// offsets-acks-1 answers the sync at once too; stable() expects it to wait, so drive
	// the group by hand.
	c.Handle(h, 7, join("", "", 1))
	id := h.take()[0].(proto.JoinGroupResponse).MemberID
	c.Handle(h, 7, join(id, "", 2))
	h.fire(c, 3*time.Second)
	h.take()
	c.Handle(h, 7, proto.SyncGroup{CorrelationID: 3, Group: "g", MemberID: id, Generation: 1})
	if r := h.take()[0].(proto.SyncGroupResponse); r.Error != proto.None {
		t.Fatalf("sync: %v", r)
	}
	c.Handle(h, 7, commit("zombie", 0, 3))
	if r := h.take()[0].(proto.OffsetCommitResponse); r.Error != proto.None {
		t.Fatalf("no-generation-fencing: the zombie's commit got %s", r.Error)
	}
	if len(c.Stale) != 1 || c.Stale[0].Member != "zombie" || c.Stale[0].Current != 1 {
		t.Fatalf("stale commits %v", c.Stale)
	}
}

func TestLeaveAndSessionExpiryRebalance(t *testing.T) {
	h := newFakeHost()
	c := &Coordinator{cfg: testConfig()}
	id := stable(t, h, c)
	g := c.Group("g")
	// A second member joins: the first learns at its heartbeat and rejoins.
	c.Handle(h, 8, join("", "", 10))
	id2 := h.take()[0].(proto.JoinGroupResponse).MemberID
	c.Handle(h, 8, join(id2, "", 11))
	if g.State != PreparingRebalance {
		t.Fatalf("state %s, want PreparingRebalance", g.State)
	}
	c.Handle(h, 7, proto.Heartbeat{CorrelationID: 12, Group: "g", MemberID: id, Generation: 1})
	if r := h.take()[0].(proto.HeartbeatResponse); r.Error != proto.RebalanceInProgress {
		t.Fatalf("heartbeat: %v", r)
	}
	c.Handle(h, 7, join(id, "", 13))
	if g.State != CompletingRebalance || g.Generation != 2 {
		t.Fatalf("after both joined: %s generation %d", g.State, g.Generation)
	}
	h.take()
	// The second member never syncs nor heartbeats: its session expires.
	c.Handle(h, 7, proto.SyncGroup{CorrelationID: 14, Group: "g", MemberID: id, Generation: 2,
		Assignments: []proto.MemberAssignment{{MemberID: id}, {MemberID: id2}}})
	c.Committed(h, int64(len(h.log)))
	h.take()
	h.fire(c, 5*time.Second)
	c.Handle(h, 7, proto.Heartbeat{CorrelationID: 16, Group: "g", MemberID: id, Generation: 2})
	h.fire(c, 6*time.Second)
	if g.member(id2) != nil {
		t.Fatalf("%s outlived its session", id2)
	}
	if g.State != PreparingRebalance {
		t.Fatalf("state %s after an expiry, want PreparingRebalance", g.State)
	}
	// The first member leaves: the group is empty, one generation later.
	c.Handle(h, 7, proto.LeaveGroup{CorrelationID: 15, Group: "g", MemberID: id})
	if g.State != Empty || g.Generation != 3 {
		t.Fatalf("after the last member left: %s generation %d", g.State, g.Generation)
	}
	// The trace says why each rebalance started, by type, and in the same words as before.
	var why []string
	for _, e := range h.events {
		if r, ok := e.(RebalanceStarted); ok {
			why = append(why, r.Why())
		}
	}
	want := []string{id + " joined", id2 + " joined with new metadata", id2 + "'s session expired"}
	if !slices.Equal(why, want) {
		t.Fatalf("rebalances started because %q, want %q", why, want)
	}
	last := h.events[len(h.events)-1]
	if e, ok := last.(GroupEmptied); !ok || e.Detail() != "group g: generation 3 has no members" {
		t.Fatalf("last event %T %q, want the group emptied at generation 3", last, last.Detail())
	}
}

func TestStaticMemberRejoinsWithoutRebalance(t *testing.T) {
	h := newFakeHost()
	c := &Coordinator{cfg: testConfig()}
	c.Handle(h, 7, join("", "i1", 1))
	h.fire(c, 3*time.Second)
	jr := h.take()[0].(proto.JoinGroupResponse)
	c.Handle(h, 7, proto.SyncGroup{CorrelationID: 2, Group: "g", MemberID: jr.MemberID, InstanceID: "i1", Generation: 1,
		Assignments: []proto.MemberAssignment{{MemberID: jr.MemberID, Partitions: []proto.TP{{Topic: "t"}}}}})
	c.Committed(h, int64(len(h.log)))
	h.take()
	// The instance restarts: a new member id, the same generation, no rebalance.
	c.Handle(h, 9, join("", "i1", 3))
	r := h.take()[0].(proto.JoinGroupResponse)
	g := c.Group("g")
	if r.Error != proto.None || r.Generation != 1 || r.MemberID == jr.MemberID || !r.SkipAssignment || g.State != Stable {
		t.Fatalf("static rejoin: %v, state %s", r, g.State)
	}
	// The old incarnation is fenced.
	c.Handle(h, 7, proto.Heartbeat{CorrelationID: 4, Group: "g", MemberID: jr.MemberID, InstanceID: "i1", Generation: 1})
	if hr := h.take()[0].(proto.HeartbeatResponse); hr.Error != proto.FencedInstanceID {
		t.Fatalf("old incarnation's heartbeat: %v", hr)
	}
}

func TestLoadRestoresGroupsAndOffsets(t *testing.T) {
	h := newFakeHost()
	c := &Coordinator{cfg: testConfig()}
	id := stable(t, h, c)
	c.Handle(h, 7, commit(id, 1, 42))
	c.Committed(h, int64(len(h.log)))
	g := c.Group("g")

	var back Coordinator
	back.timers.Reset()
	for _, r := range h.log {
		d, err := decode(r)
		if err != nil {
			t.Fatal(err)
		}
		back.apply(d)
	}
	bg := back.Group("g")
	if bg == nil || bg.State != Stable || bg.Generation != g.Generation || bg.Leader != g.Leader || len(bg.members) != 1 ||
		bg.Offset(proto.TP{Topic: "t", Partition: 0}) != 42 || bg.Rebalances != 1 {
		t.Fatalf("loaded %+v, want %+v", bg, g)
	}
}

func TestRevokeFirstHoldsBackOwnedPartitions(t *testing.T) {
	p := func(n int32) proto.TP { return proto.TP{Topic: "t", Partition: n} }
	members := []Member{{ID: "a", Owned: []proto.TP{p(0), p(1)}}, {ID: "b", Owned: []proto.TP{p(2)}}, {ID: "c"}}
	a := Assignment{"a": {p(0)}, "b": {p(2)}, "c": {p(1)}}
	out, held := RevokeFirst(a, members)
	if len(out["c"]) != 0 || len(held) != 1 || held[0] != p(1) || len(out["a"]) != 1 || len(out["b"]) != 1 {
		t.Fatalf("RevokeFirst: %v held %v", out, held)
	}
}

// A committed offset keeps the leader epoch it was committed with (KIP-320) through a
// reload of the offsets log, and OffsetFetch answers it: the consumer needs it to refuse a
// stale leader's metadata; without it, it would reset on that leader's OFFSET_OUT_OF_RANGE.
func TestOffsetFetchAnswersTheCommittedLeaderEpochAfterReload(t *testing.T) {
	h := newFakeHost()
	c := &Coordinator{cfg: testConfig()}
	id := stable(t, h, c)
	tp := proto.TP{Topic: "t", Partition: 0}
	m := commit(id, 1, 3)
	m.Offsets[0].LeaderEpoch = 2
	c.Handle(h, 7, m)
	c.Committed(h, int64(len(h.log)))
	h.take()

	back := &Coordinator{cfg: testConfig()}
	for _, r := range h.log {
		d, err := decode(r)
		if err != nil {
			t.Fatal(err)
		}
		back.apply(d)
	}
	other := proto.TP{Topic: "t", Partition: 1}
	back.Handle(h, 7, proto.OffsetFetch{CorrelationID: 4, Group: "g", Partitions: []proto.TP{tp, other}})
	r := h.take()[0].(proto.OffsetFetchResponse)
	want := []proto.PartitionOffset{{TP: tp, Offset: 3, LeaderEpoch: 2}, {TP: other, Offset: -1, LeaderEpoch: wal.UndefinedEpoch}}
	if !slices.Equal(r.Offsets, want) {
		t.Fatalf("OffsetFetch answered %+v, want %+v", r.Offsets, want)
	}
}
