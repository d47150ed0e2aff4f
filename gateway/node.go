package gateway

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
	"mqsim/sim"
)

// NodeName is the gateway node's name in the world.
const NodeName = "gw"

// Request is one Kafka request handed to the gateway node: decoded from connection Conn,
// which the client opened to broker Broker (a Kafka node id: broker bN is N).
type Request struct {
	Conn   int
	Broker int32
	Header Header
	Req    kmsg.Request
	// Produced are a produce request's batches already decoded (decodeProduce), or nil:
	// the node then decodes them itself (batches).
	Produced *producedBatches
}

// batches are produce request p's batches (r's own), decoded once for the brokers and
// the history.
func (r *Request) batches(p *kmsg.ProduceRequest) *producedBatches {
	if r.Produced == nil {
		r.Produced = decodeProduce(p)
	}
	return r.Produced
}

func (r Request) String() string {
	return fmt.Sprintf("kafka %s v%d conn=%d corr=%d to b%d", kmsg.NameForKey(r.Header.Key), r.Header.Version, r.Conn, r.Header.Corr, r.Broker)
}

// Reply is the gateway node's answer to one request. Frame is nil when the request takes
// no response (a produce with acks=0); Close asks for the connection to be closed (no
// answer came: Kafka's client sees a dead broker the same way).
type Reply struct {
	Conn   int
	Corr   int32
	Frame  []byte
	Close  bool
	Reason string
}

// Addr is where a broker listens, as Metadata and FindCoordinator advertise it.
type Addr struct {
	Host string
	Port int32
}

// requestTimeout is how long the gateway waits for the cluster's answer beyond what the
// request itself allows to wait (Kafka's request.timeout.ms, 30s); then it closes the
// connection.
const requestTimeout = 30 * time.Second

// Node is the gateway inside the world: it turns each Kafka request into mqsim messages
// to the broker the client connected to (or to the controller), gathers the typed
// answers, and writes the Kafka response. It is a plain state machine: the outside
// world only reads its replies (TakeReplies) between steps.
type Node struct {
	brokers     []sim.NodeID // Kafka node id i+1 is brokers[i]
	addrs       []Addr       // by Kafka node id - 1
	controllers []sim.NodeID
	defaults    proto.TopicConfig
	corr        int64
	parts       map[int64]*part
	calls       map[int64]*call
	nextCall    int64
	replies     []Reply
	// subscriptions are the members' subscription bytes as they joined (groups.go).
	subscriptions map[memberKey][]byte
	// txnV2 is transaction version 2 (KIP-890 part 2), the cluster's default; the
	// transaction state topic is created at the first transactional FindCoordinator (txn.go).
	txnV2          bool
	txnStateTopic  proto.TopicConfig
	txnTopicExists bool
	// consumerMembers are the KIP-848 members' last heartbeats (consumergroup.go).
	consumerMembers map[memberKey]consumerMemberState
	// hist records the clients' operations as seen on the wire (history.go); nil: none.
	hist *wireHistory
}

// NewNode makes the gateway node for brokers listening at addrs (same order).
func NewNode(brokers []sim.NodeID, addrs []Addr, controllers []sim.NodeID, defaults proto.TopicConfig) *Node {
	return &Node{brokers: brokers, addrs: addrs, controllers: controllers, defaults: defaults,
		parts: map[int64]*part{}, calls: map[int64]*call{}}
}

// call is one Kafka request in progress: the parts (mqsim requests) it waits for, and
// how its response is finished once they are in.
type call struct {
	id      int64
	req     Request
	waiting int
	done    bool
	timer   sim.TimerID
	// finish builds the response from what the parts gathered; nil response: none.
	finish func() kmsg.Response
}

// part is one mqsim request of a call, and what to do with its answer.
type part struct {
	call    *call
	onReply func(msg sim.Message)
}

// TakeReplies returns the replies made since the last call, in the order they were made.
func (n *Node) TakeReplies() []Reply {
	r := n.replies
	n.replies = nil
	return r
}

func (n *Node) Start(env *sim.Env) {}

func (n *Node) Timer(env *sim.Env, tag sim.TimerTag) {
	c := n.calls[tag.Arg]
	if c == nil || c.done {
		return
	}
	n.end(c)
	n.hist.unanswered(int64(env.Now()), c)
	n.replies = append(n.replies, Reply{Conn: c.req.Conn, Corr: c.req.Header.Corr, Close: true,
		Reason: fmt.Sprintf("%s got no answer from the cluster in time", kmsg.NameForKey(c.req.Header.Key))})
}

func (n *Node) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if r, ok := msg.(Request); ok && from == sim.External {
		n.handle(env, r)
		return
	}
	corr, ok := correlationOf(msg)
	if !ok {
		return
	}
	p := n.parts[corr]
	if p == nil {
		return
	}
	delete(n.parts, corr)
	if p.call.done {
		return
	}
	p.onReply(msg)
	p.call.waiting--
	if p.call.waiting == 0 && !p.call.done {
		n.complete(env, p.call)
	}
}

// handle starts a call for a request; a call whose parts are all answered at once (or
// that has none) completes now.
func (n *Node) handle(env *sim.Env, r Request) {
	n.nextCall++
	c := &call{id: n.nextCall, req: r}
	n.hist.request(int64(env.Now()), c)
	wait := n.start(env, c)
	if c.done {
		return
	}
	if c.waiting == 0 {
		n.complete(env, c)
		return
	}
	n.calls[c.id] = c
	c.timer = env.SetTimer(requestTimeout+wait, sim.TimerTag{Kind: 1, Arg: c.id})
}

// start dispatches a request by type. It returns how long the request may wait by its
// own terms (a produce's timeout, a fetch's max wait), beyond requestTimeout.
func (n *Node) start(env *sim.Env, c *call) time.Duration {
	switch req := c.req.Req.(type) {
	case *kmsg.ApiVersionsRequest:
		n.apiVersions(c)
	case *kmsg.MetadataRequest:
		n.metadata(env, c, req)
	case *kmsg.ProduceRequest:
		n.produce(env, c, req)
		return time.Duration(req.TimeoutMillis) * time.Millisecond
	case *kmsg.FetchRequest:
		n.fetch(env, c, req)
		return time.Duration(req.MaxWaitMillis) * time.Millisecond
	case *kmsg.ListOffsetsRequest:
		n.listOffsets(env, c, req)
	case *kmsg.FindCoordinatorRequest:
		n.findCoordinator(env, c, req)
	case *kmsg.InitProducerIDRequest:
		n.initProducerID(env, c, req)
	case *kmsg.CreateTopicsRequest:
		n.createTopics(env, c, req)
	case *kmsg.JoinGroupRequest:
		n.joinGroup(env, c, req)
		return time.Duration(max(req.RebalanceTimeoutMillis, req.SessionTimeoutMillis)) * time.Millisecond
	case *kmsg.SyncGroupRequest:
		n.syncGroup(env, c, req)
	case *kmsg.HeartbeatRequest:
		n.heartbeat(env, c, req)
	case *kmsg.LeaveGroupRequest:
		n.leaveGroup(env, c, req)
	case *kmsg.OffsetCommitRequest:
		n.offsetCommit(env, c, req)
	case *kmsg.OffsetFetchRequest:
		n.offsetFetch(env, c, req)
	default:
		if n.startMore(env, c) {
			break
		}
		// ParseRequest lets through only what servedVersions lists, and each is served.
		n.end(c)
		n.replies = append(n.replies, Reply{Conn: c.req.Conn, Corr: c.req.Header.Corr, Close: true,
			Reason: kmsg.NameForKey(c.req.Header.Key) + " is not served"})
	}
	return 0
}

// send sends one part of a call: mk builds the message with its correlation id.
func (n *Node) send(env *sim.Env, c *call, to sim.NodeID, mk func(corr int64) sim.Message, onReply func(sim.Message)) {
	n.corr++
	n.parts[n.corr] = &part{call: c, onReply: onReply}
	c.waiting++
	env.Send(to, mk(n.corr))
}

// complete finishes a call now, with what its parts gathered so far (a fetch answers as
// soon as one partition has records; the others are left out of its response).
func (n *Node) complete(env *sim.Env, c *call) {
	n.end(c)
	if c.timer != 0 {
		env.CancelTimer(c.timer)
	}
	reply := Reply{Conn: c.req.Conn, Corr: c.req.Header.Corr}
	var resp kmsg.Response
	if c.finish != nil {
		if resp = c.finish(); resp != nil {
			resp.SetVersion(c.req.Req.GetVersion())
			reply.Frame = EncodeResponse(c.req.Header.Corr, resp)
		}
	}
	n.hist.answered(int64(env.Now()), c, resp)
	n.replies = append(n.replies, reply)
}

func (n *Node) end(c *call) {
	c.done = true
	delete(n.calls, c.id)
}

// broker is the node of a Kafka node id.
func (n *Node) broker(id int32) (sim.NodeID, bool) {
	if id < 1 || int(id) > len(n.brokers) {
		return 0, false
	}
	return n.brokers[id-1], true
}

// kafkaID is the Kafka node id of a broker node, or -1 (no leader, unknown).
func (n *Node) kafkaID(node sim.NodeID) int32 {
	for i, b := range n.brokers {
		if b == node {
			return int32(i + 1)
		}
	}
	return -1
}

// addr is where the broker of a Kafka node id listens.
func (n *Node) addr(id int32) Addr {
	if id < 1 || int(id) > len(n.addrs) {
		return Addr{Port: -1}
	}
	return n.addrs[id-1]
}

// target is the broker the call's client connected to.
func (n *Node) target(c *call) sim.NodeID {
	b, _ := n.broker(c.req.Broker)
	return b
}

// correlationOf reads the correlation id of the answers the gateway asks for.
func correlationOf(msg sim.Message) (int64, bool) {
	switch m := msg.(type) {
	case proto.MetadataResponse:
		return m.CorrelationID, true
	case proto.ProduceResponse:
		return m.CorrelationID, true
	case proto.FetchResponse:
		return m.CorrelationID, true
	case proto.ListOffsetsResponse:
		return m.CorrelationID, true
	case proto.FindCoordinatorResponse:
		return m.CorrelationID, true
	case proto.InitProducerIDResponse:
		return m.CorrelationID, true
	case proto.CreateTopicResponse:
		return m.CorrelationID, true
	case proto.JoinGroupResponse:
		return m.CorrelationID, true
	case proto.SyncGroupResponse:
		return m.CorrelationID, true
	case proto.HeartbeatResponse:
		return m.CorrelationID, true
	case proto.LeaveGroupResponse:
		return m.CorrelationID, true
	case proto.OffsetCommitResponse:
		return m.CorrelationID, true
	case proto.OffsetFetchResponse:
		return m.CorrelationID, true
	}
	return correlationOfMore(msg)
}
