package checker

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"mqsim/model/history"
)

// shareModel is a correct share-partition (KIP-932) of one partition, t-0, and the
// share consumers of one group: records are acquired by one member at a time, each
// acquisition counts, and a record released or whose lock expires at the delivery count
// limit is archived. It also does what the history cannot see: a fetch whose response
// is lost (the member acquired records it never learns of: the poll is info), lock
// expiries, and leader failovers (acquired records go back to available, the
// interrupted delivery not counted).
type shareModel struct {
	b       *builder
	limit   int
	records []shareModelRecord
}

type shareModelRecord struct {
	value    string
	state    string // "available", "acquired", "acknowledged", "archived"
	holder   int    // member holding it, when acquired
	seen     bool   // the holder learned it acquired it
	count    int
	accepted bool
}

func (m *shareModel) send() {
	off := int64(len(m.records))
	v := fmt.Sprintf("v%d", off)
	m.b.ok(1, t0, v, off)
	m.records = append(m.records, shareModelRecord{value: v, state: "available"})
}

// fetch acquires up to max available records for member; lost: the response never
// comes (the poll is info, nothing recorded).
func (m *shareModel) fetch(member, most int, lost bool) {
	var got []history.Record
	for off := range m.records {
		r := &m.records[off]
		if r.state != "available" || len(got) == most {
			continue
		}
		r.state, r.holder, r.seen = "acquired", member, !lost
		r.count++
		got = append(got, delivered(int64(off), r.value, r.count))
	}
	if lost {
		m.b.sharePoll(member, "sg", history.Info)
		return
	}
	m.b.sharePoll(member, "sg", history.Ok, rd(t0, got...))
}

// release makes an acquired record available again, or archives it at the limit.
func (m *shareModel) release(r *shareModelRecord) {
	r.state = "available"
	if r.count >= m.limit {
		r.state = "archived"
	}
}

// ack acknowledges what member knows it holds, each with kind(offset); outcome info
// sometimes, applied or not as applied says.
func (m *shareModel) ack(member int, kind func(int64) string, outcome history.Type, applied bool) {
	var acks []history.RecordAck
	for off := range m.records {
		if r := &m.records[off]; r.state == "acquired" && r.holder == member && r.seen {
			acks = append(acks, history.RecordAck{Offset: int64(off), Type: kind(int64(off))})
		}
	}
	if len(acks) == 0 {
		return
	}
	m.b.ack(member, "sg", t0, outcome, acks...)
	if !applied {
		return
	}
	for _, a := range acks {
		r := &m.records[a.Offset]
		switch a.Type {
		case history.AckAccept:
			r.state = "acknowledged"
			r.accepted = outcome == history.Ok
		case history.AckReject:
			r.state = "archived"
		case history.AckRelease:
			m.release(r)
		}
	}
}

func (m *shareModel) expire(off int) {
	if r := &m.records[off]; r.state == "acquired" {
		m.release(r)
	}
}

func (m *shareModel) failover() {
	for off := range m.records {
		if r := &m.records[off]; r.state == "acquired" {
			r.state = "available"
			r.count-- // the interrupted delivery is not counted
		}
	}
}

// drain ends every acquisition and lets member 2 accept whatever is left.
func (m *shareModel) drain() {
	for range m.limit + 1 {
		for off := range m.records {
			m.expire(off)
		}
		m.fetch(2, len(m.records), false)
		m.ack(2, func(int64) string { return history.AckAccept }, history.Ok, true)
	}
}

// randomShareHistory runs the model through random steps and drains it; one record is
// always accepted last, so that a mutation has one to deliver again.
func randomShareHistory(t *rapid.T) (*shareModel, ShareOptions) {
	m := &shareModel{b: newBuilder(), limit: rapid.IntRange(2, 5).Draw(t, "limit")}
	for range rapid.IntRange(1, 4).Draw(t, "records") {
		m.send()
	}
	for _, member := range []int{2, 3, 4} {
		m.b.subscribeShare(member, "sg", "t")
	}
	types := []string{history.AckAccept, history.AckRelease, history.AckReject}
	for range rapid.IntRange(0, 25).Draw(t, "steps") {
		member := rapid.IntRange(2, 4).Draw(t, "member")
		switch rapid.IntRange(0, 5).Draw(t, "step") {
		case 0, 1:
			m.fetch(member, rapid.IntRange(1, 3).Draw(t, "max"), rapid.IntRange(0, 4).Draw(t, "lost") == 0)
		case 2, 3:
			outcome := rapid.SampledFrom([]history.Type{history.Ok, history.Ok, history.Fail, history.Info}).Draw(t, "outcome")
			applied := outcome == history.Ok || outcome == history.Info && rapid.Bool().Draw(t, "applied")
			m.ack(member, func(int64) string { return rapid.SampledFrom(types).Draw(t, "type") }, outcome, applied)
		case 4:
			m.expire(rapid.IntRange(0, len(m.records)-1).Draw(t, "expire"))
		case 5:
			m.failover()
		}
	}
	m.drain()
	m.send()
	m.drain()
	return m, ShareOptions{DeliveryCountLimit: m.limit, FromEarliest: true}
}

// A correct share-partition never makes the share checker report anything, whatever
// happens that the history cannot see.
func TestShareModelHistoriesPass(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, opts := randomShareHistory(t)
		rep, err := CheckShare(m.b.history(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Violations) > 0 {
			t.Fatalf("a correct share-partition reported:\n%s", rep.String())
		}
	})
}

// Delivering an accepted record again, after its accept completed, is always found.
func TestShareRedeliveryAfterAcceptIsAlwaysFound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, opts := randomShareHistory(t)
		var accepted []int
		for off, r := range m.records {
			if r.accepted {
				accepted = append(accepted, off)
			}
		}
		off := rapid.SampledFrom(accepted).Draw(t, "redelivered")
		r := m.records[off]
		m.b.sharePoll(rapid.IntRange(2, 4).Draw(t, "to"), "sg", history.Ok, rd(t0, delivered(int64(off), r.value, r.count+1)))
		rep, err := CheckShare(m.b.history(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rep.Violations, func(v Violation) bool {
			return v.Anomaly == ShareRedeliveredAfterAccept && slices.Equal(v.Offsets, []int64{int64(off)})
		}) {
			t.Fatalf("offset %d delivered again after its accept, not found:\n%s", off, rep.String())
		}
	})
}
