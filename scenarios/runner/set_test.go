package runner

import (
	"strings"
	"testing"

	"mqsim/model/proto"
	"mqsim/scenarios/script"
)

// NAME.KEY=VALUE in --set (and in a fix: line) sets KEY on the step that makes NAME,
// only there, beside the plain settings of the cluster; a name no step makes, or a key
// that step does not take, is an error.
func TestSetTargetsOneClient(t *testing.T) {
	s, err := script.Parse("t", "cluster brokers=1 partitions=1 rf=1 min-isr=1\n----\n\n"+
		"producer name=p1\n----\n\nproducer name=p2\n----\n\nconsumer name=c1\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, Options{Set: []string{"p1.transactional-id=orders", "c1.isolation=read_committed", "linger=0s"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Runner.Cluster()
	st, p1Txn := c.Producer("p1").Transaction()
	_, p2Txn := c.Producer("p2").Transaction()
	if !p1Txn || st.ID != "orders" || p2Txn {
		t.Errorf("p1 transactional %t (id %q), p2 transactional %t; want p1 only, with id orders", p1Txn, st.ID, p2Txn)
	}
	if iso := c.Consumer("c1").Config().Isolation; iso != proto.ReadCommitted {
		t.Errorf("c1's isolation %s, want read_committed", iso)
	}
	if c.Cfg.Producer.Linger != 0 || c.Cfg.Producer.TransactionalID != "" {
		t.Errorf("cluster producer defaults: linger %s, transactional.id %q; want 0s and none", c.Cfg.Producer.Linger, c.Cfg.Producer.TransactionalID)
	}
	for _, tc := range []struct {
		set, err string
	}{
		{"p3.transactional-id=orders", "--set p3.transactional-id=orders: no step makes a client of that name"},
		{"c1.transactional-id=orders", "--set: c1.transactional-id is not a setting of consumer"},
	} {
		_, err := Run(s, Options{Set: []string{tc.set}}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("--set %s: error %v, want one saying %q", tc.set, err, tc.err)
		}
	}
}
