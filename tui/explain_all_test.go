package tui

import (
	"testing"

	"mqsim/scenarios"
)

// Every event of every catalogue scenario is explained by the explainer of its own
// package, by type: none falls through to the generic "NODE KIND: DETAIL." line.
func TestEveryCatalogueEventIsExplained(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		run := record(t, e.Name)
		missing := map[string]int{}
		for i := range run.Events {
			st := run.StateAt(i)
			explained := false
			for _, explain := range explainers {
				if ex, ok := explain(run, i, &st); ok && ex.Text != "" {
					explained = true
					break
				}
			}
			if !explained {
				missing[run.Events[i].Kind]++
			}
		}
		for kind, n := range missing {
			t.Errorf("%s: %d %q events have no explanation", e.Name, n, kind)
		}
	}
}
