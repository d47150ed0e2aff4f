// Package scenarios is the catalogue: the scenario files built into the binary
// (scenarios/catalog/*.txt), listed by Catalog and found by name or path with Load.
//
// Its sub-packages are the other rooms of the scenario machinery:
//
//	scenarios/script   the file format: Parse, Step, Script (no dependency but datadriven)
//	scenarios/runner   the command interpreter: one Runner per run, one file per family of
//	                   commands (cmd_*.go), and the run's verdict
//	scenarios/swarm    random scenarios from a seed, their classification, the shrinker
//	scenarios/compare  mqsim compare's workloads: one workload through the log and the queue
//
// Every catalogue file is a golden test of the runner (go test ./scenarios/runner -rewrite
// refreshes the outputs for review); this package pins the trace hash of each at seeds 1-3.
package scenarios
