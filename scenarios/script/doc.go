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
// Some narration lines are settings of the file rather than prose: "fix: KEY=VALUE ...",
// "tags: a, b", and the questions a scenario asks its reader (mqsim quiz):
//
//	# ask: Is "lost" read by the end? choices=(yes, no) answer=read(lost) concept=acks
//	# The explanation: the narration lines right after the question, up to a blank one.
//	crash b1
//	----
//	...
//	# reveal
//	trace kinds=(election)
//
// A question is asked before the command its narration precedes runs. Its answer is
// computed before the command whose narration holds the next "reveal" line runs, or
// after the last command when no reveal line follows; an answer that reads the run's
// verdict (anomaly, violations) is always computed at the end, where the verdict is
// judged. choices= (at least two, in parentheses), answer= and concept= (a note of notes/
// by its name without ".md") are all required, in any order, each once.
//
// The answer is an expression the runner evaluates against the run's typed state, never
// text the author typed or mqsim printed (so it follows the model when the model
// changes, and --fix or --set answers it again):
//
//	expr := word | name "(" [arg {sep arg}] ")"      arg := expr | key "=" word
//	sep  := "," or blanks                             word := [A-Za-z0-9-_./:]+
//
// with the functions of Functions:
//
//	leader(t/0)        the partition's leader as the controller has it (none when offline)
//	epoch(t/0)         its leader epoch
//	isr(t/0)           its in-sync replicas, sorted, separated by blanks ("b1 b2 b3")
//	hw(t/0 [, b2])     the high watermark of the leader's replica (or of b2's)
//	leo(t/0 [, b2])    the log end offset, likewise
//	read(V)            yes when an ok poll or queue delivery returned V, else no
//	acked(V)           yes when the send of V completed ok, else no
//	count(read|acked [value=V] [partition=t/0])   how many records were read / sends acked
//	anomaly(NAME)      yes when the verdict found that anomaly (failure or allowed)
//	violations()       how many violations the verdict holds
//	generation(G)      the consumer group's generation at its coordinator
//	dead-lettered(Q)   how many messages queue Q has dead-lettered: to its dead-letter
//	                   exchange (RabbitMQ), or redriven to its dead-letter queue (SQS)
//	if(COND, A, B)     A when COND (read, acked or anomaly) answers yes, else B
//
// The computed answer must be one of the choices; a test recomputes every question of
// the catalogue (scenarios/quiz).
//
// The package only parses and formats; scenarios/runner gives the commands their meaning.
package script
