package swarm

import (
	"fmt"

	"mqsim/model/proto"
	"mqsim/model/txn"
	"mqsim/sim"
)

// The bias towards a planted transaction bug's moment: a txn run with --bug naming a bug
// that needs a rarer moment than the profile's faults draw writes, from a random stream
// of its own ("swarm/txn-bias"), the fault sequence that exposes it, and nothing else
// changes: the failures come from the checkers judging the history, as in every run.
// The bias is drawn for the bug named, so the same scripts with the bug removed (bugs=()
// instead) are the control that shows the failures are the bug's
// (TestSwarmTxnBiasControl).
//
// markers-before-prepare needs the coordinator to die in the few milliseconds between
// sending a commit's markers and replicating its PrepareCommit record, and no producer to
// retry the EndTxn at its successor (which, finding the transaction still Ongoing, would
// commit it whole): the producer dies with it, its next instance's InitProducerId then
// aborts what the successor holds, and the partitions the early markers reached keep
// their records committed while the others abort theirs.
// The other transaction bugs are found without a bias (notes/planted-bugs.md).

// txnBias is the bias of one run; nil without a bug that needs one.
type txnBias struct {
	r *sim.Rand
	n int // the moments written so far
}

// maxTxnMoments bounds the moments of one run.
const maxTxnMoments = 3

// newTxnBias is the bias for the planted bug named; nil if it needs none.
func newTxnBias(seed uint64, bug string) *txnBias {
	if bug != "markers-before-prepare" {
		return nil
	}
	return &txnBias{r: sim.NewRand(seed, "swarm/txn-bias")}
}

// moment writes, at about one safety step in four, a commit whose coordinator crashes
// with its producer a few milliseconds after the producer asked for it. The producer is
// a new one, with a transactional.id of its own, so that nothing the run did before
// keeps it busy when the commit is due.
func (tb *txnBias) moment(g *txnRun) {
	r := tb.r
	if tb.n == maxTxnMoments || !r.Chance(sim.Percent(25)) {
		return
	}
	tb.n++
	name, id := fmt.Sprintf("tm%d", tb.n), fmt.Sprintf("tx-m%d", tb.n)
	g.clients = append(g.clients, name)
	g.b.line("producer name=%s transactional-id=%s transaction-timeout=%ds", name, id, 10+r.IntN(21))
	g.b.line("begin-txn producer=%s wait=false", name)
	// Writes to two partitions (of t and out), so that the markers go to two leaders;
	// the one to out's is lost, so that only t's partition hears of the commit before
	// the coordinator dies.
	out := r.IntN(g.outParts)
	// The produces wait until their batches are acknowledged: the commit's EndTxn then
	// goes at once.
	g.b.line("produce producer=%s partition=%d count=%d", name, r.IntN(g.parts), 1+r.IntN(2))
	g.b.line("produce producer=%s topic=out partition=%d count=%d", name, out, 1+r.IntN(2))
	coord := fmt.Sprintf("leader:%s/%d", proto.TransactionStateTopic, txn.PartitionFor(id, txnStatePartitions))
	g.b.line("drop-next %s -> leader:out/%d kind=WriteTxnMarkers", coord, out)
	g.b.line("commit-txn producer=%s wait=false", name)
	g.b.line("run for=%dms", 2+r.IntN(10))
	g.b.line("crash %s %s", coord, name)
}
