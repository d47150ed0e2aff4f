package queue

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/sim"
)

// ExchangeKind is how an exchange picks the queues of a message (exchanges.md).
type ExchangeKind string

const (
	// Direct routes to every binding whose key equals the routing key.
	Direct ExchangeKind = "direct"
	// Topic matches dot-separated words: "*" is exactly one word, "#" zero or more.
	Topic ExchangeKind = "topic"
	// Fanout routes to every bound queue and ignores the key.
	Fanout ExchangeKind = "fanout"
	// Headers matches the message's headers against the binding's, x-match all or any.
	Headers ExchangeKind = "headers"
)

// DefaultExchange is the nameless direct exchange to which every queue is bound by its
// own name.
const DefaultExchange = ""

// Exchange is a named router. Alternate, when set, receives what the exchange cannot
// route (alternate-exchange).
type Exchange struct {
	Name      string
	Kind      ExchangeKind
	Alternate string
}

// Header is one message header or binding argument.
type Header struct {
	Key, Value string
}

// Binding connects an exchange to a queue: Key for direct and topic exchanges; Match
// ("all" or "any") and Headers for headers exchanges.
type Binding struct {
	Exchange string
	Queue    string
	Key      string
	Match    string
	Headers  []Header
}

func (b Binding) String() string {
	if len(b.Headers) > 0 {
		var hs []string
		for _, h := range b.Headers {
			hs = append(hs, h.Key+"="+h.Value)
		}
		return fmt.Sprintf("%s -> %s (x-match=%s %s)", b.Exchange, b.Queue, b.Match, strings.Join(hs, " "))
	}
	if b.Key == "" {
		return fmt.Sprintf("%s -> %s", b.Exchange, b.Queue)
	}
	return fmt.Sprintf("%s -> %s (key %q)", b.Exchange, b.Queue, b.Key)
}

// QueueType is where a queue's messages live.
type QueueType string

const (
	// Classic lives on one node (Home): it applies each command at once and journals it
	// on that node's disk, confirming a publish once the journal's fsync covers it.
	Classic QueueType = "classic"
	// Quorum is replicated by a Raft group over Members: a command takes effect once a
	// majority has it on disk, and only the leader delivers and confirms.
	Quorum QueueType = "quorum"
)

// Overflow is what a full queue (MaxLength) does with a new message.
type Overflow string

const (
	// DropHead dead-letters (or drops) the oldest ready message to make room.
	DropHead Overflow = "drop-head"
	// RejectPublish refuses the new message: its publisher gets a nack.
	RejectPublish Overflow = "reject-publish"
)

// QueueConfig declares a queue: RabbitMQ's arguments and SQS's attributes in one
// struct, each unused by the other flavour.
type QueueConfig struct {
	Name string
	Type QueueType
	// Home is a classic queue's node; Members a quorum queue's voters, in order.
	Home    string
	Members []string

	// DLX is the dead-letter exchange (x-dead-letter-exchange), "" for none; DLXKey the
	// routing key dead letters get (x-dead-letter-routing-key), "" to keep theirs.
	DLX    string
	DLXKey string
	// DeliveryLimit dead-letters a message whose failed deliveries exceed it; -1 is
	// unlimited (classic queues have no limit; quorum queues default to 20).
	DeliveryLimit int
	// MessageTTL expires ready messages this long after they were enqueued (0: never).
	MessageTTL time.Duration
	// MaxLength bounds ready plus unacknowledged messages (0: unbounded).
	MaxLength int
	Overflow  Overflow
	// ConsumerTimeout closes a consumer's channel when a delivery stays unacknowledged
	// this long (consumer_timeout; 0: never).
	ConsumerTimeout time.Duration

	// SQS: Visibility is the default visibility timeout; MaxReceive and DLQ the redrive
	// policy (a message received MaxReceive times moves to DLQ on its next receive);
	// FIFO orders per message group and deduplicates within DedupWindow, by explicit
	// deduplication id or, with ContentDedup, by the body; Delay holds new messages
	// back (DelaySeconds).
	Visibility   time.Duration
	MaxReceive   int
	DLQ          string
	FIFO         bool
	ContentDedup bool
	DedupWindow  time.Duration
	Delay        time.Duration
}

// DefaultQueueConfig is a classic queue on q1 with RabbitMQ's and SQS's defaults.
func DefaultQueueConfig(name string) QueueConfig {
	return QueueConfig{
		Name: name, Type: Classic, Home: "q1", DeliveryLimit: -1, Overflow: DropHead,
		ConsumerTimeout: 30 * time.Minute, Visibility: 30 * time.Second, DedupWindow: 5 * time.Minute,
	}
}

// String renders the queue's settings that differ from nothing, on one line.
func (q QueueConfig) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "queue %s %s", q.Name, q.Type)
	if q.Type == Quorum {
		fmt.Fprintf(&b, " members=%s", strings.Join(q.Members, ","))
	} else {
		fmt.Fprintf(&b, " node=%s", q.Home)
	}
	if q.DLX != "" || q.DLXKey != "" {
		fmt.Fprintf(&b, " dlx=%q", q.DLX)
		if q.DLXKey != "" {
			fmt.Fprintf(&b, " dlx-key=%s", q.DLXKey)
		}
	}
	if q.DeliveryLimit >= 0 {
		fmt.Fprintf(&b, " delivery-limit=%d", q.DeliveryLimit)
	}
	if q.MessageTTL > 0 {
		fmt.Fprintf(&b, " ttl=%s", q.MessageTTL)
	}
	if q.MaxLength > 0 {
		fmt.Fprintf(&b, " max-length=%d overflow=%s", q.MaxLength, q.Overflow)
	}
	if q.FIFO {
		b.WriteString(" fifo")
		if q.ContentDedup {
			b.WriteString(" content-dedup")
		}
		fmt.Fprintf(&b, " dedup-window=%s", q.DedupWindow)
	}
	if q.MaxReceive > 0 {
		fmt.Fprintf(&b, " max-receive=%d dlq=%s", q.MaxReceive, q.DLQ)
	}
	return b.String()
}

// Topology is the broker's declared exchanges, queues and bindings: RabbitMQ's
// definitions. It is a value: Declare makes a changed copy, and nodes only read it.
type Topology struct {
	Exchanges []Exchange // sorted by name
	Queues    []QueueConfig
	Bindings  []Binding
}

// Exchange finds an exchange by name.
func (t *Topology) Exchange(name string) (Exchange, bool) {
	i := slices.IndexFunc(t.Exchanges, func(x Exchange) bool { return x.Name == name })
	if i < 0 {
		return Exchange{}, false
	}
	return t.Exchanges[i], true
}

// Queue finds a queue by name.
func (t *Topology) Queue(name string) (QueueConfig, bool) {
	i := t.queueIndex(name)
	if i < 0 {
		return QueueConfig{}, false
	}
	return t.Queues[i], true
}

func (t *Topology) queueIndex(name string) int {
	return slices.IndexFunc(t.Queues, func(q QueueConfig) bool { return q.Name == name })
}

// Clone copies the topology, deeply enough for the copy to be changed.
func (t *Topology) Clone() *Topology {
	c := &Topology{Exchanges: slices.Clone(t.Exchanges), Queues: slices.Clone(t.Queues), Bindings: slices.Clone(t.Bindings)}
	for i := range c.Queues {
		c.Queues[i].Members = slices.Clone(c.Queues[i].Members)
	}
	for i := range c.Bindings {
		c.Bindings[i].Headers = slices.Clone(c.Bindings[i].Headers)
	}
	return c
}

// AddExchange declares an exchange. Redeclaring one with other settings is an error, as
// in AMQP (PRECONDITION_FAILED).
func (t *Topology) AddExchange(x Exchange) error {
	switch x.Kind {
	case Direct, Topic, Fanout, Headers:
	default:
		return fmt.Errorf("exchange %s: type %q: want direct, topic, fanout or headers", x.Name, x.Kind)
	}
	if x.Name == DefaultExchange {
		return errors.New("the default exchange \"\" exists already and cannot be declared")
	}
	if t.queueIndex(x.Name) >= 0 {
		return fmt.Errorf("exchange %s: a queue has that name (mqsim keeps one namespace for both)", x.Name)
	}
	if old, ok := t.Exchange(x.Name); ok {
		if old != x {
			return fmt.Errorf("exchange %s exists with other settings (%s)", x.Name, old.Kind)
		}
		return nil
	}
	t.Exchanges = append(t.Exchanges, x)
	slices.SortFunc(t.Exchanges, func(a, b Exchange) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// AddQueue declares a queue; nodes are the broker's node names, for validation.
func (t *Topology) AddQueue(q QueueConfig, nodes []string) error {
	var errs []error
	if q.Name == "" {
		errs = append(errs, errors.New("queue name is empty"))
	}
	if _, ok := t.Exchange(q.Name); ok {
		errs = append(errs, fmt.Errorf("an exchange has that name (mqsim keeps one namespace for both)"))
	}
	switch q.Type {
	case Classic:
		if !slices.Contains(nodes, q.Home) {
			errs = append(errs, fmt.Errorf("node=%s is not a broker node (%s)", q.Home, strings.Join(nodes, " ")))
		}
	case Quorum:
		if len(q.Members) == 0 {
			errs = append(errs, errors.New("a quorum queue needs members"))
		}
		for i, m := range q.Members {
			if !slices.Contains(nodes, m) {
				errs = append(errs, fmt.Errorf("member %s is not a broker node (%s)", m, strings.Join(nodes, " ")))
			}
			if slices.Index(q.Members, m) != i {
				errs = append(errs, fmt.Errorf("member %s is listed twice", m))
			}
		}
	default:
		errs = append(errs, fmt.Errorf("type=%s: want classic or quorum", q.Type))
	}
	if q.Overflow != DropHead && q.Overflow != RejectPublish {
		errs = append(errs, fmt.Errorf("overflow=%s: want drop-head or reject-publish", q.Overflow))
	}
	if q.MaxReceive > 0 && q.DLQ == "" {
		errs = append(errs, errors.New("max-receive needs a dlq= to redrive to"))
	}
	if q.DLQ != "" && q.DLQ == q.Name {
		errs = append(errs, errors.New("a queue cannot be its own dlq"))
	}
	if q.DLQ != "" {
		if dlq, ok := t.Queue(q.DLQ); !ok {
			errs = append(errs, fmt.Errorf("dlq %s is not declared yet", q.DLQ))
		} else if dlq.FIFO != q.FIFO {
			errs = append(errs, fmt.Errorf("dlq %s: the dead-letter queue of a FIFO queue must be FIFO, of a standard queue standard", q.DLQ))
		}
	}
	if q.Visibility < 0 || q.Visibility > 12*time.Hour {
		errs = append(errs, fmt.Errorf("visibility=%s: want 0s to 12h", q.Visibility))
	}
	// A delivery's deadline re-arms with every redelivery: a consumer timeout closes the
	// channel and requeues, a visibility timeout makes the message receivable again.
	// 0 turns the consumer timeout off and makes a received message visible at once.
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"consumer-timeout", q.ConsumerTimeout}, {"visibility", q.Visibility}} {
		if d.v != 0 && d.v < sim.MinTimerPeriod {
			errs = append(errs, fmt.Errorf("%s=%s: want 0 or at least %s (the deadline re-arms with every redelivery: a shorter one would spend the run's steps redelivering)",
				d.name, d.v, sim.MinTimerPeriod))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("queue %s: %w", q.Name, errors.Join(errs...))
	}
	if i := t.queueIndex(q.Name); i >= 0 {
		if !sameQueue(t.Queues[i], q) {
			return fmt.Errorf("queue %s exists with other settings", q.Name)
		}
		return nil
	}
	t.Queues = append(t.Queues, q)
	return nil
}

func sameQueue(a, b QueueConfig) bool {
	return slices.Equal(a.Members, b.Members) && a.withoutMembers() == b.withoutMembers()
}

// queueSettings is a QueueConfig without its one slice, so it compares with ==.
type queueSettings struct {
	name, home, dlx, dlxKey, dlq  string
	typ                           QueueType
	overflow                      Overflow
	limit, maxLength, maxReceive  int
	ttl, timeout, vis, win, delay time.Duration
	fifo, contentDedup            bool
}

func (q QueueConfig) withoutMembers() queueSettings {
	return queueSettings{q.Name, q.Home, q.DLX, q.DLXKey, q.DLQ, q.Type, q.Overflow, q.DeliveryLimit, q.MaxLength, q.MaxReceive,
		q.MessageTTL, q.ConsumerTimeout, q.Visibility, q.DedupWindow, q.Delay, q.FIFO, q.ContentDedup}
}

// AddBinding binds a queue to an exchange.
func (t *Topology) AddBinding(b Binding) error {
	x, ok := t.Exchange(b.Exchange)
	if !ok {
		return fmt.Errorf("no exchange %q", b.Exchange)
	}
	if t.queueIndex(b.Queue) < 0 {
		return fmt.Errorf("no queue %q", b.Queue)
	}
	if x.Kind == Headers {
		if b.Match == "" {
			b.Match = "all"
		}
		if b.Match != "all" && b.Match != "any" {
			return fmt.Errorf("match=%s: want all or any", b.Match)
		}
		slices.SortFunc(b.Headers, func(a, b Header) int { return strings.Compare(a.Key, b.Key) })
	} else if len(b.Headers) > 0 || b.Match != "" {
		return fmt.Errorf("headers and match= are for headers exchanges; %s is %s", x.Name, x.Kind)
	}
	for _, old := range t.Bindings {
		if old.Exchange == b.Exchange && old.Queue == b.Queue && old.Key == b.Key && old.Match == b.Match && slices.Equal(old.Headers, b.Headers) {
			return nil
		}
	}
	t.Bindings = append(t.Bindings, b)
	return nil
}

// Route returns the queues a message published to exchange with key and headers goes
// to, sorted and without repeats, following alternate exchanges for what an exchange
// cannot route. ok is false when the exchange does not exist.
func (t *Topology) Route(exchange, key string, headers []Header) (queues []string, ok bool) {
	seen := map[string]bool{}
	for hops := 0; hops < 8; hops++ { // alternate-exchange chains are short; cycles stop here
		if exchange == DefaultExchange {
			if t.queueIndex(key) >= 0 {
				queues = append(queues, key)
			}
			return queues, true
		}
		x, found := t.Exchange(exchange)
		if !found {
			return nil, hops > 0
		}
		if seen[exchange] {
			return nil, true
		}
		seen[exchange] = true
		for _, b := range t.Bindings {
			if b.Exchange == x.Name && matches(x.Kind, b, key, headers) {
				queues = append(queues, b.Queue)
			}
		}
		if len(queues) > 0 || x.Alternate == "" {
			slices.Sort(queues)
			return slices.Compact(queues), true
		}
		exchange = x.Alternate
	}
	return nil, true
}

func matches(kind ExchangeKind, b Binding, key string, headers []Header) bool {
	switch kind {
	case Direct:
		return b.Key == key
	case Fanout:
		return true
	case Topic:
		return TopicMatch(b.Key, key)
	case Headers:
		return headersMatch(b.Match, b.Headers, headers)
	}
	return false
}

// TopicMatch reports whether a topic binding pattern matches a routing key: words split
// on ".", "*" matches exactly one word, "#" zero or more.
func TopicMatch(pattern, key string) bool {
	return wordsMatch(strings.Split(pattern, "."), strings.Split(key, "."))
}

func wordsMatch(p, k []string) bool {
	for len(p) > 0 {
		switch p[0] {
		case "#":
			// Collapse repeated #s, then try every split.
			for len(p) > 1 && p[1] == "#" {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(k); i++ {
				if wordsMatch(p[1:], k[i:]) {
					return true
				}
			}
			return false
		case "*":
			if len(k) == 0 {
				return false
			}
		default:
			if len(k) == 0 || k[0] != p[0] {
				return false
			}
		}
		p, k = p[1:], k[1:]
	}
	return len(k) == 0
}

// headersMatch applies x-match: all binding headers equal (all) or at least one (any);
// binding arguments whose key starts with "x-" do not take part.
func headersMatch(match string, want, have []Header) bool {
	n, hit := 0, 0
	for _, w := range want {
		if strings.HasPrefix(w.Key, "x-") {
			continue
		}
		n++
		if slices.Contains(have, w) {
			hit++
		}
	}
	if match == "any" {
		return hit > 0
	}
	return hit == n
}
