package checker

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"mqsim/model/history"
)

// LinearizabilityOptions configures CheckLinearizable.
type LinearizabilityOptions struct {
	// Budget bounds the wall-clock time of the search (it is NP-hard); when
	// it runs out the verdict is Unknown, never Valid. 0 means no bound.
	Budget time.Duration
	// HTML, when set, receives porcupine's interactive visualisation: one
	// self-contained page showing each partition's operations and the
	// longest linearizations found.
	HTML io.Writer
	// Annotations are drawn on the visualisation's time axis, e.g. faults.
	Annotations []Annotation
}

// Annotation marks a moment (or, with End > Time, a span) of virtual time
// on the visualisation.
type Annotation struct {
	Time int64
	End  int64 // optional; <= Time means a point
	Text string
}

// CheckLinearizable checks with porcupine that each partition's sends and
// polls could have happened, one at a time, on a sequential log: a send
// appends and, when acknowledged with an offset, gets exactly the next one;
// a poll returns a contiguous run of the log from the offset of its first
// record (any length: Kafka fetches return a prefix). Offsets are assumed
// dense from 0 (no transaction markers, no compaction). Fail ops are left
// out (they did not happen); info and never-completed ops return at
// +infinity with an unknown output, so they may take effect at any later
// point or never. Commits and assignments are not part of the model.
//
// Partitions are checked one by one, in first-seen order, under one shared
// budget, so each gets its own verdict: a partition the budget cut short is
// unknown, never mistaken for illegal. The visualisation, when asked for,
// comes from a second search over all partitions with its own budget.
func CheckLinearizable(h history.History, opts LinearizabilityOptions) (Report, error) {
	if err := h.Validate(); err != nil {
		return Report{}, err
	}
	f := newFindings(LinearizabilityChecker, nil)
	ops, parts, tps := porcupineOps(h)
	single := logModel()
	single.Partition = nil // each call below gets one partition
	var deadline time.Time
	if opts.Budget > 0 {
		deadline = time.Now().Add(opts.Budget)
	}
	var unknown []string
	for part, partOps := range parts {
		budget := time.Duration(0)
		if opts.Budget > 0 {
			if budget = time.Until(deadline); budget <= 0 {
				unknown = append(unknown, tps[part].String())
				continue
			}
		}
		switch res, info := porcupine.CheckOperationsVerbose(single, partOps, budget); res {
		case porcupine.Unknown:
			unknown = append(unknown, tps[part].String())
		case porcupine.Illegal:
			reportIllegal(f, single, info.PartialLinearizations()[0], partOps, tps[part])
		}
	}
	if len(unknown) > 0 {
		f.report.Result = Unknown
		f.note("unknown: the search used up its budget of %s before deciding %s", opts.Budget, strings.Join(unknown, ", "))
	}
	f.note("checked %d operations in %d partitions", len(ops), len(tps))
	if opts.HTML != nil {
		if err := visualize(ops, opts); err != nil {
			return Report{}, err
		}
	}
	return f.done(), nil
}

func visualize(ops []porcupine.Operation, opts LinearizabilityOptions) error {
	model := logModel()
	_, info := porcupine.CheckOperationsVerbose(model, ops, opts.Budget)
	anns := make([]porcupine.Annotation, len(opts.Annotations))
	for i, a := range opts.Annotations {
		anns[i] = porcupine.Annotation{Tag: "faults", Start: a.Time, End: a.End, Description: a.Text,
			BackgroundColor: "#fde2c4"}
	}
	info.AddAnnotations(anns)
	if err := porcupine.Visualize(model, info, opts.HTML); err != nil {
		return fmt.Errorf("checker: writing the visualisation: %w", err)
	}
	return nil
}

// reportIllegal adds a violation for a partition without a linearization,
// naming the earliest-invoked operation that a longest partial
// linearization leaves out: where the history stops making sense. Several
// partials may be longest, and porcupine returns them in no fixed order,
// so the earliest culprit over all of them is taken: the report stays
// deterministic.
func reportIllegal(f *findings, model porcupine.Model, partials [][]int, ops []porcupine.Operation, tp history.TopicPartition) {
	if len(partials) == 0 {
		partials = [][]int{{}} // not even the first operation fits
	}
	longest := 0
	for _, p := range partials {
		longest = max(longest, len(p))
	}
	in := make([]bool, len(ops))
	ci := -1
	for _, p := range partials {
		if len(p) != longest {
			continue
		}
		clear(in)
		for _, i := range p {
			in[i] = true
		}
		for i := range ops {
			if !in[i] && (ci < 0 || ops[i].Call < ops[ci].Call || (ops[i].Call == ops[ci].Call && i < ci)) {
				ci = i
			}
		}
	}
	if ci < 0 { // porcupine said illegal, yet linearized everything: say so
		f.add(Violation{Anomaly: Nonlinearizable, TopicPartition: tp, Text: "porcupine found no linearization"})
		return
	}
	culprit := &ops[ci]
	ref := culprit.Metadata.(OpRef) // ties the operation back to the history
	v := Violation{Anomaly: Nonlinearizable, TopicPartition: tp, Ops: []OpRef{ref},
		Text: fmt.Sprintf("no order of the partition's operations explains op %d (%s); the longest linearizable prefix holds %d of %d operations",
			ref.Index, model.DescribeOperation(culprit.Input, culprit.Output), longest, len(ops))}
	in2, out := culprit.Input.(logInput), culprit.Output.(logOutput)
	if in2.send {
		v.Values = []string{in2.value}
		if !out.unknown && out.offset != history.NoOffset {
			v.Offsets = []int64{out.offset}
		}
	}
	for _, r := range out.records[:min(len(out.records), listMax)] {
		v.Offsets = append(v.Offsets, r.Offset)
		v.Values = append(v.Values, r.Value)
	}
	f.add(v)
}
