package history

// The reader as it was before the decoder made for the op schema: the
// generic strict decoding of the same wire shape. Test-only, an oracle:
// FuzzDecoderAgrees checks that both accept the same lines, build the same
// ops and report the same errors.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type oldRecord Record

func oldRecs(rs []oldRecord) []Record {
	out := make([]Record, len(rs))
	for i, r := range rs {
		out[i] = Record(r)
	}
	return out
}

// The wire shape of a line, used both ways. Every field is a pointer so
// that decoding can tell a missing field from a zero one, and encoding
// omits what an op does not have. Field order here is the order on the line.
type (
	oldWireOp struct {
		Index   *int          `json:"index,omitempty"`
		Time    *int64        `json:"time,omitempty"`
		Process *int          `json:"process,omitempty"`
		Type    *Type         `json:"type,omitempty"`
		F       *Func         `json:"f,omitempty"`
		Invoke  *int          `json:"invoke,omitempty"`
		Value   *oldWireValue `json:"value,omitempty"`
		Error   *string       `json:"error,omitempty"`
	}
	// oldWireValue is the union of every function's value fields; oldValueFields
	// says which belong to which function.
	oldWireValue struct {
		Topic           *string          `json:"topic,omitempty"`
		Partition       *int32           `json:"partition,omitempty"`
		Key             *string          `json:"key,omitempty"`
		Value           *string          `json:"value,omitempty"`
		Offset          *int64           `json:"offset,omitempty"`
		Group           *string          `json:"group,omitempty"`
		Reads           *[]oldWireReads  `json:"reads,omitempty"`
		Offsets         *[]oldWireOffset `json:"offsets,omitempty"`
		Topics          *[]string        `json:"topics,omitempty"`
		Partitions      *[]oldWireTP     `json:"partitions,omitempty"`
		SeekToBeginning *bool            `json:"seek_to_beginning,omitempty"`
	}
	oldWireTP struct {
		Topic     *string `json:"topic,omitempty"`
		Partition *int32  `json:"partition,omitempty"`
	}
	oldWireReads struct {
		Topic     *string      `json:"topic,omitempty"`
		Partition *int32       `json:"partition,omitempty"`
		Records   *[]oldRecord `json:"records,omitempty"`
	}
	oldWireOffset struct {
		Topic     *string `json:"topic,omitempty"`
		Partition *int32  `json:"partition,omitempty"`
		Offset    *int64  `json:"offset,omitempty"`
	}
)

// oldValueFields lists, per function, the value fields a line must have and
// those it may have; any other value field is an error.
var oldValueFields = map[Func]struct{ required, optional []string }{
	Send:      {[]string{"topic", "partition", "value"}, []string{"key", "offset"}},
	Poll:      {nil, []string{"group", "reads"}},
	Commit:    {[]string{"offsets"}, []string{"group"}},
	Assign:    {[]string{"partitions"}, []string{"group", "seek_to_beginning"}},
	Subscribe: {[]string{"topics"}, []string{"group", "partitions"}},
}

// oldExpected describes, by field name, what a field must hold.
var oldExpected = map[string]string{
	// "f" names txn, seek and ack since the format carries transactions, seeks and share
	// acknowledgements; only the words changed.
	"index": "an integer", "time": "an integer (virtual nanoseconds)", "process": "an integer",
	"type": `"invoke", "ok", "fail" or "info"`, "f": `"send", "poll", "commit", "assign", "subscribe", "txn", "seek" or "ack"`,
	"invoke": "the index of the invocation this op completes", "error": "a string",
	"topic": "a topic name", "partition": "a partition number", "key": "a string", "value.value": "a string",
	"offset": "an integer offset", "group": "a group name", "reads": "a list of per-partition reads",
	"records": "a list of [offset, value] pairs", "offsets": "a list of committed offsets",
	"topics": "a list of topic names", "partitions": "a list of partitions", "seek_to_beginning": "true or false",
	"value": "an object",
}

// oldRecordError is what a malformed [offset, value] pair reports.
type oldRecordError struct{ got string }

func (e *oldRecordError) Error() string {
	return fmt.Sprintf(`field "records": expected an [offset, value] pair such as [7,"v"], got %s`, e.got)
}

// UnmarshalJSONFrom decodes an [offset, value] pair: an integer and a
// string, nothing else (no null, no float, no third element).
func (r *oldRecord) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err // syntax: reported as invalid JSON
	}
	fail := func() error { return &oldRecordError{oldSnippet(raw)} }
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

// oldStrict are the decoding rules of a line: besides the JSON grammar,
// invalid UTF-8 and duplicate member names are errors (the defaults of
// go-json-experiment/json), and so are unknown member names: a typo or a
// field meant for another tool never passes silently.
var oldStrict = json.JoinOptions(json.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false))

// oldLineDecoder decodes lines one after another, reusing its buffers.
type oldLineDecoder struct {
	r   bytes.Reader
	dec *jsontext.Decoder
}

func (d *oldLineDecoder) decode(op *Op, b []byte) error {
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
		d.dec = jsontext.NewDecoder(&d.r, oldStrict)
	} else {
		d.dec.Reset(&d.r, oldStrict)
	}
	var w oldWireOp
	if err := json.UnmarshalDecode(d.dec, &w, oldStrict); err != nil {
		return oldExplain(err, b)
	}
	if len(bytes.TrimSpace(b[d.dec.InputOffset():])) > 0 {
		return fmt.Errorf("expected one JSON object, found more after it")
	}
	return op.oldFromWire(&w)
}

// oldFromWire checks a decoded line's fields and builds the op.
func (op *Op) oldFromWire(w *oldWireOp) error {
	for _, f := range []struct {
		name    string
		present bool
	}{{"index", w.Index != nil}, {"time", w.Time != nil}, {"process", w.Process != nil},
		{"type", w.Type != nil}, {"f", w.F != nil}, {"value", w.Value != nil}} {
		if !f.present {
			return fmt.Errorf("missing or null field %q (expected %s)", f.name, oldExpected[f.name])
		}
	}
	out := Op{Index: *w.Index, Time: *w.Time, Process: *w.Process, Type: *w.Type, F: *w.F, Invoke: -1}
	if !out.Type.valid() {
		return fmt.Errorf(`field "type": expected %s, got %q`, oldExpected["type"], out.Type)
	}
	if !out.F.valid() {
		return fmt.Errorf(`field "f": expected %s, got %q`, oldExpected["f"], out.F)
	}
	switch {
	case out.Type == Invoke && w.Invoke != nil:
		return errors.New(`field "invoke": not expected on an invocation`)
	case out.Type != Invoke && w.Invoke == nil:
		return fmt.Errorf(`missing or null field "invoke" (expected %s)`, oldExpected["invoke"])
	case w.Invoke != nil:
		out.Invoke = *w.Invoke
	}
	if w.Error != nil {
		out.Error = *w.Error
	}
	if err := oldCheckValueFields(out.F, w.Value); err != nil {
		return err
	}
	if err := out.oldSetValue(w.Value); err != nil {
		return err
	}
	*op = out
	return nil
}

// oldCheckValueFields checks the value's fields against oldValueFields.
func oldCheckValueFields(f Func, v *oldWireValue) error {
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
	rule := oldValueFields[f]
	for _, name := range rule.required {
		i := slices.IndexFunc(fields[:], func(fl field) bool { return fl.name == name })
		if !fields[i].set {
			return fmt.Errorf("field \"value\": missing or null field %q (expected %s) of a %s", name, oldExpectedOf("value."+name), f)
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

// oldSetValue builds the op's value from checked wire fields.
func (op *Op) oldSetValue(v *oldWireValue) error {
	switch op.F {
	case Send:
		s := SendValue{TopicPartition: TopicPartition{*v.Topic, *v.Partition}, Value: *v.Value, Offset: NoOffset}
		s.Key = oldDeref(v.Key)
		if v.Offset != nil {
			s.Offset = *v.Offset
		}
		op.Send = &s
	case Poll:
		p := PollValue{Group: oldDeref(v.Group)}
		for i, r := range oldDeref(v.Reads) {
			if r.Topic == nil || r.Partition == nil || r.Records == nil {
				return fmt.Errorf("field \"value.reads[%d]\": expected topic, partition and records", i)
			}
			recs := oldRecs(*r.Records)
			if len(recs) == 0 {
				recs = nil // the Recorder's form of "none"
			}
			p.Reads = append(p.Reads, PartitionRecords{TopicPartition{*r.Topic, *r.Partition}, recs})
		}
		op.Poll = &p
	case Commit:
		c := CommitValue{Group: oldDeref(v.Group)}
		for i, o := range *v.Offsets {
			if o.Topic == nil || o.Partition == nil || o.Offset == nil {
				return fmt.Errorf("field \"value.offsets[%d]\": expected topic, partition and offset", i)
			}
			c.Offsets = append(c.Offsets, PartitionOffset{TopicPartition{*o.Topic, *o.Partition}, *o.Offset})
		}
		op.Commit = &c
	case Assign, Subscribe:
		a := AssignValue{Group: oldDeref(v.Group), SeekToBeginning: oldDeref(v.SeekToBeginning)}
		if topics := oldDeref(v.Topics); len(topics) > 0 {
			a.Topics = topics
		}
		for i, tp := range oldDeref(v.Partitions) {
			if tp.Topic == nil || tp.Partition == nil {
				return fmt.Errorf("field \"value.partitions[%d]\": expected topic and partition", i)
			}
			a.Partitions = append(a.Partitions, TopicPartition{*tp.Topic, *tp.Partition})
		}
		op.Assign = &a
	}
	return nil
}

func oldDeref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// oldExplain turns a decoding error into what the line should have held.
func oldExplain(err error, line []byte) error {
	var re *oldRecordError
	var se *json.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return fmt.Errorf("expected a JSON object, got an incomplete one: %s", oldSnippet(line))
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return fmt.Errorf("field %q appears twice in one object; expected each field once", oldFieldPath(syn.JSONPointer))
	case errors.As(err, &syn):
		return fmt.Errorf("expected a JSON object, got invalid JSON (%v at byte %d) in %s", syn.Err, syn.ByteOffset+1, oldSnippet(line))
	case errors.As(err, &se) && errors.Is(se.Err, json.ErrUnknownName):
		return fmt.Errorf("unknown field %q", oldFieldPath(se.JSONPointer))
	case errors.As(err, &se) && len(se.JSONPointer) == 0:
		return fmt.Errorf("expected a JSON object, got %s", oldSnippet(line))
	case errors.As(err, &se):
		path := oldFieldPath(se.JSONPointer)
		got := se.JSONKind.String()
		if se.JSONValue != nil {
			got = fmt.Sprintf("%s %s", got, se.JSONValue)
		}
		return fmt.Errorf("field %q: expected %s, got %s", path, oldExpectedOf(path), got)
	}
	return err
}

// oldFieldPath renders a JSON pointer as a dotted field path without array
// indexes ("/value/partitions/0/partition" as "value.partitions.partition").
func oldFieldPath(p jsontext.Pointer) string {
	var names []string
	for tok := range p.Tokens() {
		if _, err := strconv.Atoi(tok); err == nil && len(names) > 0 && names[len(names)-1] != "" {
			continue
		}
		names = append(names, tok)
	}
	return strings.Join(names, ".")
}

// oldExpectedOf describes a field by its path: "value.value" is a send's
// value, other fields are known by their last name.
func oldExpectedOf(path string) string {
	if d, ok := oldExpected[path]; ok {
		return d
	}
	return oldExpected[path[strings.LastIndexByte(path, '.')+1:]]
}

// oldSnippet quotes at most 40 bytes of raw JSON for an error message.
func oldSnippet(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// FuzzDecoderAgrees: on any line, the decoder made for the op schema and
// the generic strict decoding of the wire shape accept the same lines,
// build the same ops, and report the same error when the line is
// well-formed JSON (when it is not, both refuse it; which fault is named
// first may differ, since the generic decoder meets them in one pass).
func FuzzDecoderAgrees(f *testing.F) {
	var doc bytes.Buffer
	if err := WriteJSONLines(&doc, everyKind()); err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(doc.String(), "\n") {
		f.Add([]byte(line))
	}
	for _, tt := range decodeErrorCases {
		for _, line := range strings.Split(tt.input, "\n") {
			f.Add([]byte(line))
		}
	}
	for _, s := range []string{"null", "[1]", "3", `{"value":null}`, `{"index":0,"index":1}`,
		`{"index":0,"time":1,"process":1,"type":"invoke","f":"assign","value":{"partitions":[null],"topics":[null]}}`,
		`{"index":0,"time":1,"process":1,"type":"ok","invoke":0,"f":"poll","value":{"reads":[{"topic":"t","partition":0,"records":[null]}]}}`,
		`{"index":0,"time":1,"process":1,"type":"ok","invoke":0,"f":"poll","value":{"reads":[{"topic":"t","partition":0,"records":[[1,"a",2]]}]}}`,
		`{"index":0,"time":1e3,"process":1,"type":"invoke","f":"poll","value":{"0":1}}`,
		`{"in\u0064ex":0,"time":-0,"process":99999999999999999999,"type":"invoke","f":"poll","value":{}}`,
		`{"index":0,"time":1,"process":1,"type":"invoke","f":"send","value":{"topic":"t","partition":2147483648,"value":"\u00e9"}} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.ContainsAny(line, "\n") {
			return
		}
		var got, want Op
		var d lineDecoder
		var old oldLineDecoder
		sys, errGot := d.decode(&got, line)
		if sys != NoSystem || errGot != nil && strings.Contains(errGot.Error(), `"system"`) {
			return // a header line: a field the generic decoder never knew
		}
		errWant := old.decode(&want, line)
		if errWant != nil && errWant.Error() == `unknown field "system"` {
			return
		}
		// Transactions, read_committed and seeks came after this oracle: their lines
		// are checked by TestRoundTrip and TestDecodeErrors instead.
		if got.F == Txn || got.F == Seek || bytes.Contains(line, []byte(`"txn"`)) || bytes.Contains(line, []byte("read_committed")) ||
			bytes.Contains(line, []byte(`"seek"`)) {
			return
		}
		// Share groups came after it too: ack ops, the share flag, and the delivery count
		// a share poll's record carries as a third element.
		if got.F == Ack || bytes.Contains(line, []byte(`"ack"`)) || hasDeliveryCount(got) || isTripleRecordError(errWant) {
			return
		}
		for _, name := range []string{"txn", "ops", "commit", "read_committed", "reset", "share", "acks"} {
			if errWant != nil && errWant.Error() == `unknown field "value.`+name+`"` {
				return
			}
		}
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%s\nnew decoder: %v\ngeneric:     %v", line, errGot, errWant)
		}
		if errGot == nil {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s\nnew decoder: %+v\ngeneric:     %+v", line, got, want)
			}
			return
		}
		if _, err := jsontext.NewDecoder(bytes.NewReader(line)).ReadValue(); err == nil && errGot.Error() != errWant.Error() {
			t.Fatalf("%s\nnew decoder: %v\ngeneric:     %v", line, errGot, errWant)
		}
	})
}

// hasDeliveryCount reports whether a decoded poll has a record with a delivery count.
func hasDeliveryCount(op Op) bool {
	if op.Poll == nil {
		return false
	}
	for _, pr := range op.Poll.Reads {
		for _, r := range pr.Records {
			if r.DeliveryCount != 0 {
				return true
			}
		}
	}
	return false
}

// isTripleRecordError reports whether the generic decoder refused an [offset, value,
// count] triple, which the format now allows.
func isTripleRecordError(err error) bool {
	var re *oldRecordError
	if !errors.As(err, &re) {
		return false
	}
	var elems []jsontext.Value
	if json.Unmarshal([]byte(re.got), &elems) != nil || len(elems) != 3 {
		return false
	}
	return elems[0].Kind() == '0' && elems[1].Kind() == '"' && elems[2].Kind() == '0'
}
