package export

import (
	"fmt"

	"mqsim/model/proto"
	"mqsim/sim"
)

// describeWithNames is sim.Describe(msg) with the nodes a message names by id (the model
// knows only ids: "live=[#1,#2,#3]") named by name and list, as the run names them. Its
// cases are the messages whose descriptions name nodes; every other message is described
// as the trace describes it.
func describeWithNames(msg sim.Message, name func(sim.NodeID) string, list func([]sim.NodeID) string) string {
	leader := func(id sim.NodeID) string {
		if id == proto.NoLeader {
			return "none"
		}
		return name(id)
	}
	switch m := msg.(type) {
	case proto.Metadata:
		return fmt.Sprintf("metadata v%d: %d partitions, live=%s", m.Version, len(m.Partitions), list(m.LiveBrokers))
	case proto.MetadataResponse:
		return fmt.Sprintf("MetadataResponse v%d: %d partitions, live=%s", m.Metadata.Version, len(m.Metadata.Partitions), list(m.Metadata.LiveBrokers))
	case proto.LeaderAndIsr:
		return fmt.Sprintf("LeaderAndIsr %s leader=%s epoch=%d isr=%s", m.State.TP, leader(m.State.Leader), m.State.LeaderEpoch, list(m.State.ISR))
	case proto.AlterPartition:
		return fmt.Sprintf("AlterPartition %s isr=%s (%s)", m.TP, list(m.NewISR), m.Reason)
	case proto.AlterPartitionResponse:
		return fmt.Sprintf("AlterPartitionResponse %s %s isr=%s", m.TP, m.Error, list(m.State.ISR))
	case proto.FindCoordinatorResponse:
		if m.Error == proto.None {
			return fmt.Sprintf("FindCoordinatorResponse %s coordinator=%s", m.Group, leader(m.Coordinator))
		}
	}
	return sim.Describe(msg)
}
