package history

import (
	"bufio"
	"bytes"
	jsonv1 "encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// DecodeError names the line of a JSON-lines history that could not be read
// and what was expected there.
type DecodeError struct {
	Line   int // 1-based line number
	Reason string
}

func (e *DecodeError) Error() string { return fmt.Sprintf("history: line %d: %s", e.Line, e.Reason) }

// System says what kind of system a history comes from, as the optional
// header line of its file says ({"system":"queue"}). Checkers judge a log's
// history and a queue broker's by different rules, and the ops alone do not
// always tell them apart.
type System string

// Systems a header may name.
const (
	NoSystem    System = ""      // the file has no header: a reader must infer or be told
	LogSystem   System = "log"   // a Kafka-style log: partitions, offsets, consumer groups
	QueueSystem System = "queue" // a RabbitMQ/SQS-style queue broker: each poll names its queue as its group
)

// File is what a JSON-lines history file holds: its ops, and the system its
// header line names, if it has one.
type File struct {
	System System
	Ops    History
}

// WriteJSONLines writes h as one JSON object per op per line (format in the
// package documentation), without a header line.
func WriteJSONLines(w io.Writer, h History) error { return WriteFile(w, File{Ops: h}) }

// WriteFile writes f's header line, when it names a system, then its ops
// as WriteJSONLines does.
func WriteFile(w io.Writer, f File) error {
	bw := bufio.NewWriter(w)
	switch f.System {
	case NoSystem:
	case LogSystem, QueueSystem:
		fmt.Fprintf(bw, "{\"system\":%q}\n", f.System)
	default:
		return fmt.Errorf("history: system %q: want %q or %q", f.System, LogSystem, QueueSystem)
	}
	for i := range f.Ops {
		b, err := f.Ops[i].MarshalJSON()
		if err != nil {
			return fmt.Errorf("history: op %d: %w", i, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadJSONLines reads the ops of a history file (see ReadFile), leaving
// out its header.
func ReadJSONLines(r io.Reader) (History, error) {
	f, err := ReadFile(r)
	return f.Ops, err
}

// ReadFile reads a history written by WriteFile or WriteJSONLines (or by
// anyone else: the reader is strict). Blank lines are skipped. A malformed
// line, a header anywhere but before the first op, or an invalid history
// (see History.Validate) is reported as a *DecodeError naming the line.
func ReadFile(r io.Reader) (File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return File{}, fmt.Errorf("history: %w", err)
	}
	lines, err := DecodeLines(data, 1)
	if err != nil {
		return File{}, err
	}
	return lines.Validated()
}

// Lines are decoded, not yet validated ops and the line each came from.
// Decoding is per line, so a caller may decode parts of a file in
// parallel (Decode on each, joined in file order, then Validated) and get
// the same history and the same errors as ReadJSONLines.
type Lines struct {
	Ops     History
	Line    []int    // Line[i] is the 1-based line Ops[i] came from
	Headers []Header // header lines, in file order (a valid file has at most one)
}

// Header is a header line: the system it names and where it is.
type Header struct {
	System System
	Line   int
}

// MaxLines is how many ops data may hold at most: its lines, blank or not.
func MaxLines(data []byte) int { return bytes.Count(data, []byte{'\n'}) + 1 }

// DecodeLines decodes data, whose first line is line firstLine of its
// file, checking each line on its own (UnmarshalJSON).
func DecodeLines(data []byte, firstLine int) (Lines, error) {
	n := MaxLines(data)
	l := Lines{Ops: make(History, 0, n), Line: make([]int, 0, n)}
	if err := l.Decode(data, firstLine); err != nil {
		return Lines{}, err
	}
	return l, nil
}

// Decode appends the ops of data, whose first line is line firstLine of
// its file, to l: a caller that gave l.Ops and l.Line room for
// MaxLines(data) (slices of one array, say) gets them placed without a copy.
func (l *Lines) Decode(data []byte, firstLine int) error {
	var d lineDecoder
	for line := firstLine; len(data) > 0; line++ {
		b := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			b, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		l.Ops = append(l.Ops, Op{})
		sys, err := d.decode(&l.Ops[len(l.Ops)-1], b)
		if err != nil || sys != NoSystem {
			l.Ops = l.Ops[:len(l.Ops)-1]
		}
		switch {
		case err != nil:
			return &DecodeError{Line: line, Reason: err.Error()}
		case sys != NoSystem:
			l.Headers = append(l.Headers, Header{sys, line})
		default:
			l.Line = append(l.Line, line)
		}
	}
	return nil
}

// Validated checks the decoded lines as a whole (at most one header, before
// every op; History.Validate) and returns them as a file; an error names
// the line that broke the rule.
func (l Lines) Validated() (File, error) {
	if len(l.Headers) > 1 {
		return File{}, &DecodeError{Line: l.Headers[1].Line,
			Reason: fmt.Sprintf("a second header line (the first is line %d): expected one at most", l.Headers[0].Line)}
	}
	f := File{Ops: l.Ops}
	if len(l.Headers) == 1 {
		h := l.Headers[0]
		if len(l.Line) > 0 && l.Line[0] < h.Line {
			return File{}, &DecodeError{Line: h.Line,
				Reason: fmt.Sprintf("a header line after the first op (line %d): expected it before every op", l.Line[0])}
		}
		f.System = h.System
	}
	if err := l.Ops.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return File{}, &DecodeError{Line: l.Line[ve.Index], Reason: ve.Reason}
		}
		return File{}, err
	}
	return f, nil
}

// The wire shape of a line, used both ways. Every field is a pointer so
// that decoding can tell a missing field from a zero one, and encoding
// omits what an op does not have. Field order here is the order on the line.
type (
	wireOp struct {
		Index   *int       `json:"index,omitempty"`
		Time    *int64     `json:"time,omitempty"`
		Process *int       `json:"process,omitempty"`
		Type    *Type      `json:"type,omitempty"`
		F       *Func      `json:"f,omitempty"`
		Invoke  *int       `json:"invoke,omitempty"`
		Value   *wireValue `json:"value,omitempty"`
		Error   *string    `json:"error,omitempty"`
	}
	// wireValue is the union of every function's value fields; valueFields
	// says which belong to which function.
	wireValue struct {
		Topic           *string       `json:"topic,omitempty"`
		Partition       *int32        `json:"partition,omitempty"`
		Key             *string       `json:"key,omitempty"`
		Value           *string       `json:"value,omitempty"`
		Offset          *int64        `json:"offset,omitempty"`
		Group           *string       `json:"group,omitempty"`
		ReadCommitted   *bool         `json:"read_committed,omitempty"`
		Share           *bool         `json:"share,omitempty"`
		Reads           *[]wireReads  `json:"reads,omitempty"`
		Offsets         *[]wireOffset `json:"offsets,omitempty"`
		Topics          *[]string     `json:"topics,omitempty"`
		Partitions      *[]wireTP     `json:"partitions,omitempty"`
		SeekToBeginning *bool         `json:"seek_to_beginning,omitempty"`
		Txn             *string       `json:"txn,omitempty"`
		Ops             *[]wireMicro  `json:"ops,omitempty"`
		Commit          *wireCommit   `json:"commit,omitempty"`
		Reset           *bool         `json:"reset,omitempty"`
		Acks            *[]RecordAck  `json:"acks,omitempty"`
	}
	// wireMicro is one micro-op of a txn: its function, then that function's
	// value fields.
	wireMicro struct {
		F *Func `json:"f,omitempty"`
		wireValue
	}
	// wireCommit is the offsets a txn commits for a group.
	wireCommit struct {
		Group   *string       `json:"group,omitempty"`
		Offsets *[]wireOffset `json:"offsets,omitempty"`
	}
	wireTP struct {
		Topic     *string `json:"topic,omitempty"`
		Partition *int32  `json:"partition,omitempty"`
	}
	wireReads struct {
		Topic     *string   `json:"topic,omitempty"`
		Partition *int32    `json:"partition,omitempty"`
		Records   *[]Record `json:"records,omitempty"`
	}
	wireOffset struct {
		Topic     *string `json:"topic,omitempty"`
		Partition *int32  `json:"partition,omitempty"`
		Offset    *int64  `json:"offset,omitempty"`
	}
)

// valueFields lists, per function, the value fields a line must have and
// those it may have; any other value field is an error.
var valueFields = map[Func]struct{ required, optional []string }{
	Send:      {[]string{"topic", "partition", "value"}, []string{"key", "offset"}},
	Poll:      {nil, []string{"group", "reads", "read_committed", "share"}},
	Commit:    {[]string{"offsets"}, []string{"group"}},
	Assign:    {[]string{"partitions"}, []string{"group", "seek_to_beginning"}},
	Subscribe: {[]string{"topics"}, []string{"group", "partitions"}},
	Txn:       {[]string{"txn"}, []string{"ops", "commit"}},
	Seek:      {[]string{"offsets"}, []string{"group", "reset"}},
	Ack:       {[]string{"group", "topic", "partition", "acks"}, nil},
}

// expected describes, by field name, what a field must hold.
var expected = map[string]string{
	"index": "an integer", "time": "an integer (virtual nanoseconds)", "process": "an integer",
	"type": `"invoke", "ok", "fail" or "info"`, "f": `"send", "poll", "commit", "assign", "subscribe", "txn", "seek" or "ack"`,
	"invoke": "the index of the invocation this op completes", "error": "a string",
	"topic": "a topic name", "partition": "a partition number", "key": "a string", "value.value": "a string",
	"offset": "an integer offset", "group": "a group name", "reads": "a list of per-partition reads",
	"records": "a list of [offset, value] pairs", "offsets": "a list of committed offsets",
	"topics": "a list of topic names", "partitions": "a list of partitions", "seek_to_beginning": "true or false",
	"value": "an object", "system": `"log" or "queue"`,
	"read_committed": "true or false", "txn": "a transactional id", "ops": "a list of send and poll micro-ops",
	"commit": "an object with a group and offsets", "value.ops.value": "a string", "value.ops.f": `"send" or "poll"`,
	"reset": "true or false", "share": "true or false", "acks": `a list of [offset, type] pairs such as [7,"accept"]`,
}

func ptr[T any](v T) *T { return &v }

// MarshalJSON encodes a record as an [offset, value] pair, or, for a record a share
// consumer acquired, an [offset, value, delivery count] triple.
func (r Record) MarshalJSON() ([]byte, error) {
	if !utf8.ValidString(r.Value) {
		return nil, fmt.Errorf("history: value %q is not valid UTF-8", r.Value)
	}
	v, err := jsonv1.Marshal(r.Value)
	if err != nil {
		return nil, err
	}
	if r.DeliveryCount != 0 {
		return fmt.Appendf(nil, "[%d,%s,%d]", r.Offset, v, r.DeliveryCount), nil
	}
	return fmt.Appendf(nil, "[%d,%s]", r.Offset, v), nil
}

// MarshalJSON encodes an acknowledgement as an [offset, type] pair.
func (a RecordAck) MarshalJSON() ([]byte, error) {
	t, err := jsonv1.Marshal(a.Type)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "[%d,%s]", a.Offset, t), nil
}

// ackError is what a malformed [offset, type] pair reports.
type ackError struct{ got string }

func (e *ackError) Error() string {
	return fmt.Sprintf(`field "acks": expected an [offset, type] pair such as [7,"accept"], got %s`, e.got)
}

// recordError is what a malformed [offset, value] pair reports.
type recordError struct{ got string }

func (e *recordError) Error() string {
	return fmt.Sprintf(`field "records": expected an [offset, value] pair such as [7,"v"], got %s`, e.got)
}

// MarshalJSON encodes one op as one line of the JSON-lines format.
func (op Op) MarshalJSON() ([]byte, error) {
	w := wireOp{Index: ptr(op.Index), Time: ptr(op.Time), Process: ptr(op.Process), Type: ptr(op.Type), F: ptr(op.F)}
	if op.Type != Invoke {
		w.Invoke = ptr(op.Invoke)
	}
	if op.Error != "" {
		w.Error = ptr(op.Error)
	}
	v, err := op.wireValue()
	if err != nil {
		return nil, err
	}
	w.Value = v
	return jsonv1.Marshal(w)
}

// wireValue is the value object of op's line: the fields of its function.
func (op *Op) wireValue() (*wireValue, error) {
	v := &wireValue{}
	switch {
	case op.Send != nil:
		v.Topic, v.Partition, v.Value = ptr(op.Send.Topic), ptr(op.Send.Partition), ptr(op.Send.Value)
		if op.Send.Key != "" {
			v.Key = ptr(op.Send.Key)
		}
		if op.Send.Offset != NoOffset {
			v.Offset = ptr(op.Send.Offset)
		}
	case op.Poll != nil:
		setGroup(v, op.Poll.Group)
		if op.Poll.ReadCommitted {
			v.ReadCommitted = ptr(true)
		}
		if op.Poll.Share {
			v.Share = ptr(true)
		}
		if len(op.Poll.Reads) > 0 {
			reads := make([]wireReads, len(op.Poll.Reads))
			for i, pr := range op.Poll.Reads {
				reads[i] = wireReads{Topic: ptr(pr.Topic), Partition: ptr(pr.Partition), Records: ptr(append([]Record{}, pr.Records...))}
			}
			v.Reads = &reads
		}
	case op.Commit != nil:
		setGroup(v, op.Commit.Group)
		v.Offsets = wireOffsets(op.Commit.Offsets)
	case op.Assign != nil:
		setGroup(v, op.Assign.Group)
		if op.F == Subscribe {
			v.Topics = ptr(append([]string{}, op.Assign.Topics...))
		}
		// Required lists are written even when empty (assigning nothing);
		// optional ones only when set.
		if op.F == Assign || len(op.Assign.Partitions) > 0 {
			parts := make([]wireTP, len(op.Assign.Partitions))
			for i, tp := range op.Assign.Partitions {
				parts[i] = wireTP{Topic: ptr(tp.Topic), Partition: ptr(tp.Partition)}
			}
			v.Partitions = &parts
		}
		if op.Assign.SeekToBeginning {
			v.SeekToBeginning = ptr(true)
		}
	case op.Seek != nil:
		setGroup(v, op.Seek.Group)
		v.Offsets = wireOffsets(op.Seek.Offsets)
		if op.Seek.Reset {
			v.Reset = ptr(true)
		}
	case op.Txn != nil:
		v.Txn = ptr(op.Txn.ID)
		if len(op.Txn.Ops) > 0 {
			ops := make([]wireMicro, len(op.Txn.Ops))
			for i, m := range op.Txn.Ops {
				inner := Op{F: m.F, Send: m.Send, Poll: m.Poll}
				mv, err := inner.wireValue()
				if err != nil {
					return nil, fmt.Errorf("txn micro-op %d: %w", i, err)
				}
				ops[i] = wireMicro{F: ptr(m.F), wireValue: *mv}
			}
			v.Ops = &ops
		}
		if c := op.Txn.Offsets; c != nil {
			v.Commit = &wireCommit{Offsets: wireOffsets(c.Offsets)}
			if c.Group != "" {
				v.Commit.Group = ptr(c.Group)
			}
		}
	case op.Ack != nil:
		v.Group, v.Topic, v.Partition = ptr(op.Ack.Group), ptr(op.Ack.Topic), ptr(op.Ack.Partition)
		v.Acks = ptr(append([]RecordAck{}, op.Ack.Acks...))
	default:
		return nil, errors.New("op has no value")
	}
	if op.Send != nil && !utf8.ValidString(op.Send.Value+op.Send.Key) {
		return nil, fmt.Errorf("history: send value %q or key %q is not valid UTF-8", op.Send.Value, op.Send.Key)
	}
	return v, nil
}

// wireOffsets are committed offsets as written, a list even when empty.
func wireOffsets(offsets []PartitionOffset) *[]wireOffset {
	out := make([]wireOffset, len(offsets))
	for i, o := range offsets {
		out[i] = wireOffset{Topic: ptr(o.Topic), Partition: ptr(o.Partition), Offset: ptr(o.Offset)}
	}
	return &out
}

func setGroup(v *wireValue, group string) {
	if group != "" {
		v.Group = ptr(group)
	}
}

// UnmarshalJSON decodes one line of the JSON-lines format. It checks the
// line on its own; History.Validate checks how lines fit together.
func (op *Op) UnmarshalJSON(b []byte) error {
	var d lineDecoder
	sys, err := d.decode(op, b)
	if err == nil && sys != NoSystem {
		return fmt.Errorf("a header line naming system %q, not an op", sys)
	}
	return err
}

// explain turns the tokenizer's error into what the line should have held.
func explain(err error, line []byte) error {
	var syn *jsontext.SyntacticError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("expected a JSON object, got an incomplete one: %s", snippet(line))
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return fmt.Errorf("field %q appears twice in one object; expected each field once", fieldPath(slices.Collect(syn.JSONPointer.Tokens())))
	case errors.As(err, &syn):
		return fmt.Errorf("expected a JSON object, got invalid JSON (%v at byte %d) in %s", syn.Err, syn.ByteOffset+1, snippet(line))
	}
	return err
}

// fieldPath renders the tokens of a JSON pointer as a dotted field path
// without array indexes ("/value/partitions/0/partition" as
// "value.partitions.partition").
func fieldPath(tokens []string) string {
	var names []string
	for _, tok := range tokens {
		if _, err := strconv.Atoi(tok); err == nil && len(names) > 0 && names[len(names)-1] != "" {
			continue
		}
		names = append(names, tok)
	}
	return strings.Join(names, ".")
}

// expectedOf describes a field by its path: "value.value" is a send's
// value, other fields are known by their last name.
func expectedOf(path string) string {
	if d, ok := expected[path]; ok {
		return d
	}
	return expected[path[strings.LastIndexByte(path, '.')+1:]]
}

// snippet quotes at most 40 bytes of raw JSON for an error message.
func snippet(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}
