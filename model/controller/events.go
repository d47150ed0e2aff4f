package controller

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/model/raft"
	"mqsim/sim"
)

// The events a controller puts in the trace. Brokers and replicas are named as the world
// names them; an ISR is a list of broker names.

// NoBroker is a controller configured for a broker node the world does not have.
type NoBroker struct{ Name string }

// SingleActive is the single controller starting: it recovered its metadata file and
// made a new controller epoch durable.
type SingleActive struct {
	Epoch   int32
	Topics  int
	Version int64 // the metadata version recovered
}

// Activated is a quorum controller becoming the active one: it leads the Raft term Epoch
// and has applied its whole log, up to Offset.
type Activated struct {
	Epoch  int32 // the controller epoch, which is the Raft term
	Offset int64 // the metadata log's applied index
	Topics int
	// Sessions are the brokers given a new session; Fenced those registered but fenced.
	Sessions, Fenced []string
}

// ResignCause says why an active controller stopped acting.
type ResignCause uint8

const (
	// NotLeader: it is no longer the Raft leader of its term.
	NotLeader ResignCause = iota
	// ProposalRefused: the Raft leader refused a proposal (too many uncommitted).
	ProposalRefused
)

// Resigned is a quorum controller that stopped being the active one.
type Resigned struct {
	Cause ResignCause
	// NotLeader: the term it was active in, and its Raft role and term now.
	Term    int64
	Role    raft.Role
	NowTerm int64
	Unsent  int // answers and pushes dropped
}

// Registered is a broker registering (again): a new incarnation, or fenced before.
type Registered struct {
	Broker      string
	Incarnation int64
}

// CauseKind says what made the controller fence a broker or hold an election.
type CauseKind uint8

const (
	// NoHeartbeat: Broker sent no heartbeat for Silence, longer than the session timeout.
	NoHeartbeat CauseKind = iota
	// Restarted: Broker came back with a new incarnation (Old -> New).
	Restarted
	// BrokerBack: fenced Broker registered again.
	BrokerBack
	// BrokerReported: Broker's first heartbeat reached a new active controller.
	BrokerReported
	// UncleanTask: the periodic unclean election (unclean.leader.election.interval.ms).
	UncleanTask
	// OperatorElection: an operator asked for the election (ElectLeaders).
	OperatorElection
	// ShuttingDown: Broker asked for a controlled shutdown.
	ShuttingDown
	// ShutDown: Broker's controlled shutdown is complete.
	ShutDown
	// Rebalance: the leader imbalance check (auto.leader.rebalance.enable).
	Rebalance
)

// Cause is why a broker was fenced or an election held.
type Cause struct {
	Kind     CauseKind
	Broker   string
	Silence  time.Duration
	Old, New int64 // incarnations
}

func (c Cause) String() string {
	switch c.Kind {
	case NoHeartbeat:
		return fmt.Sprintf("no heartbeat for %s", c.Silence)
	case Restarted:
		return fmt.Sprintf("restarted (incarnation %d -> %d)", c.Old, c.New)
	case BrokerBack:
		return c.Broker + " is back"
	case UncleanTask:
		return "periodic unclean election"
	case OperatorElection:
		return "an operator asked for it"
	case ShuttingDown:
		return c.Broker + " is shutting down"
	case ShutDown:
		return "controlled shutdown complete"
	case Rebalance:
		return "the preferred replica is back in the ISR: leader rebalance"
	}
	return c.Broker + " reported to the new controller"
}

// BrokerFenced is the controller declaring a broker dead.
type BrokerFenced struct {
	Broker string
	Why    Cause
}

// ISRShrunk is a fenced broker leaving the ISR of a partition it follows.
type ISRShrunk struct {
	TP     proto.TP
	ISR    []string // after
	ELR    []string // after: the eligible leader replicas (KIP-966)
	Broker string
}

// PartitionOffline is a partition left without a leader: no member of its ISR (or, the
// ISR being empty, of its ELR) is alive.
type PartitionOffline struct {
	TP  proto.TP
	ISR []string
	ELR []string
	Why Cause
}

// LeaderElected is a partition's leader chosen, as Via says: a live ISR member, an
// eligible leader replica, the last known leader, or (unclean) any live replica; the ISR
// is then the leader alone, except for an ISR member's election.
type LeaderElected struct {
	TP     proto.TP
	Leader string
	Epoch  int32
	ISR    []string
	ELR    []string
	Via    Via
	Why    Cause
}

// ISRChanged is a leader's AlterPartition accepted.
type ISRChanged struct {
	TP            proto.TP
	Before, After []string
	ELR           []string // after: the eligible leader replicas (KIP-966)
	Reason        string   // the leader's reason, as it sent it
}

// UncleanShutdown is a broker that restarted (an unclean shutdown: it may have lost
// records it had acknowledged) leaving a partition's ELR and ISR (KIP-966).
type UncleanShutdown struct {
	TP       proto.TP
	Broker   string
	ISR, ELR []string // after
	Why      Cause
}

// TopicCreated is a topic created, its partitions assigned.
type TopicCreated struct{ Config proto.TopicConfig }

// PartitionsCreated is a topic grown by CreatePartitions from Before to After partitions.
type PartitionsCreated struct {
	Topic         string
	Before, After int
}

// RecordKind says what a metadata record sets.
type RecordKind uint8

const (
	RegisterRecord    RecordKind = iota // a broker's incarnation, alive
	FenceRecord                         // a broker fenced
	TopicRecord                         // a topic's configuration
	PartitionRecord                     // a partition's whole state
	ProducerIDsRecord                   // the last producer id handed out
)

// MetadataRecord is one record of an applied batch, with brokers named.
type MetadataRecord struct {
	Kind        RecordKind
	Broker      string // Register, Fence
	Incarnation int64  // Register
	Topic       string // Topic
	TP          proto.TP
	Leader      string // Partition: "" when offline
	Epoch       int32  // Partition: the leader epoch
	ISR         []string
	ProducerIDs int64
}

func (r MetadataRecord) String() string {
	switch r.Kind {
	case RegisterRecord:
		return fmt.Sprintf("register %s (incarnation %d)", r.Broker, r.Incarnation)
	case FenceRecord:
		return "fence " + r.Broker
	case TopicRecord:
		return "topic " + r.Topic
	case PartitionRecord:
		leader := r.Leader
		if leader == "" {
			leader = "none"
		}
		return fmt.Sprintf("%s leader %s epoch %d isr %s", r.TP, leader, r.Epoch, nameList(r.ISR))
	}
	return fmt.Sprintf("producer ids to %d", r.ProducerIDs)
}

// Applied is a controller applying a committed batch of the metadata log.
type Applied struct {
	Index, Term int64
	Records     []MetadataRecord
}

func nameList(names []string) string { return "[" + strings.Join(names, " ") + "]" }

func (NoBroker) Kind() string     { return "error" }
func (e NoBroker) Detail() string { return "no broker node " + e.Name }
func (SingleActive) Kind() string { return "controller" }
func (e SingleActive) Detail() string {
	return fmt.Sprintf("active, controller epoch %d, %d topics, metadata v%d", e.Epoch, e.Topics, e.Version)
}
func (Activated) Kind() string { return "active" }
func (e Activated) Detail() string {
	who := "no broker registered yet"
	if len(e.Sessions)+len(e.Fenced) > 0 {
		who = fmt.Sprintf("new sessions for %s, fenced %s", nameList(e.Sessions), nameList(e.Fenced))
	}
	return fmt.Sprintf("controller epoch %d (Raft leader of term %d, metadata offset %d): %d topics, %s", e.Epoch, e.Epoch, e.Offset, e.Topics, who)
}
func (Resigned) Kind() string { return "resign" }
func (e Resigned) Detail() string {
	why := "the metadata log refused a proposal"
	if e.Cause == NotLeader {
		why = fmt.Sprintf("no longer the Raft leader (term %d, now %s in term %d)", e.Term, e.Role, e.NowTerm)
	}
	if e.Unsent > 0 {
		why += fmt.Sprintf("; %d answers not sent", e.Unsent)
	}
	return why
}
func (Registered) Kind() string { return "register" }
func (e Registered) Detail() string {
	return fmt.Sprintf("%s (incarnation %d)", e.Broker, e.Incarnation)
}
func (BrokerFenced) Kind() string     { return "fence" }
func (e BrokerFenced) Detail() string { return e.Broker + ": " + e.Why.String() }
func (ISRShrunk) Kind() string        { return "isr" }
func (e ISRShrunk) Detail() string {
	return fmt.Sprintf("%s: ISR %s%s (%s fenced)", e.TP, nameList(e.ISR), elrSuffix(e.ELR), e.Broker)
}
func (PartitionOffline) Kind() string { return "offline" }
func (e PartitionOffline) Detail() string {
	return fmt.Sprintf("%s: no live in-sync replica (ISR %s%s); partition offline (%s)", e.TP, nameList(e.ISR), elrSuffix(e.ELR), e.Why)
}
func (LeaderElected) Kind() string { return "election" }
func (e LeaderElected) Detail() string {
	switch e.Via {
	case ViaUnclean:
		return fmt.Sprintf("%s: UNCLEAN election of %s, epoch %d: it may lack committed records (%s)", e.TP, e.Leader, e.Epoch, e.Why)
	case ViaLastKnownLeader:
		return fmt.Sprintf("%s: UNCLEAN election of %s, the last known leader, epoch %d: ISR and ELR are empty and it may have lost records (%s)", e.TP, e.Leader, e.Epoch, e.Why)
	case ViaELR:
		return fmt.Sprintf("%s: %s leads in epoch %d from the ELR, ISR %s%s (%s)", e.TP, e.Leader, e.Epoch, nameList(e.ISR), elrSuffix(e.ELR), e.Why)
	}
	return fmt.Sprintf("%s: %s leads in epoch %d, ISR %s%s (%s)", e.TP, e.Leader, e.Epoch, nameList(e.ISR), elrSuffix(e.ELR), e.Why)
}
func (ISRChanged) Kind() string { return "isr" }
func (e ISRChanged) Detail() string {
	return fmt.Sprintf("%s: ISR %s -> %s%s (%s)", e.TP, nameList(e.Before), nameList(e.After), elrSuffix(e.ELR), e.Reason)
}
func (UncleanShutdown) Kind() string { return "elr" }
func (e UncleanShutdown) Detail() string {
	return fmt.Sprintf("%s: %s restarted after an unclean shutdown and is no longer eligible: ISR %s, ELR %s (%s)", e.TP, e.Broker, nameList(e.ISR), nameList(e.ELR), e.Why)
}

// elrSuffix shows the eligible leader replicas after an ISR, when there are any.
func elrSuffix(elr []string) string {
	if len(elr) == 0 {
		return ""
	}
	return ", ELR " + nameList(elr)
}
func (TopicCreated) Kind() string      { return "topic" }
func (e TopicCreated) Detail() string  { return fmt.Sprintf("created %s", e.Config) }
func (PartitionsCreated) Kind() string { return "partitions" }
func (e PartitionsCreated) Detail() string {
	return fmt.Sprintf("%s grows from %d to %d partitions", e.Topic, e.Before, e.After)
}
func (Applied) Kind() string { return "apply" }
func (e Applied) Detail() string {
	parts := make([]string, len(e.Records))
	for i, r := range e.Records {
		parts[i] = r.String()
	}
	return fmt.Sprintf("%d/t%d: %s", e.Index, e.Term, strings.Join(parts, "; "))
}

// ElectionRefused is an operator's election the controller did not hold, and why.
type ElectionRefused struct {
	TP     proto.TP
	Wanted string // the broker asked for (the preferred replica, or the named one)
	Err    proto.Error
}

// PartitionsRefused is a CreatePartitions the controller refused: Err with Kafka's
// message (Reason).
type PartitionsRefused struct {
	Topic  string
	Count  int
	Err    proto.Error
	Reason string
}

// ShutdownStarted is a broker in controlled shutdown: the controller moved the
// leaderships it held (Moved) and took it out of the ISRs it was in (LeftISR).
type ShutdownStarted struct {
	Broker  string
	Moved   []proto.TP
	LeftISR []proto.TP
}

// ShutdownGranted is the controller telling a broker in controlled shutdown that it may
// stop: it leads nothing, and every other live broker has the metadata that says so.
type ShutdownGranted struct{ Broker string }

// ReassignmentStarted is a partition's replica set grown to its target plus the replicas
// being removed; the added ones must catch up and join the ISR.
type ReassignmentStarted struct {
	TP               proto.TP
	Target           []string
	Adding, Removing []string
}

// ReassignmentDone is a reassignment completed: the replicas are the target, the removed
// replicas left the ISR.
type ReassignmentDone struct {
	TP       proto.TP
	Replicas []string
	ISR      []string
	Leader   string
}

func (ElectionRefused) Kind() string { return "election" }
func (e ElectionRefused) Detail() string {
	return fmt.Sprintf("%s: not electing %s: %s", e.TP, e.Wanted, e.Err)
}
func (PartitionsRefused) Kind() string { return "partitions" }
func (e PartitionsRefused) Detail() string {
	return fmt.Sprintf("%s: not growing to %d partitions: %s: %s", e.Topic, e.Count, e.Err, e.Reason)
}
func (ShutdownStarted) Kind() string { return "shutdown" }
func (e ShutdownStarted) Detail() string {
	did := []string{}
	if len(e.Moved) > 0 {
		did = append(did, "leadership moved for "+tpList(e.Moved))
	}
	if len(e.LeftISR) > 0 {
		did = append(did, "out of the ISR of "+tpList(e.LeftISR))
	}
	if len(did) == 0 {
		did = append(did, "it led nothing and was in no ISR with others")
	}
	return e.Broker + " in controlled shutdown: " + strings.Join(did, ", ")
}
func (ShutdownGranted) Kind() string { return "shutdown" }
func (e ShutdownGranted) Detail() string {
	return e.Broker + " may stop: it leads nothing and the other brokers know"
}
func (ReassignmentStarted) Kind() string { return "reassign" }
func (e ReassignmentStarted) Detail() string {
	return fmt.Sprintf("%s: target %s, adding %s, removing %s", e.TP, nameList(e.Target), nameList(e.Adding), nameList(e.Removing))
}
func (ReassignmentDone) Kind() string { return "reassign" }
func (e ReassignmentDone) Detail() string {
	return fmt.Sprintf("%s: done, replicas %s, ISR %s, leader %s", e.TP, nameList(e.Replicas), nameList(e.ISR), e.Leader)
}

func tpList(tps []proto.TP) string {
	s := make([]string, len(tps))
	for i, tp := range tps {
		s[i] = tp.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// EventDocs lists the package's event types.
func EventDocs() []sim.EventDoc {
	return []sim.EventDoc{
		{Example: NoBroker{}, About: "the controller is configured for a broker node that does not exist"},
		{Example: SingleActive{}, About: "the single controller recovered its metadata and is active in a new controller epoch"},
		{Example: Activated{}, About: "a KRaft controller leads the Raft term and has applied its log: it is the active controller"},
		{Example: Resigned{}, About: "the active KRaft controller stopped acting; its uncommitted decisions are void"},
		{Example: Registered{}, About: "a broker registered with the controller (a new incarnation, or after being fenced)"},
		{Example: BrokerFenced{}, About: "the controller declared a broker dead (session expired, or restarted)"},
		{Example: ISRShrunk{}, About: "a fenced broker left the ISR of a partition it followed"},
		{Example: PartitionOffline{}, About: "a partition has no live in-sync replica and no leader"},
		{Example: LeaderElected{}, About: "the controller chose a partition's leader (clean from the ISR or the ELR, or unclean)"},
		{Example: ISRChanged{}, About: "the controller accepted a leader's ISR change (AlterPartition)"},
		{Example: UncleanShutdown{}, About: "a restarted broker left a partition's eligible leader replicas: it may have lost records (KIP-966)"},
		{Example: TopicCreated{}, About: "the controller created a topic and assigned its partitions"},
		{Example: PartitionsCreated{}, About: "the controller added partitions to a topic (CreatePartitions): keys hash to the new count"},
		{Example: Applied{}, About: "a KRaft controller applied a committed batch of metadata records"},
		{Example: ElectionRefused{}, About: "the controller refused an operator's election (not in the ISR, not alive, not needed)"},
		{Example: PartitionsRefused{}, About: "the controller refused to grow a topic (unknown topic, or no increase: Kafka never removes partitions)"},
		{Example: ShutdownStarted{}, About: "a broker asked for a controlled shutdown: its leaderships moved, it left the ISRs"},
		{Example: ShutdownGranted{}, About: "a broker in controlled shutdown may stop: it leads nothing and every other broker knows"},
		{Example: ReassignmentStarted{}, About: "a reassignment grew a partition's replicas by those to add; they must catch up"},
		{Example: ReassignmentDone{}, About: "a reassignment completed: the replicas are the target, the removed ones are gone"},
	}
}
