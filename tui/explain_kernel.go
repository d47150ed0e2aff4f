package tui

import (
	"fmt"
	"strings"

	"mqsim/sim"
)

// explainKernel says what kernel events (the faults the world applies) mean.
func explainKernel(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case sim.NodeCrashed:
		return Explanation{fmt.Sprintf("%s crashes (%s). Its memory is gone: in-flight requests, timers, anything not fsynced. Its disk keeps what was synced; when it restarts it recovers from there.", e.Node, d.Lost), NoteFaults}, true
	case sim.NodeKilled:
		return Explanation{fmt.Sprintf("%s's process is killed, but not its machine. Its memory is gone (in-flight requests, timers, pending fsyncs), yet every byte it wrote is still in the kernel's page cache (%dB of them not yet on the platter): a restarted process reads them all back. Only a power loss (crash) would lose them.", e.Node, d.Unsynced), NoteFaults}, true
	case sim.NodeRestarted:
		return Explanation{fmt.Sprintf("%s restarts with a fresh process that recovers from what its disk kept.", e.Node), NoteFaults}, true
	case sim.NodePaused:
		return Explanation{fmt.Sprintf("%s is paused, as by a long GC pause or a stopped VM: it receives nothing and no timer fires; what arrives waits. The others may decide it is dead.", e.Node), NoteFaults}, true
	case sim.NodeResumed:
		return Explanation{fmt.Sprintf("%s resumes (%d waiting events), and acts on old news: it may still believe it leads.", e.Node, d.Waiting), NoteFaults}, true
	case sim.Partitioned:
		sides := make([]string, len(d.Groups))
		for k, g := range d.Groups {
			sides[k] = strings.Join(g, " ")
		}
		return Explanation{fmt.Sprintf("The network splits into %s: messages between the sides are lost, in both directions. Each side goes on with what it can reach.", strings.Join(sides, " | ")), NoteFaults}, true
	case sim.Healed:
		if !d.All {
			return Explanation{fmt.Sprintf("The link %s -> %s heals: it carries messages again. Messages lost meanwhile stay lost; clients and followers retry.", e.Node, e.Peer), NoteFaults}, true
		}
		return Explanation{"The network heals: cut links carry messages again. Messages lost meanwhile stay lost; clients and followers retry.", NoteFaults}, true
	case sim.LinkCut:
		return Explanation{fmt.Sprintf("The link %s -> %s is cut: messages on it are lost, the other direction still works.", e.Node, e.Peer), NoteFaults}, true
	case sim.LinkClogged:
		return Explanation{fmt.Sprintf("The link %s -> %s is clogged: messages on it are held, then delivered in order when it is unclogged.", e.Node, e.Peer), NoteFaults}, true
	case sim.LinkUnclogged:
		return Explanation{fmt.Sprintf("The link %s -> %s is unclogged: the %d messages it held are delivered in order.", e.Node, e.Peer, d.Released), NoteFaults}, true
	case sim.DropNext:
		return Explanation{fmt.Sprintf("The next %s on %s -> %s will be lost. Other messages pass.", nextMessages(d.N, d.MsgKind), e.Node, e.Peer), NoteFaults}, true
	case sim.DelayNext:
		return Explanation{fmt.Sprintf("The next %s on %s -> %s will each arrive %s late; messages sent after one may overtake it.", nextMessages(d.N, d.MsgKind), e.Node, e.Peer, d.By), NoteFaults}, true
	case sim.DuplicateNext:
		return Explanation{fmt.Sprintf("The next %s on %s -> %s will each arrive twice: the receiver must recognise the copy.", nextMessages(d.N, d.MsgKind), e.Node, e.Peer), NoteFaults}, true
	case sim.HeldReleased:
		return Explanation{fmt.Sprintf("The clogged link %s -> %s delivers %d of the messages it held; %d stay held, and the link stays clogged.", e.Node, e.Peer, d.Released, d.Left), NoteFaults}, true
	case sim.Delayed:
		return Explanation{fmt.Sprintf("A message from %s to %s is held back %s by an armed fault: %s. Messages sent after it may arrive first.", e.Node, e.Peer, d.By, sim.Describe(d.Msg)), NoteFaults}, true
	case sim.Duplicated:
		return Explanation{fmt.Sprintf("A message from %s to %s is delivered twice by an armed fault: %s.", e.Node, e.Peer, sim.Describe(d.Msg)), NoteFaults}, true
	case sim.TornArmed:
		return Explanation{fmt.Sprintf("%s's disk is armed: its next crash tears the writes not yet fsynced, keeping part of them, possibly corrupt, as a power cut can. "+
			"Recovery must find the torn tail by its checksums and cut it.", e.Node), NoteWAL}, true
	case sim.Corrupted:
		if d.Err != "" {
			return Explanation{fmt.Sprintf("Bit rot on %s was asked for but not applied: %s.", e.Node, d.Err), NoteWAL}, true
		}
		return Explanation{fmt.Sprintf("Bytes %d..%d of %s on %s's disk flip (bit rot) although they were synced: only a checksum can tell. A broker that reads them must refuse the records, not serve them.",
			d.Off, d.Off+d.Len, d.File, e.Node), NoteWAL}, true
	case sim.Sent:
		return Explanation{fmt.Sprintf("%s sends to %s #%d: %s. %s", e.Node, orEnv(e.Peer), e.Msg, e.Detail, networkRule), NoteFaults}, true
	case sim.Received:
		return Explanation{fmt.Sprintf("%s receives from %s #%d: %s. %s", e.Node, orEnv(e.Peer), e.Msg, e.Detail, networkRule), NoteFaults}, true
	case sim.Dropped:
		return Explanation{fmt.Sprintf("A message from %s to %s is lost (%s): %s. The sender learns of it only by a missing answer, and retries when its timeout fires.",
			orEnv(e.Peer), e.Node, d.Why, sim.Describe(d.Msg)), NoteFaults}, true
	}
	return Explanation{}, false
}

// nextMessages is "message", "3 messages", or "3 AlterPartition messages".
func nextMessages(n int, kind string) string {
	what := "message"
	if n != 1 {
		what = fmt.Sprintf("%d messages", n)
	}
	if kind != "" {
		what = fmt.Sprintf("%s (%s)", what, kind)
	}
	return what
}

// networkRule is what the simulated network does to every message.
const networkRule = "Messages take the network's latency, may be reordered, lost or duplicated by a fault, and are held while a link is clogged."

// orEnv names a message's other end: a node, or the scenario itself.
func orEnv(peer string) string {
	if peer == "" {
		return "env"
	}
	return peer
}
