package export

import (
	"fmt"
	"slices"

	"mqsim/checker"
	"mqsim/model/broker"
	"mqsim/model/proto"
)

// Moment is the event a slide is about: where the verdict's first violation happens (the
// acknowledgement or the read that breaks the guarantee), not where the check dates its
// beginning.
type Moment struct {
	// Event is the index in Run.Events; Step its kernel step.
	Event int
	Step  int
	// Callout says what happens there, in a few words ("acked at HW 1").
	Callout string
	// TP is the partition it concerns, when it concerns one (HasTP).
	TP    proto.TP
	HasTP bool
	// Violations are the verdict's violations that happen at this event, in its order.
	Violations []checker.Violation
}

// KeyMoment is the moment the run's verdict points at: of the violations that begin at the
// earliest kernel step, where the first of them (in the verdict's order) happens (see
// happensAt). A run with no violation dated in the trace has its first fault as its key
// moment (a crash, a partition: what the scenario is about), with no violation; ok is
// false when it has none either.
func (r *Run) KeyMoment() (Moment, bool) {
	k := r.firstViolationStep()
	if k == 0 {
		return r.firstFault()
	}
	var m Moment
	found := false
	for _, v := range r.Report.Violations {
		if int(v.Step) != k {
			continue
		}
		if i, callout, tp, hasTP := r.happensAt(v); i >= 0 {
			m = Moment{Event: i, Step: int(r.Events[i].Step), Callout: callout, TP: tp, HasTP: hasTP}
			found = true
			break
		}
	}
	if !found {
		return r.firstFault()
	}
	for _, v := range r.Report.Violations {
		if i, _, _, _ := r.happensAt(v); i == m.Event {
			m.Violations = append(m.Violations, v)
		}
	}
	return m, true
}

// happensAt is the event where violation v happens, with a callout for it: the broker's
// acknowledgement of one of v's offsets on v's partition, at or after the step where v
// begins; otherwise the first model event once the earliest of v's operations completed;
// otherwise the first event of the step where v begins. -1 when the trace ends before.
func (r *Run) happensAt(v checker.Violation) (int, string, proto.TP, bool) {
	if v.Step == 0 {
		return -1, "", proto.TP{}, false
	}
	begin := r.firstEventOfStep(int(v.Step))
	if begin >= len(r.Events) {
		return -1, "", proto.TP{}, false
	}
	tp := proto.TP{Topic: v.Topic, Partition: v.Partition}
	hasTP := v.Topic != ""
	if hasTP && len(v.Offsets) > 0 {
		for i := begin; i < len(r.Events); i++ {
			if a, ok := r.Events[i].Data.(broker.Acked); ok && a.TP == tp && slices.Contains(v.Offsets, a.Offset) {
				return i, fmt.Sprintf("%s acks offset %d to %s at HW %d", r.Events[i].Node, a.Offset, a.To, a.HW), tp, true
			}
		}
	}
	end := int64(-1)
	for _, op := range v.Ops {
		if op.End >= v.Time && (end < 0 || op.End < end) {
			end = op.End
		}
	}
	if end >= 0 {
		for i := begin; i < len(r.Events); i++ {
			e := r.Events[i]
			if int64(e.Time) >= end && !r.isMessageEvent(i) {
				return i, fmt.Sprintf("%s %s", e.Node, e.Kind), tp, hasTP
			}
		}
	}
	return begin, fmt.Sprintf("%s begins", v.Anomaly), tp, hasTP
}

// firstFault is the run's first fault as a moment without a violation.
func (r *Run) firstFault() (Moment, bool) {
	for i, e := range r.Events {
		if !r.isMessageEvent(i) && classify(e) == classFault {
			return Moment{Event: i, Step: int(e.Step), Callout: e.Node + " " + e.Kind}, true
		}
	}
	return Moment{}, false
}
