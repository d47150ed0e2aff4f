package tui

import (
	"fmt"
	"strings"

	"mqsim/model/proto"
	"mqsim/model/txn"
)

// commitPointText says why the prepare record decides a transaction; marker explanations
// end with it.
const commitPointText = "The PrepareCommit or PrepareAbort record, once replicated, is the transaction's commit point: a coordinator that takes over finds it in the log and writes the markers again, so every partition ends the transaction the same way."

func outcomeWord(commit bool) string {
	if commit {
		return "COMMIT"
	}
	return "ABORT"
}

// explainTxn says what the transaction coordinator's events mean.
func explainTxn(run *Run, i int, st *State) (Explanation, bool) {
	e := run.Events[i]
	switch d := e.Data.(type) {
	case txn.Loaded:
		held := "no transactional id yet"
		if len(d.Txns) > 0 {
			var names []string
			for _, t := range d.Txns {
				names = append(names, fmt.Sprintf("%s (producer id %d, epoch %d, %s)", t.ID, t.ProducerID, t.Epoch, t.State))
			}
			held = strings.Join(names, "; ")
		}
		return Explanation{fmt.Sprintf("%s now leads %s/%d, so it is the transaction coordinator of the transactional ids that hash to that partition. It rebuilt them from the partition's log (%d records): %s. "+
			"It acts on them once its high watermark reaches the end of what it read (until then it answers COORDINATOR_LOAD_IN_PROGRESS); then any transaction found prepared but not complete gets its markers sent again. Producers still talking to the old coordinator find this one with FindCoordinator.",
			e.Node, proto.TransactionStateTopic, d.Partition, d.Records, held), NoteTransactions}, true
	case txn.LoadCommitted:
		return Explanation{fmt.Sprintf("The high watermark of %s/%d on %s reached %d, the end of the log it loaded: every record it rebuilt its transactions from is now on the in-sync followers, so no further failover can take one back. "+
			"Only now does it answer producers and resume the markers of prepared transactions: acting on a record a failover could still erase would commit a transaction on some partitions that the next coordinator never knew was decided.",
			proto.TransactionStateTopic, d.Partition, e.Node, d.End), NoteTransactions}, true
	case txn.Unloaded:
		return Explanation{fmt.Sprintf("%s no longer leads %s/%d (%s): it stops coordinating its %d transactional ids and answers their producers NOT_COORDINATOR. Nothing is lost: every state change is a record of the partition, and its new leader loads them.",
			e.Node, proto.TransactionStateTopic, d.Partition, d.Why, d.Txns), NoteTransactions}, true
	case txn.LoadFailed, txn.Unreadable:
		return Explanation{fmt.Sprintf("%s could not read all of its transaction state partition while loading it: %s. The transactional ids are rebuilt from what it could read.", e.Node, e.Detail), NoteTransactions}, true
	case txn.Refused:
		return Explanation{fmt.Sprintf("The transaction coordinator on %s refused %s from transactional id %s (producer id %d, epoch %d) with %s: %s",
			e.Node, d.By, d.ID, d.ProducerID, d.Epoch, d.Err, refusedWhy(d)), NoteTransactions}, true
	case txn.Unfenced:
		return Explanation{fmt.Sprintf("%s from transactional id %s carries epoch %d, but a newer instance has epoch %d: it comes from a zombie and would be refused PRODUCER_FENCED. "+
			"Producer fencing is off (producer-fencing=off, as before KIP-98), so the coordinator accepts it and the zombie's work lands in the new instance's transactions.",
			d.By, d.ID, d.Epoch, d.Current), NoteTransactions}, true
	case txn.WriteFailed:
		return Explanation{fmt.Sprintf("The coordinator could not append %s's change to %s to its partition (%s): nothing changes and the requester is told to retry, as it would be told by any leader that cannot take a write.",
			d.ID, d.To, d.Err), NoteTransactions}, true
	case txn.WriteTimedOut:
		return Explanation{fmt.Sprintf("%s's change to %s was appended but not replicated within %s (the in-sync replicas did not catch up): the requester is answered COORDINATOR_NOT_AVAILABLE and retries; the state stays as it was.",
			d.ID, d.To, d.After), NoteTransactions}, true
	case txn.StateChanged:
		return Explanation{fmt.Sprintf("The record moving %s from %s to %s (producer id %d, epoch %d) is replicated: the change takes effect now, and the request that caused it is answered. %s",
			d.ID, d.From, d.To, d.ProducerID, d.Epoch, stateText(d.To)), NoteTransactions}, true
	case txn.Initialized:
		what := fmt.Sprintf("it bumped the epoch to %d: every older instance with this transactional id still using an older epoch is now fenced, at the coordinator and at every partition it writes", d.Epoch)
		switch {
		case d.New:
			what = "a first InitProducerId for this transactional id: it gets a new producer id and epoch 0"
		case d.Rotated:
			what = "the epoch was exhausted, so the id gets a new producer id with epoch 0, which fences the old one just as well"
		}
		return Explanation{fmt.Sprintf("The coordinator answered InitProducerId for %s with producer id %d, epoch %d: %s. "+
			"This is what makes a restarted producer safe: idempotence alone lasts one producer session, the transactional id carries across sessions.",
			d.ID, d.ProducerID, d.Epoch, what), NoteTransactions}, true
	case txn.Fenced:
		why := "a new instance of the same transactional id called InitProducerId"
		if d.By == txn.ReqTimeout {
			why = "the transaction stayed open longer than its transaction.timeout.ms"
		}
		return Explanation{fmt.Sprintf("%s while %s had a transaction open on %s: the coordinator bumps the epoch from %d to %d and aborts that transaction with the new epoch (PrepareEpochFence, then PrepareAbort). "+
			"The old instance can no longer add partitions, commit or write: every request with epoch %d is refused.",
			upperFirst(why), d.ID, proto.TPList(d.Partitions), d.Epoch, d.NewEpoch, d.Epoch), NoteTransactions}, true
	case txn.TimedOut:
		return Explanation{fmt.Sprintf("%s's transaction has been open for %s, longer than its transaction.timeout.ms of %s: the coordinator's periodic check aborts it. "+
			"Until then, read_committed consumers of its partitions could not read past its first record (the last stable offset stays there): a crashed transactional producer stalls them for at most this timeout.",
			d.ID, d.Open, d.Timeout), NoteTransactions}, true
	case txn.PartitionsAdded:
		who := "the producer"
		if d.FromBroker {
			who = "the partition leader, on the producer's behalf (KIP-890: the leader adds the partition when the first transactional batch arrives, so a late batch of an ended transaction cannot start a hanging one)"
		}
		what := fmt.Sprintf("partitions %s", proto.TPList(d.Partitions))
		if d.Group != "" {
			what = fmt.Sprintf("group %s's offsets partition %s (sendOffsetsToTransaction: the offsets commit with the transaction)", d.Group, proto.TPList(d.Partitions))
		}
		begin := ""
		if d.Began {
			begin = " This begins the transaction: its timeout runs from now."
		}
		return Explanation{fmt.Sprintf("%s (epoch %d) added %s to its transaction, as asked by %s. The coordinator must know every partition a transaction touches, to send each its marker at the end.%s",
			d.ID, d.Epoch, what, who, begin), NoteTransactions}, true
	case txn.MarkersSent:
		early := ""
		if d.Early {
			early = " These markers go out BEFORE the prepare record is replicated (the markers-before-prepare bug): if the coordinator fails over and the record is lost, the new coordinator does not know the transaction was decided, while some partitions already hold its marker."
		}
		return Explanation{fmt.Sprintf("The coordinator asks %s to write a %s marker for %s (producer id %d, epoch %d) in %s (attempt %d). A marker is a control batch in the partition's log: it ends the producer's transaction there, and read_committed consumers can read past it.%s %s",
			d.Leader, outcomeWord(d.Commit), d.ID, d.ProducerID, d.Epoch, proto.TPList(d.Partitions), d.Attempt, early, commitPointText), NoteTransactions}, true
	case txn.MarkerFailed:
		if d.Dropped {
			return Explanation{fmt.Sprintf("%s answered %s's marker for %s with %s: a newer epoch of the producer already ended a transaction there, so this marker is not needed.", d.Leader, d.ID, d.TP, d.Err), NoteTransactions}, true
		}
		return Explanation{fmt.Sprintf("%s could not write %s's marker in %s (%s): the coordinator sends it again after a short backoff, to whoever leads the partition then. The transaction's outcome is decided; only its markers are late.", d.Leader, d.ID, d.TP, d.Err), NoteTransactions}, true
	case txn.MarkersUnanswered:
		return Explanation{fmt.Sprintf("%s did not answer %s's markers for %s within %s (the request or its answer was lost, or the broker is down): the coordinator sends them again.", d.Leader, d.ID, proto.TPList(d.Partitions), d.After), NoteTransactions}, true
	case txn.MarkersNoLeader:
		return Explanation{fmt.Sprintf("The coordinator knows no leader for %s, so %s's markers there wait and are tried again after a backoff.", proto.TPList(d.Partitions), d.ID), NoteTransactions}, true
	case txn.MarkersDeferred:
		if len(d.Partitions) == 0 {
			return Explanation{fmt.Sprintf("Every marker of %s's transaction is written, but its Complete record failed %d times in a row: the coordinator tries again at its next periodic check (every %s). The outcome is safe: it is decided and in every partition.",
				d.ID, d.Attempts, d.Interval), NoteTransactions}, true
		}
		return Explanation{fmt.Sprintf("%s's markers for %s were sent %d times in a row without every partition taking them: the coordinator stops for now and tries again at its next periodic check (every %s). Until then read_committed consumers of those partitions stay behind the transaction.",
			d.ID, proto.TPList(d.Partitions), d.Attempts, d.Interval), NoteTransactions}, true
	case txn.MarkersResumed:
		why := "The coordinator found the transaction prepared but not complete in its partition's log, so the previous coordinator may have died before writing every marker: it sends them again."
		if d.Deferred && len(d.Partitions) == 0 {
			return Explanation{fmt.Sprintf("Every %s marker of %s's transaction is written; the periodic check tries its Complete record again.", outcomeWord(d.Commit), d.ID), NoteTransactions}, true
		}
		if d.Deferred {
			why = "Its markers had been deferred; the periodic check starts sending them again."
		}
		return Explanation{fmt.Sprintf("%s: %s markers for %s (producer id %d, epoch %d). %s %s", d.ID, outcomeWord(d.Commit), proto.TPList(d.Partitions), d.ProducerID, d.Epoch, why, commitPointText), NoteTransactions}, true
	case txn.MarkersWritten:
		then := "the coordinator now writes the Complete record, and the transactional id is ready for its next transaction."
		if d.Early {
			then = "but the prepare record is not replicated yet (the markers-before-prepare bug): Complete waits for it."
		}
		return Explanation{fmt.Sprintf("Every partition of %s's transaction holds its %s marker (producer id %d, epoch %d): %s", d.ID, outcomeWord(d.Commit), d.ProducerID, d.Epoch, then), NoteTransactions}, true
	}
	return Explanation{}, false
}

// refusedWhy says what a refusal's error means to the producer.
func refusedWhy(d txn.Refused) string {
	switch d.Err {
	case proto.ProducerFenced:
		return fmt.Sprintf("its epoch is not the transactional id's (%d): a newer instance took over, or the coordinator aborted the transaction, and this producer must close.", d.Current)
	case proto.ConcurrentTransactions:
		return "a state change of this transactional id is still in progress (being replicated, or its markers being written); the producer retries after a backoff."
	case proto.InvalidTxnState:
		return fmt.Sprintf("the request does not fit the transaction's state (%s), such as a commit of an aborted transaction or an EndTxn with none open.", d.State)
	case proto.InvalidProducerIDMapping:
		return "the coordinator knows no such producer id for this transactional id; the producer must call InitProducerId."
	case proto.InvalidTransactionTimeout:
		return "the producer's transaction.timeout.ms is above the brokers' transaction.max.timeout.ms."
	}
	return "the producer retries or gives up, as for any error."
}

// stateText says what a transaction state means.
func stateText(s txn.State) string {
	switch s {
	case txn.Empty:
		return "Empty: the id has a producer id and epoch and no open transaction."
	case txn.Ongoing:
		return "Ongoing: a transaction is open and the coordinator knows every partition it wrote to."
	case txn.PrepareCommit:
		return "PrepareCommit: the commit is decided; the markers go out now. " + commitPointText
	case txn.PrepareAbort:
		return "PrepareAbort: the abort is decided; the markers go out now. " + commitPointText
	case txn.CompleteCommit:
		return "CompleteCommit: every partition holds the COMMIT marker."
	case txn.CompleteAbort:
		return "CompleteAbort: every partition holds the ABORT marker."
	}
	return s.String() + "."
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
