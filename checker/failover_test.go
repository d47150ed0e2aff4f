package checker

import (
	"slices"
	"testing"

	"mqsim/model/history"
)

func failoverHistory() history.History {
	var h history.History
	send := func(topic, v string) {
		h = append(h, history.Op{Type: history.Ok, F: history.Send, Send: &history.SendValue{TopicPartition: history.TopicPartition{Topic: topic}, Value: v}})
	}
	poll := func(group, topic string, vs ...string) {
		pr := history.PartitionRecords{TopicPartition: history.TopicPartition{Topic: topic}}
		for i, v := range vs {
			pr.Records = append(pr.Records, history.Record{Offset: int64(i), Value: v})
		}
		h = append(h, history.Op{Type: history.Ok, F: history.Poll, Poll: &history.PollValue{Group: group, Reads: []history.PartitionRecords{pr}}})
	}
	for _, v := range []string{"a", "b", "c", "d", "e"} {
		send("t", v)
	}
	for _, v := range []string{"a", "b", "c", "d"} {
		send("east.t", v) // e is never replicated
	}
	poll("g", "t", "a", "b")
	poll("mirror", "t", "a", "b", "c", "d", "e") // another group's reads do not count
	poll("g", "east.t", "b", "c")                // b again; d replicated, never read
	return h
}

func TestFailoverSaysWhatWasLostAndReadTwice(t *testing.T) {
	rep := Failover(failoverHistory(), "g", "t", "east.t")
	if rep.Acked != 5 || !slices.Equal(rep.NotReplicated, []string{"e"}) || !slices.Equal(rep.Lost, []string{"e"}) || !slices.Equal(rep.NotRead, []string{"d"}) ||
		!slices.Equal(rep.ReadTwice, []string{"b"}) {
		t.Fatalf("got %+v", rep)
	}
}

// A planted bug: a checker that counted every group's reads would find nothing lost.
func TestFailoverCountsOnlyTheGroupsReads(t *testing.T) {
	rep := Failover(failoverHistory(), "mirror", "t", "east.t")
	if len(rep.NotRead) != 0 || len(rep.Lost) != 0 || !slices.Equal(rep.NotReplicated, []string{"e"}) {
		t.Fatalf("the mirror's own group read everything: got %+v", rep)
	}
	if rep := Failover(failoverHistory(), "g", "t", "west.t"); !slices.Equal(rep.Lost, []string{"c", "d", "e"}) {
		t.Fatalf("with the wrong remote topic nothing counts as replicated, got %+v", rep)
	}
}

func TestFailoverNoteCountsEachOutcome(t *testing.T) {
	n := Failover(failoverHistory(), "g", "t", "east.t").Note("g", "east.t")
	want := "group g failed over to the remote topic east.t: of 5 records acknowledged on the source, 1 never replicated " +
		"(1 of them lost to the group, never read), 1 replicated but never read, 1 read twice"
	if n.Checker != FailoverChecker || n.Text != want {
		t.Fatalf("got %+v\nwant %s", n, want)
	}
}
