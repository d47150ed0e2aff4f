package checker

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"mqsim/model/history"
)

// LinearizabilityOptions configures CheckLinearizable.
type LinearizabilityOptions struct {
	// Budget bounds the wall-clock time of the search (it is NP-hard); when
	// it runs out the verdict is Unknown, never Valid. 0 means no bound.
	Budget time.Duration
	// MemoryBudget bounds the memory of the search: porcupine keeps, per
	// state it has seen, a set of the operations linearized so far, so a
	// stretch of n operations that no quiet moment cuts needs at least
	// n*n/8 bytes. A stretch over the budget is not searched and the
	// partition's verdict is Unknown. 0 means DefaultMemoryBudget.
	MemoryBudget int64
	// HTML, when set, receives porcupine's interactive visualisation: one
	// self-contained page showing each partition's operations and the
	// longest linearizations found.
	HTML io.Writer
	// Annotations are drawn on the visualisation's time axis, e.g. faults.
	Annotations []Annotation
}

// DefaultMemoryBudget is the memory budget when none is given.
const DefaultMemoryBudget = 1 << 30

// Annotation marks a moment (or, with End > Time, a span) of virtual time
// on the visualisation.
type Annotation struct {
	Time int64
	End  int64 // optional; <= Time means a point
	Text string
}

// CheckLinearizable checks with porcupine that each partition's sends and
// polls could have happened, one at a time, on a sequential log: a send
// appends and, when its offset is known, gets an offset above every offset
// before it; a poll returns consecutive records of the log, each at its
// offset. Offsets are sparse, as in Kafka: only their order counts. Fail
// ops are left out (they did not happen); info and never-completed ops
// may take effect at any later point or never (see porcupineOps).
// Commits and assignments are not part of the model.
//
// Each partition is checked on its own (Kafka promises nothing across
// partitions), partitions on every core at once, under one shared time
// budget and one memory budget, so each gets its own verdict: a partition
// a budget cut short is unknown, never mistaken for illegal. Within a
// partition the history is cut into stretches at quiet moments (every
// operation so far has returned before the next is invoked) where the log
// is certain: the stretch's sends all have known offsets, or none of them
// overlap. Each stretch is searched from the log the stretches before it
// leave, so a sequential or lightly concurrent history costs time and
// memory linear in its length. The visualisation, when asked for, comes
// from a second search over all partitions with its own budget.
func CheckLinearizable(h history.History, opts LinearizabilityOptions) (Report, error) {
	if err := h.Validate(); err != nil {
		return Report{}, err
	}
	return checkLinearizable(h, opts)
}

// checkLinearizable is CheckLinearizable on a history already validated.
func checkLinearizable(h history.History, opts LinearizabilityOptions) (Report, error) {
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = DefaultMemoryBudget
	}
	f := newFindings(LinearizabilityChecker, nil)
	ops, tps, skipped := porcupineOps(h)
	if len(skipped) > 0 {
		names := make([]string, len(skipped))
		for i, tp := range skipped {
			names[i] = tp.String()
		}
		f.note("%s written or read by transactions, not checked against the sequential log (it has no transactions): %s",
			plural(len(skipped), "partition"), strings.Join(names, ", "))
	}
	parts := partitionByTopicPartition(ops)
	var deadline time.Time
	if opts.Budget > 0 {
		deadline = time.Now().Add(opts.Budget)
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(parts)))
	verdicts := make([]partVerdict, len(parts))
	next := make(chan int, len(parts))
	for i := range parts {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				verdicts[i] = checkPartition(parts[i], deadline, opts.MemoryBudget/int64(workers))
			}
		})
	}
	wg.Wait()
	var outOfTime, outOfMemory []string
	largest := 0
	for i, v := range verdicts { // partition order: the report is deterministic
		switch {
		case v.illegal != nil:
			reportIllegal(f, v.illegal.model, v.illegal.partials, v.illegal.ops, tps[i])
		case v.outOfMemory > 0:
			outOfMemory = append(outOfMemory, tps[i].String())
			largest = max(largest, v.outOfMemory)
		case v.outOfTime:
			outOfTime = append(outOfTime, tps[i].String())
		}
	}
	if len(outOfTime) > 0 {
		f.report.Result = Unknown
		f.note("unknown: the search used up its time budget of %s before deciding %s (--budget to give it more, 0 for none)",
			opts.Budget, strings.Join(outOfTime, ", "))
	}
	if len(outOfMemory) > 0 {
		f.report.Result = Unknown
		need := int64(largest) * int64(largest) / 8 * int64(workers)
		f.note("unknown: %s: a stretch of %d operations with no quiet moment between them; searching it needs at least %s, over the memory budget of %s (--memory-budget to give it more)",
			strings.Join(outOfMemory, ", "), largest, bytesText(need), bytesText(opts.MemoryBudget))
	}
	f.note("checked %d operations in %d partitions", len(ops), len(tps))
	if opts.HTML != nil {
		if err := visualize(ops, opts); err != nil {
			return Report{}, err
		}
	}
	return f.done(), nil
}

// bytesText renders a size in MiB, or KiB below one MiB.
func bytesText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", (n+1023)>>10)
	}
	return fmt.Sprintf("%d MiB", (n+1<<20-1)>>20)
}

// partVerdict is one partition's outcome: illegal (with what to report),
// out of time, out of memory (the length of the stretch that did not
// fit), or, when all are zero, linearizable.
type partVerdict struct {
	illegal     *illegalStretch
	outOfTime   bool
	outOfMemory int
}

type illegalStretch struct {
	model    porcupine.Model
	partials [][]int
	ops      []porcupine.Operation
}

// stretchMin is the fewest operations worth a search of their own: below
// it, porcupine's per-call setup costs more than the search.
const stretchMin = 64

// checkPartition searches one partition's operations (in invocation
// order), stretch by stretch; see CheckLinearizable.
func checkPartition(ops []porcupine.Operation, deadline time.Time, memory int64) partVerdict {
	state := emptyLog
	for len(ops) > 0 {
		n := stretchEnd(ops)
		stretch := ops[:n]
		ops = ops[n:]
		if int64(n)*int64(n)/8 > memory {
			return partVerdict{outOfMemory: n}
		}
		budget := time.Duration(0)
		if !deadline.IsZero() {
			if budget = time.Until(deadline); budget <= 0 {
				return partVerdict{outOfTime: true}
			}
		}
		model := logModel(state)
		model.Partition = nil
		switch porcupine.CheckOperationsTimeout(model, stretch, budget) {
		case porcupine.Unknown:
			return partVerdict{outOfTime: true}
		case porcupine.Illegal:
			_, info := porcupine.CheckOperationsVerbose(model, stretch, 0)
			return partVerdict{illegal: &illegalStretch{model, info.PartialLinearizations()[0], stretch}}
		}
		state = stateAfter(state, stretch)
	}
	return partVerdict{}
}

// stretchEnd returns the length of the first stretch of ops: at least
// stretchMin operations (or all), ending at a quiet moment after which the
// log is certain (see stateAfter).
func stretchEnd(ops []porcupine.Operation) int {
	maxReturn := int64(math.MinInt64)
	allPlaced, sequential := true, true
	lastSendReturn := int64(math.MinInt64)
	for i, o := range ops {
		if i >= stretchMin && maxReturn < o.Call && (allPlaced || sequential) {
			return i
		}
		maxReturn = max(maxReturn, o.Return)
		if in := o.Input.(*logInput); in.send {
			allPlaced = allPlaced && in.offset != history.NoOffset
			sequential = sequential && lastSendReturn < o.Call
			lastSendReturn = max(lastSendReturn, o.Return)
		}
	}
	return len(ops)
}

// stateAfter is the log a linearizable stretch leaves: every send in it
// returned, so every one took effect, in the order of their offsets when
// all are known, else in the real-time order of sends that never overlap.
func stateAfter(s logState, stretch []porcupine.Operation) logState {
	var sends []logInput
	allPlaced := true
	for _, o := range stretch {
		if in := o.Input.(*logInput); in.send {
			sends = append(sends, *in)
			allPlaced = allPlaced && in.offset != history.NoOffset
		}
	}
	if allPlaced {
		slices.SortStableFunc(sends, func(a, b logInput) int { return cmp.Compare(a.offset, b.offset) })
	}
	for _, in := range sends {
		s = s.push(in.value, in.offset, in.rank)
	}
	return s
}

func visualize(ops []porcupine.Operation, opts LinearizabilityOptions) error {
	model := logModel(emptyLog)
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
	ref := *culprit.Metadata.(*OpRef) // ties the operation back to the history
	v := Violation{Anomaly: Nonlinearizable, TopicPartition: tp, Ops: []OpRef{ref},
		Text: fmt.Sprintf("no order of the partition's operations explains op %d (%s); the longest linearizable prefix holds %d of %d operations",
			ref.Index, model.DescribeOperation(culprit.Input, culprit.Output), longest, len(ops))}
	in2, out := culprit.Input.(*logInput), culprit.Output.(*logOutput)
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
