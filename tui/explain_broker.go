package tui

import (
	"fmt"
	"strings"
)

// explainBroker says what broker events mean.
func explainBroker(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	d := e.Detail
	switch e.Kind {
	case "start":
		return Explanation{fmt.Sprintf("%s's process starts (%s). A broker reads its incarnation from its disk and bumps it, so the controller can tell a restart from a late heartbeat, then registers with the controller.", e.Node, d), NoteFaults}, true
	case "invariant":
		return Explanation{fmt.Sprintf("An invariant of the brokers' state broke here: %s. The checkers judge what clients saw; invariants judge what the brokers believe, after every event.", d), ""}, true
	case "append":
		if m := reAppend.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s leads %s and appended %s's batch at offsets %s..%s of its log, in leader epoch %s; its log end offset (LEO) is now %s. "+
				"The record is not committed yet: the high watermark stays below it until every in-sync replica has copied it.",
				e.Node, m[1], m[6], m[2], m[3], m[4], m[7])
			switch m[5] {
			case "1":
				text += fmt.Sprintf(" With acks=1, %s answers %s as soon as its own write is done, without waiting for any follower.", e.Node, m[6])
			case "0":
				text += fmt.Sprintf(" With acks=0, %s never answers: %s counted the send as done when it left.", e.Node, m[6])
			default:
				text += fmt.Sprintf(" With acks=all, %s holds the answer until the high watermark passes offset %s.", e.Node, m[3])
			}
			return Explanation{text, NoteAcks}, true
		}
		return Explanation{fmt.Sprintf("%s appended records to its log: %s.", e.Node, d), NoteWAL}, true
	case "replicate":
		if m := reReplicate.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s follows %s for %s: its fetch brought offsets %s..%s, which it appended as they were; its LEO is now %s. "+
				"Its next fetch asks for offset %s, and that tells the leader how far it has come: the leader raises the high watermark once every in-sync replica is past a record.",
				e.Node, m[4], m[1], m[2], m[3], m[5], m[5]), NoteHW}, true
		}
	case "fsync":
		if m := reFsync.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s's disk confirms that %s's offsets below %s are durable: a crash now keeps them. "+
				"Records above them are only in memory (the page cache) until the next fsync completes; a crash loses them.", e.Node, m[1], m[2])
			if next := sameStepNext(run, i, e.Node, "ack"); next >= 0 {
				text += " The acknowledgement that follows waited for this fsync (flush=every-batch)."
			}
			return Explanation{text, NoteWAL}, true
		}
		return Explanation{fmt.Sprintf("%s's fsync completed: %s.", e.Node, d), NoteWAL}, true
	case "ack":
		if m := reAck.FindStringSubmatch(d); m != nil {
			return explainBrokerAck(run, i, m), true
		}
		return Explanation{fmt.Sprintf("%s's send completed: %s.", e.Node, d), NoteAcks}, true
	case "hw":
		if m := reHW.FindStringSubmatch(d); m != nil {
			return explainHW(run, i, st, e, m), true
		}
	case "leader":
		if m := reLeader.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s learns from the controller that it leads %s in epoch %s, with ISR %s. It starts taking produce requests; its LEO is %s and its high watermark %s. "+
				"Every batch it appends from now on is stamped with epoch %s, which lets followers find where their logs diverge.", e.Node, m[1], m[2], m[5], m[3], m[4], m[2]), NoteElection}, true
		}
	case "follower":
		if m := reFollower.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s learns that %s leads %s in epoch %s: it becomes a follower and fetches from %s. Before it appends anything, it asks the leader where its own latest epoch ends in the leader's log, and truncates what the leader does not have.",
				e.Node, m[2], m[1], m[3], m[2]), NoteElection}, true
		}
	case "offline":
		return Explanation{fmt.Sprintf("%s: %s. With no in-sync replica alive and unclean election off, the partition has no leader: producers and consumers wait rather than lose committed data.", e.Node, d), NoteElection}, true
	case "isr", "isr-propose", "isr-rejected":
		text := fmt.Sprintf("%s: %s. ", e.Node, d)
		if m := reISRChange.FindStringSubmatch(d); m != nil {
			text = fmt.Sprintf("The in-sync replica set of %s changes from %s to %s (%s). ", m[1], m[2], m[3], m[4])
		}
		text += "A follower leaves the ISR when it has not caught up with the leader for replica.lag.time.max.ms, and comes back once it has. " +
			"The high watermark waits only for ISR members, and acks=all needs at least min.insync.replicas of them."
		if e.Kind == "isr-propose" {
			text += " The leader proposes the change; the controller decides (AlterPartition)."
		}
		return Explanation{text, NoteISR}, true
	case "truncate":
		if m := reTruncate.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s removes offsets %s..%s of %s from its log (%s). Those records were never committed: the current leader's log differs from there on. "+
				"A write the old leader acknowledged with acks=1 disappears here for good, and its offsets will hold other records.", e.Node, m[3], m[4], m[1], m[2]), NoteTruncation}, true
		}
		return Explanation{fmt.Sprintf("%s truncates its log: %s.", e.Node, d), NoteTruncation}, true
	case "recover":
		return Explanation{fmt.Sprintf("%s rebuilt its state from its disk after a restart: %s. Only what was fsynced before the crash is there; a torn or corrupt tail is cut at the first bad checksum.", e.Node, d), NoteWAL}, true
	case "reject":
		if strings.Contains(d, "NOT_ENOUGH_REPLICAS") {
			return Explanation{fmt.Sprintf("%s refuses the batch: %s. With acks=all, a write is only taken when the ISR has at least min.insync.replicas members, so that an acknowledged write is on enough replicas.", e.Node, d), NoteAcks}, true
		}
		return Explanation{fmt.Sprintf("%s refuses the batch: %s. The broker checks each idempotent producer's sequence numbers to keep its batches in order and without gaps.", e.Node, d), NoteIdempotence}, true
	case "dedup":
		return Explanation{fmt.Sprintf("%s: %s. The producer retried a batch the broker already has; with idempotence on, the broker recognises its producer id and sequence number and answers with the first offset instead of writing it twice.", e.Node, d), NoteIdempotence}, true
	}
	return Explanation{}, false
}
