package proto

import (
	"strings"
	"testing"
	"time"
)

// Settings Kafka's producer refuses are refused, with Kafka's reason.
func TestProducerSettingsKafkaRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"delivery timeout below linger + request timeout", func(c *Config) { c.Producer.DeliveryTimeout = 30 * time.Second }, "delivery.timeout.ms=30s should be equal to or larger than linger.ms + request.timeout.ms (5ms + 30s)"},
		{"idempotence without retries", func(c *Config) { c.Producer.Retries = 0 }, "retries=0: the idempotent producer needs retries to be non-zero"},
		{"idempotence with six in flight", func(c *Config) { c.Producer.MaxInFlight = 6 }, "max.in.flight.requests.per.connection=6: the idempotent producer allows at most 5"},
		{"idempotence with acks=1", func(c *Config) { c.Producer.Acks = AcksLeader }, "enable.idempotence=true needs acks=all (got acks=1)"},
	} {
		c := DefaultConfig()
		tc.set(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	ok := DefaultConfig()
	ok.Producer.DeliveryTimeout = ok.Producer.Linger + ok.Producer.RequestTimeout
	if err := ok.Validate(); err != nil {
		t.Errorf("delivery.timeout.ms = linger.ms + request.timeout.ms is allowed: %v", err)
	}
}
