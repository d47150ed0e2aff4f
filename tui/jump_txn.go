package tui

import (
	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/group"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/sim"
)

// The transaction jump groups pick events by type, not kind word: a transaction's end is
// one kind whether it committed or aborted, and a marker's refusal shares "reject" with
// refused produce batches.
var txnJumpGroups = []jumpGroup{
	{Name: "txn-begin", Match: isTxnBegin},
	{Name: "txn-commit", Match: func(e sim.Event) bool { return txnOutcome(e) == outcomeCommit }},
	{Name: "txn-abort", Match: func(e sim.Event) bool { return txnOutcome(e) == outcomeAbort }},
	{Name: "txn-marker", Match: isTxnMarker},
	{Name: "txn-fence", Match: isTxnFence},
}

// isTxnBegin: a producer begins a transaction, and its coordinator learns of it (the
// first partition added starts the transaction's timeout).
func isTxnBegin(e sim.Event) bool {
	switch d := e.Data.(type) {
	case client.TxnBegun:
		return true
	case txn.PartitionsAdded:
		return d.Began
	}
	return false
}

type outcome uint8

const (
	outcomeNone outcome = iota
	outcomeCommit
	outcomeAbort
)

// txnOutcome says which way an event ends a transaction: the coordinator's decision
// (Prepare*) and completion (Complete*), the producer's end, the group's pending offsets
// settled; a timeout and a producer that must abort are aborts.
func txnOutcome(e sim.Event) outcome {
	of := func(commit bool) outcome {
		if commit {
			return outcomeCommit
		}
		return outcomeAbort
	}
	switch d := e.Data.(type) {
	case txn.StateChanged:
		switch d.To {
		case txn.PrepareCommit, txn.CompleteCommit:
			return outcomeCommit
		case txn.PrepareAbort, txn.CompleteAbort:
			return outcomeAbort
		}
	case client.TxnEnded:
		switch d.Outcome {
		case history.Ok:
			return outcomeCommit
		case history.Fail:
			return outcomeAbort
		}
	case group.TxnOffsetsCompleted:
		return of(d.Commit)
	case txn.TimedOut, client.TxnMustAbort:
		return outcomeAbort
	}
	return outcomeNone
}

// isTxnMarker: the coordinator sending, resending or finishing markers, and the partition
// leaders writing, refusing and answering them.
func isTxnMarker(e sim.Event) bool {
	switch e.Data.(type) {
	case txn.MarkersSent, txn.MarkersResumed, txn.MarkersWritten, txn.MarkerFailed, txn.MarkersUnanswered,
		txn.MarkersNoLeader, txn.MarkersDeferred,
		broker.MarkerAppended, broker.MarkerRejected, broker.MarkersAnswered:
		return true
	}
	return false
}

// isTxnFence: an epoch bump that fences older instances, a request refused because its
// epoch is old, a producer that stops because it is fenced, transactional offsets
// refused (or, with the planted bug, taken) from a stale member; and producer-fencing=off
// letting a zombie through.
func isTxnFence(e sim.Event) bool {
	switch d := e.Data.(type) {
	case txn.Fenced, txn.Unfenced, group.TxnCommitRejected, group.TxnCommitUnfenced:
		return true
	case txn.Initialized:
		return !d.New
	case txn.Refused:
		return d.Err == proto.ProducerFenced
	case client.TxnStopped:
		return d.Fenced
	}
	return false
}
