package tui

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/broker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// explainBroker says what broker events (and the cluster's invariant marks) mean.
func explainBroker(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case broker.QuotaSet, broker.Throttled, broker.HeldMuted:
		return explainQuotaBroker(e) // explain_quota.go
	case broker.ShutdownAsked:
		return Explanation{fmt.Sprintf("%s got the signal to stop (SIGTERM). Rather than just exiting, it asks the controller for a controlled shutdown: its heartbeats now say WantShutDown until the controller says it may go.", e.Node), NoteElection}, true
	case broker.ShutdownFlushing:
		return Explanation{fmt.Sprintf("The controller let %s go. It fsyncs its logs (%d files) before its process exits, as Kafka's log manager flushes every log at a clean shutdown, so it restarts with nothing to recover.", e.Node, d.Files), NoteElection}, true
	case broker.ReplicaRemoved:
		return Explanation{fmt.Sprintf("A reassignment took %s's replica of %s away: it stops fetching (or leading) it. Kafka deletes the files; mqsim keeps them, unused.", e.Node, d.TP), NoteReplication}, true
	case broker.Started:
		return Explanation{fmt.Sprintf("%s's process starts (incarnation %d). A broker reads its incarnation from its disk and bumps it, so the controller can tell a restart from a late heartbeat, then registers with the controller.", e.Node, d.Incarnation), NoteFaults}, true
	case broker.ControllerSilent:
		return Explanation{fmt.Sprintf("%s heard nothing from controller %s within %s, so it tries %s. A broker must reach the active controller to register, heartbeat and report ISR changes; "+
			"it finds it by asking the controllers in turn.", e.Node, d.Silent, d.Within, d.Next), NoteRaft}, true
	case broker.ControllerRedirected:
		return Explanation{fmt.Sprintf("%s asked %s, which is not the active controller and names %s instead (NOT_CONTROLLER). Only the Raft leader that has applied the whole metadata log acts as controller; "+
			"the others redirect.", e.Node, d.Asked, d.Active), NoteRaft}, true
	case broker.ControllerUnknown:
		return Explanation{fmt.Sprintf("%s asked %s, which knows no active controller (no Raft leader, or one that has not applied its log yet), so it tries %s next. "+
			"Until a quorum elects a leader, no metadata can change.", e.Node, d.Asked, d.Next), NoteRaft}, true
	case cluster.InvariantBroken:
		return Explanation{fmt.Sprintf("An invariant of the brokers' state broke here: %s on %s in leader epoch %d: %s. The checkers judge what clients saw; invariants judge what the brokers believe, after every event.", d.Anomaly, d.TP, d.Epoch, d.Text), ""}, true
	case broker.Appended:
		return explainAppend(e, d), true
	case broker.Replicated:
		return Explanation{fmt.Sprintf("%s follows %s for %s: its fetch brought offsets %d..%d, which it appended as they were; its LEO is now %d. "+
			"Its next fetch asks for offset %d, and that tells the leader how far it has come: the leader raises the high watermark once every in-sync replica is past a record.",
			e.Node, d.Leader, d.TP, d.First, d.Last, d.LEO, d.LEO), NoteHW}, true
	case broker.Synced:
		text := fmt.Sprintf("%s's disk confirms that %s's offsets below %d are durable: a crash now keeps them. "+
			"Records above them are only in memory (the page cache) until the next fsync completes; a crash loses them.", e.Node, d.TP, d.Below)
		if next := sameStepNext(run, i, e.Node, "ack"); next >= 0 {
			text += " The acknowledgement that follows waited for this fsync (flush=every-batch)."
		}
		return Explanation{text, NoteWAL}, true
	case broker.Acked:
		return explainBrokerAck(run, i, d), true
	case broker.HWAdvanced:
		return explainHW(run, i, st, d), true
	case broker.Leading:
		return Explanation{fmt.Sprintf("%s learns from the controller that it leads %s in epoch %d, with ISR %s. It starts taking produce requests; its LEO is %d and its high watermark %d. "+
			"Every batch it appends from now on is stamped with epoch %d, which lets followers find where their logs diverge.", e.Node, d.TP, d.Epoch, nodeList(d.ISR), d.LEO, d.HW, d.Epoch), NoteElection}, true
	case broker.Following:
		return Explanation{fmt.Sprintf("%s learns that %s leads %s in epoch %d: it becomes a follower and fetches from %s. Before it appends anything, it asks the leader where its own latest epoch ends in the leader's log, and truncates what the leader does not have.",
			e.Node, d.Leader, d.TP, d.Epoch, d.Leader), NoteElection}, true
	case broker.Offline:
		return Explanation{fmt.Sprintf("%s: %s has no leader (epoch %d). With no in-sync replica alive and unclean election off, the partition has no leader: producers and consumers wait rather than lose committed data.", e.Node, d.TP, d.Epoch), NoteElection}, true
	case broker.ISRProposed:
		return Explanation{fmt.Sprintf("The in-sync replica set of %s changes from %s to %s (%s). ", d.TP, nodeList(d.From), nodeList(d.To), d.Why) + isrRule +
			" The leader proposes the change; the controller decides (AlterPartition).", NoteISR}, true
	case broker.ISRRetried:
		if d.After != proto.None {
			return Explanation{fmt.Sprintf("%s asks the controller again to make the ISR of %s %s: its answer, %s, was unexpected (it came from a controller that is not the active one), so the request is sent again after a short backoff. ", e.Node, d.TP, nodeList(d.ISR), d.After) + isrRule, NoteISR}, true
		}
		return Explanation{fmt.Sprintf("%s asks the controller again to make the ISR of %s %s: no answer came to its AlterPartition (the request or the answer was lost, or the controller was down). Until one comes the ISR cannot change. ", e.Node, d.TP, nodeList(d.ISR)) + isrRule, NoteISR}, true
	case broker.ISRRejected:
		switch d.Err {
		case proto.IneligibleReplica, proto.OperationNotAttempted:
			return Explanation{fmt.Sprintf("The controller refuses %s's ISR change for %s (%s): it applied nothing, so the leader goes back to its committed ISR. ", e.Node, d.TP, d.Err) + isrRule, NoteISR}, true
		case proto.NotController:
			return Explanation{fmt.Sprintf("%s's ISR change for %s reached a controller that is not the active one (%s); the leader will send it again. ", e.Node, d.TP, d.Err) + isrRule, NoteISR}, true
		}
		return Explanation{fmt.Sprintf("The controller refuses %s's ISR change for %s (%s). The leader cannot tell whether an earlier copy of its request was applied (its answer may have been lost), so it stays pending: the HW keeps counting the larger ISR, and it proposes nothing until new metadata tells it the ISR (Kafka's Partition.handleAlterPartitionError). ", e.Node, d.TP, d.Err) + isrRule, NoteISR}, true
	case broker.Truncated:
		return Explanation{fmt.Sprintf("%s removes offsets %d..%d of %s from its log (%s). Those records were never committed: the current leader's log differs from there on. "+
			"A write the old leader acknowledged with acks=1 disappears here for good, and its offsets will hold other records.", e.Node, d.From, d.To, d.TP, d.Cause), NoteTruncation}, true
	case broker.AppendRejected:
		return Explanation{fmt.Sprintf("%s cannot append %s's batch %d..%d of %s: its own log ends at %d, inside that batch, so the two logs differ where the epoch lookup said they agree (KAFKA-6361, before KIP-279). "+
			"Like Kafka's follower it stops replicating the partition until the next leader change; its log stays diverged.", e.Node, d.Leader, d.Base, d.Next-1, d.TP, d.LEO), NoteTruncation}, true
	case broker.LogReset:
		return Explanation{fmt.Sprintf("%s truncates its log: %s.", e.Node, e.Detail), NoteTruncation}, true
	case broker.Recovered:
		return Explanation{fmt.Sprintf("%s rebuilt its state from its disk after a restart: %s. Only what was fsynced before the crash is there; a torn or corrupt tail is cut at the first bad checksum.", e.Node, e.Detail), NoteWAL}, true
	case broker.ProduceFailed:
		return Explanation{fmt.Sprintf("%s answers %s's batch at offset %d of %s with %s instead of an acknowledgement: it stopped leading, or the replicas did not catch up within the request timeout. "+
			"The batch may still be in some log: the producer counts the send as failed or in doubt and retries.", e.Node, d.To, d.Offset, d.TP, d.Err), NoteAcks}, true
	case broker.BelowMinISR:
		return Explanation{fmt.Sprintf("%s refuses the batch: %s. With acks=all, a write is only taken when the ISR has at least min.insync.replicas members, so that an acknowledged write is on enough replicas.", e.Node, e.Detail), NoteAcks}, true
	case broker.SequenceRejected:
		return Explanation{fmt.Sprintf("%s refuses the batch: %s. The broker checks each idempotent producer's sequence numbers to keep its batches in order and without gaps.", e.Node, e.Detail), NoteIdempotence}, true
	case broker.TxnVerifying:
		return Explanation{fmt.Sprintf("%s holds the first batch of pid %d (transactional.id %s) on %s and asks the transaction coordinator %s whether %s is in the producer's open transaction. "+
			"Since KIP-890 a leader does not take a transaction's first write on faith: a late retry from a transaction that was already aborted would otherwise open a new transaction nobody will ever end, and hold back every read_committed consumer.",
			e.Node, d.ProducerID, d.TransactionalID, d.TP, d.Coordinator, d.TP), NoteTransactions}, true
	case broker.TxnVerifyFailed:
		answer := "the producer gets the coordinator's verdict"
		if d.Answer != d.Err {
			answer = fmt.Sprintf("the producer is told %s, which it retries: the coordinator could not answer now", d.Answer)
		}
		return Explanation{fmt.Sprintf("%s drops the held batch of %s on %s: the coordinator said %s, so %s. Nothing was appended.", e.Node, d.TransactionalID, d.TP, d.Err, answer), NoteTransactions}, true
	case broker.MarkerAppended:
		ends := "The producer had no transaction open here (the coordinator writes markers to every partition it added), so it changes nothing but the producer's epoch."
		if d.TxnFirst >= 0 && d.Marker == wal.ControlAbort {
			ends = fmt.Sprintf("It ends the transaction that began at offset %d: those records stay in the log, and the partition's aborted-transaction index now lists pid %d from %d to %d, so read_committed consumers skip them.", d.TxnFirst, d.ProducerID, d.TxnFirst, d.Offset)
		} else if d.TxnFirst >= 0 {
			ends = fmt.Sprintf("It ends the transaction that began at offset %d: its records become visible to read_committed consumers.", d.TxnFirst)
		}
		return Explanation{fmt.Sprintf("%s appends a %s marker for pid %d at offset %d of %s: a control batch the coordinator asked for with WriteTxnMarkers. %s The last stable offset, the limit of read_committed reads, is now %d.",
			e.Node, d.Marker, d.ProducerID, d.Offset, d.TP, ends, d.LSO), NoteReadCommitted}, true
	case broker.MarkerRejected:
		return Explanation{fmt.Sprintf("%s refuses the %s marker for pid %d on %s: %s. A marker with an older producer epoch, or from a coordinator older than the last one that wrote for this producer, comes from someone who lost their place.", e.Node, d.Marker, d.ProducerID, d.TP, d.Err), NoteTransactions}, true
	case broker.MarkersAnswered:
		return Explanation{fmt.Sprintf("%s answers the coordinator %s for pid %d's markers: %s. A marker counts only once the ISR has it, like an acks=all write; the coordinator completes the transaction when every partition said NONE.", e.Node, d.To, d.ProducerID, e.Detail), NoteTransactions}, true
	case broker.Deduplicated:
		return Explanation{fmt.Sprintf("%s: %s. The producer retried a batch the broker already has; with idempotence on, the broker recognises its producer id and sequence number and answers with the first offset instead of writing it twice.", e.Node, e.Detail), NoteIdempotence}, true
	}
	return explainShare(run, i, st) // explain_share.go: the share-group events
}

// isrRule is what every ISR change explanation ends with.
const isrRule = "A follower leaves the ISR when it has not caught up with the leader for replica.lag.time.max.ms, and comes back once it has. " +
	"The high watermark waits only for ISR members, and acks=all needs at least min.insync.replicas of them."

// nodeList writes node names as the trace does: "[b1 b2]".
func nodeList(names []string) string { return "[" + strings.Join(names, " ") + "]" }

// explainAppend says what a leader's append means, for a producer's batch or the group
// coordinator's.
func explainAppend(e sim.Event, d broker.Appended) Explanation {
	if d.Coordinator && d.TP.Topic == proto.TransactionStateTopic {
		return Explanation{fmt.Sprintf("%s, the transaction coordinator for %s, appended a transactional id's next state at offsets %d..%d. "+
			"The change takes effect only once the in-sync replicas have it (the high watermark passes offset %d): then a coordinator that takes over after a crash reads the same state from this log.",
			e.Node, d.TP, d.First, d.Last, d.Last), NoteTransactions}
	}
	if d.Coordinator {
		return Explanation{fmt.Sprintf("%s appended records to its log: %s.", e.Node, e.Detail), NoteWAL}
	}
	text := fmt.Sprintf("%s leads %s and appended %s's batch at offsets %d..%d of its log, in leader epoch %d; its log end offset (LEO) is now %d. "+
		"The record is not committed yet: the high watermark stays below it until every in-sync replica has copied it.",
		e.Node, d.TP, d.From, d.First, d.Last, d.Epoch, d.LEO)
	switch d.Acks {
	case proto.AcksLeader:
		text += fmt.Sprintf(" With acks=1, %s answers %s as soon as its own write is done, without waiting for any follower.", e.Node, d.From)
	case proto.AcksNone:
		text += fmt.Sprintf(" With acks=0, %s never answers: %s counted the send as done when it left.", e.Node, d.From)
	default:
		text += fmt.Sprintf(" With acks=all, %s holds the answer until the high watermark passes offset %d.", e.Node, d.Last)
	}
	return Explanation{text, NoteAcks}
}

// explainBrokerAck says why a leader's answer came when it did.
func explainBrokerAck(run *Run, i int, d broker.Acked) Explanation {
	e := run.Events[i]
	appended := -1
	for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
		a := run.Events[k]
		if ap, ok := a.Data.(broker.Appended); ok && a.Node == e.Node && ap.TP == d.TP && ap.First == d.Offset && !ap.Coordinator {
			appended = k
			break
		}
	}
	var text string
	if d.Acks == proto.AcksAll {
		text = fmt.Sprintf("%s answers %s for offset %d of %s with acks=all. It held the answer until the high watermark (%d) passed the batch: every in-sync replica has it, so losing any one of them cannot lose it.",
			e.Node, d.To, d.Offset, d.TP, d.HW)
	} else {
		text = fmt.Sprintf("%s answers %s for offset %d of %s with acks=%s, after its own append only. The high watermark is %d: ", e.Node, d.To, d.Offset, d.TP, d.Acks, d.HW)
		if d.HW > d.Offset {
			text += "this time the followers already have the record."
		} else {
			text += fmt.Sprintf("offset %d is NOT committed, only %s has it. If %s fails before a follower copies it, this acknowledged write is lost.", d.Offset, e.Node, e.Node)
		}
	}
	if appended >= 0 {
		a := run.Events[appended]
		text += fmt.Sprintf(" It waited %s since the append (step %d)", sim.FormatDuration(e.Time.Sub(a.Time)), a.Step)
		if k := prevSameStep(run, i, e.Node, "fsync"); k >= 0 {
			text += ", the last part for its fsync (flush=every-batch)"
		}
		text += "."
	}
	return Explanation{text, NoteAcks}
}

// explainHW says why the high watermark moved.
func explainHW(run *Run, i int, st *State, d broker.HWAdvanced) Explanation {
	e := run.Events[i]
	if d.Leader != "" {
		return Explanation{fmt.Sprintf("%s follows %s and learns from the leader's fetch response that the high watermark of %s is now %d (it was %d). "+
			"Followers learn the HW one fetch behind the leader, so for a moment they report an older one.", e.Node, d.Leader, d.TP, d.To, d.From), NoteHW}
	}
	var isr []string
	for _, p := range st.Parts {
		if p.Topic == d.TP.Topic && p.Partition == d.TP.Partition {
			isr = p.ISR
		}
	}
	text := fmt.Sprintf("%s leads %s and raises its high watermark from %d to %d: every member of the ISR %s now has the offsets below %d, so they are committed. "+
		"Consumers may read them, and no clean election can lose them.", e.Node, d.TP, d.From, d.To, nodeList(isr), d.To)
	// Which follower's progress moved it: the last ISR member to replicate up to the HW.
	last, lastName := -1, ""
	for _, name := range isr {
		if name == e.Node {
			continue
		}
		for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
			r := run.Events[k]
			if r.Node != name {
				continue
			}
			// The member's latest report for the partition says whether it had got there.
			var leo int64
			switch m := r.Data.(type) {
			case broker.Replicated:
				if m.TP != d.TP {
					continue
				}
				leo = m.LEO
			case broker.Following:
				if m.TP != d.TP {
					continue
				}
				leo = m.LEO
			default:
				continue
			}
			if leo >= d.To && k > last {
				last, lastName = k, name
			}
			break
		}
	}
	if last >= 0 && slices.Contains(isr, lastName) {
		text += fmt.Sprintf(" The last in-sync follower to get there was %s (step %d); the leader learned it from %s's next fetch.", lastName, run.Events[last].Step, lastName)
	}
	return Explanation{text, NoteHW}
}
