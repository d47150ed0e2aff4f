package group

import (
	"fmt"
	"testing"
	"time"

	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

func tp(p int32) proto.TP { return proto.TP{Topic: "t", Partition: p} }

// cgh sends one ConsumerGroupHeartbeat from node `from`, replicates what the coordinator
// wrote, and returns its answer.
func cgh(t *testing.T, h *fakeHost, c *Coordinator, from sim.NodeID, id string, epoch int32, owned ...proto.TP) proto.ConsumerGroupHeartbeatResponse {
	t.Helper()
	return cghStatic(t, h, c, from, id, "", epoch, owned...)
}

// cghStatic is cgh for a member with group.instance.id inst ("" for a dynamic member).
func cghStatic(t *testing.T, h *fakeHost, c *Coordinator, from sim.NodeID, id, inst string, epoch int32, owned ...proto.TP) proto.ConsumerGroupHeartbeatResponse {
	t.Helper()
	c.Handle(h, from, proto.ConsumerGroupHeartbeat{CorrelationID: 1, Group: "g", MemberID: id, InstanceID: inst, MemberEpoch: epoch,
		RebalanceTimeout: time.Minute, Subscribed: []string{"t"}, Owned: owned})
	c.Committed(h, int64(len(h.log)))
	sent := h.take()
	if len(sent) != 1 {
		t.Fatalf("heartbeat of %q at epoch %d: %d answers, want 1", id, epoch, len(sent))
	}
	return sent[0].(proto.ConsumerGroupHeartbeatResponse)
}

func cghText(r proto.ConsumerGroupHeartbeatResponse) string {
	if r.Error != proto.None {
		return string(r.Error)
	}
	return fmt.Sprintf("%s@%d %s", r.MemberID, r.MemberEpoch, proto.TPList(r.Assignment))
}

func newConsumerCoordinator() (*fakeHost, *Coordinator) {
	h := newFakeHost()
	h.topics = map[string]int{"t": 2}
	return h, &Coordinator{cfg: testConfig()}
}

// A partition moves only once its owner has revoked it: the second member waits
// (unreleased) while the first still reports the partition, and gets it at the heartbeat
// after the first's revocation. Epochs: group 2, the first member stays at 1 until it
// revokes.
func TestConsumerProtocolRevokesBeforeReassigning(t *testing.T) {
	h, c := newConsumerCoordinator()
	if got := cghText(cgh(t, h, c, 1, "", 0)); got != "1-1@1 [t/0 t/1]" {
		t.Fatalf("first join: %s", got)
	}
	if got := cghText(cgh(t, h, c, 2, "", 0)); got != "2-2@2 []" {
		t.Fatalf("second join: %s, want epoch 2 and nothing yet (t/1 still owned by 1-1)", got)
	}
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))); got != "1-1@1 [t/0]" {
		t.Fatalf("first member, still owning both: %s, want epoch 1 and t/1 taken away", got)
	}
	if got := cghText(cgh(t, h, c, 2, "2-2", 2)); got != "2-2@2 []" {
		t.Fatalf("second member before the revocation: %s, want still nothing", got)
	}
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0))); got != "1-1@2 [t/0]" {
		t.Fatalf("first member after revoking t/1: %s, want epoch 2", got)
	}
	if got := cghText(cgh(t, h, c, 2, "2-2", 2)); got != "2-2@2 [t/1]" {
		t.Fatalf("second member after the revocation: %s, want t/1", got)
	}
	if got := c.Group("g").Consumer.StateName(); got != "Stable" {
		t.Errorf("group state %s, want Stable", got)
	}
}

// Epoch validation: a higher epoch, or a lower one that is not the previous epoch, is
// fenced; an unknown member id is refused; the previous epoch with owned partitions
// inside the assignment is accepted (its answer was lost).
func TestConsumerProtocolFencesBadEpochs(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	cgh(t, h, c, 2, "", 0)
	cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))
	cgh(t, h, c, 1, "1-1", 1, tp(0)) // now at epoch 2, previous 1
	for _, tc := range []struct {
		id    string
		epoch int32
		owned []proto.TP
		want  string
	}{
		{"1-1", 3, nil, "FENCED_MEMBER_EPOCH"},
		{"1-1", 1, []proto.TP{tp(0)}, "1-1@2 [t/0]"},
		{"1-1", 1, []proto.TP{tp(1)}, "FENCED_MEMBER_EPOCH"},
		{"9-9", 2, nil, "UNKNOWN_MEMBER_ID"},
	} {
		if got := cghText(cgh(t, h, c, 1, tc.id, tc.epoch, tc.owned...)); got != tc.want {
			t.Errorf("%s at epoch %d owning %v: %s, want %s", tc.id, tc.epoch, tc.owned, got, tc.want)
		}
	}
}

// A commit carries the member epoch: the current one is accepted, an older one gets
// STALE_MEMBER_EPOCH, an unknown member UNKNOWN_MEMBER_ID.
func TestConsumerProtocolCommitFencing(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	cg := c.Group("g").Consumer
	for _, tc := range []struct {
		id   string
		gen  int32
		want proto.Error
	}{
		{"1-1", 1, proto.None},
		{"1-1", 0, proto.StaleMemberEpoch},
		{"2-2", 1, proto.UnknownMemberID},
		{"", proto.NoGeneration, proto.UnknownMemberID},
	} {
		if got := validateConsumerCommit(cg, proto.OffsetCommit{Group: "g", MemberID: tc.id, Generation: tc.gen}); got != tc.want {
			t.Errorf("commit of %q at epoch %d: %q, want %q", tc.id, tc.gen, got, tc.want)
		}
	}
}

// A member that misses heartbeats for the session timeout is fenced and its partitions
// go to the other member at its next heartbeat; the fenced member's next heartbeat is
// refused.
func TestConsumerProtocolSessionTimeoutReassigns(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	cgh(t, h, c, 2, "", 0)
	cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))
	cgh(t, h, c, 1, "1-1", 1, tp(0))
	cgh(t, h, c, 2, "2-2", 2)
	for i := 0; i < 10; i++ { // only 2-2 keeps heartbeating
		h.fire(c, 5*time.Second)
		cgh(t, h, c, 2, "2-2", c.Group("g").Consumer.Member("2-2").Epoch, tp(1))
	}
	c.Committed(h, int64(len(h.log)))
	if got := cghText(cgh(t, h, c, 2, "2-2", c.Group("g").Consumer.Member("2-2").Epoch, tp(1))); got != "2-2@3 [t/0 t/1]" {
		t.Errorf("the survivor after the other's session timeout: %s, want both partitions at epoch 3", got)
	}
	if got := cghText(cgh(t, h, c, 1, "1-1", 2, tp(0))); got != "UNKNOWN_MEMBER_ID" {
		t.Errorf("the fenced member's heartbeat: %s, want UNKNOWN_MEMBER_ID", got)
	}
	fenced := false
	for _, e := range h.events {
		if f, ok := e.(ConsumerMemberFenced); ok && f.Member == "1-1" && f.Reason == SessionTimedOut {
			fenced = true
		}
	}
	if !fenced {
		t.Error("no member-fenced event for 1-1")
	}
}

// The group's consumer-protocol state survives a coordinator failover: a coordinator
// loaded from the records the first one wrote has the same epochs and assignments.
func TestConsumerProtocolStateSurvivesLoad(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	cgh(t, h, c, 2, "", 0)
	cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1)) // 1-1 must revoke t/1: unrevoked at epoch 1

	h2, c2 := reload(t, h)
	g := c2.Group("g")
	if g == nil || g.Consumer == nil {
		t.Fatal("group g not loaded as a consumer-protocol group")
	}
	var got []string
	for _, m := range g.Consumer.Members() {
		got = append(got, fmt.Sprintf("%s@%d %s %s revoking %s", m.ID, m.Epoch, m.State, proto.TPList(m.Assigned), proto.TPList(m.Revoking)))
	}
	want := "[1-1@1 unrevoked-partitions [t/0] revoking [t/1] 2-2@2 unreleased-partitions [] revoking []]"
	if fmt.Sprint(got) != want || g.Consumer.Epoch != 2 || g.Consumer.AssignmentEpoch != 2 {
		t.Errorf("loaded: %v epochs %d/%d, want %s epochs 2/2", got, g.Consumer.Epoch, g.Consumer.AssignmentEpoch, want)
	}
	// The loaded coordinator carries on: 1-1 revokes, 2-2 gets t/1, and a new member
	// id does not collide with the loaded ones.
	if got := cghText(cgh(t, h2, c2, 1, "1-1", 1, tp(0))); got != "1-1@2 [t/0]" {
		t.Errorf("after the failover, 1-1 revokes: %s", got)
	}
	if got := cghText(cgh(t, h2, c2, 2, "2-2", 2)); got != "2-2@2 [t/1]" {
		t.Errorf("after the failover, 2-2: %s", got)
	}
	if got := cghText(cgh(t, h2, c2, 3, "", 0)); got != "3-3@3 []" {
		t.Errorf("a new member after the failover: %s", got)
	}
}

// reload is a coordinator failover: a new coordinator loaded from the records h's
// coordinator wrote.
func reload(t *testing.T, h *fakeHost) (*fakeHost, *Coordinator) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultConfig(1))
	n := &logNode{}
	w.MustAddNode("n", func() sim.Node { return n })
	w.RunFor(1)
	if _, err := n.log.Append(wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence, Records: h.log}); err != nil {
		t.Fatal(err)
	}
	h2 := newFakeHost()
	h2.topics = h.topics
	return h2, Load(h2, testConfig(), proto.DefaultShareConfig(), proto.Bugs{}, 0, 0, n.log)
}

// A transactional commit to a consumer-protocol group is checked as its plain commits are
// (KIP-447 with KIP-848): by member and member epoch, not by the classic generation.
func TestConsumerProtocolTxnCommitUsesMemberEpochs(t *testing.T) {
	h, c := newConsumerCoordinator()
	if got := cghText(cgh(t, h, c, 1, "", 0)); got != "1-1@1 [t/0 t/1]" {
		t.Fatalf("join: %s", got)
	}
	g := c.Group("g")
	for _, tc := range []struct {
		member string
		epoch  int32
		want   proto.Error
	}{
		{"1-1", 1, proto.None},
		{"1-1", 0, proto.StaleMemberEpoch},
		{"9-9", 1, proto.UnknownMemberID},
	} {
		m := proto.TxnOffsetCommit{Group: "g", MemberID: tc.member, Generation: tc.epoch, ProducerID: 7}
		if got := c.validateTxnCommit(g, m); got != tc.want {
			t.Errorf("member %s epoch %d: %s, want %s", tc.member, tc.epoch, got, tc.want)
		}
	}
}
