package tui

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// withAt inserts "at T FAULT" right after the output of the first command that starts
// with after ("cluster "), by hand, the way a person would write it.
func withAt(t *testing.T, text, after, line string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, after) {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) == "" {
				out := append(append([]string{}, lines[:j+1]...), line, "----", "")
				return strings.Join(append(out, lines[j+1:]...), "\n")
			}
		}
	}
	t.Fatalf("no %q command", after)
	return ""
}

// TestForkEquivalence: forking at step k with a crash gives exactly the trace of the
// scenario file with that crash at that time (at T crash b1).
func TestForkEquivalence(t *testing.T) {
	orig := record(t, "acks1-leader-crash")
	var text string
	for _, e := range scenarios.Catalog() {
		if e.Name == "acks1-leader-crash" {
			text = e.Text
		}
	}
	for _, tc := range []struct {
		node, kind, detail, fault string
		after                     string // the command the at line follows in the file
	}{
		{"b1", "append", "offsets 0..0", "crash b1", "cluster "},      // before the first ack: "before" is lost too
		{"b1", "ack", "offset 1 to p1", "crash b2", "cluster "},       // the new leader-to-be dies as well
		{"ctl", "election", "", "restart b1", "cluster "},             // b1 back early
		{"b2", "hw", "HW 0 -> 1", "cut b2 <-> b3", "cluster "},        // a link cut after the election
		{"b3", "replicate", "offsets 0..0", "crash b1", "cluster "},   // the flagship crash, earlier
		{"b1", "fsync", "offsets below 2", "crash b1 b3", "cluster "}, // two at once, after the ack at the same time
		// The producer exists once the first produce command made it: the at line goes
		// right after that command.
		{"p1", "send", "lost", "drop-next b1 -> p1", "produce "}, // the ack of "lost" never arrives
		{"b1", "follower", "follows b2", "pause p1", "produce "}, // a client paused
	} {
		t.Run(tc.fault+"@"+tc.node+"-"+tc.kind, func(t *testing.T) {
			k := find(t, orig, 0, tc.node, tc.kind, tc.detail)
			act, err := sim.ParseAction(strings.Fields(tc.fault))
			if err != nil {
				t.Fatal(err)
			}
			fork, err := Fork(orig, k, act, "fork-1")
			if err != nil {
				t.Fatal(err)
			}
			at := orig.Events[k].Time + 1
			file := withAt(t, text, tc.after, "at "+at.String()+" "+tc.fault)
			s, err := script.Parse("fork.txt", file)
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(s, runner.Options{}, nil)
			if err != nil && fork.Err == nil {
				t.Fatalf("the file stops (%v), the fork does not", err)
			}
			want := res.Runner.World().Trace().Events()
			if !reflect.DeepEqual(fork.Events, want) {
				t.Fatalf("fork: %d events, file: %d events; first difference at %d", fork.Len(), len(want), firstDiff(fork.Events, want))
			}
			if err == nil && fork.Hash != res.Hash {
				t.Errorf("hash %s, the file gives %s", fork.Hash, res.Hash)
			}
			// The fork shares the original's past: everything up to the fork point.
			if !reflect.DeepEqual(fork.Events[:k+1], orig.Events[:k+1]) {
				t.Errorf("the fork's past differs from the original at %d", firstDiff(fork.Events, orig.Events))
			}
			// The fault is the next thing that happens after the events at the fork
			// point's time (when it shows in the trace: a restart of a live node does not).
			if act.Verb != sim.VerbRestart {
				next := k + 1
				for next < fork.Len() && fork.Events[next].Time == orig.Events[k].Time {
					next++
				}
				if f := fork.Events[next]; f.Time != at || f.Kind != string(act.Verb) {
					t.Errorf("after the fork point comes %s, want %s at %s", f, act.Verb, at)
				}
			}
			// The original is untouched.
			if again := record(t, "acks1-leader-crash"); !reflect.DeepEqual(again.Events, orig.Events) {
				t.Errorf("the original run changed")
			}
			// Saved, the fork replays itself.
			path := filepath.Join(t.TempDir(), "fork.txt")
			if err := os.WriteFile(path, []byte(fork.Transcript()), 0o644); err != nil {
				t.Fatal(err)
			}
			saved, err := scenarios.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			res2, _ := runner.Run(saved, runner.Options{}, nil)
			if res2 == nil || !reflect.DeepEqual(res2.Runner.World().Trace().Events(), fork.Events) {
				t.Errorf("the saved fork does not replay it")
			} else if len(res2.Mismatches) > 0 && fork.Err == nil {
				t.Errorf("the saved fork's outputs differ from its replay at %v", res2.Mismatches)
			}
		})
	}
}

func firstDiff(a, b []sim.Event) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestForkErrors: faults the run cannot take are refused with a reason, nothing recorded.
func TestForkErrors(t *testing.T) {
	orig := record(t, "acks1-leader-crash")
	for _, tc := range []struct {
		at    int
		fault string
		want  string
	}{
		{0, "crash b1", "does not exist yet"},
		{40, "crash b9", "no node \"b9\""},
		{-1, "crash b1", "no event"},
	} {
		act, err := sim.ParseAction(strings.Fields(tc.fault))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Fork(orig, tc.at, act, "x"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("fork at %d with %s: %v, want %q", tc.at, tc.fault, err, tc.want)
		}
	}
}
