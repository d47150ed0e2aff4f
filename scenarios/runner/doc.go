// Package runner executes scenario scripts: each command of a parsed script (package
// script) runs against one world, in order, and prints its output.
//
// Commands are registered in a table (see Commands) with their usage and help, so an
// unknown command, a missing argument or a bad value is reported as file:line with what
// was expected, before anything runs. One file per family: cmd_kernel.go (world, faults,
// time), cmd_cluster.go, cmd_controllers.go, cmd_groups.go, cmd_clients.go (produce,
// consume, check), cmd_patterns.go (delivery patterns), cmd_share.go (share groups:
// share-consumer name=C group=G topics=(T, ...) [ack=explicit|implicit] [poison=(...)]
// [processing=D] [max-poll-records=N] [reject-poison=BOOL], share-close C, show
// share-group G, show share-partition G T/P; the cluster keys share-lock-duration,
// share-delivery-limit, share-max-record-locks, share-session-timeout, share-heartbeat,
// share-auto-offset-reset), cmd_queue.go (the queue broker), cmd_pingpong.go.
package runner
