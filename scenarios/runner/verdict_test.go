package runner

import (
	"testing"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/model/proto"
	"mqsim/model/wal"
)

// What a configuration promises follows its settings: the safe one promises everything,
// acks=1 not to keep acknowledged writes, no idempotence not to prevent duplicates.
func TestUnpromisedFollowsTheSettings(t *testing.T) {
	safe := proto.DefaultConfig()
	safe.Producer.Acks, safe.Producer.Idempotence = proto.AcksAll, true
	safe.Topic.MinInsyncReplicas, safe.Broker.Log.Flush = 2, wal.FlushEveryBatch
	if a := Unpromised(safe); len(a) != 0 {
		t.Errorf("the safe settings allow %v", a)
	}
	lossy := safe
	lossy.Producer.Acks, lossy.Producer.Idempotence = proto.AcksLeader, false
	a := Unpromised(lossy)
	for _, want := range []checker.Anomaly{checker.LostWrite, checker.Undelivered, checker.Duplicate, cluster.DoubleOwnership} {
		if !a[want] {
			t.Errorf("acks=1 does not allow %s", want)
		}
	}
	noIdem := safe
	noIdem.Producer.Idempotence = false
	if a := Unpromised(noIdem); !a[checker.Duplicate] || a[checker.LostWrite] {
		t.Errorf("acks=all without idempotence allows %v, want duplicates and no loss", a)
	}
}
