// Package script reads scenario files: narrated scripts of commands, each followed by
// the output it must print, in the format of github.com/cockroachdb/datadriven. The same
// file is a golden test, a teaching transcript, and the input of `mqsim run`.
//
// A file is a sequence of steps:
//
//	# Narration: comment lines before a command explain what is about to happen.
//	run for=10ms
//	----
//	<the output the command must print>
//
// The package only parses and formats; scenarios/runner gives the commands their meaning.
package script
