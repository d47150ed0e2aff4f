package proto

import (
	"slices"
	"strings"
	"testing"
)

// Each release has the old behaviour of exactly the fixes it did not have yet.
func TestKafkaVersionSetsTheSwitchesOfThatRelease(t *testing.T) {
	for _, tc := range []struct {
		version string
		legacy  []string // LegacyNames after the preset
		trunc   TruncationMode
		elr     bool // eligible leader replicas, on for clusters formatted at 4.1 or later
	}{
		{"0.10", []string{"epoch-lookup=kip101", "isr-expand=hw", "fetch-fencing=off", "broker-epoch=off", "isr-shrink-epoch=bump", "hw-min-isr=ignore", "producer-fencing=off", "txn-verification=off"}, TruncateToHW, false},
		{"0.11", []string{"epoch-lookup=kip101", "isr-expand=hw", "fetch-fencing=off", "broker-epoch=off", "isr-shrink-epoch=bump", "hw-min-isr=ignore", "txn-verification=off"}, TruncateByEpoch, false},
		{"2.0", []string{"isr-expand=hw", "fetch-fencing=off", "broker-epoch=off", "isr-shrink-epoch=bump", "hw-min-isr=ignore", "txn-verification=off"}, TruncateByEpoch, false},
		{"2.0.1", []string{"isr-expand=hw", "fetch-fencing=off", "broker-epoch=off", "isr-shrink-epoch=bump", "hw-min-isr=ignore", "txn-verification=off"}, TruncateByEpoch, false},
		{"2.1", []string{"broker-epoch=off", "isr-shrink-epoch=bump", "hw-min-isr=ignore", "txn-verification=off"}, TruncateByEpoch, false},
		{"3.5", []string{"isr-shrink-epoch=bump", "hw-min-isr=ignore", "txn-verification=off"}, TruncateByEpoch, false},
		{"3.6", []string{"hw-min-isr=ignore"}, TruncateByEpoch, false},
		{"3.7", nil, TruncateByEpoch, false},
		{"4.0", nil, TruncateByEpoch, false},
		{"4.1", nil, TruncateByEpoch, true},
	} {
		c := DefaultConfig()
		c.Legacy.StraddleRepair = true // no release had it: every preset turns it off
		if err := ApplyKafkaVersion(&c, tc.version); err != nil {
			t.Fatalf("%s: %v", tc.version, err)
		}
		if got := c.LegacyNames(); !slices.Equal(got, tc.legacy) || c.Broker.Truncation != tc.trunc || c.Broker.EligibleLeaderReplicas != tc.elr {
			t.Errorf("kafka-version=%s: legacy %v truncation %s elr %t; want %v truncation %s elr %t", tc.version, got, c.Broker.Truncation,
				c.Broker.EligibleLeaderReplicas, tc.legacy, tc.trunc, tc.elr)
		}
	}
}

func TestKafkaVersionAndSwitchesRefuseBadValues(t *testing.T) {
	c := DefaultConfig()
	for _, v := range []string{"0.7", "4.3", "5", "two", "2.x", ""} {
		if err := ApplyKafkaVersion(&c, v); err == nil || !strings.Contains(err.Error(), "want a release from 0.8 to 4.2") {
			t.Errorf("kafka-version=%q: error %v", v, err)
		}
	}
	for _, f := range LegacyFixes {
		if err := f.Set(&c, "maybe"); err == nil || !strings.Contains(err.Error(), f.Modern+" (the default) or "+f.Old) {
			t.Errorf("%s=maybe: error %v", f.Key, err)
		}
		if err := f.Set(&c, f.Old); err != nil || f.Value(c) != f.Old {
			t.Errorf("%s=%s: %v, value %s", f.Key, f.Old, err, f.Value(c))
		}
		if err := f.Set(&c, f.Modern); err != nil || f.Value(c) != f.Modern {
			t.Errorf("%s=%s: %v, value %s", f.Key, f.Modern, err, f.Value(c))
		}
	}
	if c.Legacy != (Legacy{}) || c.Broker.Truncation != TruncateByEpoch {
		t.Errorf("every switch set back to its default, yet %+v truncation %s", c.Legacy, c.Broker.Truncation)
	}
}
