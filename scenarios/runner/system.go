package runner

import (
	"maps"
	"slices"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/queue"
	"mqsim/sim"
)

// Kind is which system a run judges.
type Kind uint8

const (
	// LogCluster is the Kafka-style cluster (the cluster command).
	LogCluster Kind = iota + 1
	// QueueBroker is the RabbitMQ/SQS-style broker (the queue-broker command).
	QueueBroker
)

func (k Kind) String() string {
	switch k {
	case LogCluster:
		return "log cluster"
	case QueueBroker:
		return "queue broker"
	}
	return "none"
}

// HistorySystem is what a history file's header says of a run of this kind,
// so that mqsim check judges it by the right rules without being told.
func (k Kind) HistorySystem() history.System {
	switch k {
	case LogCluster:
		return history.LogSystem
	case QueueBroker:
		return history.QueueSystem
	}
	return history.NoSystem
}

// Role is what a node of a run is.
type Role uint8

const (
	RoleNode       Role = iota // a kernel node (pingpong, ...)
	RoleController             // the controller, or a member of the controller quorum
	RoleBroker                 // a log broker
	RoleProducer               // a producer, or a queue publisher
	RoleConsumer               // a consumer, a group member, a pipeline application, or a queue consumer or worker
	RoleQueueNode              // a queue broker node (q1..qN)
)

func (r Role) String() string {
	return [...]string{"node", "controller", "broker", "producer", "consumer", "queue node"}[r]
}

// Role is what node id is in the run: a node of its log cluster or of its queue broker
// (a run may start both), else RoleNode.
func (r *Runner) Role(id sim.NodeID) Role {
	if r.cluster != nil {
		if role := (logSystem{c: r.cluster, geo: &r.geo}).Role(id); role != RoleNode {
			return role
		}
	}
	if r.queue != nil {
		return queueSystem{r.queue.c}.Role(id)
	}
	return RoleNode
}

// System is the system under test of a run, the log cluster or the queue broker, as the
// views and the verdict see it: who the nodes are, what the clients saw, and what the
// invariant checks found.
type System interface {
	Kind() Kind
	World() *sim.World
	// History is the client history the checkers judge.
	History() history.History
	// Invariants are what the invariant checks, run after every event, found so far.
	Invariants() checker.Report
	// Role is what node id is (RoleNode for a node the system does not own).
	Role(id sim.NodeID) Role
	// judge checks the history with the options the system's kind, configuration and
	// delivery patterns give, under the check's settings; healed is when the last fault
	// ended. unpromised are the anomalies its configuration does not promise to prevent.
	judge(s Settings, healed int64) (rep checker.Report, unpromised map[checker.Anomaly]bool, err error)
}

// System is the run's system under test: its log cluster, or, in a run with a queue broker
// and no cluster, the queue broker; nil before either starts.
func (r *Runner) System() System {
	switch {
	case r.cluster != nil:
		return logSystem{c: r.cluster, geo: &r.geo}
	case r.queue != nil:
		return queueSystem{r.queue.c}
	}
	return nil
}

type logSystem struct {
	c *cluster.Cluster
	// geo holds the remote clusters and mirrors of a geo-replication run (cmd_mirror.go):
	// their nodes have roles, their invariant checks count. Nil for a remote cluster itself.
	geo *geoRun
}

func (s logSystem) Kind() Kind               { return LogCluster }
func (s logSystem) World() *sim.World        { return s.c.W }
func (s logSystem) History() history.History { return s.c.History.Final(int64(s.c.W.Now())) }
func (s logSystem) Invariants() checker.Report {
	rep := InvariantReport(s.c)
	if s.geo != nil {
		for _, site := range slices.Sorted(maps.Keys(s.geo.remotes)) {
			rep = checker.Merge(rep, InvariantReport(s.geo.remotes[site]))
		}
	}
	return rep
}

func (s logSystem) Role(id sim.NodeID) Role {
	c := s.c
	if c.IsController(id) {
		return RoleController
	}
	if slices.Contains(c.Brokers, id) {
		return RoleBroker
	}
	for _, p := range c.Producers {
		if p.ID == id {
			return RoleProducer
		}
	}
	for _, cs := range c.Consumers {
		if cs.ID == id {
			return RoleConsumer
		}
	}
	// A pipeline application is a group member first (it also produces): a client.
	for _, a := range c.Pipelines {
		if a.ID == id {
			return RoleConsumer
		}
	}
	if s.geo != nil {
		return s.geo.role(id)
	}
	return RoleNode
}

type queueSystem struct{ c *queue.Cluster }

func (s queueSystem) Kind() Kind               { return QueueBroker }
func (s queueSystem) World() *sim.World        { return s.c.W }
func (s queueSystem) History() history.History { return s.c.History.History() }

// Invariants: the queue broker has no invariant checks of its own; its findings all come
// from the client history.
func (s queueSystem) Invariants() checker.Report { return checker.Collect(nil, nil) }

func (s queueSystem) Role(id sim.NodeID) Role {
	if slices.Contains(s.c.IDs, id) {
		return RoleQueueNode
	}
	for _, cl := range s.c.Clients {
		if cl.ID != id {
			continue
		}
		if cl.Kind == queue.KindPublisher {
			return RoleProducer
		}
		return RoleConsumer
	}
	return RoleNode
}
