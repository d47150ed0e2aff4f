package controller

import (
	"testing"
	"time"

	"mqsim/model/proto"
	"mqsim/model/raft"
	"mqsim/sim"
)

// TestEventDetails: the events the catalogue's pinned traces do not reach print what the
// controller's trace always printed for them.
func TestEventDetails(t *testing.T) {
	tp := proto.TP{Topic: "t", Partition: 0}
	for _, tc := range []struct {
		e    sim.Payload
		want string
	}{
		{NoBroker{Name: "b4"}, "no broker node b4"},
		{Activated{Epoch: 3, Offset: 20, Topics: 2, Sessions: []string{"b1", "b3"}, Fenced: []string{"b2"}},
			"controller epoch 3 (Raft leader of term 3, metadata offset 20): 2 topics, new sessions for [b1 b3], fenced [b2]"},
		{Resigned{Cause: ProposalRefused, Unsent: 2}, "the metadata log refused a proposal; 2 answers not sent"},
		{Resigned{Cause: NotLeader, Term: 2, Role: raft.Follower, NowTerm: 3}, "no longer the Raft leader (term 2, now follower in term 3)"},
		{BrokerFenced{Broker: "b1", Why: Cause{Kind: Restarted, Broker: "b1", Old: 1, New: 2}}, "b1: restarted (incarnation 1 -> 2)"},
		{BrokerFenced{Broker: "b1", Why: Cause{Kind: NoHeartbeat, Broker: "b1", Silence: 3500 * time.Millisecond}}, "b1: no heartbeat for 3.5s"},
		{LeaderElected{TP: tp, Leader: "b3", Epoch: 2, ISR: []string{"b3"}, Via: ViaUnclean, Why: Cause{Kind: BrokerBack, Broker: "b3"}},
			"t/0: UNCLEAN election of b3, epoch 2: it may lack committed records (b3 is back)"},
		{PartitionOffline{TP: tp, ISR: []string{"b2"}, Why: Cause{Kind: BrokerReported, Broker: "b1"}},
			"t/0: no live in-sync replica (ISR [b2]); partition offline (b1 reported to the new controller)"},
		{Applied{Index: 9, Term: 2, Records: []MetadataRecord{
			{Kind: FenceRecord, Broker: "b1"},
			{Kind: TopicRecord, Topic: "t"},
			{Kind: PartitionRecord, TP: tp, Epoch: 3, ISR: []string{"b2"}},
			{Kind: ProducerIDsRecord, ProducerIDs: 1000},
		}}, "9/t2: fence b1; topic t; t/0 leader none epoch 3 isr [b2]; producer ids to 1000"},
	} {
		if got := tc.e.Detail(); got != tc.want {
			t.Errorf("%T:\n got %q\nwant %q", tc.e, got, tc.want)
		}
	}
}
