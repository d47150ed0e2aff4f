package swarm

import (
	"slices"
	"strings"

	"mqsim/model/proto"
	"mqsim/sim"
)

// The legacy bias: a swarm run with --set naming a legacy replication switch
// (proto.LegacyFixes) draws, from a random stream of its own ("swarm/legacy"), the
// settings and the fault sequences that expose the bug the switch brings back. Each
// sequence is modelled on the switch's catalogue scenario: a double failover in quick
// succession (truncation=hw), a follower that lacks a committed record let back into the
// ISR at a new leader's stale high watermark (isr-expand=hw), a fast double failover
// through unclean elections (epoch-lookup=kip101), and so on.
//
// The bias is drawn for the switch named, whichever its value: `--set isr-expand=epoch-start`
// runs exactly the scripts `--set isr-expand=hw` runs, with the fix in place, which is the
// control that shows the failures are the switch's. Without a legacy switch in --set
// nothing is drawn from the stream and every seed's scenario is what it was.

// legacyBias is the bias of one run: its random stream and the switches named.
type legacyBias struct {
	r    *sim.Rand
	keys []string // the legacy switches named in --set, in proto.LegacyFixes' order
	n    int      // the moments written so far
}

// maxLegacyMoments bounds the moments of one run: each runs for several seconds, and the
// safety phase must stay shorter than delivery.timeout.ms (2m), or an idempotent producer
// whose batch expired takes a new producer id and may duplicate what it sends again.
const maxLegacyMoments = 2

// newLegacyBias is the bias for the legacy switches set names; nil if it names none.
func newLegacyBias(seed uint64, set []string) *legacyBias {
	var keys []string
	for _, f := range proto.LegacyFixes {
		if slices.ContainsFunc(set, func(kv string) bool { return strings.HasPrefix(kv, f.Key+"=") }) {
			keys = append(keys, f.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &legacyBias{r: sim.NewRand(seed, "swarm/legacy"), keys: keys}
}

func (lb *legacyBias) has(key string) bool { return slices.Contains(lb.keys, key) }

// adjust rewrites the cluster settings drawn so far (words "key=value") with the
// settings the named switches need, leaving alone every key --set names itself (--set
// comes last on the line, and a key may be given once). Every release that had one of these bugs predates
// eligible leader replicas (Kafka 4.1), so they are off, but for hw-min-isr: KIP-966
// builds on KAFKA-15583's fix, and its eligible replicas, elected once the last ISR
// member is fenced, lack what the old rule let the HW cover. epoch-lookup=kip101 (and
// straddle-repair, which changes how its short case shows) needs a replica elected
// without the previous leader's epoch: only an unclean election makes one; what unclean
// elections allow is then allowed, but a diverged log never is.
func (lb *legacyBias) adjust(settings, set []string) []string {
	var want [][2]string
	if !lb.has("hw-min-isr") {
		want = append(want, [2]string{"elr", "false"})
	}
	if lb.has("epoch-lookup") || lb.has("straddle-repair") {
		want = append(want, [2]string{"unclean", "true"})
	}
	words := strings.Fields(strings.Join(settings, " "))
	for _, kv := range want {
		if slices.ContainsFunc(set, func(w string) bool { return strings.HasPrefix(w, kv[0]+"=") }) {
			continue
		}
		i := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, kv[0]+"=") })
		if i < 0 {
			words = append(words, kv[0]+"="+kv[1])
		} else {
			words[i] = kv[0] + "=" + kv[1]
		}
	}
	return words
}

// moment writes, at about one safety step in five and at most maxLegacyMoments times,
// the fault sequence of one of the named switches.
func (lb *legacyBias) moment(s *genScript, ctls []string) {
	if lb.n == maxLegacyMoments || !lb.r.Chance(sim.Percent(20)) {
		return
	}
	lb.n++
	var seqs []func(*genScript)
	for _, k := range lb.keys {
		if m := legacyMoments[k]; m != nil {
			seqs = append(seqs, func(s *genScript) { m(lb.r, s, ctls) })
		}
	}
	if len(seqs) > 0 {
		seqs[lb.r.IntN(len(seqs))](s)
	}
}

// t0Replicas are the brokers that hold t/0 (the first three; b1 leads it first).
var t0Replicas = []string{"b1", "b2", "b3"}

// legacyMoments are the fault sequences, by switch. fetch-fencing has none: mqsim's
// follower ignores a LeaderAndIsr older than its own, which removes the stale requests
// KIP-320 guards against (notes/legacy-replication.md).
var legacyMoments = map[string]func(r *sim.Rand, s *genScript, ctls []string){
	"truncation":       doubleFailover,
	"isr-shrink-epoch": shrinkThenFailover,
	"isr-expand":       expandAtStaleHW,
	"epoch-lookup":     fastUncleanFailover,
	"straddle-repair":  fastUncleanFailover,
	"hw-min-isr":       readThenLoseLastReplica,
	"broker-epoch":     quickBounce,
}

// recover lets the controller elect whoever is left, and brings t/0's replicas back, so
// that the rest of the safety phase runs on a whole cluster again.
func recoverT0(r *sim.Rand, s *genScript) {
	s.line("run until-change=leader partition=t/0 limit=%dms", 4000+r.IntN(3000))
	s.line("restart %s", strings.Join(t0Replicas, " "))
}

// ackedWrite writes to t/0 and runs a little, so that the leader acknowledges and the
// followers' high watermarks lag its own: a follower learns the HW from its next fetch
// response, which the leader holds for up to replica.fetch.wait.max.ms when no new data
// comes.
func ackedWrite(r *sim.Rand, s *genScript) {
	s.line("produce producer=p%d partition=0 count=%d wait=false", 1+r.IntN(2), 1+r.IntN(3))
	s.line("run for=%dms", 3+r.IntN(60))
}

// cutLeaderAnswers loses the leader's messages to t/0's replicas (its fetch answers, so
// that no follower learns the HW that covers the last write).
func cutLeaderAnswers(s *genScript) {
	for _, b := range t0Replicas {
		s.line("cut leader:t/0 -> %s", b)
	}
}

// doubleFailover (truncation=hw, KIP-101): the leader dies while its followers' HWs lag,
// and the new leader dies as soon as the controller elects it: the other follower, which
// the leader change made cut its log to its own HW, is elected cleanly without records
// that were committed.
func doubleFailover(r *sim.Rand, s *genScript, ctls []string) {
	ackedWrite(r, s)
	s.line("crash leader:t/0")
	s.line("run until-change=leader partition=t/0 limit=%dms", 4000+r.IntN(3000))
	if r.Chance(sim.Percent(50)) {
		s.line("run for=%dms", 1+r.IntN(5))
	}
	s.line("crash leader:t/0")
	recoverT0(r, s)
}

// shrinkThenFailover (isr-shrink-epoch=bump with truncation=hw, Kafka 0.10): a follower
// dies while the other's HW lags; the controller removes it from the ISR with a new
// leader epoch, the other follower cuts its log to its HW, and the leader dies at once.
func shrinkThenFailover(r *sim.Rand, s *genScript, ctls []string) {
	ackedWrite(r, s)
	cutLeaderAnswers(s)
	s.line("crash follower:t/0")
	s.line("run until-change=isr partition=t/0 limit=%dms", 4000+r.IntN(3000))
	s.line("crash leader:t/0")
	recoverT0(r, s)
	s.line("heal")
}

// expandAtStaleHW (isr-expand=hw, KAFKA-7128): a replica x leaves the ISR; a write is
// committed without it; the leader dies before the other follower learns the HW, so the
// new leader's HW is stale; x comes back, reaches that HW without the write and joins
// the ISR (its fetch answers are lost); the new leader dies, and x is elected cleanly.
func expandAtStaleHW(r *sim.Rand, s *genScript, ctls []string) {
	x := t0Replicas[1+r.IntN(2)]
	s.line("pause %s", x)
	s.line("run until-change=isr partition=t/0 limit=%dms", 4000+r.IntN(4000))
	ackedWrite(r, s)
	cutLeaderAnswers(s)
	s.line("crash leader:t/0")
	s.line("run until-change=leader partition=t/0 limit=%dms", 4000+r.IntN(3000))
	s.line("cut leader:t/0 -> %s", x)
	s.line("resume %s", x)
	s.line("run until-change=isr partition=t/0 limit=%dms", 1000+r.IntN(4000))
	s.line("crash leader:t/0")
	recoverT0(r, s)
	s.line("heal")
}

// fastUncleanFailover (epoch-lookup=kip101, KAFKA-6361): the leader is cut off from
// everyone but the clients and appends a write nobody else gets; the controller elects
// a follower, which takes other writes at the same offsets; then it and the other
// follower die, the old leader is back, and the controller elects it uncleanly. When the
// others return, their one epoch lookup leaves their records in place: diverged logs, or
// a follower stuck on a batch that straddles its log end.
func fastUncleanFailover(r *sim.Rand, s *genScript, ctls []string) {
	s.line("partition leader:t/0 | %s", strings.Join(slices.Concat(ctls, t0Replicas), " "))
	s.line("produce producer=p1 partition=0 count=%d wait=false", 1+r.IntN(3))
	s.line("run until-change=leader partition=t/0 limit=%dms", 4000+r.IntN(3000))
	s.line("produce producer=p2 partition=0 count=%d wait=false", 1+r.IntN(3))
	s.line("run for=%dms", 500+r.IntN(3000))
	s.line("crash leader:t/0 follower:t/0")
	s.line("heal")
	recoverT0(r, s)
}

// readThenLoseLastReplica (hw-min-isr=ignore, KAFKA-15583): the leader is cut off from
// its followers (not from the controller) and appends a write; once it has shrunk the
// ISR to itself, the old rule raises the HW over the write and a consumer reads it; then
// the leader is cut off from the controller too, and once it is fenced the controller
// elects an eligible replica (KIP-966), which never had the write.
func readThenLoseLastReplica(r *sim.Rand, s *genScript, ctls []string) {
	s.line("partition leader:t/0 | %s", strings.Join(t0Replicas, " "))
	s.line("produce producer=p%d partition=0 count=%d wait=false", 1+r.IntN(2), 1+r.IntN(3))
	s.line("run until-change=isr partition=t/0 limit=%dms", 5000+r.IntN(3000))
	s.line("run for=%dms", 10+r.IntN(200))
	// A few polls: with no leader to ask, each poll waits for metadata, and an unbounded
	// consume would run for hours of simulated time.
	s.line("consume consumer=early%d partitions=(t/0) polls=3", r.IntN(1000))
	s.line("partition leader:t/0 | %s", strings.Join(slices.Concat(ctls, t0Replicas), " "))
	s.line("run until-change=leader partition=t/0 limit=%dms", 4000+r.IntN(3000))
	s.line("heal")
}

// quickBounce (broker-epoch=off, KIP-380/KIP-903): a replica restarts within the session
// timeout, so the controller sees no gap in its heartbeats.
func quickBounce(r *sim.Rand, s *genScript, ctls []string) {
	b := t0Replicas[r.IntN(3)]
	ackedWrite(r, s)
	s.line("crash %s", b)
	s.line("run for=%dms", 1+r.IntN(500))
	s.line("restart %s", b)
}
