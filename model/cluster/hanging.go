package cluster

import (
	"fmt"
	"slices"

	"mqsim/model/broker"
	"mqsim/model/proto"
	"mqsim/model/txn"
)

// HangingTransaction: a partition's leader holds a transaction open that no transaction
// coordinator knows (none has its producer id Ongoing or preparing with that partition),
// so no marker will ever end it: the LSO stays below it for good and read_committed
// consumers stop there (KAFKA-9144, the reason for KIP-890's verification). A convergence
// check, judged when the run is over, and only when every partition of the transaction
// state topic has a loaded coordinator: a coordinator that is down may know the
// transaction, and its successor will end it.
const HangingTransaction = "hanging-transaction"

// hangingTransactions finds, per partition, the first open transaction no coordinator
// knows.
func (c *Cluster) hangingTransactions() []InvariantViolation {
	known, ok := c.coordinatedTransactions()
	if !ok {
		return nil
	}
	var found []InvariantViolation
	for _, p := range c.Partitions() {
		leader, lb, ok := c.currentLeader(p.TP)
		if !ok {
			continue
		}
		view, _ := c.W.Node(lb).(*broker.Broker).Txns(p.TP)
		for _, open := range view.Open {
			if slices.ContainsFunc(known, func(t txn.Txn) bool { return t.ProducerID == open.ProducerID && slices.Contains(t.Partitions, p.TP) }) {
				continue
			}
			found = append(found, InvariantViolation{Anomaly: HangingTransaction, TP: p.TP, Epoch: leader.LeaderEpoch, Time: c.W.Now(), Step: c.W.Steps(),
				Text: fmt.Sprintf("leader %s holds the transaction of producer id %d (epoch %d) open from offset %d, and no coordinator has it open or ending here: no marker will end it, the LSO stays at %d",
					c.W.Name(lb), open.ProducerID, open.Epoch, open.FirstOffset, view.LastStableOffset)})
			break
		}
	}
	return found
}

// coordinatedTransactions lists the transactions every coordinator has open or ending,
// if every partition of the transaction state topic has a loaded coordinator (and there is
// such a topic).
func (c *Cluster) coordinatedTransactions() ([]txn.Txn, bool) {
	var known []txn.Txn
	seen := false
	for _, p := range c.Partitions() {
		if p.TP.Topic != proto.TransactionStateTopic {
			continue
		}
		seen = true
		_, lb, ok := c.currentLeader(p.TP)
		if !ok {
			return nil, false
		}
		coord := c.W.Node(lb).(*broker.Broker).TxnCoordinator(p.TP.Partition)
		if coord == nil {
			return nil, false
		}
		for _, t := range coord.Transactions() {
			switch t.State {
			case txn.Ongoing, txn.PrepareCommit, txn.PrepareAbort, txn.PrepareEpochFence:
				known = append(known, t)
			}
		}
	}
	return known, seen
}
