package group

import (
	"fmt"
	"testing"

	"mqsim/model/proto"
	"mqsim/sim"
)

// sgh sends one ShareGroupHeartbeat from client node `from` and returns the answer, once
// the write it made (if any) is replicated.
func sgh(t *testing.T, h *fakeHost, c *Coordinator, from sim.NodeID, id string, epoch int32) string {
	t.Helper()
	c.Handle(h, from, proto.ShareGroupHeartbeat{CorrelationID: 1, Group: "g", MemberID: id, MemberEpoch: epoch, Subscribed: []string{"t"}})
	c.Committed(h, int64(len(h.log)))
	sent := h.take()
	if len(sent) != 1 {
		t.Fatalf("share heartbeat of %q at epoch %d: %d answers, want 1", id, epoch, len(sent))
	}
	r := sent[0].(proto.ShareGroupHeartbeatResponse)
	if r.Error != proto.None {
		return string(r.Error)
	}
	return fmt.Sprintf("%s@%d %s", r.MemberID, r.MemberEpoch, proto.TPList(r.Assignment))
}

// A share group's membership survives a coordinator failover: the loaded coordinator has
// the same epochs and assignments, accepts the members' epochs, and names a new member
// apart from the loaded ones.
func TestShareGroupStateSurvivesLoad(t *testing.T) {
	h, c := newConsumerCoordinator()
	sgh(t, h, c, 1, "", 0)
	sgh(t, h, c, 2, "", 0)
	sgh(t, h, c, 3, "", 0)
	h2, c2 := reload(t, h)
	g := c2.Group("g")
	if g == nil || g.Share == nil {
		t.Fatal("group g not loaded as a share group")
	}
	var got []string
	for _, m := range g.Share.Members() {
		got = append(got, fmt.Sprintf("%s@%d %s", m.ID, m.Epoch, proto.TPList(m.Assigned)))
	}
	if want := "[1-1@1 [t/0] 2-2@2 [t/1] 3-3@3 [t/0]]"; fmt.Sprint(got) != want || g.Share.Epoch != 3 || g.Share.AssignmentEpoch != 3 {
		t.Errorf("loaded %v epochs %d/%d, want %s epochs 3/3", got, g.Share.Epoch, g.Share.AssignmentEpoch, want)
	}
	if got := sgh(t, h2, c2, 1, "1-1", 1); got != "1-1@3 [t/0]" {
		t.Errorf("after the failover, 1-1: %s", got)
	}
	if got := sgh(t, h2, c2, 4, "", 0); got != "4-4@4 [t/1]" {
		t.Errorf("a new member after the failover: %s", got)
	}
	// A consumer-protocol heartbeat for the share group is refused.
	c2.Handle(h2, 5, proto.ConsumerGroupHeartbeat{CorrelationID: 2, Group: "g", MemberEpoch: 0, Subscribed: []string{"t"}})
	if r := h2.take(); len(r) != 1 || r[0].(proto.ConsumerGroupHeartbeatResponse).Error != proto.GroupIDNotFound {
		t.Errorf("a ConsumerGroupHeartbeat for a share group: %v, want GROUP_ID_NOT_FOUND", r)
	}
}

// An append that fails puts the group back to what was stored: the join is refused and
// the group has no such member.
func TestShareGroupRevertsAFailedWrite(t *testing.T) {
	h, c := newConsumerCoordinator()
	sgh(t, h, c, 1, "", 0)
	h.appendE = proto.NotEnoughReplicas
	if got := sgh(t, h, c, 2, "", 0); got != string(proto.CoordinatorNotAvailable) {
		t.Fatalf("a join whose write fails: %s", got)
	}
	sg := c.Group("g").Share
	if len(sg.Members()) != 1 || sg.Epoch != 1 {
		t.Fatalf("after the failed write: %d members at epoch %d, want 1 at epoch 1", len(sg.Members()), sg.Epoch)
	}
}
