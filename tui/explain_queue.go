package tui

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/queue"
	"mqsim/model/raft"
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

// queueExplainers say what the events of one concern of a queue-mode run mean, asked in
// order: the first that knows the event's type explains it.
var queueExplainers = []func(run *Run, e sim.Event, st *State) (Explanation, bool){
	explainQueueRouting, explainQueueDelivery, explainQueueSQS, explainDeadLetters, explainQueueNode, explainQueueRaft, explainQueueClients,
}

// explainQueue says what an event of a queue-mode run means; ok is false for events it
// leaves to the general explanations (network faults, kernel events).
func explainQueue(run *Run, i int, st *State) (Explanation, bool) {
	if !run.queueMode() {
		return Explanation{}, false
	}
	e := run.Events[i]
	for _, explain := range queueExplainers {
		if ex, ok := explain(run, e, st); ok {
			return ex, true
		}
	}
	return Explanation{}, false
}

// explainQueueRouting: publishes reaching a node, routed to queues, enqueued there, and
// the node's confirm or nack.
func explainQueueRouting(run *Run, e sim.Event, st *State) (Explanation, bool) {
	switch d := e.Data.(type) {
	case queue.PublishDuplicate:
		return Explanation{fmt.Sprintf("%s. The network delivered the publish twice; a publisher's channel is a TCP connection, which hands each frame over once, so %s routes each (publisher, seq) once and drops the copy. Routed again, it would be enqueued twice.", e.Detail, e.Node), NoteIdempotence}, true
	case queue.NoExchange:
		return Explanation{fmt.Sprintf("%s: %s. Publishing to an exchange that does not exist fails: the channel gets NOT_FOUND, and a publisher in confirm mode a nack.", e.Node, e.Detail), NoteQueues}, true
	case queue.Unroutable:
		if d.Mandatory {
			return Explanation{fmt.Sprintf("%s. The publish is mandatory: the broker sends the message back (basic.return), so the publisher knows it reached no queue instead of losing it silently.", e.Detail), NoteQueues}, true
		}
		return Explanation{fmt.Sprintf("%s. The exchange has no binding that matches, and the publish is not mandatory: the broker drops the message silently (a publisher in confirm mode still gets its confirm). With mandatory=true it would come back to the publisher (basic.return), or an alternate exchange could catch it.", e.Detail), NoteQueues}, true
	case queue.Routed:
		return explainRouted(e, d), true
	case queue.ForwardAbandoned:
		return Explanation{fmt.Sprintf("%s: %s. The publisher hears nothing: its confirm will time out and it will record the publish as unknown.", e.Node, e.Detail), NoteQueues}, true
	case queue.EnqueueResent:
		return Explanation{fmt.Sprintf("%s. A routing node sent the message again because no answer came in time. Enqueues are numbered per router and queue, so the queue answers the resend without storing it twice, and one publisher's messages keep their order.", e.Detail), NoteIdempotence}, true
	case queue.Deduplicated:
		return Explanation{fmt.Sprintf("%s. SQS FIFO deduplication: a message with the same deduplication id (or the same body, with content-based deduplication) within the window is accepted — the sender sees success — but not enqueued twice.", e.Detail), NoteIdempotence}, true
	case queue.PublishRefused:
		return Explanation{fmt.Sprintf("%s. The queue is at its max-length and its overflow setting is reject-publish: instead of dropping old messages it refuses new ones, and the publisher gets a nack. That is back-pressure: the producer must slow down or fail.", e.Detail), NoteBackPressure}, true
	case queue.Enqueued:
		return explainEnqueued(run, e, d, st), true
	case queue.EnqueueAnsweredEarly:
		return Explanation{fmt.Sprintf("%s: %s. A planted bug: the leader answers before a majority has the entry, so its publisher is confirmed for a message that a leader crash can still lose.", e.Node, e.Detail), NoteQueues}, true
	case queue.ConfirmedOnRoute:
		return Explanation{fmt.Sprintf("%s: %s. A planted bug: the publisher is told the message is safe before any queue has it; if a queue refuses it or a node dies now, a confirmed message is lost.", e.Node, e.Detail), NoteQueues}, true
	case queue.PublishConfirmed:
		return Explanation{fmt.Sprintf("%q is durable in every queue it was routed to (%s): %s sends %s its confirm (basic.ack for seq %d). Durable means fsynced for a classic queue, committed on a majority for a quorum queue.",
			d.Value, strings.Join(d.Queues, ", "), e.Node, d.PubID, d.Seq), NoteQueues}, true
	case queue.PublishNacked:
		if !d.Certain {
			return Explanation{fmt.Sprintf("%s: nack %s (basic.nack). One queue refused the message and another took it: %s cannot know which, and will record the publish as unknown.", e.Node, e.Detail, d.PubID), NoteQueues}, true
		}
		return explainPublishNack(e, true), true
	}
	return Explanation{}, false
}

func explainEnqueued(run *Run, e sim.Event, d queue.Enqueued, st *State) Explanation {
	q, _ := st.Queue(d.Queue)
	text := fmt.Sprintf("%s acts for %s and appends %s to the queue's tail (from %s, publish seq %d%s): it is ready, waiting for a consumer%s. ",
		e.Node, d.Queue, d.Msg.Label(), d.Msg.PubID, d.Msg.Seq, extras(d.Notes()), orReceive(run.Flavour == "sqs"))
	if q.Type == "classic" {
		text += fmt.Sprintf("A classic queue applies the command at once and writes it to its journal on %s's disk; the publisher's confirm waits until an fsync covers it.", e.Node)
	} else {
		text += fmt.Sprintf("%s is replicated by Raft: the enqueue took effect only now that a majority of its members (%s) have the entry on disk, so losing any one of them cannot lose it.",
			d.Queue, strings.Join(q.Where, " "))
	}
	if len(d.Msg.Deaths) > 0 {
		text += " It is a dead letter: its x-death header says which queue it died in, why, and how often."
		return Explanation{text, NoteDLQ}
	}
	return Explanation{text, NoteQueues}
}

// extras renders an enqueue's notes (key=..., ttl=..., x-death=...) after its seq.
func extras(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, " ")
}

func orReceive(sqs bool) string {
	if sqs {
		return " or a receive"
	}
	return ""
}

func explainRouted(e sim.Event, d queue.Routed) Explanation {
	text := fmt.Sprintf("%s, the node %s is connected to, routes %q: ", e.Node, d.From, d.Value)
	queues := strings.Join(d.Queues, ", ")
	if d.Exchange == queue.DefaultExchange {
		text += fmt.Sprintf("the default exchange delivers to the queue named by the routing key, %s. ", queues)
	} else {
		text += queue.ExchangeText(d.Exchange)
		if d.Key != "" {
			text += fmt.Sprintf(" matches key %q", d.Key)
		}
		if len(d.Queues) > 1 {
			text += fmt.Sprintf(" against its bindings and sends a copy to each of %d queues, %s. ", len(d.Queues), queues)
		} else {
			text += fmt.Sprintf(" against its bindings: queue %s. ", queues)
		}
	}
	text += fmt.Sprintf("%s forwards the message to the node acting for each queue and resends until each answers.", e.Node)
	return Explanation{text, NoteRouting}
}

// explainPublishNack explains a nack of a publish (by the routing node, or as its
// publisher receives it): certain when no queue took the message.
func explainPublishNack(e sim.Event, certain bool) Explanation {
	if !certain {
		return Explanation{fmt.Sprintf("%s gets a nack: %s. Some queue took the message and another refused it: the publisher cannot know which, and records the publish as unknown.", e.Node, e.Detail), NoteQueues}
	}
	return Explanation{fmt.Sprintf("%s: nack %s (basic.nack). No queue took the message: the publish failed for certain, and the publisher may send it again without risking a duplicate.", e.Node, e.Detail), NoteQueues}
}

// explainQueueDelivery: AMQP consumers subscribing, deliveries pushed to them, and how
// each is settled: ack, reject, nack, requeue, or its channel closing.
func explainQueueDelivery(run *Run, e sim.Event, st *State) (Explanation, bool) {
	switch d := e.Data.(type) {
	case queue.ConsumerSubscribed:
		return explainSubscribed(d), true
	case queue.Delivered:
		return explainDeliver(e, d, st), true
	case queue.Acked:
		text := fmt.Sprintf("%s's ack for delivery tag %d on channel %d reaches %s: %s is settled and leaves %s for good. ", d.Consumer, d.Tag, d.Channel, e.Node, d.Msg.Label(), d.Queue)
		if q, ok := st.Queue(d.Queue); ok {
			for _, c := range q.Consumers {
				if c.Name == d.Consumer && c.Prefetch > 0 {
					text += fmt.Sprintf("It frees a slot in %s's prefetch window of %d: the queue fills it with the next ready message, if it has one.", c.Name, c.Prefetch)
				}
			}
		}
		return Explanation{strings.TrimSpace(text), NoteDelivery}, true
	case queue.NoDelivery:
		if d.How == queue.SettleAck {
			return Explanation{fmt.Sprintf("An ack for tag %d on channel %d reaches %s's queue, which has no such delivery: the channel was closed and its messages requeued (or the message is settled already). The ack is void, and the message will be processed again: at-least-once means duplicates after a failure.",
				d.Tag, d.Channel, d.Queue), NoteDelivery}, true
		}
		return Explanation{fmt.Sprintf("%s: %s. The delivery is no longer held on that channel: the %s is void.", e.Kind, e.Detail, d.How), NoteDelivery}, true
	case queue.Rejected:
		return explainRejected(d), true
	case queue.Requeued:
		text := fmt.Sprintf("%s goes back to %s at position %d: it keeps its place in line (its id), so it goes out again before later messages, marked redelivered. Failed deliveries so far: %d.", d.Msg.Label(), d.Queue, d.Position, d.Msg.DeliveryCount)
		if d.Cause == queue.RequeueChannelClosed {
			return Explanation{text + " It was unacked on a channel that closed: the consumer may have processed it already, and will see it again (at-least-once).", NoteDelivery}, true
		}
		return Explanation{text, NoteDLQ}, true
	case queue.ConsumerClosed:
		return explainConsumerClosed(e, d), true
	}
	return Explanation{}, false
}

func explainSubscribed(d queue.ConsumerSubscribed) Explanation {
	mode := "manual acks"
	if d.AutoAck {
		mode = "auto-ack"
	}
	text := fmt.Sprintf("%s subscribes to %s (basic.consume) and gets channel %d, %s. ", d.Consumer, d.Queue, d.Channel, mode)
	switch {
	case d.AutoAck:
		text += "With auto-ack the queue settles each message the moment it sends it: fast, but what the consumer has not processed when it dies is lost."
	case d.Prefetch == 0:
		text += "With no prefetch limit (basic.qos 0) the queue pushes this consumer every ready message it has: a slow consumer can hoard the queue while others idle."
	default:
		text += fmt.Sprintf("With prefetch %d (basic.qos) the queue pushes it at most %d unacknowledged messages at a time, round-robin among consumers with room: the window is the back-pressure.", d.Prefetch, d.Prefetch)
	}
	return Explanation{text, NoteBackPressure}
}

func explainDeliver(e sim.Event, d queue.Delivered, st *State) Explanation {
	text := fmt.Sprintf("%s acts for %s and pushes %s to %s on channel %d, delivery tag %d. ", e.Node, d.Queue, d.Msg.Label(), d.Consumer, d.Channel, d.Tag)
	if d.Redelivered() {
		text += fmt.Sprintf("It is a redelivery (delivery %d; failed %d times): the message went out before and came back, so it carries the redelivered flag, and the consumer may already have processed it. ", d.Msg.AcquiredCount, d.Msg.DeliveryCount)
	}
	if d.AutoAck {
		text += fmt.Sprintf("With auto-ack the queue forgets it the moment it leaves: if %s dies before processing it, it is lost (at-most-once).", d.Consumer)
		return Explanation{text, NoteDelivery}
	}
	text += fmt.Sprintf("It stays in the queue, unacked, until %s acks it; if the channel closes first, it goes back to the queue. ", d.Consumer)
	switch {
	case d.Prefetch == 0:
		text += fmt.Sprintf("%s has no prefetch limit: it now holds %d unacked.", d.Consumer, d.Unacked)
	case d.Unacked == d.Prefetch:
		text += fmt.Sprintf("%s now holds %d of its prefetch %d: its window is full, and the queue pushes it nothing more until it acks.", d.Consumer, d.Unacked, d.Prefetch)
	default:
		text += fmt.Sprintf("%s now holds %d of its prefetch %d.", d.Consumer, d.Unacked, d.Prefetch)
	}
	if view, ok := st.Queue(d.Queue); ok && view.Ready > 0 {
		text += fmt.Sprintf(" %d more wait in the queue.", view.Ready)
	}
	return Explanation{text, NoteDelivery}
}

func explainRejected(d queue.Rejected) Explanation {
	verb := "rejects (basic.reject)"
	if d.How == queue.SettleNack {
		verb = "nacks (basic.nack)"
	}
	if !d.Requeue {
		return Explanation{fmt.Sprintf("%s %s %s with requeue=false: the queue will not deliver it again; it dead-letters it (to its dead-letter exchange if it has one, else it drops it).", d.Consumer, verb, d.Msg.Label()), NoteDLQ}
	}
	text := fmt.Sprintf("%s %s %s with requeue=true: the message goes back to %s at its old position, to be delivered again, marked redelivered. ", d.Consumer, verb, d.Msg.Label(), d.Queue)
	if d.How == queue.SettleReject {
		text += "A reject counts as a failed delivery (RabbitMQ 4.3), a nack does not. "
	} else {
		text += "A nack does not count as a failed delivery (RabbitMQ 4.3), a reject does. "
	}
	text += "A message that fails every time is a poison message: without a delivery limit it comes back forever, ahead of everything behind it."
	return Explanation{text, NoteDLQ}
}

func explainConsumerClosed(e sim.Event, d queue.ConsumerClosed) Explanation {
	text := fmt.Sprintf("%s closes %s's channel %d on %s: %s. ", e.Node, d.Consumer, d.Channel, d.Queue, d.Reason)
	if d.Requeued == 0 {
		text += "It held no unacked messages. "
	} else {
		text += fmt.Sprintf("The %s it held unacked go back to the queue, to be delivered again, marked redelivered. ", plural(d.Requeued, "message"))
	}
	switch d.Op {
	case queue.OpDown:
		text += "The broker lost the consumer's connection. A crashed consumer, a cut-off one and a frozen one look the same to it: a connection that broke — heartbeats that stopped for two intervals, or a frame that went missing."
	case queue.OpEpoch:
		text += "The queue's new leader closes every channel opened under an older leader (its epoch), as consumers connected to a dead RabbitMQ node lose their connection; it does not count a failed delivery."
	case queue.OpTick:
		text += "The consumer held a delivery longer than consumer_timeout; its ack, when it comes, is void."
	}
	return Explanation{strings.TrimSpace(text), NoteDelivery}
}

// explainQueueSQS: SQS receives, visibility timeouts and deletes.
func explainQueueSQS(run *Run, e sim.Event, st *State) (Explanation, bool) {
	switch d := e.Data.(type) {
	case queue.MessagesReceived:
		return explainReceived(e, d), true
	case queue.VisibleAgain:
		return Explanation{fmt.Sprintf("%s is visible in %s again: %s received it %s ago and did not delete it within the visibility timeout (receive count %d). The next ReceiveMessage may return it — to %s or to another worker, even while %s is still processing it: SQS is at-least-once, and a timeout shorter than the processing makes duplicates.",
			d.Msg.Label(), d.Queue, d.Worker, d.Held, d.Msg.AcquiredCount, d.Worker, d.Worker), NoteDelivery}, true
	case queue.VisibilityExtended:
		return Explanation{fmt.Sprintf("%s's visibility is extended by %s (ChangeMessageVisibility): it stays hidden until %s. A worker that extends while it processes — the heartbeat AWS recommends for long jobs — keeps the message from coming back under its feet.", d.Msg.Label(), d.By, d.Msg.VisibleAt), NoteDelivery}, true
	case queue.VisibilityRefused:
		return Explanation{fmt.Sprintf("%s. ChangeMessageVisibility needs the current receipt handle: the message was received again since.", e.Detail), NoteDelivery}, true
	case queue.MessageDeleted:
		return Explanation{fmt.Sprintf("%s deletes %s from %s with receipt handle %s (DeleteMessage): it is gone for good. In SQS the delete is the acknowledgement: processing then deleting is at-least-once.", d.Worker, d.Msg.Label(), d.Queue, d.Handle), NoteDelivery}, true
	case queue.DeleteStale:
		return Explanation{fmt.Sprintf("%s deletes with receipt handle %s, which is stale: m%d is %s. SQS answers success but deletes nothing — the worker believes it is done, and the message will be processed again.", d.Worker, d.Handle, d.ID, d.Where()), NoteDelivery}, true
	case queue.DeleteGone:
		return Explanation{fmt.Sprintf("%s. Deleting a message that is gone already succeeds: DeleteMessage is idempotent.", e.Detail), NoteDelivery}, true
	}
	return Explanation{}, false
}

func explainReceived(e sim.Event, d queue.MessagesReceived) Explanation {
	got := d.What()
	text := fmt.Sprintf("%s calls ReceiveMessage on %s: %s. ", d.Worker, d.Queue, got)
	if len(d.Msgs) > 0 {
		text = fmt.Sprintf("%s receives from %s (ReceiveMessage): %s. Each message is hidden for the visibility timeout under a new receipt handle; %s must delete it with that handle before the timeout, or it becomes visible and is received again. ", d.Worker, d.Queue, got, d.Worker)
	}
	if len(d.Blocked) > 0 {
		text += "A FIFO queue returns nothing more of a message group while one of its messages is in flight: each group stays in order, and stalls behind its slowest message."
		return Explanation{strings.TrimSpace(text), NoteOrdering}
	}
	return Explanation{strings.TrimSpace(text), NoteDelivery}
}

// explainDeadLetters: messages that leave their queue without being processed: past the
// delivery limit, expired, redriven, dead-lettered or dropped.
func explainDeadLetters(run *Run, e sim.Event, st *State) (Explanation, bool) {
	switch d := e.Data.(type) {
	case queue.DeliveryLimitReached:
		return Explanation{fmt.Sprintf("%s has failed %d times, more than %s's delivery-limit (%d): instead of requeueing it once more, the queue dead-letters it (reason delivery_limit). That is what keeps a poison message from blocking the queue forever.",
			d.Msg.Label(), d.Msg.DeliveryCount, d.Queue, d.Limit), NoteDLQ}, true
	case queue.DeadLettered:
		return Explanation{fmt.Sprintf("%s dead-letters %s: it republishes it to exchange %q with routing key %q and an x-death header (%s: queue, reason, count) that says where it died and why. It leaves %s now; dead-lettering is at-most-once, as RabbitMQ's default: if %s dies before the target queue has it, it is gone.",
			d.Queue, d.Msg.Label(), d.Exchange, d.Key, deaths(d.Msg.Deaths), d.Queue, e.Node), NoteDLQ}, true
	case queue.DeadLetterUnrouted:
		return Explanation{fmt.Sprintf("%s, dead-lettered by %s, reaches exchange %q, which routes key %q to no queue: the message is gone. A dead-letter exchange needs a bound queue to catch what it gets.", d.Msg.Label(), d.Source, d.Exchange, d.Key), NoteDLQ}, true
	case queue.MessageDropped:
		why := "and the queue has no dead-letter exchange"
		if d.Cycle {
			why = "in a dead-letter cycle with no rejection in it (RabbitMQ drops those rather than loop forever)"
		}
		return Explanation{fmt.Sprintf("%s leaves %s (reason %s) %s: it is dropped, gone for good.", d.Msg.Label(), d.Queue, d.Reason, why), NoteDLQ}, true
	case queue.Expired:
		return Explanation{fmt.Sprintf("%s waited in %s until its TTL ran out at %s: it expires and is dead-lettered (reason expired), or dropped if the queue has no dead-letter exchange. A TTL on a holding queue whose dead letters go to the work queue is the classic RabbitMQ delayed retry.",
			d.Msg.Label(), d.Queue, d.Msg.ExpiresAt), NoteDelayed}, true
	case queue.Redriven:
		return Explanation{fmt.Sprintf("%s has been received %d times (maxReceiveCount %d) without being deleted: on this receive SQS moves it to the dead-letter queue %s instead of returning it (the redrive policy). The poison message stops coming back; someone must look at the DLQ.",
			d.Msg.Label(), d.Msg.AcquiredCount, d.MaxReceive, d.DLQ), NoteDLQ}, true
	}
	return Explanation{}, false
}

// deaths renders x-death as the trace does: orders/rejected×1,dlq/expired×2.
func deaths(ds []queue.Death) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%s/%s×%d", d.Queue, d.Reason, d.Count)
	}
	return strings.Join(parts, ",")
}

// explainQueueNode: a broker node starting or stopping to act for a queue, its journal,
// and its crash and restart.
func explainQueueNode(run *Run, e sim.Event, st *State) (Explanation, bool) {
	switch d := e.Data.(type) {
	case queue.EpochStarted:
		return Explanation{fmt.Sprintf("Epoch %d of %s: the first command a node that starts acting for the queue applies. Channels opened under an earlier epoch (an older leader) are closed and their unacked messages requeued, without counting a failed delivery, so every consumer reconnects to the node that acts for the queue now.",
			d.Epoch, d.Queue), NoteQueues}, true
	case queue.ActingStarted:
		return Explanation{fmt.Sprintf("%s now acts for %s: it leads the queue's Raft group in term %d and has applied its epoch %d, so it holds every committed command: %d ready, %d unsettled. Only the leader delivers, confirms and dead-letters; every member applies the same commands in the same order, so each holds the same queue and any of them can take over.",
			d.Node, d.Queue, d.Term, d.Epoch, d.Ready, d.Unsettled), NoteQueues}, true
	case queue.ActingStopped:
		return Explanation{fmt.Sprintf("%s stops acting for %s (term %d): it is no longer the Raft leader. It tells its consumers their channels are closed, so they go and find the new leader; what it had not committed never took effect.", d.Node, d.Queue, d.Term), NoteQueues}, true
	case queue.JournalRecovered:
		torn := ""
		if d.TornBytes > 0 {
			torn = fmt.Sprintf(", cut %dB torn tail", d.TornBytes)
		}
		return Explanation{fmt.Sprintf("%s replays %s's journal from its disk after a restart: %d commands%s, giving %d ready messages; %d were unacked, and are ready again (their consumers' channels died with the node). Only what was fsynced is there; a torn tail is cut at the first bad checksum.",
			e.Node, d.Queue, d.Commands, torn, d.Ready, d.WasUnacked), NoteWAL}, true
	case queue.JournalSynced:
		return Explanation{fmt.Sprintf("%s's disk confirms %s's journal up to %dB: the %d publisher confirms that waited for it go out now. A classic queue confirms a message only once it is on disk; one fsync covers every command written before it (group commit).",
			e.Node, d.Queue, d.Size, d.Released), NoteWAL}, true
	case sim.NodeCrashed:
		return explainQueueCrash(run, e, d, st)
	case sim.NodeRestarted:
		if slices.Contains(run.QueueNodes, e.Node) {
			return Explanation{fmt.Sprintf("%s restarts with a fresh process: its classic queues replay their journals, and its quorum queue members replay their Raft logs and rejoin as followers, catching up from the leader.", e.Node), NoteFaults}, true
		}
	}
	return Explanation{}, false
}

// explainQueueRaft: the Raft groups of quorum queues, one per queue, on the queue nodes.
func explainQueueRaft(run *Run, e sim.Event, st *State) (Explanation, bool) {
	if !slices.Contains(run.QueueNodes, e.Node) {
		return Explanation{}, false
	}
	group := raftGroup(st, e.Node)
	switch d := e.Data.(type) {
	case raft.PreCampaign:
		return Explanation{fmt.Sprintf("%s has not heard from a leader of the Raft group of %s for its election timeout: %s. A pre-candidate first asks whether the others would vote for it (pre-vote), so a member that was cut off cannot disrupt a healthy leader when it comes back.", e.Node, group, e.Detail), NoteRaft}, true
	case raft.Campaign:
		return Explanation{fmt.Sprintf("%s stands for leader of the Raft group of %s: %s. It votes for itself and asks the other members; it needs a majority. A member votes once per term, and only for a log at least as up to date as its own, so the winner has every committed command.", e.Node, group, e.Detail), NoteRaft}, true
	case raft.BecameLeader:
		return Explanation{fmt.Sprintf("%s wins the election: %s. It leads the Raft group of %s; before it acts for the queue it commits an epoch entry, which closes the channels opened under the old leader.", e.Node, e.Detail, group), NoteRaft}, true
	case raft.ElectionLost:
		return Explanation{fmt.Sprintf("%s: election %s. Without a majority nobody leads, and the queue waits: publishes are not confirmed and nothing is delivered.", e.Node, e.Detail), NoteRaft}, true
	case raft.Voted:
		return Explanation{fmt.Sprintf("%s answers a vote request in the Raft group of %s: %s. A member grants one vote per term, and only to a candidate whose log is at least as up to date as its own.", e.Node, group, e.Detail), NoteRaft}, true
	case raft.TermSeen:
		return Explanation{fmt.Sprintf("%s learns of term %d (%s from %s) and moves to it: in Raft a higher term always wins, and a leader that sees one steps down.", e.Node, d.Term, d.Msg, d.From), NoteRaft}, true
	case raft.LostQuorum, raft.SteppedDown:
		return Explanation{fmt.Sprintf("%s steps down as leader of the Raft group of %s: %s. A leader that cannot reach a majority (check-quorum) stops acting, so two nodes never act for one queue in the same term.", e.Node, group, e.Detail), NoteRaft}, true
	case raft.FollowerAppended:
		return Explanation{fmt.Sprintf("%s follows %s in the Raft group of %s: it appends entries %d..%d (term %d) to its log and tells the leader how far it has come. An entry is committed once a majority has it on disk.", e.Node, d.From, group, d.First, d.Last, d.Term), NoteRaft}, true
	case raft.LeaderAppended:
		what := "a queue command (an enqueue, an ack, a subscription, ...)"
		if d.Entry.Type == raft.EntryNoop {
			what = "the empty entry a new leader appends first: once it is committed, so is every entry before it, whichever leader wrote them"
		}
		return Explanation{fmt.Sprintf("%s leads the Raft group of %s and appends entry %d (term %d) to its log: %s. It takes effect only when a majority of the members have it on disk (commit); until then nobody acts on it.", e.Node, group, d.Entry.Index, d.Entry.Term, what), NoteRaft}, true
	case raft.Committed:
		return Explanation{fmt.Sprintf("%s learns that the Raft log of %s is committed up to entry %d — a majority has it on disk — and applies the entries to its copy of the queue. Every member applies the same commands in the same order; only the leader acts on them (delivers, confirms).", e.Node, group, d.Index), NoteRaft}, true
	case raft.Truncated:
		return Explanation{fmt.Sprintf("%s removes entries from the Raft log of %s (%s): its log diverges from the leader's there, and those entries were never committed, so no one acted on them.", e.Node, group, e.Detail), NoteTruncation}, true
	case raft.Recovered:
		return Explanation{fmt.Sprintf("%s reads its Raft state for %s from its disk: %s. A quorum queue member replays its log from the start (queues take no snapshots here) and rejoins as a follower; the leader sends it what it missed.",
			e.Node, group, e.Detail), NoteRaft}, true
	}
	return Explanation{}, false
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

// explainQueueClients: publishers, consumers and SQS workers, as they see the broker.
func explainQueueClients(run *Run, e sim.Event, st *State) (Explanation, bool) {
	switch d := e.Data.(type) {
	case queue.Published:
		text := fmt.Sprintf("%s publishes %q (seq %d) on its channel to %s. ", e.Node, d.Value, d.Seq, d.Node)
		if !d.Confirms {
			text += "Without publisher confirms it counts the message as sent at once: if the broker loses it, nobody will know."
		} else {
			text += fmt.Sprintf("It waits for %s's confirm: until then the message is in flight, and if no answer comes in time its fate is unknown.", d.Node)
		}
		return Explanation{text, NoteQueues}, true
	case queue.PublishReturned:
		return Explanation{fmt.Sprintf("%s gets its message back (basic.return): %s. It records the publish as failed: no queue has it.", e.Node, e.Detail), NoteQueues}, true
	case queue.PublisherConfirmed:
		if d.Returned != "" {
			return Explanation{fmt.Sprintf("%s: confirm %s. The confirm of a returned message only closes the publish: no queue has it.", e.Node, e.Detail), NoteQueues}, true
		}
		return Explanation{fmt.Sprintf("%s receives the confirm for %s: from now on its application may consider the message safe in the broker. Without confirms it could only hope.", e.Node, e.Detail), NoteQueues}, true
	case queue.PublisherNacked:
		return explainPublishNack(e, d.Certain), true
	case queue.ConfirmTimedOut:
		return Explanation{fmt.Sprintf("%s: %s. The publisher cannot tell whether the broker has the message, so the history records the publish as unknown and the checkers allow both outcomes. Publishing it again risks a duplicate; not doing so, a loss.", e.Node, e.Detail), NoteIdempotence}, true
	case queue.ConsumerChannelLost:
		return explainChannelLost(e, d), true
	case queue.ConsumerProcessed:
		return explainConsumerProcessed(e, d), true
	case queue.AckLost:
		return Explanation{fmt.Sprintf("%s: %s. The message was processed but the broker never hears so: it was requeued when the channel closed and will be processed again. At-least-once delivery means the consumer must tolerate duplicates (make processing idempotent).", e.Node, e.Detail), NoteDelivery}, true
	case queue.WorkerProcessed:
		if d.Failed {
			return Explanation{fmt.Sprintf("%s failed to process %s from %s and does not delete it: it becomes visible again when its visibility timeout runs out, and is received again — a poison message comes back forever unless a redrive policy moves it to a DLQ.", e.Node, d.Msg.Label(), d.Queue), NoteDLQ}, true
		}
		return Explanation{fmt.Sprintf("%s finished %s from %s and deletes it with its receipt handle (%s). Until the delete arrives, the message is only hidden: if the visibility timeout runs out first, it comes back.", e.Node, d.Msg.Label(), d.Queue, d.Handle), NoteDelivery}, true
	}
	return Explanation{}, false
}

func explainChannelLost(e sim.Event, d queue.ConsumerChannelLost) Explanation {
	text := fmt.Sprintf("%s learns that its channel %d on %s is closed: %s.", e.Node, d.Channel, d.Queue, d.Reason)
	switch {
	case d.Dropped > 0 && d.AutoAck:
		text += fmt.Sprintf(" %d buffered auto-acked deliveries dropped: lost.", d.Dropped)
	case d.Dropped > 0:
		text += fmt.Sprintf(" %d buffered deliveries dropped (the broker requeues them).", d.Dropped)
	}
	text += " It reconnects and subscribes again, to the node that acts for the queue now; what it held unacked is redelivered (to it or another consumer)."
	if d.Dropped > 0 && d.AutoAck {
		text += " Those deliveries were auto-acked: the queue forgot them when it sent them, so they are lost (at-most-once)."
	}
	return Explanation{text, NoteDelivery}
}

func explainConsumerProcessed(e sim.Event, d queue.ConsumerProcessed) Explanation {
	msg := d.Msg.Label()
	switch {
	case !d.Failed && d.AutoAck:
		return Explanation{fmt.Sprintf("%s finished processing %s from %s. With auto-ack there is nothing to acknowledge: the queue forgot the message when it sent it.", e.Node, msg, d.Queue), NoteDelivery}
	case !d.Failed:
		return Explanation{fmt.Sprintf("%s finished processing %s from %s and sends its ack (ack tag %d). The side effect happened; until the ack reaches the queue the message is unacked there, and if the channel closes first it will be processed again.", e.Node, msg, d.Queue, d.Tag), NoteDelivery}
	case d.AutoAck:
		return Explanation{fmt.Sprintf("%s failed to process %s from %s. With auto-ack there is nothing to reject: the queue forgot the message when it sent it, so it is not delivered again.", e.Node, msg, d.Queue), NoteDLQ}
	case !d.Open:
		return Explanation{fmt.Sprintf("%s failed to process %s from %s; its channel ch%d is closed, nothing to reject. The queue requeued the message when the channel closed: it is delivered again.", e.Node, msg, d.Queue, d.Channel), NoteDLQ}
	}
	text := fmt.Sprintf("%s failed to process %s from %s and answers %s: ", e.Node, msg, d.Queue, d.OnFail)
	switch d.OnFail {
	case queue.FailReject:
		text += "basic.reject with requeue=false, so the queue dead-letters it (or drops it without a dead-letter exchange)."
	case queue.FailNack:
		text += "basic.nack with requeue=true, so it goes back to the queue, not counted as a failed delivery."
	default:
		text += "basic.reject with requeue=true, so it goes back to the queue, counted as a failed delivery towards the delivery limit."
	}
	return Explanation{text, NoteDLQ}
}

// explainQueueCrash says what a crash means for the queue broker.
func explainQueueCrash(run *Run, e sim.Event, crash sim.NodeCrashed, st *State) (Explanation, bool) {
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
		text := fmt.Sprintf("%s crashes (%s). Its memory is gone: channels, unconfirmed routing, anything not fsynced; its disk keeps the rest. ", e.Node, crash.Lost)
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
