package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mqsim/model/queue"
	"mqsim/sim"
)

// Queue-mode note file names (see Notes).
const (
	NoteQueues       = "kafka-rabbitmq-sqs.md"
	NoteDelivery     = "delivery-semantics.md"
	NoteDLQ          = "dlq-and-poison-messages.md"
	NoteBackPressure = "back-pressure.md"
	NoteRouting      = "point-to-point-and-pub-sub.md"
	NoteOrdering     = "ordering.md"
	NoteDelayed      = "delayed-messages.md"
	NoteRaft         = "controller.md" // Raft quorums: the KRaft controllers and quorum queues share model/raft
)

// label matches a message's label in the trace: m3:"v3".
const label = `(m\d+:"(?:[^"\\]|\\.)*")`

var (
	reQEnqueue     = regexp.MustCompile(`^(\S+): ` + label + `(.*) \((\S+) seq (\d+)\)$`)
	reQDeliver     = regexp.MustCompile(`^(\S+): ` + label + ` to (\S+) ch(\d+) tag (\d+)( redelivered \(delivery (\d+), failed (\d+)\))?(, auto-ack| \(unacked (\d+)/(\S+)\))`)
	reQAck         = regexp.MustCompile(`^(\S+): ` + label + ` by (\S+) ch(\d+) tag (\d+): settled`)
	reQIgnored     = regexp.MustCompile(`^(\S+): ch(\d+) tag (\d+) ignored`)
	reQReject      = regexp.MustCompile(`^(\S+): ` + label + ` by (\S+), requeue=(true|false)`)
	reQRequeue     = regexp.MustCompile(`^(\S+): ` + label + ` back at position (\d+) \((.*); failed deliveries (\d+)\)`)
	reQLimit       = regexp.MustCompile(`^(\S+): ` + label + ` failed (\d+) times, above delivery-limit (\d+)`)
	reQDeadLetter  = regexp.MustCompile(`^(\S+): ` + label + ` to exchange "(.*)" key "(.*)", x-death (.*)$`)
	reQDLGone      = regexp.MustCompile(`^` + label + ` from (\S+): exchange "(.*)" routes key "(.*)" to no queue`)
	reQDrop        = regexp.MustCompile(`^(\S+): ` + label + ` \(([^)]*)\)(.*)$`)
	reQExpire      = regexp.MustCompile(`^(\S+): ` + label + `: ttl ran out at (\S+)`)
	reQClosed      = regexp.MustCompile(`^(\S+): (\S+) ch(\d+): (.*); (\d+) unacked requeued$`)
	reQClientClose = regexp.MustCompile(`^(\S+) ch(\d+): ([^;]*)(?:; (.*))?$`)
	reQEpoch       = regexp.MustCompile(`^(\S+): (\d+): channels`)
	reQActs        = regexp.MustCompile(`^(\S+): (\S+) acts for the queue from epoch (\d+) \(term (\d+)\): (\d+) ready, (\d+) unsettled`)
	reQStops       = regexp.MustCompile(`^(\S+): (\S+) stops acting for the queue \(term (\d+)\)`)
	reQVisible     = regexp.MustCompile(`^(\S+): ` + label + ` visible again: (\S+) held it (\S+) without deleting it \(receive count (\d+)\)`)
	reQExtended    = regexp.MustCompile(`^(\S+): ` + label + ` extended by (\S+): invisible until (\S+)`)
	reQReceive     = regexp.MustCompile(`^(\S+): (\S+): (.*)$`)
	reQDelete      = regexp.MustCompile(`^(\S+): ` + label + ` by (\S+) with (\S+)$`)
	reQStale       = regexp.MustCompile(`^(\S+): (\S+) by (\S+) is a stale receipt handle \((m\d+) is (.*)\)`)
	reQRedrive     = regexp.MustCompile(`^(\S+): ` + label + ` received (\d+) times \(maxReceiveCount (\d+)\): moved to (\S+)`)
	reQJournal     = regexp.MustCompile(`^(\S+): journal (\d+) commands(.*): (\d+) ready, (\d+) were unacked`)
	reQFsync       = regexp.MustCompile(`^(\S+): journal durable to (\d+)B, (\d+) confirms released`)
	reQRoute       = regexp.MustCompile(`^("(?:[^"\\]|\\.)*") from (\S+) seq (\d+) via (.*?)(?: key "(.*?)"(?: headers .*)?)? to (.*)$`)
	reQSubscribe   = regexp.MustCompile(`^(\S+): (\S+) on channel (\d+) \(prefetch (\S+), (.*)\)$`)
	reQNodeConfirm = regexp.MustCompile(`^("(?:[^"\\]|\\.)*") to (\S+) seq (\d+): in (.*)$`)
	reQPublish     = regexp.MustCompile(`^seq (\d+) ("(?:[^"\\]|\\.)*") to (\S+)( \(no confirms)?`)
	reQProcess     = regexp.MustCompile(`^(\S+) ` + label + ` (done|failed)(.*)$`)
	reRaftAppend   = regexp.MustCompile(`^(\d+)/t(\d+)`)
	reRaftCopy     = regexp.MustCompile(`^(\d+)\.\.(\d+) t(\d+) from (\S+)`)
)

// explainQueue says what an event of a queue-mode run means; ok is false for events it
// leaves to the general explanations (network faults, kernel events).
func explainQueue(run *Run, i int, st *State) (Explanation, bool) {
	if !run.queueMode() {
		return Explanation{}, false
	}
	e := run.Events[i]
	d := e.Detail
	node := slices.Contains(run.QueueNodes, e.Node)
	sqs := run.Flavour == "sqs"
	switch e.Kind {
	case "enqueue":
		if m := reQEnqueue.FindStringSubmatch(d); m != nil {
			q, _ := st.Queue(m[1])
			text := fmt.Sprintf("%s acts for %s and appends %s to the queue's tail (from %s, publish seq %s%s): it is ready, waiting for a consumer%s. ",
				e.Node, m[1], m[2], m[4], m[5], extras(m[3]), orReceive(sqs))
			switch {
			case q.Type == "classic":
				text += fmt.Sprintf("A classic queue applies the command at once and writes it to its journal on %s's disk; the publisher's confirm waits until an fsync covers it.", e.Node)
			default:
				text += fmt.Sprintf("%s is replicated by Raft: the enqueue took effect only now that a majority of its members (%s) have the entry on disk, so losing any one of them cannot lose it.",
					m[1], strings.Join(q.Where, " "))
			}
			if strings.Contains(m[3], "x-death=") {
				text += " It is a dead letter: its x-death header says which queue it died in, why, and how often."
				return Explanation{text, NoteDLQ}, true
			}
			return Explanation{text, NoteQueues}, true
		}
	case "dedup":
		if strings.Contains(d, "deduplication id") {
			return Explanation{fmt.Sprintf("%s. SQS FIFO deduplication: a message with the same deduplication id (or the same body, with content-based deduplication) within the window is accepted — the sender sees success — but not enqueued twice.", d), NoteIdempotence}, true
		}
		return Explanation{fmt.Sprintf("%s. A routing node sent the message again because no answer came in time. Enqueues are numbered per router and queue, so the queue answers the resend without storing it twice, and one publisher's messages keep their order.", d), NoteIdempotence}, true
	case "reject-publish":
		return Explanation{fmt.Sprintf("%s. The queue is at its max-length and its overflow setting is reject-publish: instead of dropping old messages it refuses new ones, and the publisher gets a nack. That is back-pressure: the producer must slow down or fail.", d), NoteBackPressure}, true
	case "subscribe":
		if m := reQSubscribe.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s subscribes to %s (basic.consume) and gets channel %s, %s. ", m[2], m[1], m[3], m[5])
			switch {
			case m[5] == "auto-ack":
				text += "With auto-ack the queue settles each message the moment it sends it: fast, but what the consumer has not processed when it dies is lost."
			case m[4] == "unlimited":
				text += "With no prefetch limit (basic.qos 0) the queue pushes this consumer every ready message it has: a slow consumer can hoard the queue while others idle."
			default:
				text += fmt.Sprintf("With prefetch %s (basic.qos) the queue pushes it at most %s unacknowledged messages at a time, round-robin among consumers with room: the window is the back-pressure.", m[4], m[4])
			}
			return Explanation{text, NoteBackPressure}, true
		}
	case "deliver":
		if m := reQDeliver.FindStringSubmatch(d); m != nil {
			return explainDeliver(m, e, st), true
		}
	case "ack":
		if !node {
			break
		}
		if m := reQAck.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s's ack for delivery tag %s on channel %s reaches %s: %s is settled and leaves %s for good. ", m[3], m[5], m[4], e.Node, m[2], m[1])
			if q, ok := st.Queue(m[1]); ok {
				for _, c := range q.Consumers {
					if c.Name == m[3] && c.Prefetch > 0 {
						text += fmt.Sprintf("It frees a slot in %s's prefetch window of %d: the queue fills it with the next ready message, if it has one.", c.Name, c.Prefetch)
					}
				}
			}
			return Explanation{strings.TrimSpace(text), NoteDelivery}, true
		}
		if m := reQIgnored.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("An ack for tag %s on channel %s reaches %s's queue, which has no such delivery: the channel was closed and its messages requeued (or the message is settled already). The ack is void, and the message will be processed again: at-least-once means duplicates after a failure.",
				m[3], m[2], m[1]), NoteDelivery}, true
		}
	case "reject", "nack":
		if !node || strings.HasPrefix(d, `"`) {
			return explainPublishNack(e), true // basic.nack of a publish, not of a delivery
		}
		verb := "rejects (basic.reject)"
		if e.Kind == "nack" {
			verb = "nacks (basic.nack)"
		}
		if m := reQReject.FindStringSubmatch(d); m != nil {
			if m[4] == "false" {
				return Explanation{fmt.Sprintf("%s %s %s with requeue=false: the queue will not deliver it again; it dead-letters it (to its dead-letter exchange if it has one, else it drops it).", m[3], verb, m[2]), NoteDLQ}, true
			}
			text := fmt.Sprintf("%s %s %s with requeue=true: the message goes back to %s at its old position, to be delivered again, marked redelivered. ", m[3], verb, m[2], m[1])
			if e.Kind == "reject" {
				text += "A reject counts as a failed delivery (RabbitMQ 4.3), a nack does not. "
			} else {
				text += "A nack does not count as a failed delivery (RabbitMQ 4.3), a reject does. "
			}
			text += "A message that fails every time is a poison message: without a delivery limit it comes back forever, ahead of everything behind it."
			return Explanation{text, NoteDLQ}, true
		}
		if reQIgnored.MatchString(d) {
			return Explanation{fmt.Sprintf("%s: %s. The delivery is no longer held on that channel: the reject is void.", e.Kind, d), NoteDelivery}, true
		}
	case "requeue":
		if m := reQRequeue.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s goes back to %s at position %s: it keeps its place in line (its id), so it goes out again before later messages, marked redelivered. Failed deliveries so far: %s.", m[2], m[1], m[3], m[5])
			if m[4] == "channel closed" {
				return Explanation{text + " It was unacked on a channel that closed: the consumer may have processed it already, and will see it again (at-least-once).", NoteDelivery}, true
			}
			return Explanation{text, NoteDLQ}, true
		}
	case "delivery-limit":
		if m := reQLimit.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s has failed %s times, more than %s's delivery-limit (%s): instead of requeueing it once more, the queue dead-letters it (reason delivery_limit). That is what keeps a poison message from blocking the queue forever.",
				m[2], m[3], m[1], m[4]), NoteDLQ}, true
		}
	case "dead-letter":
		if m := reQDeadLetter.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s dead-letters %s: it republishes it to exchange %q with routing key %q and an x-death header (%s: queue, reason, count) that says where it died and why. It leaves %s now; dead-lettering is at-most-once, as RabbitMQ's default: if %s dies before the target queue has it, it is gone.",
				m[1], m[2], m[3], m[4], m[5], m[1], e.Node), NoteDLQ}, true
		}
		if m := reQDLGone.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s, dead-lettered by %s, reaches exchange %q, which routes key %q to no queue: the message is gone. A dead-letter exchange needs a bound queue to catch what it gets.", m[1], m[2], m[3], m[4]), NoteDLQ}, true
		}
	case "drop":
		if strings.HasPrefix(d, `"`) {
			return Explanation{fmt.Sprintf("%s. The exchange has no binding that matches, and the publish is not mandatory: the broker drops the message silently (a publisher in confirm mode still gets its confirm). With mandatory=true it would come back to the publisher (basic.return), or an alternate exchange could catch it.", d), NoteQueues}, true
		}
		if m := reQDrop.FindStringSubmatch(d); m != nil {
			why := "and the queue has no dead-letter exchange"
			if strings.Contains(m[4], "cycle") {
				why = "in a dead-letter cycle with no rejection in it (RabbitMQ drops those rather than loop forever)"
			}
			return Explanation{fmt.Sprintf("%s leaves %s (reason %s) %s: it is dropped, gone for good.", m[2], m[1], m[3], why), NoteDLQ}, true
		}
	case "expire":
		if m := reQExpire.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s waited in %s until its TTL ran out at %s: it expires and is dead-lettered (reason expired), or dropped if the queue has no dead-letter exchange. A TTL on a holding queue whose dead letters go to the work queue is the classic RabbitMQ delayed retry.",
				m[2], m[1], m[3]), NoteDelayed}, true
		}
	case "channel-closed":
		if m := reQClosed.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s closes %s's channel %s on %s: %s. ", e.Node, m[2], m[3], m[1], m[4])
			if m[5] == "0" {
				text += "It held no unacked messages. "
			} else {
				text += fmt.Sprintf("The %s it held unacked go back to the queue, to be delivered again, marked redelivered. ", plural(int(atoi(m[5])), "message"))
			}
			switch {
			case strings.Contains(m[4], "heartbeat"):
				text += "A crashed consumer, a cut-off one and a frozen one look the same to the broker: it only sees their heartbeats stop, and waits two intervals before it gives up on them."
			case strings.Contains(m[4], "leader changed"):
				text += "The queue's new leader closes every channel opened under an older leader (its epoch), as consumers connected to a dead RabbitMQ node lose their connection; it does not count a failed delivery."
			case strings.Contains(m[4], "consumer timeout"):
				text += "The consumer held a delivery longer than consumer_timeout; its ack, when it comes, is void."
			}
			return Explanation{strings.TrimSpace(text), NoteDelivery}, true
		}
		if m := reQClientClose.FindStringSubmatch(d); m != nil && !node {
			text := fmt.Sprintf("%s learns that its channel %s on %s is closed: %s.", e.Node, m[2], m[1], m[3])
			if m[4] != "" {
				text += " " + strings.ToUpper(m[4][:1]) + m[4][1:] + "."
			}
			text += " It reconnects and subscribes again, to the node that acts for the queue now; what it held unacked is redelivered (to it or another consumer)."
			if strings.Contains(m[4], "lost") {
				text += " Those deliveries were auto-acked: the queue forgot them when it sent them, so they are lost (at-most-once)."
			}
			return Explanation{text, NoteDelivery}, true
		}
	case "epoch":
		if m := reQEpoch.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("Epoch %s of %s: the first command a node that starts acting for the queue applies. Channels opened under an earlier epoch (an older leader) are closed and their unacked messages requeued, without counting a failed delivery, so every consumer reconnects to the node that acts for the queue now.",
				m[2], m[1]), NoteQueues}, true
		}
	case "leader":
		if !node {
			break
		}
		if m := reQActs.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s now acts for %s: it leads the queue's Raft group in term %s and has applied its epoch %s, so it holds every committed command: %s ready, %s unsettled. Only the leader delivers, confirms and dead-letters; every member applies the same commands in the same order, so each holds the same queue and any of them can take over.",
				m[2], m[1], m[4], m[3], m[5], m[6]), NoteQueues}, true
		}
		if m := reQStops.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s stops acting for %s (term %s): it is no longer the Raft leader. It tells its consumers their channels are closed, so they go and find the new leader; what it had not committed never took effect.", m[2], m[1], m[3]), NoteQueues}, true
		}
	case "visibility":
		if m := reQVisible.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s is visible in %s again: %s received it %s ago and did not delete it within the visibility timeout (receive count %s). The next ReceiveMessage may return it — to %s or to another worker, even while %s is still processing it: SQS is at-least-once, and a timeout shorter than the processing makes duplicates.",
				m[2], m[1], m[3], m[4], m[5], m[3], m[3]), NoteDelivery}, true
		}
		if m := reQExtended.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s's visibility is extended by %s (ChangeMessageVisibility): it stays hidden until %s. A worker that extends while it processes — the heartbeat AWS recommends for long jobs — keeps the message from coming back under its feet.", m[2], m[3], m[4]), NoteDelivery}, true
		}
		return Explanation{fmt.Sprintf("%s. ChangeMessageVisibility needs the current receipt handle: the message was received again since.", d), NoteDelivery}, true
	case "receive":
		if m := reQReceive.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s calls ReceiveMessage on %s: %s. ", m[2], m[1], m[3])
			if !strings.HasPrefix(m[3], "nothing") {
				text = fmt.Sprintf("%s receives from %s (ReceiveMessage): %s. Each message is hidden for the visibility timeout under a new receipt handle; %s must delete it with that handle before the timeout, or it becomes visible and is received again. ", m[2], m[1], m[3], m[2])
			}
			if strings.Contains(m[3], "blocked") {
				text += "A FIFO queue returns nothing more of a message group while one of its messages is in flight: each group stays in order, and stalls behind its slowest message."
				return Explanation{strings.TrimSpace(text), NoteOrdering}, true
			}
			return Explanation{strings.TrimSpace(text), NoteDelivery}, true
		}
	case "delete":
		if m := reQDelete.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s deletes %s from %s with receipt handle %s (DeleteMessage): it is gone for good. In SQS the delete is the acknowledgement: processing then deleting is at-least-once.", m[3], m[2], m[1], m[4]), NoteDelivery}, true
		}
		if m := reQStale.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s deletes with receipt handle %s, which is stale: %s is %s. SQS answers success but deletes nothing — the worker believes it is done, and the message will be processed again.", m[3], m[2], m[4], m[5]), NoteDelivery}, true
		}
		return Explanation{fmt.Sprintf("%s. Deleting a message that is gone already succeeds: DeleteMessage is idempotent.", d), NoteDelivery}, true
	case "redrive":
		if m := reQRedrive.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s has been received %s times (maxReceiveCount %s) without being deleted: on this receive SQS moves it to the dead-letter queue %s instead of returning it (the redrive policy). The poison message stops coming back; someone must look at the DLQ.",
				m[2], m[3], m[4], m[5]), NoteDLQ}, true
		}
	case "recover":
		if m := reQJournal.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s replays %s's journal from its disk after a restart: %s commands%s, giving %s ready messages; %s were unacked, and are ready again (their consumers' channels died with the node). Only what was fsynced is there; a torn tail is cut at the first bad checksum.",
				e.Node, m[1], m[2], m[3], m[4], m[5]), NoteWAL}, true
		}
		if node {
			return Explanation{fmt.Sprintf("%s reads its Raft state for %s from its disk: %s. A quorum queue member replays its log from the start (queues take no snapshots here) and rejoins as a follower; the leader sends it what it missed.",
				e.Node, raftGroup(st, e.Node), d), NoteRaft}, true
		}
	case "fsync":
		if m := reQFsync.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s's disk confirms %s's journal up to %sB: the %s publisher confirms that waited for it go out now. A classic queue confirms a message only once it is on disk; one fsync covers every command written before it (group commit).",
				e.Node, m[1], m[2], m[3]), NoteWAL}, true
		}
	case "route":
		return explainRoute(e), true
	case "return":
		if node {
			return Explanation{fmt.Sprintf("%s. The publish is mandatory: the broker sends the message back (basic.return), so the publisher knows it reached no queue instead of losing it silently.", d), NoteQueues}, true
		}
		return Explanation{fmt.Sprintf("%s gets its message back (basic.return): %s. It records the publish as failed: no queue has it.", e.Node, d), NoteQueues}, true
	case "confirm":
		if m := reQNodeConfirm.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s is durable in every queue it was routed to (%s): %s sends %s its confirm (basic.ack for seq %s). Durable means fsynced for a classic queue, committed on a majority for a quorum queue.",
				m[1], m[4], e.Node, m[2], m[3]), NoteQueues}, true
		}
		if !node {
			if strings.Contains(d, "returned") {
				return Explanation{fmt.Sprintf("%s: confirm %s. The confirm of a returned message only closes the publish: no queue has it.", e.Node, d), NoteQueues}, true
			}
			return Explanation{fmt.Sprintf("%s receives the confirm for %s: from now on its application may consider the message safe in the broker. Without confirms it could only hope.", e.Node, d), NoteQueues}, true
		}
	case "publish":
		if m := reQPublish.FindStringSubmatch(d); m != nil {
			text := fmt.Sprintf("%s publishes %s (seq %s) on its channel to %s. ", e.Node, m[2], m[1], m[3])
			if m[4] != "" {
				text += "Without publisher confirms it counts the message as sent at once: if the broker loses it, nobody will know."
			} else {
				text += fmt.Sprintf("It waits for %s's confirm: until then the message is in flight, and if no answer comes in time its fate is unknown.", m[3])
			}
			return Explanation{text, NoteQueues}, true
		}
	case "timeout":
		if !node {
			return Explanation{fmt.Sprintf("%s: %s. The publisher cannot tell whether the broker has the message, so the history records the publish as unknown and the checkers allow both outcomes. Publishing it again risks a duplicate; not doing so, a loss.", e.Node, d), NoteIdempotence}, true
		}
	case "process":
		if m := reQProcess.FindStringSubmatch(d); m != nil {
			return explainProcess(e, m), true
		}
	case "ack-lost":
		return Explanation{fmt.Sprintf("%s: %s. The message was processed but the broker never hears so: it was requeued when the channel closed and will be processed again. At-least-once delivery means the consumer must tolerate duplicates (make processing idempotent).", e.Node, d), NoteDelivery}, true
	case "election":
		if !node {
			break
		}
		group := raftGroup(st, e.Node)
		switch {
		case strings.HasPrefix(d, "pre-candidate"):
			return Explanation{fmt.Sprintf("%s has not heard from a leader of the Raft group of %s for its election timeout: %s. A pre-candidate first asks whether the others would vote for it (pre-vote), so a member that was cut off cannot disrupt a healthy leader when it comes back.", e.Node, group, d), NoteRaft}, true
		case strings.HasPrefix(d, "candidate"):
			return Explanation{fmt.Sprintf("%s stands for leader of the Raft group of %s: %s. It votes for itself and asks the other members; it needs a majority. A member votes once per term, and only for a log at least as up to date as its own, so the winner has every committed command.", e.Node, group, d), NoteRaft}, true
		case strings.HasPrefix(d, "leader"):
			return Explanation{fmt.Sprintf("%s wins the election: %s. It leads the Raft group of %s; before it acts for the queue it commits an epoch entry, which closes the channels opened under the old leader.", e.Node, d, group), NoteRaft}, true
		}
		return Explanation{fmt.Sprintf("%s: election %s. Without a majority nobody leads, and the queue waits: publishes are not confirmed and nothing is delivered.", e.Node, d), NoteRaft}, true
	case "vote":
		if node {
			return Explanation{fmt.Sprintf("%s answers a vote request in the Raft group of %s: %s. A member grants one vote per term, and only to a candidate whose log is at least as up to date as its own.", e.Node, raftGroup(st, e.Node), d), NoteRaft}, true
		}
	case "term":
		if node {
			return Explanation{fmt.Sprintf("%s learns of term %s and moves to it: in Raft a higher term always wins, and a leader that sees one steps down.", e.Node, d), NoteRaft}, true
		}
	case "step-down":
		if node {
			return Explanation{fmt.Sprintf("%s steps down as leader of the Raft group of %s: %s. A leader that cannot reach a majority (check-quorum) stops acting, so two nodes never act for one queue in the same term.", e.Node, raftGroup(st, e.Node), d), NoteRaft}, true
		}
	case "append":
		if !node {
			break
		}
		group := raftGroup(st, e.Node)
		if m := reRaftCopy.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s follows %s in the Raft group of %s: it appends entries %s..%s (term %s) to its log and tells the leader how far it has come. An entry is committed once a majority has it on disk.", e.Node, m[4], group, m[1], m[2], m[3]), NoteRaft}, true
		}
		if m := reRaftAppend.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("%s leads the Raft group of %s and appends entry %s (term %s) to its log: a queue command (an enqueue, an ack, a subscription, ...). It takes effect only when a majority of the members have it on disk (commit); until then nobody acts on it.", e.Node, group, m[1], m[2]), NoteRaft}, true
		}
	case "commit":
		if node {
			return Explanation{fmt.Sprintf("%s learns that the Raft log of %s is committed up to entry %s — a majority has it on disk — and applies the entries to its copy of the queue. Every member applies the same commands in the same order; only the leader acts on them (delivers, confirms).", e.Node, raftGroup(st, e.Node), d), NoteRaft}, true
		}
	case "truncate":
		if node {
			return Explanation{fmt.Sprintf("%s removes entries from the Raft log of %s (%s): its log diverges from the leader's there, and those entries were never committed, so no one acted on them.", e.Node, raftGroup(st, e.Node), d), NoteTruncation}, true
		}
	case "crash":
		return explainQueueCrash(run, e, st)
	case "restart":
		if node {
			return Explanation{fmt.Sprintf("%s restarts with a fresh process: its classic queues replay their journals, and its quorum queue members replay their Raft logs and rejoin as followers, catching up from the leader.", e.Node), NoteFaults}, true
		}
	}
	return Explanation{}, false
}

// extras renders the enqueue's extra words (key=..., ttl=..., x-death=...).
func extras(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return "; " + s
}

func orReceive(sqs bool) string {
	if sqs {
		return " or a receive"
	}
	return ""
}

// raftGroup names the quorum queue (or queues) whose Raft group a node's event is about:
// "orders", or "one of its quorum queues (orders, jobs)".
func raftGroup(st *State, node string) string {
	var qs []string
	for _, q := range st.Queues {
		if len(q.Where) > 0 && q.Type != "classic" && slices.Contains(q.Where, node) {
			qs = append(qs, q.Name)
		}
	}
	switch len(qs) {
	case 0:
		return "a quorum queue"
	case 1:
		return qs[0]
	}
	return "one of its quorum queues (" + strings.Join(qs, ", ") + ")"
}

func explainDeliver(m []string, e sim.Event, st *State) Explanation {
	q, tag, consumer, ch := m[1], m[5], m[3], m[4]
	text := fmt.Sprintf("%s acts for %s and pushes %s to %s on channel %s, delivery tag %s. ", e.Node, q, m[2], consumer, ch, tag)
	if m[6] != "" {
		text += fmt.Sprintf("It is a redelivery (delivery %s; failed %s times): the message went out before and came back, so it carries the redelivered flag, and the consumer may already have processed it. ", m[7], m[8])
	}
	if m[9] == ", auto-ack" {
		text += fmt.Sprintf("With auto-ack the queue forgets it the moment it leaves: if %s dies before processing it, it is lost (at-most-once).", consumer)
		return Explanation{text, NoteDelivery}
	}
	text += fmt.Sprintf("It stays in the queue, unacked, until %s acks it; if the channel closes first, it goes back to the queue. ", consumer)
	switch {
	case m[11] == "unlimited":
		text += fmt.Sprintf("%s has no prefetch limit: it now holds %s unacked.", consumer, m[10])
	case m[10] == m[11]:
		text += fmt.Sprintf("%s now holds %s of its prefetch %s: its window is full, and the queue pushes it nothing more until it acks.", consumer, m[10], m[11])
	default:
		text += fmt.Sprintf("%s now holds %s of its prefetch %s.", consumer, m[10], m[11])
	}
	if view, ok := st.Queue(q); ok && view.Ready > 0 {
		text += fmt.Sprintf(" %d more wait in the queue.", view.Ready)
	}
	return Explanation{text, NoteDelivery}
}

// explainPublishNack explains a nack of a publish (by the routing node, or as its
// publisher receives it).
func explainPublishNack(e sim.Event) Explanation {
	if strings.Contains(e.Detail, "some queue may have it") {
		return Explanation{fmt.Sprintf("%s gets a nack: %s. Some queue took the message and another refused it: the publisher cannot know which, and records the publish as unknown.", e.Node, e.Detail), NoteQueues}
	}
	return Explanation{fmt.Sprintf("%s: nack %s (basic.nack). No queue took the message: the publish failed for certain, and the publisher may send it again without risking a duplicate.", e.Node, e.Detail), NoteQueues}
}

func explainRoute(e sim.Event) Explanation {
	d := e.Detail
	switch {
	case strings.Contains(d, "(NOT_FOUND)"):
		return Explanation{fmt.Sprintf("%s: %s. Publishing to an exchange that does not exist fails: the channel gets NOT_FOUND, and a publisher in confirm mode a nack.", e.Node, d), NoteQueues}
	case strings.Contains(d, "giving up"):
		return Explanation{fmt.Sprintf("%s: %s. The publisher hears nothing: its confirm will time out and it will record the publish as unknown.", e.Node, d), NoteQueues}
	}
	if m := reQRoute.FindStringSubmatch(d); m != nil {
		via := m[4]
		text := fmt.Sprintf("%s, the node %s is connected to, routes %s: ", e.Node, strings.SplitN(m[2], "#", 2)[0], m[1])
		queues := strings.Split(m[6], ", ")
		if via == "the default exchange" {
			text += fmt.Sprintf("the default exchange delivers to the queue named by the routing key, %s. ", m[6])
		} else {
			text += via
			if m[5] != "" {
				text += fmt.Sprintf(" matches key %q", m[5])
			}
			if len(queues) > 1 {
				text += fmt.Sprintf(" against its bindings and sends a copy to each of %d queues, %s. ", len(queues), m[6])
			} else {
				text += fmt.Sprintf(" against its bindings: queue %s. ", m[6])
			}
		}
		text += fmt.Sprintf("%s forwards the message to the node acting for each queue and resends until each answers.", e.Node)
		return Explanation{text, NoteRouting}
	}
	return Explanation{fmt.Sprintf("%s routes: %s.", e.Node, d), NoteRouting}
}

func explainProcess(e sim.Event, m []string) Explanation {
	q, msg, outcome, rest := m[1], m[2], m[3], m[4]
	switch {
	case outcome == "done" && strings.HasPrefix(rest, ", delete "):
		return Explanation{fmt.Sprintf("%s finished %s from %s and deletes it with its receipt handle (%s). Until the delete arrives, the message is only hidden: if the visibility timeout runs out first, it comes back.", e.Node, msg, q, strings.TrimPrefix(rest, ", delete ")), NoteDelivery}
	case outcome == "done" && strings.HasPrefix(rest, ", ack tag"):
		return Explanation{fmt.Sprintf("%s finished processing %s from %s and sends its ack (%s). The side effect happened; until the ack reaches the queue the message is unacked there, and if the channel closes first it will be processed again.", e.Node, msg, q, strings.TrimPrefix(rest, ", ")), NoteDelivery}
	case outcome == "done":
		return Explanation{fmt.Sprintf("%s finished processing %s from %s. With auto-ack there is nothing to acknowledge: the queue forgot the message when it sent it.", e.Node, msg, q), NoteDelivery}
	case strings.Contains(rest, "not deleted"):
		return Explanation{fmt.Sprintf("%s failed to process %s from %s and does not delete it: it becomes visible again when its visibility timeout runs out, and is received again — a poison message comes back forever unless a redrive policy moves it to a DLQ.", e.Node, msg, q), NoteDLQ}
	}
	return Explanation{fmt.Sprintf("%s failed to process %s from %s%s. What happens next depends on the consumer: reject or nack with requeue puts it back, requeue=false dead-letters it.", e.Node, msg, q, rest), NoteDLQ}
}

// explainQueueCrash says what a crash means for the queue broker.
func explainQueueCrash(run *Run, e sim.Event, st *State) (Explanation, bool) {
	if slices.Contains(run.QueueNodes, e.Node) {
		var quorum, classic []string
		for _, q := range st.Queues {
			switch {
			case q.Acting != e.Node:
			case len(q.Where) == 1 && q.Where[0] == e.Node && q.Term == 0:
				classic = append(classic, q.Name)
			default:
				quorum = append(quorum, q.Name)
			}
		}
		text := fmt.Sprintf("%s crashes (%s). Its memory is gone: channels, unconfirmed routing, anything not fsynced; its disk keeps the rest. ", e.Node, e.Detail)
		if len(quorum) > 0 {
			text += fmt.Sprintf("It led %s: no node acts for it until the other members elect a new leader, which needs a majority of them. Meanwhile publishes wait for their confirms and nothing is delivered. ", strings.Join(quorum, ", "))
		}
		if len(classic) > 0 {
			text += fmt.Sprintf("It is the home of %s: a classic queue lives on one node, so it is unavailable until %s restarts and replays its journal. ", strings.Join(classic, ", "), e.Node)
		}
		if len(quorum)+len(classic) > 0 {
			text += fmt.Sprintf("Consumers connected to %s lose their channels.", e.Node)
		} else {
			text += "It acted for no queue: the Raft groups it belongs to keep their leaders while a majority of their members is up."
		}
		text = strings.TrimSpace(text)
		return Explanation{text, NoteFaults}, true
	}
	c, ok := st.QClient(e.Node)
	if !ok {
		return Explanation{}, false
	}
	switch c.Kind {
	case queue.KindConsumer:
		held, autoAck := 0, false
		for _, q := range st.Queues {
			for _, o := range q.Out {
				if o.Consumer == e.Node && o.Handle == "" {
					held++
				}
			}
			for _, c := range q.Consumers {
				if c.Name == e.Node && c.AutoAck {
					autoAck = true
				}
			}
		}
		if autoAck {
			return Explanation{fmt.Sprintf("%s crashes. It consumed with auto-ack: the queue settled each message the moment it sent it, so what %s had received and not yet processed is lost with it (at-most-once). The broker notices only when its heartbeats have stopped for two intervals.", e.Node, e.Node), NoteDelivery}, true
		}
		text := fmt.Sprintf("%s crashes holding %s unacked in the broker. Nobody tells the broker: it notices only when %s's heartbeats have stopped for two intervals, then closes the channel", e.Node, plural(held, "message"), e.Node)
		if held > 0 {
			text += " and requeues them, to be delivered again — processed twice if the consumer had finished one and not yet acked it."
		} else {
			text += "."
		}
		return Explanation{text, NoteDelivery}, true
	case queue.KindWorker:
		return Explanation{fmt.Sprintf("%s crashes. SQS is not told: the messages it received and did not delete stay hidden until their visibility timeout runs out, then come back for another worker.", e.Node), NoteDelivery}, true
	case queue.KindPublisher:
		return Explanation{fmt.Sprintf("%s crashes: its publishes still waiting for a confirm are in doubt — the broker may or may not have them.", e.Node), NoteFaults}, true
	}
	return Explanation{}, false
}

// plural is "1 message", "3 messages".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
