package history

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Decoding a line is two steps, one mechanism each:
//
//  1. The JSON grammar: go-json-experiment's tokenizer reads the line as one
//     JSON value, refusing invalid UTF-8 (raw or an escaped lone surrogate)
//     and a member name twice in one object. It is the only code that
//     decides what is well-formed JSON.
//  2. The schema: a walker made for the op format reads the fields of that
//     well-formed value straight into an Op, refusing unknown fields, null
//     where a value is needed and values of the wrong type, with the same
//     words the generic decoder of the wire shape used (tested against it by
//     FuzzDecoderAgrees). It knows the bytes are valid JSON, so it never
//     has to judge the grammar: it only maps.
//
// A generic decoder spent most of its time in reflection and in an
// allocation per field; this one allocates a string per distinct text
// (topic, group and error names are interned) and takes values, records
// and lists from slabs shared by many lines.

// strict are the tokenizer's rules: invalid UTF-8 and duplicate member
// names are errors (the defaults of go-json-experiment, said explicitly).
var strict = json.JoinOptions(jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(false))

// lineDecoder decodes lines one after another, reusing its buffers and
// handing out values from its slabs. Not safe for concurrent use: decode
// parts of a file with one lineDecoder each.
type lineDecoder struct {
	r     bytes.Reader
	dec   *jsontext.Decoder
	w     walker
	names map[string]string // interned topics, groups and errors
	last  string            // the string intern returned last

	sends   slab[SendValue]
	polls   slab[PollValue]
	txns    slab[TxnValue]
	micro   slab[MicroOp]
	commits slab[CommitValue]
	assigns slab[AssignValue]
	reads   slab[PartitionRecords]
	records slab[Record]
	offsets slab[PartitionOffset]
	tps     slab[TopicPartition]
	topics  slab[string]
	acks    slab[RecordAck]
}

// slab hands out many small slices of one backing array, so that a
// history of a million ops costs a few thousand allocations, not millions.
// A slice handed out is capped at its length: appending to it copies.
type slab[T any] struct {
	buf   []T
	start int // where the slice being built begins
}

const slabSize = 4096

func (s *slab[T]) begin() { s.start = len(s.buf) }

func (s *slab[T]) add(v T) {
	if len(s.buf) == cap(s.buf) {
		n := len(s.buf) - s.start
		grown := make([]T, n, max(slabSize, 2*n))
		copy(grown, s.buf[s.start:])
		s.buf, s.start = grown, 0
	}
	s.buf = append(s.buf, v)
}

// end returns the slice built since begin, nil when it is empty.
func (s *slab[T]) end() []T {
	if len(s.buf) == s.start {
		return nil
	}
	return s.buf[s.start:len(s.buf):len(s.buf)]
}

// one returns a pointer to a fresh zero T.
func (s *slab[T]) one() *T {
	var zero T
	s.begin()
	s.add(zero)
	return &s.buf[len(s.buf)-1]
}

// intern returns b as a string, the same string for the same text while
// the table has room (topics, groups and errors repeat; values do not).
func (d *lineDecoder) intern(b []byte) string {
	if string(b) == d.last { // most lines name the topic or group the line before did
		return d.last
	}
	if s, ok := d.names[string(b)]; ok {
		d.last = s
		return s
	}
	s := string(b)
	d.last = s
	if d.names == nil {
		d.names = make(map[string]string)
	}
	if len(d.names) < 1<<12 {
		d.names[s] = s
	}
	return s
}

// decode reads a line into op, or, for a header line, returns the system it
// names and leaves op alone.
func (d *lineDecoder) decode(op *Op, b []byte) (System, error) {
	if !utf8.Valid(b) {
		at := 0
		for at < len(b) {
			r, size := utf8.DecodeRune(b[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return NoSystem, fmt.Errorf("invalid UTF-8 at byte %d (%q): expected text in UTF-8, raw or \\u-escaped",
			at+1, b[at:min(len(b), at+4)])
	}
	d.r.Reset(b)
	if d.dec == nil {
		d.dec = jsontext.NewDecoder(&d.r, strict)
	} else {
		d.dec.Reset(&d.r, strict)
	}
	if _, err := d.dec.ReadValue(); err != nil {
		return NoSystem, explain(err, b)
	}
	end := int(d.dec.InputOffset())
	d.w = walker{b: b[:end], d: d, path: d.w.path[:0]}
	var f lineFields
	if err := d.w.line(&f, b); err != nil {
		return NoSystem, err
	}
	if d.w.err != nil {
		return NoSystem, d.w.err
	}
	if len(bytes.TrimSpace(b[end:])) > 0 {
		return NoSystem, errors.New("expected one JSON object, found more after it")
	}
	if f.has&fSystem != 0 {
		return f.header()
	}
	return NoSystem, op.fromFields(&f, d)
}

// field is a bit per field of a line or of its value, set when the field
// is present and not null.
type field uint32

const (
	fIndex field = 1 << iota
	fTime
	fProcess
	fType
	fF
	fInvoke
	fValue
	fError
	fSystem // a header line's only field
)

// The value's fields, in the order checkValueFields reports them.
const (
	vTopic field = 1 << iota
	vPartition
	vKey
	vValue
	vOffset
	vGroup
	vReads
	vOffsets
	vTopics
	vPartitions
	vSeek
	vReadCommitted
	vTxn
	vOps
	vCommit
	vReset
	vShare
	vAcks
)

var valueNames = [...]string{"topic", "partition", "key", "value", "offset", "group", "reads", "offsets",
	"topics", "partitions", "seek_to_beginning", "read_committed", "txn", "ops", "commit", "reset", "share", "acks"}

// lineFields are a line's fields as read, before they are checked together.
type lineFields struct {
	has                    field
	index, process, invoke int
	time                   int64
	typ                    Type
	f                      Func
	err                    string
	v                      lineValue
	system                 []byte // the header's "system", as read (null: nil)
}

// header checks a header line: {"system":"log"} or {"system":"queue"},
// nothing else.
func (l *lineFields) header() (System, error) {
	if l.has != fSystem {
		return NoSystem, errors.New(`field "system" belongs on a header line of its own: expected no other field beside it, or none of it on an op's line`)
	}
	switch sys := System(l.system); sys {
	case LogSystem, QueueSystem:
		return sys, nil
	}
	got := "null"
	if l.system != nil {
		got = strconv.Quote(string(l.system))
	}
	return NoSystem, fmt.Errorf(`field "system": expected %q or %q, got %s`, LogSystem, QueueSystem, got)
}

// lineValue is the union of every function's value fields; valueFields
// says which belong to which function. A list element that lacks one of
// its fields is remembered (incomplete) and reported once the value's
// fields are known to fit the function, as the wire shape did.
type lineValue struct {
	has                      field
	topic, key, value, group string
	partition                int32
	offset                   int64
	seek, readCommitted      bool
	reset, share             bool
	reads                    []PartitionRecords
	offsets                  []PartitionOffset
	topics                   []string
	partitions               []TopicPartition
	txn                      string
	ops                      []MicroOp
	commit                   *CommitValue
	acks                     []RecordAck
	incomplete               error
}

// walker reads the fields of one line already known to be well-formed
// JSON (see the top of this file).
type walker struct {
	b    []byte
	i    int
	path []pathElem // where the walker is, for error messages
	d    *lineDecoder
	err  error // a string the tokenizer accepted and text could not unquote
	// inMicroOp: the walker is inside a txn's micro-op, where no "ops" may nest.
	inMicroOp bool
}

// pathElem is a member name, or an array index when name is nil.
type pathElem struct {
	name  []byte
	index int
}

func (w *walker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// kind is the kind of the next value, as jsontext names it.
func (w *walker) kind() jsontext.Kind {
	w.ws()
	if c := w.b[w.i]; c == '-' || '0' <= c && c <= '9' {
		return '0'
	}
	return jsontext.Kind(w.b[w.i])
}

func (w *walker) skipString() {
	w.i++
	// Most strings have no escape: the first quote ends them.
	if q := bytes.IndexByte(w.b[w.i:], '"'); q >= 0 && bytes.IndexByte(w.b[w.i:w.i+q], '\\') < 0 {
		w.i += q + 1
		return
	}
	for {
		switch w.b[w.i] {
		case '\\':
			w.i += 2
		case '"':
			w.i++
			return
		default:
			w.i++
		}
	}
}

// value moves past the next value and returns its bytes.
func (w *walker) value() []byte {
	w.ws()
	start := w.i
	switch w.b[w.i] {
	case '"':
		w.skipString()
	case '{', '[':
		for depth := 0; ; {
			switch w.b[w.i] {
			case '"':
				w.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for w.i < len(w.b) && !isDelimiter(w.b[w.i]) {
			w.i++
		}
	}
	return w.b[start:w.i]
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// enter moves into the object or array that comes next.
func (w *walker) enter() { w.ws(); w.i++ }

// more moves to the next member or element and says whether there is one;
// at the end it moves past the closing bracket.
func (w *walker) more() bool {
	w.ws()
	if w.b[w.i] == ',' {
		w.i++
		w.ws()
	}
	if c := w.b[w.i]; c == '}' || c == ']' {
		w.i++
		return false
	}
	return true
}

// name reads a member name and its colon.
func (w *walker) name() []byte {
	s := w.text(w.value())
	w.ws()
	w.i++
	return s
}

// text unquotes a string's bytes (a slice of the line when it has no escape).
func (w *walker) text(raw []byte) []byte {
	content := raw[1 : len(raw)-1]
	if bytes.IndexByte(content, '\\') < 0 {
		return content
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil && w.err == nil { // cannot happen: the tokenizer accepted the string
		w.err = fmt.Errorf("expected a JSON string, got %s (%v)", snippet(raw), err)
	}
	return s
}

func (w *walker) push(name []byte) { w.path = append(w.path, pathElem{name: name}) }
func (w *walker) pushIndex(i int)  { w.path = append(w.path, pathElem{index: i}) }
func (w *walker) pop()             { w.path = w.path[:len(w.path)-1] }

// where is the walker's position as a dotted field path (see fieldPath).
func (w *walker) where() string {
	tokens := make([]string, len(w.path))
	for i, p := range w.path {
		if p.name != nil {
			tokens[i] = string(p.name)
		} else {
			tokens[i] = strconv.Itoa(p.index)
		}
	}
	return fieldPath(tokens)
}

// wrongType reports a value of kind k where the field needs another; got
// is the number that did not fit, if that was the trouble.
func (w *walker) wrongType(k jsontext.Kind, got []byte) error {
	path := w.where()
	what := k.String()
	if got != nil {
		what += " " + string(got)
	}
	return fmt.Errorf("field %q: expected %s, got %s", path, expectedOf(path), what)
}

func (w *walker) unknown() error { return fmt.Errorf("unknown field %q", w.where()) }

// integer reads an integer that fits in bits; null reads as absent.
func (w *walker) integer(bits int) (int64, bool, error) {
	switch k := w.kind(); k {
	case 'n':
		w.value()
		return 0, false, nil
	case '0':
		raw := w.value()
		n, ok := parseInt(raw, bits)
		if !ok {
			return 0, false, w.wrongType(k, raw)
		}
		return n, true, nil
	default:
		w.value()
		return 0, false, w.wrongType(k, nil)
	}
}

// parseInt parses a JSON number that must be an integer of bits bits.
func parseInt(raw []byte, bits int) (int64, bool) {
	digits := raw
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) > 18 {
		n, err := strconv.ParseInt(string(raw), 10, bits)
		return n, err == nil
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if raw[0] == '-' {
		n = -n
	}
	if bits == 64 {
		return n, true // 18 digits always fit
	}
	limit := int64(1) << (bits - 1)
	return n, -limit <= n && n < limit
}

// str reads a string; null reads as absent. Interned strings are shared
// between lines with the same text.
func (w *walker) str(interned bool) (string, bool, error) {
	switch k := w.kind(); k {
	case 'n':
		w.value()
		return "", false, nil
	case '"':
		b := w.text(w.value())
		if interned {
			return w.d.intern(b), true, nil
		}
		return string(b), true, nil
	default:
		w.value()
		return "", false, w.wrongType(k, nil)
	}
}

// words are the values of type and f, shared by every line.
var words = [...]string{string(Invoke), string(Ok), string(Fail), string(Info),
	string(Send), string(Poll), string(Commit), string(Assign), string(Subscribe), string(Txn), string(Seek), string(Ack)}

// word reads a string that is usually one of words (any other string is
// read too, and refused by fromFields).
func (w *walker) word() (string, bool, error) {
	if w.kind() == '"' {
		start := w.i
		b := w.text(w.value())
		for _, s := range words {
			if string(b) == s {
				return s, true, nil
			}
		}
		w.i = start
	}
	return w.str(true)
}

// open checks that an object or array (kind k) comes next and moves into
// it; null reads as absent.
func (w *walker) open(k jsontext.Kind) (bool, error) {
	switch got := w.kind(); got {
	case 'n':
		w.value()
		return false, nil
	case k:
		w.enter()
		return true, nil
	default:
		w.value()
		return false, w.wrongType(got, nil)
	}
}

// line reads a line's top-level object into f.
func (w *walker) line(f *lineFields, whole []byte) error {
	switch w.kind() {
	case 'n':
		return nil // every field missing
	case '{':
	default:
		return fmt.Errorf("expected a JSON object, got %s", snippet(whole))
	}
	w.enter()
	for w.more() {
		name := w.name()
		w.push(name)
		var bit field
		var n int64
		var ok bool
		var err error
		switch string(name) {
		case "index":
			bit = fIndex
			n, ok, err = w.integer(strconv.IntSize)
			f.index = int(n)
		case "time":
			bit = fTime
			f.time, ok, err = w.integer(64)
		case "process":
			bit = fProcess
			n, ok, err = w.integer(strconv.IntSize)
			f.process = int(n)
		case "invoke":
			bit = fInvoke
			n, ok, err = w.integer(strconv.IntSize)
			f.invoke = int(n)
		case "type":
			bit = fType
			var s string
			s, ok, err = w.word()
			f.typ = Type(s)
		case "f":
			bit = fF
			var s string
			s, ok, err = w.word()
			f.f = Func(s)
		case "error":
			bit = fError
			f.err, ok, err = w.str(true)
		case "value":
			bit = fValue
			if ok, err = w.open('{'); ok && err == nil {
				err = w.valueObject(&f.v)
			}
		case "system": // present even when null: it makes the line a header
			bit, ok = fSystem, true
			var s string
			var isString bool
			if s, isString, err = w.str(true); isString {
				f.system = []byte(s)
			}
		default:
			return w.unknown()
		}
		if err != nil {
			return err
		}
		if ok {
			f.has |= bit
		}
		w.pop()
	}
	return nil
}

// valueObject reads the members of a line's value, the walker inside it.
func (w *walker) valueObject(v *lineValue) error {
	for w.more() {
		name := w.name()
		w.push(name)
		bit, ok, err := w.valueMember(v, string(name))
		if err != nil {
			return err
		}
		if ok {
			v.has |= bit
		}
		w.pop()
	}
	return nil
}

// valueMember reads one member of a value (a line's, or a micro-op's) into v.
func (w *walker) valueMember(v *lineValue, name string) (bit field, ok bool, err error) {
	var n int64
	switch name {
	case "topic":
		bit = vTopic
		v.topic, ok, err = w.str(true)
	case "partition":
		bit = vPartition
		n, ok, err = w.integer(32)
		v.partition = int32(n)
	case "key":
		bit = vKey
		v.key, ok, err = w.str(false)
	case "value":
		bit = vValue
		v.value, ok, err = w.str(false)
	case "offset":
		bit = vOffset
		v.offset, ok, err = w.integer(64)
	case "group":
		bit = vGroup
		v.group, ok, err = w.str(true)
	case "seek_to_beginning":
		bit = vSeek
		ok, err = w.boolean(&v.seek)
	case "reset":
		bit = vReset
		ok, err = w.boolean(&v.reset)
	case "read_committed":
		bit = vReadCommitted
		ok, err = w.boolean(&v.readCommitted)
	case "share":
		bit = vShare
		ok, err = w.boolean(&v.share)
	case "acks":
		bit = vAcks
		ok, err = w.acks()
		v.acks = w.d.acks.end()
	case "txn":
		bit = vTxn
		v.txn, ok, err = w.str(true)
	case "reads":
		bit = vReads
		ok, err = w.list(func(i int) error { return w.readsElem(v, i) })
		v.reads = w.d.reads.end()
	case "offsets":
		bit = vOffsets
		ok, err = w.list(func(i int) error { return w.offsetElem(v, i) })
		v.offsets = w.d.offsets.end()
	case "partitions":
		bit = vPartitions
		ok, err = w.list(func(i int) error { return w.partitionElem(v, i) })
		v.partitions = w.d.tps.end()
	case "topics":
		bit = vTopics
		ok, err = w.list(func(int) error {
			s, _, err := w.str(true)
			w.d.topics.add(s) // null reads as ""
			return err
		})
		v.topics = w.d.topics.end()
	case "ops":
		bit = vOps
		if w.inMicroOp {
			return 0, false, fmt.Errorf("field %q: a micro-op holds no micro-ops; expected send or poll fields only", w.where())
		}
		w.d.micro.begin()
		ok, err = w.list(func(i int) error { return w.microOpElem(v, i) })
		v.ops = w.d.micro.end()
	case "commit":
		bit = vCommit
		ok, err = w.commitObject(v)
	default:
		return 0, false, w.unknown()
	}
	return bit, ok, err
}

// microOpElem reads one micro-op of a txn: an object with "f" (send or poll) and
// that function's value fields, checked as a line's value is.
func (w *walker) microOpElem(v *lineValue, i int) error {
	if k := w.kind(); k != '{' && k != 'n' {
		return fmt.Errorf(`field "value.ops[%d]": expected a micro-op object such as {"f":"poll"}, got %s`, i, snippet(w.value()))
	}
	var mv lineValue
	var f string
	var hasF bool
	w.inMicroOp = true
	_, err := w.members(func(name string) (field, bool, error) {
		if name == "f" {
			var err error
			f, hasF, err = w.word()
			return 0, false, err
		}
		bit, ok, err := w.valueMember(&mv, name)
		if ok {
			mv.has |= bit
		}
		return 0, false, err
	})
	w.inMicroOp = false
	if err != nil {
		return err
	}
	var m MicroOp
	switch {
	case !hasF:
		v.missing("ops", i, `"f": "send" or "poll"`)
	case Func(f) != Send && Func(f) != Poll:
		v.missing("ops", i, fmt.Sprintf(`"f": "send" or "poll", got %q`, f))
	default:
		if err := checkValueFields(Func(f), mv.has); err != nil {
			v.missing("ops", i, "a "+f+" micro-op: "+strings.TrimPrefix(err.Error(), `field "value": `))
		} else if mv.incomplete != nil {
			v.missing("ops", i, mv.incomplete.Error())
		}
		var op Op
		op.F = Func(f)
		op.setValue(&mv, w.d)
		m = MicroOp{F: op.F, Send: op.Send, Poll: op.Poll}
	}
	w.d.micro.add(m)
	return nil
}

// commitObject reads a txn's "commit": {"group":"g","offsets":[...]}.
func (w *walker) commitObject(v *lineValue) (bool, error) {
	if w.kind() == 'n' {
		w.value()
		return false, nil
	}
	var cv lineValue
	has, err := w.members(func(name string) (field, bool, error) {
		if name != "group" && name != "offsets" {
			return 0, false, w.unknown()
		}
		return w.valueMember(&cv, name)
	})
	if err != nil {
		return false, err
	}
	if has&vOffsets == 0 && v.incomplete == nil {
		v.incomplete = errors.New(`field "value.commit": expected "offsets", a list of committed offsets, and optionally "group"`)
	}
	if cv.incomplete != nil && v.incomplete == nil {
		v.incomplete = cv.incomplete
	}
	v.commit = w.d.commits.one()
	*v.commit = CommitValue{Group: cv.group, Offsets: cv.offsets}
	return true, nil
}

func (w *walker) boolean(out *bool) (bool, error) {
	switch k := w.kind(); k {
	case 'n':
		w.value()
		return false, nil
	case 't', 'f':
		*out = k == 't'
		w.value()
		return true, nil
	default:
		w.value()
		return false, w.wrongType(k, nil)
	}
}

// list reads an array, calling elem for each element with the walker on it.
// The slabs the elements go to are begun here, in an order that nests: a
// list's elements hold lists only of other slabs.
func (w *walker) list(elem func(i int) error) (bool, error) {
	d := w.d
	d.reads.begin()
	d.offsets.begin()
	d.tps.begin()
	d.topics.begin()
	ok, err := w.open('[')
	if !ok || err != nil {
		return ok, err
	}
	for i := 0; w.more(); i++ {
		w.pushIndex(i)
		if err := elem(i); err != nil {
			return false, err
		}
		w.pop()
	}
	return true, nil
}

// members reads an element that must be an object (null reads as one
// without fields), calling member for each of its members.
func (w *walker) members(member func(name string) (field, bool, error)) (field, error) {
	ok, err := w.open('{')
	if !ok || err != nil {
		return 0, err
	}
	var has field
	for w.more() {
		name := w.name()
		w.push(name)
		bit, ok, err := member(string(name))
		if err != nil {
			return 0, err
		}
		if ok {
			has |= bit
		}
		w.pop()
	}
	return has, nil
}

// topicPartition reads the topic and partition members every list element has.
func (w *walker) topicPartition(name string, tp *TopicPartition) (field, bool, error) {
	switch name {
	case "topic":
		s, ok, err := w.str(true)
		tp.Topic = s
		return vTopic, ok, err
	case "partition":
		n, ok, err := w.integer(32)
		tp.Partition = int32(n)
		return vPartition, ok, err
	}
	return 0, false, w.unknown()
}

func (v *lineValue) missing(list string, i int, what string) {
	if v.incomplete == nil {
		v.incomplete = fmt.Errorf("field \"value.%s[%d]\": expected %s", list, i, what)
	}
}

func (w *walker) readsElem(v *lineValue, i int) error {
	var pr PartitionRecords
	has, err := w.members(func(name string) (field, bool, error) {
		if name != "records" {
			return w.topicPartition(name, &pr.TopicPartition)
		}
		ok, err := w.records()
		pr.Records = w.d.records.end()
		return vReads, ok, err
	})
	if err != nil {
		return err
	}
	if has != vTopic|vPartition|vReads {
		v.missing("reads", i, "topic, partition and records")
	}
	w.d.reads.add(pr)
	return nil
}

func (w *walker) offsetElem(v *lineValue, i int) error {
	var po PartitionOffset
	has, err := w.members(func(name string) (field, bool, error) {
		if name != "offset" {
			return w.topicPartition(name, &po.TopicPartition)
		}
		n, ok, err := w.integer(64)
		po.Offset = n
		return vOffset, ok, err
	})
	if err != nil {
		return err
	}
	if has != vTopic|vPartition|vOffset {
		v.missing("offsets", i, "topic, partition and offset")
	}
	w.d.offsets.add(po)
	return nil
}

func (w *walker) partitionElem(v *lineValue, i int) error {
	var tp TopicPartition
	has, err := w.members(func(name string) (field, bool, error) { return w.topicPartition(name, &tp) })
	if err != nil {
		return err
	}
	if has != vTopic|vPartition {
		v.missing("partitions", i, "topic and partition")
	}
	w.d.tps.add(tp)
	return nil
}

// records reads a list of [offset, value] pairs into the records slab.
func (w *walker) records() (bool, error) {
	w.d.records.begin()
	ok, err := w.open('[')
	if !ok || err != nil {
		return ok, err
	}
	for i := 0; w.more(); i++ {
		start := w.i
		r, ok := w.record()
		if !ok {
			w.i = start
			return false, &recordError{snippet(w.value())}
		}
		w.d.records.add(r)
	}
	return true, nil
}

// record reads an [offset, value] pair, or a share poll's [offset, value, delivery
// count] triple: integers and a string, nothing else (no null, no float, no fourth
// element). Whether a record may carry a delivery count is History.Validate's rule.
func (w *walker) record() (Record, bool) {
	var r Record
	if w.kind() != '[' {
		return r, false
	}
	w.enter()
	if !w.more() || w.kind() != '0' {
		return r, false
	}
	var ok bool
	if r.Offset, ok = parseInt(w.value(), 64); !ok {
		return r, false
	}
	if !w.more() || w.kind() != '"' {
		return r, false
	}
	r.Value = string(w.text(w.value()))
	if !w.more() {
		return r, true
	}
	if w.kind() != '0' {
		return r, false
	}
	n, ok := parseInt(w.value(), 32)
	r.DeliveryCount = int(n)
	return r, ok && !w.more()
}

// acks reads a list of [offset, type] pairs into the acks slab.
func (w *walker) acks() (bool, error) {
	w.d.acks.begin()
	ok, err := w.open('[')
	if !ok || err != nil {
		return ok, err
	}
	for w.more() {
		start := w.i
		a, ok := w.ack()
		if !ok {
			w.i = start
			return false, &ackError{snippet(w.value())}
		}
		w.d.acks.add(a)
	}
	return true, nil
}

// ack reads an [offset, type] pair: an integer and a string, nothing else.
func (w *walker) ack() (RecordAck, bool) {
	var a RecordAck
	if w.kind() != '[' {
		return a, false
	}
	w.enter()
	if !w.more() || w.kind() != '0' {
		return a, false
	}
	var ok bool
	if a.Offset, ok = parseInt(w.value(), 64); !ok {
		return a, false
	}
	if !w.more() || w.kind() != '"' {
		return a, false
	}
	a.Type = w.d.intern(w.text(w.value()))
	return a, !w.more()
}

// fromFields checks a line's fields together and builds the op.
func (op *Op) fromFields(l *lineFields, d *lineDecoder) error {
	for _, f := range []struct {
		name string
		bit  field
	}{{"index", fIndex}, {"time", fTime}, {"process", fProcess}, {"type", fType}, {"f", fF}, {"value", fValue}} {
		if l.has&f.bit == 0 {
			return fmt.Errorf("missing or null field %q (expected %s)", f.name, expected[f.name])
		}
	}
	out := Op{Index: l.index, Time: l.time, Process: l.process, Type: l.typ, F: l.f, Invoke: -1, Error: l.err}
	if !out.Type.valid() {
		return fmt.Errorf(`field "type": expected %s, got %q`, expected["type"], out.Type)
	}
	if !out.F.valid() {
		return fmt.Errorf(`field "f": expected %s, got %q`, expected["f"], out.F)
	}
	switch {
	case out.Type == Invoke && l.has&fInvoke != 0:
		return errors.New(`field "invoke": not expected on an invocation`)
	case out.Type != Invoke && l.has&fInvoke == 0:
		return fmt.Errorf(`missing or null field "invoke" (expected %s)`, expected["invoke"])
	case l.has&fInvoke != 0:
		out.Invoke = l.invoke
	}
	if err := checkValueFields(out.F, l.v.has); err != nil {
		return err
	}
	if l.v.incomplete != nil {
		return l.v.incomplete
	}
	out.setValue(&l.v, d)
	*op = out
	return nil
}

// setValue builds the op's value from checked fields.
func (op *Op) setValue(v *lineValue, d *lineDecoder) {
	switch op.F {
	case Send:
		s := d.sends.one()
		*s = SendValue{TopicPartition: TopicPartition{v.topic, v.partition}, Key: v.key, Value: v.value, Offset: NoOffset}
		if v.has&vOffset != 0 {
			s.Offset = v.offset
		}
		op.Send = s
	case Poll:
		op.Poll = d.polls.one()
		*op.Poll = PollValue{Group: v.group, Reads: v.reads, ReadCommitted: v.readCommitted, Share: v.share}
	case Txn:
		op.Txn = d.txns.one()
		*op.Txn = TxnValue{ID: v.txn, Ops: v.ops, Offsets: v.commit}
	case Commit:
		op.Commit = d.commits.one()
		*op.Commit = CommitValue{Group: v.group, Offsets: v.offsets}
	case Seek:
		op.Seek = &SeekValue{Group: v.group, Offsets: v.offsets, Reset: v.reset}
	case Ack:
		op.Ack = &AckValue{Group: v.group, TopicPartition: TopicPartition{v.topic, v.partition}, Acks: v.acks}
	case Assign, Subscribe:
		op.Assign = d.assigns.one()
		*op.Assign = AssignValue{Group: v.group, Topics: v.topics, Partitions: v.partitions, SeekToBeginning: v.seek}
	}
}

// checkValueFields checks the value's fields against valueFields.
func checkValueFields(f Func, has field) error {
	if m := fieldMasks[f]; has&m.required == m.required && has&^(m.required|m.optional) == 0 {
		return nil
	}
	rule := valueFields[f]
	for _, name := range rule.required {
		if has&valueBit(name) == 0 {
			return fmt.Errorf("field \"value\": missing or null field %q (expected %s) of a %s", name, expectedOf("value."+name), f)
		}
	}
	for i, name := range valueNames {
		if has&(1<<i) != 0 && !containsString(rule.required, name) && !containsString(rule.optional, name) {
			allowed := append(append([]string(nil), rule.required...), rule.optional...)
			return fmt.Errorf("field \"value\": field %q does not belong to a %s, expected only %s",
				name, f, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// fieldMasks are valueFields as bits, for the lines that fit (all but the odd one).
var fieldMasks = func() map[Func]struct{ required, optional field } {
	out := map[Func]struct{ required, optional field }{}
	for f, rule := range valueFields {
		var m struct{ required, optional field }
		for _, name := range rule.required {
			m.required |= valueBit(name)
		}
		for _, name := range rule.optional {
			m.optional |= valueBit(name)
		}
		out[f] = m
	}
	return out
}()

func valueBit(name string) field {
	for i, n := range valueNames {
		if n == name {
			return 1 << i
		}
	}
	panic("history: no value field " + name)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
