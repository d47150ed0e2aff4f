package queue

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/sim"
)

// PublisherConfig shapes a publisher.
type PublisherConfig struct {
	// Nodes are the broker nodes it may connect to; it starts with the first and moves
	// to the next when a confirm does not come in time.
	Nodes []string
	// Confirms puts the channel in confirm mode (confirm.select): a publish is acked in
	// the history when the broker confirms it, failed on a certain nack or a
	// basic.return, unknown on a timeout or an uncertain nack. Without confirms every
	// publish is acked as soon as it is sent, as Kafka's acks=0 is: the publisher
	// cannot know better.
	Confirms       bool
	ConfirmTimeout time.Duration
}

// DefaultPublisherConfig is without confirms, as AMQP channels start; the cluster fills
// in its nodes.
func DefaultPublisherConfig() PublisherConfig {
	return PublisherConfig{ConfirmTimeout: 5 * time.Second}
}

// Validate checks the confirm timeout, a request timeout: a publish that times out
// goes to the next node and waits again.
func (c PublisherConfig) Validate() error {
	return sim.CheckTimerPeriod("confirm-timeout", c.ConfirmTimeout)
}

// PublishCmd asks a publisher to publish one message. Topic is the history's name for
// the destination: the queue for the default exchange, else the exchange.
type PublishCmd struct {
	Exchange  string
	Key       string
	Headers   []Header
	Value     string
	Mandatory bool
	TTL       time.Duration
	Delay     time.Duration
	Group     string
	DedupID   string
}

// HistoryTopic is the topic a publish to exchange with key is recorded under: the queue
// for the default exchange, else the exchange.
func HistoryTopic(exchange, key string) string {
	if exchange == DefaultExchange {
		return key
	}
	return exchange
}

// PublisherStats counts a publisher's outcomes.
type PublisherStats struct {
	Published, Confirmed, Nacked, Returned, Unknown int
}

// Publisher is an AMQP publisher (or an SQS SendMessage client: a publish to the
// default exchange with the queue's name as key), recording each publish as a send.
type Publisher struct {
	cfg     PublisherConfig
	process int
	// reconnect numbers a new connection's process: a channel is an ordering domain,
	// so after a failover the history judges the new one's order on its own.
	reconnect func() int
	pubID     string
	rec       *history.Recorder
	node      int
	seq       int64
	pending   []pendingSend
	stats     PublisherStats
}

type pendingSend struct {
	pubID    string // the incarnation and connection it was sent on
	seq      int64
	h        history.Handle
	value    string
	returned string
	timer    sim.TimerID
	node     int // the connection it was sent on
}

const timerConfirm = 1

// NewPublisher makes a publisher recording under process, and under reconnect() after
// each failover to another node (nil: keep the process).
func NewPublisher(cfg PublisherConfig, process int, reconnect func() int, rec *history.Recorder) *Publisher {
	return &Publisher{cfg: cfg, process: process, reconnect: reconnect, rec: rec}
}

// Stats returns the publisher's counters.
func (p *Publisher) Stats() PublisherStats { return p.stats }

// Confirms reports whether the publisher's channel is in confirm mode.
func (p *Publisher) Confirms() bool { return p.cfg.Confirms }

// InFlight is the number of publishes waiting for a confirm.
func (p *Publisher) InFlight() int { return len(p.pending) }

// Start names the publisher's incarnation.
func (p *Publisher) Start(env *sim.Env) {
	p.pubID = fmt.Sprintf("%s#%d", env.Name(), p.process)
}

// Recv handles PublishCmd from a scenario and the broker's answers.
func (p *Publisher) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case PublishCmd:
		p.publish(env, m)
	case Returned:
		if i := p.find(m.PubID, m.Seq); i >= 0 {
			p.pending[i].returned = m.Reason
			p.stats.Returned++
			sim.Record(env, PublishReturned{Seq: m.Seq, Value: p.pending[i].value, Reason: m.Reason})
		}
	case Confirm:
		i := p.find(m.PubID, m.Seq)
		if i < 0 {
			return
		}
		ps := p.pending[i]
		p.pending = slices.Delete(p.pending, i, i+1)
		env.CancelTimer(ps.timer)
		now := int64(env.Now())
		switch {
		case m.OK && ps.returned != "":
			sim.Record(env, PublisherConfirmed{Seq: m.Seq, Value: ps.value, Returned: ps.returned})
			p.rec.Fail(now, ps.h, history.Result{Error: "returned: " + ps.returned})
		case m.OK:
			p.stats.Confirmed++
			sim.Record(env, PublisherConfirmed{Seq: m.Seq, Value: ps.value})
			p.rec.Ok(now, ps.h, history.Result{Offset: history.NoOffset})
		case m.Certain:
			p.stats.Nacked++
			sim.Record(env, PublisherNacked{Seq: m.Seq, Value: ps.value, Reason: m.Reason, Certain: true})
			p.rec.Fail(now, ps.h, history.Result{Error: "nack: " + m.Reason})
		default:
			p.stats.Unknown++
			sim.Record(env, PublisherNacked{Seq: m.Seq, Value: ps.value, Reason: m.Reason})
			p.rec.Info(now, ps.h, history.Result{Error: "nack: " + m.Reason})
		}
	}
}

// find is the index of the pending publish an answer is for: sent on connection pubID
// with sequence number seq (-1: none, such as an answer meant for an earlier incarnation).
func (p *Publisher) find(pubID string, seq int64) int {
	return slices.IndexFunc(p.pending, func(ps pendingSend) bool { return ps.pubID == pubID && ps.seq == seq })
}

func (p *Publisher) publish(env *sim.Env, c PublishCmd) {
	p.seq++
	p.stats.Published++
	key := c.Key
	if c.Group != "" {
		key = c.Group // SQS FIFO: order is per message group
	}
	h := p.rec.InvokeSend(int64(env.Now()), p.process, history.TopicPartition{Topic: HistoryTopic(c.Exchange, c.Key)}, key, c.Value)
	node := p.cfg.Nodes[p.node%len(p.cfg.Nodes)]
	id, ok := env.Lookup(node)
	if !ok {
		panic("queue: publisher " + env.Name() + ": no node " + node)
	}
	env.Send(id, Publish{PubID: p.pubID, Seq: p.seq, Exchange: c.Exchange, Key: c.Key, Headers: c.Headers, Value: c.Value,
		Mandatory: c.Mandatory, Confirm: p.cfg.Confirms, TTL: c.TTL, Delay: c.Delay, Group: c.Group, DedupID: c.DedupID})
	sim.Record(env, Published{Seq: p.seq, Value: c.Value, Node: node, Confirms: p.cfg.Confirms})
	if !p.cfg.Confirms {
		p.rec.Ok(int64(env.Now()), h, history.Result{Offset: history.NoOffset})
		return
	}
	t := env.SetTimer(p.cfg.ConfirmTimeout, sim.TimerTag{Kind: timerConfirm, Arg: p.seq})
	p.pending = append(p.pending, pendingSend{pubID: p.pubID, seq: p.seq, h: h, value: c.Value, timer: t, node: p.node})
}

// Timer gives up on a confirm: the outcome is unknown, and the next publishes go to the
// next node, on a new connection (a new process in the history).
func (p *Publisher) Timer(env *sim.Env, tag sim.TimerTag) {
	i := slices.IndexFunc(p.pending, func(ps pendingSend) bool { return ps.seq == tag.Arg })
	if tag.Kind != timerConfirm || i < 0 {
		return
	}
	ps := p.pending[i]
	p.pending = slices.Delete(p.pending, i, i+1)
	p.stats.Unknown++
	p.rec.Info(int64(env.Now()), ps.h, history.Result{Error: "no confirm within " + p.cfg.ConfirmTimeout.String()})
	if ps.node != p.node {
		sim.Record(env, ConfirmTimedOut{Seq: ps.seq, Value: ps.value, After: p.cfg.ConfirmTimeout})
		return // it reconnected already
	}
	p.node++
	if p.reconnect != nil {
		p.process = p.reconnect()
		p.pubID = fmt.Sprintf("%s#%d", env.Name(), p.process)
	}
	sim.Record(env, ConfirmTimedOut{Seq: ps.seq, Value: ps.value, After: p.cfg.ConfirmTimeout, Reconnect: true,
		Node: p.cfg.Nodes[p.node%len(p.cfg.Nodes)], PubID: p.pubID})
}
