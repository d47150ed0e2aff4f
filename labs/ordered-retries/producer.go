package lab

import (
	"fmt"
	"slices"
	"time"

	"mqsim/model/client"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// The producer node: the application inside it hands records over (Hand, from the
// lab-send command), and the learner's Sender decides what to send; the node is the
// Transport. It keeps the cluster's metadata (which broker leads each partition),
// sends each request to its partition's leader with acks=all and no producer id (the
// broker's idempotence is off), holds requests while a partition's leader is unknown or
// its retry backoff runs, and answers each request once: with the leader's answer, or
// with ErrTimeout after RequestTimeout. It records the application's history: a send
// invoked when a record is handed over, completed ok when the Sender acknowledges it.

// Producer timers.
const (
	metadataTimedOut = 7000 + iota // a metadata request went unanswered; Arg = its correlation id
	metadataAgain                  // ask for metadata again: a partition with requests has no leader
	requestTimedOut                // Arg = the request's id
	backoffEnded                   // Arg = the partition
)

// metadataTimeout is how long the producer waits for a metadata answer before it asks
// another broker.
const metadataTimeout = 500 * time.Millisecond

// Hand is the application handing one record of key Key over to the producer (its
// value is the producer's to number).
type Hand struct{ Key string }

// Config is where a producer sends.
type Config struct {
	Topic      string
	Partitions int
	Brokers    []string // names, to ask for metadata
}

// Producer is the lab's producer node.
type Producer struct {
	cfg     Config
	sender  Sender
	rec     *history.Recorder
	process int
	env     *sim.Env // the current handler's, for the Transport methods

	handed  []handed
	byValue map[string]int // index in handed

	leaders      []sim.NodeID // per partition; proto.NoLeader when unknown
	backoffUntil []sim.Time   // per partition
	backoffArmed []bool       // per partition: a backoffEnded timer is set
	mdCorr       int64        // the metadata request waiting for its answer, or 0
	mdAgain      bool         // a metadataAgain timer is set
	mdNext       int          // the broker to ask next

	corr     int64
	nextID   RequestID
	requests []*request // unanswered, in the order Produce was called
}

// handed is one record the application handed over.
type handed struct {
	r      Record
	op     history.Handle
	acked  bool
	offset int64 // where the latest ok answer put it, or history.NoOffset
}

// request is one request the Sender made, not yet answered.
type request struct {
	id      RequestID
	part    int32
	records []Record
	corr    int64 // 0 while held
	to      sim.NodeID
	timer   sim.TimerID
}

// NewProducer is a producer that runs sender, records as process in rec, and finds
// the leaders by asking cfg.Brokers.
func NewProducer(cfg Config, sender Sender, process int, rec *history.Recorder) *Producer {
	p := &Producer{cfg: cfg, sender: sender, rec: rec, process: process, byValue: map[string]int{}}
	p.leaders = make([]sim.NodeID, cfg.Partitions)
	for i := range p.leaders {
		p.leaders[i] = proto.NoLeader
	}
	p.backoffUntil = make([]sim.Time, cfg.Partitions)
	p.backoffArmed = make([]bool, cfg.Partitions)
	return p
}

// Handed is how many records the application handed over.
func (p *Producer) Handed() int { return len(p.handed) }

// Acknowledged is how many of them the Sender acknowledged.
func (p *Producer) Acknowledged() int {
	n := 0
	for _, h := range p.handed {
		if h.acked {
			n++
		}
	}
	return n
}

func (p *Producer) Start(env *sim.Env) {
	p.env = env
	p.refresh(env)
}

func (p *Producer) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	p.env = env
	switch m := msg.(type) {
	case Hand:
		p.hand(env, m.Key)
	case proto.MetadataResponse:
		p.onMetadata(env, m)
	case proto.ProduceResponse:
		p.onProduce(env, from, m)
	}
}

func (p *Producer) Timer(env *sim.Env, tag sim.TimerTag) {
	p.env = env
	switch tag.Kind {
	case metadataTimedOut:
		if tag.Arg == p.mdCorr {
			p.mdCorr = 0
			p.refresh(env)
		}
	case metadataAgain:
		p.mdAgain = false
		p.refresh(env)
	case requestTimedOut:
		i := slices.IndexFunc(p.requests, func(q *request) bool { return q.id == RequestID(tag.Arg) })
		if i >= 0 {
			q := p.requests[i]
			p.requests = slices.Delete(p.requests, i, i+1)
			p.failed(env, q.part)
			p.answer(env, q, Response{Request: q.id, Records: q.records, Err: ErrTimeout})
		}
	case backoffEnded:
		p.backoffArmed[tag.Arg] = false
		p.trySend(env, int32(tag.Arg))
	}
}

// hand takes a record from the application and gives it to the Sender.
func (p *Producer) hand(env *sim.Env, key string) {
	value := fmt.Sprintf("v%d", len(p.handed)+1)
	if env.Starts() > 1 { // a restarted producer's values must differ from the last one's
		value = fmt.Sprintf("r%d.%s", env.Starts(), value)
	}
	r := Record{Key: key, Value: value, Partition: client.KeyPartition([]byte(key), p.cfg.Partitions)}
	op := p.rec.InvokeSend(int64(env.Now()), p.process, history.TopicPartition{Topic: p.cfg.Topic, Partition: r.Partition}, key, value)
	p.byValue[value] = len(p.handed)
	p.handed = append(p.handed, handed{r: r, op: op, offset: history.NoOffset})
	sim.Record(env, Handed{Key: key, Value: value, Partition: r.Partition})
	p.call(env, "Send", func() { p.sender.Send(p, r) })
}

// call runs the Sender; a panic in it is put in the trace, and the producer goes on.
func (p *Producer) call(env *sim.Env, in string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			sim.Record(env, Panicked{In: in, Why: fmt.Sprint(r)})
		}
	}()
	f()
}

// Produce implements Transport.
func (p *Producer) Produce(records ...Record) (RequestID, error) {
	if len(records) == 0 {
		return 0, fmt.Errorf("Produce: no records")
	}
	part := records[0].Partition
	for _, r := range records {
		if r.Partition != part {
			return 0, fmt.Errorf("Produce: records of partitions %d and %d in one request: a request goes to one partition's leader", part, r.Partition)
		}
	}
	if part < 0 || int(part) >= p.cfg.Partitions {
		return 0, fmt.Errorf("Produce: partition %d: the topic has %d", part, p.cfg.Partitions)
	}
	if len(p.requests) >= MaxInFlight {
		return 0, ErrTooManyInFlight
	}
	env := p.env
	p.nextID++
	q := &request{id: p.nextID, part: part, records: slices.Clone(records)}
	q.timer = env.SetTimer(RequestTimeout, sim.TimerTag{Kind: requestTimedOut, Arg: int64(q.id)})
	p.requests = append(p.requests, q)
	p.trySend(env, part)
	return q.id, nil
}

// InFlight implements Transport.
func (p *Producer) InFlight() int { return len(p.requests) }

// Acknowledge implements Transport.
func (p *Producer) Acknowledge(r Record) {
	i, ok := p.byValue[r.Value]
	if !ok || p.handed[i].acked {
		return
	}
	h := &p.handed[i]
	h.acked = true
	p.rec.Ok(int64(p.env.Now()), h.op, history.Result{Offset: h.offset})
	sim.Record(p.env, Acknowledged{Key: h.r.Key, Value: h.r.Value, Offset: h.offset})
}

// trySend sends the held requests of partition part, in order, while its leader is
// known and no backoff runs.
func (p *Producer) trySend(env *sim.Env, part int32) {
	for _, q := range p.requests {
		if q.part != part || q.corr != 0 {
			continue
		}
		if env.Now() < p.backoffUntil[part] {
			if !p.backoffArmed[part] {
				p.backoffArmed[part] = true
				env.SetTimer(p.backoffUntil[part].Sub(env.Now()), sim.TimerTag{Kind: backoffEnded, Arg: int64(part)})
			}
			return
		}
		leader := p.leaders[part]
		if leader == proto.NoLeader {
			p.refreshSoon(env)
			return
		}
		p.corr++
		q.corr, q.to = p.corr, leader
		b := wal.Batch{ProducerID: wal.NoProducerID, ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence}
		for _, r := range q.records {
			b.Records = append(b.Records, wal.Record{Key: []byte(r.Key), Value: []byte(r.Value)})
		}
		env.Send(leader, proto.ProduceRequest{CorrelationID: q.corr, TP: p.tp(part), Acks: proto.AcksAll, Timeout: RequestTimeout, Batch: b})
		if env.Tracing() {
			sim.Record(env, Requested{Request: int64(q.id), Partition: part, To: env.NameOf(leader), Values: values(q.records)})
		}
	}
}

func (p *Producer) tp(part int32) proto.TP { return proto.TP{Topic: p.cfg.Topic, Partition: part} }

// onProduce takes a leader's answer.
func (p *Producer) onProduce(env *sim.Env, from sim.NodeID, m proto.ProduceResponse) {
	i := slices.IndexFunc(p.requests, func(q *request) bool { return q.corr == m.CorrelationID })
	if i < 0 {
		sim.Record(env, Late{From: env.NameOf(from), Partition: m.TP.Partition, Error: string(m.Error)})
		return
	}
	q := p.requests[i]
	p.requests = slices.Delete(p.requests, i, i+1)
	env.CancelTimer(q.timer)
	res := Response{Request: q.id, Records: q.records}
	if m.Error != proto.None {
		res.Err = BrokerError(m.Error)
		p.failed(env, q.part)
	} else {
		res.Offset = m.BaseOffset
		for j, r := range q.records {
			p.handed[p.byValue[r.Value]].offset = m.BaseOffset + int64(j)
		}
	}
	p.answer(env, q, res)
}

// failed starts the partition's backoff and asks for metadata: the leader may have
// moved.
func (p *Producer) failed(env *sim.Env, part int32) {
	p.backoffUntil[part] = env.Now().Add(RetryBackoff)
	p.refresh(env)
}

// answer gives a request's answer to the Sender, then sends what is held and may go.
func (p *Producer) answer(env *sim.Env, q *request, res Response) {
	if env.Tracing() {
		a := Answered{Request: int64(q.id), Partition: q.part, Values: values(q.records), Offset: res.Offset}
		if res.Err != nil {
			a.Error, a.Offset = res.Err.Error(), 0
		}
		sim.Record(env, a)
	}
	p.call(env, "Answered", func() { p.sender.Answered(p, res) })
	p.trySend(env, q.part)
}

// refresh asks a broker for metadata, unless a request is on its way.
func (p *Producer) refresh(env *sim.Env) {
	if p.mdCorr != 0 || len(p.cfg.Brokers) == 0 {
		return
	}
	to, ok := env.Lookup(p.cfg.Brokers[p.mdNext%len(p.cfg.Brokers)])
	p.mdNext++
	if !ok {
		return
	}
	p.corr++
	p.mdCorr = p.corr
	env.Send(to, proto.MetadataRequest{CorrelationID: p.mdCorr})
	env.SetTimer(metadataTimeout, sim.TimerTag{Kind: metadataTimedOut, Arg: p.mdCorr})
}

// onMetadata learns the leaders, and sends what waited for them.
func (p *Producer) onMetadata(env *sim.Env, m proto.MetadataResponse) {
	if m.CorrelationID != p.mdCorr {
		return
	}
	p.mdCorr = 0
	for part := range p.leaders {
		p.leaders[part] = proto.NoLeader
		if st, ok := m.Metadata.Partition(p.tp(int32(part))); ok {
			p.leaders[part] = st.Leader
		}
	}
	for part := range p.leaders {
		p.trySend(env, int32(part))
	}
}

// refreshSoon asks for metadata again after RetryBackoff: a partition with requests to
// send has no leader the producer knows.
func (p *Producer) refreshSoon(env *sim.Env) {
	if p.mdCorr != 0 || p.mdAgain {
		return
	}
	p.mdAgain = true
	env.SetTimer(RetryBackoff, sim.TimerTag{Kind: metadataAgain})
}

func values(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}
