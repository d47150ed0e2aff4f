package main

import (
	"regexp"
	"strings"
	"testing"
)

// The replicated-log starter fails at seed 2: mqsim lab shrinks the run, prints what the
// checkers found, writes the scenario, and --tui opens it at the step where it broke:
// the leader acknowledging offset 0 while r2, down, lacks it. The solution passes.
func TestLabReplicatedLog(t *testing.T) {
	checkLab(t, labCase{lab: "replicated-log", seeds: 5, step: 335, width: 140,
		output: []string{
			"lab replicated-log, starter code: 5 seeds from 1\n",
			"seed 2 fails (nonlinearizable, inconsistent-offsets, lost-write, nonmonotonic-send); shrinking its 47 commands...\n",
			"  step 335: inconsistent-offsets: offset 0 (index 0) holds 2 values: \"w1-1.4\", \"w1-1.31\"\n",
			"go run ./cmd/mqsim tui FILE --step 335\n",
		},
		header: "# Lab replicated-log: seed 2 failed (nonlinearizable, inconsistent-offsets, lost-write, nonmonotonic-send), shrunk from 47 to 19 commands.",
		screen: "the acknowledgment of offset 0 with r2 down", atStep: func(screen string) bool {
			return regexp.MustCompile(`▶\s+337\s+\S+\s+r1\s+replica-ack offset 0 to w1`).MatchString(screen) && strings.Contains(screen, "r2 ✖ down")
		}})
}
