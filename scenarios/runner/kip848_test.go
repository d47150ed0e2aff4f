package runner

import (
	"fmt"
	"strings"
	"testing"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/scenarios/script"
)

// kip848Handover: k1 owns both partitions and is busy with t/1 when k2 joins a
// consumer-protocol group; the coordinator moves t/1 to k2.
const kip848Handover = `cluster brokers=3 partitions=2 rf=3 min-isr=2 auto-offset-reset=earliest processing=500ms group-protocol=consumer BUGS
----

join consumer=k1 group=g poll-every=500ms
----

produce count=20 partition=1
----

run for=1s
----

join consumer=k2 group=g poll-every=500ms wait=false
----

run for=30s
----

check promise=at-least-once
----
`

// The double-ownership invariant sees consumer-protocol groups: with the coordinator's
// revoke-first rule, k2 gets t/1 only after k1 released it and nothing fires; with the
// planted no-revoke-first bug the coordinator hands t/1 over while k1, inside its poll,
// still holds it, and the invariant catches both live members holding it.
func TestKIP848DoubleOwnershipCaught(t *testing.T) {
	for _, tc := range []struct {
		bugs string
		want bool
	}{{"", false}, {"bugs=(no-revoke-first)", true}} {
		s, err := script.Parse("kip848-handover", strings.Replace(kip848Handover, "BUGS", tc.bugs, 1))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(s, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, ok := res.Runner.Verdict()
		if !ok {
			t.Fatal("no verdict")
		}
		caught := v.Report.Counts[checker.Anomaly(cluster.DoubleOwnership)] > 0
		if caught != tc.want {
			t.Errorf("%q: double-ownership reported %t, want %t:\n%s", tc.bugs, caught, tc.want, res.Transcript)
		}
	}
}

// kip848MaxPoll: c1 spends 50s on one poll's records, beyond max.poll.interval.ms=30s.
const kip848MaxPoll = `cluster brokers=3 partitions=2 rf=3 min-isr=2 auto-offset-reset=earliest commit=after max-poll-interval=30s max-poll-records=10 group-protocol=consumer
----

join consumer=c1 group=g processing=5s poll-every=1s wait=false
----

join consumer=c2 group=g processing=10ms poll-every=1s
----

produce count=10 partition=0
----

run for=75s
----

check
----
`

// A consumer-protocol member past max.poll.interval.ms leaves (epoch -1): its partition
// goes to the other member at once, its late commit is refused, and it rejoins as a new
// member (epoch 0, a new member id) once its poll ends; the group settles with both.
func TestKIP848MaxPollLeavesAndRejoins(t *testing.T) {
	s, err := script.Parse("kip848-max-poll", kip848MaxPoll)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Violations != 0 {
		t.Fatalf("%d violations:\n%s", res.Violations, res.Transcript)
	}
	g := res.Runner.Cluster().Group("g")
	owners := map[string]string{}
	for _, c := range g.Consumers {
		owners[c.Name] = c.MemberID + " " + fmt.Sprint(c.Owned)
	}
	if got := fmt.Sprint(g.State, " ", owners); got != "Stable map[c1:c1-3 [t/1] c2:c2-2 [t/0]]" {
		t.Errorf("after c1's poll timeout: %s, want c1 back as c1-3 with t/1 and c2 holding t/0", got)
	}
}
