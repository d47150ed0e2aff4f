package cluster_test

import (
	"testing"
	"time"

	"mqsim/sim"
)

// The safe configuration's promise holds with a quorum of three controllers too: random
// crashes, restarts and partitions of controllers and brokers lose no acknowledged
// record and break no invariant, the quorum's included (one active controller per
// epoch, the same metadata at the same offset on every controller). Odd seeds snapshot
// the metadata after every entry, so that restarts and lagging controllers go through
// snapshots.
//
// delivery.timeout.ms is the swarm's 2 minutes, longer than a run: an idempotent
// producer whose batch expires takes a new producer id, and its re-sends may then
// duplicate earlier attempts (the guarantee holds within one producer id), which is the
// producer's matter, not the controllers'.
func TestSafeConfigurationLosesNothingWithAQuorum(t *testing.T) {
	seeds := uint64(100)
	if testing.Short() {
		seeds = 10
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := safeConfig()
		cfg.Controllers = 3
		cfg.Producer.DeliveryTimeout = 2 * time.Minute
		if seed%2 == 1 {
			cfg.Quorum.SnapshotEvery = 1
		}
		d := &seededDraws{r: sim.NewRand(seed, "quorum-property")}
		runSafe(d, cfg)
		if d.failed != "" {
			t.Fatalf("seed %d: %s", seed, d.failed)
		}
	}
}
