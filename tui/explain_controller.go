package tui

import (
	"fmt"
	"strings"

	"mqsim/model/controller"
	"mqsim/model/proto"
)

// NotePartitions is the note on topics, partitions, keys and their order.
const NotePartitions = "topics-partitions-keys.md"

// explainController says what a controller's events mean: the active controller (the
// single "ctl", or in KRaft the Raft leader of c1..cN once it has applied the metadata
// log) decides, every controller applies the committed decisions.
func explainController(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case controller.NoBroker:
		return Explanation{fmt.Sprintf("The controller is configured for broker %s, but the cluster has no such node: it leaves it out of every assignment.", d.Name), NoteRaft}, true
	case controller.SingleActive:
		return Explanation{fmt.Sprintf("The controller starts (%s). It keeps the cluster's metadata — topics, each partition's replicas, leader, leader epoch and ISR — and watches the brokers' heartbeats. "+
			"(Kafka runs a quorum of KRaft controllers; here it is one node.)", e.Detail), NoteElection}, true
	case controller.Activated:
		return Explanation{explainActivated(e.Node, d), NoteRaft}, true
	case controller.Resigned:
		why := fmt.Sprintf("it is no longer the Raft leader of term %d (it is a %s in term %d)", d.Term, d.Role, d.NowTerm)
		if d.Cause == controller.ProposalRefused {
			why = "the Raft leader refused its proposal (too many entries not yet committed)"
		}
		text := fmt.Sprintf("%s stops acting as the active controller: %s. Its decisions that did not commit are void", e.Node, why)
		if d.Unsent > 0 {
			text += fmt.Sprintf(", and the %d answers and pushes that waited for them are dropped: telling a broker about a decision that may never commit could contradict the next controller", d.Unsent)
		}
		return Explanation{text + ". The next active controller decides again from the committed metadata log.", NoteRaft}, true
	case controller.Registered:
		return Explanation{fmt.Sprintf("%s, the active controller, registers %s (incarnation %d) in the metadata log. %s counts as alive while its heartbeats keep arriving within the session timeout; after that the controller fences it. "+
			"Partitions left offline for want of %s get a leader again.", e.Node, d.Broker, d.Incarnation, d.Broker, d.Broker), NoteElection}, true
	case controller.TopicCreated:
		c := d.Config
		return Explanation{fmt.Sprintf("%s, the active controller, creates topic %s: %s, replication factor %d, min.insync.replicas %d. "+
			"It assigns each partition's replicas across the brokers, makes the first live one leader with every replica in the ISR, and writes the records to the metadata log; the brokers hear of it once the batch is durable.",
			e.Node, c.Name, plural(c.Partitions, "partition"), c.ReplicationFactor, c.MinInsyncReplicas), NoteElection}, true
	case controller.BrokerFenced:
		return Explanation{explainFenced(e.Node, d), NoteElection}, true
	case controller.ISRShrunk:
		return Explanation{fmt.Sprintf("With %s fenced, the controller removes it from the ISR of %s, which it followed: the ISR is now %s. "+
			"The high watermark no longer waits for %s, and acks=all needs min.insync.replicas of the members left.%s",
			d.Broker, d.TP, bracket(d.ISR), d.Broker, explainELR(d.ELR)), NoteISR}, true
	case controller.PartitionOffline:
		keeps := "The ISR keeps its last member, which alone is sure to hold every committed record; the partition comes back with it."
		if len(d.ISR) == 0 {
			keeps = fmt.Sprintf("With eligible leader replicas (KIP-966) the ISR may be empty: the replicas that left it below min.insync.replicas, %s, still hold every committed record, and the first of them to be alive again leads cleanly.", bracket(d.ELR))
		}
		return Explanation{fmt.Sprintf("No member of %s's ISR %s is alive (%s) and unclean leader election is off: the partition has no leader and is offline; its producers and consumers wait. %s",
			d.TP, bracket(d.ISR), d.Why, keeps), NoteElection}, true
	case controller.LeaderElected:
		if d.Why.Kind == controller.OperatorElection {
			return Explanation{fmt.Sprintf("An operator asked for this election (kafka-leader-election.sh, the ElectLeaders request): %s leads %s in epoch %d, ISR %s unchanged. "+
				"The old leader is not fenced: it hears from the controller's push that it follows now, and answers what it still had waiting with NOT_LEADER_OR_FOLLOWER, so producers retry at %s. "+
				"The new leader is in the ISR, so it has every committed record: nothing acknowledged is lost.",
				d.Leader, d.TP, d.Epoch, bracket(d.ISR), d.Leader), NoteElection}, true
		}
		if d.Why.Kind == controller.Rebalance {
			return Explanation{fmt.Sprintf("The controller's leader imbalance check (auto.leader.rebalance.enable) found %s not led by its preferred replica, the first of its assignment, although that replica is alive and in the ISR: it elects %s in epoch %d. "+
				"This is how leadership spreads out again after a failover. The old leader is not fenced; it follows in the new epoch.",
				d.TP, d.Leader, d.Epoch), NoteElection}, true
		}
		if d.Why.Kind == controller.ShuttingDown {
			return Explanation{fmt.Sprintf("%s asked for a controlled shutdown, so the controller moves its leadership of %s to %s (epoch %d) before it stops: a live ISR member, with every committed record. "+
				"Producers are redirected within milliseconds, instead of waiting a session timeout for a crashed leader to be noticed.",
				d.Why.Broker, d.TP, d.Leader, d.Epoch), NoteElection}, true
		}
		return Explanation{explainElected(d), NoteElection}, true
	case controller.PartitionsCreated:
		return Explanation{fmt.Sprintf("%s, the active controller, grows topic %s from %d to %d partitions (CreatePartitions). "+
			"The new partitions get replicas and a leader and start empty; the old ones keep their records. "+
			"Producers hash keys to the new count once their metadata says so, so a key's later records may land in another partition than its earlier ones.",
			e.Node, d.Topic, d.Before, d.After), NotePartitions}, true
	case controller.PartitionsRefused:
		return Explanation{fmt.Sprintf("%s refuses to give topic %s %d partitions: %s (%s). Kafka only ever adds partitions: removing one would leave its records nowhere.",
			e.Node, d.Topic, d.Count, d.Err, d.Reason), NotePartitions}, true
	case controller.ElectionRefused:
		why := map[proto.Error]string{
			proto.ElectionNotNeeded:           "it already leads",
			proto.PreferredLeaderNotAvailable: "the preferred replica (first in the assignment) is not alive and in the ISR, so it might lack committed records",
			proto.EligibleLeadersNotAvailable: "it is not alive and in the ISR, so it might lack committed records",
		}[d.Err]
		return Explanation{fmt.Sprintf("The controller refuses to elect %s for %s (%s): %s. An operator's election never picks a replica outside the ISR.", d.Wanted, d.TP, d.Err, why), NoteElection}, true
	case controller.ShutdownStarted:
		return Explanation{fmt.Sprintf("%s asked for a controlled shutdown (its heartbeat says WantShutDown). In one metadata change the controller moves the leaderships it held (%d) to other in-sync replicas and takes it out of the ISRs (%d more), "+
			"so that no acks=all write waits for it. From now on it may neither lead nor rejoin an ISR.", d.Broker, len(d.Moved), len(d.LeftISR)), NoteElection}, true
	case controller.ShutdownGranted:
		return Explanation{fmt.Sprintf("%s leads nothing and every other live broker has reported the metadata that says so: the controller fences it and answers ShouldShutDown. It flushes its logs and exits; nobody waits for it.", d.Broker), NoteElection}, true
	case controller.ReassignmentStarted:
		return Explanation{fmt.Sprintf("A reassignment of %s to %s starts. The controller does not swap replicas at once: the replica set becomes the target plus the replicas being removed (%s), and the ISR stays. "+
			"The added replicas (%s) fetch from the leader like any follower; only when they are all in the ISR are the old ones removed, so the committed records never have fewer copies.",
			d.TP, bracket(d.Target), bracket(d.Removing), bracket(d.Adding)), NoteReplication}, true
	case controller.ReassignmentDone:
		return Explanation{fmt.Sprintf("The last added replica joined the ISR, so the reassignment of %s completes in the same metadata change: replicas %s, ISR %s, leader %s. "+
			"A removed leader gets NEW_LEADER_ELECTED for its ISR change and learns from the push that it no longer holds the partition.",
			d.TP, bracket(d.Replicas), bracket(d.ISR), d.Leader), NoteReplication}, true
	case controller.ISRChanged:
		return Explanation{fmt.Sprintf("The controller accepts the leader's AlterPartition for %s: the ISR goes from %s to %s (%s). "+
			"It bumps the partition epoch, so a stale leader's request naming the old one is refused, and the brokers hear of the new ISR once the change is durable.%s",
			d.TP, bracket(d.Before), bracket(d.After), d.Reason, explainELR(d.ELR)), NoteISR}, true
	case controller.UncleanShutdown:
		return Explanation{fmt.Sprintf("%s restarted (%s): a broker that comes back without a clean shutdown may have lost records it had acknowledged (its unsynced tail), so the controller no longer counts it among %s's eligible leader replicas (KIP-966). ISR %s, ELR %s. "+
			"If nothing eligible is left, the last known leader may still be elected, as an unclean election.",
			d.Broker, d.Why, d.TP, bracket(d.ISR), bracket(d.ELR)), NoteElection}, true
	case controller.Applied:
		return Explanation{fmt.Sprintf("%s applies the committed batch at entry %d (term %d) of the metadata log to its copy of the metadata: %s. "+
			"Every controller applies the same records in the same order, so any of them can take over as the active controller with the same metadata.",
			e.Node, d.Index, d.Term, describeRecords(d.Records)), NoteRaft}, true
	}
	return Explanation{}, false
}

// explainElected says how the controller chose a leader (PartitionChangeBuilder's order).
func explainElected(d controller.LeaderElected) string {
	switch d.Via {
	case controller.ViaUnclean:
		return fmt.Sprintf("No in-sync or eligible replica of %s is alive, and unclean.leader.election.enable is on: the controller makes %s, the first live replica in assignment order, leader in epoch %d although it is not in the ISR (%s). "+
			"It may lack records that were committed and acknowledged: they are lost, and their offsets will be reused for new records.",
			d.TP, d.Leader, d.Epoch, d.Why)
	case controller.ViaLastKnownLeader:
		return fmt.Sprintf("%s has an empty ISR and no eligible leader replica left, so the controller elects %s, its last known leader, in epoch %d (%s), even with unclean election off (KIP-966's balanced recovery). "+
			"It is an unclean election: %s restarted and may have lost acknowledged records, and the other replicas will truncate to its log.",
			d.TP, d.Leader, d.Epoch, d.Why, d.Leader)
	case controller.ViaELR:
		return fmt.Sprintf("%s's ISR is empty, but %s is an eligible leader replica (KIP-966): it left the ISR while the ISR was below min.insync.replicas, when the high watermark could not advance, so it holds every committed record. "+
			"The controller elects it cleanly in epoch %d with ISR %s (%s); without ELR the partition would wait for its last ISR member.",
			d.TP, d.Leader, d.Epoch, bracket(d.ISR), d.Why)
	}
	return fmt.Sprintf("The controller elects %s to lead %s in epoch %d (why: %s). A clean election picks a live member of the ISR %s, the first in replica-assignment order: "+
		"each has every committed record (those below the high watermark). Records only the old leader had — acknowledged with acks=1 but never replicated — were not committed: the new leader's log does not have them.",
		d.Leader, d.TP, d.Epoch, d.Why, bracket(d.ISR))
}

// explainELR says what the eligible leader replicas are, when there are any.
func explainELR(elr []string) string {
	if len(elr) == 0 {
		return ""
	}
	return fmt.Sprintf(" The ISR is now below min.insync.replicas, so %s join the eligible leader replicas (ELR, KIP-966): the high watermark stops, so they keep every committed record and stay electable if the ISR empties.", bracket(elr))
}

// explainActivated says what a new active KRaft controller starts from.
func explainActivated(node string, d controller.Activated) string {
	text := fmt.Sprintf("%s becomes the active controller in controller epoch %d. It is the Raft leader of term %d and has applied the metadata log up to entry %d, "+
		"so it goes on from every decision its predecessors committed (%s) and never contradicts them. ",
		node, d.Epoch, d.Epoch, d.Offset, plural(d.Topics, "topic"))
	switch {
	case len(d.Sessions)+len(d.Fenced) == 0:
		text += "No broker has registered yet."
	default:
		if len(d.Sessions) > 0 {
			text += fmt.Sprintf("It gives %s a new session before fencing anyone: a broker that was talking to the old controller gets a full session timeout to find this one.", strings.Join(d.Sessions, ", "))
		}
		if len(d.Fenced) > 0 {
			text += fmt.Sprintf(" %s stay fenced until they register again.", strings.Join(d.Fenced, ", "))
		}
	}
	return text
}

// explainFenced says why the controller declared a broker dead and what follows.
func explainFenced(node string, d controller.BrokerFenced) string {
	var why string
	switch d.Why.Kind {
	case controller.Restarted:
		why = fmt.Sprintf("it came back as a new process (incarnation %d -> %d) that lost its memory; the controller fences it as if its session had expired, so a fast restart cannot keep leaderships it no longer backs, and then registers it again", d.Why.Old, d.Why.New)
	default:
		why = fmt.Sprintf("no heartbeat for %s, longer than the session timeout", d.Why.Silence)
	}
	return fmt.Sprintf("%s, the active controller, fences %s: %s. It stops counting %s as alive, removes it from every ISR and elects new leaders for the partitions %s led.",
		node, d.Broker, why, d.Broker, d.Broker)
}

// describeRecords puts an applied batch's records in words.
func describeRecords(recs []controller.MetadataRecord) string {
	const most = 4
	var parts []string
	for k, r := range recs {
		if k == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(recs)-most))
			break
		}
		switch r.Kind {
		case controller.RegisterRecord:
			parts = append(parts, fmt.Sprintf("%s registered (incarnation %d)", r.Broker, r.Incarnation))
		case controller.FenceRecord:
			parts = append(parts, r.Broker+" fenced")
		case controller.TopicRecord:
			parts = append(parts, "topic "+r.Topic+" created")
		case controller.PartitionRecord:
			if r.Leader == "" {
				parts = append(parts, fmt.Sprintf("%s offline, ISR %s", r.TP, bracket(r.ISR)))
			} else {
				parts = append(parts, fmt.Sprintf("%s led by %s in epoch %d, ISR %s", r.TP, r.Leader, r.Epoch, bracket(r.ISR)))
			}
		case controller.ProducerIDsRecord:
			parts = append(parts, fmt.Sprintf("producer ids handed out up to %d", r.ProducerIDs))
		}
	}
	return strings.Join(parts, "; ")
}

func bracket(names []string) string { return "[" + strings.Join(names, " ") + "]" }
