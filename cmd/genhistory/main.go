// Command genhistory writes the benchmarks' large valid history as JSON
// lines, so that `mqsim check` can be timed on it from the file:
//
//	go run ./cmd/genhistory -ops 1000000 -partitions 4 > big.jsonl
//	time go run ./cmd/mqsim check big.jsonl
package main

import (
	"flag"
	"fmt"
	"os"

	"mqsim/internal/benchhistory"
	"mqsim/model/history"
)

func main() {
	ops := flag.Int("ops", 1_000_000, "operations (each an invocation and a completion, about two lines)")
	parts := flag.Int("partitions", 4, "partitions of the one topic")
	flag.Parse()
	if *ops < 1 || *parts < 1 {
		fmt.Fprintln(os.Stderr, "genhistory: -ops and -partitions must be at least 1")
		os.Exit(2)
	}
	if err := history.WriteJSONLines(os.Stdout, benchhistory.Build(*ops, *parts)); err != nil {
		fmt.Fprintln(os.Stderr, "genhistory:", err)
		os.Exit(1)
	}
}
