package broker

import (
	"mqsim/sim"
)

// Retention: Kafka's log cleaner thread in its delete mode. Every
// log.retention.check.interval.ms the broker applies each hosted log's retention
// (retention.ms, retention.bytes: wal.Log.ApplyRetention) with the replica's high
// watermark as the limit, so that only committed records are ever deleted; leaders and
// followers apply it on their own, as Kafka's replicas do. A consumer whose position falls
// below the new log start gets OFFSET_OUT_OF_RANGE and resets as auto.offset.reset says.
//
// The check runs only when the log has a retention limit (mqsim's logs keep everything
// unless a scenario sets one), so runs without retention see no extra timer. The offsets
// topic is skipped: Kafka compacts it rather than deleting it (cleaner.go says why mqsim
// does not). Under cleanup.policy=compact, retention does not apply at all.

func (b *Broker) retentionConfigured() bool {
	l := b.cfg.Broker.Log
	return l.Compaction.Policy.Deletes() && (l.RetentionAge >= 0 || l.RetentionBytes >= 0)
}

// armRetention starts the periodic check, once per incarnation.
func (b *Broker) armRetention(env *sim.Env) {
	ps := &b.patterns
	if ps.retentionArmed || !b.retentionConfigured() {
		return
	}
	ps.retentionArmed = true
	env.SetTimer(b.cfg.Broker.RetentionCheckInterval, sim.TimerTag{Kind: timerRetention})
}

// onRetentionTimer applies retention to every hosted log and sets the next check.
func (b *Broker) onRetentionTimer(env *sim.Env) {
	for _, tp := range b.order {
		if internalTopic(tp.Topic) {
			continue
		}
		r := b.parts[tp]
		d := r.log.ApplyRetention(env.Now(), r.hw)
		b.sync(env, d.Sync)
		r.producers.dropAbortedBelow(r.log.LogStartOffset())
		if len(d.Segments) > 0 {
			sim.Record(env, RetentionApplied{TP: r.tp, Deletion: d, HW: r.hw})
		}
	}
	env.SetTimer(b.cfg.Broker.RetentionCheckInterval, sim.TimerTag{Kind: timerRetention})
}
