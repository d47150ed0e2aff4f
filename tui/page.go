package tui

import (
	"github.com/charmbracelet/x/ansi"
)

// This file lends the TUI's own words to views outside the terminal (mqsim export
// --format html): what a pane shows, and which events ] and [ jump between, so that a
// page of a run says what the TUI says.

// PaneLines are the lines pane id (PaneClients, PaneCluster, ...) shows at the current
// event, w columns wide, without styling.
func (m Model) PaneLines(id, w int) []string {
	lines := m.pane(id, w).lines
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = ansi.Strip(l)
	}
	return out
}

// QueueMode reports whether the run is a queue broker's (RabbitMQ, SQS), whose Cluster
// pane shows queues rather than partitions.
func (r *Run) QueueMode() bool { return r.queueMode() }

// JumpTarget is one group of events the ] and [ keys jump between, with the events of
// the run that belong to it, in order.
type JumpTarget struct {
	Name   string
	Events []int
}

// JumpTargets are the run's jump groups, in the order the t key cycles through them,
// each with its events.
func (r *Run) JumpTargets() []JumpTarget {
	groups := jumpGroups
	if r.queueMode() {
		groups = queueJumpGroups
	}
	out := make([]JumpTarget, len(groups))
	for g, jg := range groups {
		out[g].Name = jg.Name
		for i, e := range r.Events {
			if jg.has(e) {
				out[g].Events = append(out[g].Events, i)
			}
		}
	}
	return out
}
