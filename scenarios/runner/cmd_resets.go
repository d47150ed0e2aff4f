package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"mqsim/model/client"
	"mqsim/model/cluster"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Offset reset commands: a consumer's seek (KafkaConsumer.seek, seekToBeginning,
// seekToEnd, offsetsForTimes) and the group tool's reset-offsets
// (kafka-consumer-groups.sh --reset-offsets, ConsumerGroupCommand). Both are declared
// moves: the history records them as seek ops, and the checkers take what is read
// again after a move back as a declared re-read (see notes/replay-and-offset-resets.md).

func init() {
	register(&Command{
		Name:  "seek",
		Usage: "seek consumer=C T/P offset=N | to=earliest|latest | to-time=D",
		Help: "move a consumer's position in an assigned partition: to an offset at once, or to the log start, the end, or the first " +
			"record at or after virtual time D, looked up with ListOffsets at its next poll (no record that recent: the end)",
		Keys: []string{"consumer", "offset", "to", "to-time"},
		Run:  cmdSeek,
	})
	register(&Command{
		Name:  "reset-offsets",
		Usage: "reset-offsets group=G to-earliest | to-latest | to-datetime=D | shift-by=N [topic=T]",
		Help: "the group tool: commit new offsets for every partition of the group's topics (or of topic T), only if the group has no " +
			"member; the log start, the end, the first record at or after virtual time D (none: the end), or the committed offset moved by N",
		Keys: []string{"group", "to-datetime", "shift-by", "topic"},
		Run:  cmdResetOffsets,
	})
}

// seekArgs reads the target of a seek: exactly one of offset=, to=, to-time=.
func seekArgs(a *Args, tp proto.TP) (client.Seek, error) {
	s := client.Seek{TP: tp}
	n := 0
	for _, k := range []string{"offset", "to", "to-time"} {
		if a.Has(k) {
			n++
		}
	}
	if n != 1 {
		return s, fmt.Errorf("seek: give exactly one of offset=N, to=earliest|latest, to-time=D")
	}
	switch {
	case a.Has("offset"):
		off, err := a.Int("offset", 0, 0, 1<<40)
		s.To, s.Offset = client.SeekOffset, int64(off)
		return s, err
	case a.Has("to-time"):
		d, err := a.Duration("to-time", 0)
		s.To, s.Time = client.SeekTime, sim.Time(d)
		return s, err
	}
	switch to, _ := a.String("to", ""); to {
	case "earliest":
		s.To = client.SeekEarliest
	case "latest":
		s.To = client.SeekLatest
	default:
		return s, fmt.Errorf("to=%s: want earliest or latest", to)
	}
	return s, nil
}

func cmdSeek(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("consumer")
	if err != nil {
		return "", err
	}
	words := a.Words()
	if len(words) != 1 {
		return "", fmt.Errorf("usage: %s", a.cmd.Usage)
	}
	tp, err := proto.ParseTP(words[0])
	if err != nil {
		return "", err
	}
	s, err := seekArgs(a, tp)
	if err != nil {
		return "", err
	}
	id, err := r.node(name)
	if err != nil {
		return "", err
	}
	cs, ok := c.W.Node(id).(*client.Consumer)
	if !ok {
		return "", fmt.Errorf("%s is not a running consumer (%s)", name, c.W.Status(id))
	}
	if m, member := cs.Member(); member && m.State != "left" && !groupSettled(c, m.Group) {
		// A member still fetching its committed offsets would overwrite the seek with them.
		return "", fmt.Errorf("group %s is not settled: seek once it is (run, or consume first)", m.Group)
	}
	mark := c.W.Trace().Len()
	c.W.Inject(id, s, 0)
	var answer sim.Payload
	if _, err := r.wait(name+"'s seek", func(w *sim.World) bool {
		answer = seekAnswer(c, mark, name)
		return answer != nil || w.Status(id) != sim.Up
	}, 10_000_000, c.W.Now().Add(pollBound(cs.Config()))); err != nil {
		return "", err
	}
	switch d := answer.(type) {
	case client.SeekRefused:
		return fmt.Sprintf("%s refused the seek: %s", name, d.Why), nil
	case client.Sought:
		if d.Seek.To == client.SeekOffset {
			return fmt.Sprintf("%s: %s", name, d.Seek), nil
		}
		return fmt.Sprintf("%s: %s, looked up at its next poll", name, d.Seek), nil
	}
	return fmt.Sprintf("%s went down before it took the seek", name), nil
}

// seekAnswer is the consumer's Sought or SeekRefused event since mark, nil if none yet.
func seekAnswer(c *cluster.Cluster, mark int, name string) sim.Payload {
	for _, e := range c.W.Trace().Since(mark) {
		if e.Node != name {
			continue
		}
		switch e.Data.(type) {
		case client.Sought, client.SeekRefused:
			return e.Data
		}
	}
	return nil
}

// resetTarget is how reset-offsets picks each partition's new offset.
type resetTarget struct {
	spec    proto.ListOffsets // Latest / ByTime / earliest, for to-*
	shift   int64
	shifted bool
}

func resetArgs(a *Args) (resetTarget, error) {
	var t resetTarget
	var given []string
	for _, w := range a.Words() { // to-earliest and to-latest are bare words, as the tool's flags
		if w != "to-earliest" && w != "to-latest" {
			return t, fmt.Errorf("reset-offsets: %q: want to-earliest, to-latest, to-datetime=D or shift-by=N", w)
		}
		given = append(given, w)
	}
	for _, k := range []string{"to-datetime", "shift-by"} {
		if a.Has(k) {
			given = append(given, k)
		}
	}
	if len(given) != 1 {
		return t, fmt.Errorf("reset-offsets: give exactly one of to-earliest, to-latest, to-datetime=D, shift-by=N")
	}
	switch given[0] {
	case "to-latest":
		t.spec.Latest = true
	case "to-datetime":
		d, err := a.Duration("to-datetime", 0)
		if err != nil {
			return t, err
		}
		t.spec.ByTime, t.spec.Time = true, sim.Time(d)
	case "shift-by":
		n, err := a.Int("shift-by", 0, -1<<40, 1<<40)
		if err != nil {
			return t, err
		}
		t.shift, t.shifted = int64(n), true
	}
	return t, nil
}

// cmdResetOffsets is ConsumerGroupCommand.resetOffsets with --execute: it refuses unless
// the group is Empty or Dead, finds each partition's new offset from the partition
// leader's ListOffsets answer, and commits them as an admin does (OffsetCommit outside the
// group protocol: generation -1, no member id). mqsim's simplifications: the tool asks the
// leader directly rather than over the simulated network, times are virtual (to-datetime=D
// is D after the run began), and there is no dry run.
func cmdResetOffsets(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	group, err := a.Required("group")
	if err != nil {
		return "", err
	}
	target, err := resetArgs(a)
	if err != nil {
		return "", err
	}
	topic, _ := a.String("topic", "")
	g := c.Group(group)
	switch g.State {
	case "Empty", "Dead", "unknown to the coordinator", "":
		// No member: Kafka's describe says Empty, or Dead for a group it does not know.
	default:
		sim.RecordWorld(c.W, client.ResetRefused{Group: group, State: g.State})
		return fmt.Sprintf("Error: Assignments can only be reset if the group '%s' is inactive, but the current state is %s.", group, g.State), nil
	}
	tps := resetPartitions(c, g, topic)
	if len(tps) == 0 {
		return "", fmt.Errorf("group %s has no committed offsets and no topic= was given: nothing to reset", group)
	}
	var lines []string
	var offsets []proto.PartitionOffset
	var was []int64
	for _, tp := range tps {
		committed := committedOf(g, tp)
		off, warn, err := resetOffset(c, tp, target, committed)
		if err != nil {
			return "", err
		}
		if warn != "" {
			lines = append(lines, warn)
		}
		offsets = append(offsets, proto.PartitionOffset{TP: tp, Offset: off, LeaderEpoch: -1})
		was = append(was, committed)
	}
	if err := commitAsAdmin(r, c, g, offsets); err != nil {
		return "", err
	}
	if env := c.W; env.Trace().Mode != sim.TraceOff {
		sim.RecordWorld(env, client.OffsetsReset{Group: group, Offsets: slices.Clone(offsets), Was: slices.Clone(was)})
	}
	hist := make([]history.PartitionOffset, len(offsets))
	for i, o := range offsets {
		hist[i] = history.PartitionOffset{TopicPartition: history.TopicPartition{Topic: o.TP.Topic, Partition: o.TP.Partition}, Offset: o.Offset}
	}
	now := int64(c.W.Now())
	h := c.History.InvokeSeek(now, c.NewProcess(), group, hist, true)
	c.History.Ok(now, h, history.Result{})
	lines = append(lines, fmt.Sprintf("%-12s %-8s %-10s %s", "GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"))
	for _, o := range offsets {
		lines = append(lines, fmt.Sprintf("%-12s %-8s %-10d %d", group, o.TP.Topic, o.TP.Partition, o.Offset))
	}
	return strings.Join(lines, "\n"), nil
}

// resetPartitions are the partitions to reset: every partition of topic, or of the topics
// the group has committed offsets for (Kafka's --all-topics).
func resetPartitions(c *cluster.Cluster, g cluster.GroupInfo, topic string) []proto.TP {
	var topics []string
	if topic != "" {
		topics = []string{topic}
	}
	for _, o := range g.Offsets {
		if topic == "" && o.Committed >= 0 && !slices.Contains(topics, o.TP.Topic) {
			topics = append(topics, o.TP.Topic)
		}
	}
	var tps []proto.TP
	for _, p := range c.Partitions() {
		if slices.Contains(topics, p.TP.Topic) {
			tps = append(tps, p.TP)
		}
	}
	slices.SortFunc(tps, proto.CompareTP)
	return tps
}

func committedOf(g cluster.GroupInfo, tp proto.TP) int64 {
	for _, o := range g.Offsets {
		if o.TP == tp {
			return o.Committed
		}
	}
	return -1
}

// resetOffset is one partition's new offset, as ConsumerGroupCommand.prepareOffsetsToReset
// computes it, with the warning the tool prints, if any.
func resetOffset(c *cluster.Cluster, tp proto.TP, t resetTarget, committed int64) (int64, string, error) {
	list := func(m proto.ListOffsets) (int64, error) {
		l, ok := c.Leader(tp)
		if !ok {
			return 0, fmt.Errorf("%s has no leader to ask for offsets", tp)
		}
		m.TP = tp
		resp := c.Broker(l).ListOffsetsAnswer(m)
		if resp.Error != proto.None {
			return 0, fmt.Errorf("%s: list offsets: %s", tp, resp.Error)
		}
		return resp.Offset, nil
	}
	switch {
	case t.shifted:
		if committed < 0 {
			//lint:ignore ST1005 the tool's own sentence, as Kafka prints it
			return 0, "", fmt.Errorf("Cannot shift offset for partition %s since there is no current committed offset", tp)
		}
		start, err := list(proto.ListOffsets{})
		if err != nil {
			return 0, "", err
		}
		end, err := list(proto.ListOffsets{Latest: true})
		if err != nil {
			return 0, "", err
		}
		// checkOffsetsRange: clamped to the log, with the tool's warning.
		want := committed + t.shift
		switch {
		case want > end:
			return end, fmt.Sprintf("New offset (%d) is higher than latest offset for topic partition %s. Value will be set to %d", want, tp, end), nil
		case want < start:
			return start, fmt.Sprintf("New offset (%d) is lower than earliest offset for topic partition %s. Value will be set to %d", want, tp, start), nil
		}
		return want, "", nil
	case t.spec.ByTime:
		off, err := list(t.spec)
		if err != nil || off != proto.UnknownOffset {
			return off, "", err
		}
		end, err := list(proto.ListOffsets{Latest: true})
		return end, fmt.Sprintf("Warn: Partition %d from topic %s is empty. Falling back to latest known offset.", tp.Partition, tp.Topic), err
	}
	off, err := list(t.spec)
	return off, "", err
}

// commitAsAdmin sends the group's coordinator an OffsetCommit from outside the group
// protocol and runs until the coordinator holds the new offsets.
func commitAsAdmin(r *Runner, c *cluster.Cluster, g cluster.GroupInfo, offsets []proto.PartitionOffset) error {
	if g.Coordinator == "" {
		return fmt.Errorf("group %s has no loaded coordinator to commit to", g.Name)
	}
	coord, ok := c.W.Lookup(g.Coordinator)
	if !ok {
		return fmt.Errorf("no coordinator node %q", g.Coordinator)
	}
	c.W.Inject(coord, proto.OffsetCommit{Group: g.Name, Generation: proto.NoGeneration, Offsets: slices.Clone(offsets)}, 0)
	done := func(*sim.World) bool {
		now := c.Group(g.Name)
		for _, o := range offsets {
			if committedOf(now, o.TP) != o.Offset {
				return false
			}
		}
		return true
	}
	ok, err := r.wait("the group tool's commit", done, 10_000_000, c.W.Now().Add(30*time.Second))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("the coordinator of group %s did not take the new offsets within 30s", g.Name)
	}
	return nil
}
