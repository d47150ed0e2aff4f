package proto

import (
	"strings"
	"testing"
	"time"

	"mqsim/model/wal"
)

func TestTimerPeriodsBelowAMillisecondAreRefused(t *testing.T) {
	for name, set := range map[string]func(*Config){
		"broker.heartbeat.interval.ms=1ns":   func(c *Config) { c.Broker.HeartbeatInterval = time.Nanosecond },
		"heartbeat.interval.ms=1ns":          func(c *Config) { c.Consumer.HeartbeatInterval = time.Nanosecond },
		"auto.commit.interval.ms=1ns":        func(c *Config) { c.Consumer.AutoCommitInterval = time.Nanosecond },
		"request.timeout.ms (producer)=1ns":  func(c *Config) { c.Producer.RequestTimeout = time.Nanosecond },
		"flush interval 1ns":                 func(c *Config) { c.Broker.Log.Flush = wal.FlushInterval(time.Nanosecond) },
		"log.retention.check.interval.ms=0s": func(c *Config) { c.Broker.RetentionCheckInterval = 0 },
	} {
		cfg := DefaultConfig()
		set(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "want at least 1ms") {
			t.Errorf("%s: err %v; want it refused with the minimum", name, err)
		}
	}
	cfg := DefaultConfig()
	cfg.Consumer.AutoCommitInterval = time.Millisecond
	if err := cfg.Validate(); err != nil {
		t.Fatalf("1ms is allowed: %v", err)
	}
}

func TestProcessingTimeOfAWholePollMustFitTheClock(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Consumer.ProcessingTime = 1000 * time.Hour // x 500 records: 57 years
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "one poll's work would exceed 8760h0m0s") {
		t.Fatalf("err %v", err)
	}
	cfg.Consumer.ProcessingTime = 17 * time.Hour // x 500: 8500h
	if err := cfg.Validate(); err != nil {
		t.Fatalf("8500h of work per poll is allowed: %v", err)
	}
}

func TestISRCheckPeriodMustBePositive(t *testing.T) {
	for _, lag := range []time.Duration{0, time.Nanosecond, time.Millisecond} {
		cfg := DefaultConfig()
		cfg.Broker.ReplicaLagTimeMax = lag
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "replica.lag.time.max.ms="+lag.String()+": want at least 2ms") {
			t.Errorf("lag %s: err %v", lag, err)
		}
	}
}
