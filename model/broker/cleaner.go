package broker

import (
	"mqsim/sim"
)

// The log cleaner in its compact mode (Kafka's LogCleaner, one thread per broker): every
// log.cleaner.backoff.ms the broker runs one cleaning pass (wal.Log.Clean) over each
// hosted log whose cleanup.policy compacts, with the partition's last stable offset as
// the limit, so that the cleaner never touches records above the high watermark or inside
// an open transaction (LogCleanerManager.cleanableOffsets). Leaders and followers clean
// their own logs, as every Kafka broker runs its own cleaner: replicas' logs may differ in
// which superseded records they still hold, never in the offsets or the latest value of a
// key. Kafka's cleaner picks the filthiest log first; mqsim's visits every log in turn,
// which changes nothing but the order.
//
// The timer runs only when the cluster's log settings compact, so runs without compaction
// see no extra timer. Internal topics ("__consumer_offsets", "__transaction_state") are
// not cleaned: Kafka compacts them, but in mqsim every log takes the cluster's log
// settings and a cleaner for them would add a timer and events to every existing run;
// their coordinators read them from the log start, which compaction would not change.

func (b *Broker) compactionConfigured() bool {
	return b.cfg.Broker.Log.Compaction.Policy.Compacts()
}

// armCleaner starts the periodic cleaning, once per incarnation.
func (b *Broker) armCleaner(env *sim.Env) {
	ps := &b.patterns
	if ps.cleanerArmed || !b.compactionConfigured() {
		return
	}
	ps.cleanerArmed = true
	env.SetTimer(b.cfg.Broker.CleanerBackoff, sim.TimerTag{Kind: timerCleaner})
}

// onCleanerTimer cleans every hosted log of a user topic and sets the next pass. A pass
// that found nothing to clean is traced only when the log had dirty bytes, so that an
// idle log does not fill the trace.
func (b *Broker) onCleanerTimer(env *sim.Env) {
	for _, tp := range b.order {
		if internalTopic(tp.Topic) {
			continue
		}
		r := b.parts[tp]
		lso := b.lastStableOffset(r)
		c, err := r.log.Clean(env.Now(), lso)
		if err != nil {
			sim.Record(env, StorageFailed{TP: r.tp, Op: OpClean, Err: err})
			continue
		}
		if c.Cleaned || c.DirtyBytes > 0 {
			sim.Record(env, LogCleaned{TP: r.tp, Cleaning: c, LSO: lso})
		}
	}
	env.SetTimer(b.cfg.Broker.CleanerBackoff, sim.TimerTag{Kind: timerCleaner})
}
