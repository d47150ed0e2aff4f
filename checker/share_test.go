package checker

import (
	"strings"
	"testing"

	"mqsim/model/history"
)

// Share-group histories: sends, a share consumer's subscription, its share polls (each
// record with its delivery count) and its acks, 10ns apart as the builder's ops are.

func (b *builder) subscribeShare(proc int, group string, topics ...string) {
	h := b.r.InvokeSubscribe(b.tick(), proc, group, topics)
	b.r.Ok(b.tick(), h, history.Result{})
}

func (b *builder) sharePoll(proc int, group string, typ history.Type, reads ...history.PartitionRecords) {
	h := b.r.InvokeSharePoll(b.tick(), proc, group)
	b.complete(h, typ, history.Result{Reads: reads})
}

func (b *builder) ack(proc int, group string, tp history.TopicPartition, typ history.Type, acks ...history.RecordAck) {
	h := b.r.InvokeAck(b.tick(), proc, group, tp, acks)
	b.complete(h, typ, history.Result{})
}

// delivered is a record a share consumer acquired, with its delivery count.
func delivered(offset int64, value string, count int) history.Record {
	return history.Record{Offset: offset, Value: value, DeliveryCount: count}
}

func accept(offset int64) history.RecordAck {
	return history.RecordAck{Offset: offset, Type: history.AckAccept}
}
func release(offset int64) history.RecordAck {
	return history.RecordAck{Offset: offset, Type: history.AckRelease}
}
func reject(offset int64) history.RecordAck {
	return history.RecordAck{Offset: offset, Type: history.AckReject}
}

func checkShare(t *testing.T, b *builder, opts ShareOptions) Report {
	t.Helper()
	rep, err := CheckShare(b.history(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

var limit3 = ShareOptions{DeliveryCountLimit: 3}

// Two members share t-0: a is accepted, b released once, then rejected; c is delivered
// at the limit and its consumer says nothing more (the broker archives it). Nothing is
// wrong, and the group's delivery counts say how often each was delivered.
func TestShareCleanHistory(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.ok(1, t0, "c", 2)
	b.subscribeShare(2, "sg", "t")
	b.subscribeShare(3, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1), delivered(2, "c", 1)))
	b.sharePoll(3, "sg", history.Ok, rd(t0, delivered(1, "b", 1)))
	b.ack(2, "sg", t0, history.Ok, accept(0), release(2))
	b.ack(3, "sg", t0, history.Ok, release(1))
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(1, "b", 2), delivered(2, "c", 2)))
	b.ack(2, "sg", t0, history.Ok, reject(1), release(2))
	b.sharePoll(3, "sg", history.Ok, rd(t0, delivered(2, "c", 3)))
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, nil)
	if len(rep.Delivery) != 1 || rep.Delivery[0] != (GroupDelivery{Group: "sg", Values: 3, Once: 1, More: 2, Observed: ObservedAtLeastOnce}) {
		t.Fatalf("delivery %+v", rep.Delivery)
	}
	if len(rep.Notes) != 0 {
		t.Fatalf("notes %v", rep.Notes)
	}
}

// b is never delivered, c only released: neither is settled for the group.
func TestShareLost(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.ok(1, t0, "c", 2)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1), delivered(2, "c", 1)))
	b.ack(2, "sg", t0, history.Ok, accept(0), release(2))
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{1, 2}, values: []string{"b", "c"}}})
	if got, want := rep.Violations[0].Text, `2 acknowledged records never settled for share group sg (accepted or rejected by an ok ack, or delivered at the delivery count limit 3) by the end of the history: "b", "c"`; got != want {
		t.Fatalf("text %q\nwant %q", got, want)
	}
	if got := rep.Violations[0].Ops; len(got) != 2 || got[0].F != history.Send || got[1].F != history.Send {
		t.Fatalf("ops %+v; want the two sends", got)
	}
}

// A failed ack settles nothing; a topic the group never subscribed to is not its to settle.
func TestShareLostIgnoresFailedAcksAndOtherTopics(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, u0, "x", 0)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1)))
	b.ack(2, "sg", t0, history.Fail, accept(0))
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{0}, values: []string{"a"}}})
}

// What the history cannot rule out is noted, not blamed: an accept of unknown outcome
// may have taken effect; polls of unknown outcome may have acquired a record unseen
// until the broker archived it at the limit.
func TestShareLostSpareWhatMayHaveSettled(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1), delivered(1, "b", 1)))
	b.ack(2, "sg", t0, history.Info, accept(0))
	b.ack(2, "sg", t0, history.Ok, release(1))
	b.sharePoll(2, "sg", history.Info)
	rep := checkShare(t, b, limit3)
	// b: last seen count 1, one poll of unknown outcome since: 2 < 3, still lost.
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{1}}})
	if !noteContaining(rep, "1 acknowledged record not settled, but acknowledged (accept or reject) by an ack of unknown outcome") {
		t.Fatalf("notes %v", rep.Notes)
	}
	b.sharePoll(3, "sg", history.Info) // a second one: b may have reached the limit unseen
	rep = checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, nil)
	if !noteContaining(rep, "may have acquired them unseen to reach the delivery count limit 3") {
		t.Fatalf("notes %v", rep.Notes)
	}
}

// With share.auto.offset.reset=latest (the default) the share-partition may start after
// the first records: only records from the lowest offset the group got are judged.
// With earliest, all are.
func TestShareLostFromWhereThePartitionStarted(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "early", 0)
	b.ok(1, t0, "a", 1)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(1, "a", 1)))
	b.ack(2, "sg", t0, history.Ok, accept(1))
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, nil)
	if !noteContaining(rep, "1 acknowledged record below offset 1, the lowest the group was delivered, not judged") {
		t.Fatalf("notes %v", rep.Notes)
	}
	earliest := limit3
	earliest.FromEarliest = true
	rep = checkShare(t, b, earliest)
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{0}, values: []string{"early"}}})
}

// With a deadline (unseen-within), a record settled after it is lost (late), and one
// whose deadline lies past the end of the history is undecided.
func TestShareLostDeadline(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)                                            // acknowledged at t=20
	b.subscribeShare(2, "sg", "t")                                 // t=30..40
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1))) // t=50..60
	b.ack(2, "sg", t0, history.Ok, accept(0))                      // completes at t=80
	b.ok(1, t0, "b", 1)                                            // acknowledged at t=100
	late := limit3
	late.Unseen = UnseenRule{Within: 50}
	rep := checkShare(t, b, late)
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{0}, values: []string{"a"}}})
	if !strings.Contains(rep.Violations[0].Text, "within 50ns of max(ack, t=0s) (1 settled late)") {
		t.Fatalf("text %q", rep.Violations[0].Text)
	}
	if !noteContaining(rep, "1 acknowledged record not settled yet, with a deadline after the end of the history") {
		t.Fatalf("notes %v", rep.Notes)
	}
}

func TestShareBeyondLimit(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "poison", 0)
	b.subscribeShare(2, "sg", "t")
	for count := 1; count <= 4; count++ {
		b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "poison", count)))
		b.ack(2, "sg", t0, history.Ok, release(0))
	}
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, []want{{anomaly: ShareBeyondLimit, tp: t0, group: "sg", offsets: []int64{0}}})
	if got, want := rep.Violations[0].Text, "offset 0 was delivered to share group sg with delivery count 4 (op 17), above the delivery count limit 3"; got != want {
		t.Fatalf("text %q\nwant %q", got, want)
	}
}

func TestShareRedeliveredAfterAccept(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1)))
	b.ack(2, "sg", t0, history.Ok, accept(0))
	b.sharePoll(3, "sg", history.Ok, rd(t0, delivered(0, "a", 2)))
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, []want{{anomaly: ShareRedeliveredAfterAccept, tp: t0, group: "sg", offsets: []int64{0}}})
	if got, want := rep.Violations[0].Text, "offset 0 was delivered to share group sg again (op 9, delivery count 2) after its accept was acknowledged (op 7): an acknowledged record is never delivered again"; got != want {
		t.Fatalf("text %q\nwant %q", got, want)
	}
}

// A delivery invoked before the accept completed may be what the accept's failover
// left behind, or simply concurrent: it proves nothing; nor does an accept that failed.
func TestShareRedeliveryThatOverlapsOrFollowsAFailedAccept(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1)))
	inv := b.r.InvokeAck(b.tick(), 2, "sg", t0, []history.RecordAck{accept(0)})
	poll := b.r.InvokeSharePoll(b.tick(), 3, "sg")
	b.r.Ok(b.tick(), inv, history.Result{})
	b.r.Ok(b.tick(), poll, history.Result{Reads: []history.PartitionRecords{rd(t0, delivered(0, "a", 1))}})
	b.ack(3, "sg", t0, history.Fail, accept(0))
	rep := checkShare(t, b, limit3)
	expectExactly(t, rep.Violations, nil)
}

// Share polls are not a consumer's positions: out of order and repeated, they are no
// poll-skip or nonmonotonic-poll, and the delivery checker leaves the share group to
// the share checker (no undelivered, no redelivered). Check runs the share checker and,
// without the run's settings, says it judged by Kafka's defaults.
func TestCheckJudgesShareGroupsOnlyByTheShareChecker(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.ok(1, t0, "c", 2)
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1), delivered(2, "c", 1)))
	b.ack(2, "sg", t0, history.Ok, release(0), accept(2))
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 2)))
	b.ack(2, "sg", t0, history.Ok, accept(0))
	b.poll(3, "g", history.Ok, rd(t0, at(0, "a"), at(1, "b"), at(2, "c")))
	rep, err := Check(b.history(), Options{Promise: ExactlyOnce})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{1}, values: []string{"b"}}})
	if !noteContaining(rep, "share groups judged by Kafka's defaults (delivery count limit 5") {
		t.Fatalf("notes %v", rep.Notes)
	}
	if len(rep.Delivery) != 2 || rep.Delivery[0].Group != "g" || rep.Delivery[1] != (GroupDelivery{Group: "sg", Values: 3, Zero: 1, Once: 1, More: 1, Observed: ObservedNone}) {
		t.Fatalf("delivery %+v", rep.Delivery)
	}
	if !strings.Contains(rep.String(), "violation share share-lost t-0 group sg at t=30ns") {
		t.Fatalf("text report:\n%s", rep.String())
	}
	opts := limit3
	rep, err = Check(b.history(), Options{Share: &opts})
	if err != nil || noteContaining(rep, "Kafka's defaults") {
		t.Fatalf("with the run's settings: %v %v", rep.Notes, err)
	}
}

// A history without share groups gets nothing from the share checker: no finding, no
// note, no delivery line.
func TestCheckWithoutShareGroupsIsUnchanged(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.poll(2, "g", history.Ok, rd(t0, at(0, "a")))
	opts := limit3
	with, err := Check(b.history(), Options{Share: &opts})
	if err != nil {
		t.Fatal(err)
	}
	without, _ := Check(b.history(), Options{})
	if with.String() != without.String() || strings.Contains(with.String(), "share") {
		t.Fatalf("with share options:\n%s\nwithout:\n%s", with.String(), without.String())
	}
}

// The liveness check leaves share groups to the share checker: a share group that never
// got a record is share-lost (by the same deadline), not unconsumed.
func TestLivenessLeavesShareGroupsToTheShareChecker(t *testing.T) {
	b := newBuilder()
	b.ok(1, t0, "a", 0)
	b.ok(1, t0, "b", 1)
	b.read(3, t0, at(0, "a"), at(1, "b"))
	b.subscribeShare(2, "sg", "t")
	b.sharePoll(2, "sg", history.Ok, rd(t0, delivered(0, "a", 1)))
	b.ack(2, "sg", t0, history.Ok, accept(0))
	b.now += 1000
	b.sharePoll(2, "sg", history.Ok)
	opts := limit3
	rep, err := Check(b.history(), Options{Share: &opts, Liveness: &LivenessOptions{Within: 100}})
	if err != nil {
		t.Fatal(err)
	}
	expectExactly(t, rep.Violations, []want{{anomaly: ShareLost, tp: t0, group: "sg", offsets: []int64{1}}})
}
