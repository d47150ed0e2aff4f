package runner

import (
	"strings"
	"testing"
)

// reset-offsets computes each target as Kafka's tool does: shift-by clamped to the log
// with the tool's warning, to-earliest and to-latest from the leader, and no shift
// without a committed offset.
func TestResetOffsetsTargets(t *testing.T) {
	setup := []string{
		"cluster brokers=3 partitions=1 rf=3 min-isr=2 auto-offset-reset=earliest commit=after",
		"produce values=(a, b, c, d)",
		"join consumer=c1 group=g",
		"consume consumer=c1",
		"leave consumer=c1",
		"run for=1s",
	}
	_, outs := execAll(t, append(setup,
		"reset-offsets group=g shift-by=-2",
		"reset-offsets group=g shift-by=-9",
		"reset-offsets group=g to-latest",
		"reset-offsets group=g shift-by=3",
		"reset-offsets group=g to-datetime=1h",
	)...)
	got := strings.Join(outs[len(setup):], "\n--\n")
	want := `GROUP        TOPIC    PARTITION  NEW-OFFSET
g            t        0          2
--
New offset (-7) is lower than earliest offset for topic partition t/0. Value will be set to 0
GROUP        TOPIC    PARTITION  NEW-OFFSET
g            t        0          0
--
GROUP        TOPIC    PARTITION  NEW-OFFSET
g            t        0          4
--
New offset (7) is higher than latest offset for topic partition t/0. Value will be set to 4
GROUP        TOPIC    PARTITION  NEW-OFFSET
g            t        0          4
--
Warn: Partition 0 from topic t is empty. Falling back to latest known offset.
GROUP        TOPIC    PARTITION  NEW-OFFSET
g            t        0          4`
	if got != want {
		t.Errorf("reset-offsets outputs:\n%s\nwant:\n%s", got, want)
	}
	err := execErr(t, []string{"cluster brokers=3 partitions=1 rf=3 min-isr=2", "produce value=a"}, "reset-offsets group=g shift-by=1 topic=t")
	if err == nil || !strings.Contains(err.Error(), "Cannot shift offset for partition t/0 since there is no current committed offset") {
		t.Errorf("shift-by without a committed offset: %v", err)
	}
	err = execErr(t, setup, "reset-offsets group=g to-earliest to-latest")
	if err == nil || !strings.Contains(err.Error(), "give exactly one of") {
		t.Errorf("two targets: %v", err)
	}
}

// A seek needs exactly one target, and a consumer that holds the partition.
func TestSeekArguments(t *testing.T) {
	setup := []string{"cluster brokers=3 partitions=1 rf=3 min-isr=2", "produce value=a", "consume consumer=c1 partitions=(t/0)"}
	for cmd, want := range map[string]string{
		"seek consumer=c1 t/0":                    "give exactly one of",
		"seek consumer=c1 t/0 offset=1 to=latest": "give exactly one of",
		"seek consumer=c1 t/0 to=middle":          "to=middle: want earliest or latest",
		"seek consumer=nobody t/0 offset=0":       `no node "nobody"`,
		"seek consumer=c1 offset=0":               "usage: seek",
	} {
		if err := execErr(t, setup, cmd); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", cmd, err, want)
		}
	}
	_, outs := execAll(t, append(setup, "seek consumer=c1 t/3 offset=0")...)
	if got := outs[len(outs)-1]; got != "c1 refused the seek: no current assignment for partition t/3" {
		t.Errorf("seek of an unassigned partition: %q", got)
	}
}
