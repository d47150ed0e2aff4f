package group

import "mqsim/model/proto"

// Member is one group member as an assignor sees it.
type Member struct {
	ID string
	// InstanceID is group.instance.id for static members, or "".
	InstanceID string
	// Topics the member subscribes to.
	Topics []string
	// Owned are the partitions the member owned in the previous generation (what sticky
	// and cooperative assignors keep where they are).
	Owned []proto.TP
}

// Assignment maps member IDs to their partitions. Every partition of a subscribed topic
// goes to exactly one member that subscribes to its topic.
type Assignment map[string][]proto.TP

// Assignor computes a group's assignment, as the group leader does in Kafka. It must be
// deterministic: the same members (in any order) and partitions give the same assignment,
// and the partitions of each member are sorted.
type Assignor interface {
	// Name is partition.assignment.strategy's name: "range", "roundrobin", "sticky",
	// "cooperative-sticky".
	Name() string
	// Cooperative reports whether the assignor supports the incremental cooperative
	// protocol (revoke only what moves, in two rounds).
	Cooperative() bool
	// Assign computes the assignment of partitions (all partitions of every subscribed
	// topic) to members.
	Assign(members []Member, partitions []proto.TP) Assignment
}
