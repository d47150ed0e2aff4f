package main

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mqsim/model/history"
)

func TestExportWritesEachFormat(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		format string
		extra  []string
		want   string // in the output
	}{
		{"svg", []string{"--from", "44", "--to", "80"}, "steps 44..80 of 344"},
		{"mermaid", []string{"--from", "44", "--to", "80", "--hide", "BrokerHeartbeat"}, "sequenceDiagram\n"},
		{"jsonl", []string{"--from", "47", "--to", "47"}, `"step":47,"time":166958000,"node":"env","kind":"partition"`},
		{"history", nil, `"value":"lost"`},
		{"jepsen", nil, `[[:send "t-0" [1 "lost"]]]`},
		{"porcupine", nil, "<html"},
		// The election at 3.5s (step 76) leaves t/0 with ISR [b2 b3] of three replicas.
		{"metrics", nil, "3500000000,3.5s,76,partition,t/0,UnderReplicated,1,true\n"},
	} {
		path := filepath.Join(dir, "out."+tc.format)
		args := append([]string{"export", "acks1-leader-crash", "--format", tc.format, "-o", path}, tc.extra...)
		out, _, err := run(t, args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
		if out != "" {
			t.Errorf("%s: -o still wrote to stdout", tc.format)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tc.want) {
			t.Errorf("%s: no %q in the output", tc.format, tc.want)
		}
		switch tc.format {
		case "svg":
			dec := xml.NewDecoder(bytes.NewReader(data))
			for {
				if _, err := dec.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("svg: %v", err)
				}
			}
		case "history":
			if _, err := history.ReadJSONLines(bytes.NewReader(data)); err != nil {
				t.Errorf("history: %v", err)
			}
		case "metrics":
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatalf("metrics: %v", err)
			}
			if got := strings.Join(rows[0], ","); got != "time_ns,time,step,level,scope,metric,value,alert" {
				t.Errorf("metrics header %q", got)
			}
			// The fetch rate is there: the export traces messages.
			if !strings.Contains(string(data), ",broker,b1,TotalFetchRequestsPerSec,0.1,false\n") {
				t.Errorf("metrics: no fetch rate")
			}
		}
	}
	// Without -o the output goes to stdout; a default window is announced on stderr.
	out, errOut, err := run(t, "export", "acks1-leader-crash", "--format", "mermaid")
	if err != nil || !strings.HasPrefix(out, "sequenceDiagram\n") {
		t.Fatalf("stdout %.40q, %v", out, err)
	}
	if !strings.Contains(errOut, "of 344 (choose others with --from and --to)") {
		t.Errorf("stderr %q", errOut)
	}
	// The command line is in the diagram, so a file says how to make it again.
	if !strings.Contains(out, "%% mqsim export acks1-leader-crash --format mermaid\n") {
		t.Errorf("no command line in the diagram")
	}
}

func TestExportFixAndSeed(t *testing.T) {
	fixed, _, err := run(t, "export", "acks1-leader-crash", "--format", "jepsen", "--fix")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fixed, `:type :ok, :f :send, :value [[:send "t-0" [1 "lost"]]]`) {
		t.Errorf("with --fix, lost is still acknowledged at offset 1")
	}
	a, _, _ := run(t, "export", "kernel-pingpong", "--format", "jsonl", "--seed", "2")
	b, _, _ := run(t, "export", "kernel-pingpong", "--format", "jsonl")
	if a == b || a == "" {
		t.Errorf("--seed 2 exported the same trace as seed 1")
	}
}

func TestExportErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "acks1-leader-crash", "--format", "png"}, `--format "png": want one of svg, mermaid, jsonl, history, jepsen, porcupine`},
		{[]string{"export", "acks1-leader-crash", "--format", "history", "--from", "3"}, "--format history always exports the whole history"},
		{[]string{"export", "acks1-leader-crash", "--format", "jepsen", "--hide", "heartbeat"}, "--nodes and --hide shape the diagrams"},
		{[]string{"export", "acks1-leader-crash", "--to", "500"}, "--to 500: the run has 344 kernel steps"},
		{[]string{"export", "acks1-leader-crash", "--nodes", "b7"}, `no node "b7"`},
		{[]string{"export", "kernel-pingpong", "--format", "history"}, "starts no cluster"},
		{[]string{"export", "kernel-pingpong", "--fix"}, "names no fix"},
		{[]string{"export", "no-such-scenario"}, "no scenario file or catalogue entry"},
		{[]string{"export", "acks1-leader-crash", "--full", "--from", "3"}, "--full draws the whole run and --from/--to a window of it"},
		{[]string{"export", "acks1-leader-crash", "--format", "mermaid", "--full"}, "--format mermaid has no slide"},
	} {
		_, _, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The SVG is a slide by default, and says so on stderr; --full draws the whole run.
func TestExportSVGIsASlideUnlessFull(t *testing.T) {
	slide, errOut, err := run(t, "export", "acks1-leader-crash", "--format", "svg")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(slide, `width="1600" height="900" viewBox="0 0 1600 900"`) {
		t.Errorf("the default SVG is not a 1600x900 slide: %.300q", slide)
	}
	if want := "mqsim export: a 1600x900 slide of steps 43..52 of 344, around step 51, b1 acks offset 1 to p1 at HW 1 (the whole run: --full)\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	full, errOut, err := run(t, "export", "acks1-leader-crash", "--format", "svg", "--full")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(full, "steps 1..344 of 344") || strings.Contains(full, `class="callout"`) || errOut != "" {
		t.Errorf("--full is not the whole run's diagram (stderr %q): %.300q", errOut, full)
	}
	if !strings.Contains(full, "mqsim export acks1-leader-crash --format svg --full") {
		t.Errorf("--full is not in the diagram's command line")
	}
}

// mqsim export counts steps as mqsim run does: the step mqsim run names for the lost write
// is the window that shows its mark, and a window before it shows none.
func TestExportWindowIsTheStepMqsimRunPrints(t *testing.T) {
	out, _, _ := run(t, "run", "acks1-leader-crash")
	if !strings.Contains(out, "violation log lost-write t-0 at t=166.958ms (step 48)") {
		t.Fatalf("mqsim run no longer names step 48 for the lost write:\n%s", out)
	}
	svg, _, err := run(t, "export", "acks1-leader-crash", "--format", "svg", "--from", "48", "--to", "48")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg, `<g class="violation"><title>begins here: `) || !strings.Contains(svg, "lost-write: acknowledged value") {
		t.Errorf("steps 48..48 do not mark the lost write")
	}
	before, _, err := run(t, "export", "acks1-leader-crash", "--format", "svg", "--from", "40", "--to", "47")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(before, `class="violation"`) {
		t.Errorf("steps 40..47 mark a violation that begins at step 48")
	}
}
