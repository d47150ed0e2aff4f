package runner

import (
	"strings"
	"testing"

	"mqsim/scenarios/script"
)

// Geo-replication commands refuse what they cannot do, saying what they expected.
func TestMirrorCommandsSayWhatIsMissing(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"remote-cluster name=west\n----\n", "no cluster yet"},
		{"cluster brokers=1 rf=1 min-isr=1\n----\n\nremote-cluster name=West.1\n----\n", "lower-case letters"},
		{"cluster brokers=1 rf=1 min-isr=1\n----\n\nmirror name=mm2 source=east to=west\n----\n", `no remote cluster "west"`},
		{"cluster brokers=1 rf=1 min-isr=1\n----\n\nremote-cluster name=west\n----\n\nmirror name=mm2 source=east to=west topic=u\n----\n",
			`no topic "u"`},
		{"cluster brokers=1 rf=1 min-isr=1\n----\n\nremote-cluster name=west\n----\n\nremote-cluster name=west\n----\n", "exists already"},
		{"cluster brokers=1 rf=1 min-isr=1\n----\n\nfailover group=g consumer=c2 mirror=mm2\n----\n", `no mirror "mm2"`},
		{"cluster brokers=1 rf=1 min-isr=1\n----\n\nshow mirror mm2\n----\n", `no mirror "mm2"`},
	} {
		s, err := script.Parse("inline", c.text)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(s, Options{}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got error %v, want one containing %q", c.text, err, c.want)
		}
	}
}

// With no loss on the link and a group that commits before the checkpoint, the mirror
// catches up, the checkpoint is exact, and a failover neither loses nor reads twice.
func TestFailoverFromAnExactCheckpointLosesNothing(t *testing.T) {
	r := runScript(t, `cluster brokers=1 partitions=1 rf=1 min-isr=1 auto-offset-reset=earliest
----

remote-cluster name=west
----

mirror name=mm2 source=east to=west groups=(g) checkpoint-interval=2s flush-interval=1s
----

join consumer=c1 group=g poll-every=100ms commit=after
----

produce count=5
----

run for=5s
----

crash b1 ctl c1
----

failover group=g consumer=c2 mirror=mm2
----

run for=5s
----
`, Options{})
	_, m, err := r.mirrorRun("mm2")
	if err != nil {
		t.Fatal(err)
	}
	parts := m.Partitions()
	if len(parts) != 1 || parts[0].Replicated != 5 {
		t.Fatalf("replicated: %+v", parts)
	}
	cps := m.Checkpoints()
	if len(cps) != 1 || cps[0].Upstream != 5 || cps[0].Downstream != 5 {
		t.Fatalf("checkpoints: %+v", cps)
	}
	s, err := script.Parse("inline", "check-failover group=g mirror=mm2\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Exec(s.Steps[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"5 records acknowledged", "never replicated (the replication lag when it died): 0", "read twice (once before the failover, again after it): 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// A narrow wide-area link holds the copies back: the replication lag grows as its
// bandwidth shrinks, all else equal.
func TestNarrowWanLinkGrowsTheReplicationLag(t *testing.T) {
	replicated := func(wan string) int64 {
		r := runScript(t, `cluster brokers=1 rf=1 min-isr=1 partitions=1
----

remote-cluster name=west
----

mirror name=mm2 source=east to=west wan-latency=20ms `+wan+`
----

produce count=50
----

run for=400ms
----
`, Options{})
		_, m, err := r.mirrorRun("mm2")
		if err != nil {
			t.Fatal(err)
		}
		return m.Partitions()[0].Replicated
	}
	wide, narrow := replicated(""), replicated("wan-bandwidth=1KB/s")
	if wide != 50 || narrow != 0 {
		t.Fatalf("replicated after 400ms: %d over an unlimited link (want 50), %d over 1KB/s (want 0: the fetch response alone takes over 400ms)", wide, narrow)
	}
}
