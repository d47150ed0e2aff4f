package queue

import (
	"slices"
	"strings"
	"testing"
)

func TestTopicMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, key string
		want         bool
	}{
		{"regions.na.cities.*", "regions.na.cities.toronto", true},
		{"regions.na.cities.*", "regions.na.cities", false},
		{"regions.na.cities.*", "regions.na.cities.toronto.east", false},
		{"audit.events.#", "audit.events", true},
		{"audit.events.#", "audit.events.users.signup", true},
		{"audit.events.#", "audit.event", false},
		{"#", "", true},
		{"#", "anything.at.all", true},
		{"*", "one", true},
		{"*", "one.two", false},
		{"*.*", "one.two", true},
		{"#.paid", "order.42.paid", true},
		{"#.paid", "paid", true},
		{"order.#.paid", "order.paid", true},
		{"order.#.paid", "order.1.2.paid", true},
		{"order.#.#.paid", "order.1.paid", true},
		{"order.*.paid", "order.42.shipped", false},
		{"a.*.#", "a", false},
		{"a.*.#", "a.b", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	} {
		if got := TopicMatch(c.pattern, c.key); got != c.want {
			t.Errorf("TopicMatch(%q, %q) = %v, want %v", c.pattern, c.key, got, c.want)
		}
	}
}

// routingTopology is one exchange of each kind, an alternate exchange and a queue per
// binding, as in the rabbit-routing scenario.
func routingTopology(t *testing.T) *Topology {
	t.Helper()
	top := &Topology{}
	nodes := []string{"q1"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []Exchange{
		{Name: "orders", Kind: Direct}, {Name: "events", Kind: Topic}, {Name: "broadcast", Kind: Fanout},
		{Name: "docs", Kind: Headers}, {Name: "unrouted", Kind: Fanout}, {Name: "with-ae", Kind: Direct, Alternate: "unrouted"},
	} {
		must(top.AddExchange(x))
	}
	for _, q := range []string{"eu", "us", "audit", "billing", "pdf", "either", "lost-and-found"} {
		must(top.AddQueue(DefaultQueueConfig(q), nodes))
	}
	for _, b := range []Binding{
		{Exchange: "orders", Queue: "eu", Key: "eu"},
		{Exchange: "orders", Queue: "us", Key: "us"},
		{Exchange: "events", Queue: "audit", Key: "#"},
		{Exchange: "events", Queue: "billing", Key: "order.*.paid"},
		{Exchange: "broadcast", Queue: "audit"},
		{Exchange: "broadcast", Queue: "billing"},
		{Exchange: "docs", Queue: "pdf", Match: "all", Headers: []Header{{"type", "report"}, {"format", "pdf"}, {"x-ignored", "1"}}},
		{Exchange: "docs", Queue: "either", Match: "any", Headers: []Header{{"type", "invoice"}, {"type", "report"}}},
		{Exchange: "unrouted", Queue: "lost-and-found"},
		{Exchange: "with-ae", Queue: "eu", Key: "eu"},
	} {
		must(top.AddBinding(b))
	}
	return top
}

func TestRoute(t *testing.T) {
	top := routingTopology(t)
	for _, c := range []struct {
		exchange, key string
		headers       []Header
		want          string // queues, comma-separated; "!" when the exchange does not exist
	}{
		{"orders", "eu", nil, "eu"},
		{"orders", "us", nil, "us"},
		{"orders", "asia", nil, ""},
		{"orders", "EU", nil, ""}, // keys are case-sensitive
		{"events", "order.42.paid", nil, "audit,billing"},
		{"events", "order.42.shipped", nil, "audit"},
		{"events", "", nil, "audit"},
		{"broadcast", "whatever", nil, "audit,billing"},
		{"docs", "", []Header{{"format", "pdf"}, {"type", "report"}}, "either,pdf"},
		{"docs", "", []Header{{"format", "pdf"}, {"type", "memo"}}, ""},
		{"docs", "", []Header{{"type", "invoice"}}, "either"},
		{"docs", "", []Header{{"format", "pdf"}}, ""},
		{"docs", "", nil, ""},
		{"", "audit", nil, "audit"}, // the default exchange routes by queue name
		{"", "nope", nil, ""},
		{"with-ae", "eu", nil, "eu"},
		{"with-ae", "us", nil, "lost-and-found"}, // unroutable: the alternate exchange takes it
		{"missing", "eu", nil, "!"},
	} {
		got, ok := top.Route(c.exchange, c.key, c.headers)
		s := strings.Join(got, ",")
		if !ok {
			s = "!"
		}
		if s != c.want {
			t.Errorf("Route(%q, %q, %v) = %q, want %q", c.exchange, c.key, c.headers, s, c.want)
		}
	}
}

func TestDeclarationsAreValidated(t *testing.T) {
	top := routingTopology(t)
	nodes := []string{"q1", "q2"}
	for _, c := range []struct {
		err  error
		want string
	}{
		{top.AddExchange(Exchange{Name: "orders", Kind: Topic}), "exists with other settings"},
		{top.AddExchange(Exchange{Name: "x", Kind: "random"}), "want direct, topic, fanout or headers"},
		{top.AddExchange(Exchange{Name: "eu", Kind: Direct}), "a queue has that name"},
		{top.AddQueue(QueueConfig{Name: "q", Type: Quorum, Overflow: DropHead}, nodes), "a quorum queue needs members"},
		{top.AddQueue(QueueConfig{Name: "q", Type: Classic, Home: "q9", Overflow: DropHead}, nodes), "not a broker node"},
		{top.AddQueue(func() QueueConfig { q := DefaultQueueConfig("q"); q.MaxReceive = 3; return q }(), nodes), "needs a dlq"},
		{top.AddQueue(func() QueueConfig { q := DefaultQueueConfig("q"); q.DLQ = "nope"; return q }(), nodes), "not declared"},
		{top.AddBinding(Binding{Exchange: "orders", Queue: "eu", Match: "all"}), "for headers exchanges"},
		{top.AddBinding(Binding{Exchange: "nope", Queue: "eu"}), "no exchange"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", c.err, c.want)
		}
	}
	// Redeclaring with the same settings is fine, as in AMQP.
	if err := top.AddExchange(Exchange{Name: "orders", Kind: Direct}); err != nil {
		t.Error(err)
	}
	n := len(top.Bindings)
	if err := top.AddBinding(Binding{Exchange: "orders", Queue: "eu", Key: "eu"}); err != nil || len(top.Bindings) != n {
		t.Errorf("a repeated binding: err %v, %d bindings (was %d)", err, len(top.Bindings), n)
	}
	if !slices.IsSortedFunc(top.Exchanges, func(a, b Exchange) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("exchanges are not sorted")
	}
}
