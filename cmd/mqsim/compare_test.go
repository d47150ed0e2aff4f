package main

import (
	"bytes"
	"strings"
	"testing"
)

// compare runs the orders workload through both designs: the table has every row, the
// queue design dead-letters the poison message, neither loses a confirmed order, and
// the same seed prints the same table.
func TestCompareOrders(t *testing.T) {
	run := func() string {
		var out bytes.Buffer
		root := newRoot(&out, &out)
		root.SetArgs([]string{"compare", "orders"})
		if err := root.Execute(); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		return out.String()
	}
	first := run()
	for _, want := range []string{"log (Kafka-style)", "queue (RabbitMQ-style)", "published / acknowledged", "delivered (processed)",
		"duplicated (processed twice)", "lost (acknowledged, never processed)", "reordered keys", "latency p50", "latency p99",
		"what it needed", "partitions", "requeues", "the poison message", "dead-lettered after 4 failed deliveries"} {
		if !strings.Contains(first, want) {
			t.Errorf("no %q in:\n%s", want, first)
		}
	}
	for _, line := range strings.Split(first, "\n") {
		if strings.HasPrefix(line, "lost (acknowledged, never processed)") && len(strings.Fields(line)) != 6 {
			t.Errorf("lost row: %q", line)
		}
		if strings.HasPrefix(line, "lost (acknowledged, never processed)") && strings.Fields(line)[4] != "0" {
			t.Errorf("the log design lost confirmed orders: %q", line)
		}
		if strings.HasPrefix(line, "lost (acknowledged, never processed)") && strings.Fields(line)[5] != "0" {
			t.Errorf("the queue design lost confirmed orders: %q", line)
		}
	}
	if again := run(); again != first {
		t.Errorf("the same seed printed another table:\n%s\nthen:\n%s", first, again)
	}
}

func TestCompareUnknownWorkload(t *testing.T) {
	var out bytes.Buffer
	root := newRoot(&out, &out)
	root.SetArgs([]string{"compare", "nope"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "want one of orders, calm") {
		t.Fatalf("err %v", err)
	}
}
