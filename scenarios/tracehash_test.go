package scenarios

import (
	"flag"
	"fmt"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"os"
	"strings"
	"testing"
)

var rewriteHashes = flag.Bool("rewrite-hashes", false, "rewrite testdata/trace-hashes.txt from this run")

// The trace hash of every catalogue scenario at seeds 1-3 is pinned: the hash covers every
// event's kind and text, so a change to how any event prints, or to what a run does, shows
// here. A change that means to alter traces rewrites the file with -rewrite-hashes and says
// why in its commit.
func TestTraceHashesPinned(t *testing.T) {
	const path = "testdata/trace-hashes.txt"
	var got strings.Builder
	got.WriteString("# scenario seed trace-hash (go test ./scenarios -run TestTraceHashesPinned -rewrite-hashes)\n")
	for _, e := range Catalog() {
		s, err := script.Parse(e.Name, e.Text)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			res, err := runner.Run(s, runner.Options{Seed: seed, SeedSet: true}, nil)
			if err != nil {
				t.Fatalf("%s seed %d: %v", e.Name, seed, err)
			}
			fmt.Fprintf(&got, "%s %d %s\n", e.Name, seed, res.Hash)
		}
	}
	if *rewriteHashes {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("line %d: pinned %q, this run %q", i+1, w, g)
		}
	}
}
