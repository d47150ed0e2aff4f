// Package raft is mqsim's one consensus implementation: Raft (Ongaro and Ousterhout,
// 2014; the thesis's pre-vote and check-quorum; etcd-io/raft's progress tracking and fast
// log backtracking) as a pure state machine that a host node embeds. The KRaft-style
// controller and the queue mode's quorum queues are hosts; KVNode, a replicated string
// map, is the smallest one.
//
// # Embedding
//
// A host owns a *Raft made by New with a Config and the host's StateMachine, and forwards
// three things to it:
//
//	func (h *Host) Start(env *sim.Env) { h.raft.Start(env) }  // recovers, restores the host
//	func (h *Host) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
//		if h.raft.Step(env, from, msg) { return }            // raft.Message, or FsyncDone of raft's files
//		... the host's own messages: Propose, ReadIndex ...
//	}
//	func (h *Host) Timer(env *sim.Env, tag sim.TimerTag) {
//		if h.raft.HandleTimer(env, tag) { return }           // Config.TimerKind, Arg = Config.Group
//		...
//	}
//
// Raft calls back StateMachine.Apply for every committed entry in order, Restore for a
// snapshot (at Start, or sent by the leader), and, if the host implements them,
// ReadHandler.ReadDone for ReadIndex and RoleObserver.RoleChanged. The host proposes with
// Propose (it learns the outcome when the entry at the returned index is applied: same
// term, committed; another term, lost), reads linearizably with ReadIndex, and compacts
// with Snapshot(index, data) when Applied()-SnapshotIndex() passes its bound. Several
// groups can share a host if each has its own Dir, Group and TimerKind/Group pair.
//
// # Persistence
//
// Everything lives on the node's sim.Disk under Config.Dir (see storage.go): the term
// and vote in two alternating CRC'd records, the log as a wal.Log (one batch per entry,
// the term as the batch's leader epoch, as KRaft's metadata log is a Kafka log), and
// snapshots in CRC'd files. Nothing that promises durability leaves the node before the
// fsync covering it completes: a vote is answered, and an append acknowledged, only once
// the term, vote and entries are durable (the answer waits in a queue; an answer that a
// truncation made untrue is dropped). A leader counts itself towards a commit only up to
// its own durable index; a candidate counts its own vote only once durable. Log fsyncs
// are group commits: one in flight, later writes share the next. Recovery reads the
// newest valid state record, the newest valid snapshot, and the wal (which cuts torn or
// corrupt tails by CRC), then reconciles the log with the snapshot.
//
// # Trace
//
// Each event is a type in events.go (EventDocs lists them), recorded with sim.Record;
// views switch on the type and read its fields. The events' kinds and text shapes: recover ("term 3 vote 2 (...), snapshot 40/t2, log
// 41..57"), election ("pre-candidate for term 4", "candidate for term 4", "leader for
// term 4 (votes s1 s2)", "lost term 4: 2 of 3 rejected"), vote ("vote for s2 in term 4
// granted", "pre-vote for s3 in term 5 rejected: log behind"), term ("5 (app from s3)"),
// append (leader "12/t3 8B", follower "10..14 t3 from s1"), truncate ("from 12: have t2,
// leader s1 has t3"), commit ("12"), snapshot ("taken at 40/t3 (...)", "sent 40/t3 to
// s2", "installing ...", "installed 40/t3 (...) from s1"), step-down ("term 4: lost
// quorum, 1 of 3 active", "term 4: s2 has term 5").
//
// # Simplifications
//
//   - Fixed membership: no joint consensus, learners or observers.
//   - A snapshot travels in one message (no chunking) and is kept in memory.
//   - No leadership transfer, no lease reads (reads use ReadIndex).
//   - The log is also held in memory from the snapshot on; the wal is its durable copy.
//   - Commands are not deduplicated: a client that retries a put after a timeout may
//     apply it twice (KVClient does not retry after a timeout).
//
// Bugs holds planted mistakes (commit on a minority, reads without a leadership check)
// that the package's property and linearizability tests must catch.
//
// testdata/machine holds the interaction tests (machine_test.go): a group whose messages
// wait until a command delivers or drops them and whose ticks happen on command, printing
// what each message caused.
package raft
