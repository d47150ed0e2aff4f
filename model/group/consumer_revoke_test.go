package group

import (
	"fmt"
	"testing"
	"time"

	"mqsim/model/proto"
)

// The rebalance timeout of a pending revocation (Kafka's
// GroupMetadataManager.scheduleConsumerGroupRebalanceTimeout): a member that must give
// partitions up and still reports them a rebalance timeout (1 minute in cgh) later is
// fenced, and what it held goes to the others.

// fencedEvents lists the member-fenced events recorded so far.
func fencedEvents(h *fakeHost) string {
	s := ""
	for _, e := range h.events {
		if f, ok := e.(ConsumerMemberFenced); ok {
			s += fmt.Sprintf("%s@%d %s %s;", f.Member, f.Epoch, f.Reason, proto.TPList(f.Partitions))
		}
	}
	return s
}

// 1-1 must revoke t/1 for 2-2 and keeps reporting it. Its heartbeats keep its session
// alive but do not extend the rebalance timeout: at 55s it is still a member, at 60s it
// is fenced and 2-2 gets both partitions.
func TestConsumerProtocolRevocationTimeoutFences(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	cgh(t, h, c, 2, "", 0)
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))); got != "1-1@1 [t/0]" {
		t.Fatalf("1-1 asked to revoke t/1: %s", got)
	}
	for i := 0; i < 11; i++ { // 55s
		h.fire(c, 5*time.Second)
		if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))); got != "1-1@1 [t/0]" {
			t.Fatalf("at %v, 1-1 still holding t/1: %s, want 1-1@1 [t/0]", h.now, got)
		}
		if got := cghText(cgh(t, h, c, 2, "2-2", 2)); got != "2-2@2 []" {
			t.Fatalf("at %v, 2-2: %s, want 2-2@2 [] (t/1 not revoked yet)", h.now, got)
		}
	}
	h.fire(c, 5*time.Second) // 60s: the rebalance timeout
	if got, want := fencedEvents(h), fmt.Sprintf("1-1@1 %s [t/0];", RevocationTimedOut); got != want {
		t.Errorf("fenced: %q, want %q", got, want)
	}
	if got := cghText(cgh(t, h, c, 2, "2-2", 2)); got != "2-2@3 [t/0 t/1]" {
		t.Errorf("2-2 after 1-1 was fenced: %s, want 2-2@3 [t/0 t/1]", got)
	}
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))); got != "UNKNOWN_MEMBER_ID" {
		t.Errorf("1-1 after it was fenced: %s, want UNKNOWN_MEMBER_ID", got)
	}
}

// A member that revokes in time is not fenced later by the timeout it had to beat.
func TestConsumerProtocolRevocationInTimeIsNotFenced(t *testing.T) {
	h, c := newConsumerCoordinator()
	cgh(t, h, c, 1, "", 0)
	cgh(t, h, c, 2, "", 0)
	cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))
	for i := 0; i < 24; i++ { // 2 minutes; 1-1 revokes t/1 at 30s
		h.fire(c, 5*time.Second)
		if i < 5 {
			cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1))
		} else {
			cgh(t, h, c, 1, "1-1", c.Group("g").Consumer.Member("1-1").Epoch, tp(0))
		}
		cgh(t, h, c, 2, "2-2", 2)
	}
	if got := fencedEvents(h); got != "" {
		t.Errorf("fenced: %q, want nobody", got)
	}
	if got := cghText(cgh(t, h, c, 1, "1-1", 2, tp(0))); got != "1-1@2 [t/0]" {
		t.Errorf("1-1 after revoking in time: %s, want 1-1@2 [t/0]", got)
	}
}

// A member that revokes in time but must then revoke more for a newer target gets a new
// rebalance timeout for that revocation, as Kafka schedules one each time the member's
// assignment changes while it has partitions to revoke: it is not fenced by the timeout
// of the revocation it already made.
func TestConsumerProtocolRevocationTimeoutRestartsForTheNextRevocation(t *testing.T) {
	h, c := newConsumerCoordinator()
	h.topics["t"] = 6
	all := []proto.TP{tp(0), tp(1), tp(2), tp(3), tp(4), tp(5)}
	cgh(t, h, c, 1, "", 0)
	cgh(t, h, c, 2, "", 0)
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, all...)); got != "1-1@1 [t/0 t/1 t/2]" {
		t.Fatalf("1-1 asked to revoke three partitions: %s", got)
	}
	for i := 0; i < 10; i++ { // to 50s, holding all six
		h.fire(c, 5*time.Second)
		cgh(t, h, c, 1, "1-1", 1, all...)
		cgh(t, h, c, 2, "2-2", 2)
	}
	cgh(t, h, c, 3, "", 0) // 50s: a third member, a new target
	h.fire(c, 5*time.Second)
	// 55s: 1-1 revokes what it had to, and must now give up one more.
	if got := cghText(cgh(t, h, c, 1, "1-1", 1, tp(0), tp(1), tp(2))); got != "1-1@2 [t/0 t/1]" {
		t.Fatalf("1-1 after its first revocation: %s, want 1-1@2 [t/0 t/1]", got)
	}
	for i := 0; i < 11; i++ { // to 110s, holding t/2
		h.fire(c, 5*time.Second)
		cgh(t, h, c, 1, "1-1", 2, tp(0), tp(1), tp(2))
		cgh(t, h, c, 2, "2-2", c.Group("g").Consumer.Member("2-2").Epoch, c.Group("g").Consumer.Member("2-2").Assigned...)
		cgh(t, h, c, 3, "3-3", c.Group("g").Consumer.Member("3-3").Epoch, c.Group("g").Consumer.Member("3-3").Assigned...)
	}
	if got := fencedEvents(h); got != "" {
		t.Fatalf("fenced by 110s: %q, want nobody (the second revocation began at 55s)", got)
	}
	h.fire(c, 5*time.Second) // 115s: a minute after the second revocation began
	if got, want := fencedEvents(h), fmt.Sprintf("1-1@2 %s [t/0 t/1];", RevocationTimedOut); got != want {
		t.Errorf("fenced: %q, want %q", got, want)
	}
}
