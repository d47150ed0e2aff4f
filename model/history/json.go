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

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DecodeError names the line of a JSON-lines history that could not be read
// and what was expected there.
type DecodeError struct {
	Line   int // 1-based line number
	Reason string
}

func (e *DecodeError) Error() string { return fmt.Sprintf("history: line %d: %s", e.Line, e.Reason) }

// WriteJSONLines writes h as one JSON object per op per line (format in the
// package documentation).
func WriteJSONLines(w io.Writer, h History) error {
	bw := bufio.NewWriter(w)
	for i := range h {
		b, err := h[i].MarshalJSON()
		if err != nil {
			return fmt.Errorf("history: op %d: %w", i, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadJSONLines reads a history written by WriteJSONLines (or by anyone
// else: the reader is strict). Blank lines are skipped. A malformed line or
// an invalid history (see History.Validate) is reported as a *DecodeError
// naming the line.
func ReadJSONLines(r io.Reader) (History, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	lines, err := DecodeLines(data, 1)
	if err != nil {
		return nil, err
	}
	return lines.Validated()
}

// Lines are decoded, not yet validated ops and the line each came from.
// Decoding is per line, so a caller may decode parts of a file in
// parallel (DecodeLines on each, JoinLines, Validated) and get the same
// history and the same errors as ReadJSONLines.
type Lines struct {
	Ops  History
	Line []int // Line[i] is the 1-based line Ops[i] came from
}

// DecodeLines decodes data, whose first line is line firstLine of its
// file, checking each line on its own (UnmarshalJSON).
func DecodeLines(data []byte, firstLine int) (Lines, error) {
	n := bytes.Count(data, []byte{'\n'}) + 1
	var d lineDecoder
	out := Lines{Ops: make(History, 0, n), Line: make([]int, 0, n)}
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
		var op Op
		if err := d.decode(&op, b); err != nil {
			return Lines{}, &DecodeError{Line: line, Reason: err.Error()}
		}
		out.Ops = append(out.Ops, op)
		out.Line = append(out.Line, line)
	}
	return out, nil
}

// JoinLines concatenates decoded parts in file order.
func JoinLines(parts ...Lines) Lines {
	if len(parts) == 1 {
		return parts[0]
	}
	var out Lines
	for _, p := range parts {
		out.Ops = append(out.Ops, p.Ops...)
		out.Line = append(out.Line, p.Line...)
	}
	return out
}

// Validated checks the decoded ops as a whole (History.Validate) and
// returns them as a history; an error names the line that broke the rule.
func (l Lines) Validated() (History, error) {
	if err := l.Ops.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return nil, &DecodeError{Line: l.Line[ve.Index], Reason: ve.Reason}
		}
		return nil, err
	}
	return l.Ops, nil
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
		Reads           *[]wireReads  `json:"reads,omitempty"`
		Offsets         *[]wireOffset `json:"offsets,omitempty"`
		Topics          *[]string     `json:"topics,omitempty"`
		Partitions      *[]wireTP     `json:"partitions,omitempty"`
		SeekToBeginning *bool         `json:"seek_to_beginning,omitempty"`
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
	Poll:      {nil, []string{"group", "reads"}},
	Commit:    {[]string{"offsets"}, []string{"group"}},
	Assign:    {[]string{"partitions"}, []string{"group", "seek_to_beginning"}},
	Subscribe: {[]string{"topics"}, []string{"group", "partitions"}},
}

// expected describes, by field name, what a field must hold.
var expected = map[string]string{
	"index": "an integer", "time": "an integer (virtual nanoseconds)", "process": "an integer",
	"type": `"invoke", "ok", "fail" or "info"`, "f": `"send", "poll", "commit", "assign" or "subscribe"`,
	"invoke": "the index of the invocation this op completes", "error": "a string",
	"topic": "a topic name", "partition": "a partition number", "key": "a string", "value.value": "a string",
	"offset": "an integer offset", "group": "a group name", "reads": "a list of per-partition reads",
	"records": "a list of [offset, value] pairs", "offsets": "a list of committed offsets",
	"topics": "a list of topic names", "partitions": "a list of partitions", "seek_to_beginning": "true or false",
	"value": "an object",
}

func ptr[T any](v T) *T { return &v }

// MarshalJSON encodes a record as an [offset, value] pair.
func (r Record) MarshalJSON() ([]byte, error) {
	if !utf8.ValidString(r.Value) {
		return nil, fmt.Errorf("history: value %q is not valid UTF-8", r.Value)
	}
	v, err := jsonv1.Marshal(r.Value)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "[%d,%s]", r.Offset, v), nil
}

// recordError is what a malformed [offset, value] pair reports.
type recordError struct{ got string }

func (e *recordError) Error() string {
	return fmt.Sprintf(`field "records": expected an [offset, value] pair such as [7,"v"], got %s`, e.got)
}

// UnmarshalJSONFrom decodes an [offset, value] pair: an integer and a
// string, nothing else (no null, no float, no third element).
func (r *Record) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err // syntax: reported as invalid JSON
	}
	fail := func() error { return &recordError{snippet(raw)} }
	elems := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := elems.ReadToken(); err != nil || tok.Kind() != '[' {
		return fail()
	}
	off, err := elems.ReadValue()
	if err != nil || off.Kind() != '0' {
		return fail()
	}
	if r.Offset, err = strconv.ParseInt(string(off), 10, 64); err != nil {
		return fail()
	}
	tok, err := elems.ReadToken()
	if err != nil || tok.Kind() != '"' {
		return fail()
	}
	r.Value = tok.String()
	if tok, err := elems.ReadToken(); err != nil || tok.Kind() != ']' {
		return fail()
	}
	return nil
}

// MarshalJSON encodes one op as one line of the JSON-lines format.
func (op Op) MarshalJSON() ([]byte, error) {
	w := wireOp{Index: ptr(op.Index), Time: ptr(op.Time), Process: ptr(op.Process), Type: ptr(op.Type), F: ptr(op.F),
		Value: &wireValue{}}
	if op.Type != Invoke {
		w.Invoke = ptr(op.Invoke)
	}
	if op.Error != "" {
		w.Error = ptr(op.Error)
	}
	v := w.Value
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
		if len(op.Poll.Reads) > 0 {
			reads := make([]wireReads, len(op.Poll.Reads))
			for i, pr := range op.Poll.Reads {
				reads[i] = wireReads{Topic: ptr(pr.Topic), Partition: ptr(pr.Partition), Records: ptr(append([]Record{}, pr.Records...))}
			}
			v.Reads = &reads
		}
	case op.Commit != nil:
		setGroup(v, op.Commit.Group)
		offsets := make([]wireOffset, len(op.Commit.Offsets))
		for i, o := range op.Commit.Offsets {
			offsets[i] = wireOffset{Topic: ptr(o.Topic), Partition: ptr(o.Partition), Offset: ptr(o.Offset)}
		}
		v.Offsets = &offsets
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
	default:
		return nil, errors.New("op has no value")
	}
	if op.Send != nil && !utf8.ValidString(op.Send.Value+op.Send.Key) {
		return nil, fmt.Errorf("history: send value %q or key %q is not valid UTF-8", op.Send.Value, op.Send.Key)
	}
	return jsonv1.Marshal(w)
}

func setGroup(v *wireValue, group string) {
	if group != "" {
		v.Group = ptr(group)
	}
}

// strict are the decoding rules of a line: besides the JSON grammar,
// invalid UTF-8 and duplicate member names are errors (the defaults of
// go-json-experiment/json), and so are unknown member names: a typo or a
// field meant for another tool never passes silently.
var strict = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false))

// UnmarshalJSON decodes one line of the JSON-lines format. It checks the
// line on its own; History.Validate checks how lines fit together.
func (op *Op) UnmarshalJSON(b []byte) error {
	var d lineDecoder
	return d.decode(op, b)
}

// lineDecoder decodes lines one after another, reusing its buffers.
type lineDecoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

func (d *lineDecoder) decode(op *Op, b []byte) error {
	if !utf8.Valid(b) {
		at := 0
		for at < len(b) {
			r, size := utf8.DecodeRune(b[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return fmt.Errorf("invalid UTF-8 at byte %d (%q): expected text in UTF-8, raw or \\u-escaped",
			at+1, b[at:min(len(b), at+4)])
	}
	d.r.Reset(b)
	if d.dec == nil {
		d.dec = jsontext.NewDecoder(&d.r, strict)
	} else {
		d.dec.Reset(&d.r, strict)
	}
	var w wireOp
	if err := json.UnmarshalDecode(d.dec, &w, strict); err != nil {
		return explain(err, b)
	}
	if len(bytes.TrimSpace(b[d.dec.InputOffset():])) > 0 {
		return fmt.Errorf("expected one JSON object, found more after it")
	}
	return op.fromWire(&w)
}

// fromWire checks a decoded line's fields and builds the op.
func (op *Op) fromWire(w *wireOp) error {
	for _, f := range []struct {
		name    string
		present bool
	}{{"index", w.Index != nil}, {"time", w.Time != nil}, {"process", w.Process != nil},
		{"type", w.Type != nil}, {"f", w.F != nil}, {"value", w.Value != nil}} {
		if !f.present {
			return fmt.Errorf("missing or null field %q (expected %s)", f.name, expected[f.name])
		}
	}
	out := Op{Index: *w.Index, Time: *w.Time, Process: *w.Process, Type: *w.Type, F: *w.F, Invoke: -1}
	if !out.Type.valid() {
		return fmt.Errorf(`field "type": expected %s, got %q`, expected["type"], out.Type)
	}
	if !out.F.valid() {
		return fmt.Errorf(`field "f": expected %s, got %q`, expected["f"], out.F)
	}
	switch {
	case out.Type == Invoke && w.Invoke != nil:
		return errors.New(`field "invoke": not expected on an invocation`)
	case out.Type != Invoke && w.Invoke == nil:
		return fmt.Errorf(`missing or null field "invoke" (expected %s)`, expected["invoke"])
	case w.Invoke != nil:
		out.Invoke = *w.Invoke
	}
	if w.Error != nil {
		out.Error = *w.Error
	}
	if err := checkValueFields(out.F, w.Value); err != nil {
		return err
	}
	if err := out.setValue(w.Value); err != nil {
		return err
	}
	*op = out
	return nil
}

// checkValueFields checks the value's fields against valueFields.
func checkValueFields(f Func, v *wireValue) error {
	type field struct {
		name string
		set  bool
	}
	fields := [...]field{
		{"topic", v.Topic != nil}, {"partition", v.Partition != nil}, {"key", v.Key != nil},
		{"value", v.Value != nil}, {"offset", v.Offset != nil}, {"group", v.Group != nil},
		{"reads", v.Reads != nil}, {"offsets", v.Offsets != nil}, {"topics", v.Topics != nil},
		{"partitions", v.Partitions != nil}, {"seek_to_beginning", v.SeekToBeginning != nil},
	}
	rule := valueFields[f]
	for _, name := range rule.required {
		i := slices.IndexFunc(fields[:], func(fl field) bool { return fl.name == name })
		if !fields[i].set {
			return fmt.Errorf("field \"value\": missing or null field %q (expected %s) of a %s", name, expectedOf("value."+name), f)
		}
	}
	for _, fl := range fields {
		if fl.set && !slices.Contains(rule.required, fl.name) && !slices.Contains(rule.optional, fl.name) {
			allowed := append(slices.Clone(rule.required), rule.optional...)
			return fmt.Errorf("field \"value\": field %q does not belong to a %s, expected only %s",
				fl.name, f, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// setValue builds the op's value from checked wire fields.
func (op *Op) setValue(v *wireValue) error {
	switch op.F {
	case Send:
		s := SendValue{TopicPartition: TopicPartition{*v.Topic, *v.Partition}, Value: *v.Value, Offset: NoOffset}
		s.Key = deref(v.Key)
		if v.Offset != nil {
			s.Offset = *v.Offset
		}
		op.Send = &s
	case Poll:
		p := PollValue{Group: deref(v.Group)}
		for i, r := range deref(v.Reads) {
			if r.Topic == nil || r.Partition == nil || r.Records == nil {
				return fmt.Errorf("field \"value.reads[%d]\": expected topic, partition and records", i)
			}
			recs := *r.Records
			if len(recs) == 0 {
				recs = nil // the Recorder's form of "none"
			}
			p.Reads = append(p.Reads, PartitionRecords{TopicPartition{*r.Topic, *r.Partition}, recs})
		}
		op.Poll = &p
	case Commit:
		c := CommitValue{Group: deref(v.Group)}
		for i, o := range *v.Offsets {
			if o.Topic == nil || o.Partition == nil || o.Offset == nil {
				return fmt.Errorf("field \"value.offsets[%d]\": expected topic, partition and offset", i)
			}
			c.Offsets = append(c.Offsets, PartitionOffset{TopicPartition{*o.Topic, *o.Partition}, *o.Offset})
		}
		op.Commit = &c
	case Assign, Subscribe:
		a := AssignValue{Group: deref(v.Group), SeekToBeginning: deref(v.SeekToBeginning)}
		if topics := deref(v.Topics); len(topics) > 0 {
			a.Topics = topics
		}
		for i, tp := range deref(v.Partitions) {
			if tp.Topic == nil || tp.Partition == nil {
				return fmt.Errorf("field \"value.partitions[%d]\": expected topic and partition", i)
			}
			a.Partitions = append(a.Partitions, TopicPartition{*tp.Topic, *tp.Partition})
		}
		op.Assign = &a
	}
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// explain turns a decoding error into what the line should have held.
func explain(err error, line []byte) error {
	var re *recordError
	var se *json.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("expected a JSON object, got an incomplete one: %s", snippet(line))
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return fmt.Errorf("field %q appears twice in one object; expected each field once", fieldPath(syn.JSONPointer))
	case errors.As(err, &syn):
		return fmt.Errorf("expected a JSON object, got invalid JSON (%v at byte %d) in %s", syn.Err, syn.ByteOffset+1, snippet(line))
	case errors.As(err, &se) && errors.Is(se.Err, json.ErrUnknownName):
		return fmt.Errorf("unknown field %q", fieldPath(se.JSONPointer))
	case errors.As(err, &se) && len(se.JSONPointer) == 0:
		return fmt.Errorf("expected a JSON object, got %s", snippet(line))
	case errors.As(err, &se):
		path := fieldPath(se.JSONPointer)
		got := se.JSONKind.String()
		if se.JSONValue != nil {
			got = fmt.Sprintf("%s %s", got, se.JSONValue)
		}
		return fmt.Errorf("field %q: expected %s, got %s", path, expectedOf(path), got)
	}
	return err
}

// fieldPath renders a JSON pointer as a dotted field path without array
// indexes ("/value/partitions/0/partition" as "value.partitions.partition").
func fieldPath(p jsontext.Pointer) string {
	var names []string
	for tok := range p.Tokens() {
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
