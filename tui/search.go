package tui

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/model/client"
	"mqsim/sim"
)

// rowWords are the kind and the detail of an event as the timeline shows them: a fault's
// kind behind its glyph (✖ breaks, ✔ mends), the detail behind the peer's arrow.
func rowWords(e sim.Event) (kind, detail string) {
	kind = e.Kind
	if isFault(kind) {
		glyph := "✖ "
		if isMend(kind) {
			glyph = "✔ "
		}
		kind = glyph + kind
	}
	detail = shownDetail(e)
	if e.Peer != "" {
		arrow := "->"
		if e.Kind == "recv" || e.Kind == "drop" {
			arrow = "<-"
		}
		detail = arrow + e.Peer + " " + detail
	}
	return kind, detail
}

// shownDetail is the detail of an event as the timeline shows it after the kind column:
// the recorded text, but for the events whose recorded text starts with the kind word
// again (the word of the scenario command), which are said from their fields instead.
func shownDetail(e sim.Event) string {
	switch d := e.Data.(type) {
	case client.Assigned:
		tps := make([]string, len(d.Partitions))
		for i, tp := range d.Partitions {
			tps[i] = tp.String()
		}
		from := ""
		if d.FromBeginning {
			from = " from beginning"
		}
		return fmt.Sprintf("[%s]%s (reset %s)", strings.Join(tps, ","), from, d.Reset)
	case client.Subscribed:
		inst, static := "", ""
		if d.InstanceID != "" {
			inst, static = " instance "+d.InstanceID, ", static"
		}
		return fmt.Sprintf("%s to %s%s (assignor %s, %s protocol, commit %s%s)", d.Group, strings.Join(d.Topics, ","), inst, d.Assignor, d.Protocol, d.Commit, static)
	}
	return e.Detail
}

// isMend reports whether a fault kind mends what another broke.
func isMend(kind string) bool {
	return slices.Contains([]string{"restart", "resume", "heal", "unclog"}, kind)
}

// searchText is an event's timeline row as a search sees it: step, time, node, kind and
// detail, one space apart, so that what a reader copies from the screen (or a note
// quotes, "ack t/0: offset 1") is found.
func searchText(e sim.Event) string {
	kind, detail := rowWords(e)
	return fmt.Sprintf("%d %s %s %s %s", e.Step, e.Time, e.Node, kind, detail)
}

// searchFrom moves to the next (dir=+1) or previous match of the search, going round
// past either end of the run.
func (m *Model) searchFrom(dir int, manual *func(int)) {
	q := strings.ToLower(m.search)
	match := func(e sim.Event) bool { return strings.Contains(strings.ToLower(searchText(e)), q) }
	i, wrapped := m.find(dir, match), false
	if i < 0 {
		// Round the end: the search starts again from the other end of the run.
		ev := m.Run().Events
		for j := range ev {
			k := j
			if dir < 0 {
				k = len(ev) - 1 - j
			}
			if m.visible(ev[k]) && match(ev[k]) {
				i, wrapped = k, true
				break
			}
		}
	}
	switch {
	case i < 0:
		m.status = fmt.Sprintf("/%s: no match", m.search)
	case wrapped:
		(*manual)(i)
		m.status = fmt.Sprintf("/%s: step %s (wrapped round)", m.search, m.Run().stepName(i))
	default:
		(*manual)(i)
		m.status = fmt.Sprintf("/%s: step %s", m.search, m.Run().stepName(i))
	}
}
