package queue

import (
	"fmt"
	"slices"
	"strings"
)

// Bug is a deliberate, realistic mistake a queue broker can run with, so that a scenario
// (queue-broker bugs=(NAME, ...)) or a queue swarm shows the checkers catching it. Every
// bug is off by default; DESIGN.md's rule: a historical or plausible bug is an explicit,
// named mode, never the default.
type Bug string

const (
	// BugConfirmBeforeCommit: a quorum queue's leader answers an enqueue as soon as it
	// has appended it to its own log, before a majority has it. A leader that loses its
	// place before the entry commits takes a confirmed message with it; and an enqueue
	// that came out of order, answered early, is never sent again.
	BugConfirmBeforeCommit Bug = "confirm-before-commit"
	// BugConfirmOnRoute: the node a publisher talks to confirms a publish once it has
	// routed it, before any queue has it. If that node dies (or gives up) before the
	// queues answer, a confirmed message is gone.
	BugConfirmOnRoute Bug = "confirm-on-route"
)

// BugInfo describes one plantable bug.
type BugInfo struct {
	Name Bug
	What string
}

// BugList is every plantable queue-broker bug, in a fixed order.
var BugList = []BugInfo{
	{BugConfirmBeforeCommit, "a quorum queue's leader confirms an enqueue on its own append, before a majority has it"},
	{BugConfirmOnRoute, "the publisher's node confirms a publish once routed, before any queue has it"},
}

// ParseBug reads a bug's name.
func ParseBug(name string) (Bug, error) {
	for _, b := range BugList {
		if string(b.Name) == name {
			return b.Name, nil
		}
	}
	var names []string
	for _, b := range BugList {
		names = append(names, string(b.Name))
	}
	return "", fmt.Errorf("unknown queue-broker bug %q; want one of %s", name, strings.Join(names, ", "))
}

// has reports whether the node runs with bug b planted.
func (c Config) has(b Bug) bool { return slices.Contains(c.Bugs, b) }
