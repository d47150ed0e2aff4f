package checker

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/model/history"
)

// Anomaly names what a checker found. Names follow Jepsen's Kafka checker
// where Jepsen has one (see checkers.md §1.4).
type Anomaly string

// Queue anomalies (CheckLog).
const (
	// InconsistentOffsets: one offset of a partition holds two or more values.
	InconsistentOffsets Anomaly = "inconsistent-offsets"
	// Duplicate: one value sits at two or more offsets of a partition.
	Duplicate Anomaly = "duplicate"
	// LostWrite: an acknowledged value was never read by an ok poll, although
	// an ok poll read a value at a later index (Jepsen's rule). Where says if
	// the lost value lies before every read value (prefix) or between read
	// values (middle).
	LostWrite Anomaly = "lost-write"
	// Unseen: an acknowledged value that is not a lost-write was not read by
	// an ok poll in time (UnseenRule): the suffix of the log nobody read.
	Unseen Anomaly = "unseen"
	// PollSkip: a process's poll started more than one index after where its
	// previous ok poll of the partition ended.
	PollSkip Anomaly = "poll-skip"
	// NonmonotonicPoll: a process's poll started at or before where its
	// previous ok poll of the partition ended.
	NonmonotonicPoll Anomaly = "nonmonotonic-poll"
	// IntPollSkip: inside one poll, consecutive records of a partition are
	// more than one index apart.
	IntPollSkip Anomaly = "int-poll-skip"
	// IntNonmonotonicPoll: inside one poll, a record of a partition is at or
	// before the previous one.
	IntNonmonotonicPoll Anomaly = "int-nonmonotonic-poll"
	// NonmonotonicSend: a process's send landed at or before the index of its
	// previous send to the partition.
	NonmonotonicSend Anomaly = "nonmonotonic-send"
	// G1a (aborted read): an ok poll read a value whose send failed or whose
	// transaction aborted. Allowed when the reader is a read_uncommitted poll
	// and the writer a transaction: that level returns aborted writes.
	G1a Anomaly = "G1a"
	// Unexpected: an ok poll read a value that no op sent to that partition
	// (corruption, misrouting). Jepsen's NATS checker has it; Kafka's lacks it.
	Unexpected Anomaly = "unexpected"
	// NonmonotonicCommit: a group's committed offset for a partition went
	// backwards: an ok commit invoked after another ok commit completed
	// committed a lower offset. Jepsen lacks it.
	NonmonotonicCommit Anomaly = "nonmonotonic-commit"
)

// Transaction anomalies (CheckLog), named as in Jepsen's Kafka workload.
const (
	// IntSendSkip: two sends of one transaction to a partition landed with
	// other values between them. Always allowed: other producers' writes
	// interleave with a transaction's (Jepsen allows it too).
	IntSendSkip Anomaly = "int-send-skip"
	// IntNonmonotonicSend: a transaction's later send to a partition landed at
	// or before its earlier one.
	IntNonmonotonicSend Anomaly = "int-nonmonotonic-send"
	// G1b (intermediate read): a read_committed poll returned some of a
	// committed transaction's writes to a partition and read past where a
	// later write of the same transaction to that partition sits, without it.
	G1b Anomaly = "G1b"
	// G0 (write cycle): a cycle of ww dependencies between transactions.
	// Always allowed: Kafka does not isolate one transaction's writes from
	// another's (Jepsen allows it too).
	G0 Anomaly = "G0"
	// G1c (cyclic information flow): a cycle of ww and wr dependencies with at
	// least one wr. A violation when every edge is a wr seen by read_committed
	// polls; allowed when a ww or read_uncommitted wr is needed to close it.
	G1c Anomaly = "G1c"
)

// Delivery anomalies (CheckDelivery); violations only when promised.
const (
	// Undelivered: a group never read an acknowledged value (breaks NoLoss).
	Undelivered Anomaly = "undelivered"
	// Redelivered: a group read an acknowledged value more than once (breaks
	// NoDuplicates).
	Redelivered Anomaly = "redelivered"
	// MissingOutput: a pipeline's committed input value never appeared in its
	// output topic, as read_committed polls read it (breaks exactly-once).
	MissingOutput Anomaly = "missing-output"
	// DuplicateOutput: a pipeline's input value appeared in its output topic
	// at two or more offsets, as read_committed polls read it (breaks
	// exactly-once).
	DuplicateOutput Anomaly = "duplicate-output"
)

// Nonlinearizable: no linearization of a partition's sends and polls exists
// (CheckLinearizable).
const Nonlinearizable Anomaly = "nonlinearizable"

// Unconsumed: a reader active after the faults healed did not read an
// acknowledged value within the liveness bound (CheckLiveness).
const Unconsumed Anomaly = "unconsumed"

// Unavailable: a send invoked at or after the heal was not acknowledged
// within the liveness bound for writes (CheckLiveness with AckWithin): the
// faults still in force were ones the configuration promises to tolerate.
const Unavailable Anomaly = "unavailable"

// Anomalies lists every anomaly a checker of this package reports, in the
// order of the documentation (checker/doc.go, notes/checkers.md).
func Anomalies() []Anomaly {
	return []Anomaly{InconsistentOffsets, Duplicate, LostWrite, Unseen, PollSkip, NonmonotonicPoll,
		IntPollSkip, IntNonmonotonicPoll, NonmonotonicSend, G1a, Unexpected, NonmonotonicCommit,
		IntSendSkip, IntNonmonotonicSend, G1b, G0, G1c,
		Undelivered, Redelivered, MissingOutput, DuplicateOutput, Nonlinearizable, Unconsumed, Unavailable, Reordered,
		ShareLost, ShareBeyondLimit, ShareRedeliveredAfterAccept}
}

// ParseAnomaly reads an anomaly by its name, refusing names no checker
// reports (an --allow with a typo must not pass silently).
func ParseAnomaly(name string) (Anomaly, error) {
	for _, a := range Anomalies() {
		if string(a) == name {
			return a, nil
		}
	}
	names := make([]string, len(Anomalies()))
	for i, a := range Anomalies() {
		names[i] = string(a)
	}
	return "", fmt.Errorf("anomaly %q: no checker reports it; want one of %s", name, strings.Join(names, ", "))
}

// Checker names, the Checker field of a Violation or Note.
const (
	LogChecker             = "log"
	DeliveryChecker        = "delivery"
	LinearizabilityChecker = "linearizability"
	LivenessChecker        = "liveness"
	// InvariantChecker names findings of the simulator's invariant checks,
	// made on broker state after every event rather than on the history
	// (model/cluster). They reach a Report through Collect.
	InvariantChecker = "invariant"
)

// Verdict is a report's overall result.
type Verdict string

// Verdicts, as Jepsen's :valid? true / false / :unknown.
const (
	Valid   Verdict = "valid"   // no violation found
	Invalid Verdict = "invalid" // at least one violation
	Unknown Verdict = "unknown" // no violation found, but a check did not finish
)

// OpRef names one operation of the history.
type OpRef struct {
	Index   int          `json:"index"` // the completion's index; the invocation's if it never completed
	Process int          `json:"process"`
	F       history.Func `json:"f"`
	Type    history.Type `json:"type"`  // completion type; invoke if it never completed
	Start   int64        `json:"start"` // invocation time
	End     int64        `json:"end"`   // completion time; -1 if it never completed
}

// Violation is one finding of one checker.
type Violation struct {
	Checker string  `json:"checker"`
	Anomaly Anomaly `json:"anomaly"`
	history.TopicPartition
	Group string `json:"group,omitempty"`
	// Offsets and Values involved; what they hold depends on the anomaly
	// (the Text says it in words). Long lists (skipped, unseen, undelivered
	// values) are capped at 32 entries; the Text gives the full count.
	Offsets []int64  `json:"offsets,omitempty"`
	Values  []string `json:"values,omitempty"`
	// Ops are the operations that demonstrate the anomaly.
	Ops []OpRef `json:"ops,omitempty"`
	// Time is where the anomaly began: the earliest invocation among Ops
	// (for liveness, the first deadline missed). Callers map it to trace
	// steps.
	Time int64 `json:"time"`
	// Step is the trace step where the anomaly began, for findings made
	// inside a simulation (invariants); 0 when unknown.
	Step uint64 `json:"step,omitempty"`
	// Where is, for lost-write, the lost value's place in the partition's
	// write order: "prefix" or "middle".
	Where string `json:"where,omitempty"`
	// Cycle is, for G0 and G1c, the cycle's dependencies in order, each from
	// one transaction to the next; the last leads back to the first.
	Cycle []Dependency `json:"cycle,omitempty"`
	Text  string       `json:"text"`
}

// Note is a finding that is not a violation: statistics, allowed
// duplicates, the classification of lost writes, why a check is unknown.
type Note struct {
	Checker string `json:"checker"`
	Text    string `json:"text"`
}

// Report is what every checker returns, so reports of several checkers merge
// into one.
type Report struct {
	Result     Verdict     `json:"result"`
	Violations []Violation `json:"violations"`
	// Allowed are anomalies found but permitted by the options (for example
	// poll-skip when consumers subscribe): reported, counted, not failing.
	Allowed []Violation `json:"allowed,omitempty"`
	Notes   []Note      `json:"notes,omitempty"`
	// Counts counts findings per anomaly, violations and allowed alike.
	Counts   map[Anomaly]int `json:"counts"`
	Delivery []GroupDelivery `json:"delivery,omitempty"`
}

// listMax caps long lists (skipped, unseen, undelivered values) in a
// Violation and in texts.
const listMax = 32

// Merge combines reports into one, sorted deterministically.
func Merge(reports ...Report) Report {
	out := Report{Result: Valid, Counts: map[Anomaly]int{}}
	for _, r := range reports {
		out.Violations = append(out.Violations, r.Violations...)
		out.Allowed = append(out.Allowed, r.Allowed...)
		out.Notes = append(out.Notes, r.Notes...)
		out.Delivery = append(out.Delivery, r.Delivery...)
		for a, n := range r.Counts {
			out.Counts[a] += n
		}
		if r.Result == Unknown {
			out.Result = Unknown
		}
	}
	out.finish()
	return out
}

// Collect makes a report of findings made outside this package, such as the
// simulator's invariant checks: it counts the violations per anomaly, sorts
// them like any other report's and derives the verdict. Each violation must
// name its Checker.
func Collect(violations []Violation, notes []Note) Report {
	r := Report{Violations: slices.Clone(violations), Notes: slices.Clone(notes), Counts: map[Anomaly]int{}}
	for _, v := range violations {
		r.Counts[v.Anomaly]++
	}
	r.finish()
	return r
}

// finish sorts everything and derives the verdict.
func (r *Report) finish() {
	if r.Result == "" {
		r.Result = Valid
	}
	if len(r.Violations) > 0 {
		r.Result = Invalid
	}
	if r.Violations == nil {
		r.Violations = []Violation{} // JSON: an empty list, not null
	}
	if r.Counts == nil {
		r.Counts = map[Anomaly]int{}
	}
	slices.SortStableFunc(r.Violations, compareViolations)
	slices.SortStableFunc(r.Allowed, compareViolations)
	slices.SortStableFunc(r.Notes, func(a, b Note) int {
		return cmp.Or(cmp.Compare(a.Checker, b.Checker), cmp.Compare(a.Text, b.Text))
	})
	slices.SortStableFunc(r.Delivery, func(a, b GroupDelivery) int { return cmp.Compare(a.Group, b.Group) })
}

func compareViolations(a, b Violation) int {
	return cmp.Or(
		cmp.Compare(a.Checker, b.Checker),
		cmp.Compare(a.Anomaly, b.Anomaly),
		a.TopicPartition.Compare(b.TopicPartition),
		cmp.Compare(a.Group, b.Group),
		slices.Compare(a.Offsets, b.Offsets),
		cmp.Compare(a.Time, b.Time),
		slices.Compare(a.Values, b.Values),
		cmp.Compare(a.Text, b.Text),
	)
}

// WriteText renders the report for people: plain text, one finding per
// line, stable for golden files. Colour is the caller's business.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "result: %s (%d violations, %d allowed)\n", r.Result, len(r.Violations), len(r.Allowed))
	for _, v := range r.Violations {
		b.WriteString("violation " + v.line() + "\n")
	}
	for _, v := range r.Allowed {
		b.WriteString("allowed " + v.line() + "\n")
	}
	for _, d := range r.Delivery {
		b.WriteString("delivery " + d.line() + "\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note %s: %s\n", n.Checker, n.Text)
	}
	if len(r.Counts) > 0 {
		names := make([]Anomaly, 0, len(r.Counts))
		for a := range r.Counts {
			names = append(names, a)
		}
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, a := range names {
			parts[i] = fmt.Sprintf("%s %d", a, r.Counts[a])
		}
		b.WriteString("counts: " + strings.Join(parts, ", ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// String is WriteText into a string.
func (r Report) String() string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func (v Violation) line() string {
	subject := v.TopicPartition.String()
	if v.Group != "" {
		subject += " group " + v.Group
	}
	at := formatTime(v.Time)
	if v.Step > 0 {
		at += fmt.Sprintf(" (step %d)", v.Step)
	}
	return fmt.Sprintf("%s %s %s at %s: %s", v.Checker, v.Anomaly, subject, at, v.Text)
}

// formatTime renders virtual nanoseconds as a duration since the start.
func formatTime(t int64) string { return "t=" + time.Duration(t).String() }

// findings collects violations of one checker, routing allowed anomalies
// aside and counting both.
type findings struct {
	checker string
	allow   map[Anomaly]bool
	report  Report
}

func newFindings(checker string, allow []Anomaly) *findings {
	f := &findings{checker: checker, allow: map[Anomaly]bool{}, report: Report{Counts: map[Anomaly]int{}}}
	for _, a := range allow {
		f.allow[a] = true
	}
	return f
}

// add records v, deriving Time from its ops.
func (f *findings) add(v Violation) {
	if len(v.Ops) > 0 {
		v.Time = v.Ops[0].Start
		for _, o := range v.Ops[1:] {
			v.Time = min(v.Time, o.Start)
		}
	}
	f.addAt(v)
}

// addAt records v with the Time it already has.
func (f *findings) addAt(v Violation) {
	v.Checker = f.checker
	f.report.Counts[v.Anomaly]++
	if f.allow[v.Anomaly] {
		f.report.Allowed = append(f.report.Allowed, v)
	} else {
		f.report.Violations = append(f.report.Violations, v)
	}
}

// allowing allows the anomalies until the returned function is called:
// for findings allowed by where they occur, not by what they are.
func (f *findings) allowing(anomalies ...Anomaly) (restore func()) {
	was := make([]bool, len(anomalies))
	for i, a := range anomalies {
		was[i], f.allow[a] = f.allow[a], true
	}
	return func() {
		for i, a := range anomalies {
			f.allow[a] = was[i]
		}
	}
}

func (f *findings) note(format string, args ...any) {
	f.report.Notes = append(f.report.Notes, Note{Checker: f.checker, Text: fmt.Sprintf(format, args...)})
}

func (f *findings) done() Report {
	f.report.finish()
	return f.report
}

// quoteList renders values as "a", "b", ... with at most listMax shown and
// the total count when some are left out.
func quoteList(values []string, total int) string {
	shown := values[:min(len(values), listMax)]
	parts := make([]string, len(shown))
	for i, v := range shown {
		parts[i] = strconv.Quote(v)
	}
	s := strings.Join(parts, ", ")
	if total > len(shown) {
		s += fmt.Sprintf(", ... (%d in all)", total)
	}
	return s
}

// WithoutSteps is the report with its findings' steps cleared: what a judge of a history
// file, which knows operations' times but not the run's steps, says of the same history.
func (r Report) WithoutSteps() Report {
	r.Violations, r.Allowed = slices.Clone(r.Violations), slices.Clone(r.Allowed)
	for _, vs := range [][]Violation{r.Violations, r.Allowed} {
		for i := range vs {
			vs[i].Step = 0
		}
	}
	return r
}
