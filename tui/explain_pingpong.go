package tui

import (
	"fmt"

	"mqsim/model/pingpong"
)

// explainPingpong says what the kernel demo's events mean: a server that answers only
// what its journal holds durably.
func explainPingpong(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case pingpong.Journaled:
		return Explanation{fmt.Sprintf("%s writes ping %d from %s to its journal at byte %d and asks for an fsync; it answers only once the fsync completes, so an answered ping survives a crash.",
			e.Node, d.N, d.From, d.At), NoteWAL}, true
	case pingpong.Durable:
		return Explanation{fmt.Sprintf("%s's fsync completes: its journal is durable to byte %d, and it answers the %d ping(s) below it.", e.Node, d.Size, d.Answered), NoteWAL}, true
	case pingpong.Recovered:
		return Explanation{fmt.Sprintf("%s restarts and counts %d ping(s) in its journal: what was fsynced before the crash.", e.Node, d.Pings), NoteWAL}, true
	case pingpong.TornCut:
		return Explanation{fmt.Sprintf("%s finds a torn entry at the end of its journal (%d bytes of a write the crash interrupted) and cuts it.", e.Node, d.Bytes), NoteWAL}, true
	case pingpong.Ponged:
		if d.Duplicate {
			return Explanation{fmt.Sprintf("%s gets the answer to ping %d again: the network duplicated it.", e.Node, d.N), NoteFaults}, true
		}
		return Explanation{fmt.Sprintf("%s gets the answer to ping %d after %s: the round trip plus the server's fsync.", e.Node, d.N, d.RTT), NoteWAL}, true
	case pingpong.NoServer:
		return Explanation{fmt.Sprintf("%s was told to ping %q, which is no node of this world.", e.Node, d.To), ""}, true
	}
	return Explanation{}, false
}
