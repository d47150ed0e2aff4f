package tui

import (
	"fmt"
	"strings"
)

// explainController says what controller events mean.
func explainController(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	d := e.Detail
	switch e.Kind {
	case "controller":
		return Explanation{fmt.Sprintf("The controller starts (%s). It keeps the cluster's metadata — topics, each partition's replicas, leader, leader epoch and ISR — and watches the brokers' heartbeats. "+
			"(Kafka runs a quorum of KRaft controllers; here it is one node.)", d), NoteElection}, true
	case "register":
		return Explanation{fmt.Sprintf("The controller registers %s. A broker counts as alive while its heartbeats keep arriving within the session timeout; after that the controller fences it.", d), NoteElection}, true
	case "topic":
		return Explanation{fmt.Sprintf("The controller %s: it assigns each partition's replicas to brokers, makes the first one leader in epoch 0 with every replica in the ISR, and tells the brokers (LeaderAndIsr).", d), NoteElection}, true
	case "election":
		if m := reUnclean.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("No in-sync replica of %s is alive, and unclean.leader.election.enable is on: the controller makes %s leader in epoch %s although it is not in the ISR (%s). "+
				"It may lack records that were committed and acknowledged: they are lost, and their offsets will be reused for new records.",
				m[1], m[2], m[3], m[4]), NoteElection}, true
		}
		if m := reElection.FindStringSubmatch(d); m != nil {
			return Explanation{fmt.Sprintf("The controller elects %s to lead %s in epoch %s (why: %s). A clean election picks a live member of the ISR %s: "+
				"each has every committed record (those below the high watermark). Records only the old leader had — acknowledged with acks=1 but never replicated — were not committed: the new leader's log does not have them.",
				m[2], m[1], m[3], m[5], m[4]), NoteElection}, true
		}
	case "fence":
		name, why, _ := strings.Cut(d, ": ")
		return Explanation{fmt.Sprintf("The controller fences %s: %s, longer than the session timeout. It stops counting %s as alive, removes it from every ISR and elects new leaders for the partitions %s led.",
			name, why, name, name), NoteElection}, true
	case "active":
		return Explanation{fmt.Sprintf("%s becomes the active controller (%s). The controllers run Raft over the metadata log (KRaft); the Raft leader acts only once it has applied the whole log, so it goes on from every decision its predecessors committed. Before fencing anyone it gives every live broker a new session.", e.Node, d), NoteElection}, true
	case "resign":
		return Explanation{fmt.Sprintf("%s stops acting as the controller: %s. Its decisions that did not commit are void; the next active controller decides again from the committed log.", e.Node, d), NoteElection}, true
	case "apply":
		return Explanation{fmt.Sprintf("%s applies a committed batch of the metadata log: %s. Every controller applies the same records in the same order, so any of them can take over.", e.Node, d), NoteElection}, true
	case "discover":
		return Explanation{fmt.Sprintf("%s looks for the active controller: %s. Only the active controller answers; the others say NOT_CONTROLLER and name it when they know it.", e.Node, d), NoteElection}, true
	}
	return Explanation{}, false
}
