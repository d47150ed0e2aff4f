package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mqsim/model/history"
	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

var (
	recordMu sync.Mutex
	recorded = map[string]*Run{}
)

// record records a catalogue scenario once per test binary.
func record(t *testing.T, name string) *Run {
	t.Helper()
	recordMu.Lock()
	defer recordMu.Unlock()
	if r := recorded[name]; r != nil {
		return r
	}
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Record(s, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recorded[name] = r
	return r
}

// Every catalogue scenario records: its steps are the plain run's trace, one for one,
// and every message event belongs to a message whose ends are on known nodes.
func TestRecordEveryCatalogScenario(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		t.Run(e.Name, func(t *testing.T) {
			r := record(t, e.Name)
			s, _ := scenarios.Load(e.Name)
			plain, err := runner.Run(s, runner.Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Hash != plain.Hash {
				t.Errorf("hash %s, mqsim run says %s", r.Hash, plain.Hash)
			}
			if want := int(plain.Runner.World().Steps()); r.Steps != want {
				t.Errorf("%d steps, the plain run took %d kernel steps", r.Steps, want)
			}
			// The plain trace is the recorded one without its message events, kernel
			// steps and all.
			var model []string
			for i, e := range r.Events {
				if !r.isMessageEvent(i) {
					model = append(model, fmt.Sprintf("step %d %s", e.Step, e))
				}
			}
			var want []string
			for _, e := range plain.Runner.World().Trace().Events() {
				want = append(want, fmt.Sprintf("step %d %s", e.Step, e))
			}
			if strings.Join(model, "\n") != strings.Join(want, "\n") {
				t.Errorf("the recorded trace without messages is not the plain run's trace")
			}
			for id, m := range r.msgs {
				if m.send < 0 && len(m.recvs) == 0 && m.drop < 0 {
					t.Errorf("message %d has no event", id)
				}
				if r.Roles[m.from] == RoleOther && r.Roles[m.to] == RoleOther && r.History != nil {
					t.Errorf("message %d between unknown nodes %s -> %s", id, m.from, m.to)
				}
			}
		})
	}
}

// A scenario with a world step of its own gets trace-messages added to it; one without
// gets a world step first.
func TestWithMessages(t *testing.T) {
	for _, name := range []string{"bug-ack-before-fsync", "acks1-leader-crash"} {
		s, _ := scenarios.Load(name)
		w := WithMessages(s)
		if w.Steps[0].Cmd != "world" {
			t.Fatalf("%s: first step %s", name, w.Steps[0].Cmd)
		}
		found := false
		for _, a := range w.Steps[0].Args {
			if a.Key == "trace-messages" && len(a.Vals) == 1 && a.Vals[0] == "true" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no trace-messages=true in %+v", name, w.Steps[0].Args)
		}
		if len(s.Steps) > 0 && s.Steps[0].Cmd == "world" && len(w.Steps) != len(s.Steps) {
			t.Errorf("%s: a world step was added although it had one", name)
		}
		for _, a := range s.Steps[0].Args {
			if a.Key == "trace-messages" {
				t.Errorf("%s: the original script was changed", name)
			}
		}
	}
}

func TestWindows(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	if w := r.DefaultWindow(1 << 20); w != (Window{1, r.Steps}) {
		t.Errorf("a large budget gives %v, want the whole run", w)
	}
	w := r.DefaultWindow(120)
	lo, hi := r.span(w)
	if hi-lo > 120 {
		t.Errorf("%v holds %d events, more than the budget", w, hi-lo)
	}
	// The window shows where the first violation began: the kernel step mqsim run
	// prints, "(step 48)", when p1 sends "lost" after the partition.
	if w.From > 48 || w.To < 48 {
		t.Errorf("default window %v misses the violation's start at step 48", w)
	}
	for _, tc := range []struct {
		from, to int
		want     string
	}{
		{0, 500, "the run has 344 kernel steps"},
		{400, 0, "the run has 344 kernel steps"},
		{30, 20, "--to 20 is before --from 30"},
		{-1, 0, "steps count from 1"},
	} {
		if _, err := r.CheckWindow(tc.from, tc.to, 100); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckWindow(%d, %d) = %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
	if w, err := r.CheckWindow(20, 0, 50); err != nil || w.From != 20 || w.To <= 20 {
		t.Errorf("--from 20 alone: %v %v", w, err)
	}
	// Spans of neighbouring windows meet: every event belongs to exactly one step.
	_, a := r.span(Window{1, 30})
	b, _ := r.span(Window{31, r.Steps})
	if a != b {
		t.Errorf("windows 1..30 and 31..%d leave events %d..%d out", r.Steps, a, b)
	}
}

// svgDoc is the parts of the SVG the tests look at.
type svgDoc struct {
	lanes    []string
	msgs     map[string]string // data-msg -> data-type
	steps    map[string]bool   // data-step of every event group
	crosses  int               // the ✕ of lost messages
	elements int
}

func parseSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	d := svgDoc{msgs: map[string]string{}, steps: map[string]bool{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	depth := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			d.elements++
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			if d.elements == 1 && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v", el.Name)
			}
			switch attr["class"] {
			case "lane":
				d.lanes = append(d.lanes, attr["data-node"])
			case "msg":
				d.msgs[attr["data-msg"]] = attr["data-type"]
			case "event":
				d.steps[attr["data-step"]] = true
			}
			if el.Name.Local == "path" && strings.HasPrefix(attr["d"], "M") && strings.Contains(attr["d"], "l8,8 m0,-8 l-8,8") {
				d.crosses++
			}
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 {
		t.Fatalf("unbalanced elements")
	}
	return d
}

// messagesIn counts the messages with an event in the window, from the trace alone.
func messagesIn(r *Run, w Window) map[string]bool {
	ids := map[string]bool{}
	for _, e := range r.SpanEvents(w) {
		if e.Msg != 0 && (e.Kind == "send" || e.Kind == "recv" || e.Kind == "drop") {
			ids[fmt.Sprint(e.Msg)] = true
		}
	}
	return ids
}

// stepsWithEvents are the kernel steps of the window that have an event in the trace.
func stepsWithEvents(r *Run, w Window) map[string]bool {
	steps := map[string]bool{}
	for _, e := range r.SpanEvents(w) {
		steps[fmt.Sprint(e.Step)] = true
	}
	return steps
}

func TestSVG(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	w := Window{44, 80} // the partition (47), the lost ack (48-52), the crash (52), the election (76)
	var b bytes.Buffer
	if err := r.WriteSVG(&b, Options{Window: w}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, b.Bytes())
	want := []string{"env", "ctl", "b1", "b2", "b3", "p1"} // c1 appears after the window
	if strings.Join(d.lanes, " ") != strings.Join(want, " ") {
		t.Errorf("lanes %v, want %v", d.lanes, want)
	}
	ids := messagesIn(r, w)
	if len(d.msgs) != len(ids) {
		t.Errorf("%d message arrows, the window has %d messages", len(d.msgs), len(ids))
	}
	for id := range ids {
		if _, ok := d.msgs[id]; !ok {
			t.Errorf("message %s has no arrow", id)
		}
	}
	for k := range stepsWithEvents(r, w) {
		if !d.steps[k] {
			t.Errorf("step %s is not drawn", k)
		}
	}
	for k := range d.steps {
		if n, _ := strconv.Atoi(k); n < w.From || n > w.To {
			t.Errorf("step %s, outside the window, is drawn", k)
		}
	}
	// The partition loses both FetchResponses that carried "lost" to the followers.
	if d.crosses != 2 {
		t.Errorf("%d lost messages crossed out, want 2", d.crosses)
	}
	for _, s := range []string{"acks1-leader-crash", "seed 1", r.Hash, "steps 44..80 of 344", "lost-write"} {
		if !bytes.Contains(b.Bytes(), []byte(s)) {
			t.Errorf("the SVG does not say %q", s)
		}
	}

	// Hiding a message type and choosing lanes. Messages are typed by their Go type.
	types := map[string]bool{}
	for _, typ := range d.msgs {
		types[typ] = true
	}
	for _, typ := range []string{"BrokerHeartbeat", "FetchRequest", "FetchResponse"} {
		if !types[typ] {
			t.Errorf("no %s message drawn (types %v)", typ, types)
		}
	}
	b.Reset()
	if err := r.WriteSVG(&b, Options{Window: Window{1, r.Steps}, Nodes: []string{"b1", "b2", "p1"}, Hide: []string{"BrokerHeartbeat"}}); err != nil {
		t.Fatal(err)
	}
	d = parseSVG(t, b.Bytes())
	if strings.Join(d.lanes, " ") != "env b1 b2 p1" {
		t.Errorf("lanes %v", d.lanes)
	}
	for id, typ := range d.msgs {
		if typ == "BrokerHeartbeat" {
			t.Errorf("message %s is a heartbeat", id)
		}
	}
	if err := r.WriteSVG(io.Discard, Options{Window: w, Nodes: []string{"b9"}}); err == nil || !strings.Contains(err.Error(), `no node "b9"`) {
		t.Errorf("unknown node: %v", err)
	}
}

// Thousands of events draw, with nothing capped.
func TestSVGLargeWindow(t *testing.T) {
	r := record(t, "eager-vs-cooperative")
	if len(r.Events) < 2000 {
		t.Fatalf("only %d events; pick a longer scenario", len(r.Events))
	}
	var b bytes.Buffer
	if err := r.WriteSVG(&b, Options{Window: Window{1, r.Steps}}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, b.Bytes())
	if want := stepsWithEvents(r, Window{1, r.Steps}); len(d.steps) != len(want) {
		t.Errorf("%d of %d steps drawn", len(d.steps), len(want))
	}
}

func TestOutputIsDeterministic(t *testing.T) {
	s, _ := scenarios.Load("retry-duplicates")
	var outs [2]string
	for i := range outs {
		r, err := Record(s, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		r.WriteSVG(&b, Options{Window: r.DefaultWindow(600)})
		r.WriteMermaid(&b, Options{Window: r.DefaultWindow(150)})
		r.WriteJepsen(&b)
		outs[i] = b.String()
	}
	if outs[0] != outs[1] {
		t.Errorf("two exports of the same run differ")
	}
}

var (
	reParticipant = regexp.MustCompile(`^participant (\S+)$`)
	reArrow       = regexp.MustCompile(`^([A-Za-z0-9_-]+?)(-->>|->>|-x|-\))([A-Za-z0-9_-]+): (.+)$`)
	reEntity      = regexp.MustCompile(`#[a-z0-9]+;`)
	reNote        = regexp.MustCompile(`^Note (over|right of|left of) ([A-Za-z0-9_-]+)(?:,([A-Za-z0-9_-]+))?: (.+)$`)
)

// mermaidDiagram is a sequence diagram read by a small parser of the subset mqsim writes.
type mermaidDiagram struct {
	participants []string
	arrows       int
	notes        int
}

func parseMermaid(text string) (mermaidDiagram, error) {
	var d mermaidDiagram
	declared := map[string]bool{}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "sequenceDiagram" {
		return d, fmt.Errorf("first line %q, want sequenceDiagram", lines[0])
	}
	known := func(n string) error {
		if !declared[n] {
			return fmt.Errorf("participant %q used before it is declared", n)
		}
		return nil
	}
	for i, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "%%") {
			continue
		}
		if strings.ContainsAny(reEntity.ReplaceAllString(line, ""), ";") {
			return d, fmt.Errorf("line %d: an unescaped ; ends a Mermaid statement: %q", i+2, line)
		}
		if m := reParticipant.FindStringSubmatch(line); m != nil {
			if d.arrows+d.notes > 0 {
				return d, fmt.Errorf("line %d: participant %s declared after the first message", i+2, m[1])
			}
			declared[m[1]] = true
			d.participants = append(d.participants, m[1])
			continue
		}
		if m := reArrow.FindStringSubmatch(line); m != nil {
			for _, n := range []string{m[1], m[3]} {
				if err := known(n); err != nil {
					return d, fmt.Errorf("line %d: %v", i+2, err)
				}
			}
			d.arrows++
			continue
		}
		if m := reNote.FindStringSubmatch(line); m != nil {
			for _, n := range []string{m[2], m[3]} {
				if n == "" {
					continue
				}
				if err := known(n); err != nil {
					return d, fmt.Errorf("line %d: %v", i+2, err)
				}
			}
			d.notes++
			continue
		}
		return d, fmt.Errorf("line %d: not a statement of the subset: %q", i+2, line)
	}
	return d, nil
}

func TestMermaid(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	w := Window{44, 80}
	var b bytes.Buffer
	if err := r.WriteMermaid(&b, Options{Window: w, Command: "mqsim export acks1-leader-crash --format mermaid --from 44 --to 80"}); err != nil {
		t.Fatal(err)
	}
	d, err := parseMermaid(b.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(d.participants) != 6 {
		t.Errorf("participants %v", d.participants)
	}
	msgs := len(messagesIn(r, w))
	env := 0
	for _, e := range r.SpanEvents(w) {
		switch d := e.Data.(type) {
		case sim.Received:
			if e.Msg == 0 {
				env++
			}
		case sim.Sent:
			if d.ToEnv {
				env++
			}
		}
	}
	if d.arrows != msgs+env {
		t.Errorf("%d arrows, want %d messages and %d to or from env", d.arrows, msgs, env)
	}
	for _, s := range []string{"b1-xb3: FetchResponse", "Note over env,p1: ⚡ partition: b1 | b2 b3", "Note over b1: ⚡ crash"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("no %q in\n%s", s, b.String())
		}
	}
	// The parser rejects what it should.
	for _, bad := range []string{
		"sequenceDiagram\n    a->>b: x\n",
		"sequenceDiagram\n    participant a\n    a->>b: x\n",
		"sequenceDiagram\n    participant a\n    Note over a,z: x\n",
		"graph TD\n",
		"sequenceDiagram\n    participant a\n    a->>a: x; y\n",
	} {
		if _, err := parseMermaid(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

func TestMermaidEscapes(t *testing.T) {
	got := mermaidText("a #1; <b> HW 0 -> 1")
	if got != "a #35;1#59; #lt;b#gt; HW 0 → 1" {
		t.Errorf("escaped %q", got)
	}
}

// edn is a value read by a small EDN reader: an atom (number, keyword, symbol, nil), a
// string, or a collection ('[', '{' or '(') of values.
type edn struct {
	kind  byte // 'a' atom, 's' string, or the collection's opening bracket
	text  string
	items []edn
}

// readEDN reads exactly one value from s: collections must close with their own
// bracket, strings must end, maps must have an even number of forms.
func readEDN(s string) (edn, error) {
	p := &ednReader{s: s}
	v, err := p.value()
	if err != nil {
		return v, err
	}
	p.space()
	if p.i != len(p.s) {
		return v, fmt.Errorf("text after the value at %d", p.i)
	}
	return v, nil
}

type ednReader struct {
	s string
	i int
}

func (p *ednReader) space() {
	for p.i < len(p.s) && strings.ContainsRune(" \t\n,", rune(p.s[p.i])) {
		p.i++
	}
}

func (p *ednReader) value() (edn, error) {
	p.space()
	if p.i >= len(p.s) {
		return edn{}, fmt.Errorf("unexpected end")
	}
	closer := map[byte]byte{'[': ']', '{': '}', '(': ')'}
	switch c := p.s[p.i]; {
	case c == '"':
		var b strings.Builder
		for p.i++; p.i < len(p.s); p.i++ {
			switch p.s[p.i] {
			case '\\':
				p.i++
				if p.i < len(p.s) {
					b.WriteByte(p.s[p.i])
				}
			case '"':
				p.i++
				return edn{kind: 's', text: b.String()}, nil
			default:
				b.WriteByte(p.s[p.i])
			}
		}
		return edn{}, fmt.Errorf("unterminated string")
	case closer[c] != 0:
		p.i++
		v := edn{kind: c}
		for {
			p.space()
			if p.i >= len(p.s) {
				return edn{}, fmt.Errorf("unclosed %c", c)
			}
			if p.s[p.i] == closer[c] {
				p.i++
				if c == '{' && len(v.items)%2 != 0 {
					return edn{}, fmt.Errorf("a map with an odd number of forms")
				}
				return v, nil
			}
			if strings.ContainsRune(")]}", rune(p.s[p.i])) {
				return edn{}, fmt.Errorf("%c closes %c at %d", p.s[p.i], c, p.i)
			}
			item, err := p.value()
			if err != nil {
				return edn{}, err
			}
			v.items = append(v.items, item)
		}
	case strings.ContainsRune(")]}", rune(c)):
		return edn{}, fmt.Errorf("unbalanced %c at %d", c, p.i)
	default:
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(" \t\n,()[]{}\"", rune(p.s[p.i])) {
			p.i++
		}
		return edn{kind: 'a', text: p.s[start:p.i]}, nil
	}
}

// get is a map's value for a keyword key.
func (v edn) get(key string) (edn, bool) {
	for i := 0; i+1 < len(v.items); i += 2 {
		if v.items[i].kind == 'a' && v.items[i].text == key {
			return v.items[i+1], true
		}
	}
	return edn{}, false
}

func TestJepsenEDN(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	var b bytes.Buffer
	if err := r.WriteJepsen(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	sc := bufio.NewScanner(&b)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		op, err := readEDN(line)
		if err != nil || op.kind != '{' {
			t.Fatalf("line %d is not one EDN map: %v: %s", n+1, err, line)
		}
		for _, k := range []string{":index", ":time", ":process", ":type", ":f", ":value"} {
			if _, ok := op.get(k); !ok {
				t.Errorf("line %d has no %s: %s", n+1, k, line)
			}
		}
		if idx, _ := op.get(":index"); idx.text != fmt.Sprint(n) {
			t.Errorf("line %d: :index %s", n+1, idx.text)
		}
		switch typ, _ := op.get(":type"); typ.text {
		case ":invoke", ":ok", ":fail", ":info":
		default:
			t.Errorf("line %d: :type %s", n+1, typ.text)
		}
		f, _ := op.get(":f")
		val, _ := op.get(":value")
		if f.text == ":send" || f.text == ":poll" {
			// [[:send k v]], [[:send k [offset v]]], [[:poll]], [[:poll {k [[offset v] ...]}]]
			if val.kind != '[' || len(val.items) != 1 || val.items[0].kind != '[' || val.items[0].items[0].text != f.text {
				t.Errorf("line %d: value %s", n+1, line)
			}
		}
		n++
	}
	if n != len(r.History) {
		t.Errorf("%d lines for %d ops (no commits here)", n, len(r.History))
	}
	for _, s := range []string{
		`:type :ok, :f :send, :value [[:send "t-0" [1 "lost"]]]`,
		`:type :invoke, :f :poll, :value [[:poll]]`,
		`:value [[:poll {"t-0" [[0 "before"] [1 "after"]]}]]`,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("no %s in\n%s", s, text)
		}
	}
	for _, bad := range []string{`{:a [1 "x]"}`, `{:a [1 2}]`, `{:a}`, `{:a 1} x`, `[1 2`} {
		if _, err := readEDN(bad); err == nil {
			t.Errorf("read %s", bad)
		}
	}
}

func TestJepsenSubscribeAndCommits(t *testing.T) {
	h := history.History{
		{Index: 0, Time: 1, Process: 1, Type: history.Invoke, F: history.Subscribe, Invoke: -1, Assign: &history.AssignValue{Group: "g", Topics: []string{"t"}}},
		{Index: 1, Time: 2, Process: 1, Type: history.Ok, F: history.Subscribe, Invoke: 0, Assign: &history.AssignValue{Group: "g", Topics: []string{"t"}}},
		{Index: 2, Time: 3, Process: 2, Type: history.Invoke, F: history.Send, Invoke: -1, Send: &history.SendValue{TopicPartition: history.TopicPartition{Topic: "t", Partition: 1}, Value: `a"b`, Offset: history.NoOffset}},
		{Index: 3, Time: 4, Process: 2, Type: history.Info, F: history.Send, Invoke: 2, Error: "timeout", Send: &history.SendValue{TopicPartition: history.TopicPartition{Topic: "t", Partition: 1}, Value: `a"b`, Offset: history.NoOffset}},
		{Index: 4, Time: 5, Process: 1, Type: history.Invoke, F: history.Commit, Invoke: -1, Commit: &history.CommitValue{Group: "g", Offsets: []history.PartitionOffset{{TopicPartition: history.TopicPartition{Topic: "t", Partition: 0}, Offset: 3}}}},
	}
	var b bytes.Buffer
	if err := WriteJepsen(&b, h); err != nil {
		t.Fatal(err)
	}
	want := `{:index 0, :time 1, :process 1, :type :invoke, :f :subscribe, :value ["t-0" "t-1"], :group "g", :mqsim-index 0}
{:index 1, :time 2, :process 1, :type :ok, :f :subscribe, :value ["t-0" "t-1"], :group "g", :mqsim-index 1}
{:index 2, :time 3, :process 2, :type :invoke, :f :send, :value [[:send "t-1" "a\"b"]], :mqsim-index 2}
{:index 3, :time 4, :process 2, :type :info, :f :send, :value [[:send "t-1" [nil "a\"b"]]], :error "timeout", :mqsim-index 3}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// A transaction is Jepsen's :txn op, its micro-ops in Jepsen's shape.
func TestJepsenTxn(t *testing.T) {
	t0 := history.TopicPartition{Topic: "t", Partition: 0}
	r := history.NewRecorder()
	h := r.InvokeTxn(1, 3, "T1")
	r.Ok(2, h, history.Result{TxnOps: []history.MicroOp{
		{F: history.Poll, Poll: &history.PollValue{ReadCommitted: true, Reads: []history.PartitionRecords{{TopicPartition: t0, Records: []history.Record{{Offset: 4, Value: "a"}}}}}},
		{F: history.Send, Send: &history.SendValue{TopicPartition: t0, Value: "b", Offset: 6}},
		{F: history.Send, Send: &history.SendValue{TopicPartition: t0, Value: "c", Offset: history.NoOffset}},
	}, TxnOffsets: &history.CommitValue{Group: "g", Offsets: []history.PartitionOffset{{TopicPartition: t0, Offset: 5}}}})
	p := r.InvokeReadCommittedPoll(3, 4, "g")
	r.Fail(4, p, history.Result{})
	var b bytes.Buffer
	if err := WriteJepsen(&b, r.History()); err != nil {
		t.Fatal(err)
	}
	want := `{:index 0, :time 1, :process 3, :type :invoke, :f :txn, :value [], :transactional-id "T1", :mqsim-index 0}
{:index 1, :time 2, :process 3, :type :ok, :f :txn, :value [[:poll {"t-0" [[4 "a"]]}] [:send "t-0" [6 "b"]] [:send "t-0" [nil "c"]]], :transactional-id "T1", :mqsim-index 1}
{:index 2, :time 3, :process 4, :type :invoke, :f :poll, :value [[:poll]], :group "g", :read-committed? true, :mqsim-index 2}
{:index 3, :time 4, :process 4, :type :fail, :f :poll, :value [[:poll {}]], :group "g", :read-committed? true, :mqsim-index 3}
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHistoryAndJSONL(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	var b bytes.Buffer
	if err := r.WriteHistory(&b); err != nil {
		t.Fatal(err)
	}
	f, err := history.ReadFile(&b)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.Ops; len(h) != len(r.History) || len(h) == 0 || f.System != history.LogSystem {
		t.Errorf("read back %d ops of %d, system %q; want a log's", len(h), len(r.History), f.System)
	}

	b.Reset()
	if err := r.WriteJSONLines(&b, Window{1, r.Steps}); err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	r.trace.WriteJSONLines(&whole)
	if b.String() != whole.String() {
		t.Errorf("the whole run's jsonl is not sim.Trace.WriteJSONLines")
	}
	b.Reset()
	w := Window{20, 40}
	if err := r.WriteJSONLines(&b, w); err != nil {
		t.Fatal(err)
	}
	lo, hi := r.span(w)
	dec := json.NewDecoder(&b)
	n := 0
	for dec.More() {
		var e sim.Event
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		if e.Index != lo+n {
			t.Fatalf("event %d has index %d, want %d", n, e.Index, lo+n)
		}
		n++
	}
	if n != hi-lo {
		t.Errorf("%d events, want %d", n, hi-lo)
	}

	pp := record(t, "kernel-pingpong")
	if err := pp.WriteHistory(io.Discard); err != ErrNoHistory {
		t.Errorf("kernel-pingpong history: %v", err)
	}
}

func TestPorcupine(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	var b bytes.Buffer
	if err := r.WritePorcupine(&b, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"<html", "b1 down", "partition b1 | b2 b3"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the page does not contain %q", s)
		}
	}
	anns := r.FaultAnnotations()
	if len(anns) != 2 {
		t.Fatalf("annotations %+v", anns)
	}
	if anns[1].Text != "b1 down" || anns[1].End <= anns[1].Time {
		t.Errorf("b1's crash is not a span: %+v", anns[1])
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats {
		if got, err := ParseFormat(string(f.Format)); err != nil || got != f.Format {
			t.Errorf("%s: %v %v", f.Format, got, err)
		}
	}
	if _, err := ParseFormat("png"); err == nil || !strings.Contains(err.Error(), "svg, mermaid, jsonl, history, jepsen, porcupine") {
		t.Errorf("png: %v", err)
	}
}

func TestCommandLineRoundTrip(t *testing.T) {
	for _, q := range []Request{
		{Scenario: "acks1-leader-crash", Format: SVG},
		{Scenario: "acks1-leader-crash", Format: SVG, Full: true, Hide: []string{"BrokerHeartbeat"}},
		{Scenario: "x.txt", Format: Mermaid, Seed: 7, SeedSet: true, Fix: true, Set: []string{"acks=all", "min-isr=2"},
			From: 3, To: 9, Nodes: []string{"b1", "p1"}, Hide: []string{"heartbeat", "Fetch"}},
		{Scenario: "retry-duplicates", Format: JSONL, To: 20},
	} {
		line := q.CommandLine()
		got, err := ParseCommandLine(line + " -o out.file")
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got.Budget = 0
		if got.CommandLine() != line || fmt.Sprint(got) != fmt.Sprint(q) {
			t.Errorf("round trip of %q gave %+v, want %+v", line, got, q)
		}
	}
	for _, bad := range []string{
		"mqsim run acks1-leader-crash",
		"mqsim export",
		"mqsim export a b",
		"mqsim export a --from",
		"mqsim export a --frob 1",
		"mqsim export a --format history --from 2",
		"mqsim export a --format png",
		"mqsim export a --format mermaid --full",
		"mqsim export a --full --to 9",
	} {
		if _, err := ParseCommandLine(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
}

// Raft messages share one Go type; each is named by its own kind, so --hide can drop the
// appends of the metadata quorum and keep its votes.
func TestRaftMessagesAreNamedByKind(t *testing.T) {
	r := record(t, "controller-failover")
	var b bytes.Buffer
	if err := r.WriteSVG(&b, Options{Window: Window{1, r.Steps}}); err != nil {
		t.Fatal(err)
	}
	types := map[string]bool{}
	for _, typ := range parseSVG(t, b.Bytes()).msgs {
		types[typ] = true
	}
	for _, typ := range []string{"app", "app-resp", "vote"} {
		if !types[typ] {
			t.Errorf("no Raft %q message drawn (types %v)", typ, types)
		}
	}
	if types["Message"] {
		t.Error("a Raft message is named by its Go type")
	}
	b.Reset()
	if err := r.WriteSVG(&b, Options{Window: Window{1, r.Steps}, Hide: []string{"app"}}); err != nil {
		t.Fatal(err)
	}
	hidden := map[string]bool{}
	for _, typ := range parseSVG(t, b.Bytes()).msgs {
		hidden[typ] = true
	}
	if hidden["app"] || !hidden["vote"] {
		t.Errorf("--hide app left %v", hidden)
	}
}

// A window given in the step numbers mqsim run prints for a violation ("(step 48)") holds
// that violation's mark, in every catalogue scenario: --from k --to k draws it, and the
// window chosen around --from k alone does too.
func TestWindowAtAViolationsStepHoldsItsMark(t *testing.T) {
	found := 0
	for _, e := range scenarios.Catalog() {
		r := record(t, e.Name)
		for _, mk := range r.Marks() {
			k := int(mk.V.Step)
			if k == 0 {
				continue
			}
			found++
			around, err := r.CheckWindow(k, 0, SVG.DefaultEvents())
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []Window{{k, k}, around} {
				var b bytes.Buffer
				if err := r.WriteSVG(&b, Options{Window: w}); err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(b.Bytes(), []byte(`<g class="violation"><title>`+esc("begins here: "))) ||
					!bytes.Contains(b.Bytes(), []byte(esc(string(mk.V.Anomaly)+": "+mk.V.Text))) {
					t.Errorf("%s: %v (mqsim run says step %d) has no mark in %v", e.Name, mk.V.Anomaly, k, w)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no catalogue scenario has a violation with a step")
	}
	// A window before the violation has no mark.
	r := record(t, "acks1-leader-crash")
	var b bytes.Buffer
	if err := r.WriteSVG(&b, Options{Window: Window{1, 40}}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte(`class="violation"`)) {
		t.Errorf("steps 1..40 mark a violation that begins at step 48")
	}
}
