// Package tui is mqsim's terminal UI: a Bubble Tea program over one recorded run of a
// scenario, that steps through its trace event by event, forwards and backwards, and
// shows for each event the cluster (brokers, partitions, a strip of records per replica
// with the high watermark and what is on disk), the clients, the network faults in
// force, the event in plain words, and what the checkers found. The Metrics pane (key 7;
// hidden until asked for, so the cluster keeps its room) shows the figures an operator
// watches (package metrics) at the current event: those its kernel step changed first,
// marked ▲ or ▼ with the value before, and ✖ on a figure past its alert threshold; after
// them, the load per partition (metrics.LoadOf, show load's figures).
//
// A queue-mode run (model/queue: RabbitMQ and SQS) shows the queue broker in the same
// panes: the nodes with the quorum queues each leads and its Raft term; each queue with
// its type, the node acting for it, ready and unacked counts, the head of its ready
// messages, each consumer's prefetch window with the deliveries it holds (channel,
// delivery tag, redelivered), SQS messages in flight with their visibility deadline, and
// dead-letter counts; the exchanges and bindings; publishers', consumers' and workers'
// counters. The recorder reads model/queue's read-only views (bounded heads of long
// queues). A queue's row changes at its first event of a kernel step and shows the queue
// after the step, except that enqueues, deliveries and acks are applied one event at a
// time from the trace, so stepping through a step's events shows each in turn. Explain
// speaks of queue events, ] and [ jump between queue kinds, and forks crash queue nodes
// and clients as they crash brokers.
//
// Transactions show in the log cluster's panes: transaction markers (control batches) in
// the replicas' strips, named COMMIT or ABORT and never read as records; the LSO beside
// the HW while an open transaction holds read_committed consumers back; each broker's
// transaction coordinators with their transactional ids (model/txn's Txn views); and in
// the Clients pane each transactional producer's and pipeline's transaction state. Jump
// groups for transactions match events by type (jump_txn.go), since a kind word may be
// shared by a commit and an abort; so do those of consumer groups (jump_group.go: join,
// sync, rebalance, commit), which gather the coordinator's and the members' events.
//
// The timeline's rows are what a search matches (/, then n and N, round past either
// end): step, time, node, kind and detail as shown, so a line copied from the screen or
// quoted in a note is found. From 120 columns the body has two columns; in a log
// cluster's run the timeline gets half the screen and every column past 145, its rows
// being the longest lines. In presenter mode the narration is reflowed to the pane's
// width; under --set or --fix it is marked as written for the run without them. A
// scenario's questions (script.Question) stay out of the narration: in quiz mode
// (Options.Quiz, mqsim quiz; quiz.go) the run stops before each question's step, a letter
// picks, and the answer computed while recording (runner.Runner.Reveal) shows where the
// run decides it, with the step that decided it; presenter mode reveals it on a key.
//
// A run is recorded once (Record): the scenario executes in a fresh world, synchronously,
// while an observer samples the cluster's read-only views after every kernel step that
// emitted trace events and records the differences as changes of a view model (State).
// Every CheckpointEvery events the view model is kept whole; the state at any event is the
// checkpoint before it with at most CheckpointEvery events' changes folded in
// (Run.StateAt). Going back is therefore as fast as going forward, and never undoes
// anything.
//
// Breaking the run on purpose (Fork) adds a fault to the script at the current event's
// time + 1ns and records the new script from the start: the world is deterministic, so
// the fork shares the original's past exactly, and its transcript (Run.Transcript) saved
// as a file replays it with mqsim run. The model never replays inside Update: PlanFork
// works the fork out at once, and the recording (ForkPlan.Record, single-threaded and
// deterministic as any run) runs as a tea.Cmd off the UI loop, with a progress line; esc
// cancels it (RecordWatched stops between events) and q and ctrl+c always quit.
//
// A classroom session (Options.Classroom; mqsim classroom serves one per student over
// SSH, all over one recorded run) follows the lecturer: a LecturerMsg moves it to the
// lecturer's event and presenter mode. While following, keys that would move it say how
// to leave; e explores on one's own (every key but forks, saves and branches, which would
// act on the lecturer's machine) and r rejoins at the lecturer's latest position
// (follow.go). The model knows nothing of SSH or of other sessions: the server delivers
// the messages.
//
// A session of mqsim serve opens as a run too (RecordSession): its scenario's steps,
// then each request the real clients sent and each operator command, replayed at the
// step it arrived, a step each; it does not fork. Live (Options.Live, mqsim serve --tui;
// live.go) the recorder stays attached to the served world and the server's world
// goroutine hands the UI read-only snapshots of the growing run; the UI waits for them
// in a tea.Cmd, and x gives its fault to the served world in another, so Update never
// blocks and never touches the world.
package tui
