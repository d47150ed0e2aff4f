package tui

import (
	"fmt"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/sim"
)

// Explanations of back-pressure: the producer's buffer.memory and max.block.ms, and the
// brokers' client quotas. explain_broker.go and explain_client.go hand these events here.

// explainQuotaBroker explains a broker's quota events.
func explainQuotaBroker(e sim.Event) (Explanation, bool) {
	switch d := e.Data.(type) {
	case broker.QuotaSet:
		return Explanation{fmt.Sprintf("The operator sets client id %s's quotas on %s: %s. A broker measures each client id's bytes per second, produced and fetched, "+
			"over a window of 11 one-second samples, and slows down a client that goes over its quota.", d.Quota.ClientID, e.Node, e.Detail), NoteBackPressure}, true
	case broker.Throttled:
		what := "The response still goes out at once"
		if d.Quota == "fetch" {
			what = "The response goes out empty (its records would have taken the client further over)"
		}
		return Explanation{fmt.Sprintf("%s measured %s at %d bytes/s, over its %s quota of %d bytes/s. Kafka does not refuse the request: it computes how long the client must stay silent "+
			"to bring its average back to the quota, (rate - quota) / quota x window = %s. %s, carrying that throttle time, and %s mutes the client's connection that long; "+
			"the client itself sends nothing to %s until then (KIP-219).", e.Node, d.Client, d.Rate, d.Quota, d.Limit, d.For, what, e.Node, e.Node), NoteBackPressure}, true
	case broker.HeldMuted:
		return Explanation{fmt.Sprintf("%s sent %s a request while %s had it muted for its quota: the request waits at the broker until %s, as a muted connection in Kafka is not read. "+
			"These are requests the client had already sent before it learnt of its throttle time.", d.Client, e.Node, e.Node, d.Until), NoteBackPressure}, true
	}
	return Explanation{}, false
}

// explainBackPressureClient explains a client's blocked sends and throttles.
func explainBackPressureClient(e sim.Event) (Explanation, bool) {
	switch d := e.Data.(type) {
	case client.SendBlocked:
		return Explanation{fmt.Sprintf("%s's application calls send(%s), which needs a new batch of %d bytes, but the batches not yet acknowledged hold %d of the %d bytes of buffer.memory. "+
			"send() blocks the application's thread for up to max.block.ms=%s, waiting for a batch to complete and give its memory back; the application's next sends wait behind it.",
			e.Node, d.Value, d.Need, d.Used, d.Total, d.MaxBlock), NoteBackPressure}, true
	case client.SendUnblocked:
		return Explanation{fmt.Sprintf("A batch of %s completed and gave its memory back: the send of %s that blocked %s ago goes into the accumulator, and the application goes on with its next sends. "+
			"A producer faster than its brokers is slowed down to their pace this way.", e.Node, d.Value, d.Waited), NoteBackPressure}, true
	case client.BufferExhausted:
		return Explanation{fmt.Sprintf("No batch of %s completed within max.block.ms=%s, so send(%s) gives up: BufferExhaustedException, a TimeoutException. The record was never sent: "+
			"the send fails, and the application decides (drop it, keep it elsewhere, or tell its caller to slow down).", e.Node, d.MaxBlock, d.Value), NoteBackPressure}, true
	case client.ThrottledBy:
		return Explanation{fmt.Sprintf("%s's answer to %s carried a throttle time of %s: %s is over a quota there. Since KIP-219 the client itself waits that long before it sends %s anything more; "+
			"the broker has muted its connection for the same time.", d.Broker, e.Node, d.For, e.Node, d.Broker), NoteBackPressure}, true
	}
	return Explanation{}, false
}
