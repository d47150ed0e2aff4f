package tui

import (
	"fmt"

	"mqsim/model/broker"
	"mqsim/model/proto"
)

// NoteShareGroups is the note on share groups (KIP-932).
const NoteShareGroups = "share-groups.md"

// explainShare says what the share-group events of a broker mean (KIP-932: the
// share-partition leader and the share coordinator, model/broker/share.go); explainBroker
// asks it for the events it does not know.
func explainShare(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case broker.ShareAcquired:
		n := int64(0)
		redelivered := false
		for _, r := range d.Ranges {
			n += r.Last - r.First + 1
			redelivered = redelivered || r.DeliveryCount > 1
		}
		text := fmt.Sprintf("%s leads %s, so it hands out its records to share group %s: member %s acquires %d record(s), locked to it until %s. "+
			"No other member of the group gets them meanwhile; if %s neither accepts, releases nor rejects them by then, the lock expires and they go to someone else. Acquiring writes nothing to disk.",
			e.Node, d.TP, d.Group, d.Member, n, d.Until, d.Member)
		if redelivered {
			text += " A delivery count above 1 means the record was delivered before and came back (released, lock expired, or its consumer went away)."
		}
		return Explanation{text, NoteShareGroups}, true
	case broker.ShareAckStaged:
		return Explanation{fmt.Sprintf("%s checked %s's acknowledgements of %s (%s): every record is acquired by that member, so they are valid. They do not take effect yet: "+
			"the leader first writes the share-partition's new state to the share coordinator, and answers the member only once that write is replicated.", e.Node, d.Member, d.TP, e.Detail), NoteShareGroups}, true
	case broker.ShareAckRefused:
		if d.Rolled {
			return Explanation{fmt.Sprintf("The state write carrying %s's acknowledgements of %s failed (%s), so they are rolled back: the records are acquired by %s again, their locks still running. "+
				"The member is told the acknowledgement failed; the records will be delivered again.", d.Member, d.TP, d.Err, d.Member), NoteDelivery}, true
		}
		why := "a record in them is not acquired by this member: its lock expired and another member may have it, or it was already acknowledged"
		if d.Err != proto.InvalidRecordState {
			why = string(d.Err)
		}
		return Explanation{fmt.Sprintf("%s refuses all of %s's acknowledgements of %s (one partition's acknowledgements in a request stand or fall together): %s.", e.Node, d.Member, d.TP, why), NoteDelivery}, true
	case broker.ShareAckApplied:
		if d.Unpersisted {
			return Explanation{fmt.Sprintf("%s applies acknowledgements of %s before the state write is persisted (the planted bug share-ack-before-persist): %s. "+
				"If this leader fails before the write lands, the next leader reads the old state and delivers accepted records again.", e.Node, d.TP, e.Detail), NoteDelivery}, true
		}
		return Explanation{fmt.Sprintf("The share coordinator replicated the state write, so %s now applies the acknowledgements of %s: %s. "+
			"Accepted and rejected records are done for the group; released ones are available again. The share-partition start offset (SPSO) moves past every done record at the front of the window.", e.Node, d.TP, e.Detail), NoteShareGroups}, true
	case broker.ShareLockExpired:
		return Explanation{fmt.Sprintf("Acquisition locks on %s ran out: %s. The member that held them was too slow (or is gone); the records are available to the group again, "+
			"or archived if they reached the delivery count limit. Like SQS's visibility timeout, this gives at-least-once delivery: the slow member may still process them.", d.TP, e.Detail), NoteDelivery}, true
	case broker.ShareArchived:
		text := fmt.Sprintf("%s archives %s: %s. An archived record is never delivered to group %s again.", e.Node, d.TP, e.Detail, d.Group)
		switch d.Reason {
		case broker.ArchiveDeliveryLimit:
			text += " It was delivered group.share.delivery.count.limit times without being accepted: a poison record. Kafka 4.2 has no dead-letter queue for it; the record stays in the log."
		case broker.ArchiveLogStart:
			text += " Retention deleted it from the log before the group was done with it."
		}
		return Explanation{text, NoteDLQ}, true
	case broker.ShareStateWritten:
		if d.Err != proto.None {
			return Explanation{fmt.Sprintf("%s could not persist the state of %s for group %s: %s. What the write carried is rolled back (lock expiries stay applied).", e.Node, d.TP, d.Group, d.Err), NoteShareGroups}, true
		}
		return Explanation{fmt.Sprintf("%s's state write for %s (group %s) is replicated on the share coordinator's partition of %s: SPSO %d and %d batch(es) of record states. "+
			"A new leader after a failover starts from this.", e.Node, d.TP, d.Group, proto.ShareGroupStateTopic, d.Start, d.Batches), NoteShareGroups}, true
	case broker.ShareStateRead:
		if d.Err != proto.None {
			return Explanation{fmt.Sprintf("%s could not read the persisted state of %s for group %s (%s); its fetches get that error and the next one tries again.", e.Node, d.TP, d.Group, d.Err), NoteShareGroups}, true
		}
		if !d.Found {
			return Explanation{fmt.Sprintf("Nothing was ever persisted for group %s on %s, so %s starts the window at offset %d, as share.auto.offset.reset says, and writes that start.", d.Group, d.TP, e.Node, d.Start), NoteShareGroups}, true
		}
		return Explanation{fmt.Sprintf("%s now leads %s and read group %s's persisted state before serving: it starts at SPSO %d with the persisted record states. "+
			"Records the old leader had handed out but that were never acknowledged were not persisted as acquired, so they are delivered again.", e.Node, d.TP, d.Group, d.Start), NoteShareGroups}, true
	case broker.ShareWindowDropped:
		return Explanation{fmt.Sprintf("%s no longer leads %s (%s), so it forgets group %s's in-flight window, %d acquired record(s) included. The new leader rebuilds it from the persisted state.", e.Node, d.TP, d.Why, d.Group, d.Held), NoteElection}, true
	case broker.ShareCoordinatorLoaded:
		return Explanation{fmt.Sprintf("%s leads partition %d of %s, so it is the share coordinator for the share-partitions that hash there: it replayed %d record(s), the latest state of %d share-partition(s).", e.Node, d.Partition, proto.ShareGroupStateTopic, d.Records, d.Keys), NoteShareGroups}, true
	case broker.ShareStatePersisted:
		if d.Err != proto.None {
			return Explanation{fmt.Sprintf("The share coordinator on %s refuses a state request for %s: %s. A lower leader epoch means the request comes from a deposed share-partition leader, which must not overwrite the new one's state.", e.Node, d.Key, d.Err), NoteShareGroups}, true
		}
		return Explanation{fmt.Sprintf("The share coordinator on %s answers the state request for %s now that its record is replicated: %s.", e.Node, d.Key, e.Detail), NoteShareGroups}, true
	}
	return Explanation{}, false
}
