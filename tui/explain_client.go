package tui

import (
	"fmt"
	"strings"

	"mqsim/model/client"
	"mqsim/model/proto"
)

// NoteTags is the note on consumer-side tag filtering (see Notes).
const NoteTags = "tag-filtering.md"

// NoteReplay is the note on seeks, offset resets and replay.
const NoteReplay = "replay-and-offset-resets.md"

// inDoubtText says why a send without an answer is in doubt.
const inDoubtText = "A send that times out is in doubt: the broker may or may not have written it. The history records such outcomes as unknown, and the checkers allow both."

// explainClient says what producer and consumer events mean; a group member's own events
// are explainMember's.
func explainClient(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	what := func(s string) string { return fmt.Sprintf("%s: %s %s. %s", e.Node, e.Kind, shownDetail(e), s) }
	switch d := e.Data.(type) {
	case client.SendBlocked, client.SendUnblocked, client.BufferExhausted, client.ThrottledBy:
		return explainBackPressureClient(e) // explain_quota.go
	case client.Acked:
		if d.Base < 0 {
			return Explanation{fmt.Sprintf("%s's batch of %d records to %s is done, at an offset it never learnt (acks=0 sends get no answer; a batch known to be in the log may have lost its own). "+
				"Its application counts the write as done.", e.Node, d.Records, d.TP), NoteAcks}, true
		}
		return Explanation{fmt.Sprintf("%s receives its acknowledgement for %s at offset %d: from now on, its application believes the write is safe. "+
			"Whether it is depends on the acks setting and on what the leader had replicated when it answered.", e.Node, d.TP, d.Base), NoteAcks}, true
	case client.TruncationDetected:
		return Explanation{fmt.Sprintf("%s: %s. The consumer noticed that the log it was reading was cut back below its position (the leader epoch of its last record ends earlier on the new leader).", e.Node, e.Detail), NoteTruncation}, true
	case client.PIDAssigned:
		if d.Bumped {
			return Explanation{fmt.Sprintf("%s keeps producer id %d and moves to epoch %d (KIP-360): the partition whose batch ended without success numbers its batches from sequence 0 again; any other partition first resolves the batches it sent under the old epoch, retried with their old epoch and sequence so the broker still recognises them, then starts at 0. A broker takes a higher epoch only from sequence 0 and refuses the old epoch from then on, so nothing the old epoch left unresolved can land after the new batches.", e.Node, d.PID, d.Epoch), NoteIdempotence}, true
		}
		return Explanation{fmt.Sprintf("%s got producer id %d epoch %d: with it and a sequence number per batch, brokers can drop the duplicates that retries create.", e.Node, d.PID, d.Epoch), NoteIdempotence}, true
	case client.Retrying:
		return Explanation{fmt.Sprintf("%s sends a batch again: %s. If the first attempt was written but its answer lost, the retry writes it twice — unless the producer is idempotent.", e.Node, e.Detail), NoteIdempotence}, true
	case client.InLog:
		return Explanation{fmt.Sprintf("%s: %s. A broker takes an idempotent producer's sequence numbers in order only, so a batch below an acknowledged one is in the log even though its own answer was lost; sending it again under a new producer id would write it twice.", e.Node, e.Detail), NoteIdempotence}, true
	case client.PIDReset:
		return Explanation{fmt.Sprintf("%s's batch of %s with sequence %d ended without success: the broker would wait for that sequence forever, so the producer bumps its epoch, keeping its producer id (after its %d requests in flight end), and numbers its batches from 0 again.",
			e.Node, d.TP, d.Seq, d.InFlight), NoteIdempotence}, true
	case client.NotController, client.DiscoverRetry, client.PIDTimeout:
		return Explanation{what("A producer asks the active controller for its producer id (InitProducerId); until it has one, an idempotent producer sends nothing."), NoteIdempotence}, true
	case client.RequestTimeout, client.Disconnected, client.LateAnswer, client.NoMetadata, client.NoSuchPartition:
		return Explanation{what(inDoubtText), NoteAcks}, true
	case client.BatchEnded:
		if d.Unknown {
			return Explanation{fmt.Sprintf("%s gives up on %d records to %s (%s), and an attempt may have been written: their outcome is unknown. %s", e.Node, d.Records, d.TP, d.Why, inDoubtText), NoteAcks}, true
		}
		return Explanation{fmt.Sprintf("%s gives up on %d records to %s (%s): no attempt can have been written, so the send failed.", e.Node, d.Records, d.TP, d.Why), NoteAcks}, true
	case client.Sending, client.BatchSent, client.MetadataLearned, client.MetadataTimeout:
		return Explanation{what("Producers group records per partition into batches and send each to the partition's leader, as the metadata says."), NoteClients}, true
	case client.Sought:
		how := fmt.Sprintf("to offset %d, at once", d.Seek.Offset)
		switch d.Seek.To {
		case client.SeekEarliest:
			how = "to the start of the log; it asks the leader where that is (ListOffsets) at its next poll"
		case client.SeekLatest:
			how = "to the end of the log (the high watermark); it asks the leader where that is at its next poll"
		case client.SeekTime:
			how = fmt.Sprintf("to the first record written at or after %s; at its next poll it asks the leader, which looks for the first batch with a timestamp that recent", d.Seek.Time)
		}
		return Explanation{fmt.Sprintf("%s moves its position in %s %s. A seek is the application's decision: what the consumer reads again after moving back is a declared re-read, what it jumps over a declared skip. "+
			"The history records it, so the checkers do not blame the broker for it.", e.Node, d.Seek.TP, how), NoteReplay}, true
	case client.SeekRefused:
		return Explanation{fmt.Sprintf("%s refuses the seek (%s): a consumer may only move its position in a partition it is assigned, to an offset that is not negative.", e.Node, d.Why), NoteReplay}, true
	case client.OffsetsReset:
		return Explanation{fmt.Sprintf("The group tool commits new offsets for group %s: %s. The group has no member now, so nobody overwrites them; the next member to take each partition starts where the tool put it. "+
			"Moving back replays records the group already processed (a declared re-read), moving forward skips records (a declared skip).", d.Group, e.Detail), NoteReplay}, true
	case client.ResetRefused:
		return Explanation{fmt.Sprintf("The group tool refuses to reset the offsets of group %s: it is %s. Its members keep their positions in memory and would commit over the reset; stop them first (the group must be Empty).", d.Group, d.State), NoteReplay}, true
	case client.PositionFound:
		if d.Reset == "time" {
			return Explanation{fmt.Sprintf("%s asked for the first record of %s written at or after %s and the leader found none that recent (or none readable yet): the consumer goes to the end of the log instead.", e.Node, d.TP, d.At), NoteReplay}, true
		}
		if d.Reset == "seek to time" {
			return Explanation{fmt.Sprintf("%s's seek to %s is resolved: the first record of %s written at or after that time is at offset %d, so it reads from there.", e.Node, d.At, d.TP, d.Offset), NoteReplay}, true
		}
		return Explanation{what("Consumers read only below the high watermark (read_committed ones only below the last stable offset, skipping aborted transactions), from the leader, and keep their own position in each partition."), NoteClients}, true
	case client.Polled, client.Assigned, client.OutOfRange, client.FetchTimeout:
		return Explanation{what("Consumers read only below the high watermark (read_committed ones only below the last stable offset, skipping aborted transactions), from the leader, and keep their own position in each partition."), NoteClients}, true
	case client.NoBroker, client.NoController, client.BadCommand, client.AssignRefused, client.SubscribeFailed, client.NotMember:
		return Explanation{fmt.Sprintf("%s refuses a command of the scenario: %s.", e.Node, e.Detail), NoteClients}, true
	case client.Scheduled:
		if d.Offset < 0 {
			return Explanation{fmt.Sprintf("%s's delayed send of %s to %s left with acks=0: the leader will append it when it is due, but the producer cannot know its id to cancel it.", e.Node, d.Value, d.TP), NoteDelayed}, true
		}
		return Explanation{fmt.Sprintf("The leader of %s stored %s's delayed message %s as a scheduled entry at offset %d, its id: it appends the message itself %s later. Until then consumers cannot see it, and the producer can still cancel it.",
			d.TP, e.Node, d.Value, d.Offset, d.Delay), NoteDelayed}, true
	case client.CancelAsked, client.CancelTimeout, client.CancelResult:
		return Explanation{what("A delayed message can be cancelled until the leader appends it: the cancellation is a marker the leader matches with the scheduled entry's offset."), NoteDelayed}, true
	case client.TagFilter:
		if len(d.Tags) == 0 {
			return Explanation{fmt.Sprintf("%s stops filtering: it reads every record.", e.Node), NoteTags}, true
		}
		return Explanation{fmt.Sprintf("%s reads only records tagged %v, filtered at the %s: at the broker the records it does not want never cross the network; at the client they are fetched and dropped.", e.Node, d.Tags, d.At), NoteTags}, true
	case client.RetryWait, client.Processed, client.ProcessFailed, client.RepublishLost, client.Republished, client.RepublishTimeout:
		return explainRetry(e.Node, e.Detail, d), true
	}
	if x, ok := explainTxnClient(e.Node, e.Detail, e.Data); ok {
		return x, true
	}
	return explainMember(run, i)
}

// explainTxnClient says what the events of transactional producers, read_committed
// consumers and pipelines mean.
func explainTxnClient(node, detail string, data any) (Explanation, bool) {
	switch d := data.(type) {
	case client.TxnCoordinatorFound:
		if d.Group != "" {
			return Explanation{fmt.Sprintf("%s found %s, the coordinator of group %s: it sends it the group's offsets (TxnOffsetCommit), which stay pending there until the transaction's marker decides them.", node, d.Coordinator, d.Group), NoteExactlyOnce}, true
		}
		return Explanation{fmt.Sprintf("%s found %s, the transaction coordinator of %s: the leader of the %s partition its transactional.id hashes to. Every transaction of this id goes through it.", node, d.Coordinator, d.ID, proto.TransactionStateTopic), NoteTransactions}, true
	case client.TxnInitialized:
		return Explanation{fmt.Sprintf("%s got producer id %d epoch %d for transactional.id %s. The coordinator bumped the epoch: any older instance with the same id is fenced from now on (its writes and commits are refused), and whatever transaction it left open is finished first.", node, d.PID, d.Epoch, d.ID), NoteTransactions}, true
	case client.TxnBegun:
		return Explanation{fmt.Sprintf("%s begins a transaction: the records it sends from now on, and the offsets it sends to the transaction, become visible to read_committed consumers all together at the commit, or never.", node), NoteTransactions}, true
	case client.TxnRefused:
		return Explanation{fmt.Sprintf("%s refuses %s: it is %s. A transactional producer sends only inside a transaction, begins one at a time, and after an error may only abort; once fenced it refuses everything.", node, d.Cmd, d.State), NoteTransactions}, true
	case client.TxnPartitionsAdded:
		return Explanation{fmt.Sprintf("%s: the coordinator added %s to the transaction, so it will write a marker there at the end. Before KIP-890 the producer does this itself before its first record to a partition; since, the partition leader does it.", node, proto.TPList(d.Partitions)), NoteTransactions}, true
	case client.TxnOffsetsAdded:
		return Explanation{fmt.Sprintf("%s: group %s's offsets %s are part of the transaction: the consumed input counts as consumed only if the output commits.", node, d.Group, offsetList(d.Offsets)), NoteExactlyOnce}, true
	case client.TxnRetry, client.TxnGaveUp:
		return Explanation{fmt.Sprintf("%s: %s. A coordinator that moved is looked up again; CONCURRENT_TRANSACTIONS means the previous transaction's markers are still being written. Each request is retried for delivery.timeout.ms at most.", node, detail), NoteTransactions}, true
	case client.TxnMustAbort:
		return Explanation{fmt.Sprintf("%s can no longer commit its transaction (%s): the application must abort it, and may then go on with a new one.", node, d.Why), NoteTransactions}, true
	case client.TxnStopped:
		if d.Fenced {
			return Explanation{fmt.Sprintf("%s (producer id %d epoch %d) is fenced: a newer instance with transactional.id %s holds a higher epoch. This zombie stops for good, so its late writes and commits cannot land.", node, d.PID, d.Epoch, d.ID), NoteTransactions}, true
		}
		return Explanation{fmt.Sprintf("%s stops for good: %s.", node, d.Why), NoteTransactions}, true
	case client.TxnEnded:
		return Explanation{fmt.Sprintf("%s: %s. A committed transaction's records and offsets become visible together; an aborted one's records stay in the log, skipped by read_committed consumers; an unknown outcome is the coordinator's to decide.", node, detail), NoteTransactions}, true
	case client.ReadCommittedSkipped:
		return Explanation{fmt.Sprintf("%s left out of %s %d records of aborted transactions and %d transaction markers: markers are never records for the application, and a read_committed consumer drops what aborted transactions wrote.", node, d.TP, d.Aborted, d.Control), NoteReadCommitted}, true
	case client.MirrorOffsetSync:
		return Explanation{fmt.Sprintf("%s (MirrorMaker 2) records that %s's record at offset %d is at offset %d of the remote topic. Checkpoints translate a group's committed offsets with the latest such sync: syncs are sparse (one per offset.lag.max records, or at each offset flush), so a translation can fall behind what the group had read.", node, d.TP, d.Upstream, d.Downstream), NoteGeo}, true
	case client.MirrorCheckpoint:
		return Explanation{fmt.Sprintf("%s (MirrorMaker 2) checkpoints group %s: its committed offset %d of %s becomes offset %d of the remote topic. A group that fails over starts there, so it reads again whatever lies between this translation and its last commit.", node, d.Group, d.Upstream, d.TP, d.Downstream), NoteGeo}, true
	case client.PipelineStep:
		return Explanation{fmt.Sprintf("%s (consume-transform-produce): %s. With transactions, the output and the input offsets commit together, so a crash between them cannot duplicate the output.", node, detail), NoteExactlyOnce}, true
	}
	return Explanation{}, false
}

// explainRetry says what a consumer does with records whose processing fails.
func explainRetry(node, detail string, data any) Explanation {
	text := fmt.Sprintf("%s: %s. ", node, detail)
	switch d := data.(type) {
	case client.ProcessFailed:
		switch d.Action {
		case client.RetryInPlace:
			text += "A blocking retry keeps the record's order but holds up its whole partition: one poison message stops everything behind it."
		case client.DropRecord:
			text += "With its attempts used up and no dead-letter topic, the record is gone: nobody will process it."
		case client.SendToRetryTopic:
			text += "A non-blocking retry moves the record to a retry topic and lets the partition carry on: the records behind it are no longer held up, but they may now be processed before it."
		case client.SendToDeadLetter:
			text += "The dead-letter topic keeps the records that failed every attempt, for a person or a repair job to look at, so that the partition is not held up by them."
		}
	case client.RetryWait:
		text += "A retry topic's records are processed only once due: the consumer pauses the partition until then."
	default:
		text += "Records whose processing fails go to a retry topic (processed again later) or to the dead-letter topic; producing them there is one more write that can fail."
	}
	return Explanation{text, NoteDLQ}
}

// explainMember says what a consumer-group member's own events mean.
func explainMember(run *Run, i int) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case client.Subscribed:
		static := ""
		if d.InstanceID != "" {
			static = fmt.Sprintf(" As a static member (group.instance.id %s) it keeps its partitions across a quick restart.", d.InstanceID)
		}
		return Explanation{fmt.Sprintf("%s subscribes to %v in group %s: it will find the group's coordinator, join, and consume the partitions the group leader assigns it (assignor %s, %s protocol), committing %s.%s",
			e.Node, d.Topics, d.Group, d.Assignor, d.Protocol, d.Commit, static), NoteGroups}, true
	case client.Left:
		if d.Static {
			return Explanation{fmt.Sprintf("%s stops consuming in group %s (%s). A static member sends no LeaveGroup: the coordinator keeps its partitions for it until its session times out, so a restart within session.timeout.ms costs no rebalance.",
				d.Member, d.Group, d.Why), NoteStatic}, true
		}
		return Explanation{fmt.Sprintf("%s leaves group %s (%s) with LeaveGroup, so that the group rebalances at once rather than after its session times out.", d.Member, d.Group, d.Why), NoteGroups}, true
	case client.PartitionsLost:
		return Explanation{fmt.Sprintf("%s learns it is no longer a member of group %s (%s): it drops %s without committing, because another member may own them already and a commit would be refused (or, worse, overwrite the new owner's). "+
			"What it processed since its last commit will be processed again by the new owner.", e.Node, d.Group, d.Why, proto.TPList(d.Partitions)), NoteGroups}, true
	case client.CoordinatorFound, client.CoordinatorLost:
		return Explanation{fmt.Sprintf("%s: %s %s. A group's coordinator is the leader of the %s partition the group id hashes to; when that leader changes, members find the new one with FindCoordinator.",
			e.Node, e.Kind, e.Detail, proto.OffsetsTopic), NoteGroups}, true
	case client.JoinError:
		return Explanation{fmt.Sprintf("The coordinator no longer knows %s's member id or generation in group %s (%s): its membership is gone with its partitions, and it joins again as a new member.", e.Node, d.Group, d.Err), NoteGroups}, true
	case client.CannotJoin:
		return Explanation{fmt.Sprintf("The coordinator refuses %s's join to group %s for good (%s): a configuration the group cannot take. It stops consuming.", e.Node, d.Group, d.Err), NoteGroups}, true
	case client.EpochAssigned:
		if d.Share {
			return Explanation{fmt.Sprintf("%s's ShareGroupHeartbeat in share group %s comes back with member epoch %d and assignment %s. It fetches from these partitions from its next poll on, with nothing to revoke: other members may fetch from the same partitions, and the share-partition leader hands each record to one of them at a time.",
				e.Node, d.Group, d.Epoch, proto.TPList(d.Assignment)), NoteKIP848}, true
		}
		return Explanation{fmt.Sprintf("%s's heartbeat in group %s (consumer protocol) comes back with member epoch %d and assignment %s. It revokes what is no longer in it (committing first under auto-commit) and starts on what is new once its current poll ends, then tells the coordinator at once with another heartbeat. Its commits carry epoch %d.",
			e.Node, d.Group, d.Epoch, proto.TPList(d.Assignment), d.Epoch), NoteKIP848}, true
	case client.ShareAcquired:
		var parts []string
		for _, r := range d.Ranges {
			parts = append(parts, fmt.Sprintf("offsets %d to %d (delivery %d)", r.First, r.Last, r.DeliveryCount))
		}
		return Explanation{fmt.Sprintf("%s acquired %s of %s for share group %s: the leader locks them for this member (group.share.record.lock.duration.ms) and counts a delivery. Until the member acknowledges them, or the lock expires, no other member gets them.",
			e.Node, strings.Join(parts, ", "), d.TP, d.Group), NoteShareGroups}, true
	case client.ShareAckOutcome:
		switch {
		case d.Unknown:
			return Explanation{fmt.Sprintf("%s got no answer for its acknowledgements of %s in share group %s: it cannot know whether the leader applied them. If not, the records come back when their locks expire, or when a new leader starts from the last persisted state, and another delivery follows.", e.Node, d.TP, d.Group), NoteShareGroups}, true
		case d.Err == proto.RequestTimedOut:
			return Explanation{fmt.Sprintf("The leader of %s could not learn whether its state write carrying %s's acknowledgements in share group %s landed (it timed out, or the leader lost the partition meanwhile): %s. The share coordinator may have persisted them, so their outcome is unknown; if not, the records come back when their locks expire.", d.TP, e.Node, d.Group, d.Err), NoteShareGroups}, true
		case d.Err != proto.None:
			return Explanation{fmt.Sprintf("The leader of %s refused %s's acknowledgements in share group %s: %s. An INVALID_RECORD_STATE means the member no longer holds the records (its lock expired, or a new leader does not know its acquisition): they will be, or were, delivered again.", d.TP, e.Node, d.Group, d.Err), NoteShareGroups}, true
		}
		return Explanation{fmt.Sprintf("The leader of %s applied and persisted %s's acknowledgements in share group %s: accepted records are done for the group, released ones available again (archived at the delivery count limit), rejected ones archived.", d.TP, e.Node, d.Group), NoteShareGroups}, true
	case client.ShareRecordFailed:
		return Explanation{fmt.Sprintf("%s failed to process %s offset %d (delivery %d) and acknowledges it with %s: a released record is delivered again, to any member, until group.share.delivery.count.limit archives it; a rejected one is archived at once.", e.Node, d.TP, d.Offset, d.DeliveryCount, d.Ack), NoteShareGroups}, true
	case client.ShareSessionReset:
		return Explanation{fmt.Sprintf("%s starts its share session with %s again from epoch 0 (%s): the leader lost the session or the request went unanswered. Acknowledgements the old session carried are failed or unknown.", e.Node, d.Leader, d.Err), NoteShareGroups}, true
	case client.ShareClosing:
		return Explanation{fmt.Sprintf("%s closes its share consumer: a ShareAcknowledge with session epoch -1 sends what is pending and releases the %d records it still held, so other members get them at once instead of after the lock expires; then it leaves share group %s.", e.Node, d.Released, d.Group), NoteShareGroups}, true
	case client.Joined:
		role := "the leader " + d.Leader + " computes the assignment"
		if d.Leader == d.Member {
			role = "it is the leader: it computes everyone's assignment"
		}
		return Explanation{fmt.Sprintf("%s is in generation %d of group %s as %s; %s and sends it in SyncGroup. Its heartbeats and commits carry generation %d from now on.",
			e.Node, d.Generation, d.Group, d.Member, role, d.Generation), NoteGroups}, true
	case client.LeaderAssigned:
		text := fmt.Sprintf("%s leads generation %d of group %s and runs the %s assignor over the members' subscriptions: %s. The coordinator stores the result and hands each member its share.",
			e.Node, d.Generation, d.Group, d.Assignor, e.Detail)
		if len(d.Held) > 0 {
			text += " Under the cooperative protocol a partition moves in two rebalances: its owner revokes it first, and only then does the next rebalance give it away, so that no two members ever read it at once."
		}
		if d.NoRevokeFirst {
			text += " With the planted bug no-revoke-first, moving partitions are handed over at once: for a moment two members consume the same partition."
		}
		return Explanation{text, NoteAssignors}, true
	case client.PartitionsAssigned:
		return Explanation{fmt.Sprintf("%s consumes %s of group %s from now on (%s). It starts each new partition at the group's committed offset, which it asks the coordinator for.",
			e.Node, proto.TPList(d.Partitions), d.Group, d.Why), NoteGroups}, true
	case client.CommittedOffsets:
		return Explanation{fmt.Sprintf("%s learns where group %s left off: %s. A partition with no committed offset starts where auto.offset.reset says.", e.Node, d.Group, e.Detail), NoteGroups}, true
	case client.MustRejoin:
		return Explanation{fmt.Sprintf("%s's heartbeat was answered REBALANCE_IN_PROGRESS: group %s is rebalancing, and %s must rejoin to stay in it (it leaves generation %d). Under the eager protocol it first gives up all its partitions.",
			e.Node, d.Group, d.Member, d.Generation), NoteGroups}, true
	case client.MetadataChangedRejoin:
		return Explanation{fmt.Sprintf("%s leads group %s and assigned topic %s when it had %d partitions; its refreshed metadata says %d. It rejoins so that the group rebalances and every partition gets an owner (Kafka's ConsumerCoordinator: \"cached metadata has changed\").",
			e.Node, d.Group, d.Topic, d.Before, d.After), NoteGroups}, true
	case client.HeartbeatFenced:
		return Explanation{fmt.Sprintf("%s's heartbeat in group %s was refused (%s): the coordinator removed %s or moved past generation %d. It has lost its partitions and must join again.",
			e.Node, d.Group, d.Err, d.Member, d.Generation), NoteGroups}, true
	case client.Fenced:
		return Explanation{fmt.Sprintf("%s stops consuming in group %s for good (%s): another instance has its group.instance.id, or the coordinator refuses its configuration.", e.Node, d.Group, d.Err), NoteStatic}, true
	case client.MaxPollExceeded:
		return Explanation{fmt.Sprintf("%s's application spent more than max.poll.interval.ms (%s) on one poll's records: the client leaves group %s by itself (KIP-62) and its partitions go to others while it is still processing them. Its commit afterwards will be refused.",
			e.Node, d.Interval, d.Group), NoteGroups}, true
	case client.Processing:
		return Explanation{fmt.Sprintf("%s hands %d records to its application, which needs %s to process them. Heartbeats go on meanwhile, but the next poll must come within max.poll.interval.ms.",
			e.Node, d.Records, d.Time), NoteGroups}, true
	case client.CommitSent:
		return Explanation{fmt.Sprintf("%s commits %s in group %s (%s), stamped with generation %d. Once stored, these are where the group resumes after a crash or rebalance: committing before processing risks losing records, after processing risks processing them twice.",
			e.Node, offsetList(d.Offsets), d.Group, d.Why, d.Generation), NoteGroups}, true
	case client.CommitFailed:
		return Explanation{fmt.Sprintf("%s's commit in group %s was refused (%s): CommitFailedException. %s", e.Node, d.Group, d.Err, fencingText), NoteGroups}, true
	}
	return Explanation{}, false
}
