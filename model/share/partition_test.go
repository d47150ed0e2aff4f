package share

import (
	"reflect"
	"testing"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

var key = proto.SharePartitionKey{Group: "g", TP: proto.TP{Topic: "t"}}

func limits(maxInFlight int) Limits {
	return Limits{LockDuration: 30 * time.Second, DeliveryCountLimit: 3, MaxInFlight: maxInFlight}
}

func sec(n int) sim.Time { return sim.Time(time.Duration(n) * time.Second) }

func ranges(rs ...[3]int64) []proto.AcquiredRange {
	var out []proto.AcquiredRange
	for _, r := range rs {
		out = append(out, proto.AcquiredRange{First: r[0], Last: r[1], DeliveryCount: int16(r[2])})
	}
	return out
}

func ack(first, last int64, t proto.AckType) []proto.AckBatch {
	return []proto.AckBatch{{First: first, Last: last, Type: t}}
}

// persist runs the write the partition asks for and applies (ok) or rolls it back.
func persist(t *testing.T, p *Partition, ok bool) Write {
	t.Helper()
	w, found := p.NextWrite()
	if !found {
		t.Fatal("no write to persist")
	}
	if ok {
		p.Apply(w.ID)
	} else {
		p.Rollback(w.ID)
	}
	return w
}

func TestInitialFromAutoOffsetReset(t *testing.T) {
	if got := Initial("earliest", 3, 9); got != 3 {
		t.Fatalf("earliest: %d, want 3", got)
	}
	if got := Initial("latest", 3, 9); got != 9 {
		t.Fatalf("latest: %d, want 9", got)
	}
}

// m1 acquires 0-2; m2 gets 3-4 and none of m1's; after m1's lock expires m2 gets 0-2
// with delivery count 2.
func TestAcquireThenLockExpiryRedelivers(t *testing.T) {
	p := NewPartition(key, limits(100), 0)
	if got := p.Acquire("m1", 5, 3, sec(0)); !reflect.DeepEqual(got, ranges([3]int64{0, 2, 1})) {
		t.Fatalf("m1 acquired %v", got)
	}
	if got := p.Acquire("m2", 5, 10, sec(1)); !reflect.DeepEqual(got, ranges([3]int64{3, 4, 1})) {
		t.Fatalf("m2 acquired %v", got)
	}
	if got := p.Acquire("m2", 5, 10, sec(2)); got != nil {
		t.Fatalf("nothing is available, m2 acquired %v", got)
	}
	if d, ok := p.NextDeadline(); !ok || d != sec(30) {
		t.Fatalf("next deadline %v %v, want 30s", d, ok)
	}
	if got := p.Expire(sec(29)); got != nil {
		t.Fatalf("expired before the deadline: %v", got)
	}
	exp := p.Expire(sec(30))
	want := []Transition{{0, "m1", proto.Acquired, proto.Available, 1}, {1, "m1", proto.Acquired, proto.Available, 1}, {2, "m1", proto.Acquired, proto.Available, 1}}
	if !reflect.DeepEqual(exp, want) {
		t.Fatalf("expired %v, want %v", exp, want)
	}
	if got := p.Acquire("m2", 5, 10, sec(31)); !reflect.DeepEqual(got, ranges([3]int64{0, 2, 2})) {
		t.Fatalf("m2 acquired %v, want 0-2 with count 2", got)
	}
}

// Table of acknowledgement transitions: from Acquired by m1 (delivery count 1 or the
// limit 3), what each ack type makes of the record once persisted, and the SPSO after.
func TestAcknowledgeTransitions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		count     int // deliveries before the ack
		typ       proto.AckType
		wantState proto.RecordState
		wantStart int64
	}{
		{"accept", 1, proto.AckAccept, proto.Acknowledged, 1},
		{"release", 1, proto.AckRelease, proto.Available, 0},
		{"reject", 1, proto.AckReject, proto.Archived, 1},
		{"gap", 1, proto.AckGap, proto.Archived, 1},
		{"release at the limit archives", 3, proto.AckRelease, proto.Archived, 1},
		{"accept at the limit", 3, proto.AckAccept, proto.Acknowledged, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPartition(key, limits(100), 0)
			for i := 0; i < tc.count; i++ {
				if i > 0 {
					p.Expire(sec(1000 * i))
				}
				p.Acquire("m1", 1, 1, sec(1000*i))
			}
			ticket, err := p.Acknowledge("m1", ack(0, 0, tc.typ))
			if err != proto.None || ticket == 0 {
				t.Fatalf("ack: %v %d", err, ticket)
			}
			if s, _, _ := p.Record(0); s != proto.Acquired {
				t.Fatalf("before the write the record is %s, want acquired (pending)", s)
			}
			w, _ := p.NextWrite()
			if !reflect.DeepEqual(w.Tickets, []int64{ticket}) {
				t.Fatalf("write carries %v", w.Tickets)
			}
			applied := p.Apply(w.ID)
			want := []Transition{{Offset: 0, Member: "m1", From: proto.Acquired, To: tc.wantState, DeliveryCount: int16(tc.count)}}
			if !reflect.DeepEqual(applied, want) {
				t.Fatalf("applied %v, want %v", applied, want)
			}
			if p.Start() != tc.wantStart || w.State.StartOffset != tc.wantStart {
				t.Fatalf("SPSO %d, written %d, want %d", p.Start(), w.State.StartOffset, tc.wantStart)
			}
		})
	}
}

func TestAcknowledgeRefusals(t *testing.T) {
	p := NewPartition(key, limits(100), 0)
	p.Acquire("m1", 3, 2, 0) // 0-1 to m1
	p.Acquire("m2", 3, 1, 0) // 2 to m2
	for _, tc := range []struct {
		name    string
		member  string
		batches []proto.AckBatch
		want    proto.Error
	}{
		{"another member's record", "m1", ack(1, 2, proto.AckAccept), proto.InvalidRecordState},
		{"past the window", "m1", ack(5, 5, proto.AckAccept), proto.InvalidRecordState},
		{"last before first", "m1", ack(1, 0, proto.AckAccept), proto.InvalidRequest},
		{"unknown type", "m1", ack(0, 0, proto.AckType(9)), proto.InvalidRequest},
		{"offset twice", "m1", append(ack(0, 1, proto.AckAccept), ack(1, 1, proto.AckReject)...), proto.InvalidRequest},
	} {
		if _, err := p.Acknowledge(tc.member, tc.batches); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if held := p.Held("m1"); !reflect.DeepEqual(held, []int64{0, 1}) {
		t.Fatalf("a refused request changed something: m1 holds %v", held)
	}
	if _, err := p.Acknowledge("m1", ack(0, 0, proto.AckAccept)); err != proto.None {
		t.Fatal(err)
	}
	if _, err := p.Acknowledge("m1", ack(0, 0, proto.AckAccept)); err != proto.InvalidRecordState {
		t.Fatalf("an ack of a record in transition: %v, want INVALID_RECORD_STATE", err)
	}
}

// A failed write rolls the acknowledgement back: the record is Acquired by m1 again, its
// lock running; it expires once its deadline passed. The next write succeeds.
func TestRollbackKeepsTheLock(t *testing.T) {
	p := NewPartition(key, limits(100), 0)
	p.Acquire("m1", 1, 1, 0)
	p.Acknowledge("m1", ack(0, 0, proto.AckAccept))
	if got := p.Expire(sec(40)); got != nil {
		t.Fatalf("a record in transition expired: %v", got)
	}
	persist(t, p, false)
	if s, _, m := p.Record(0); s != proto.Acquired || m != "m1" {
		t.Fatalf("after rollback: %s by %q, want acquired by m1", s, m)
	}
	if got := p.Expire(sec(40)); len(got) != 1 || got[0].To != proto.Available {
		t.Fatalf("expiry after rollback: %v", got)
	}
	w := persist(t, p, true) // the expiry is written
	want := proto.ShareState{StartOffset: 0, Batches: []proto.PersistedBatch{{First: 0, Last: 0, State: proto.Available, DeliveryCount: 1}}}
	if !reflect.DeepEqual(w.State, want) {
		t.Fatalf("written %+v, want %+v", w.State, want)
	}
}

// Writes queue: one in flight; what is staged meanwhile goes in the next.
func TestOneWriteInFlight(t *testing.T) {
	p := NewPartition(key, limits(100), 0)
	p.Acquire("m1", 2, 2, 0)
	a, _ := p.Acknowledge("m1", ack(0, 0, proto.AckAccept))
	w1, _ := p.NextWrite()
	b, _ := p.Acknowledge("m1", ack(1, 1, proto.AckAccept))
	if _, ok := p.NextWrite(); ok {
		t.Fatal("a second write while one is in flight")
	}
	p.Apply(w1.ID)
	w2, ok := p.NextWrite()
	if !ok || !reflect.DeepEqual(w1.Tickets, []int64{a}) || !reflect.DeepEqual(w2.Tickets, []int64{b}) {
		t.Fatalf("writes carry %v then %v", w1.Tickets, w2.Tickets)
	}
	if w2.State.StartOffset != 2 || len(w2.State.Batches) != 0 {
		t.Fatalf("second write %+v, want start 2 and no batches", w2.State)
	}
}

// One stuck record at the SPSO holds the window: with an in-flight limit of 3, after 0-2
// are acquired and 1-2 accepted, nothing new is acquired until 0 is done.
func TestInFlightLimitIsTheSpan(t *testing.T) {
	p := NewPartition(key, limits(3), 0)
	p.Acquire("m1", 10, 1, 0)
	p.Acquire("m2", 10, 2, 0)
	p.Acknowledge("m2", ack(1, 2, proto.AckAccept))
	persist(t, p, true)
	if p.Start() != 0 || p.InFlight() != 3 {
		t.Fatalf("SPSO %d in flight %d, want 0 and 3", p.Start(), p.InFlight())
	}
	if got := p.Acquire("m2", 10, 5, 0); got != nil {
		t.Fatalf("acquired %v beyond the limit", got)
	}
	p.Acknowledge("m1", ack(0, 0, proto.AckAccept))
	persist(t, p, true)
	if got := p.Acquire("m2", 10, 5, 0); p.Start() != 3 || !reflect.DeepEqual(got, ranges([3]int64{3, 5, 1})) {
		t.Fatalf("SPSO %d, acquired %v, want 3 and 3-5", p.Start(), got)
	}
}

func TestReleaseMemberAndLogStart(t *testing.T) {
	p := NewPartition(key, limits(100), 0)
	p.Acquire("m1", 4, 2, 0) // 0-1
	p.Acquire("m2", 4, 1, 0) // 2
	if tk := p.ReleaseMember("m3"); tk != 0 {
		t.Fatal("m3 held nothing")
	}
	p.ReleaseMember("m1")
	w := persist(t, p, true)
	if len(w.Tickets) != 1 || p.Held("m1") != nil {
		t.Fatalf("m1 still holds %v", p.Held("m1"))
	}
	if s, c, _ := p.Record(1); s != proto.Available || c != 1 {
		t.Fatalf("released record: %s %d", s, c)
	}
	// The log start moves to 2: 0-1 (Available) are archived; 2 is Acquired by m2 and is
	// archived when its lock ends.
	if got := p.LogStartMoved(3); len(got) != 2 || p.Start() != 2 {
		t.Fatalf("log start moved: %v, SPSO %d", got, p.Start())
	}
	if got := p.Expire(sec(60)); len(got) != 1 || got[0].To != proto.Archived || p.Start() != 3 {
		t.Fatalf("expiry below the log start: %v, SPSO %d", got, p.Start())
	}
	if got := p.LogStartMoved(10); got != nil || p.Start() != 10 || p.InFlight() != 0 {
		t.Fatalf("log start past the window: %v SPSO %d in flight %d", got, p.Start(), p.InFlight())
	}
}

// State never writes Acquired: an Acquired record persists as it was before.
func TestStateAndLoadRoundTrip(t *testing.T) {
	p := NewPartition(key, limits(100), 5)
	p.Acquire("m1", 9, 4, 0) // 5-8, count 1
	p.Acknowledge("m1", ack(6, 6, proto.AckAccept))
	p.Acknowledge("m1", ack(7, 7, proto.AckReject))
	persist(t, p, true)
	want := proto.ShareState{StartOffset: 5, Batches: []proto.PersistedBatch{
		{First: 6, Last: 6, State: proto.Acknowledged, DeliveryCount: 1}, {First: 7, Last: 7, State: proto.Archived, DeliveryCount: 1}}}
	if got := p.State(); !reflect.DeepEqual(got, want) {
		t.Fatalf("state %+v, want %+v", got, want)
	}
	q, err := Load(key, limits(100), want)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Acquire("m2", 9, 10, 0); !reflect.DeepEqual(got, ranges([3]int64{5, 5, 1}, [3]int64{8, 8, 1})) {
		t.Fatalf("after load m2 acquired %v, want 5 and 8", got)
	}
	if _, err := Load(key, limits(100), proto.ShareState{StartOffset: 5, Batches: []proto.PersistedBatch{{First: 4, Last: 6}}}); err == nil {
		t.Fatal("a batch below the start loaded")
	}
	if _, err := Load(key, limits(100), proto.ShareState{Batches: []proto.PersistedBatch{{First: 0, Last: 0, State: proto.Acquired}}}); err == nil {
		t.Fatal("an acquired batch loaded")
	}
}

// A new window writes its start once; a loaded one has nothing to write.
func TestNewWindowWritesItsStart(t *testing.T) {
	p := NewPartition(key, limits(100), 7)
	w, ok := p.NextWrite()
	if !ok || w.State.StartOffset != 7 || w.Tickets != nil {
		t.Fatalf("first write %+v %v, want start 7 and no tickets", w, ok)
	}
	p.Apply(w.ID)
	if _, ok := p.NextWrite(); ok {
		t.Fatal("a second write with nothing new")
	}
	q, _ := Load(key, limits(100), proto.ShareState{StartOffset: 7})
	if _, ok := q.NextWrite(); ok {
		t.Fatal("a loaded window asks for a write")
	}
}

// The planted bug's path: staged acks apply at once, and the next write carries them.
func TestApplyUnpersisted(t *testing.T) {
	p := NewPartition(key, limits(100), 0)
	persist(t, p, true)
	p.Acquire("m1", 2, 2, 0)
	p.Acknowledge("m1", ack(0, 1, proto.AckAccept))
	got := p.ApplyUnpersisted()
	if len(got) != 2 || got[0].To != proto.Acknowledged || p.Start() != 2 || p.Staged() {
		t.Fatalf("applied %v, SPSO %d", got, p.Start())
	}
	if w := persist(t, p, true); w.State.StartOffset != 2 || w.Tickets != nil {
		t.Fatalf("the next write %+v, want start 2", w)
	}
}
