package history

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A transaction whose producer crashed never completes; Final still shows its sends, as
// an info completion, without changing the recorder (a live transaction may complete later).
func TestFinalCompletesOpenTransactionsAsInfo(t *testing.T) {
	r := NewRecorder()
	tp := TopicPartition{Topic: "t", Partition: 0}
	crashed := r.InvokeTxn(10, 1, "T1")
	send := SendValue{TopicPartition: tp, Value: "a", Offset: NoOffset}
	ops := []MicroOp{{F: Send, Send: &send}}
	r.TxnProgress(crashed, Result{TxnOps: ops})
	send.Offset = 4 // the producer learns the offset later: the recorder kept its own copy
	r.TxnProgress(crashed, Result{TxnOps: ops})
	send.Value = "changed after the last progress"
	plain := r.InvokeSend(20, 2, tp, "", "b")

	h := r.Final(15) // before the last op: the completion takes the last op's time
	if len(h) != 3 || len(r.History()) != 2 {
		t.Fatalf("final has %d ops, recorder %d; want 3 and 2", len(h), len(r.History()))
	}
	done := h[2]
	if done.Type != Info || done.Invoke != int(crashed) || done.Index != 2 || done.Time != 20 {
		t.Fatalf("completion %+v; want info of op %d at index 2, time 20", done, crashed)
	}
	if got := done.Txn.Ops; len(got) != 1 || got[0].Send.Value != "a" || got[0].Send.Offset != 4 {
		t.Fatalf("completion's ops %+v; want the send of a at offset 4", got)
	}
	if h[1].Type != Invoke || !r.Open(plain) {
		t.Fatal("the open send must stay open in the final history")
	}

	r.Ok(30, crashed, Result{TxnOps: ops})
	if got := r.Final(40); len(got) != 3 || got[2].Type != Ok {
		t.Fatalf("after the transaction completed, final has %d ops; want 3, the last ok", len(got))
	}
}

// A recorder keeps sends packed and builds the history when asked (packed.go): asked
// after every op or once at the end, it builds the same history, which holds exactly
// the values given (copied: a caller's bytes may change after), across op chunks and
// byte-arena chunks, including a value longer than an arena chunk.
func TestHistoryBuiltPiecewiseOrAtOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piecewise, atOnce := NewRecorder(), NewRecorder()
		type sent struct {
			h          Handle
			tp         TopicPartition
			key, value string
		}
		var open []sent
		given := map[Handle]sent{}
		var polls []Handle
		now := int64(0)
		both := func(f func(r *Recorder) Handle) Handle {
			a, b := f(piecewise), f(atOnce)
			if a != b {
				t.Fatalf("the recorders gave handles %d and %d", a, b)
			}
			piecewise.History()
			return a
		}
		steps := rapid.IntRange(1, 3*chunkOps).Draw(t, "steps")
		for range steps {
			now += int64(rapid.IntRange(0, 2).Draw(t, "dt"))
			switch {
			case len(open) > 0 && rapid.Bool().Draw(t, "complete"):
				i := rapid.IntRange(0, len(open)-1).Draw(t, "which")
				s := open[i]
				open = append(open[:i], open[i+1:]...)
				switch rapid.IntRange(0, 2).Draw(t, "outcome") {
				case 0:
					off := rapid.Int64Range(NoOffset, 1<<40).Draw(t, "offset")
					both(func(r *Recorder) Handle { r.Ok(now, s.h, Result{Offset: off}); return s.h })
				case 1:
					both(func(r *Recorder) Handle { r.Fail(now, s.h, Result{Error: "NOT_LEADER_OR_FOLLOWER"}); return s.h })
				default:
					both(func(r *Recorder) Handle { r.Info(now, s.h, Result{Error: "REQUEST_TIMED_OUT"}); return s.h })
				}
			case rapid.IntRange(0, 9).Draw(t, "kind") == 0:
				if len(polls) > 0 && rapid.Bool().Draw(t, "poll done") {
					h := polls[0]
					polls = polls[1:]
					both(func(r *Recorder) Handle {
						r.Ok(now, h, Result{Reads: []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "a"}}}}})
						return h
					})
					continue
				}
				polls = append(polls, both(func(r *Recorder) Handle { return r.InvokePoll(now, 2, "g") }))
			default:
				s := sent{tp: TopicPartition{Topic: "t", Partition: rapid.Int32Range(0, 2).Draw(t, "partition")},
					key: rapid.StringN(0, 4, -1).Draw(t, "key")}
				size := rapid.SampledFrom([]int{0, 1, 100, arenaChunk / 3, arenaChunk + 7}).Draw(t, "size")
				s.value = strings.Repeat(string(rune('a'+len(open)%26)), size)
				s.h = both(func(r *Recorder) Handle {
					key, value := []byte(s.key), []byte(s.value)
					h := r.InvokeSendBytes(now, 1, s.tp, key, value)
					clear(value) // the caller's buffer is reused
					return h
				})
				open, given[s.h] = append(open, s), s
				if op, ok := atOnce.Op(int(s.h)); ok || op != nil {
					t.Fatalf("Op(%d) of a send = %v, %v; want nil, false", s.h, op, ok)
				}
			}
		}
		got, want := piecewise.History(), atOnce.History()
		if err := want.Validate(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the history built piecewise differs from the one built at once")
		}
		for _, op := range want {
			if op.F != Send {
				continue
			}
			s := given[Handle(op.Index)]
			if op.Type != Invoke {
				s = given[Handle(op.Invoke)]
			}
			if v := op.Send; v.TopicPartition != s.tp || v.Key != s.key || v.Value != s.value {
				t.Fatalf("op %d sends %v %q (%d bytes); want %v %q (%d bytes)", op.Index, v.TopicPartition, v.Key, len(v.Value), s.tp, s.key, len(s.value))
			}
		}
		for _, s := range open {
			if !atOnce.Open(s.h) {
				t.Fatalf("send %d is not open", s.h)
			}
		}
		for i := range atOnce.Len() {
			if op, ok := atOnce.Op(i); ok && !reflect.DeepEqual(*op, want[i]) {
				t.Fatalf("Op(%d) = %+v, History has %+v", i, *op, want[i])
			}
		}
	})
}
