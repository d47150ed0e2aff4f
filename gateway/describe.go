package gateway

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/sim"
)

// clusterID is the cluster id Metadata and DescribeCluster give: one simulated cluster.
const clusterID = "mqsim"

// describeCluster answers from the connected broker's metadata: its live brokers at
// their listening addresses and the controller Metadata names (mqsim's controller is not
// a broker a client can reach, so as Metadata does, the lowest live broker stands in).
func (n *Node) describeCluster(env *sim.Env, c *call, req *kmsg.DescribeClusterRequest) {
	var meta proto.Metadata
	n.send(env, c, n.target(c), func(corr int64) sim.Message { return proto.MetadataRequest{CorrelationID: corr} },
		func(msg sim.Message) { meta = msg.(proto.MetadataResponse).Metadata })
	c.finish = func() kmsg.Response {
		resp := kmsg.NewPtrDescribeClusterResponse()
		resp.ClusterID, resp.ControllerID, resp.EndpointType = clusterID, -1, req.EndpointType
		for _, id := range n.liveBrokerIDs(meta) {
			a := n.addr(id)
			b := kmsg.NewDescribeClusterResponseBroker()
			b.NodeID, b.Host, b.Port = id, a.Host, a.Port
			resp.Brokers = append(resp.Brokers, b)
			if resp.ControllerID < 0 {
				resp.ControllerID = id
			}
		}
		return resp
	}
}
