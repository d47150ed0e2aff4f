package group

import (
	"fmt"
	"testing"
	"time"

	"mqsim/model/proto"
)

// Static members under the consumer protocol (group.instance.id), as Kafka's
// GroupMetadataManager.getOrMaybeSubscribeStaticConsumerGroupMember and
// consumerGroupStaticMemberGroupLeave handle them.

// staticPair brings group g to a settled state: static member 1-1 (instance a) owns t/0,
// dynamic member 2-2 owns t/1, both at epoch 2.
func staticPair(t *testing.T, h *fakeHost, c *Coordinator) {
	t.Helper()
	cghStatic(t, h, c, 1, "", "a", 0)
	cgh(t, h, c, 2, "", 0)
	cghStatic(t, h, c, 1, "1-1", "a", 1, tp(0), tp(1))
	cghStatic(t, h, c, 1, "1-1", "a", 1, tp(0))
	if got := cghText(cgh(t, h, c, 2, "2-2", 2)); got != "2-2@2 [t/1]" {
		t.Fatalf("setting up: 2-2 %s, want 2-2@2 [t/1]", got)
	}
}

// epochBumps counts the group-epoch events recorded so far.
func epochBumps(h *fakeHost) int {
	n := 0
	for _, e := range h.events {
		if _, ok := e.(GroupEpochBumped); ok {
			n++
		}
	}
	return n
}

// A static member that leaves with epoch -2 keeps its partitions: the group epoch does not
// move, the other member does not get them, and the instance coming back (under a new
// member id) gets them again at the same epoch; the old member id is gone.
func TestConsumerProtocolStaticMemberAwayKeepsItsPartitions(t *testing.T) {
	h, c := newConsumerCoordinator()
	staticPair(t, h, c)
	bumps := epochBumps(h)
	if got := cghText(cghStatic(t, h, c, 1, "1-1", "a", proto.StaticLeaveEpoch)); got != "1-1@-2 []" {
		t.Fatalf("static leave: %s, want 1-1@-2 []", got)
	}
	for i := 0; i < 4; i++ { // 20s away, within the 45s session
		h.fire(c, 5*time.Second)
		if got := cghText(cgh(t, h, c, 2, "2-2", 2, tp(1))); got != "2-2@2 [t/1]" {
			t.Fatalf("the other member while 1-1 is away: %s, want 2-2@2 [t/1] (t/0 kept for instance a)", got)
		}
	}
	if got := cghText(cghStatic(t, h, c, 3, "", "a", 0)); got != "3-3@2 [t/0]" {
		t.Fatalf("instance a back: %s, want 3-3@2 [t/0]", got)
	}
	if got := epochBumps(h) - bumps; got != 0 || c.Group("g").Consumer.Epoch != 2 {
		t.Errorf("group epoch %d after %d bumps, want 2 and none: a static member's absence is no rebalance", c.Group("g").Consumer.Epoch, got)
	}
	// The old process, heartbeating or leaving under the instance's old member id, is
	// fenced (FENCED_INSTANCE_ID: a newer process owns the instance) and changes nothing;
	// an instance the group never had is unknown.
	if got := cghText(cghStatic(t, h, c, 1, "1-1", "a", 2, tp(0))); got != "FENCED_INSTANCE_ID" {
		t.Errorf("the old member id after the return: %s, want FENCED_INSTANCE_ID", got)
	}
	if got := cghText(cghStatic(t, h, c, 1, "1-1", "a", proto.LeaveEpoch)); got != "FENCED_INSTANCE_ID" {
		t.Errorf("the old member id leaving after the return: %s, want FENCED_INSTANCE_ID", got)
	}
	if got := cghText(cghStatic(t, h, c, 1, "1-1", "z", 2, tp(0))); got != "UNKNOWN_MEMBER_ID" {
		t.Errorf("an instance the group never had: %s, want UNKNOWN_MEMBER_ID", got)
	}
	// The returned member's session is its own: the one the old id ran out does not
	// fence it.
	for i := 0; i < 12; i++ {
		h.fire(c, 5*time.Second)
		cghStatic(t, h, c, 3, "3-3", "a", 2, tp(0))
		cgh(t, h, c, 2, "2-2", 2, tp(1))
	}
	var got []string
	for _, m := range c.Group("g").Consumer.Members() {
		got = append(got, fmt.Sprintf("%s@%d %s", m.ID, m.Epoch, proto.TPList(m.Assigned)))
	}
	if fmt.Sprint(got) != "[3-3@2 [t/0] 2-2@2 [t/1]]" {
		t.Errorf("members a minute after the return: %v, want [3-3@2 [t/0] 2-2@2 [t/1]]", got)
	}
}

// The return of a static member is stored before it is answered: a coordinator that takes
// over knows the instance's new member id.
func TestConsumerProtocolStaticReturnIsStored(t *testing.T) {
	h, c := newConsumerCoordinator()
	staticPair(t, h, c)
	cghStatic(t, h, c, 1, "1-1", "a", proto.StaticLeaveEpoch)
	cghStatic(t, h, c, 3, "", "a", 0)
	h2, c2 := reload(t, h)
	var got []string
	for _, m := range c2.Group("g").Consumer.Members() {
		got = append(got, fmt.Sprintf("%s(%s)@%d %s", m.ID, m.InstanceID, m.Epoch, proto.TPList(m.Assigned)))
	}
	if fmt.Sprint(got) != "[3-3(a)@2 [t/0] 2-2()@2 [t/1]]" {
		t.Errorf("loaded after the return: %v, want [3-3(a)@2 [t/0] 2-2()@2 [t/1]]", got)
	}
	if got := cghText(cghStatic(t, h2, c2, 3, "3-3", "a", 2, tp(0))); got != "3-3@2 [t/0]" {
		t.Errorf("the returned member's heartbeat after the failover: %s, want 3-3@2 [t/0]", got)
	}
}

// A static member away for longer than the session timeout is fenced: the group epoch
// moves on, its partitions go to the other member, and the instance coming back later
// joins as a new member.
func TestConsumerProtocolStaticMemberAwayTooLongIsFenced(t *testing.T) {
	h, c := newConsumerCoordinator()
	staticPair(t, h, c)
	cghStatic(t, h, c, 1, "1-1", "a", proto.StaticLeaveEpoch)
	for i := 0; i < 10; i++ { // 50s: past the 45s session that started at the last heartbeat
		h.fire(c, 5*time.Second)
		cgh(t, h, c, 2, "2-2", c.Group("g").Consumer.Member("2-2").Epoch, tp(1))
	}
	if got := cghText(cgh(t, h, c, 2, "2-2", 3, tp(1))); got != "2-2@3 [t/0 t/1]" {
		t.Errorf("the other member after instance a's session ran out: %s, want 2-2@3 [t/0 t/1]", got)
	}
	fenced := ""
	for _, e := range h.events {
		if f, ok := e.(ConsumerMemberFenced); ok {
			fenced += fmt.Sprintf("%s %s %s;", f.Member, f.Reason, proto.TPList(f.Partitions))
		}
	}
	if want := fmt.Sprintf("1-1 %s [t/0];", SessionTimedOut); fenced != want {
		t.Errorf("fenced: %q, want %q", fenced, want)
	}
	if got := cghText(cghStatic(t, h, c, 3, "", "a", 0)); got != "3-3@4 []" {
		t.Errorf("instance a back after its session: %s, want a new member 3-3@4 [] (t/0 still with 2-2)", got)
	}
}

// A second live member with the same instance id is refused with UNRELEASED_INSTANCE_ID
// and changes nothing: the first keeps its member id, epoch and partitions.
func TestConsumerProtocolLiveInstanceIDIsNotReleased(t *testing.T) {
	h, c := newConsumerCoordinator()
	cghStatic(t, h, c, 1, "", "a", 0)
	if got := cghText(cghStatic(t, h, c, 2, "", "a", 0)); got != "UNRELEASED_INSTANCE_ID" {
		t.Errorf("a second member with instance a: %s, want UNRELEASED_INSTANCE_ID", got)
	}
	if got := cghText(cghStatic(t, h, c, 1, "1-1", "a", 1, tp(0), tp(1))); got != "1-1@1 [t/0 t/1]" {
		t.Errorf("the first member after the refusal: %s, want 1-1@1 [t/0 t/1]", got)
	}
	if cg := c.Group("g").Consumer; cg.Epoch != 1 || len(cg.Members()) != 1 {
		t.Errorf("group epoch %d with %d members, want 1 with 1", cg.Epoch, len(cg.Members()))
	}
}

// A static member that leaves while it waits for a partition another member still owns
// gets it when it comes back, once the other has released it: the partition does not stay
// without an owner.
func TestConsumerProtocolStaticReturnGetsReleasedPartitions(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	if got := cghText(cghStatic(t, h, c, 2, "", "b", 0)); got != "2-2@2 []" {
		t.Fatalf("static join: %s, want 2-2@2 [] (t/1 still owned by 1-1)", got)
	}
	cghStatic(t, h, c, 2, "2-2", "b", proto.StaticLeaveEpoch)
	cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0))); got != "1-1@2 [t/0]" {
		t.Fatalf("1-1 revokes t/1: %s, want 1-1@2 [t/0]", got)
	}
	if got := cghText(cghStatic(t, h, c, 3, "", "b", 0)); got != "3-3@2 [t/1]" {
		t.Errorf("instance b back: %s, want 3-3@2 [t/1]", got)
	}
	if got := c.Group("g").Consumer.StateName(); got != "Stable" {
		t.Errorf("group state %s, want Stable", got)
	}
}
