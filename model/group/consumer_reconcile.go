package group

import (
	"slices"

	"mqsim/model/proto"
)

// Reconciliation: how one member's current assignment moves towards its target, as Kafka's
// CurrentAssignmentBuilder does (group-coordinator modern/consumer/CurrentAssignmentBuilder.java).
// A partition that moves leaves its old owner first: the old owner is asked to revoke it
// and stays in its epoch until a heartbeat no longer lists it; only then may the new owner
// have it. Each member goes through this on its own heartbeats; no member waits for the
// group as a whole.

// reconcile moves m towards the target assignment of epoch target, given the partitions
// its heartbeat says it owns. It reports whether anything about the member changed.
// noRevokeFirst is the planted bug of that name: a partition is handed over while its old
// owner may still hold it.
func (cg *ConsumerGroup) reconcile(m *ConsumerMember, target int32, owned []proto.TP, noRevokeFirst bool) bool {
	before := *m
	switch m.State {
	case MemberStable:
		if m.Epoch != target {
			cg.computeNext(m, m.Epoch, target, owned, noRevokeFirst)
		}
	case MemberUnrevoked:
		if !ownsAny(owned, m.Revoking) {
			// Revoked: the member moves past the epoch it revoked in (Kafka: epoch + 1)
			// and reconciles towards the latest target.
			cg.computeNext(m, m.Epoch+1, target, owned, noRevokeFirst)
		}
	case MemberUnreleased:
		cg.computeNext(m, m.Epoch, target, owned, noRevokeFirst)
	}
	return before.Epoch != m.Epoch || before.State != m.State || !slices.Equal(before.Assigned, m.Assigned) ||
		!slices.Equal(before.Revoking, m.Revoking)
}

// computeNext is Kafka's computeNextAssignment:
//
//	assigned      = current ∩ target
//	revoking      = current − assigned
//	pendingAssign = target − assigned − (partitions other members still own)
//
// With something to revoke that the member still owns, it stays in epoch (unrevoked) and
// keeps only assigned; otherwise it reaches the target epoch, with what it can have now.
func (cg *ConsumerGroup) computeNext(m *ConsumerMember, epoch, target int32, owned []proto.TP, noRevokeFirst bool) {
	var assigned, revoking, pending []proto.TP
	unreleased := false
	for _, tp := range m.Assigned {
		if slices.Contains(m.Target, tp) {
			assigned = append(assigned, tp)
		} else {
			revoking = append(revoking, tp)
		}
	}
	for _, tp := range m.Target {
		if slices.Contains(assigned, tp) {
			continue
		}
		if !noRevokeFirst && cg.ownedByOthers(m, tp) {
			unreleased = true
			continue
		}
		pending = append(pending, tp)
	}
	if len(revoking) > 0 && ownsAny(owned, revoking) {
		m.State, m.Assigned, m.Revoking = MemberUnrevoked, assigned, revoking
		m.setEpoch(epoch)
		return
	}
	m.Assigned = append(assigned, pending...)
	slices.SortFunc(m.Assigned, proto.CompareTP)
	m.Revoking = nil
	m.State = MemberStable
	if unreleased {
		m.State = MemberUnreleased
	}
	m.setEpoch(target)
}

// setEpoch moves the member to epoch, remembering the one it leaves.
func (m *ConsumerMember) setEpoch(epoch int32) {
	if epoch != m.Epoch {
		m.PreviousEpoch, m.Epoch = m.Epoch, epoch
	}
}

// ownsAny reports whether owned lists any of parts.
func ownsAny(owned, parts []proto.TP) bool {
	for _, tp := range parts {
		if slices.Contains(owned, tp) {
			return true
		}
	}
	return false
}
