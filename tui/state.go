package tui

import (
	"slices"

	"mqsim/model/client"
	"mqsim/model/queue"
	"mqsim/model/txn"
	"mqsim/model/wal"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// State is the view model at one trace event: what the cluster's views said right after
// the kernel step (or scenario command) that emitted the event. It is built by folding the
// recorded changes of the events before it onto a checkpoint (see Run.StateAt); nothing in
// it points into the world.
//
// Rows are values. Their slices are never written after a row is made, so a State can be
// copied with Clone and the copies share them.
type State struct {
	Nodes     []NodeView
	Parts     []PartView
	Replicas  []ReplicaView // index: partition index * number of brokers + broker index
	Producers []ProducerView
	Consumers []ConsumerView
	Pipelines []PipelineView
	Groups    []GroupView
	// TxnCoords are the transaction coordinators, one row per broker (index: broker
	// index): the transactional ids each broker coordinates.
	TxnCoords []TxnCoordView
	Net       NetView
	// Queue mode (model/queue): the exchanges with their bindings, the queues as the
	// node acting for each has them, and the queue broker's clients.
	Exchanges []ExchangeView
	Queues    []QueueView
	QClients  []QueueClientView
}

// Role is what a node is in the run, as the run's system says (runner.Role).
type Role = runner.Role

// The roles, by their runner names.
const (
	RoleNode       = runner.RoleNode
	RoleController = runner.RoleController
	RoleBroker     = runner.RoleBroker
	RoleProducer   = runner.RoleProducer
	RoleConsumer   = runner.RoleConsumer
	RoleQueueNode  = runner.RoleQueueNode
)

// NodeView is one node's process state.
type NodeView struct {
	Name   string
	Role   Role
	Status sim.Status
	// Quorum is a quorum controller's Raft state: "★t2 @14" (active in term 2, metadata
	// applied to offset 14); for a queue node, the quorum queues it leads with their Raft
	// terms: "★orders t2"; "" for every other node.
	Quorum string
}

// PartView is the controller's record of one partition. Stale is set while the controller
// is down: the row is its last word.
type PartView struct {
	Topic     string
	Partition int32
	Replicas  []string
	Leader    string // "" when offline
	Epoch     int32
	ISR       []string
	Stale     bool
}

// Name is "topic/partition".
func (p PartView) Name() string { return tpName(p.Topic, p.Partition) }

// ReplicaView is one broker's copy of one partition, as the broker's Replica view says.
type ReplicaView struct {
	Hosted   bool // the broker has opened this replica (false before, and after a restart until reopened)
	Down     bool // the broker is down: the other fields are its last word
	Leader   bool
	Epoch    int32
	HW       int64
	LSO      int64 // the last stable offset: below HW while a transaction is open
	LEO      int64
	LogStart int64
	Synced   int64 // offsets below are on disk
	ISR      []string
	// Recs are the records at offsets LogStart..LEO-1.
	Recs []Rec
}

// Rec is one record of a replica's log.
type Rec struct {
	Epoch int32
	Key   string
	Value string
	// Control is set on a transaction marker (a control batch's record): Marker says
	// which; Key and Value are then empty.
	Control bool
	Marker  wal.ControlType
}

// ProducerView is one producer's counters, and a transactional producer's transaction.
type ProducerView struct {
	Name   string
	Status sim.Status
	Live   bool // false while the node has no state machine (down)
	Stats  client.ProducerStats
	// Transactional is set for a producer with a transactional.id; Txn is then its
	// transaction's state (its Partitions slice is never written after the row is made).
	Transactional bool
	Txn           client.TxnStatus
}

func (a ProducerView) equal(b ProducerView) bool {
	return a.Name == b.Name && a.Status == b.Status && a.Live == b.Live && a.Stats == b.Stats &&
		a.Transactional == b.Transactional && sameTxnStatus(a.Txn, b.Txn)
}

func sameTxnStatus(a, b client.TxnStatus) bool {
	return a.ID == b.ID && a.State == b.State && a.PID == b.PID && a.Epoch == b.Epoch && a.Committed == b.Committed &&
		a.Aborted == b.Aborted && a.Why == b.Why && slices.Equal(a.Partitions, b.Partitions)
}

// PipelineView is one consume-transform-produce application: what it reads and writes,
// its counters, and, when transactional, its producer's transaction.
type PipelineView struct {
	Name          string
	Status        sim.Status
	Live          bool
	Config        client.PipelineConfig
	Stats         client.PipelineStats
	Positions     []client.PartitionPosition // where its consumer reads the input
	Transactional bool
	Txn           client.TxnStatus
}

func (a PipelineView) equal(b PipelineView) bool {
	return a.Name == b.Name && a.Status == b.Status && a.Live == b.Live && a.Config == b.Config && a.Stats == b.Stats &&
		a.Transactional == b.Transactional && sameTxnStatus(a.Txn, b.Txn) && slices.Equal(a.Positions, b.Positions)
}

// TxnCoordView is what one broker's transaction coordinators hold: every transactional
// id of the transaction state partitions it leads, sorted by id (none while it leads
// none, or is down).
type TxnCoordView struct {
	Broker string
	Txns   []txn.Txn
}

func (a TxnCoordView) equal(b TxnCoordView) bool {
	return a.Broker == b.Broker && slices.EqualFunc(a.Txns, b.Txns, func(x, y txn.Txn) bool {
		return x.ID == y.ID && x.ProducerID == y.ProducerID && x.Epoch == y.Epoch && x.State == y.State && x.Start == y.Start &&
			x.Timeout == y.Timeout && x.Pending == y.Pending && x.Next == y.Next &&
			slices.Equal(x.Partitions, y.Partitions) && slices.Equal(x.Unacked, y.Unacked)
	})
}

// ConsumerView is one consumer's positions.
type ConsumerView struct {
	Name      string
	Status    sim.Status
	Live      bool
	Positions []client.PartitionPosition
	Consumed  int
	Polls     int
	Polling   bool
}

// GroupView is one consumer group as the coordinator has it, rendered: state and
// generation, each member's assignment, committed offsets and lag.
type GroupView struct {
	Name    string
	Head    string   // "Stable · generation 3 · leader g1-4 · coordinator b2 · 2 rebalances"
	Members []string // "g1-4 (g1): [t/0]"
	Lag     string   // "t/0 committed 5 lag 2 · t/1 ... · total lag 2"
}

func (a GroupView) equal(b GroupView) bool {
	return a.Name == b.Name && a.Head == b.Head && a.Lag == b.Lag && slices.Equal(a.Members, b.Members)
}

// Link is a directed link between two nodes.
type Link struct{ From, To string }

// NetView is the network faults in force.
type NetView struct {
	Cuts  []Link
	Clogs []Link
}

// ExchangeView is one declared exchange and its bindings, rendered: "eu → eu-orders".
type ExchangeView struct {
	Name      string
	Kind      string
	Alternate string
	Bindings  []string
}

func (a ExchangeView) equal(b ExchangeView) bool {
	return a.Name == b.Name && a.Kind == b.Kind && a.Alternate == b.Alternate && slices.Equal(a.Bindings, b.Bindings)
}

// Bounds on what a queue row keeps of its messages: the pane shows the head of the
// queue and what fits of the deliveries.
const (
	ReadyMax   = 12
	UnackedMax = 24
)

// QueueView is one queue as the node acting for it has it. Stale is set while no node
// acts for it (a quorum queue between leaders, a classic queue whose node is down): the
// row is then its last word.
type QueueView struct {
	Name string
	// Type is classic, quorum, sqs (a standard SQS queue) or fifo (an SQS FIFO queue).
	Type string
	// Where is a classic queue's node, or a quorum queue's members.
	Where []string
	// Acting is the node acting for the queue (a quorum queue's leader, whose Raft term
	// is Term; a classic queue's home node, Term 0).
	Acting string
	Term   int64
	Stale  bool
	// DeadLetterTo is where dead letters go: the dead-letter exchange ("dlx"), or the
	// queue a redrive policy names ("jobs-dlq"); "" for nowhere (they are dropped).
	DeadLetterTo string
	// Ready and Unacked count the ready and the delivered, unsettled messages; ReadyHead
	// are the first ReadyMax ready ones, Out the first UnackedMax unsettled ones.
	Ready, Unacked int
	ReadyHead      []MsgView
	Out            []OutView
	Consumers      []QConsumerView
	Stats          queue.Stats
}

// MsgView is a ready message: its label (m3:"v3") and whether it was delivered before
// (its next delivery is a redelivery).
type MsgView struct {
	Label     string
	Delivered bool
}

// OutView is a delivered, unsettled message: pushed to a consumer's channel with a
// delivery tag, or received by an SQS client under a receipt handle, invisible until
// VisibleUntil.
type OutView struct {
	Label        string
	Consumer     string
	Channel      int64
	Tag          uint64
	Redelivered  bool
	Handle       string
	VisibleUntil sim.Time
	Receives     int
}

// QConsumerView is a consumer registered on a queue: its channel, prefetch window
// (0: unlimited) and deliveries unacknowledged on it.
type QConsumerView struct {
	Name     string
	Channel  int64
	Prefetch int
	AutoAck  bool
	Unacked  int
}

func (a QueueView) equal(b QueueView) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Acting == b.Acting && a.Term == b.Term && a.Stale == b.Stale &&
		a.DeadLetterTo == b.DeadLetterTo && a.Ready == b.Ready && a.Unacked == b.Unacked && a.Stats == b.Stats &&
		slices.Equal(a.Where, b.Where) && slices.Equal(a.ReadyHead, b.ReadyHead) && slices.Equal(a.Out, b.Out) &&
		slices.Equal(a.Consumers, b.Consumers)
}

// QueueClientView is one client of the queue broker: a publisher, a push consumer or an
// SQS worker, with its counters. Live is false while the node is down: the counters are
// then its last word.
type QueueClientView struct {
	Name   string
	Kind   queue.ClientKind
	Status sim.Status
	Live   bool
	Queue  string // what a consumer or worker reads
	// Publisher.
	Pub      queue.PublisherStats
	InFlight int
	// Consumer and worker.
	Channel                                   int64
	Delivered, Redelivered, Processed, Failed int
	AcksLost, Dropped, Buffered               int
	Receives, Received, Deleted, StaleDeletes int
	Current                                   string // the label of the message it is processing, "" if none
}

// Clone copies the state's tables so that changes applied to the copy leave s alone.
func (s State) Clone() State {
	return State{
		Nodes:     slices.Clone(s.Nodes),
		Parts:     slices.Clone(s.Parts),
		Replicas:  slices.Clone(s.Replicas),
		Producers: slices.Clone(s.Producers),
		Consumers: slices.Clone(s.Consumers),
		Pipelines: slices.Clone(s.Pipelines),
		Groups:    slices.Clone(s.Groups),
		TxnCoords: slices.Clone(s.TxnCoords),
		Net:       s.Net,
		Exchanges: slices.Clone(s.Exchanges),
		Queues:    slices.Clone(s.Queues),
		QClients:  slices.Clone(s.QClients),
	}
}

// Queue finds a queue by name.
func (s State) Queue(name string) (QueueView, bool) {
	for _, q := range s.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return QueueView{}, false
}

// QClient finds a queue broker's client by name.
func (s State) QClient(name string) (QueueClientView, bool) {
	for _, c := range s.QClients {
		if c.Name == name {
			return c, true
		}
	}
	return QueueClientView{}, false
}

// Node finds a node by name.
func (s *State) Node(name string) (NodeView, bool) {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return NodeView{}, false
}

// changeKind names the table a change writes.
type changeKind uint8

const (
	chNode changeKind = iota
	chPart
	chReplica
	chProducer
	chConsumer
	chNet
	chGroup
	chExchange
	chQueue
	chQClient
	chPipeline
	chTxnCoord
)

// change sets one row of the state. A run records, for every trace event, the changes
// between the view sampled before it and the one sampled after it.
type change struct {
	kind changeKind
	idx  int32
	val  any
}

// setAt writes v at index i of a table, growing it if needed.
func setAt[T any](s []T, i int, v T) []T {
	for len(s) <= i {
		var zero T
		s = append(s, zero)
	}
	s[i] = v
	return s
}

// apply writes one change into s.
func (s *State) apply(c change) {
	i := int(c.idx)
	switch c.kind {
	case chNode:
		s.Nodes = setAt(s.Nodes, i, c.val.(NodeView))
	case chPart:
		s.Parts = setAt(s.Parts, i, c.val.(PartView))
	case chReplica:
		s.Replicas = setAt(s.Replicas, i, c.val.(ReplicaView))
	case chProducer:
		s.Producers = setAt(s.Producers, i, c.val.(ProducerView))
	case chConsumer:
		s.Consumers = setAt(s.Consumers, i, c.val.(ConsumerView))
	case chNet:
		s.Net = c.val.(NetView)
	case chGroup:
		s.Groups = setAt(s.Groups, i, c.val.(GroupView))
	case chExchange:
		s.Exchanges = setAt(s.Exchanges, i, c.val.(ExchangeView))
	case chQueue:
		s.Queues = setAt(s.Queues, i, c.val.(QueueView))
	case chQClient:
		s.QClients = setAt(s.QClients, i, c.val.(QueueClientView))
	case chPipeline:
		s.Pipelines = setAt(s.Pipelines, i, c.val.(PipelineView))
	case chTxnCoord:
		s.TxnCoords = setAt(s.TxnCoords, i, c.val.(TxnCoordView))
	}
}

func (a PartView) equal(b PartView) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.Leader == b.Leader && a.Epoch == b.Epoch &&
		a.Stale == b.Stale && slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.ISR, b.ISR)
}

// equal compares two replica rows. Records are compared by length and identity of the
// backing array: the recorder makes a new array whenever it rewrites records.
func (a ReplicaView) equal(b ReplicaView) bool {
	return a.Hosted == b.Hosted && a.Down == b.Down && a.Leader == b.Leader && a.Epoch == b.Epoch &&
		a.HW == b.HW && a.LSO == b.LSO && a.LEO == b.LEO && a.LogStart == b.LogStart && a.Synced == b.Synced &&
		slices.Equal(a.ISR, b.ISR) && sameRecs(a.Recs, b.Recs)
}

func sameRecs(a, b []Rec) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

func (a ConsumerView) equal(b ConsumerView) bool {
	return a.Name == b.Name && a.Status == b.Status && a.Live == b.Live && a.Consumed == b.Consumed &&
		a.Polls == b.Polls && a.Polling == b.Polling && slices.Equal(a.Positions, b.Positions)
}

func (a NetView) equal(b NetView) bool {
	return slices.Equal(a.Cuts, b.Cuts) && slices.Equal(a.Clogs, b.Clogs)
}
