// Package scenarios runs scenario files: narrated scripts of commands, each followed by
// the output it must print, in the format of github.com/cockroachdb/datadriven. The same
// file is a golden test (go test ./scenarios -rewrite refreshes the outputs for review), a
// teaching transcript, and the input of `mqsim run`.
//
// A file is a sequence of steps:
//
//	# Narration: comment lines before a command explain what is about to happen.
//	run for=10ms
//	----
//	<the output the command must print>
//
// Commands are registered in a table (see Commands) with their usage and help, so an
// unknown command, a missing argument or a bad value is reported as file:line with what
// was expected, before anything runs.
package scenarios
