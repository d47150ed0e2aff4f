package client

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

func shareConfig() proto.ConsumerConfig {
	c := consumerConfig()
	c.FetchMaxWait = 100 * time.Millisecond
	c.ProcessingTime = 10 * time.Millisecond
	c.HeartbeatInterval = time.Second
	return c
}

func (h *harness) addShareConsumer(name string, cfg proto.ConsumerConfig, opt ShareOptions) sim.NodeID {
	names, rec := h.names, h.rec
	return h.w.MustAddNode(name, func() sim.Node { return NewShareConsumer(cfg, opt, 0, names, rec) })
}

// shareOps renders the history's share ops, completions only: polls as
// "poll t-0@1:v1#1" (offset:value#delivery count), acks as "ack t-0 [0:accept] ok".
func shareOps(hist history.History) []string {
	var out []string
	for _, op := range hist {
		if op.Type == history.Invoke {
			continue
		}
		switch op.F {
		case history.Poll:
			if !op.Poll.Share {
				out = append(out, "poll without Share")
			}
			var rs []string
			for _, pr := range op.Poll.Reads {
				for _, r := range pr.Records {
					rs = append(rs, fmt.Sprintf("%s@%d:%s#%d", pr.TopicPartition, r.Offset, r.Value, r.DeliveryCount))
				}
			}
			if len(rs) > 0 || op.Type != history.Ok {
				out = append(out, fmt.Sprintf("poll %s %s", op.Type, strings.Join(rs, " ")))
			}
		case history.Ack:
			var as []string
			for _, a := range op.Ack.Acks {
				as = append(as, fmt.Sprintf("%d:%s", a.Offset, a.Type))
			}
			out = append(out, fmt.Sprintf("ack %s [%s] %s %s", op.Ack.TopicPartition, strings.Join(as, " "), op.Type, op.Error))
		}
	}
	return out
}

// withoutIdle drops the fetches that carry nothing (the idle polls), whose number depends
// only on timing.
func withoutIdle(log []string) []string {
	return slices.DeleteFunc(slices.Clone(log), func(s string) bool { return strings.HasSuffix(s, "[t/0] acks=") && !strings.Contains(s, "epoch=0") })
}

func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Explicit acknowledgement with a poison record: the consumer accepts what it processed and
// releases the poison record, piggybacking each poll's acknowledgements on the next
// ShareFetch, in a session whose epoch grows by one per answer; the leader redelivers the
// record until its delivery count reaches the limit (3) and archives it. Close sends a
// ShareAcknowledge with epoch -1 and then leaves the group.
func TestShareConsumerReleasesPoisonUntilArchived(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	fs := newFakeShare(h.fc, 3)
	h.fill(0, "v0", "bad", "v2")
	cfg := shareConfig()
	cfg.Patterns.Poison = []proto.PoisonRule{{Value: "bad"}}
	c := h.addShareConsumer("c", cfg, ShareOptions{Group: "g", Topics: []string{"t"}, AckMode: proto.AckExplicit})
	h.run(2 * time.Second)
	h.w.Inject(c, ShareClose{}, 0)
	h.run(time.Second)
	checkLines(t, "messages", withoutIdle(fs.log), []string{
		`b1: heartbeat member="" epoch=0`,
		"b1: fetch epoch=0 [t/0] acks=",
		"b1: fetch epoch=1 [t/0] acks=t/0[0:accept 1:release 2:accept]",
		"b1: fetch epoch=2 [t/0] acks=t/0[1:release]",
		"b1: fetch epoch=3 [t/0] acks=t/0[1:release]",
		`b1: heartbeat member="m1" epoch=1`,
		"b1: acknowledge epoch=-1 acks=",
		`b1: heartbeat member="m1" epoch=-1`,
	})
	if r := fs.rec(tp(0), 1); r.state != proto.Archived || r.count != 3 {
		t.Errorf("the poison record is %s with delivery count %d, want archived at 3", r.state, r.count)
	}
	checkLines(t, "history", shareOps(h.validate()), []string{
		"poll ok t-0@0:v0#1 t-0@1:bad#1 t-0@2:v2#1",
		"ack t-0 [0:accept 1:release 2:accept] ok ",
		"poll ok t-0@1:bad#2",
		"ack t-0 [1:release] ok ",
		"poll ok t-0@1:bad#3",
		"ack t-0 [1:release] ok ",
	})
	if got := h.events("process-failed"); len(got) != 3 {
		t.Errorf("process-failed events: %v, want 3 (one per delivery)", got)
	}
}

// Implicit mode (Kafka's default) accepts every record of a poll at the next poll, poison
// records included; rejecting instead of releasing archives a poison record at once.
func TestShareConsumerImplicitAcceptsAndRejectPoisonArchives(t *testing.T) {
	for _, tc := range []struct {
		opt  ShareOptions
		acks string
	}{
		{ShareOptions{Group: "g", Topics: []string{"t"}}, "b1: fetch epoch=1 [t/0] acks=t/0[0-1:accept]"},
		{ShareOptions{Group: "g", Topics: []string{"t"}, AckMode: proto.AckExplicit, RejectPoison: true}, "b1: fetch epoch=1 [t/0] acks=t/0[0:reject 1:accept]"},
	} {
		h := newHarness(t, 1, 1, 1)
		fs := newFakeShare(h.fc, 3)
		h.fill(0, "bad", "v1")
		cfg := shareConfig()
		cfg.Patterns.Poison = []proto.PoisonRule{{Value: "bad"}}
		h.addShareConsumer("c", cfg, tc.opt)
		h.run(time.Second)
		fetches := slices.DeleteFunc(withoutIdle(fs.log), func(s string) bool { return strings.Contains(s, "heartbeat") })
		checkLines(t, "fetches ("+tc.opt.AckMode+")", fetches, []string{"b1: fetch epoch=0 [t/0] acks=", tc.acks})
		want := proto.Acknowledged
		if tc.opt.RejectPoison {
			want = proto.Archived
		}
		if r := fs.rec(tp(0), 0); r.state != want || r.count != 1 {
			t.Errorf("%+v: the poison record is %s after %d deliveries, want %s after 1", tc.opt, r.state, r.count, want)
		}
	}
}

// A session error reopens the session from epoch 0 and fails the acknowledgements the
// request carried; a refused acknowledgement (INVALID_RECORD_STATE) is a failed ack op; a
// ShareFetch with no answer makes its acks and its poll unknown (info) and the next one
// opens a new session.
func TestShareConsumerSessionErrorsAndTimeouts(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	fs := newFakeShare(h.fc, 5)
	h.fill(0, "v0", "v1", "v2", "v3", "v4")
	fs.sessionErrs = map[int]proto.Error{1: proto.ShareSessionNotFound}
	fs.ackErrs = []proto.Error{proto.InvalidRecordState}
	fs.drop = map[int]bool{4: true}
	cfg := shareConfig()
	cfg.MaxPollRecords = 2
	h.addShareConsumer("c", cfg, ShareOptions{Group: "g", Topics: []string{"t"}, AckMode: proto.AckExplicit})
	h.run(2 * time.Second)
	checkLines(t, "messages", slices.DeleteFunc(withoutIdle(fs.log), func(s string) bool { return strings.Contains(s, "heartbeat") }), []string{
		"b1: fetch epoch=0 [t/0] acks=",                // acquires 0-1
		"b1: fetch epoch=1 [t/0] acks=t/0[0-1:accept]", // SHARE_SESSION_NOT_FOUND
		"b1: fetch epoch=0 [t/0] acks=",                // reopens; acquires 2-3 (0-1 still held)
		"b1: fetch epoch=1 [t/0] acks=t/0[2-3:accept]", // INVALID_RECORD_STATE; acquires 4
		"b1: fetch epoch=2 [t/0] acks=t/0[4:accept]",   // no answer
		"b1: fetch epoch=0 [t/0] acks=",                // a new session after the timeout
	})
	checkLines(t, "history", shareOps(h.validate()), []string{
		"poll ok t-0@0:v0#1 t-0@1:v1#1",
		"ack t-0 [0:accept 1:accept] fail SHARE_SESSION_NOT_FOUND",
		"poll ok t-0@2:v2#1 t-0@3:v3#1",
		"ack t-0 [2:accept 3:accept] fail INVALID_RECORD_STATE",
		"poll ok t-0@4:v4#1",
		"ack t-0 [4:accept] info no answer from the share-partition leader",
		"poll info ", // the unanswered ShareFetch may have acquired records unseen
	})
}

// Close while the application processes a poll's records: they are released in a
// ShareAcknowledge with session epoch -1, with the pending acknowledgements; then the
// consumer leaves. A crashed consumer sends nothing.
func TestShareConsumerCloseReleasesAndCrashSendsNothing(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	fs := newFakeShare(h.fc, 5)
	h.fill(0, "v0", "v1", "v2")
	cfg := shareConfig()
	cfg.MaxPollRecords = 2
	cfg.ProcessingTime = time.Second
	c := h.addShareConsumer("c", cfg, ShareOptions{Group: "g", Topics: []string{"t"}, AckMode: proto.AckExplicit})
	h.run(2500 * time.Millisecond) // 0-1 processed (2s), 2 acquired with their acks and in processing
	h.w.Inject(c, ShareClose{}, 0)
	h.run(time.Second)
	got := slices.DeleteFunc(withoutIdle(fs.log), func(s string) bool { return strings.Contains(s, "member=\"m1\" epoch=1") })
	checkLines(t, "messages", got, []string{
		`b1: heartbeat member="" epoch=0`,
		"b1: fetch epoch=0 [t/0] acks=",
		"b1: fetch epoch=1 [t/0] acks=t/0[0-1:accept]",
		"b1: acknowledge epoch=-1 acks=t/0[2:release]",
		`b1: heartbeat member="m1" epoch=-1`,
	})
	if r := fs.rec(tp(0), 2); r.state != proto.Available || r.count != 1 {
		t.Errorf("record 2 after close: %s (delivery %d), want available again", r.state, r.count)
	}
	checkLines(t, "history", shareOps(h.validate()), []string{
		"poll ok t-0@0:v0#1 t-0@1:v1#1",
		"ack t-0 [0:accept 1:accept] ok ",
		"poll ok t-0@2:v2#1",
		"ack t-0 [2:release] ok ",
	})

	h2 := newHarness(t, 1, 1, 1)
	fs2 := newFakeShare(h2.fc, 5)
	h2.fill(0, "v0")
	c2 := h2.addShareConsumer("c", cfg, ShareOptions{Group: "g", Topics: []string{"t"}})
	h2.run(500 * time.Millisecond)
	n := len(fs2.log)
	h2.w.Crash(c2)
	h2.run(5 * time.Second)
	if len(fs2.log) != n {
		t.Errorf("a crashed share consumer sent %v", fs2.log[n:])
	}
	if r := fs2.rec(tp(0), 0); r.state != proto.Acquired {
		t.Errorf("after the crash record 0 is %s, want still acquired (the lock expires at the leader)", r.state)
	}
}

// A record delivered again while the acknowledgement of its earlier delivery still waits
// (swarm share seed 46: the earlier one could not ride on a session-opening ShareFetch,
// and the lock expired meanwhile) has one pending acknowledgement, the latest, as Kafka's
// Acknowledgements map keeps one per offset: a request never names an offset twice.
func TestShareConsumerPendingAcksAreOnePerOffset(t *testing.T) {
	s := &ShareConsumer{}
	for _, a := range []struct {
		off int64
		t   proto.AckType
	}{{0, proto.AckRelease}, {1, proto.AckAccept}, {5, proto.AckAccept}, {0, proto.AckAccept}, {3, proto.AckRelease}, {5, proto.AckReject}, {2, proto.AckAccept}} {
		s.addPending(tp(0), a.off, a.t)
	}
	s.addPending(tp(1), 7, proto.AckAccept)
	if got, want := acksText(s.pending), "t/0[0-2:accept 3:release 5:reject] t/1[7:accept]"; got != want {
		t.Errorf("pending acknowledgements: %s, want %s", got, want)
	}
}

// An acknowledgement answered REQUEST_TIMED_OUT (the leader's state write timed out, or
// the leader lost the partition with the write in flight) may have been persisted all the
// same: the ack op's outcome is unknown (info), not refused.
func TestShareConsumerTimedOutAckIsUnknown(t *testing.T) {
	h := newHarness(t, 1, 1, 1)
	fs := newFakeShare(h.fc, 5)
	h.fill(0, "v0", "v1")
	fs.ackErrs = []proto.Error{proto.RequestTimedOut, proto.NotLeaderOrFollower}
	cfg := shareConfig()
	cfg.MaxPollRecords = 1
	h.addShareConsumer("c", cfg, ShareOptions{Group: "g", Topics: []string{"t"}, AckMode: proto.AckExplicit})
	h.run(time.Second)
	checkLines(t, "history", shareOps(h.validate())[:4], []string{
		"poll ok t-0@0:v0#1",
		"ack t-0 [0:accept] info REQUEST_TIMED_OUT",
		"poll ok t-0@1:v1#1",
		"ack t-0 [1:accept] fail NOT_LEADER_OR_FOLLOWER",
	})
	checkLines(t, "trace", h.events("share-ack")[:2], []string{
		"c g: t/0 [0:accept] unknown: REQUEST_TIMED_OUT",
		"c g: t/0 [1:accept] refused: NOT_LEADER_OR_FOLLOWER",
	})
}

// One poll sends a ShareFetch to each leader, and each is a poll op of its own: when b2's
// answer is lost, the records b1 gave are read (ok) and only b2's fetch is unknown (info),
// so what the consumer processed is never hidden in an unknown outcome.
func TestShareConsumerPollOpPerLeader(t *testing.T) {
	h := newHarness(t, 1, 2, 2)
	fs := newFakeShare(h.fc, 5)
	h.fill(0, "a0")
	h.fill(1, "b0")
	fs.drop = map[int]bool{1: true} // the first poll's second ShareFetch, to b2
	h.addShareConsumer("c", shareConfig(), ShareOptions{Group: "g", Topics: []string{"t"}, AckMode: proto.AckExplicit})
	h.run(time.Second)
	got := shareOps(h.validate())
	checkLines(t, "history", got[:2], []string{
		"poll ok t-0@0:a0#1",
		"poll info ", // b2 may have acquired b0 for it unseen
	})
}
