package runner

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"mqsim/checker"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/sim"
)

// Settings are what a verdict judges by beyond what the run itself says: the arguments of
// the scenario's check command. The zero value is a check command without arguments.
type Settings struct {
	// Promise is what every consumer group must get ("" : the system's default).
	Promise string
	// Order is the order a queue broker promises ("" : none); for a log cluster, "key"
	// also checks each key's order across the topic's partitions (checker.CheckKeyOrder).
	Order string
	// UnseenWithin, LiveWithin and AckWithin are the recovery deadlines, counted from
	// the last fault (0: not judged).
	UnseenWithin, LiveWithin, AckWithin time.Duration
	// Linearizable also runs the linearizability checker.
	Linearizable bool
}

// settingsOf reads a check command's arguments.
func settingsOf(a *Args) (Settings, error) {
	var s Settings
	var err error
	if s.Linearizable, err = a.Bool("linearizable", false); err != nil {
		return s, err
	}
	for _, d := range []struct {
		key string
		to  *time.Duration
	}{{"unseen-within", &s.UnseenWithin}, {"live-within", &s.LiveWithin}, {"ack-within", &s.AckWithin}} {
		if *d.to, err = a.Duration(d.key, 0); err != nil {
			return s, err
		}
	}
	if s.Promise, err = a.String("promise", ""); err != nil {
		return s, err
	}
	if s.Order, err = a.String("order", ""); err != nil {
		return s, err
	}
	return s, nil
}

// Verdict is the one judgement of a run: what the checkers found in its client history
// and what its invariant checks found, with the settings it was judged by. Every view of
// a run (mqsim run, the check command, the TUI's Checks pane, the swarm and its failure
// files, mqsim export) shows this verdict, or a filter of it, and never judges again.
type Verdict struct {
	Kind     Kind
	Settings Settings
	// Report holds every finding; each violation carries the kernel step where it began
	// (Violation.Step), the one step numbering of mqsim.
	Report checker.Report
	// unpromised are the anomalies the configuration does not promise to prevent.
	unpromised map[checker.Anomaly]bool
}

// Promised reports whether the run's configuration promises to prevent anomaly a: a
// violation of a promise is a failure of the system; one that is not promised is what the
// settings allow (acks=1 may lose acknowledged writes, and the scenario shows it).
func (v Verdict) Promised(a checker.Anomaly) bool { return !v.unpromised[a] }

// Classify splits the anomalies found into those the configuration promised to prevent
// (failures) and those it allows, each anomaly once, in the report's order. What the
// queue checker itself allowed (Report.Allowed) counts as allowed.
func (v Verdict) Classify() (failures, allowed []checker.Anomaly) {
	add := func(s []checker.Anomaly, a checker.Anomaly) []checker.Anomaly {
		if slices.Contains(s, a) {
			return s
		}
		return append(s, a)
	}
	for _, x := range v.Report.Violations {
		if v.Promised(x.Anomaly) {
			failures = add(failures, x.Anomaly)
		} else {
			allowed = add(allowed, x.Anomaly)
		}
	}
	if v.Kind == QueueBroker {
		// A queue broker's checker allows redeliveries and reorders under at-least-once.
		for _, x := range v.Report.Allowed {
			allowed = add(allowed, x.Anomaly)
		}
	}
	return failures, allowed
}

// Judge is the one function that judges a run: the system checks its own history with
// the options its kind, its configuration, its delivery patterns and its last fault give,
// under the check command's settings (System.judge); the invariant checks' findings join
// the history's.
func (r *Runner) Judge(s Settings) (Verdict, error) {
	sys := r.System()
	if sys == nil {
		return Verdict{}, fmt.Errorf("nothing to judge: start a cluster or a queue broker first")
	}
	rep, unpromised, err := sys.judge(s, int64(LastFault(sys.World())))
	if err != nil {
		return Verdict{}, err
	}
	if unpromised == nil {
		unpromised = map[checker.Anomaly]bool{}
	}
	v := Verdict{Kind: sys.Kind(), Settings: s, unpromised: unpromised}
	reports := []checker.Report{rep, sys.Invariants()}
	for _, judge := range r.judges {
		reports = append(reports, judge())
	}
	v.Report = checker.Merge(reports...)
	if sys.Kind() == LogCluster {
		v.Report.Notes = append(v.Report.Notes, r.geo.notes(r.cluster.History.History())...)
	}
	r.placeSteps(&v.Report)
	return v, nil
}

// judge checks the log cluster's history: the delivery patterns its consumers use allow
// what they cause, and its configuration says which anomalies it promises to prevent.
func (sys logSystem) judge(s Settings, healed int64) (checker.Report, map[checker.Anomaly]bool, error) {
	c := sys.c
	if s.Order != "" && s.Order != string(checker.OrderPerKey) {
		return checker.Report{}, nil, fmt.Errorf("order=%s: a log keeps the order of each partition; order=key checks each key's order across a topic's partitions", s.Order)
	}
	// A compacted log removes a key's older values: the checker allows those lost-writes.
	opts := checker.Options{Log: checker.LogOptions{Allow: patternAllowances(c), Compacted: c.Cfg.Broker.Log.Compaction.Policy.Compacts()}}
	for _, f := range c.PipelineFlows() {
		opts.Pipelines = append(opts.Pipelines, checker.Pipeline{Input: f.From, Output: f.To})
	}
	var err error
	if s.Promise != "" {
		if opts.Promise, err = checker.ParsePromise(s.Promise); err != nil {
			return checker.Report{}, nil, err
		}
	}
	if s.UnseenWithin > 0 {
		opts.Log.Unseen = checker.UnseenRule{After: healed, Within: int64(s.UnseenWithin)}
	}
	// Share groups are judged by the run's share settings, and must settle each record
	// by the deadline that reading it has (unseen-within).
	opts.Share = &checker.ShareOptions{DeliveryCountLimit: c.Cfg.Share.DeliveryCountLimit,
		FromEarliest: c.Cfg.Share.AutoOffsetReset == "earliest", Unseen: opts.Log.Unseen}
	if s.Linearizable {
		opts.Linearizability = &checker.LinearizabilityOptions{Budget: linearizableBudget}
	}
	if s.LiveWithin > 0 || s.AckWithin > 0 {
		opts.Liveness = &checker.LivenessOptions{HealedAt: healed, Within: int64(s.LiveWithin), AckWithin: int64(s.AckWithin)}
		for _, u := range c.Unrecoverable() {
			opts.Liveness.Unrecoverable = append(opts.Liveness.Unrecoverable,
				checker.Unrecoverable{TopicPartition: history.TopicPartition{Topic: u.TP.Topic, Partition: u.TP.Partition}, Why: u.Why})
		}
	}
	rep, err := checker.Check(sys.History(), opts)
	if err != nil {
		return checker.Report{}, nil, err
	}
	if s.Order == string(checker.OrderPerKey) {
		rep = checker.Merge(rep, checker.CheckKeyOrder(sys.History()))
	}
	unpromised := Unpromised(c.Cfg)
	if len(c.AllReplicasDown()) > 0 && c.Cfg.Broker.Log.Flush != wal.FlushEveryBatch {
		// Every replica lost its page cache at once (the verdict's note says when): no
		// configuration of replication prevents that loss.
		unpromised[cluster.PhantomRead] = true
	}
	return rep, unpromised, nil
}

// judge checks the queue broker's history: at least once unless the check says otherwise,
// in the order the check asks for (none by default).
func (sys queueSystem) judge(s Settings, healed int64) (checker.Report, map[checker.Anomaly]bool, error) {
	if s.Linearizable || s.LiveWithin > 0 || s.AckWithin > 0 {
		return checker.Report{}, nil, fmt.Errorf("linearizable=, live-within= and ack-within= judge a Kafka cluster's partitions; in queue mode use unseen-within=")
	}
	opts := checker.QueueOptions{}
	if s.UnseenWithin > 0 {
		opts.Unseen = checker.UnseenRule{After: healed, Within: int64(s.UnseenWithin)}
	}
	var err error
	if opts.Order, err = checker.ParseOrderRule(cmp(s.Order, "none")); err != nil {
		return checker.Report{}, nil, err
	}
	if opts.Promise, err = checker.ParseQueuePromise(cmp(s.Promise, "at-least-once")); err != nil {
		return checker.Report{}, nil, err
	}
	rep, err := checker.CheckQueue(sys.History(), opts)
	return rep, nil, err
}

// cmp is s, or def when s is empty.
func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// placeSteps gives every finding that knows only its time the first kernel step at or
// after that time, so that every view names it by the same step.
func (r *Runner) placeSteps(rep *checker.Report) {
	for _, vs := range [][]checker.Violation{rep.Violations, rep.Allowed} {
		for i := range vs {
			if vs[i].Step == 0 {
				vs[i].Step = r.clock.stepAt(sim.Time(vs[i].Time))
			}
		}
	}
}

// stepClock remembers the first kernel step of every virtual time the world reached, so
// that a finding that knows only its time (a client operation's) can be named by its step
// whether or not the trace was kept. It runs after every kernel step of every run (a
// swarm seed reaches tens of thousands of times), so it keeps its marks in chunks that
// are filled and never copied: a growing slice would copy and reallocate them all.
type stepClock struct {
	chunks [][]clockMark // each full but the last
	last   sim.Time      // the time of the newest mark
}

// clockMark is the first step at a time.
type clockMark struct {
	t    sim.Time
	step uint64
}

// Chunk sizes: small for the first, so that a short run stays small.
const firstClockChunk, clockChunk = 256, 4096

func (c *stepClock) AfterStep(w *sim.World) { c.mark(w.Now(), w.Steps()) }

// mark notes that step ran at time now.
func (c *stepClock) mark(now sim.Time, step uint64) {
	n := len(c.chunks)
	if n > 0 && c.last == now {
		return
	}
	if n == 0 || len(c.chunks[n-1]) == cap(c.chunks[n-1]) {
		size := clockChunk
		if n == 0 {
			size = firstClockChunk
		}
		c.chunks = append(c.chunks, make([]clockMark, 0, size))
		n++
	}
	c.chunks[n-1] = append(c.chunks[n-1], clockMark{t: now, step: step})
	c.last = now
}

// stepAt is the first step at or after t; 0 when the run never reached t.
func (c *stepClock) stepAt(t sim.Time) uint64 {
	k := sort.Search(len(c.chunks), func(k int) bool {
		ch := c.chunks[k]
		return ch[len(ch)-1].t >= t
	})
	if k == len(c.chunks) {
		return 0
	}
	ch := c.chunks[k]
	return ch[sort.Search(len(ch), func(i int) bool { return ch[i].t >= t })].step
}

// Verdict is the run's verdict: the last check command's, or, when the script has none,
// the verdict of a check without arguments at the end of what ran. ok is false when the
// run has no system to judge.
func (r *Runner) Verdict() (v Verdict, ok bool) {
	if len(r.verdicts) > 0 {
		return r.verdicts[len(r.verdicts)-1], true
	}
	v, err := r.Judge(Settings{})
	return v, err == nil
}

// CheckSettings are the settings of the script's last check command (the zero value when
// it has none): what a verdict of the run judged at a later moment goes by.
func (r *Runner) CheckSettings() Settings {
	if len(r.verdicts) == 0 {
		return Settings{}
	}
	return r.verdicts[len(r.verdicts)-1].Settings
}

// Unpromised is what a log cluster's configuration does not promise to prevent. The safe
// configuration allows nothing; a planted bug allows nothing either (finding it is the
// point), and neither does a legacy switch (truncation=hw and the others of
// proto.LegacyFixes): Kafka promised what it promises today, and a loss its old
// behaviour causes is the bug the fix removed.
func Unpromised(cfg proto.Config) map[checker.Anomaly]bool {
	allowed := map[checker.Anomaly]bool{}
	if len(cfg.Bugs.Names()) > 0 {
		return allowed
	}
	// Acknowledged writes may be lost, and offsets then reused, and a reader may see the
	// log shrink under it.
	// (Without an fsync per batch, a crash of several brokers at once loses what only
	// their page caches held.)
	mayLose := cfg.Producer.Acks != proto.AcksAll || cfg.Topic.MinInsyncReplicas < 2 ||
		cfg.Topic.UncleanLeaderElection || cfg.Broker.Log.Flush != wal.FlushEveryBatch
	if mayLose {
		for _, a := range []checker.Anomaly{checker.LostWrite, checker.Unseen, checker.InconsistentOffsets,
			checker.NonmonotonicSend, checker.NonmonotonicPoll, checker.PollSkip} {
			allowed[a] = true
		}
		// What a group was promised goes with the records: a lost record is never
		// delivered; a lost producer state lets a retry in twice; and the group's own log
		// (__consumer_offsets, under the same settings) can lose a commit or a generation,
		// so committed offsets go back and a coordinator that reloads an older generation
		// can hand out partitions that members of the lost one still hold.
		for _, a := range []checker.Anomaly{checker.Undelivered, checker.Duplicate, checker.NonmonotonicCommit,
			cluster.DoubleOwnership} {
			allowed[a] = true
		}
		// A share group loses with the records (never delivered, never settled), and the
		// share coordinators' state topic lives under the same settings: a persisted
		// accept can be lost with it, and the record delivered again. (A lost state only
		// lowers delivery counts: above the limit is never allowed.)
		allowed[checker.ShareLost] = true
		allowed[checker.ShareRedeliveredAfterAccept] = true
	}
	// A record below the HW is on every ISR member: only an unclean election, or an ISR
	// allowed down to one replica, takes it back. (So does every replica losing its page
	// cache at once: Judge allows that per run, as it happens.)
	if cfg.Topic.UncleanLeaderElection || cfg.Topic.MinInsyncReplicas < 2 {
		allowed[cluster.PhantomRead] = true
	}
	// Without idempotence retries may duplicate and reorder.
	if !cfg.Producer.Idempotence || cfg.Producer.Acks != proto.AcksAll {
		allowed[checker.Duplicate] = true
		allowed[checker.NonmonotonicSend] = true
	}
	return allowed
}
