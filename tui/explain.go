package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mqsim/sim"
)

// Notes are the teaching notes the Explain pane points to, by stable file name under
// notes/. Each explanation names the one that covers it.
var Notes = []string{
	NoteAcks, NoteHW, NoteISR, NoteElection, NoteTruncation, NoteIdempotence, NoteWAL, NoteFaults, NoteClients,
	NoteQueues, NoteDelivery, NoteDLQ, NoteBackPressure, NoteRouting, NoteOrdering, NoteDelayed, NoteRaft,
}

// Note file names.
const (
	NoteAcks        = "acks.md"
	NoteHW          = "high-watermark.md"
	NoteISR         = "isr.md"
	NoteElection    = "leader-election.md"
	NoteTruncation  = "truncation.md"
	NoteIdempotence = "idempotence.md"
	NoteWAL         = "wal.md"
	NoteFaults      = "faults.md"
	NoteClients     = "clients.md"
)

// Explanation is the current event in plain words.
type Explanation struct {
	Text string
	Note string // a file under notes/, or ""
}

var (
	reAppend    = regexp.MustCompile(`^(\S+): offsets (\d+)\.\.(\d+) in epoch (\d+) \(acks=(\S+) from (\S+)\), LEO (\d+)`)
	reReplicate = regexp.MustCompile(`^(\S+): offsets (\d+)\.\.(\d+) from (\S+), LEO (\d+)`)
	reFsync     = regexp.MustCompile(`^(\S+): offsets below (\d+) are on disk`)
	reAck       = regexp.MustCompile(`^(\S+): offset (\d+) to (\S+) \(acks=(\S+), HW (\d+)\)`)
	reHW        = regexp.MustCompile(`^(\S+): HW (\d+) -> (\d+)(?: \(from (\S+)\))?`)
	reElection  = regexp.MustCompile(`^(\S+): (\S+) leads in epoch (\d+), ISR (\[[^\]]*\]) \((.*)\)$`)
	reUnclean   = regexp.MustCompile(`^(\S+): UNCLEAN election of (\S+), epoch (\d+): .*\((.*)\)$`)
	reLeader    = regexp.MustCompile(`^(\S+): leader in epoch (\d+), LEO (\d+), HW (\d+), ISR (\[[^\]]*\])`)
	reFollower  = regexp.MustCompile(`^(\S+): follows (\S+) in epoch (\d+), LEO (\d+), HW (\d+)`)
	reISRChange = regexp.MustCompile(`^(\S+): ISR (\[[^\]]*\]) -> (\[[^\]]*\]) \((.*)\)$`)
	reTruncate  = regexp.MustCompile(`^(\S+): (.*): removed offsets (\d+)\.\.(\d+)$`)
	reClientAck = regexp.MustCompile(`^(\S+) offsets? (\d+)`)
)

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Explain says what event i of the run means, given the state right after it.
func Explain(run *Run, i int, st *State) Explanation {
	if i < 0 || i >= len(run.Events) {
		return Explanation{Text: "No event here."}
	}
	if run.queueMode() {
		if ex, ok := explainQueue(run, i, st); ok {
			return ex
		}
	}
	e := run.Events[i]
	d := e.Detail
	switch e.Kind {
	case "controller":
		return Explanation{fmt.Sprintf("The controller starts (%s). It keeps the cluster's metadata — topics, each partition's replicas, leader, leader epoch and ISR — and watches the brokers' heartbeats. "+
			"(Kafka runs a quorum of KRaft controllers; here it is one node.)", d), NoteElection}
	case "start":
		return Explanation{fmt.Sprintf("%s's process starts (%s). A broker reads its incarnation from its disk and bumps it, so the controller can tell a restart from a late heartbeat, then registers with the controller.", e.Node, d), NoteFaults}
	case "register":
		return Explanation{fmt.Sprintf("The controller registers %s. A broker counts as alive while its heartbeats keep arriving within the session timeout; after that the controller fences it.", d), NoteElection}
	case "topic":
		return Explanation{fmt.Sprintf("The controller %s: it assigns each partition's replicas to brokers, makes the first one leader in epoch 0 with every replica in the ISR, and tells the brokers (LeaderAndIsr).", d), NoteElection}
	case "invariant":
		return Explanation{fmt.Sprintf("An invariant of the brokers' state broke here: %s. The checkers judge what clients saw; invariants judge what the brokers believe, after every event.", d), ""}
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
			return Explanation{text, NoteAcks}
		}
		return Explanation{fmt.Sprintf("%s appended records to its log: %s.", e.Node, d), NoteWAL}
	case "replicate":
		if m := reReplicate.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s follows %s for %s: its fetch brought offsets %s..%s, which it appended as they were; its LEO is now %s. "+
				"Its next fetch asks for offset %s, and that tells the leader how far it has come: the leader raises the high watermark once every in-sync replica is past a record.",
				e.Node, m[4], m[1], m[2], m[3], m[5], m[5]), NoteHW}
		}
	case "fsync":
		if m := reFsync.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s's disk confirms that %s's offsets below %s are durable: a crash now keeps them. "+
				"Records above them are only in memory (the page cache) until the next fsync completes; a crash loses them.", e.Node, m[1], m[2])
			if next := sameStepNext(run, i, e.Node, "ack"); next >= 0 {
				text += " The acknowledgement that follows waited for this fsync (flush=every-batch)."
			}
			return Explanation{text, NoteWAL}
		}
		return Explanation{fmt.Sprintf("%s's fsync completed: %s.", e.Node, d), NoteWAL}
	case "ack":
		if m := reAck.FindStringSubmatch(d); m != nil {
			return explainBrokerAck(run, i, m)
		}
		if m := reClientAck.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s receives its acknowledgement for %s at offset %s: from now on, its application believes the write is safe. "+
				"Whether it is depends on the acks setting and on what the leader had replicated when it answered.", e.Node, m[1], m[2]), NoteAcks}
		}
		return Explanation{fmt.Sprintf("%s's send completed: %s.", e.Node, d), NoteAcks}
	case "hw":
		if m := reHW.FindStringSubmatch(d); m != nil {
			return explainHW(run, i, st, e, m)
		}
	case "election":
		if m := reUnclean.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("No in-sync replica of %s is alive, and unclean.leader.election.enable is on: the controller makes %s leader in epoch %s although it is not in the ISR (%s). "+
				"It may lack records that were committed and acknowledged: they are lost, and their offsets will be reused for new records.",
				m[1], m[2], m[3], m[4]), NoteElection}
		}
		if m := reElection.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("The controller elects %s to lead %s in epoch %s (why: %s). A clean election picks a live member of the ISR %s: "+
				"each has every committed record (those below the high watermark). Records only the old leader had — acknowledged with acks=1 but never replicated — were not committed: the new leader's log does not have them.",
				m[2], m[1], m[3], m[5], m[4]), NoteElection}
		}
	case "fence":
		name, why, _ := strings.Cut(d, ": ")
		return Explanation{fmt.Sprintf("The controller fences %s: %s, longer than the session timeout. It stops counting %s as alive, removes it from every ISR and elects new leaders for the partitions %s led.",
			name, why, name, name), NoteElection}
	case "leader":
		if m := reLeader.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s learns from the controller that it leads %s in epoch %s, with ISR %s. It starts taking produce requests; its LEO is %s and its high watermark %s. "+
				"Every batch it appends from now on is stamped with epoch %s, which lets followers find where their logs diverge.", e.Node, m[1], m[2], m[5], m[3], m[4], m[2]), NoteElection}
		}
	case "follower":
		if m := reFollower.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s learns that %s leads %s in epoch %s: it becomes a follower and fetches from %s. Before it appends anything, it asks the leader where its own latest epoch ends in the leader's log, and truncates what the leader does not have.",
				e.Node, m[2], m[1], m[3], m[2]), NoteElection}
		}
	case "offline":
		return Explanation{fmt.Sprintf("%s: %s. With no in-sync replica alive and unclean election off, the partition has no leader: producers and consumers wait rather than lose committed data.", e.Node, d), NoteElection}
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
		return Explanation{text, NoteISR}
	case "truncate":
		if m := reTruncate.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s removes offsets %s..%s of %s from its log (%s). Those records were never committed: the current leader's log differs from there on. "+
				"A write the old leader acknowledged with acks=1 disappears here for good, and its offsets will hold other records.", e.Node, m[3], m[4], m[1], m[2]), NoteTruncation}
		}
		return Explanation{fmt.Sprintf("%s truncates its log: %s.", e.Node, d), NoteTruncation}
	case "truncation":
		return Explanation{fmt.Sprintf("%s: %s. The consumer noticed that the log it was reading was cut back below its position (the leader epoch of its last record ends earlier on the new leader).", e.Node, d), NoteTruncation}
	case "recover":
		return Explanation{fmt.Sprintf("%s rebuilt its state from its disk after a restart: %s. Only what was fsynced before the crash is there; a torn or corrupt tail is cut at the first bad checksum.", e.Node, d), NoteWAL}
	case "crash":
		return Explanation{fmt.Sprintf("%s crashes (%s). Its memory is gone: in-flight requests, timers, anything not fsynced. Its disk keeps what was synced; when it restarts it recovers from there.", e.Node, d), NoteFaults}
	case "restart":
		return Explanation{fmt.Sprintf("%s restarts with a fresh process that recovers from what its disk kept.", e.Node), NoteFaults}
	case "pause":
		return Explanation{fmt.Sprintf("%s is paused, as by a long GC pause or a stopped VM: it receives nothing and no timer fires; what arrives waits. The others may decide it is dead.", e.Node), NoteFaults}
	case "resume":
		return Explanation{fmt.Sprintf("%s resumes (%s), and acts on old news: it may still believe it leads.", e.Node, d), NoteFaults}
	case "partition":
		return Explanation{fmt.Sprintf("The network splits into %s: messages between the sides are lost, in both directions. Each side goes on with what it can reach.", d), NoteFaults}
	case "heal":
		return Explanation{"The network heals: cut links carry messages again. Messages lost meanwhile stay lost; clients and followers retry.", NoteFaults}
	case "cut":
		return Explanation{fmt.Sprintf("The link %s -> %s is cut: messages on it are lost, the other direction still works.", e.Node, e.Peer), NoteFaults}
	case "clog", "unclog":
		return Explanation{fmt.Sprintf("The link %s -> %s is %sged: messages on it are held, then delivered in order when it is unclogged (%s).", e.Node, e.Peer, e.Kind, d), NoteFaults}
	case "drop-next":
		return Explanation{fmt.Sprintf("The next message on %s -> %s will be lost (%s).", e.Node, e.Peer, d), NoteFaults}
	case "reject":
		if strings.Contains(d, "NOT_ENOUGH_REPLICAS") {
			return Explanation{fmt.Sprintf("%s refuses the batch: %s. With acks=all, a write is only taken when the ISR has at least min.insync.replicas members, so that an acknowledged write is on enough replicas.", e.Node, d), NoteAcks}
		}
		return Explanation{fmt.Sprintf("%s refuses the batch: %s. The broker checks each idempotent producer's sequence numbers to keep its batches in order and without gaps.", e.Node, d), NoteIdempotence}
	case "dedup":
		return Explanation{fmt.Sprintf("%s: %s. The producer retried a batch the broker already has; with idempotence on, the broker recognises its producer id and sequence number and answers with the first offset instead of writing it twice.", e.Node, d), NoteIdempotence}
	case "active":
		return Explanation{fmt.Sprintf("%s becomes the active controller (%s). The controllers run Raft over the metadata log (KRaft); the Raft leader acts only once it has applied the whole log, so it goes on from every decision its predecessors committed. Before fencing anyone it gives every live broker a new session.", e.Node, d), NoteElection}
	case "resign":
		return Explanation{fmt.Sprintf("%s stops acting as the controller: %s. Its decisions that did not commit are void; the next active controller decides again from the committed log.", e.Node, d), NoteElection}
	case "apply":
		return Explanation{fmt.Sprintf("%s applies a committed batch of the metadata log: %s. Every controller applies the same records in the same order, so any of them can take over.", e.Node, d), NoteElection}
	case "discover":
		return Explanation{fmt.Sprintf("%s looks for the active controller: %s. Only the active controller answers; the others say NOT_CONTROLLER and name it when they know it.", e.Node, d), NoteElection}
	case "pid":
		return Explanation{fmt.Sprintf("%s got %s: with it and a sequence number per batch, brokers can drop the duplicates that retries create.", e.Node, d), NoteIdempotence}
	case "retry":
		return Explanation{fmt.Sprintf("%s sends a batch again: %s. If the first attempt was written but its answer lost, the retry writes it twice — unless the producer is idempotent.", e.Node, d), NoteIdempotence}
	case "in-log":
		return Explanation{fmt.Sprintf("%s: %s. A broker takes an idempotent producer's sequence numbers in order only, so a batch below an acknowledged one is in the log even though its own answer was lost; sending it again under a new producer id would write it twice.", e.Node, d), NoteIdempotence}
	case "timeout", "disconnect", "late", "fail", "produce-error":
		return Explanation{fmt.Sprintf("%s: %s %s. A send that times out is in doubt: the broker may or may not have written it. The history records such outcomes as unknown, and the checkers allow both.", e.Node, e.Kind, d), NoteAcks}
	case "send", "batch", "metadata":
		return Explanation{fmt.Sprintf("%s: %s %s. Producers group records per partition into batches and send each to the partition's leader, as the metadata says.", e.Node, e.Kind, d), NoteClients}
	case "poll", "position", "assign", "reset":
		return Explanation{fmt.Sprintf("%s: %s %s. Consumers read only below the high watermark, from the leader, and keep their own position in each partition.", e.Node, e.Kind, d), NoteClients}
	}
	text := fmt.Sprintf("%s %s", e.Node, e.Kind)
	if d != "" {
		text += ": " + d
	}
	return Explanation{Text: text + "."}
}

// sameStepNext finds the next event of kind by node emitted in the same kernel step as
// event i, or -1.
func sameStepNext(run *Run, i int, node, kind string) int {
	for k := i + 1; k < len(run.Events) && run.Events[k].Step == run.Events[i].Step && run.Events[k].Time == run.Events[i].Time; k++ {
		if run.Events[k].Node == node && run.Events[k].Kind == kind {
			return k
		}
	}
	return -1
}

// scanBack is how far explanations look back for the event that caused another; it
// bounds the cost of explaining one event.
const scanBack = 5_000

// explainBrokerAck says why a leader's answer came when it did.
func explainBrokerAck(run *Run, i int, m []string) Explanation {
	e := run.Events[i]
	tp, off, to, acks, hw := m[1], atoi(m[2]), m[3], m[4], atoi(m[5])
	appended := -1
	for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
		a := run.Events[k]
		if a.Kind == "append" && a.Node == e.Node {
			if am := reAppend.FindStringSubmatch(a.Detail); am != nil && am[1] == tp && atoi(am[2]) == off {
				appended = k
				break
			}
		}
	}
	var text string
	if acks == "all" || acks == "-1" {
		text = fmt.Sprintf("%s answers %s for offset %s of %s with acks=all. It held the answer until the high watermark (%d) passed the batch: every in-sync replica has it, so losing any one of them cannot lose it.",
			e.Node, to, m[2], tp, hw)
	} else {
		text = fmt.Sprintf("%s answers %s for offset %s of %s with acks=%s, after its own append only. The high watermark is %d: ", e.Node, to, m[2], tp, acks, hw)
		if hw > off {
			text += "this time the followers already have the record."
		} else {
			text += fmt.Sprintf("offset %d is NOT committed, only %s has it. If %s fails before a follower copies it, this acknowledged write is lost.", off, e.Node, e.Node)
		}
	}
	if appended >= 0 {
		a := run.Events[appended]
		text += fmt.Sprintf(" It waited %s since the append (step %d)", sim.FormatDuration(e.Time.Sub(a.Time)), appended+1)
		if k := prevSameStep(run, i, e.Node, "fsync"); k >= 0 {
			text += ", the last part for its fsync (flush=every-batch)"
		}
		text += "."
	}
	return Explanation{text, NoteAcks}
}

// prevSameStep finds the previous event of kind by node emitted in the same kernel step
// as event i, or -1.
func prevSameStep(run *Run, i int, node, kind string) int {
	for k := i - 1; k >= 0 && run.Events[k].Step == run.Events[i].Step && run.Events[k].Time == run.Events[i].Time; k-- {
		if run.Events[k].Node == node && run.Events[k].Kind == kind {
			return k
		}
	}
	return -1
}

// explainHW says why the high watermark moved.
func explainHW(run *Run, i int, st *State, e sim.Event, m []string) Explanation {
	tp, from, to, leader := m[1], m[2], m[3], m[4]
	if leader != "" {
		return Explanation{fmt.Sprintf("%s follows %s and learns from the leader's fetch response that the high watermark of %s is now %s (it was %s). "+
			"Followers learn the HW one fetch behind the leader, so for a moment they report an older one.", e.Node, leader, tp, to, from), NoteHW}
	}
	var isr []string
	for _, p := range st.Parts {
		if p.Name() == tp {
			isr = p.ISR
		}
	}
	text := fmt.Sprintf("%s leads %s and raises its high watermark from %s to %s: every member of the ISR %s now has the offsets below %s, so they are committed. "+
		"Consumers may read them, and no clean election can lose them.", e.Node, tp, from, to, "["+strings.Join(isr, " ")+"]", to)
	// Which follower's progress moved it: the last ISR member to replicate up to the HW.
	hw := atoi(to)
	last, lastName := -1, ""
	for _, name := range isr {
		if name == e.Node {
			continue
		}
		for k := i - 1; k >= 0 && k >= i-scanBack; k-- {
			r := run.Events[k]
			if r.Node != name || (r.Kind != "replicate" && r.Kind != "follower") {
				continue
			}
			// The member's latest report for the partition says whether it had got there.
			leo := int64(-1)
			if rm := reReplicate.FindStringSubmatch(r.Detail); rm != nil && rm[1] == tp {
				leo = atoi(rm[5])
			} else if fm := reFollower.FindStringSubmatch(r.Detail); fm != nil && fm[1] == tp {
				leo = atoi(fm[4])
			} else {
				continue
			}
			if leo >= hw && k > last {
				last, lastName = k, name
			}
			break
		}
	}
	if last >= 0 && slices.Contains(isr, lastName) {
		text += fmt.Sprintf(" The last in-sync follower to get there was %s (step %d); the leader learned it from %s's next fetch.", lastName, last+1, lastName)
	}
	return Explanation{text, NoteHW}
}
