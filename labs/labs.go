// Package labs runs mqsim's labs: exercises in which the learner's own Go code runs
// inside the simulation and a swarm of random runs judges it. Each lab is a folder
// (labs/NAME) with a README (the task, the property, how to run it, the time it takes),
// an interface package the learner implements, starter/ code that compiles and is wrong
// in the way beginners are wrong, and solution/, the reference.
//
// The learner's code is compiled in: they edit labs/NAME/starter in their clone and run
// `go run ./cmd/mqsim lab NAME`, which checks the code for the model's determinism rules
// (determinism.go), then runs the lab's swarm profile on it and prints the failures,
// shrunk by scenarios/swarm's shrinker. A lab adds the scenario commands that build its
// nodes (runner.Register) and its property to the run's verdict (Runner.AddJudge), so a
// failing run is a scenario file that mqsim run and mqsim tui replay like any other.
package labs

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/swarm"
)

// Code is which implementation of a lab's interface a run uses.
type Code string

const (
	// Starter is the learner's code, labs/NAME/starter.
	Starter Code = "starter"
	// Solution is the reference solution, labs/NAME/solution.
	Solution Code = "solution"
)

// Lab is one lab.
type Lab struct {
	Name    string
	Summary string // one line
	// Minutes is about how long the lab takes a learner who knows Go.
	Minutes int
	// Sources holds the Go files of starter/ and solution/ as compiled in.
	Sources fs.FS
	// Generate writes the scenario of one random run of the lab with code.
	Generate func(seed uint64, code Code) string
}

// All lists the labs, in the order of the practice path.
func All() []Lab { return []Lab{idempotentConsumer, orderedRetries, replicatedLog} }

// Find is the lab named name.
func Find(name string) (Lab, error) {
	var names []string
	for _, l := range All() {
		if l.Name == name {
			return l, nil
		}
		names = append(names, l.Name)
	}
	return Lab{}, fmt.Errorf("no lab %q: the labs are %s", name, strings.Join(names, ", "))
}

// Check checks code's files for the determinism rules (determinism.go).
func (l Lab) Check(code Code) ([]Problem, error) {
	sub, err := fs.Sub(l.Sources, string(code))
	if err != nil {
		return nil, err
	}
	return CheckFS(sub, "labs/"+l.Name+"/"+string(code), "mqsim/labs/"+l.Name)
}

// Result is what one seed of a lab found.
type Result = swarm.SeedResult

// RunSeed runs one seed of the lab on code.
func (l Lab) RunSeed(seed uint64, code Code) Result {
	res := swarm.RunScript(fmt.Sprintf("%s-seed-%d", l.Name, seed), l.Generate(seed, code))
	res.Seed = seed
	return res
}

// Shrink makes a failing run's scenario smaller while it fails with one of the same
// anomalies (scenarios/swarm's shrinker), within maxRuns candidate runs.
func Shrink(ctx context.Context, res Result, maxRuns int) swarm.Shrunk {
	return swarm.ShrinkWatched(ctx, res.Script, res.Failures, maxRuns)
}

// FirstFailure is the earliest violation of a failing result that counts, for the TUI
// to open at its step.
func FirstFailure(res Result) (checker.Violation, bool) {
	var first checker.Violation
	found := false
	for _, v := range res.Report.Violations {
		if !slices.Contains(res.Failures, v.Anomaly) {
			continue
		}
		if !found || v.Step < first.Step {
			first, found = v, true
		}
	}
	return first, found
}

// needCluster is the run's log cluster, which every lab command needs: its history
// recorder and its verdict are the lab's.
func needCluster(r *runner.Runner) (*cluster.Cluster, error) {
	c := r.Cluster()
	if c == nil {
		return nil, fmt.Errorf("no cluster yet: start one with the cluster command")
	}
	return c, nil
}

// learnerCode reads a lab command's code= and returns the constructor of that code's
// implementation (the starter's or the solution's).
func learnerCode[T any](a *runner.Args, codes map[Code]func() T) (Code, func() T, error) {
	code, err := a.Required("code")
	if err != nil {
		return "", nil, err
	}
	build, ok := codes[Code(code)]
	if !ok {
		return "", nil, fmt.Errorf("code=%s: want starter or solution", code)
	}
	return Code(code), build, nil
}
