package cluster

import (
	"slices"
	"testing"

	"mqsim/model/client"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Two instances of one application are one flow for the checker, which would otherwise
// report each missing or duplicate output once per instance.
func TestPipelineInstancesShareOneFlow(t *testing.T) {
	cfg := proto.DefaultConfig()
	c, err := New(sim.NewWorld(sim.DefaultConfig(1)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ name, from, to string }{{"app1", "t", "out"}, {"app2", "t", "out"}, {"other", "t", "audit"}} {
		pc := cfg.Producer
		pc.TransactionalID = p.name
		if _, err := c.AddPipeline(p.name, client.PipelineConfig{Group: "g", From: p.from, To: p.to, Transactional: true}, cfg.Consumer, pc); err != nil {
			t.Fatal(err)
		}
	}
	want := []PipelineFlow{{From: "t", To: "out"}, {From: "t", To: "audit"}}
	if got := c.PipelineFlows(); !slices.Equal(got, want) {
		t.Fatalf("flows %v; want %v", got, want)
	}
}
