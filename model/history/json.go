package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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

// ReadJSONLines reads a history written by WriteJSONLines. Blank lines are
// skipped. A malformed line or an invalid history (see History.Validate) is
// reported as a *DecodeError naming the line.
func ReadJSONLines(r io.Reader) (History, error) {
	br := bufio.NewReader(r)
	var h History
	var lineOf []int // lineOf[i] is the line op i came from
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var op Op
			if derr := op.UnmarshalJSON(b); derr != nil {
				return nil, &DecodeError{Line: line, Reason: derr.Error()}
			}
			h = append(h, op)
			lineOf = append(lineOf, line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("history: line %d: %w", line, err)
		}
	}
	if err := h.Validate(); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			return nil, &DecodeError{Line: lineOf[ve.Index], Reason: ve.Reason}
		}
		return nil, err
	}
	return h, nil
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
	v, err := json.Marshal(r.Value)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "[%d,%s]", r.Offset, v), nil
}

// UnmarshalJSON decodes an [offset, value] pair.
func (r *Record) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if json.Unmarshal(b, &pair) != nil || len(pair) != 2 || isNull(pair[0]) || isNull(pair[1]) ||
		json.Unmarshal(pair[0], &r.Offset) != nil || json.Unmarshal(pair[1], &r.Value) != nil {
		return fmt.Errorf(`field "records": expected an [offset, value] pair such as [7,"v"], got %s`, snippet(b))
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
	return json.Marshal(w)
}

func setGroup(v *wireValue, group string) {
	if group != "" {
		v.Group = ptr(group)
	}
}

// UnmarshalJSON decodes one line of the JSON-lines format. It checks the
// line on its own; History.Validate checks how lines fit together.
func (op *Op) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w wireOp
	if err := dec.Decode(&w); err != nil {
		return explain(err, b)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("expected one JSON object, found more after it")
	}
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

// explain turns an encoding/json error into what the line should have held.
func explain(err error, line []byte) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return fmt.Errorf("expected a JSON object, got %s", snippet(line))
	case errors.As(err, &te):
		return fmt.Errorf("field %q: expected %s, got %s", te.Field, expectedOf(te.Field), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("expected a JSON object, got an incomplete one: %s", snippet(line))
	case errors.As(err, &se):
		return fmt.Errorf("expected a JSON object, got invalid JSON (%v) in %s", se, snippet(line))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return err // a Record's own message
}

// expectedOf describes a field by its path: "value.value" is a send's
// value, other fields are known by their last name.
func expectedOf(path string) string {
	if d, ok := expected[path]; ok {
		return d
	}
	return expected[path[strings.LastIndexByte(path, '.')+1:]]
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// snippet quotes at most 40 bytes of raw JSON for an error message.
func snippet(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}
