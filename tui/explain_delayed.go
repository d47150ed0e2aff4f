package tui

import (
	"fmt"

	"mqsim/model/broker"
	"mqsim/sim"
)

// NoteRetention is the note on retention and compaction.
const NoteRetention = "retention-and-compaction.md"

// explainDelayed says what a leader's delayed-message, retention and cleaner events mean:
// the log is the store of scheduled messages, and retention and compaction decide what
// stays in it.
func explainDelayed(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case broker.Scheduled:
		return Explanation{fmt.Sprintf("%s leads %s and appends %s as a scheduled entry at offset %d, due at %s (in %s). Consumers never see the entry; "+
			"the leader keeps it in its timing wheel and, when it is due, appends the message again for them. The entry is replicated like any record, so a new leader finds it in its own log.",
			e.Node, d.TP, d.Value, d.Offset, d.Due, sim.FormatDuration(d.Delay)), NoteDelayed}, true
	case broker.Released:
		text := fmt.Sprintf("%s's timing wheel says the message scheduled at offset %d of %s is due: it appends %s again at offset %d, where consumers read it (LEO %d).",
			e.Node, d.From, d.TP, d.Value, d.Offset, d.LEO)
		if d.Late > 0 {
			text += fmt.Sprintf(" It is %s late: no leader held the wheel while it was due (a failover), and the next one released it once it had rebuilt its wheel from the log.", sim.FormatDuration(d.Late))
		}
		return Explanation{text, NoteDelayed}, true
	case broker.ReleaseMissing:
		return Explanation{fmt.Sprintf("The delayed message scheduled at offset %d of %s is due, but retention already deleted its entry: there is nothing left to release. Retention counts from the entry's append, not from its due time.",
			d.Offset, d.TP), NoteDelayed}, true
	case broker.DelayLoaded:
		return Explanation{fmt.Sprintf("%s became leader of %s in epoch %d and rebuilt its timing wheel from its own log: %d scheduled message(s) still pending (entries minus releases minus cancellations). "+
			"No pending message is lost or released twice across a failover, because a release always follows its entry in the same log.", e.Node, d.TP, d.Epoch, len(d.Entries)), NoteDelayed}, true
	case broker.DelayUnloaded:
		return Explanation{fmt.Sprintf("%s drops its timing wheel for %s (%d pending): the next leader rebuilds it from the log.", e.Node, d.TP, d.Pending), NoteDelayed}, true
	case broker.DelayCancelled:
		return Explanation{fmt.Sprintf("%s cancels the delayed message at offset %d of %s (due %s): the cancellation marker at offset %d is in the log, so every later leader knows not to release it.",
			e.Node, d.Target, d.TP, d.Due, d.Marker), NoteDelayed}, true
	case broker.DelayRejected:
		return Explanation{fmt.Sprintf("%s refuses to cancel offset %d of %s (%s): it holds no pending delayed message there, because it was released already, cancelled, or never scheduled.",
			e.Node, d.Target, d.TP, d.Err), NoteDelayed}, true
	case broker.RetentionApplied:
		return Explanation{fmt.Sprintf("%s applies retention to %s below its high watermark (%d): %s. Whole segments go at once; a consumer whose position is below the new log start offset finds its records gone and must reset.",
			e.Node, d.TP, d.HW, d.Deletion), NoteRetention}, true
	case broker.LogCleaned:
		c := d.Cleaning
		if !c.Cleaned {
			return Explanation{fmt.Sprintf("%s's log cleaner looks at %s: %d of its %d cleanable bytes are dirty (written since the last cleaning), a ratio of %.2f, not above min.cleanable.dirty.ratio, so it waits.",
				e.Node, d.TP, c.DirtyBytes, c.CleanBytes+c.DirtyBytes, c.Ratio()), NoteRetention}, true
		}
		return Explanation{fmt.Sprintf("%s's log cleaner compacts %s below offset %d (never past the active segment or the last stable offset %d). "+
			"It mapped %d keys to their latest offset and rewrote %d segments, removing %d records that a later record of the same key replaces and %d tombstones older than delete.retention.ms. "+
			"Every record that stays keeps its offset: the removed offsets are gaps, and a consumer reading there gets the next record that survives.",
			e.Node, d.TP, c.FirstUncleanable, d.LSO, c.Keys, c.Segments, c.Superseded, c.Tombstones), NoteRetention}, true
	}
	return Explanation{}, false
}
