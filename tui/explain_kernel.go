package tui

import (
	"fmt"
)

// explainKernel says what kernel events mean.
func explainKernel(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	d := e.Detail
	switch e.Kind {
	case "crash":
		return Explanation{fmt.Sprintf("%s crashes (%s). Its memory is gone: in-flight requests, timers, anything not fsynced. Its disk keeps what was synced; when it restarts it recovers from there.", e.Node, d), NoteFaults}, true
	case "restart":
		return Explanation{fmt.Sprintf("%s restarts with a fresh process that recovers from what its disk kept.", e.Node), NoteFaults}, true
	case "pause":
		return Explanation{fmt.Sprintf("%s is paused, as by a long GC pause or a stopped VM: it receives nothing and no timer fires; what arrives waits. The others may decide it is dead.", e.Node), NoteFaults}, true
	case "resume":
		return Explanation{fmt.Sprintf("%s resumes (%s), and acts on old news: it may still believe it leads.", e.Node, d), NoteFaults}, true
	case "partition":
		return Explanation{fmt.Sprintf("The network splits into %s: messages between the sides are lost, in both directions. Each side goes on with what it can reach.", d), NoteFaults}, true
	case "heal":
		return Explanation{"The network heals: cut links carry messages again. Messages lost meanwhile stay lost; clients and followers retry.", NoteFaults}, true
	case "cut":
		return Explanation{fmt.Sprintf("The link %s -> %s is cut: messages on it are lost, the other direction still works.", e.Node, e.Peer), NoteFaults}, true
	case "clog", "unclog":
		return Explanation{fmt.Sprintf("The link %s -> %s is %sged: messages on it are held, then delivered in order when it is unclogged (%s).", e.Node, e.Peer, e.Kind, d), NoteFaults}, true
	case "drop-next":
		return Explanation{fmt.Sprintf("The next message on %s -> %s will be lost (%s).", e.Node, e.Peer, d), NoteFaults}, true
	}
	return Explanation{}, false
}
