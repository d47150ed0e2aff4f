// Package notes holds mqsim's teaching notes: one Markdown file per concept, with the path
// through them in README.md. The package has no code; its tests keep the notes true. Every
// transcript excerpt is rerun and must still appear in its scenario's output, every
// diagram is regenerated and must be unchanged, every scenario a note names must exist,
// and every catalogue scenario must be named by a note.
//
// An excerpt is a fenced code block whose first line is the command that prints it, with
// the seed pinned:
//
//	```
//	$ mqsim run acks1-leader-crash --seed 1
//	produce value=lost
//	----
//	lost: ok t/0@1
//	...
//	check
//	----
//	result: invalid (3 violations, 0 allowed)
//	```
//
// The lines after the command are copied from the output; a line "..." elides any number
// of lines. Lines between two elisions must appear in the output together and in that
// order. --fix and --set KEY=VALUE may follow the seed. An excerpt of `mqsim estimate
// FLAGS` is recomputed through the estimate package, as the command computes it. A diagram carries the `mqsim
// export` command that made it (in the SVG's header, in a Mermaid "%%" comment); after a
// deliberate change, `go test ./notes -update` regenerates every diagram file.
package notes
