package proto

import (
	"fmt"
	"time"
)

// Client quotas: byte rates per client id that a broker enforces by throttling, as
// Kafka's ClientQuotaManager does (KIP-13, KIP-219).

// ClientQuota is the quota of one client id: producer_byte_rate and consumer_byte_rate
// in bytes per second, 0 for none (Kafka's default is unlimited). mqsim's client id is
// the client's node name.
type ClientQuota struct {
	ClientID string
	// ProducerByteRate bounds the bytes of the produce requests a broker takes from the
	// client per second; ConsumerByteRate the bytes of the fetch responses it sends it.
	ProducerByteRate, ConsumerByteRate int64
}

// DefaultClientID names the default client-id quota entity (kafka-configs
// --entity-type clients --entity-default): it applies to every client id without a
// quota of its own.
const DefaultClientID = "<default>"

// Kafka's quota sample window: quota.window.num (11) samples of quota.window.size.seconds
// (1) each (QuotaConfig.NUM_QUOTA_SAMPLES_DEFAULT, QUOTA_WINDOW_SIZE_SECONDS_DEFAULT).
const (
	QuotaWindowNum  = 11
	QuotaWindowSize = time.Second
)

// AlterClientQuotas sets one client id's quotas on a broker (the operator's
// kafka-configs --alter --add-config producer_byte_rate=...,consumer_byte_rate=...).
// Kafka's controller spreads the change through the metadata log; mqsim's operator hands
// it to every broker directly, and a broker keeps it in memory only.
type AlterClientQuotas struct {
	Quota ClientQuota
}

func (m AlterClientQuotas) String() string {
	return fmt.Sprintf("AlterClientQuotas %s producer_byte_rate=%d consumer_byte_rate=%d", m.Quota.ClientID, m.Quota.ProducerByteRate, m.Quota.ConsumerByteRate)
}
