package history

import (
	"bytes"
	"reflect"
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

// A recorder keeps sends as runs and builds the history when asked (packed.go). Asked
// after every step or once at the end, it builds the history a plain list of the ops
// would hold: sends invoked a batch at a time or one by one, completed together or one
// by one, between other ops, with values copied (a caller's bytes may change after).
func TestHistoryBuiltFromRuns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piecewise, atOnce := NewRecorder(), NewRecorder()
		var want History
		add := func(op Op) {
			op.Index = len(want)
			want = append(want, op)
		}
		both := func(f func(r *Recorder) Handle) Handle {
			a, b := f(piecewise), f(atOnce)
			if a != b {
				t.Fatalf("the recorders gave handles %d and %d", a, b)
			}
			piecewise.History()
			return a
		}
		var open []Handle              // open sends, in order
		batchOf := map[Handle]Handle{} // a send's batch: the first send invoked with it
		var polls []Handle
		now := int64(0)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			now += int64(rapid.IntRange(0, 2).Draw(t, "dt"))
			switch rapid.IntRange(0, 4).Draw(t, "kind") {
			case 0, 1: // a batch of sends
				tp := TopicPartition{Topic: "t", Partition: rapid.Int32Range(0, 2).Draw(t, "partition")}
				n := rapid.IntRange(1, 5).Draw(t, "records")
				keys, values := make([][]byte, n), make([][]byte, n)
				for i := range n {
					keys[i] = []byte(rapid.StringN(0, 3, -1).Draw(t, "key"))
					values[i] = bytes.Repeat([]byte{byte('a' + i)}, rapid.SampledFrom([]int{0, 1, 100, 5000}).Draw(t, "size"))
				}
				for i := range n {
					add(Op{Time: now, Process: 1, Type: Invoke, F: Send, Invoke: -1,
						Send: &SendValue{TopicPartition: tp, Key: string(keys[i]), Value: string(values[i]), Offset: NoOffset}})
				}
				one := n == 1 && rapid.Bool().Draw(t, "one")
				h := both(func(r *Recorder) Handle {
					if one {
						return r.InvokeSend(now, 1, tp, string(keys[0]), string(values[0]))
					}
					return r.InvokeSends(now, 1, tp, PackSends(n, func(i int) ([]byte, []byte) { return keys[i], values[i] }))
				})
				for i := range n {
					clear(values[i]) // the caller's buffers are reused
					open, batchOf[h+Handle(i)] = append(open, h+Handle(i)), h
				}
			case 2: // some open sends of one batch, completed together
				if len(open) == 0 {
					continue
				}
				i := rapid.IntRange(0, len(open)-1).Draw(t, "first")
				first := open[i]
				j := i + 1 // how far the batch's sends stay open and consecutive
				for j < len(open) && open[j] == open[j-1]+1 && batchOf[open[j]] == batchOf[first] {
					j++
				}
				n := rapid.IntRange(1, j-i).Draw(t, "n")
				typ := rapid.SampledFrom([]Type{Ok, Fail, Info}).Draw(t, "type")
				res := Result{}
				if typ == Ok {
					res.Offset = rapid.Int64Range(NoOffset, 1<<40).Draw(t, "offset")
				} else {
					res.Error = "NOT_LEADER_OR_FOLLOWER"
				}
				for k := range n {
					v := *want[int(first)+k].Send
					if typ == Ok && res.Offset != NoOffset {
						v.Offset = res.Offset + int64(k)
					}
					add(Op{Time: now, Process: 1, Type: typ, F: Send, Invoke: int(first) + k, Error: res.Error, Send: &v})
				}
				both(func(r *Recorder) Handle {
					if n == 1 && rapid.Bool().Draw(t, "alone") {
						map[Type]func(int64, Handle, Result){Ok: r.Ok, Fail: r.Fail, Info: r.Info}[typ](now, first, res)
					} else {
						r.CompleteSends(now, first, n, typ, res)
					}
					return first
				})
				open = append(open[:i], open[i+n:]...)
			default: // a poll, or its completion
				if len(polls) > 0 && rapid.Bool().Draw(t, "poll done") {
					h := polls[0]
					polls = polls[1:]
					reads := []PartitionRecords{{TopicPartition: t0, Records: []Record{{Offset: 0, Value: "a"}}}}
					add(Op{Time: now, Process: 2, Type: Ok, F: Poll, Invoke: int(h), Poll: &PollValue{Group: "g", Reads: reads}})
					both(func(r *Recorder) Handle { r.Ok(now, h, Result{Reads: reads}); return h })
					continue
				}
				add(Op{Time: now, Process: 2, Type: Invoke, F: Poll, Invoke: -1, Poll: &PollValue{Group: "g"}})
				polls = append(polls, both(func(r *Recorder) Handle { return r.InvokePoll(now, 2, "g") }))
			}
		}
		if err := want.Validate(); err != nil {
			t.Fatalf("the test's own history: %v", err)
		}
		for name, r := range map[string]*Recorder{"built piecewise": piecewise, "built at once": atOnce} {
			if got := r.History(); !reflect.DeepEqual(got, want) {
				for i := range min(len(got), len(want)) {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("history %s: op %d is %+v (%+v), want %+v (%+v)", name, i, got[i], got[i].Send, want[i], want[i].Send)
					}
				}
				t.Fatalf("history %s has %d ops, want %d", name, len(got), len(want))
			}
		}
		for _, h := range open {
			if !atOnce.Open(h) {
				t.Fatalf("send %d is not open", h)
			}
		}
		next := len(want) // the first op at or after i that is not a send
		for i := len(want) - 1; i >= 0; i-- {
			if want[i].F != Send {
				next = i
			}
			if op, ok := atOnce.Op(i); ok != (want[i].F != Send) || ok && !reflect.DeepEqual(*op, want[i]) {
				t.Fatalf("Op(%d) = %v, %v; History has %+v", i, op, ok, want[i])
			}
			if got, op := atOnce.NextOp(i); got != next || (op == nil) != (next == len(want)) || op != nil && !reflect.DeepEqual(*op, want[next]) {
				t.Fatalf("NextOp(%d) = %d, %v; want %d", i, got, op, next)
			}
		}
	})
}
