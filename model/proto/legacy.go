package proto

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Legacy switches bring back Kafka's replication as it was before one of its fixes. Each
// is off by default (the modern behaviour) and each is a named mode with the release
// that fixed it, so a scenario can replay the historical bug and the swarm can be shown
// to find it. The first of the fixes, leader-epoch truncation (KIP-101, 0.11.0), is
// BrokerConfig.Truncation; the preset kafka-version= sets them all as a release had
// them (LegacyFixes, ApplyKafkaVersion).
//
// Sources: the commits and first releases are those of the replication fix timeline in
// apache/kafka (KIP-101 0baea2ac135, KIP-279 9679c44d2b5, KAFKA-7128 70c51633f2f,
// KIP-320 bcef30d614b/ed3bd79633a, KIP-380 2155c6d54b0, KIP-903 79b5f7f1ce2,
// KAFKA-15021 8ad0ed3e618, KAFKA-15583 edc7e10a745).
type Legacy struct {
	// EpochLookupKIP101 is epoch-lookup=kip101: the follower asks for the end offset of
	// its latest epoch once and truncates to the answer, without checking that the
	// leader's answer is for an epoch of its own lineage (KAFKA-6361, the fast double
	// failover: a silent divergence, or a follower stuck on a batch that straddles its
	// log end). Fixed by KIP-279 in 2.0.0: the leader names the epoch it answers for and
	// the follower truncates to the smaller of both ends, asking again if it does not
	// have that epoch.
	EpochLookupKIP101 bool
	// ISRExpandAtHW is isr-expand=hw: a follower joins the ISR once its log end reaches
	// the leader's HW (KAFKA-7128). After a failover the new leader's HW can lag what the
	// old leader committed, so a replica that lacks committed records joins and a later
	// clean election loses them. Fixed in 2.0.1/2.1.0 (Partition.isFollowerInSync also
	// asks for the start offset of the leader's current epoch).
	ISRExpandAtHW bool
	// NoFetchFencing is fetch-fencing=off: replica fetches carry no current leader epoch,
	// so a leader never answers FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH and serves a
	// follower that lives in another epoch (KIP-320, 2.1.0 for the broker side). Such a
	// fetch carried no last fetched epoch either: the follower looks its epoch up only in
	// the truncation phase after a leader change, not on every fetch.
	NoFetchFencing bool
	// HWIgnoresMinISR is hw-min-isr=ignore: the leader's HW advances while the ISR is
	// below min.insync.replicas, so acks=1 records a consumer reads are "committed" on
	// one replica (KAFKA-15583, fixed in 3.7.0: Partition.maybeIncrementLeaderHW).
	HWIgnoresMinISR bool
	// EpochBumpOnShrink is isr-shrink-epoch=bump: the controller bumps the leader epoch
	// whenever it removes a replica from an ISR, as the ZooKeeper controller did when a
	// broker died (ReplicaStateMachine.doRemoveReplicasFromIsr) and KRaft did on every
	// shrink before metadata version 3.6-IV0 (KAFKA-15021, fixed in 3.6.0). Every
	// follower then changes term: before KIP-101 that means truncating to its own HW.
	EpochBumpOnShrink bool
	// NoBrokerEpoch is broker-epoch=off: the controller cannot tell a restarted broker
	// from its previous incarnation (no broker epoch: KIP-380, 2.2.0, for control
	// requests; KIP-903, 3.5.0, for AlterPartition and fetch state). A broker that lost
	// its unsynced tail in a crash stays in the ISR, and requests meant for its earlier
	// life (LeaderAndIsr, a late AlterPartition naming it) are acted on.
	NoBrokerEpoch bool
	// StraddleRepair is straddle-repair=on: a follower that receives a leader batch
	// straddling its own log end cuts its log back to the batch and fetches it whole.
	// No Kafka release did this: Kafka's follower fails the append
	// (UnexpectedAppendOffsetException) and stops replicating the partition, which is how
	// KAFKA-6361's short case showed in production. mqsim's follower repaired itself
	// before issue 16, which hid that case; the repair is now this switch.
	StraddleRepair bool
	// NoTxnVerification is txn-verification=off: transactions as before KIP-890. The
	// producer adds each partition to its transaction itself (AddPartitionsToTxn) and a
	// partition leader appends a transactional batch without asking the coordinator, so a
	// produce delayed past its transaction's abort opens a transaction that no marker will
	// close (a hanging transaction: the LSO stops there, KAFKA-12671). The modern mode is
	// KIP-890 whole: the leader adds the partition on the producer's behalf (part 1 verified
	// it, 3.6.0; part 2 adds it, 4.0.0) and every transaction ends with an epoch bump, so a
	// late batch of an ended transaction is refused. mqsim does not model 3.6-3.9's part 1
	// alone.
	NoTxnVerification bool
	// NoProducerFencing is producer-fencing=off: a new instance with the same
	// transactional.id does not fence the old one (no epoch check at the coordinator, the
	// partitions or the group coordinator), so a zombie's writes and commits land, as
	// nothing stopped them before KIP-98 (0.11.0).
	NoProducerFencing bool
}

// LegacyFix describes one switchable fix: the setting that brings the old behaviour
// back, the value of each mode, and the release that shipped the fix.
type LegacyFix struct {
	Key     string // the cluster setting
	Modern  string // its default value
	Old     string // the value that brings the old behaviour back
	FixedIn string // the first Kafka release with the fix; "" when no release had the old behaviour
	Fix     string // what fixed it (KIP or JIRA)
	What    string // the old behaviour, one line
	// Field is the switch, nil for truncation (BrokerConfig.Truncation).
	Field func(*Legacy) *bool
}

// LegacyFixes lists every switchable fix: replication's oldest first, then transactions'.
var LegacyFixes = []LegacyFix{
	{"truncation", string(TruncateByEpoch), string(TruncateToHW), "0.11.0", "KIP-101",
		"a follower truncates to its own high watermark when it restarts or changes leader", nil},
	{"epoch-lookup", "kip279", "kip101", "2.0.0", "KIP-279 (KAFKA-6361)",
		"one epoch lookup, no check that the leader's answer is of the follower's lineage", func(l *Legacy) *bool { return &l.EpochLookupKIP101 }},
	{"isr-expand", "epoch-start", "hw", "2.1.0", "KAFKA-7128",
		"a follower joins the ISR at the leader's HW, even below the start of the leader's epoch", func(l *Legacy) *bool { return &l.ISRExpandAtHW }},
	{"fetch-fencing", "on", "off", "2.1.0", "KIP-320",
		"replica fetches carry no leader epoch: no FENCED_LEADER_EPOCH, no UNKNOWN_LEADER_EPOCH", func(l *Legacy) *bool { return &l.NoFetchFencing }},
	{"broker-epoch", "on", "off", "3.5.0", "KIP-380 (2.2.0), KIP-903",
		"the controller does not notice a broker restart; stale requests of an earlier incarnation count", func(l *Legacy) *bool { return &l.NoBrokerEpoch }},
	{"isr-shrink-epoch", "keep", "bump", "3.6.0", "KAFKA-15021",
		"removing a replica from the ISR bumps the leader epoch (ZooKeeper controller, KRaft before 3.6)", func(l *Legacy) *bool { return &l.EpochBumpOnShrink }},
	{"hw-min-isr", "wait", "ignore", "3.7.0", "KAFKA-15583",
		"the high watermark advances while the ISR is below min.insync.replicas", func(l *Legacy) *bool { return &l.HWIgnoresMinISR }},
	{"straddle-repair", "off", "on", "", "mqsim's own repair; Kafka's follower fails the append",
		"a follower cuts its log back to a leader batch that straddles its log end, hiding KAFKA-6361's short case", func(l *Legacy) *bool { return &l.StraddleRepair }},
	{"producer-fencing", "on", "off", "0.11.0", "KIP-98",
		"a new instance of a transactional.id does not fence the old one: a zombie's writes and commits land", func(l *Legacy) *bool { return &l.NoProducerFencing }},
	{"txn-verification", "kip890", "off", "3.6.0", "KIP-890",
		"a leader appends a transactional batch without the coordinator's word: a late produce leaves a hanging transaction", func(l *Legacy) *bool { return &l.NoTxnVerification }},
}

// KafkaVersionHelp says what kafka-version= takes.
func KafkaVersionHelp() string {
	var at []string
	for _, f := range LegacyFixes {
		if f.FixedIn != "" && !slices.Contains(at, f.FixedIn) {
			at = append(at, f.FixedIn)
		}
	}
	return "a release from 0.8 to 4.2 (the switches change at " + strings.Join(at, ", ") + ")"
}

// oldestVersion and newestVersion bound kafka-version=: 0.8 brought replication, 4.2 is
// the release mqsim follows.
var oldestVersion, newestVersion = version{0, 8, 0}, version{4, 2, 0}

// LegacyFix.Set sets the fix's switch in c from a setting's value.
func (f LegacyFix) Set(c *Config, value string) error {
	if value != f.Modern && value != f.Old {
		return fmt.Errorf("%s=%s: want %s (the default) or %s (%s)", f.Key, value, f.Modern, f.Old, f.describeOld())
	}
	if f.Field == nil {
		c.Broker.Truncation = TruncationMode(value)
		return nil
	}
	*f.Field(&c.Legacy) = value == f.Old
	return nil
}

// Value is the fix's setting as c has it.
func (f LegacyFix) Value(c Config) string {
	old := c.Broker.Truncation == TruncateToHW
	if f.Field != nil {
		old = *f.Field(&c.Legacy)
	}
	if old {
		return f.Old
	}
	return f.Modern
}

func (f LegacyFix) describeOld() string {
	if f.FixedIn == "" {
		return "in no Kafka release: " + f.Fix
	}
	return fmt.Sprintf("before %s, Kafka %s", f.Fix, f.FixedIn)
}

// Describe is the fix's line in mqsim commands.
func (f LegacyFix) Describe() string {
	return fmt.Sprintf("%s (default) or %s: %s (%s)", f.Modern, f.Old, f.What, f.describeOld())
}

// ApplyKafkaVersion sets every switch as release v had it: the old behaviour of each fix
// that v did not have yet, and eligible leader replicas as a new cluster of v has them.
// (straddle-repair was in no release: the preset turns it off.)
func ApplyKafkaVersion(c *Config, v string) error {
	ver, ok := parseVersion(v)
	if !ok || ver.less(oldestVersion) || newestVersion.less(ver) {
		return fmt.Errorf("kafka-version=%s: want %s", v, KafkaVersionHelp())
	}
	for _, f := range LegacyFixes {
		fixed, _ := parseVersion(f.FixedIn)
		value := f.Modern
		if f.FixedIn != "" && ver.less(fixed) {
			value = f.Old
		}
		if err := f.Set(c, value); err != nil {
			return err
		}
	}
	// Eligible leader replicas (KIP-966) are on by default for clusters formatted at 4.1 or
	// later; the release before had none.
	c.Broker.EligibleLeaderReplicas = !ver.less(version{4, 1, 0})
	return nil
}

// version is a release number, major.minor.patch.
type version [3]int

func parseVersion(s string) (version, bool) {
	var v version
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

func (v version) less(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// LegacyNames lists the old behaviours switched on in c, as key=value, in LegacyFixes'
// order; the truncation rule, which every cluster names anyway, is left out.
func (c Config) LegacyNames() []string {
	var on []string
	for _, f := range LegacyFixes {
		if v := f.Value(c); f.Field != nil && v == f.Old {
			on = append(on, f.Key+"="+v)
		}
	}
	return on
}
