package runner

import (
	"strings"
	"testing"

	"mqsim/scenarios/script"
)

// The answer functions read the run's typed state; a misspelt value, group or partition
// is an error, not a quiet "no".
func TestEvaluate(t *testing.T) {
	s, err := script.Parse("f.txt", `cluster brokers=3 partitions=2 rf=3 min-isr=2
----

produce values=(a, b) partition=1
----

consume
----

join consumer=c1 group=g
----
`)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{})
	for _, st := range s.Steps {
		if _, err := r.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	for expr, want := range map[string]string{
		"leader(t/1)":                        "b2",
		"epoch(t/1)":                         "0",
		"isr(t/1)":                           "b1 b2 b3",
		"hw(t/1)":                            "2",
		"leo(t/1, b3)":                       "2",
		"hw(t/0)":                            "0",
		"read(a)":                            "yes",
		"acked(b)":                           "yes",
		"count(read)":                        "2",
		"count(acked partition=t/0)":         "0",
		"count(read value=b, partition=t/1)": "1",
		"anomaly(lost-write)":                "no",
		"violations()":                       "0",
		"generation(g)":                      "1",
		"if(read(a), seen, unseen)":          "seen",
		"if(anomaly(duplicate), dup, if(acked(a), ok, lost))": "ok",
	} {
		e, err := script.ParseExpr(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got, err := r.Evaluate(e)
		if err != nil || got.Value != want {
			t.Errorf("%s = %q, %v; want %q", expr, got.Value, err, want)
		}
	}
	for expr, want := range map[string]string{
		"read(c)":       `no command of the run has sent "c" so far`,
		"generation(h)": "generation(h): no such group; the run's groups: g",
		"leader(u/0)":   "u/0: no such partition",
		"hw(t/0, b9)":   "b9",
	} {
		e, _ := script.ParseExpr(expr)
		if _, err := r.Evaluate(e); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %s", expr, err, want)
		}
	}
}

// dead-lettered(Q) counts a queue's dead-lettered messages from its state: a message
// rejected without requeue goes to the dead-letter exchange; the other queue has none.
func TestEvaluateDeadLettered(t *testing.T) {
	s, err := script.Parse("f.txt", `queue-broker nodes=1 queue-type=classic
----

exchange name=dlx type=fanout
----

queue name=parked
----

bind exchange=dlx queue=parked
----

queue name=jobs dlx=dlx
----

subscribe consumer=w queue=jobs fail=(bad) on-fail=reject
----

publish key=jobs values=(good, bad)
----

run for=1s
----
`)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Options{})
	for _, st := range s.Steps {
		if _, err := r.Exec(st); err != nil {
			t.Fatal(err)
		}
	}
	for expr, want := range map[string]string{"dead-lettered(jobs)": "1", "dead-lettered(parked)": "0"} {
		e, err := script.ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Evaluate(e); err != nil || got.Value != want {
			t.Errorf("%s = %q, %v; want %q", expr, got.Value, err, want)
		}
	}
	e, _ := script.ParseExpr("dead-lettered(jobs)")
	if _, err := NewRunner(Options{}).Evaluate(e); err == nil || !strings.Contains(err.Error(), "no queue broker yet") {
		t.Errorf("dead-lettered(jobs) with no queue broker: %v", err)
	}
	e, _ = script.ParseExpr("dead-lettered(nope)")
	if _, err := r.Evaluate(e); err == nil || !strings.Contains(err.Error(), "no such queue; the run's queues: parked, jobs") {
		t.Errorf("dead-lettered(nope): %v", err)
	}
}
